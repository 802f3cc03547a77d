/**
 * `examples/gitops/index.ts` runs as TypeScript, type-checked, under the real Pulumi CLI's Node.js language host
 * (issue 11, point 1; issue 26). The host runs the program from the directory of `main` (examples/gitops) and
 * `@pulumi/pulumi/cmd/run` compiles it with ts-node and the `tsconfig.json` of THAT directory only. The language
 * host this repository builds (sdk/v3 v3.68.0, tools/pulumi-cli/langhost/go.mod) ignores Pulumi.yaml's runtime
 * options, so the example's compiler options are examples/gitops/tsconfig.json (extends the repository's, with
 * `rootDir: ../..`). Without it, TypeScript stops with TS2209 ("The project root is ambiguous … export map entry
 * '.'"): `pulumi-posthog` is this repository's own package, and that self-reference needs a rootDir.
 *
 * That the example itself runs so (from the repository root, as a user types it: from examples/gitops, with a
 * TypeScript below 7) is proven by the `preview --refresh` of test/stack/example-settings.test.ts, on the stack
 * applied there. Here, each check is a `pulumi preview` against the emulator of a copy of examples/gitops made
 * beside it at the same depth under the git-ignored `.stack-state/` (so that `../../tsconfig.json` and the
 * self-reference resolve as for the example): one with a type error added, one without its tsconfig.json.
 * examples/ itself is never changed (tests run in parallel).
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { type RunResult, runStack } from "../../tools/pulumi";
import { startTestEmulator, type TestEmulator } from "../support/emulator";

const root = join(__dirname, "..", "..");
/** The root Pulumi.yaml: the project the copies are made of (its `main` is the example's index.ts). */
const projectText = readFileSync(join(root, "Pulumi.yaml"), "utf8");
const project = parse(projectText) as { name: string; main: string };
const programDir = dirname(resolve(root, project.main));

const work = mkdtempSync(join(tmpdir(), "example-compiles-"));
/** Copies of examples/gitops go to `.stack-state/<this prefix>-<name>`: two levels below the root, as the example. */
const copyPrefix = `example-compiles-${process.pid}-${Date.now()}`;
const copies: string[] = [];
let emu: TestEmulator | undefined;
let env: Record<string, string> = {};

beforeAll(async () => {
  emu = await startTestEmulator();
  env = { POSTHOG_HOST: emu.url, POSTHOG_API_KEY: emu.apiKey, POSTHOG_ORGANIZATION_ID: emu.organizationId };
  mkdirSync(join(root, ".stack-state"), { recursive: true });
});
afterAll(async () => {
  await emu?.close();
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

/**
 * `pulumi preview` of the dev stack of the project in `projectDir`. The copies are one project (posthog-gitops)
 * with the same settings, and a preview writes no state: all run on one local backend and settings file, so the
 * stack is created (`pulumi stack init`) once, by the first preview.
 */
function preview(projectDir: string): Promise<RunResult> {
  return runStack({
    operation: "preview",
    projectDir,
    stack: "dev",
    stateDir: join(work, "state"),
    configFile: join(work, "Pulumi.dev.yaml"),
    env,
  });
}

/**
 * A copy of examples/gitops (program, dashboards, stack settings) as a project of its own: the root Pulumi.yaml
 * with `main: index.ts` and the settings beside it. `change` edits the copy before it runs.
 */
function copyOfExample(name: string, change: (dir: string) => void): string {
  const dir = join(root, ".stack-state", `${copyPrefix}-${name}`);
  copies.push(dir);
  cpSync(programDir, dir, { recursive: true });
  const own = { ...(parse(projectText) as Record<string, unknown>), main: "index.ts", stackConfigDir: "." };
  writeFileSync(join(dir, "Pulumi.yaml"), stringify(own));
  change(dir);
  return dir;
}

/** The TypeScript error codes (`TS2322`, …) in the run's error diagnostics, in order. */
const tsErrors = (r: RunResult) =>
  r.diagnostics
    .filter((d) => d.severity === "error")
    .flatMap((d) => [...d.message.matchAll(/error (TS\d+):/g)].map((m) => m[1]));

describe("copies of examples/gitops under the real CLI's Node.js language host", () => {
  it("type checking is on: a type error added to a copy of the program fails `pulumi preview` with TS2322", async () => {
    const dir = copyOfExample("type-error", (d) => {
      const index = join(d, "index.ts");
      writeFileSync(index, `${readFileSync(index, "utf8")}\nexport const wrong: number = "text";\n`);
    });
    const r = await preview(dir);
    expect(r.ok).toBe(false);
    expect(tsErrors(r), r.output).toEqual(["TS2322"]);
    expect(r.output).toContain("error TS2322: Type 'string' is not assignable to type 'number'.");
    expect(r.steps).toEqual([]); // the program stopped before declaring any resource
  }, 300_000);

  it("control: a copy without its tsconfig.json stops with TS2209", async () => {
    const dir = copyOfExample("no-tsconfig", (d) => rmSync(join(d, "tsconfig.json")));
    const r = await preview(dir);
    expect(r.ok).toBe(false);
    expect(tsErrors(r), r.output).toEqual(["TS2209"]);
    expect(r.output).toContain("The project root is ambiguous");
    expect(r.steps).toEqual([]);
  }, 300_000);
});
