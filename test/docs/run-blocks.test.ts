/**
 * The docs run as pasted (issue 28, item 1). Every fenced block of README.md and docs/**\/*.md that is a program,
 * a test, a config file or a shell sequence (```ts, ```sh, ```json, ```yaml, ```js) is accounted for here:
 *
 * - a complete test file (```ts importing vitest) is written out verbatim and run with Vitest, all of them in
 *   one run, as a user's own test files inside this package (so `pulumi-posthog` resolves to the built dist/),
 *   each in its own module scope and environment (see the run below);
 * - a shell sequence or config file is run (or parsed and checked) by one of the runners below, verbatim; the
 *   only edits are the placeholders a reader fills in (`phx_…`, `PORT`, `4d1b8f2e-…`, a host), each runner
 *   naming its own. Shell sequences run with bash in a user's project (the package and @pulumi/pulumi linked as
 *   `npm install` puts them, the package's bins in node_modules/.bin), against the emulator, and the Pulumi
 *   commands through the real CLI of .pulumi-cli/bin on a local backend in a temporary HOME;
 * - any other ```ts block is a program for the reader's own organization: it is type-checked here (its case fails
 *   naming the page, the line and the compiler's message; all of them in one compiler run, as
 *   test/docs/code-blocks.test.ts compiles every ```ts block), and not run, with that reason;
 * - a block deliberately not run carries `<!-- docs-test: not run: <reason> -->` in the doc source, and is
 *   listed here as skipped with its reason: so are the ```python, ```go and ```csharp examples of the generated
 *   SDKs on the resource and lookup pages (tools/examples.ts), until those SDKs are generated here (their ```yaml
 *   twins run in test/docs/examples-yaml.test.ts).
 *
 * A block none of these covers fails the inventory test, so nothing goes unrun silently.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { readSchema } from "../../tools/codegen";
import { EXAMPLES, renderYaml } from "../../tools/examples";
import { linkPackage, PULUMI_BIN, pulumiEnv } from "../../tools/pulumi";
import { repoRoot } from "../provider/harness";
import { startTestEmulator, type TestEmulator } from "../support/emulator";
import { allBlocks, type Block, CODE_LANGS, isTestFile } from "./blocks";
import { blockDiagnostics } from "./compile";

const TIMEOUT = 240_000;
const blocks = allBlocks();
const where = (b: Block) => `${b.page}:${b.line}`;
const binDir = join(repoRoot, "node_modules", ".bin");

/** A user's shell environment: no POSTHOG_* of this process, Node 24 and the Pulumi CLI on PATH, no update checks. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("POSTHOG_") && !k.startsWith("PULUMI_")),
  );
  return {
    ...env,
    PATH: [PULUMI_BIN, binDir, process.env.PATH ?? ""].join(":"),
    npm_config_update_notifier: "false",
    npm_config_offline: "true",
    npm_config_fund: "false",
    npm_config_audit: "false",
    ...extra,
  };
}

/** `bash -eo pipefail -c script` in `cwd`, without blocking this process's event loop. */
function bash(script: string, cwd: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", script], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/**
 * A user's project after `npm install pulumi-posthog @pulumi/pulumi fastify`: both packages linked from this
 * checkout, `node_modules/.bin/posthog-emulator` and `pulumi-posthog` running the built bins (an `exec` wrapper:
 * the same process, as npm's link is), and a `package.json` with `scripts`.
 */
function userProject(dir: string, scripts: Record<string, string> = {}): string {
  mkdirSync(join(dir, "node_modules", "@pulumi"), { recursive: true });
  mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
  linkPackage(dir);
  for (const pkg of ["@pulumi/pulumi", "fastify"])
    symlinkSync(join(repoRoot, "node_modules", pkg), join(dir, "node_modules", pkg), "dir");
  for (const [bin, file] of [
    ["posthog-emulator", "dist/emulator/cli.js"],
    ["pulumi-posthog", "dist/provider/cli.js"],
  ])
    writeFileSync(
      join(dir, "node_modules", ".bin", bin ?? ""),
      `#!/bin/sh\nexec node "${join(repoRoot, file ?? "")}" "$@"\n`,
      { mode: 0o755 },
    );
  writeFileSync(
    join(dir, "package.json"),
    `${JSON.stringify({ name: "posthog-org", private: true, main: "index.js", scripts }, null, 2)}\n`,
  );
  return dir;
}

/** `code` with each placeholder replaced; every placeholder must occur (so a changed doc is noticed). */
function filled(b: Block, values: [string, string][]): string {
  let code = b.code;
  for (const [placeholder, value] of values) {
    expect(code, `${where(b)} shows ${placeholder}`).toContain(placeholder);
    code = code.replaceAll(placeholder, value);
  }
  return code;
}

const work = mkdtempSync(join(tmpdir(), "docs-blocks-"));
let emu: TestEmulator;

beforeAll(async () => {
  expect(existsSync(join(repoRoot, "dist", "emulator", "cli.js")), "run `npm run build` first").toBe(true);
  emu = await startTestEmulator();
}, TIMEOUT);
afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

/** A runner: which blocks it runs, and how (asserting what the doc promises). */
interface Runner {
  /** What it does, for the test's name. */
  title: string;
  matches(b: Block): boolean;
  run(b: Block): Promise<void>;
}

const is = (page: string, lang: string, text: string) => (b: Block) =>
  b.page === page && b.lang === lang && b.code.includes(text);

let readyLine: Promise<Record<string, unknown>> | undefined;
/**
 * A real ready line of `posthog-emulator` (a foreground emulator, stopped once it printed it): started once, for
 * every block showing one.
 */
function realReadyLine(): Promise<Record<string, unknown>> {
  readyLine ??= new Promise((resolve, reject) => {
    const child = spawn("node", [join(repoRoot, "dist", "emulator", "cli.js"), "--port", "0"], {
      env: userEnv(),
      stdio: ["ignore", "pipe", "inherit"],
    });
    child.stdout.once("data", (d: Buffer) => {
      child.kill("SIGTERM");
      resolve(JSON.parse(d.toString().split("\n")[0] ?? "") as Record<string, unknown>);
    });
    child.once("error", reject);
  });
  return readyLine;
}

/** The Pulumi project the CLI blocks share: a JavaScript program of one Project, on a local backend in HOME. */
const cliProject = join(work, "cli", "posthog-org");
const cliHome = join(work, "cli", "home");
/**
 * Where `pulumi login --local` keeps the state here: `--local` is `file://~`, the home directory of the user in
 * /etc/passwd (not $HOME), so the runners log in to this directory instead and leave the machine's home alone.
 */
const cliBackend = `file://${join(work, "cli", "state")}`;
const cliEnv = () => {
  const env = { ...pulumiEnv(join(work, "cli", "state")), ...userEnv() } as NodeJS.ProcessEnv;
  delete env.PULUMI_BACKEND_URL; // `pulumi login` chooses
  return {
    ...env,
    HOME: cliHome,
    PULUMI_HOME: join(cliHome, ".pulumi"),
    PULUMI_CONFIG_PASSPHRASE: "docs-blocks",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    // What the reader's "yes" at `pulumi up`'s prompt does, in a shell with no terminal.
    PULUMI_SKIP_CONFIRMATIONS: "true",
  };
};
let cliReady: Promise<void> | undefined;
/** Creates the project and its `dev` stack once (`pulumi login --local`, `pulumi stack init dev`). */
function cliSetup(): Promise<void> {
  cliReady ??= (async () => {
    mkdirSync(cliHome, { recursive: true });
    mkdirSync(join(work, "cli", "state"), { recursive: true });
    userProject(cliProject);
    writeFileSync(join(cliProject, "Pulumi.yaml"), "name: posthog-org\nruntime: nodejs\n");
    writeFileSync(
      join(cliProject, "index.js"),
      'const posthog = require("pulumi-posthog");\n\nnew posthog.Project("web", { name: "Web from the docs" });\n',
    );
    const r = await bash(`pulumi login ${cliBackend}\npulumi stack init dev`, cliProject, cliEnv());
    expect(r.status, r.stderr).toBe(0);
  })();
  return cliReady;
}

/** The names of the emulator's projects. */
const projectNames = async () =>
  ((await emu.call("GET", `${emu.org}/projects/`)).body.results as { name: string }[]).map((p) => p.name);

const runners: Runner[] = [
  {
    title: 'eval "$(npx posthog-emulator --print-env …)", then a command reading the variables, then kill',
    matches: is("docs/emulator.md", "sh", "--print-env"),
    async run(b) {
      const dir = userProject(mkdtempSync(join(work, "print-env-")));
      const r = await bash(`${b.code}echo "pid=$POSTHOG_EMULATOR_PID"`, dir, userEnv());
      expect(r.status, r.stderr).toBe(0);
      const pid = Number(/pid=(\d+)/.exec(r.stdout)?.[1]);
      expect(pid).toBeGreaterThan(0);
      expect(existsSync(join(dir, "emulated-org", "index.ts")), r.stdout + r.stderr).toBe(true);
      expect(readFileSync(join(dir, "emulated-org", "Pulumi.dev.yaml"), "utf8")).toContain(
        "4d1b8f2e-6c3a-4e5f-9a7b-2c8d0e1f3a5b",
      );
      // The kill is sent: wait (up to 5 s) until the process is gone or a zombie, rather than a fixed time.
      const stopped = () => {
        const stat = spawnSync("ps", ["-p", String(pid), "-o", "stat="], { encoding: "utf8" }).stdout.trim();
        return stat === "" || stat.startsWith("Z");
      };
      for (const until = Date.now() + 5_000; !stopped() && Date.now() < until; )
        await new Promise((res) => setTimeout(res, 20));
      expect(stopped(), "the emulator stopped").toBe(true);
    },
  },
  {
    title: "the emulator's control-plane curl lines, with KEY and URL of a running emulator",
    matches: (b) => b.page === "docs/emulator.md" && b.lang === "sh" && b.code.includes("$URL/_emulator/"),
    async run(b) {
      const r = await bash(b.code, work, userEnv({ KEY: emu.apiKey, URL: emu.url }));
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).not.toContain('"detail"'); // no error body
      expect(r.stdout.trim()).not.toBe("");
    },
  },
  {
    title: "the ready line shown is the real one's form (keys, seeded organization and project)",
    matches: (b) => b.lang === "json" && b.code.includes('"organizationId"') && b.code.includes('"pid"'),
    async run(b) {
      const shown = JSON.parse(b.code) as Record<string, unknown>;
      const ready = await realReadyLine();
      expect(Object.keys(shown)).toEqual(Object.keys(ready));
      expect(shown.organizationId).toBe(ready.organizationId);
      expect(shown.projectId).toBe(ready.projectId);
    },
  },
  {
    title:
      "posthog-emulator.sh run -- npm test in a user's project: the tests see POSTHOG_* and reach the emulator",
    matches: is("docs/ci.md", "sh", "posthog-emulator.sh run -- npm test"),
    async run(b) {
      const dir = userProject(mkdtempSync(join(work, "recipe-")), { test: "node members.js" });
      writeFileSync(join(dir, "members.js"), MEMBERS_JS);
      const r = await bash(b.code, dir, userEnv());
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain("members: 200 4");
    },
  },
  {
    title:
      "the GitHub Actions steps, each `run:` in its own bash with $GITHUB_ENV carried over as the runner does",
    matches: is("docs/ci.md", "yaml", "posthog-emulator.sh start"),
    async run(b) {
      const dir = userProject(mkdtempSync(join(work, "steps-")), { test: "node members.js" });
      writeFileSync(join(dir, "members.js"), MEMBERS_JS);
      const githubEnv = join(dir, "github-env");
      writeFileSync(githubEnv, "");
      const steps = parse(b.code) as { name?: string; run: string; if?: string }[];
      expect(steps.map((s) => s.if ?? "")).toEqual(["", "", "always()"]);
      let output = "";
      let pid = "";
      for (const step of steps) {
        const vars = Object.fromEntries(
          readFileSync(githubEnv, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
        );
        pid = vars.POSTHOG_EMULATOR_PID ?? pid;
        const r = await bash(step.run, dir, userEnv({ ...vars, GITHUB_ENV: githubEnv }));
        expect(r.status, `${step.name ?? step.run}: ${r.stderr}`).toBe(0);
        output += r.stdout;
      }
      expect(output).toContain("members: 200 4");
      expect(pid).toMatch(/^\d+$/);
      const state = spawnSync("ps", ["-p", pid, "-o", "stat="], { encoding: "utf8" }).stdout.trim();
      expect(state === "" || state.startsWith("Z"), "the last step stopped the emulator").toBe(true);
    },
  },
  {
    title: "export with POSTHOG_API_KEY and POSTHOG_HOST of the emulator (placeholders: phx_…, the host)",
    matches: (b) =>
      b.lang === "sh" && /^npx pulumi-posthog export --out posthog-org --stack prod$/m.test(b.code),
    async run(b) {
      const dir = userProject(mkdtempSync(join(work, "export-")));
      const code = b.code.includes("phx_…")
        ? filled(b, [
            ["phx_…", emu.apiKey],
            ["https://eu.posthog.com", emu.url],
          ])
        : b.code; // the README's form: POSTHOG_API_KEY (and here the host) set beforehand, as it says
      const r = await bash(code, dir, userEnv({ POSTHOG_API_KEY: emu.apiKey, POSTHOG_HOST: emu.url }));
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/^Exported to posthog-org \(stack prod; \d+ files\):/m);
      expect(existsSync(join(dir, "posthog-org", "Pulumi.prod.yaml"))).toBe(true);
    },
  },
  {
    title:
      "pulumi login --local, the stack settings pointing at the emulator, pulumi preview (placeholders: PORT, phx_…, 4d1b8f2e-…; --local is a temporary directory)",
    matches: is("docs/installation-configuration.md", "sh", "pulumi login --local"),
    async run(b) {
      await cliSetup();
      const code = filled(b, [
        ["pulumi login --local", `pulumi login ${cliBackend}`],
        ["http://127.0.0.1:PORT", emu.url],
        ["phx_…", emu.apiKey],
        ["4d1b8f2e-…", emu.organizationId],
      ]);
      const r = await bash(code, cliProject, cliEnv());
      expect(r.status, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/\+\s+pulumi-nodejs:dynamic\/posthog:Project\s+web\s+create/);
      expect(readFileSync(join(cliProject, "Pulumi.dev.yaml"), "utf8")).toMatch(/posthog:apiKey:\s+secure: /);
      expect(await projectNames()).not.toContain("Web from the docs");
    },
  },
  {
    title: "the key as a secret, pulumi preview, pulumi up on that stack (placeholder: phx_…)",
    matches: is("docs/_index.md", "sh", "pulumi up"),
    async run(b) {
      await cliSetup();
      const r = await bash(filled(b, [["phx_…", emu.apiKey]]), cliProject, cliEnv());
      expect(r.status, r.stdout + r.stderr).toBe(0);
      expect(await projectNames()).toContain("Web from the docs");
    },
  },
  {
    title: "pulumi preview and pulumi up on that stack, as printed: nothing left to change",
    matches: (b) => b.page === "README.md" && b.lang === "sh" && /^pulumi preview\s/m.test(b.code),
    async run(b) {
      await cliSetup();
      const r = await bash(b.code, cliProject, cliEnv());
      expect(r.status, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/\b2 unchanged\b/);
      expect(r.stdout).not.toMatch(/to (create|update|replace|delete)/);
    },
  },
  {
    title:
      "a Pulumi YAML example of a resource or lookup page, as tools/examples.ts renders it: test/docs/examples-yaml.test.ts runs it through the plugin (up and destroy, or preview)",
    matches: (b) =>
      b.lang === "yaml" && EXAMPLES.some((e) => e.page === b.page) && b.code.includes("posthog:index:"),
    async run(b) {
      const example = EXAMPLES.find((e) => e.page === b.page);
      expect(example, where(b)).toBeDefined();
      if (example) expect(b.code).toBe(renderYaml(readSchema(), example));
      expect(readFileSync(join(repoRoot, "test", "docs", "examples-yaml.test.ts"), "utf8")).toContain(
        "EXAMPLES.map((ex) => [ex.page, ex] as const)",
      );
    },
  },
  {
    title:
      "the four settings of a stack, on the stack of the blocks before (placeholders: the organization and project ids are the doc's own)",
    matches: is("docs/installation-configuration.md", "sh", "pulumi config set posthog:projectId"),
    async run(b) {
      await cliSetup();
      const settings = join(cliProject, "Pulumi.dev.yaml");
      type Settings = { config: Record<string, string | { secure: string }> };
      const before = (parse(readFileSync(settings, "utf8")) as Settings).config["posthog:apiKey"];
      const r = await bash(filled(b, [["phx_…", "phx_docs_example_key"]]), cliProject, cliEnv());
      expect(r.status, r.stderr).toBe(0);
      // The settings as the CLI wrote them: the key encrypted (a new ciphertext: the key set before is replaced),
      // the host and the project id in clear.
      const file = readFileSync(settings, "utf8");
      const { config } = parse(file) as Settings;
      expect(config["posthog:apiKey"]).toEqual({ secure: expect.stringMatching(/^v1:/) });
      expect(config["posthog:apiKey"]).not.toEqual(before);
      expect(config["posthog:host"]).toBe("https://eu.posthog.com");
      expect(String(config["posthog:projectId"])).toBe("12345");
      expect(file).not.toContain("phx_docs_example_key");
    },
  },
  {
    title:
      "a tsconfig.json: parsed; test/package/quick-start.test.ts compiles and runs the README's program with it",
    matches: is("docs/installation-configuration.md", "json", '"compilerOptions"'),
    async run(b) {
      const json = JSON.parse(b.code) as { compilerOptions: Record<string, unknown>; files: string[] };
      expect(json.files).toEqual(["index.ts"]);
      expect(readFileSync(join(repoRoot, "test", "package", "quick-start.test.ts"), "utf8")).toContain(
        'markdownBlocks(pkg, "docs/installation-configuration.md", "json")',
      );
    },
  },
];

/** A user's test (`npm test`) that reads the settings from the environment and lists the members. */
const MEMBERS_JS = `const { POSTHOG_HOST, POSTHOG_API_KEY, POSTHOG_ORGANIZATION_ID, POSTHOG_PROJECT_ID } = process.env;
if (!POSTHOG_HOST || !POSTHOG_API_KEY || !POSTHOG_ORGANIZATION_ID || !POSTHOG_PROJECT_ID) throw new Error("POSTHOG_* not set");
fetch(POSTHOG_HOST + "/api/organizations/" + POSTHOG_ORGANIZATION_ID + "/members/", {
  headers: { authorization: "Bearer " + POSTHOG_API_KEY },
}).then(async (r) => console.log("members:", r.status, (await r.json()).count));
`;

const codeBlocks = blocks.filter((b) => CODE_LANGS.has(b.lang));
const testFiles = codeBlocks.filter((b) => !b.notRun && isTestFile(b));
const typeChecked = codeBlocks.filter(
  (b) => !b.notRun && (b.lang === "ts" || b.lang === "typescript") && !isTestFile(b),
);
const runnerOf = (b: Block) => runners.find((r) => r.matches(b));

describe("every code block of README.md and docs/ is run, type-checked, or marked not run with a reason", () => {
  it("finds the blocks", () => {
    expect(codeBlocks.length).toBeGreaterThan(50);
    expect(testFiles.length).toBeGreaterThanOrEqual(10);
  });

  it("no block is left out: each is a test file, a program (type-checked), matched by a runner, or marked", () => {
    const unaccounted = codeBlocks
      .filter((b) => !b.notRun && !isTestFile(b) && !typeChecked.includes(b) && !runnerOf(b))
      .map(
        (b) =>
          `${where(b)} (${b.lang}): add a runner to test/docs/run-blocks.test.ts, or <!-- docs-test: not run: <reason> --> before it`,
      );
    expect(unaccounted).toEqual([]);
  });

  it("a marked block is not also run (a stale marker), and each runner runs at least one block", () => {
    expect(codeBlocks.filter((b) => b.notRun && (runnerOf(b) || isTestFile(b))).map(where)).toEqual([]);
    for (const r of runners)
      expect(
        codeBlocks.some((b) => !b.notRun && r.matches(b)),
        r.title,
      ).toBe(true);
  });

  const marked = codeBlocks.filter((b) => b.notRun);
  it.skipIf(marked.length === 0).each(marked.map((b) => [where(b), b.notRun ?? ""]))(
    "%s is marked not run: %s",
    (_, reason) => {
      expect(reason.length).toBeGreaterThan(20); // a reason, not a placeholder
    },
  );
  // One compiler run for them all (as test/docs/code-blocks.test.ts compiles every ```ts block), against dist/ types.
  let diagnostics = new Map<string, string[]>();
  beforeAll(() => {
    diagnostics = blockDiagnostics(typeChecked);
  }, TIMEOUT);
  it.each(typeChecked.map(where))(
    "%s: type-checks as a strict CommonJS program importing pulumi-posthog; not run: a program for your own organization needs your PostHog account and a Pulumi stack",
    (w) => {
      expect(diagnostics.get(w), `${w} was compiled`).toBeDefined();
      expect(diagnostics.get(w)).toEqual([]);
    },
  );
});

describe("shell sequences and config files run as printed", () => {
  // In the order of the runners: the Pulumi blocks build on one another's stack, as a reader's session does.
  const order = (b: Block) => runners.indexOf(runnerOf(b) as Runner);
  const runnable = codeBlocks.filter((b) => !b.notRun && runnerOf(b)).sort((x, y) => order(x) - order(y));
  it.each(runnable.map((b) => [where(b), runnerOf(b)?.title ?? "", b] as const))(
    "%s: %s",
    async (_, __, b) => {
      await runnerOf(b)?.run(b);
    },
    TIMEOUT,
  );
});

describe("the test files of the docs pass as pasted (Vitest, one run)", () => {
  const runDir = join(repoRoot, "test", "docs", `.run-${process.pid}`);
  const names = new Map(
    testFiles.map((b, i) => [`${b.page.replace(/[^\w]+/g, "_")}_${b.line}_${i}.test.ts`, b]),
  );
  let results: { name: string; status: string; message: string }[] = [];

  beforeAll(async () => {
    mkdirSync(runDir, { recursive: true });
    for (const [name, b] of names) writeFileSync(join(runDir, name), b.code);
    // The `vmForks` pool: each file in a fresh VM context (its own module graph, @pulumi/pulumi and pulumi-posthog
    // loaded anew, its own globals), as under the default `forks`, but in two reused processes instead of one
    // process per file (about 40 % less CPU time, measured). What such a process shares between its files is
    // `process`: the setup file (not a test file) restores `process.env` after each file, so no file sees
    // another's variables (docs/testing.md's emulator example sets POSTHOG_*).
    writeFileSync(
      join(runDir, "restore-env.ts"),
      `import { afterAll } from "vitest";
const env = { ...process.env };
afterAll(() => {
  for (const k of Object.keys(process.env)) if (!(k in env)) delete process.env[k];
  Object.assign(process.env, env);
});
`,
    );
    writeFileSync(
      join(runDir, "vitest.config.mts"),
      `import { defineConfig } from "vitest/config";
export default defineConfig({ test: { include: ["*.test.ts"], setupFiles: ["./restore-env.ts"], environment: "node", pool: "vmForks", maxWorkers: 2, testTimeout: 30000 } });
`,
    );
    const outputFile = join(runDir, "results.json");
    const r = await bash(
      `vitest run --root "${runDir}" --config "${join(runDir, "vitest.config.mts")}" --reporter=json --outputFile="${outputFile}"`,
      repoRoot,
      userEnv(),
    );
    expect(existsSync(outputFile), r.stdout + r.stderr).toBe(true);
    const report = JSON.parse(readFileSync(outputFile, "utf8")) as {
      testResults: {
        name: string;
        status: string;
        message?: string;
        assertionResults: { failureMessages: string[] }[];
      }[];
    };
    results = report.testResults.map((t) => ({
      name: t.name.slice(t.name.lastIndexOf("/") + 1),
      status: t.status,
      message: [t.message ?? "", ...t.assertionResults.flatMap((a) => a.failureMessages)]
        .join("\n")
        .slice(0, 2000),
    }));
  }, TIMEOUT);
  afterAll(() => rmSync(runDir, { recursive: true, force: true }));

  it.each([...names].map(([name, b]) => [where(b), name] as const))("%s", (_, name) => {
    const result = results.find((r) => r.name === name);
    expect(result, `${name} was run`).toBeDefined();
    expect(result?.message ?? "").toBe("");
    expect(result?.status).toBe("passed");
  });
  it("runs every file written and nothing else", () => {
    expect(results.map((r) => r.name).sort()).toEqual([...names.keys()].sort());
    expect(readdirSync(runDir).filter((f) => f.endsWith(".test.ts")).length).toBe(names.size);
  });
});
