#!/usr/bin/env node
/**
 * `npm run gen-sdk`: writes the SDKs of the posthog Pulumi package for Go, Node.js, Python and .NET from
 * schema.json into sdk-gen/<lang>/, with Pulumi's own generators (github.com/pulumi/pulumi/pkg/v3: v3.274.1, the
 * CLI's version, for Go, Node.js and Python; v3.225.1 for .NET, see {@link TOOLS}), linked by the Go tools in
 * tools/pulumi-cli/gensdk (see its main.go for why not `pulumi package gen-sdk`: the language hosts that run these
 * generators for the CLI are not served by the Go module proxy).
 *
 * `npm run gen-sdk -- --check` writes them into a temporary folder instead and compares: exit 1 naming each file
 * that is out of date, missing or extra in sdk-gen/, and the command that rewrites them. `--dir DIR` checks (or
 * writes) DIR instead of sdk-gen/ (test/plugin/gen-sdk.test.ts checks a changed copy).
 *
 * The Go SDK's go.mod and go.sum are completed by `go mod tidy` in its folder (the Go module proxy, Go's module
 * cache), so `--check` compares them too. The Node.js SDK is Pulumi's "local SDK" form: its package.json names
 * `bin/index.js` and a postinstall script compiles the TypeScript there when npm installs the package; what is
 * published is packed compiled, with no such script, by `npm run sdk-pack` (tools/sdk-pack.mts).
 *
 * The tools are built with Go (`GOTOOLCHAIN=local`, `-mod=readonly`; Go's own caches) into
 * .pulumi-cli/tools/, each rebuilt only when its go.mod, go.sum or main.go change (a stamp beside it). A cold
 * build compiles much of pkg/v3: about 8 minutes each on 2 shared cores; with Go's caches warm, under a minute
 * (the link); with the stamp current, none. Exit 1 with one
 * message when Go is missing or a step fails. Run directly by Node 24 (type stripping); imports none of the
 * project's modules.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";

const root = resolve(import.meta.dirname, "..");
const moduleDir = join(root, "tools", "pulumi-cli", "gensdk");
const toolDir = join(root, ".pulumi-cli", "tools");

/** A generator of ours: its Go module folder, the executable built from it, the languages it writes. */
interface Tool {
  name: string;
  dir: string;
  languages: string[];
}

/**
 * The generators: Go, Node.js and Python from pkg/v3 v3.274.1 (the CLI's); .NET from pkg/v3 v3.225.1, the newest
 * served release that still holds Pulumi's .NET generator (tools/pulumi-cli/gensdk/dotnet/main.go).
 */
const TOOLS: Tool[] = [
  { name: "gensdk", dir: moduleDir, languages: ["go", "nodejs", "python"] },
  { name: "gensdk-dotnet", dir: join(moduleDir, "dotnet"), languages: ["dotnet"] },
];
/** The languages generated, each into sdk-gen/<lang>/. */
const LANGUAGES = TOOLS.flatMap((t) => t.languages);
/** The folder of the checked-in SDKs. */
const SDK_DIR = join(root, "sdk-gen");

const say = (line: string) => process.stdout.write(`gen-sdk: ${line}\n`);

function fail(message: string): never {
  process.stderr.write(`gen-sdk: ${message}\n`);
  process.exit(1);
}

/** Runs `command`; on failure exits naming the step and the tail of its output. */
function run(title: string, command: string, args: string[], cwd: string): string {
  const started = Date.now();
  const r = spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, CGO_ENABLED: "0", GOFLAGS: "-mod=readonly", GOTOOLCHAIN: "local" },
  });
  const log = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  if (r.status !== 0) {
    const tail = log.trimEnd().split("\n").slice(-30).join("\n");
    fail(
      `step "${title}" failed (${r.error?.message ?? `exit ${r.status}`}) in ${cwd}; last lines:\n${tail}`,
    );
  }
  say(`${title}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return log;
}

/** A hash of a tool's sources: the build is redone when it differs from the stamp's. */
function sourceHash(t: Tool): string {
  const hash = createHash("sha256");
  for (const name of ["go.mod", "go.sum", "main.go"]) hash.update(readFileSync(join(t.dir, name)));
  return hash.digest("hex");
}

/** Builds a generator unless the stamp says this build of its sources is there; returns its executable. */
function ensureTool(t: Tool): string {
  const tool = join(toolDir, t.name);
  const stampPath = join(toolDir, `${t.name}.stamp`);
  const hash = sourceHash(t);
  if (existsSync(tool) && existsSync(stampPath) && readFileSync(stampPath, "utf8").trim() === hash)
    return tool;
  mkdirSync(toolDir, { recursive: true });
  say(`building ${t.name} (${shown(t.dir)}; a cold build takes minutes, Go's caches keep it warm) …`);
  run(`build ${t.name}`, "go", ["build", "-trimpath", "-ldflags", "-s -w", "-o", tool, "."], t.dir);
  writeFileSync(stampPath, `${hash}\n`);
  return tool;
}

/** Every file under `dir`, as paths relative to it with `/`, sorted. */
function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import("node:fs").Dirent[])
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split("\\").join("/"))
    .sort();
}

/** A path as the messages show it: relative to the repository when inside it. */
const shown = (path: string) => (relative(root, path).startsWith("..") ? path : relative(root, path));

/** Files a build or a run of an SDK leaves, which its generated .gitignore ignores: not compared. */
const BUILD_OUTPUT = /(^|\/)(__pycache__|node_modules|bin|obj|build|dist|[^/]*\.egg-info)\/|\.pyc$/;

/** The files that differ between the checked-in `have` folder and the freshly generated `want` one. */
function differences(have: string, want: string): string[] {
  const haveFiles = new Set(listFiles(have).filter((f) => !BUILD_OUTPUT.test(f)));
  const wantFiles = listFiles(want);
  const out: string[] = [];
  for (const file of wantFiles) {
    if (!haveFiles.has(file)) out.push(`missing: ${file}`);
    else if (!readFileSync(join(have, file)).equals(readFileSync(join(want, file))))
      out.push(`out of date: ${file}`);
    haveFiles.delete(file);
  }
  for (const file of haveFiles) out.push(`extra: ${file}`);
  return out;
}

function main(): void {
  const { values } = parseArgs({
    options: { check: { type: "boolean", default: false }, dir: { type: "string" } },
  });
  const sdkDir = values.dir ? resolve(values.dir) : SDK_DIR;
  const schema = join(root, "schema.json");
  if (!existsSync(schema)) fail("schema.json is missing: run `npm run schema` first");
  if (spawnSync("go", ["version"], { encoding: "utf8" }).status !== 0) {
    fail(
      "Go is needed to build the SDK generators and tidy the Go SDK's go.mod: install Go 1.26.6 or later " +
        "(https://go.dev/dl/) and run again",
    );
  }
  const tools = TOOLS.map((t) => ({ ...t, path: ensureTool(t) }));
  const out = values.check ? mkdtempSync(join(tmpdir(), "gen-sdk-")) : sdkDir;
  try {
    for (const t of tools) {
      const args = ["-schema", schema, "-out", out];
      if (t.name === "gensdk") args.push("-lang", t.languages.join(","));
      process.stdout.write(run(`generate ${t.languages.join(", ")}`, t.path, args, root));
    }
    // The Go SDK's go.mod names only Pulumi's Go SDK: tidy adds the modules it needs and writes go.sum, so that
    // `go build ./...` works in sdk-gen/go and a program using it verifies its dependencies (Go module proxy).
    run("go mod tidy (sdk-gen/go: go.mod, go.sum)", "go", ["mod", "tidy"], join(out, "go"));
    if (!values.check) return;
    const stale = LANGUAGES.flatMap((lang) =>
      differences(join(sdkDir, lang), join(out, lang)).map((d) => `${shown(join(sdkDir, lang))}: ${d}`),
    );
    if (stale.length > 0) {
      fail(
        `${stale.length} generated file(s) differ from schema.json's SDKs:\n  ${stale.join("\n  ")}\n` +
          "run `npm run gen-sdk` and commit sdk-gen/",
      );
    }
    say(
      `sdk-gen/ is current (${LANGUAGES.map((l) => `${l}: ${listFiles(join(out, l)).length} files`).join(", ")})`,
    );
  } finally {
    if (values.check) rmSync(out, { recursive: true, force: true });
  }
}

main();
