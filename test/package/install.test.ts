/**
 * Installing the package as a user does (issue 13): `npm pack` of a source-only copy (the `prepare` script builds
 * it, test/package/packed.ts), installed offline from the npm cache into two fresh projects: the tarball alone
 * (the client's user), and the README's install command (the tarball and `@pulumi/pulumi`) to which TypeScript,
 * Node's types, vitest and fastify are added later, as a user adds them. Checks what the tarball holds, that it
 * loads under Node 24 and fails in one line under Node 20, that strict programs compile against it, that no HTTP
 * server framework came with it (and what the emulator says without one), that the client alone needs no
 * `@pulumi/pulumi`, and that no relative link in the packed README or docs dangles. Issue 21 (a newcomer's first
 * hour): the README's install command brings `@pulumi/pulumi` into a project that lacks it, and `export` from the
 * installed bin depends on the tarball; the README's program with TypeScript 6 and the tsconfig the docs give,
 * through the real Pulumi CLI, is test/package/quick-start.test.ts's.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, normalize, relative, resolve } from "node:path";
import type ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { undocumentedProperties } from "../docs/hover";
import { startTestEmulator, type TestEmulator } from "../support/emulator";
import {
  compileAll,
  firstLine,
  lockedVersion,
  nodeBin,
  npmInstall,
  type Packed,
  packedTarball,
  readmeInstallCommand,
  root,
  runAsync,
  runNode,
  toolPath,
} from "./packed";

/** This file's projects, under one temporary folder. */
const base = mkdtempSync(join(tmpdir(), "pulumi-posthog-install-"));
/**
 * The project of most tests (`app`): fresh, then the README's install command as it is pasted (the tarball in place
 * of `./pulumi-posthog-<version>.tgz`), which brings `@pulumi/pulumi`; what a user adds next (TypeScript, Node's
 * types, vitest, fastify) comes in with a later `npm install` (see "what a user does next" below).
 */
let pkg: Packed;
/** The README's install command, as its arguments (`npm`, `install`, packages…). */
let readmeCommand: string[];
beforeAll(async () => {
  const tarball = await packedTarball();
  const dir = join(base, "app");
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", private: true }));
  readmeCommand = readmeInstallCommand(tarball);
  npmInstall(
    readmeCommand.slice(2).map((a) => (a.startsWith("./pulumi-posthog-") ? tarball.tarball : a)),
    dir,
  );
  pkg = {
    ...tarball,
    base,
    dir,
    packageDir: join(dir, "node_modules", "pulumi-posthog"),
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}, 600_000);
// Removing the projects' node_modules (hundreds of MB) took more than the default minute on a busy machine.
afterAll(() => rmSync(base, { recursive: true, force: true }), 300_000);

/** A Node.js 20 binary on this machine (the system Node), or undefined. */
const node20 = ((): string | undefined => {
  const candidates = ["/usr/bin/node", "/bin/node", "/usr/local/bin/node"];
  try {
    candidates.push(...execFileSync("which", ["-a", "node"], { encoding: "utf8" }).split("\n"));
  } catch {
    // no `which`: the fixed candidates only
  }
  return candidates.find(
    (bin) =>
      bin !== "" &&
      existsSync(bin) &&
      spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout?.startsWith("v20."),
  );
})();

let loadedEntryPoints: ReturnType<typeof runNode> | undefined;
/**
 * One Node 24 process in the project of most tests, before anything but the README's install command was
 * installed there: it requires the package's main, client and provider entry points and prints what the main one
 * and the client export (`function function function true`); run once, shared by the two tests that read it.
 */
const loadEntryPoints = () => {
  loadedEntryPoints ??= runNode(
    pkg.dir,
    `const p = require("pulumi-posthog");
     const c = require("pulumi-posthog/client");
     require("pulumi-posthog/provider");
     console.log(typeof p.Project, typeof p.Dashboard, typeof p.Invite, Object.keys(c).length > 0);`,
  );
  return loadedEntryPoints;
};

describe("the tarball", () => {
  it("holds the built entry points, the bin, docs, LICENSE and CHANGELOG.md, and nothing of test/bench/tools", () => {
    for (const file of [
      "package.json",
      "README.md",
      "LICENSE",
      "CHANGELOG.md",
      "docs/ci.md",
      "examples/ci/posthog-emulator.sh",
      "dist/sdk/index.js",
      "dist/sdk/index.d.ts",
      "dist/provider/index.js",
      "dist/provider/client/index.js",
      "dist/provider/client/index.d.ts",
      "dist/emulator/index.js",
      "dist/emulator/cli.js",
      "dist/provider/cli.js",
      "dist/provider/apps/governance/pack.js",
      "policy/posthog-policy",
      "policy/index.js",
      "policy/PulumiPolicy.yaml",
    ]) {
      expect(pkg.files, file).toContain(file);
    }
    expect(pkg.files.filter((f) => f.startsWith("docs/") && f.endsWith(".md")).length).toBeGreaterThan(1);
    const unwanted = pkg.files.filter(
      (f) =>
        /^(dist\/)?(test|bench|tools)\//.test(f) ||
        /\.test\.[cm]?[jt]s$/.test(f) ||
        (/\.ts$/.test(f) && !/\.d\.ts$/.test(f)) ||
        f.startsWith("node_modules/"),
    );
    expect(unwanted).toEqual([]);
    expect(readFileSync(join(pkg.packageDir, "LICENSE"), "utf8")).toContain("Apache License");
    expect(readFileSync(join(pkg.packageDir, "CHANGELOG.md"), "utf8")).toMatch(
      /^## \[0\.1\.0\] - \d{4}-\d{2}-\d{2}$/m,
    );
  });
});

describe("the tarball's bins (issue 51, item 3)", () => {
  const bins = (
    JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { bin: Record<string, string> }
  ).bin;

  it("each bin of package.json is in the tarball with its run bit (0755), however dist/ was built", () => {
    const listing = spawnSync("tar", ["-tvzf", pkg.tarball], {
      encoding: "utf8",
      maxBuffer: 16 * 1024 * 1024,
    });
    const modes = new Map(
      listing.stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => [line.split(/\s+/).at(-1), line.split(/\s+/)[0]]),
    );
    expect(Object.keys(bins).sort()).toEqual([
      "posthog-emulator",
      "pulumi-posthog",
      "pulumi-resource-posthog",
    ]);
    for (const [name, path] of Object.entries(bins))
      expect(modes.get(`package/${normalize(path)}`), name).toBe("-rwxr-xr-x");
  });

  it("each installed bin runs: pulumi-posthog and posthog-emulator print their usage, the plugin its port", async () => {
    const bin = (name: string) => join(pkg.dir, "node_modules", ".bin", name);
    const env = { ...process.env, PATH: toolPath };
    for (const [name, usage] of [
      ["pulumi-posthog", "pulumi-posthog export"],
      ["posthog-emulator", "Usage: posthog-emulator"],
    ] as const) {
      const r = spawnSync(bin(name), ["--help"], { cwd: pkg.dir, encoding: "utf8", env });
      expect(r.status, `${name}: ${r.stderr}`).toBe(0);
      expect(r.stdout, name).toContain(usage);
    }
    // The plugin, as the engine starts it: it serves gRPC and prints its port first.
    expect(await firstLine(bin("pulumi-resource-posthog"), [], { cwd: pkg.dir, env })).toMatch(/^\d+$/);
  }, 120_000);
});

describe("a newcomer's first hour (issue 21)", () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await startTestEmulator();
  });
  afterAll(async () => {
    await emu?.close();
  });

  it("the README's install command brings @pulumi/pulumi into a project that lacks it", () => {
    expect(readmeCommand.slice(0, 2)).toEqual(["npm", "install"]);
    const pulumi = JSON.parse(
      readFileSync(join(pkg.dir, "node_modules", "@pulumi", "pulumi", "package.json"), "utf8"),
    );
    expect(pulumi.version).toMatch(/^3\./);
    expect(Number(pulumi.version.split(".")[1])).toBeGreaterThanOrEqual(216);
    // The package it installed loads (its Dashboard is a class): the run of "loading it" below, in this project
    // as the README's command left it.
    const loaded = loadEntryPoints();
    expect(loaded.stderr).toBe("");
    expect(loaded.stdout.trim().split(" ")[1]).toBe("function");
  }, 120_000);

  it("export from the installed bin writes a package.json that installs the same tarball", async () => {
    const out = join(pkg.dir, "exported");
    const result = await runAsync(
      join(pkg.dir, "node_modules", ".bin", "pulumi-posthog"),
      ["export", "--out", out, "--only", "members"],
      {
        cwd: pkg.dir,
        env: { ...process.env, PATH: toolPath, POSTHOG_HOST: emu.url, POSTHOG_API_KEY: emu.apiKey },
      },
    );
    expect(result.status, result.stderr).toBe(0);
    const spec: string = JSON.parse(readFileSync(join(out, "package.json"), "utf8")).dependencies[
      "pulumi-posthog"
    ];
    expect(spec).toBe(`file:${relative(out, pkg.tarball)}`);
    expect(resolve(out, spec.slice("file:".length))).toBe(pkg.tarball);
    expect(result.stderr).toContain(
      `  package.json: "pulumi-posthog": "${spec}" (as ${pkg.dir} installed it: file:`,
    );
    expect(result.stderr).not.toContain("note:");
  });
});

describe("loading it", () => {
  it("require('pulumi-posthog') works under Node 24, and the client and provider entry points load", () => {
    const result = loadEntryPoints();
    expect(result.stderr).toBe("");
    expect(result.stdout.trim()).toBe("function function function true");
  }, 120_000);

  it.skipIf(!node20)(
    "under Node 20 (the system node), require('pulumi-posthog') fails with one line naming the versions and PATH",
    () => {
      const bin = node20 as string;
      const version = spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout.trim().replace(/^v/, "");
      const caught = spawnSync(
        bin,
        [
          "-e",
          `try { require("pulumi-posthog"); } catch (e) { process.stderr.write(e.message + "\\n"); process.exit(1); }`,
        ],
        { cwd: pkg.dir, encoding: "utf8" },
      );
      expect(caught.status).toBe(1);
      const lines = caught.stderr.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      const [line = ""] = lines;
      expect(line).toContain(`runs on ${version} (`);
      expect(line).toContain("needs Node.js >= 22.19");
      expect(line).toContain("PATH");
      // Uncaught (what a user running their program sees), that line is what Node prints as the error.
      const uncaught = spawnSync(bin, ["-e", `require("pulumi-posthog")`], {
        cwd: pkg.dir,
        encoding: "utf8",
      });
      expect(uncaught.status).not.toBe(0);
      expect(uncaught.stderr).toContain(`Error: ${line}`);
      expect(uncaught.stderr).not.toContain("reading 'bind'");
    },
  );
});

describe("dependencies", () => {
  it("installing it pulled no HTTP server framework (fastify is an optional peer dependency)", () => {
    const modules = readdirSync(join(pkg.dir, "node_modules"));
    expect(modules).not.toContain("fastify");
    expect(modules).not.toContain("pino");
    expect(modules).not.toContain("avvio");
    const manifest = JSON.parse(readFileSync(join(pkg.packageDir, "package.json"), "utf8"));
    expect(manifest.dependencies).not.toHaveProperty("fastify");
    expect(manifest.peerDependenciesMeta).toEqual({
      "@pulumi/policy": { optional: true },
      "@pulumi/pulumi": { optional: true },
      fastify: { optional: true },
    });
  });

  it("without fastify, the emulator module and its bin fail in one line that names the install command", () => {
    const loaded = runNode(
      pkg.dir,
      `try { require("pulumi-posthog/emulator"); } catch (e) { process.stderr.write(e.message + "\\n"); process.exit(3); }`,
    );
    expect(loaded.status).toBe(3);
    expect(loaded.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(loaded.stderr).toContain("npm install --save-dev fastify@5");

    const bin = spawnSync(join(pkg.dir, "node_modules", ".bin", "posthog-emulator"), ["--port", "0"], {
      cwd: pkg.dir,
      encoding: "utf8",
      env: { ...process.env, PATH: `${dirname(nodeBin)}:${process.env.PATH ?? ""}` },
    });
    expect(bin.status).toBe(1);
    expect(bin.stdout).toBe("");
    expect(bin.stderr).toBe(
      "posthog-emulator: pulumi-posthog/emulator: the PostHog emulator needs fastify 5, which is not installed " +
        "(an optional peer dependency of pulumi-posthog: the provider and the client do not need it): " +
        "run `npm install --save-dev fastify@5` in the project that runs it " +
        "(see docs/troubleshooting/commands.md#the-emulator-command-line)\n",
    );
  });

  it("the client alone installs and loads without @pulumi/pulumi", () => {
    const dir = join(pkg.base, "client-only");
    mkdirSync(dir);
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({ name: "client-only", version: "1.0.0", private: true }),
    );
    npmInstall([pkg.tarball], dir);
    // Neither optional peer is installed: the whole install is the package and its three dependencies (re2js: the
    // linear-time patterns of the governance rules, issue 49).
    const installed = readdirSync(join(dir, "node_modules")).filter((name) => !name.startsWith("."));
    expect(installed.sort()).toEqual(["pulumi-posthog", "re2js", "undici", "zod"]);
    const client = runNode(
      dir,
      `const c = require("pulumi-posthog/client"); console.log(Object.keys(c).length > 0);`,
    );
    expect(client.stderr).toBe("");
    expect(client.stdout.trim()).toBe("true");
    // The Pulumi SDK entry point does need it, and says which module is missing.
    const sdk = runNode(
      dir,
      `try { require("pulumi-posthog"); } catch (e) { console.log(e.code, e.message.split("\\n")[0]); }`,
    );
    expect(sdk.stdout).toContain("MODULE_NOT_FOUND Cannot find module '@pulumi/pulumi'");
  }, 120_000);
});

describe("links", () => {
  /** Every Markdown file of the packed package that the npm page or a reader opens: README.md and docs/. */
  const markdownFiles = (): string[] =>
    pkg.files.filter((f) => f === "README.md" || (f.startsWith("docs/") && f.endsWith(".md")));

  it("every relative link in README.md and docs/**/*.md points to a file in the tarball", () => {
    const dangling: string[] = [];
    let checked = 0;
    for (const file of markdownFiles()) {
      const text = readFileSync(join(pkg.packageDir, file), "utf8")
        .replace(/```[\s\S]*?```/g, "")
        .replace(/`[^`\n]*`/g, "");
      const targets = [
        ...[...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? ""),
        ...[...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/gm)].map((m) => m[1] ?? ""),
      ];
      for (const target of targets) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#") || target.startsWith("//"))
          continue;
        const path = decodeURIComponent(target.replace(/[#?].*$/, ""));
        const resolved = normalize(join(dirname(file), path)).replace(/\/$/, "");
        checked++;
        const inside = !relative(".", resolved).startsWith("..");
        const present =
          inside &&
          (pkg.files.includes(resolved) ||
            (existsSync(join(pkg.packageDir, resolved)) &&
              statSync(join(pkg.packageDir, resolved)).isFile()));
        if (!present) dangling.push(`${file}: ${target}`);
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(dangling, `dangling links:\n${dangling.join("\n")}`).toEqual([]);
  });
});

/** The ```<lang> blocks of a packed Markdown file. */
const blocks = (file: string, lang: string): string[] =>
  [
    ...readFileSync(join(pkg.packageDir, file), "utf8").matchAll(
      new RegExp(`\`\`\`${lang}\n([\\s\\S]*?)\`\`\``, "g"),
    ),
  ].map((m) => m[1] ?? "");

/** The ```ts blocks of a packed Markdown file (each is a complete program). */
const tsBlocks = (file: string): string[] => blocks(file, "ts");

/** The lines of tsc's output that start a diagnostic (not its continuation lines). */
const diagnosticLines = (output: string) =>
  output.split("\n").filter((l) => l.trim() !== "" && !/^\s/.test(l));

describe("what a user does next (issue 13, done when)", () => {
  beforeAll(() => {
    // What a user adds to compile programs, for the docs' examples and for the testing example: TypeScript (the
    // version of our lock file), Node's types, vitest, and fastify for the emulator. After the dependency tests
    // above, which need fastify absent (tests of a file run in order).
    npmInstall(
      [
        "--save-dev",
        `typescript@${lockedVersion("typescript")}`,
        `@types/node@${lockedVersion("@types/node")}`,
        `vitest@${lockedVersion("vitest")}`,
        `fastify@${lockedVersion("fastify")}`,
      ],
      pkg.dir,
    );
  }, 600_000);

  /** A strict program using the package. */
  const program = `import * as pulumi from "@pulumi/pulumi";
import * as posthog from "pulumi-posthog";

const web = new posthog.Project("web", { name: "Web", timezone: "Europe/Berlin" });
const kpis = new posthog.Dashboard("kpis", { name: "KPIs", projectId: web.id, restrictionLevel: 37 });
new posthog.Invite("jane", { targetEmail: "jane@example.com", level: "admin" });
export const projectApiToken = pulumi.secret(web.apiToken);
export const dashboardName = kpis.name;
`;
  /** The program with a wrong value where tsc must catch it. */
  const mistake = program.replace('level: "admin"', 'level: "owner-ish"');
  /** The module node16 check (see {@link node16Run}). */
  type Node16Check = {
    /** Whether an error was reported (what makes `tsc` exit non-zero). */
    failed: boolean;
    /** Every diagnostic, as `tsc` prints it (`<name>.ts(line,col): error TS…`, with continuation lines). */
    output: string;
    /** Each file's own diagnostics (`program`, `mistake`, `hover`). */
    outputs: Record<string, string>;
    /** The `…Args` types of the installed dist/sdk/args.d.ts, each aliased in hover.ts. */
    argsTypes: string[];
    /** The properties of those types the checker saw, and those of them without documentation (`Type.prop`). */
    seen: number;
    missing: string[];
    /** The files the program read. */
    files: string[];
  };
  let node16: Node16Check | undefined;
  /**
   * The module node16 check: one strict program (strict, target es2022, module node16, noEmit, no `types`, no
   * skipLibCheck: what `tsc -p` of such a tsconfig.json checks) of the project's own TypeScript (its
   * node_modules/typescript, the compiler its `tsc` runs, loaded into this process), over the program
   * (program.ts), the mistake beside it (mistake.ts) and a file aliasing every `…Args` type of the installed
   * package (hover.ts), each a module whose errors name its file. Its diagnostics are `tsc`'s (the options', every
   * file's syntax and types, the declaration files' included); its checker gives what an editor's hover shows (a
   * property's documentation comment). One compilation of the package's and `@pulumi/pulumi`'s declarations for
   * the tests below, instead of a `tsc` run and an editor's own program.
   */
  const node16Run = (): Node16Check => {
    if (node16) return node16;
    const tsc = createRequire(join(pkg.dir, "package.json"))("typescript") as typeof ts;
    const argsDts = readFileSync(join(pkg.packageDir, "dist", "sdk", "args.d.ts"), "utf8");
    const argsTypes = [...argsDts.matchAll(/^export (?:interface|type) (\w+Args)\b/gm)].map(
      (m) => m[1] ?? "",
    );
    const hover = `import type * as posthog from "pulumi-posthog";\n${argsTypes
      .map((n) => `export type H_${n} = posthog.${n};`)
      .join("\n")}\n`;
    const dir = join(pkg.dir, "tsc-node16");
    mkdirSync(dir, { recursive: true });
    const sources: Record<string, string> = { program, mistake, hover };
    for (const [name, source] of Object.entries(sources)) writeFileSync(join(dir, `${name}.ts`), source);
    const checked = tsc.createProgram(
      Object.keys(sources).map((name) => join(dir, `${name}.ts`)),
      {
        strict: true,
        target: tsc.ScriptTarget.ES2022,
        module: tsc.ModuleKind.Node16,
        moduleResolution: tsc.ModuleResolutionKind.Node16,
        noEmit: true,
        types: [],
      },
    );
    const diagnostics = tsc.getPreEmitDiagnostics(checked);
    const formatHost = {
      getCanonicalFileName: (f: string) => f,
      getCurrentDirectory: () => dir,
      getNewLine: () => "\n",
    };
    const outputs: Record<string, string> = Object.fromEntries(Object.keys(sources).map((n) => [n, ""]));
    for (const d of diagnostics) {
      const name = d.file && relative(dir, d.file.fileName).replace(/\.ts$/, "");
      if (name !== undefined && name in outputs) outputs[name] += tsc.formatDiagnostic(d, formatHost);
    }
    // What a hover shows for each property of each aliased type: its documentation comment.
    const checker = checked.getTypeChecker();
    const file = checked.getSourceFile(join(dir, "hover.ts"));
    if (!file) throw new Error("hover.ts did not load");
    const { missing, seen } = undocumentedProperties(tsc, checker, file);
    node16 = {
      failed: diagnostics.some((d) => d.category === tsc.DiagnosticCategory.Error),
      output: tsc.formatDiagnostics(diagnostics, formatHost),
      outputs,
      argsTypes,
      seen,
      missing,
      files: checked.getSourceFiles().map((s) => s.fileName),
    };
    return node16;
  };

  /** The README's quick start program and docs/_index.md's first one. */
  const docsPrograms = () => [
    ...tsBlocks("README.md").slice(0, 1),
    ...tsBlocks("docs/_index.md").slice(0, 1),
  ];
  /** Programs passing the Dashboard resource, then `true`, as a sharing's `dashboardId`. */
  const dashboardIdCases = [
    ["bool", "true"],
    ["resource", "kpis"],
  ] as const;
  let commonjs: ReturnType<typeof compileAll> | undefined;
  /**
   * The module commonjs check: one tsc run of the strict program (program.ts), the docs' programs (docs-0.ts,
   * docs-1.ts) and the dashboardId mistakes (dashboard-id-<case>.ts), each a module of its own whose errors name
   * its file; shared by the tests below.
   */
  const commonjsRun = () => {
    commonjs ??= compileAll(
      pkg,
      Object.fromEntries([
        ["program", program],
        ...docsPrograms().map((source, i) => [
          `docs-${i}`,
          source.replace(/^/, '/// <reference types="node" />\n'),
        ]),
        ...dashboardIdCases.map(([name, value]) => [
          `dashboard-id-${name}`,
          `import * as posthog from "pulumi-posthog";
const kpis = new posthog.Dashboard("kpis", { name: "KPIs" });
new posthog.DashboardSharing("kpis", { dashboardId: ${value} });
export const id = kpis.id;
`,
        ]),
      ]),
      { module: "commonjs" },
    );
    return commonjs;
  };

  describe("a strict program using the package", () => {
    it("compiles with tsc --strict, module commonjs, without skipLibCheck (no error but the dashboardId mistakes' below)", () => {
      const { output, outputs } = commonjsRun();
      expect(outputs.program).toBe("");
      // No error anywhere (a declaration file, the options) but the dashboardId mistakes' of the same run.
      expect(diagnosticLines(output).filter((l) => !l.startsWith("dashboard-id-"))).toEqual([]);
    }, 300_000); // a whole tsc run: 30 s, then 120 s, were too little on 2 cores busy with the CLI tests beside it

    it("compiles with the project's TypeScript --strict, module node16, without skipLibCheck (no error but the mistake's below)", () => {
      const { output, outputs } = node16Run();
      expect(outputs.program).toBe("");
      expect(diagnosticLines(output).filter((l) => !l.startsWith("mistake.ts("))).toEqual([]);
    }, 300_000);

    it("and the compiler catches a mistake in it (the check above can fail)", () => {
      const { failed, outputs } = node16Run();
      expect(mistake).not.toBe(program);
      expect(failed).toBe(true);
      expect(outputs.mistake).toMatch(
        /^mistake\.ts\(6,\d+\): error TS2322: Type '"owner-ish"' is not assignable/,
      );
    }, 300_000);
  });

  it("the programs of the README's quick start and of docs/_index.md compile with tsc --strict", () => {
    expect(docsPrograms()).toHaveLength(2);
    const { output, outputs } = commonjsRun();
    expect(outputs["docs-0"]).toBe("");
    expect(outputs["docs-1"]).toBe("");
    // No error anywhere (a declaration file, the options) but the dashboardId mistakes' of the same run.
    expect(diagnosticLines(output).filter((l) => !l.startsWith("dashboard-id-"))).toEqual([]);
  }, 300_000);

  it("`dashboardId: true` (and the Dashboard resource itself) fail to compile, at dashboardId", () => {
    const cases = dashboardIdCases;
    const { status, outputs } = commonjsRun();
    expect(status).not.toBe(0);
    for (const [name] of cases) {
      const output = outputs[`dashboard-id-${name}`] ?? "";
      // The error points at the property (line 3, where `dashboardId` starts).
      const column = 'new posthog.DashboardSharing("kpis", { '.length + 1;
      expect(output, name).toMatch(
        new RegExp(`^dashboard-id-${name}\\.ts\\(3,${column}\\): error TS2322: Type '.*' is not assignable`),
      );
    }
  }, 300_000);

  it("the installed bin `pulumi-posthog` runs (the export command's usage)", () => {
    const bin = join(pkg.dir, "node_modules", ".bin", "pulumi-posthog");
    const result = spawnSync(bin, ["--help"], {
      cwd: pkg.dir,
      encoding: "utf8",
      env: { ...process.env, PATH: toolPath },
    });
    expect(result.status, result.stderr).toBe(0);
    expect(`${result.stdout}${result.stderr}`).toContain("pulumi-posthog export");
  });

  it("an editor shows documentation for every property of every Args type of the installed package (module node16)", () => {
    const { argsTypes, outputs, files, seen, missing } = node16Run();
    expect(argsTypes.length).toBeGreaterThanOrEqual(9);
    expect(outputs.hover).toBe("");
    // The declarations come from the installed copy, not from this checkout.
    const posthogFiles = files.filter((f) => f.includes("/pulumi-posthog/"));
    expect(posthogFiles.length).toBeGreaterThan(0);
    expect(posthogFiles.every((f) => f.startsWith(pkg.packageDir))).toBe(true);
    expect(seen).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  }, 300_000);

  it("the testing example (examples/testing) passes in the fresh project, against the installed package", () => {
    const dir = join(pkg.dir, "testing");
    mkdirSync(dir, { recursive: true });
    const source = join(root, "examples", "testing");
    for (const f of readdirSync(source).filter((n) => n.endsWith(".ts")))
      writeFileSync(join(dir, f), readFileSync(join(source, f)));
    const vitest = join(pkg.dir, "node_modules", "vitest", "vitest.mjs");
    const result = spawnSync(
      nodeBin,
      [vitest, "run", "--root", dir, "--testTimeout=30000", "--hookTimeout=60000", "--reporter=verbose"],
      { cwd: pkg.dir, encoding: "utf8", env: { ...process.env, PATH: toolPath, CI: "true" } },
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes
    const output = `${result.stdout}${result.stderr}`.replace(/\u001b\[[0-9;]*m/g, "");
    expect(result.status, output).toBe(0);
    const files = readdirSync(dir).filter((n) => n.endsWith(".test.ts")).length;
    expect(files).toBeGreaterThanOrEqual(4);
    expect(output).toMatch(new RegExp(`Test Files\\s+${files} passed \\(${files}\\)`));
  }, 300_000);
});
