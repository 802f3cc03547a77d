/**
 * Issue 50, item 2: state written by an earlier version still reads and previews with no change. The fixture
 * (test/fixtures/earlier-state/, written by tools/earlier-state.ts at the commit its README names) holds, for a
 * TypeScript program of the dynamic SDK and a Pulumi YAML program of the provider plugin, each declaring one of
 * every resource (an adopted dashboard in the first, an imported one in the second), the `pulumi stack export` of
 * its stack and the emulator's world at that moment.
 *
 * For each program, against an emulator started from that world (a copy: the emulator saves every write to it), on
 * a fresh local backend: `pulumi stack import` of the checkpoint, then with the current code `pulumi preview
 * --refresh --expect-no-changes` (it passes; every refresh and every step is `same`) and `pulumi up --refresh`
 * (every step `same`, and no POST, PATCH, PUT or DELETE reaches the emulator); every output of the checkpoint but
 * the bookkeeping ones (`__inputs`, `__resource`, `_policy`) keeps its value in the state the up writes (secrets
 * compared as secrets). The two programs run side by side, each with its emulator.
 *
 * `--expect-no-changes` alone would not do: the CLI does not count what a refresh finds. Seen when written: with
 * provider/framework/lifecycle.ts's `read` no longer giving back the stored `__resource` (or `__inputs`), both
 * previews still exit 0, and the refresh counts here fail (11 of 11 and 9 of 10 resources drifted).
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emulatorEnv } from "../../emulator";
import { resourceNames } from "../../provider/resources/index";
import {
  EARLIER_STATE_DIR,
  EARLIER_STATE_PASSPHRASE,
  EARLIER_STATE_STACK,
  PROGRAMS,
  WORLD_FILE,
} from "../../tools/earlier-state";
import {
  type EngineEvent,
  ensureStack,
  PULUMI_BIN,
  pulumiOk,
  type RunResult,
  refreshOf,
  runStack,
  savedState,
} from "../../tools/pulumi";
import { requireBuilt } from "../plugin/support";
import { requestsSince, startTestEmulator, type TestEmulator } from "../support/emulator";

const work = mkdtempSync(join(tmpdir(), "earlier-state-"));
const emulators: TestEmulator[] = [];

beforeAll(() => {
  requireBuilt(
    [join(__dirname, "..", "..", "dist", "sdk", "index.js"), join(PULUMI_BIN, "pulumi-language-yaml")],
    "`npm run build` and `npm run pulumi-cli`",
  );
});

afterAll(async () => {
  await Promise.all(emulators.map((e) => e.close()));
  rmSync(work, { recursive: true, force: true });
});

/** A resource of a checkpoint, as `pulumi stack export` writes it (the fields read here). */
interface SavedResource {
  urn: string;
  type: string;
  id?: string;
  outputs?: Record<string, unknown>;
}

/** What the CLI printed (with `--color never`): the message of a failed assertion on a run. */
const why = (r: RunResult) => r.output;

/** The engine's mark of a secret in a serialized property value. */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/** `value` with each secret (encrypted, its ciphertext differing from one stack to the next) as `"[secret]"`. */
function masked(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(masked);
  if (value === null || typeof value !== "object") return value;
  if (SECRET_SIG in value) return "[secret]";
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, masked(v)]));
}

/** The program's resources (not the stack, not the providers) of a state, by URN. */
function ownResources(resources: readonly unknown[]): Map<string, SavedResource> {
  const own = (resources as SavedResource[]).filter(
    (r) => r.type !== "pulumi:pulumi:Stack" && !r.type.startsWith("pulumi:providers:"),
  );
  return new Map(own.map((r) => [r.urn, r]));
}

/** The outputs a user sees (bookkeeping ones, `__inputs`, `__resource`, `_policy`, left out), secrets masked. */
const visibleOutputs = (r: SavedResource | undefined) =>
  Object.fromEntries(
    Object.entries(masked(r?.outputs ?? {}) as Record<string, unknown>).filter(([k]) => !k.startsWith("_")),
  );

/** The kind of a type token: `Dashboard` of `posthog:index:Dashboard` or `pulumi-nodejs:dynamic/posthog:Dashboard`. */
const kindOf = (type: string) => type.slice(type.lastIndexOf(":") + 1);

/**
 * Program `dir` of the fixture on a fresh local backend holding its checkpoint (`pulumi stack init`, then `pulumi
 * stack import`), against its own emulator started from a copy of the fixture's world (closed after the file), whose
 * request log is then empty: the stack's run options, the emulator, and the program's resources in the checkpoint.
 * @throws when the CLI fails, with its output.
 */
async function importedStack(dir: string) {
  const projectDir = join(EARLIER_STATE_DIR, dir);
  const checkpointFile = join(projectDir, "checkpoint.json");
  const checkpoint = JSON.parse(readFileSync(checkpointFile, "utf8")) as {
    deployment: { resources: unknown[] };
  };
  const world = join(work, `${dir}-${WORLD_FILE}`);
  copyFileSync(join(EARLIER_STATE_DIR, WORLD_FILE), world);
  const emu = await startTestEmulator({ stateFile: world });
  emulators.push(emu);
  const env: NodeJS.ProcessEnv = {
    ...emulatorEnv(emu),
    PULUMI_CONFIG_PASSPHRASE: EARLIER_STATE_PASSPHRASE,
    // The TypeScript program is type-checked by `tsc` (tsconfig.json includes test/): the runs only transpile it.
    PULUMI_NODEJS_TRANSPILE_ONLY: "true",
  };
  const stateDir = join(work, dir);
  const stack = {
    projectDir,
    stack: EARLIER_STATE_STACK,
    stateDir,
    configFile: join(work, `Pulumi.${dir}.yaml`),
    env,
  };
  await ensureStack(stack);
  await pulumiOk(["stack", "import", "--file", checkpointFile, "--stack", EARLIER_STATE_STACK], {
    cwd: projectDir,
    stateDir,
    env,
  });
  await requestsSince(emu);
  return { stack, emu, before: ownResources(checkpoint.deployment.resources) };
}

describe.concurrent("state written by an earlier version (test/fixtures/earlier-state), with the current code", () => {
  it.each(PROGRAMS)(
    "$what ($dir/): imported, it previews and applies with no change and no write",
    async ({ dir }) => {
      const { stack, emu, before } = await importedStack(dir);
      // The nine kinds of the fixture's commit (tools/earlier-state.ts refuses to write a checkpoint missing one),
      // each one a kind the current code still serves.
      const kinds = new Set([...before.values()].map((r) => kindOf(r.type)));
      expect(kinds.size).toBe(9);
      expect([...kinds].filter((k) => !(resourceNames as readonly string[]).includes(k))).toEqual([]);

      const SAME = { create: 0, update: 0, replace: 0, delete: 0, same: before.size };
      /** `pulumi <operation> --refresh` of the stack: its result, and the counts of its refresh part. */
      const run = async (operation: "preview" | "up", expectNoChanges = false) => {
        const events: EngineEvent[] = [];
        const r = await runStack({
          ...stack,
          operation,
          refresh: true,
          expectNoChanges,
          onEvent: (e) => events.push(e),
        });
        return { r, refreshed: refreshOf(events).counts };
      };
      const preview = await run("preview", true);
      expect(preview.r.ok, why(preview.r)).toBe(true);
      // `--expect-no-changes` does not count what a refresh finds (an output the read no longer gives back, such as
      // `__resource` or `__inputs`, passes it): the refresh must find every resource as the state holds it.
      expect(preview.refreshed, why(preview.r)).toEqual(SAME);
      expect(preview.r.counts, why(preview.r)).toEqual(SAME);

      const up = await run("up");
      expect(up.r.ok, why(up.r)).toBe(true);
      expect(up.refreshed, why(up.r)).toEqual(SAME);
      expect(up.r.counts, why(up.r)).toEqual(SAME);
      const requests = await requestsSince(emu);
      expect(
        requests.filter((r) => !r.startsWith("GET ")),
        requests.join("\n"),
      ).toEqual([]);

      // What a user reads of each resource is what the earlier version wrote.
      const saved = savedState({
        projectDir: stack.projectDir,
        stack: stack.stack,
        stateDir: stack.stateDir,
      });
      const after = ownResources(saved.deployment.resources ?? []);
      expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
      for (const [urn, old] of before) {
        expect(after.get(urn)?.id, urn).toBe(old.id);
        expect(visibleOutputs(after.get(urn)), urn).toMatchObject(visibleOutputs(old));
      }
    },
    120_000,
  );
});
