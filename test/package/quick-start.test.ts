/**
 * The quick start as a new user meets it (issue 26, part 7): a project as `pulumi new typescript` makes it
 * (Pulumi.yaml, package.json with `typescript` ^5, tsconfig.json: the template, written here since `pulumi new`
 * needs the network), the packed tarball installed with the README's command, the README's program as index.ts.
 * `npx tsc --noEmit` passes with TypeScript 5 and with TypeScript 6 (plus the one setting the README gives), and
 * fails at a wrong property (one tsc run checks the README's program and a wrong copy of it, each error naming its
 * file); `pulumi up` (whose plan is the preview's: 4 creates, nothing else; the ids connecting as they are) passes
 * through the real CLI (the README's `pulumi config set` of the host and, as a secret, the key; the organization
 * written into the stack settings file) against the emulator, and with TypeScript 6 (and the tsconfig.json the docs
 * give: the template plus the README's setting) a preview after `up` shows no change (issue 21, a newcomer's first
 * hour) and `destroy` (4 deletes, the project gone from PostHog) passes (once: `destroy` runs neither the program
 * nor the compiler, so it does not depend on the TypeScript version). The template sets neither
 * `esModuleInterop` nor `skipLibCheck`: the SDK's declaration files must not pull zod's in (TypeScript 5 refused
 * them with 63 × TS1259 until the lookups' types were generated as plain ones), so the compile must read no zod or
 * undici declaration at all.
 *
 * TypeScript 5 and `@types/node` 18 are not in our lock file: installing them reads the npm registry unless the
 * npm cache already holds them. The TypeScript 6 project starts with the TypeScript 5 project's node_modules, moved
 * there once the TypeScript 5 tests are done (as `pulumi new` leaves a project installed): the README's install
 * command there changes what differs (TypeScript), instead of installing the same packages a second time.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureStack, pulumiOk, runStack, writeStackSettings } from "../../tools/pulumi";
import { startTestEmulator, type TestEmulator } from "../support/emulator";
import {
  markdownBlocks,
  packedTarball,
  quickStartProject,
  readmeTypeScript6Setting,
  type Tarball,
  TEMPLATE_COMPILER_OPTIONS,
  toolPath,
} from "./packed";

let pkg: Tarball;
const work = mkdtempSync(join(tmpdir(), "quick-start-"));
beforeAll(async () => {
  pkg = await packedTarball();
}, 600_000);
// Removing the two projects' node_modules took more than the default minute on a busy machine.
afterAll(() => rmSync(work, { recursive: true, force: true }), 300_000);

/** The project of each TypeScript version, once made. */
const projects: { 5?: string; 6?: string } = {};

/** `npx tsc <args>` in `dir` (the project's own TypeScript, as a user runs it); status and output. */
function npxTsc(dir: string, ...args: string[]): { status: number | null; output: string } {
  const result = spawnSync("npx", ["tsc", ...args], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, PATH: toolPath, npm_config_update_notifier: "false" },
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe("the README and the docs agree with the template this test writes", () => {
  it("the docs' TypeScript 6 tsconfig.json is the template's plus the README's one setting", () => {
    const json = markdownBlocks(pkg, "docs/installation-configuration.md", "json").find((b) =>
      b.includes("ignoreDeprecations"),
    );
    const { compilerOptions } = JSON.parse(json ?? "{}") as { compilerOptions: Record<string, unknown> };
    expect(readmeTypeScript6Setting(pkg)).toEqual({ ignoreDeprecations: "6.0" });
    expect(compilerOptions).toEqual({ ...TEMPLATE_COMPILER_OPTIONS, ...readmeTypeScript6Setting(pkg) });
  });
});

describe.each([5, 6] as const)(
  "a project as `pulumi new typescript` makes it, with TypeScript %i",
  (major) => {
    let dir: string;
    let program: string;
    beforeAll(() => {
      // TypeScript 6's project starts with the TypeScript 5 project's node_modules (where quickStartProject makes
      // it: `quick-start-ts6` beside `quick-start-ts5`), moved, not copied: the TypeScript 5 tests are done (the
      // two describes run one after the other) and nothing reads that project again. npm then installs only what
      // differs.
      const installed = projects[5] && join(projects[5], "node_modules");
      if (major === 6 && installed && existsSync(installed)) {
        mkdirSync(join(work, "quick-start-ts6"), { recursive: true });
        renameSync(installed, join(work, "quick-start-ts6", "node_modules"));
      }
      dir = quickStartProject(pkg, major, work);
      projects[major] = dir;
      program = readFileSync(join(dir, "index.ts"), "utf8");
    }, 600_000);

    /** The README's program with `timezone` misspelled `timeZone`, and where tsc must point. */
    const wrongProgram = () => {
      const wrong = program.replace('timezone: "Europe/Berlin"', 'timeZone: "Europe/Berlin"');
      const line = wrong.split("\n").findIndex((l) => l.includes("timeZone")) + 1;
      const column = (wrong.split("\n")[line - 1] ?? "").indexOf("timeZone") + 1;
      return { wrong, line, column };
    };
    let checked: { status: number | null; output: string } | undefined;
    /**
     * One `npx tsc --noEmit --listFiles` run over index.ts (the README's program) and wrong.ts (the wrong copy),
     * with the project's tsconfig.json (extended by a tsconfig that only lists both files); run once, shared by
     * the three tests below.
     */
    const checkBoth = () => {
      if (!checked) {
        writeFileSync(join(dir, "wrong.ts"), wrongProgram().wrong);
        writeFileSync(
          join(dir, "tsconfig.check.json"),
          JSON.stringify({ extends: "./tsconfig.json", files: ["index.ts", "wrong.ts"] }, null, 4),
        );
        try {
          checked = npxTsc(dir, "-p", "tsconfig.check.json", "--noEmit", "--listFiles", "--pretty", "false");
        } finally {
          rmSync(join(dir, "wrong.ts"), { force: true });
          rmSync(join(dir, "tsconfig.check.json"), { force: true });
        }
      }
      return checked;
    };
    /** The error lines of that run about `file`. */
    const errorsIn = (file: string) =>
      checkBoth()
        .output.split("\n")
        .filter((l) => /error TS\d+/.test(l) && l.startsWith(`${file}(`));

    it(`has TypeScript ${major} (the one \`npx tsc\` runs), a supported @pulumi/pulumi and the tarball installed`, () => {
      // The TypeScript `npx tsc` runs is the one whose default library the check below (`npx tsc --listFiles`)
      // read: the project's, and its package.json gives the version (no `npx tsc -v` of its own).
      const typescript = join(dir, "node_modules", "typescript");
      const libs = checkBoth()
        .output.split("\n")
        .filter((l) => /\/typescript\/lib\/lib\.[\w.]+\.d\.ts$/.test(l));
      expect(libs.length).toBeGreaterThan(0);
      expect(libs.filter((l) => !l.startsWith(`${join(typescript, "lib")}/`))).toEqual([]);
      const { version } = JSON.parse(readFileSync(join(typescript, "package.json"), "utf8")) as {
        version: string;
      };
      expect(version).toMatch(new RegExp(`^${major}\\.`));
      const pulumi = JSON.parse(
        readFileSync(join(dir, "node_modules", "@pulumi", "pulumi", "package.json"), "utf8"),
      ) as { version: string };
      expect(Number(pulumi.version.split(".")[1])).toBeGreaterThanOrEqual(216);
      const tsconfig = JSON.parse(readFileSync(join(dir, "tsconfig.json"), "utf8"));
      expect(tsconfig.compilerOptions).not.toHaveProperty("esModuleInterop");
      expect(tsconfig.compilerOptions).not.toHaveProperty("skipLibCheck");
      expect(program).toContain('import * as posthog from "pulumi-posthog";');
    }, 300_000);

    it("`npx tsc --noEmit` passes for the README's program, reading no zod or undici declaration", () => {
      const { output } = checkBoth();
      // No error at all but the wrong copy's (none in index.ts, in a declaration file or in the options).
      const errors = output.split("\n").filter((l) => /error TS\d+/.test(l));
      expect(errors.filter((l) => !l.startsWith("wrong.ts("))).toEqual([]);
      expect(errorsIn("index.ts")).toEqual([]);
      const read = output.split("\n").filter((l) => l.includes("/node_modules/"));
      expect(read.some((f) => f.includes("/node_modules/pulumi-posthog/dist/sdk/index.d.ts"))).toBe(true);
      expect(read.filter((f) => /\/node_modules\/(zod|undici)\//.test(f))).toEqual([]);
    }, 300_000);

    it("and fails at a wrong property in a copy of it (the check above can fail)", () => {
      const { wrong, line, column } = wrongProgram();
      expect(wrong).not.toBe(program);
      const { status, output } = checkBoth();
      expect(status).not.toBe(0);
      const errors = output.split("\n").filter((l) => /error TS\d+/.test(l));
      expect(errors).toHaveLength(1);
      expect(errorsIn("wrong.ts")).toEqual(errors);
      expect(errors[0]).toContain(`wrong.ts(${line},${column}): error TS2561:`);
      expect(errors[0]).toContain("'timeZone' does not exist in type 'ProjectArgs'");
    }, 300_000);

    const cliTest =
      major === 6
        ? "`pulumi up` (planning the 4 creates a preview shows, the ids connected as they are), a next preview with no change, and `destroy` (nothing left in PostHog) pass through the real CLI with the docs' TypeScript 6 tsconfig.json, the key set with `config set --secret`"
        : "`pulumi up` (planning the 4 creates a preview shows, the ids connected as they are) passes through the real CLI, the key set with `config set --secret`";
    it(cliTest, async () => {
      const emu: TestEmulator = await startTestEmulator({});
      try {
        const stateDir = join(dir, ".pulumi-state");
        const configFile = join(stateDir, "Pulumi.dev.yaml");
        const cli = { cwd: dir, stateDir };
        await ensureStack({ projectDir: dir, stack: "dev", stateDir, configFile });
        // The organization (not a line of the README's block) goes straight into the stack settings file; the
        // README's two `pulumi config set` lines run as a user types them.
        writeStackSettings(
          configFile,
          `config:\n  posthog:organizationId: ${JSON.stringify(String(emu.organizationId))}\n`,
        );
        const set = (...args: string[]) =>
          pulumiOk(["config", "set", ...args, "--stack", "dev", "--config-file", configFile], cli);
        await set("posthog:host", emu.url);
        await set("--secret", "posthog:apiKey", emu.apiKey);
        expect(readFileSync(configFile, "utf8")).not.toContain(emu.apiKey);
        // The language host compiles the program with ts-node, the project's TypeScript and tsconfig.json; the
        // provider host loads the installed tarball's `pulumi-posthog/provider`.
        const run = (operation: "preview" | "up" | "destroy", env: NodeJS.ProcessEnv = {}) =>
          runStack({ operation, projectDir: dir, stack: "dev", stateDir, configFile, env });
        const none = { create: 0, update: 0, replace: 0, delete: 0, same: 0 };
        const projectNames = async () =>
          (await emu.call("GET", `${emu.org}/projects/`)).body.results.map((p: { name: string }) => p.name);
        // No separate `pulumi preview`: `up` runs the same plan, and its steps are what a preview would show.
        const up = await run("up");
        expect(up.ok, up.output).toBe(true);
        expect(up.counts).toEqual({ ...none, create: 4 });
        // The ids connect as they are: the dashboard and the sharing are in the project `up` made (its id, a
        // number in PostHog, reaches them as the Project's id output), the project's token is a secret output.
        const outputsOf = (type: string) => up.steps.find((s) => s.type.endsWith(`posthog:${type}`))?.outputs;
        const project = outputsOf("Project");
        expect(project?.projectId, JSON.stringify(project)).toMatch(/^\d+$/);
        expect(outputsOf("Dashboard")?.projectId).toBe(project?.projectId);
        expect(outputsOf("DashboardSharing")?.projectId).toBe(project?.projectId);
        expect(up.outputs).toEqual({ projectApiToken: "[secret]" });
        expect(await projectNames()).toContain("Web");
        if (major === 6) {
          // The newcomer's next preview (issue 21): the program as `up` applied it plans no change. What it plans
          // does not depend on a type check, which `up` just ran (ts-node, the same TypeScript, tsconfig.json and
          // program): this one transpiles only (PULUMI_NODEJS_TRANSPILE_ONLY, Pulumi's own switch), and saves
          // checking @pulumi/pulumi's declarations again.
          const preview = await run("preview", { PULUMI_NODEJS_TRANSPILE_ONLY: "true" });
          expect(preview.ok, preview.output).toBe(true);
          expect(preview.counts).toEqual({ ...none, same: 4 });
        }
        if (major === 6) {
          // Only TypeScript 6's: `destroy` runs neither the program nor the compiler (the provider host loads the
          // same installed tarball in both projects), so TypeScript 5's would prove nothing more.
          const destroy = await run("destroy");
          expect(destroy.ok, destroy.output).toBe(true);
          expect(destroy.counts).toEqual({ ...none, delete: 4 });
          expect(await projectNames()).not.toContain("Web");
        }
      } finally {
        await emu.close();
      }
    }, 300_000);

    if (major === 6)
      it("without the README's setting, TypeScript 6 refuses the template's moduleResolution (TS5107)", () => {
        const tsconfig = join(dir, "tsconfig.json");
        const documented = readFileSync(tsconfig, "utf8");
        writeFileSync(
          tsconfig,
          JSON.stringify({ compilerOptions: TEMPLATE_COMPILER_OPTIONS, files: ["index.ts"] }, null, 4),
        );
        try {
          // `--listFilesOnly`: tsc reads the program's files and reports the options' errors, as without it, then
          // stops before binding them (after an options error it would type-check none of them anyway).
          const { status, output } = npxTsc(dir, "--noEmit", "--listFilesOnly", "--pretty", "false");
          expect(status).not.toBe(0);
          expect(output).toContain("error TS5107: Option 'moduleResolution=node10' is deprecated");
        } finally {
          writeFileSync(tsconfig, documented);
        }
      }, 300_000);
  },
);
