import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunOptions, type RunResult, runStack } from "../../tools/stack/engine";
import { startTestEmulator, type TestEmulator } from "../support/emulator";

// Issue 13: `restrictionLevel: 37` on an organization without PostHog's advanced permissions silently became 21
// (effectiveRestrictionLevel). A program using the SDK (test/stack/fixtures/posthog) runs through the stand-in
// engine against the emulator with its paid features off; the SDK's warning reaches the engine as a diagnostic.
const root = join(__dirname, "..", "..");
const projectDir = join(__dirname, "fixtures", "posthog");
const work = mkdtempSync(join(tmpdir(), "restriction-"));

let emu: TestEmulator;
let env: Record<string, string>;

beforeAll(async () => {
  if (!existsSync(join(root, "dist", "sdk", "index.js"))) {
    throw new Error(
      "dist/ is missing: the fixture loads the built SDK (pulumi-posthog); run `npm run build` first",
    );
  }
  emu = await startTestEmulator({ paidFeatures: false });
  env = {
    POSTHOG_HOST: emu.url,
    POSTHOG_API_KEY: emu.apiKey,
    POSTHOG_ORGANIZATION_ID: emu.organizationId,
    POSTHOG_PROJECT_ID: String(emu.projectId),
  };
});
afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

type Declared = [type: string, name: string, args: Record<string, unknown>][];

function run(operation: RunOptions["operation"], stack: string, resources: Declared): Promise<RunResult> {
  const configFile = join(work, `Pulumi.${stack}.yaml`);
  writeFileSync(configFile, `config:\n  fx:resources: ${JSON.stringify(JSON.stringify(resources))}\n`);
  return runStack({ operation, projectDir, stack, statePath: join(work, `${stack}.json`), configFile, env });
}

const warnings = (r: RunResult) =>
  r.diagnostics.filter((d) => d.severity === "warning").map((d) => d.message);

describe("a dashboard whose restriction level is not in effect", () => {
  it("warns at create and update, saying why and what to do; no warning when it is in effect", async () => {
    const restricted: Declared = [["Dashboard", "board", { name: "Board", restrictionLevel: 37 }]];
    const up = await run("up", "a", restricted);
    expect(up.ok).toBe(true);
    const created = warnings(up).filter((m) => m.includes('Dashboard "board"'));
    expect(created).toHaveLength(1);
    expect(created[0]).toContain("restrictionLevel 37 (only collaborators can edit) is not in effect");
    expect(created[0]).toContain("enforces 21");
    expect(created[0]).toContain("advanced permissions");
    expect(created[0]).toContain("declare restrictionLevel: 21");
    const warned = up.diagnostics.find((d) => d.message === created[0]);
    expect(warned?.urn).toMatch(/::pulumi-nodejs:dynamic\/posthog:Dashboard::board$/);

    // An update of a dashboard that stays at 37 warns again.
    const renamed: Declared = [["Dashboard", "board", { name: "Board 2", restrictionLevel: 37 }]];
    const update = await run("up", "a", renamed);
    expect(update.ok).toBe(true);
    expect(update.counts.update).toBe(1);
    expect(warnings(update).filter((m) => m.includes('Dashboard "board"'))).toHaveLength(1);

    // Declared 21, as in effect: no warning.
    const open: Declared = [["Dashboard", "open", { name: "Open" }]];
    const plain = await run("up", "b", open);
    expect(plain.ok).toBe(true);
    expect(warnings(plain).filter((m) => m.includes("restrictionLevel"))).toEqual([]);

    expect((await run("destroy", "a", renamed)).ok).toBe(true);
    expect((await run("destroy", "b", open)).ok).toBe(true);
  }, 120_000);
});
