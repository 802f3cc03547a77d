/**
 * `examples/gitops/index.ts` compiles the way the Pulumi CLI's nodejs language host compiles it (issue 11,
 * point 1). The engine runs the program from the directory of `main` (examples/gitops) with entry `index.ts`;
 * the language host starts `@pulumi/pulumi/cmd/run` with `--pwd` = that directory, `PULUMI_NODEJS_TYPESCRIPT`
 * from `runtime.options.typescript` and `PULUMI_NODEJS_TSCONFIG_PATH` from `runtime.options.tsconfig`, passed
 * as written (pulumi/pulumi sdk/nodejs/cmd/pulumi-language-nodejs/main.go:921–926). run.js chdirs there and
 * registers ts-node with that tsconfig, else `tsconfig.json` of THAT directory only, else none
 * (`skipProject`), its own defaults (`target ES2020`, `module`/`moduleResolution nodenext`) under the file's
 * compilerOptions. With none, TypeScript stops with TS2209 ("The project root is ambiguous … export map entry
 * '.'"): `pulumi-posthog` is this repository's own package, and the self-reference needs a rootDir. The root
 * Pulumi.yaml sets `tsconfig: ../../tsconfig.json` (relative to examples/gitops, where run.js reads it).
 *
 * Why this route: running `cmd/run/index.js` itself needs a resource monitor before the program is even
 * required (the root Stack resource asks the monitor for its features first), so without one it fails on the
 * monitor and never reaches TypeScript; the stand-in engine's tests (test/stack/gitops*.test.ts) run that
 * whole route against its monitor. `tsc -p <tsconfig>` is not the same compiler set-up (ts-node forces
 * `outDir`, drops `declaration`, ignores `include`, adds run.js's defaults). So a child Node does what run.js
 * does, step for step, with the settings read from Pulumi.yaml and the modules run.js would load
 * (@pulumi/pulumi's own `tsutils`, its `typescript`/`ts-node` choice, resolved from run.js), then asks that
 * ts-node service to compile index.ts, type checking included, without running it. Without the `tsconfig`
 * option this gave TS2209, the error the real CLI printed; the control below keeps showing it. A last test
 * checks that the installed run.js still takes the steps mirrored here.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = join(__dirname, "..", "..");

/** The root Pulumi.yaml: where the program runs and what the language host passes to run.js. */
const project = parse(readFileSync(join(root, "Pulumi.yaml"), "utf8")) as {
  main: string;
  runtime: { name: string; options?: { typescript?: boolean; tsconfig?: string } };
};
const programDir = dirname(resolve(root, project.main)); // pkg/engine/project.go: pwd = filepath.Dir(main)
const entry = basename(project.main);
/** The environment the language host adds for these options (main.go: typescript, tsconfig as written). */
const hostEnv: NodeJS.ProcessEnv = {
  PULUMI_NODEJS_TYPESCRIPT: String(project.runtime.options?.typescript ?? true),
  ...(project.runtime.options?.tsconfig
    ? { PULUMI_NODEJS_TSCONFIG_PATH: project.runtime.options.tsconfig }
    : {}),
};

/**
 * The TypeScript set-up of `@pulumi/pulumi/cmd/run/run.js` (`run()`, from `process.chdir(pwd)` to
 * `tsn.register(options)`), then `compile` of the entry (as ts-node's require hook would) instead of running
 * it. argv: program directory, entry, and optionally code to compile in place of the entry's file.
 * Prints one JSON line: `{ok, codes, message, typescript, tsnode, skipProject, transpileOnly}`.
 */
const languageHostCompile = `
const fs = require("node:fs");
const path = require("node:path");
const { createRequire } = require("node:module");
const [pwd, entry, code] = process.argv.slice(1);
const fromRun = createRequire(require.resolve("@pulumi/pulumi/cmd/run/run.js", { paths: [process.cwd()] }));
const tsutils = fromRun("../../tsutils");
const semver = fromRun("semver");
process.chdir(pwd);
const tsConfigPath = process.env.PULUMI_NODEJS_TSCONFIG_PATH ?? "tsconfig.json";
const skipProject = !fs.existsSync(tsConfigPath);
const compilerOptions = tsutils.loadTypeScriptCompilerOptions(tsConfigPath);
const transpileEnv = process.env.PULUMI_NODEJS_TRANSPILE_ONLY;
const transpileOnly = transpileEnv ? transpileEnv === "true" : compilerOptions.noCheck;
const { tsnodeRequire, typescriptRequire } = tsutils.typeScriptRequireStrings();
const ts = fromRun(typescriptRequire);
const useNodeNext = semver.parse(ts.version).compare(new semver.SemVer("4.7.0")) >= 0;
const options = {
  compiler: typescriptRequire,
  transpileOnly,
  project: tsConfigPath,
  skipProject,
  compilerOptions: {
    target: "ES2020",
    module: useNodeNext ? "nodenext" : "commonjs",
    moduleResolution: useNodeNext ? "nodenext" : "node",
    sourceMap: "true",
    ...compilerOptions,
  },
};
const service = fromRun(tsnodeRequire).register(options);
const file = path.join(process.cwd(), entry);
const report = { typescript: ts.version, tsnode: tsnodeRequire, skipProject, transpileOnly: transpileOnly ?? false };
try {
  service.compile(code ?? fs.readFileSync(file, "utf8"), file);
  console.log(JSON.stringify({ ok: true, codes: [], message: "", ...report }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, codes: e.diagnosticCodes ?? [], message: String(e.message), ...report }));
}
`;

interface Compiled {
  ok: boolean;
  codes: number[];
  message: string;
  typescript: string;
  tsnode: string;
  skipProject: boolean;
  transpileOnly: boolean;
}

/**
 * Runs {@link languageHostCompile} in a child Node with environment `env` over this process's (without any
 * PULUMI_NODEJS_* of its own); ts-node's output cache is off, so every run type-checks.
 */
function compileLikeTheLanguageHost(env: NodeJS.ProcessEnv, code?: string): Compiled {
  const args = ["-e", languageHostCompile, programDir, entry, ...(code === undefined ? [] : [code])];
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("PULUMI_NODEJS_") && !k.startsWith("TS_NODE_")),
  );
  const child = spawnSync(process.execPath, args, {
    cwd: root,
    encoding: "utf8",
    timeout: 120_000,
    env: { ...inherited, TS_NODE_CACHE: "false", ...env },
  });
  expect(child.status, child.stderr).toBe(0);
  return JSON.parse(child.stdout.trim().split("\n").pop() ?? "") as Compiled;
}

describe("examples/gitops under the nodejs language host's TypeScript set-up", () => {
  it("runs from examples/gitops, entry index.ts, as TypeScript", () => {
    expect(project.runtime.name).toBe("nodejs");
    expect(programDir).toBe(join(root, "examples", "gitops"));
    expect(entry).toBe("index.ts");
    expect(hostEnv.PULUMI_NODEJS_TYPESCRIPT).toBe("true");
  });

  it("index.ts compiles with the settings Pulumi.yaml gives the language host, type checking on", () => {
    const r = compileLikeTheLanguageHost(hostEnv);
    expect(r.message).toBe("");
    expect(r.ok).toBe(true);
    expect(r.skipProject).toBe(false); // a tsconfig was found from examples/gitops and used
    expect(r.transpileOnly).toBe(false);
    expect(Number(r.typescript.split(".")[0])).toBeLessThan(7); // TS 7 breaks the closure serializer
  }, 120_000);

  it("type checking is really on: a type error in the program is reported", () => {
    const code = `${readFileSync(join(programDir, "index.ts"), "utf8")}\nexport const wrong: number = "text";\n`;
    const r = compileLikeTheLanguageHost(hostEnv, code);
    expect(r.ok).toBe(false);
    expect(r.codes).toEqual([2322]);
  }, 120_000);

  it("control: with no tsconfig at all it stops with TS2209, as the CLI did", () => {
    // Pulumi.yaml without `tsconfig` and no tsconfig.json beside index.ts: run.js skips the project (run.js
    // itself would then also refuse the missing named file; the compile is what this control is about)
    const r = compileLikeTheLanguageHost({
      ...hostEnv,
      PULUMI_NODEJS_TSCONFIG_PATH: "no-such-tsconfig.json",
    });
    expect(r.skipProject).toBe(true);
    expect(r.ok).toBe(false);
    expect(r.codes).toEqual([2209]);
    expect(r.message).toContain("The project root is ambiguous");
  }, 120_000);

  it("mirrors the installed run.js (the steps above are still the ones it takes)", () => {
    const runJs = readFileSync(createRequire(__filename).resolve("@pulumi/pulumi/cmd/run/run.js"), "utf8");
    for (const step of [
      "process.chdir(pwd);",
      'const defaultTsConfigPath = "tsconfig.json";',
      'const tsConfigPath = process.env["PULUMI_NODEJS_TSCONFIG_PATH"] ?? defaultTsConfigPath;',
      "const skipProject = !fs.existsSync(tsConfigPath);",
      "const compilerOptions = tsutils.loadTypeScriptCompilerOptions(tsConfigPath);",
      "transpileOnly = compilerOptions.noCheck;",
      "const { tsnodeRequire, typescriptRequire } = tsutils.typeScriptRequireStrings();",
      "project: tsConfigPath,",
      "skipProject: skipProject,",
      'target: "ES2020",',
      'module: useNodeNext ? "nodenext" : "commonjs",',
      'moduleResolution: useNodeNext ? "nodenext" : "node",',
      "...compilerOptions,",
      "tsn.register(options);",
    ])
      expect(runJs, step).toContain(step);
    // the ESM branch (package.json "type": "module") is not ours: this package is CommonJS
    expect(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).type).toBe("commonjs");
  });
});
