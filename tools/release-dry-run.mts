#!/usr/bin/env node
/**
 * `npm run release-dry-run -- [--out DIR] [--stage NAME]… [--all] [--strict]`: the release of
 * .github/workflows/release.yml on this machine, on the files it builds here (issue 51). The workflow's jobs call
 * the same stages (`--stage build --all --strict` in its build job, `--stage verify`, `--stage test-npm`, … in its
 * test jobs), so the steps are written once, here. Stages, in order (no `--stage`: all but `published`):
 *
 * - `build`: into DIR (default dist/release-dry-run; each file there is an artifact of the release) `npm pack` of
 *   this checkout; `npm run plugin-tarball` (this machine's os/arch; `--all`: every one, each required os/arch
 *   must be there); `npm run sdk-pack` (the generated Node.js SDK's package) when package.json has that script;
 *   the Python sdist and wheel when `python3 -m build` runs; the .NET package when `dotnet` runs;
 *   `npm run schema-diff -- --markdown <DIR>/../schema-changes.md` when that script exists; then the checksums
 *   file `pulumi-posthog-v<version>-checksums.txt` (sha256sum's format) over every file of DIR. With `--strict`
 *   (the workflow) anything it could not build is an error, not a note.
 * - `verify`: every file of DIR is in the checksums file with its sha256, and nothing else is there; with `--all`,
 *   a plugin tarball is there for each required os/arch.
 * - `test-npm`: the npm tarball installed in a fresh project (with `@pulumi/pulumi` and `fastify` of our lock
 *   file), the emulator started from that installed package, and the quick start's program (JavaScript) run by
 *   `pulumi preview` and `pulumi up` through the real CLI (tools/pulumi.ts; local backend, passphrase).
 * - `test-plugin`: this machine's plugin tarball installed with `pulumi plugin install --file`, and a Pulumi YAML
 *   program run by `pulumi preview` and `up` with a PATH holding only `pulumi` and `pulumi-language-yaml` (no node).
 * - `test-sdk`: the Node.js SDK's package (when built) installed beside the plugin tarball, a program through it.
 * - `list`: what would be published where, each file with its sha256.
 * - `--published` (job verify, after the release): `test-npm` installs `pulumi-posthog@<version>` from npm and
 *   `test-plugin` the plugin from the GitHub release (`pulumi plugin install resource posthog <version>` through
 *   schema.json's pluginDownloadURL) instead of DIR's files.
 * - `published --from DIR2`: the re-run check: each file of DIR2 (what a registry or the GitHub release already
 *   holds, downloaded) must have the bytes of DIR's file of that name; prints the files of DIR not published yet,
 *   one a line. Exit 1 naming each file whose bytes differ.
 *
 * `test-*` need `npm run build` and the Pulumi CLI (`npm run pulumi-cli`): the npm script runs both. Not part of
 * `npm test` (minutes); test/package/release.test.ts checks the workflow agrees with it. Exit 1 with a line naming
 * what failed (the artifact, the stage); 2 for a bad command line.
 */
import { spawn, spawnSync } from "node:child_process";
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
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const root = resolve(import.meta.dirname, "..");
/** The stages, in the order they run. */
export const STAGES = [
  "build",
  "verify",
  "test-npm",
  "test-plugin",
  "test-sdk",
  "list",
  "published",
] as const;
type Stage = (typeof STAGES)[number];
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  version: string;
  scripts: Record<string, string>;
};
const version = pkg.version;
/** The checksums file of the release, in DIR. */
export const checksumsName = (v: string) => `pulumi-posthog-v${v}-checksums.txt`;
/** Progress, to stderr (stdout is the answer of `list` and `published`). */
const say = (line: string) => process.stderr.write(`release-dry-run: ${line}\n`);

/** A failure of a stage: its message is the one line printed. */
class StageError extends Error {}

/** Runs `command` in `cwd` (stdio to stderr, so stdout stays the stage's answer); throws naming it unless it exits 0. */
function run(command: string, args: string[], cwd = root, env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(command, args, { cwd, env, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) {
    process.stderr.write(`${r.stdout ?? ""}${r.stderr ?? ""}`);
    throw new StageError(
      `\`${command} ${args.join(" ")}\` failed (${r.error?.message ?? `exit ${r.status}`})`,
    );
  }
  return r.stdout;
}

/** Whether `command args` runs and exits 0 here. */
const works = (command: string, args: string[]) => spawnSync(command, args, { stdio: "ignore" }).status === 0;

/** The sha256 of `file`, hex. */
export function sha256(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

/** The files of `dir` (not folders), sorted; the checksums file left out. */
export function artifacts(dir: string, v = version): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name !== checksumsName(v))
    .map((e) => e.name)
    .sort();
}

/** The os-arch pairs `npm run plugin-tarball -- --all` must make (tools/plugin-tarball.mts TARGETS, not optional). */
export async function requiredPlatforms(): Promise<string[]> {
  const url = pathToFileURL(join(root, "tools", "plugin-tarball.mts")).href;
  const tool = (await import(url)) as typeof import("./plugin-tarball.mjs");
  return tool.TARGETS.filter((t) => !t.optional).map(tool.targetName);
}

/** This machine's plugin tarball name, e.g. `pulumi-resource-posthog-v0.1.0-linux-amd64.tar.gz`. */
const pluginTarball = (platform: string) => `pulumi-resource-posthog-v${version}-${platform}.tar.gz`;
const hostPlatform = () =>
  `${process.platform === "win32" ? "windows" : process.platform}-${process.arch === "x64" ? "amd64" : process.arch}`;

/**
 * Checks that each required os/arch has its plugin tarball in `dir`, holding the executable and `node/bin/node`.
 * @throws StageError naming every missing file and what is there, or the tarball lacking an entry.
 */
export function checkPlatforms(dir: string, platforms: string[], v = version): void {
  const have = artifacts(dir, v);
  const missing = platforms
    .map((p) => `pulumi-resource-posthog-v${v}-${p}.tar.gz`)
    .filter((f) => !have.includes(f));
  if (missing.length > 0)
    throw new StageError(
      `no plugin tarball for a required os/arch: ${missing.join(", ")} (${dir} holds: ${have.join(", ") || "nothing"})`,
    );
  // The executable and the Node.js runtime it runs (no node is needed on the user's PATH).
  for (const p of platforms) {
    const file = `pulumi-resource-posthog-v${v}-${p}.tar.gz`;
    const entries = run("tar", ["-tzf", join(dir, file)]).split("\n");
    for (const entry of ["pulumi-resource-posthog", "node/bin/node"])
      if (!entries.includes(entry))
        throw new StageError(`${file} holds no ${entry}: npm run plugin-tarball made it wrong`);
  }
}

/** Writes the checksums file of `dir` (`<sha256>  <name>` a line, sha256sum's format); returns its text. */
export function writeChecksums(dir: string, v = version): string {
  const text = artifacts(dir, v)
    .map((f) => `${sha256(join(dir, f))}  ${f}\n`)
    .join("");
  writeFileSync(join(dir, checksumsName(v)), text);
  return text;
}

/**
 * Checks `dir` against its checksums file: every file listed, with its sha256, and no file unlisted.
 * @throws StageError naming each file that differs, is missing or is not listed.
 */
export function verifyChecksums(dir: string, v = version): void {
  const file = join(dir, checksumsName(v));
  if (!existsSync(file)) throw new StageError(`${file} is missing: the build stage writes it`);
  const listed = new Map(
    readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => [l.slice(66), l.slice(0, 64)] as [string, string]),
  );
  const problems: string[] = [];
  for (const [name, sum] of listed) {
    if (!existsSync(join(dir, name))) problems.push(`${name} is missing`);
    else if (sha256(join(dir, name)) !== sum)
      problems.push(`${name}: sha256 ${sha256(join(dir, name))}, listed ${sum}`);
  }
  for (const name of artifacts(dir, v))
    if (!listed.has(name)) problems.push(`${name} is not in ${checksumsName(v)}`);
  if (problems.length > 0) throw new StageError(`checksum mismatch in ${dir}: ${problems.join("; ")}`);
}

/**
 * The re-run check: for each file of `publishedDir` (what is published already, downloaded), the file of that
 * name in `dir` must have the same bytes. Returns the files of `dir` not published yet (what a re-run uploads).
 * @throws StageError naming each file whose published bytes differ from the built ones (nothing is replaced).
 */
export function unpublished(dir: string, publishedDir: string, v = version): string[] {
  const built = [...artifacts(dir, v), checksumsName(v)].filter((f) => existsSync(join(dir, f)));
  const there = existsSync(publishedDir) ? readdirSync(publishedDir) : [];
  const differ = there.filter(
    (f) => built.includes(f) && sha256(join(dir, f)) !== sha256(join(publishedDir, f)),
  );
  if (differ.length > 0)
    throw new StageError(
      `already published with other bytes: ${differ.map((f) => `${f} (published sha256 ${sha256(join(publishedDir, f))}, built ${sha256(join(dir, f))})`).join("; ")}: a published file is never replaced; release a new version`,
    );
  return built.filter((f) => !there.includes(f));
}

/** What the build stage made and skipped. */
interface Built {
  skipped: string[];
}

/** The Python sdist and wheel of sdk-gen/python (a copy, with the README PyPI shows) into `out`. */
function buildPython(out: string): void {
  const copy = join(mkdtempSync(join(tmpdir(), "release-python-")), "python");
  run("cp", ["-R", join(root, "sdk-gen", "python"), copy]);
  run("cp", [join(copy, "pulumi_posthog", "README.md"), join(copy, "README.md")]);
  run("python3", ["-m", "build", "--sdist", "--wheel", "--outdir", out, copy]);
  rmSync(dirname(copy), { recursive: true, force: true });
}

/**
 * The build stage (see the file's comment): every artifact into `out`, then the checksums file.
 * @throws StageError naming what failed; with `strict`, also what could not be built here.
 */
async function build(out: string, all: boolean, strict: boolean): Promise<Built> {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const skipped: string[] = [];
  const skip = (what: string, why: string) => {
    if (strict) throw new StageError(`${what} cannot be built: ${why}`);
    skipped.push(`${what}: ${why}`);
    say(`skipped ${what}: ${why}`);
  };
  say("npm pack …");
  run("npm", ["pack", "--silent", "--pack-destination", out]);
  say(`npm run plugin-tarball${all ? " -- --all" : ""} …`);
  run("npm", ["run", "--silent", "plugin-tarball", "--", ...(all ? ["--all"] : []), "--out", out]);
  checkPlatforms(out, all ? await requiredPlatforms() : [hostPlatform()]);
  if (pkg.scripts["sdk-pack"]) run("npm", ["run", "--silent", "sdk-pack", "--", "--out", out]);
  else skip("the Node.js SDK package", "package.json has no `sdk-pack` script yet");
  if (works("python3", ["-m", "build", "--version"])) buildPython(out);
  else skip("the Python sdist and wheel", "`python3 -m build` does not run here (pip install build)");
  if (works("dotnet", ["--version"]))
    run("dotnet", [
      "pack",
      join(root, "sdk-gen", "dotnet"),
      "-c",
      "Release",
      `-p:Version=${version}`,
      "-o",
      out,
    ]);
  else skip("the .NET package", "no `dotnet` here");
  if (pkg.scripts["schema-diff"])
    run("npm", [
      "run",
      "--silent",
      "schema-diff",
      "--",
      "--markdown",
      join(dirname(out), "schema-changes.md"),
    ]);
  else skip("the schema comparison for the release notes", "package.json has no `schema-diff` script yet");
  writeChecksums(out);
  return { skipped };
}

/** The release's files by where they go, for `list`. */
function destination(file: string): string {
  if (file.startsWith("pulumi-resource-posthog-")) return "GitHub release";
  if (file === checksumsName(version)) return "GitHub release";
  if (file.startsWith("pulumi-posthog-posthog-")) return "npm @pulumi-posthog/posthog";
  if (file.endsWith(".tgz")) return "npm pulumi-posthog";
  if (file.endsWith(".whl") || (file.startsWith("pulumi_posthog-") && file.endsWith(".tar.gz")))
    return "PyPI";
  if (file.endsWith(".nupkg")) return "NuGet";
  return "GitHub release";
}

/** Prints each file of `out` with its sha256 and where the release publishes it. */
function list(out: string): void {
  for (const f of [...artifacts(out), checksumsName(version)])
    process.stdout.write(`${sha256(join(out, f))}  ${f}  → ${destination(f)}\n`);
  process.stdout.write(`and the Go module tag sdk-gen/go/v${version} on the tagged commit\n`);
}

/** tools/pulumi.ts, built (dist/tools/pulumi.js: `npm run build`). */
function pulumiTools(): typeof import("./pulumi.js") {
  const built = join(root, "dist", "tools", "pulumi.js");
  if (!existsSync(built)) throw new StageError(`${built} is missing: run npm run build`);
  return createRequire(import.meta.url)(built) as typeof import("./pulumi.js");
}

/** The version of `name` in package-lock.json. */
function locked(name: string): string {
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version?: string }>;
  };
  const v = lock.packages[`node_modules/${name}`]?.version;
  if (!v) throw new StageError(`${name} is not in package-lock.json`);
  return v;
}

/** The one file of `out` that `test` matches. @throws StageError naming what is missing. */
function artifact(out: string, what: string, test: (f: string) => boolean): string {
  const found = artifacts(out).filter(test);
  if (found.length !== 1)
    throw new StageError(
      `${out} holds ${found.length} ${what} (${found.join(", ") || "none"}): run the build stage`,
    );
  return join(out, found[0] as string);
}

/** A fresh project in `dir` with the npm tarball of `out` (undefined: the published version), `@pulumi/pulumi` and `fastify` installed. */
function installNpmTarball(out: string | undefined, dir: string, extra: string[] = []): void {
  const tarball =
    out === undefined
      ? `pulumi-posthog@${version}`
      : artifact(out, "npm package", (f) => f === `pulumi-posthog-${version}.tgz`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "release-check", private: true }));
  run(
    "npm",
    [
      "install",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      tarball,
      ...extra,
      `@pulumi/pulumi@${locked("@pulumi/pulumi")}`,
      `fastify@${locked("fastify")}`,
    ],
    dir,
  );
}

/**
 * An emulator started from the command `bin` (an installed package's `node_modules/.bin/posthog-emulator`, or the
 * plugin folder's), with `path` as the whole PATH when given: its ready line's values, and `stop()`.
 */
async function startEmulator(bin: string, path?: string) {
  const child = spawn(bin, ["--port", "0", "--rate-limit", "off"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: path === undefined ? process.env : { ...process.env, PATH: path },
  });
  const line = await new Promise<string>((ok, fail) => {
    let text = "";
    child.stdout.on("data", (d: Buffer) => {
      text += d.toString();
      if (text.includes("\n")) ok(text.split("\n")[0] as string);
    });
    child.on("exit", (code) => fail(new StageError(`${bin} exited ${code} before its ready line`)));
  });
  const ready = JSON.parse(line) as {
    url: string;
    apiKey: string;
    organizationId: string;
    projectId: number;
  };
  const env: Record<string, string> = {
    POSTHOG_HOST: ready.url,
    POSTHOG_API_KEY: ready.apiKey,
    POSTHOG_ORGANIZATION_ID: ready.organizationId,
    POSTHOG_PROJECT_ID: String(ready.projectId),
  };
  return { env, stop: () => child.kill("SIGTERM") };
}

/**
 * `pulumi stack init`, `preview` and `up --yes` of the program in `projectDir` (local backend under `work`),
 * with `env` (the emulator's settings) and, when given, `path` as the whole PATH.
 * @throws StageError naming the command and the program, with the CLI's output on stderr.
 */
async function previewAndUp(projectDir: string, work: string, env: NodeJS.ProcessEnv, path?: string) {
  const { pulumi } = pulumiTools();
  const stateDir = join(work, "state");
  const opts = { cwd: projectDir, stateDir, env, ...(path !== undefined ? { path } : {}) };
  for (const args of [
    ["stack", "init", "dev"],
    ["preview", "--stack", "dev", "--non-interactive", "--color", "never"],
    ["up", "--yes", "--skip-preview", "--stack", "dev", "--non-interactive", "--color", "never"],
  ]) {
    const r = await pulumi(args, opts);
    if (r.exitCode !== 0) {
      process.stderr.write(`${r.stdout}${r.stderr}`);
      throw new StageError(`\`pulumi ${args.join(" ")}\` failed (exit ${r.exitCode}) in ${projectDir}`);
    }
    say(`pulumi ${args[0]}: ok (${(r.wallMs / 1000).toFixed(1)} s)`);
  }
}

/**
 * The Node.js program `program` (index.js of project `name`) in `dir`, where the npm tarball is installed: its
 * `preview` and `up` ({@link previewAndUp}) against the emulator that installed package serves, stopped after.
 * @throws StageError naming the command that failed
 */
async function runNodeProgram(dir: string, work: string, name: string, program: string): Promise<void> {
  writeFileSync(join(dir, "Pulumi.yaml"), `name: ${name}\nruntime: nodejs\nmain: index.js\n`);
  writeFileSync(join(dir, "index.js"), program);
  const emulator = await startEmulator(join(dir, "node_modules", ".bin", "posthog-emulator"));
  try {
    await previewAndUp(dir, work, emulator.env);
  } finally {
    emulator.stop();
  }
}

/** The quick start's program (README.md), in JavaScript. */
const QUICK_START = `const posthog = require("pulumi-posthog");
const web = new posthog.Project("web", { name: "Web", timezone: "Europe/Berlin" });
const kpis = new posthog.Dashboard("kpis", { name: "KPIs", projectId: web.id, restrictionLevel: "only-collaborators-can-edit" });
new posthog.Invite("jane", { targetEmail: "jane@example.com", level: "admin" });
new posthog.DashboardSharing("kpis", { dashboardId: kpis.id, projectId: web.id });
exports.projectApiToken = web.apiToken;
`;

/** The test-npm stage: the quick start from the npm tarball, against the emulator of that package. */
async function testNpm(out: string | undefined): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "release-npm-"));
  try {
    const dir = join(work, "project");
    installNpmTarball(out, dir);
    await runNodeProgram(dir, work, "quick-start", QUICK_START);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * `pulumi plugin install resource posthog <version> --file <this machine's tarball of out>` (out undefined: from
 * schema.json's pluginDownloadURL, the GitHub release) into the state of `work`.
 */
async function installPlugin(out: string | undefined, work: string): Promise<void> {
  const { pulumiOk } = pulumiTools();
  const schema = JSON.parse(readFileSync(join(root, "schema.json"), "utf8")) as { pluginDownloadURL: string };
  const from =
    out === undefined
      ? ["--server", schema.pluginDownloadURL]
      : [
          "--file",
          artifact(out, "plugin tarball for this machine", (f) => f === pluginTarball(hostPlatform())),
        ];
  await pulumiOk(["plugin", "install", "resource", "posthog", version, ...from], {
    cwd: work,
    stateDir: join(work, "state"),
  });
}

/**
 * The test-plugin stage: a YAML program through the plugin tarball, with no `node` on any PATH: the emulator is the
 * plugin folder's `posthog-emulator`, and after the `up` the folder's `pulumi-posthog audit` reads the organization
 * (exit 0 or 1: judged; 2, a read it could not complete, fails the stage).
 */
async function testPlugin(out: string | undefined): Promise<void> {
  const { PULUMI_BIN } = pulumiTools();
  const work = mkdtempSync(join(tmpdir(), "release-plugin-"));
  try {
    await installPlugin(out, work);
    const folder = join(work, "state", ".pulumi-home", "plugins", `resource-posthog-v${version}`);
    const dir = join(work, "project");
    mkdirSync(dir);
    writeFileSync(
      join(dir, "Pulumi.yaml"),
      "name: yaml-release-check\nruntime: yaml\nresources:\n  kpis:\n    type: posthog:index:Dashboard\n" +
        "    properties:\n      name: From the plugin tarball\noutputs:\n  dashboardId: $" +
        "{kpis.id}\n", // ${kpis.id}: a YAML interpolation
    );
    const bin = join(work, "no-node-bin");
    mkdirSync(bin);
    for (const tool of ["pulumi", "pulumi-language-yaml"])
      run("ln", ["-s", join(PULUMI_BIN, tool), join(bin, tool)]);
    const emulator = await startEmulator(join(folder, "posthog-emulator"), bin);
    try {
      await previewAndUp(dir, work, emulator.env, bin);
      auditWithoutNode(join(folder, "pulumi-posthog"), emulator.env, bin);
    } finally {
      emulator.stop();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * `<command> audit` (the plugin folder's `pulumi-posthog`) with the emulator's settings `env` and `path` as the whole
 * PATH (no `node` on it).
 * @throws StageError when it exits other than 0 or 1 (1: violations found, 2: a read it could not complete)
 */
function auditWithoutNode(command: string, env: Record<string, string>, path: string): void {
  const r = spawnSync(command, ["audit"], { env: { ...process.env, ...env, PATH: path }, encoding: "utf8" });
  if (r.status !== 0 && r.status !== 1) {
    process.stderr.write(`${r.stdout}${r.stderr}`);
    throw new StageError(`\`${command} audit\` exited ${r.status} (${r.error?.message ?? "no error"})`);
  }
  say(`pulumi-posthog audit from the plugin folder, no node on PATH: exit ${r.status}`);
}

/** The test-sdk stage: a program through the Node.js SDK's package and the plugin tarball. */
async function testSdk(out: string): Promise<string | undefined> {
  const sdk = artifacts(out).find((f) => f.startsWith("pulumi-posthog-posthog-") && f.endsWith(".tgz"));
  if (!sdk) return "no Node.js SDK package was built (npm run sdk-pack)";
  const work = mkdtempSync(join(tmpdir(), "release-sdk-"));
  try {
    const dir = join(work, "project");
    installNpmTarball(out, dir, [join(out, sdk)]);
    await installPlugin(out, work);
    await runNodeProgram(
      dir,
      work,
      "sdk-release-check",
      'const posthog = require("@pulumi-posthog/posthog");\n' +
        'const kpis = new posthog.Dashboard("kpis", { name: "From the SDK package" });\nexports.id = kpis.id;\n',
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return undefined;
}

/** Runs `stages` on `out`; prints what ran and what was skipped. @throws StageError from the stage that failed. */
async function main(
  stages: Stage[],
  out: string,
  flags: { all: boolean; strict: boolean; published: boolean; from?: string },
) {
  const tested = flags.published ? undefined : out;
  const ran: string[] = [];
  const skipped: string[] = [];
  for (const stage of stages) {
    say(`stage ${stage}`);
    if (stage === "build") skipped.push(...(await build(out, flags.all, flags.strict)).skipped);
    if (stage === "verify") verifyChecksums(out);
    if (stage === "verify" && flags.all) checkPlatforms(out, await requiredPlatforms());
    if (stage === "test-npm") await testNpm(tested);
    if (stage === "test-plugin") await testPlugin(tested);
    if (stage === "test-sdk") {
      const why = await testSdk(out);
      if (why && flags.strict) throw new StageError(`test-sdk: ${why}`);
      if (why) skipped.push(`test-sdk: ${why}`);
      if (why) continue;
    }
    if (stage === "list") list(out);
    if (stage === "published") {
      if (!flags.from)
        throw new StageError("--stage published needs --from DIR (the files published already)");
      for (const f of unpublished(out, flags.from)) process.stdout.write(`${f}\n`);
    }
    ran.push(stage);
  }
  say(`ran: ${ran.join(", ")}`);
  for (const s of skipped) say(`skipped: ${s}`);
}

if (import.meta.filename === resolve(process.argv[1] ?? "")) {
  let options: ReturnType<typeof parse>;
  function parse() {
    return parseArgs({
      options: {
        out: { type: "string" },
        stage: { type: "string", multiple: true },
        from: { type: "string" },
        all: { type: "boolean", default: false },
        strict: { type: "boolean", default: false },
        published: { type: "boolean", default: false },
      },
      strict: true,
    }).values;
  }
  try {
    options = parse();
    for (const s of options.stage ?? [])
      if (!(STAGES as readonly string[]).includes(s))
        throw new Error(`--stage ${s} is not one of ${STAGES.join(", ")}`);
  } catch (error) {
    process.stderr.write(`release-dry-run: ${(error as Error).message}\n`);
    process.exit(2);
  }
  const stages = (options.stage as Stage[] | undefined) ?? STAGES.filter((s) => s !== "published");
  const out = resolve(options.out ?? join(root, "dist", "release-dry-run"));
  try {
    await main(stages, out, {
      all: options.all,
      strict: options.strict,
      published: options.published,
      ...(options.from ? { from: options.from } : {}),
    });
  } catch (error) {
    process.stderr.write(`release-dry-run: ${(error as Error).message}\n`);
    process.exit(1);
  }
}
