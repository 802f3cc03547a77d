#!/usr/bin/env node
/**
 * `npm run plugin-tarball`: packs the provider plugin as the tarball `pulumi plugin install` takes,
 * `pulumi-resource-posthog-v<version>-<os>-<arch>.tar.gz` (dist/ by default; `--out DIR` elsewhere):
 *
 *   pulumi plugin install resource posthog <version> --file pulumi-resource-posthog-v<version>-<os>-<arch>.tar.gz
 *
 * The CLI extracts it into `$PULUMI_HOME/plugins/resource-posthog-v<version>/` and starts the executable at its
 * root, `pulumi-resource-posthog`, with the engine's address as argument. The tarball holds:
 * - `pulumi-resource-posthog`: a shell script running `node dist/provider/plugin/main.js` (the `node` first on
 *   PATH: Node.js >= 22.19 is a requirement of the machine, as for the npm package; not packed);
 * - `dist/provider`, `dist/sdk`: the built JavaScript (`npm run build` first; the script runs it);
 * - `package.json` (name and version: the plugin reports its version from it), `schema.json` (served by
 *   GetSchema), `LICENSE`;
 * - `node_modules`: the production dependencies (`undici`, `zod`) and `@pulumi/pulumi` (a peer dependency of the
 *   npm package, which the plugin runs on), with what they depend on, copied from this checkout's node_modules
 *   with the layout npm gave them (so each resolves as it does here), less what nothing runs (type
 *   declarations, source maps, TypeScript sources, Markdown). No network.
 *
 * The os and arch are Pulumi's names of this machine's (`linux`/`darwin`, `amd64`/`arm64`): the code is
 * JavaScript, but the CLI installs a tarball under the name the user gives, and `pulumi plugin install` without
 * `--file` looks for that name. Windows is refused (the executable is a shell script).
 *
 * Run directly by Node 24 (type stripping; hence `.mts`); imports none of the project's modules. Prints the
 * tarball's path, its size and the count of packages; exit 1 with one line saying what to fix.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";

const root = resolve(import.meta.dirname, "..");

/** Packages the plugin runs on beyond the package's own dependencies: its peer dependency @pulumi/pulumi. */
const RUNTIME_PEERS = ["@pulumi/pulumi"];

/** Pulumi's name of a Node.js platform (`process.platform`), or undefined for one the tarball does not serve. */
const OS: Record<string, string> = { linux: "linux", darwin: "darwin" };
/** Pulumi's name of a Node.js architecture (`process.arch`). */
const ARCH: Record<string, string> = { x64: "amd64", arm64: "arm64" };

interface PackageJson {
  name?: string;
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8")) as PackageJson;

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

/** The plugin's executable: runs the built plugin beside it with the `node` first on PATH. */
const EXECUTABLE = `#!/bin/sh
# The posthog provider plugin (pulumi-posthog), as the Pulumi engine starts it: pulumi-resource-posthog <engine>.
# Runs the node first on PATH: Node.js >= 22.19 is required.
here=$(dirname "$(readlink -f "$0" 2>/dev/null || echo "$0")")
exec node "$here/dist/provider/plugin/main.js" "$@"
`;

/**
 * Packs the tarball into `outDir`; returns its path, size in bytes and the number of packages in node_modules.
 * @throws Error when dist/ is not built, on Windows or an architecture Pulumi has no name for, or when `tar` fails.
 */
export function packPluginTarball(outDir: string): { file: string; bytes: number; packages: number } {
  const os = OS[process.platform];
  const arch = ARCH[process.arch];
  if (os === undefined || arch === undefined) {
    throw new Error(
      `no plugin tarball for ${process.platform}/${process.arch}: its executable is a shell script (linux or darwin, x64 or arm64)`,
    );
  }
  const main = join(root, "dist", "provider", "plugin", "main.js");
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
  const pkg = readJson(join(root, "package.json"));
  const version = pkg.version as string;
  // Only the two generated files are written; tar reads the rest in place (a list of files, no copy: fast).
  const stage = mkdtempSync(join(tmpdir(), "plugin-tarball-"));
  try {
    writeFileSync(join(stage, "pulumi-resource-posthog"), EXECUTABLE);
    chmodSync(join(stage, "pulumi-resource-posthog"), 0o755);
    writeFileSync(
      join(stage, "package.json"),
      `${JSON.stringify({ name: pkg.name, version, private: true, type: "commonjs", license: "Apache-2.0" }, null, 2)}\n`,
    );
    const files = ["schema.json", "LICENSE"];
    for (const d of ["provider", "sdk"]) {
      files.push(...filesUnder(join(root, "dist", d), (f) => /\.(js|json)$/.test(f)));
    }
    const packages = closure([...Object.keys(pkg.dependencies ?? {}), ...RUNTIME_PEERS]);
    for (const dir of packages) files.push(...filesUnder(dir, (f) => !NOT_RUN.test(f)));
    const list = join(stage, "files.txt");
    writeFileSync(list, `${files.join("\n")}\n`);
    mkdirSync(outDir, { recursive: true });
    const file = join(resolve(outDir), `pulumi-resource-posthog-v${version}-${os}-${arch}.tar.gz`);
    const tar = spawnSync(
      "tar",
      ["-czf", file, "-C", stage, "pulumi-resource-posthog", "package.json", "-C", root, "-T", list],
      { encoding: "utf8" },
    );
    if (tar.status !== 0) throw new Error(`tar failed (${tar.status}): ${tar.stderr || tar.error?.message}`);
    return { file, bytes: statSync(file).size, packages: packages.length };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
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

if (import.meta.filename === resolve(process.argv[1] ?? "")) {
  try {
    const { values } = parseArgs({ options: { out: { type: "string" } }, strict: true });
    const { file, bytes, packages } = packPluginTarball(values.out ?? join(root, "dist"));
    const version = readJson(join(root, "package.json")).version;
    process.stdout.write(
      `${file} (${(bytes / 1e6).toFixed(1)} MB, ${packages} packages)\n` +
        `install: pulumi plugin install resource posthog ${version} --file ${file}\n`,
    );
  } catch (e) {
    process.stderr.write(`plugin-tarball: ${(e as Error).message}\n`);
    process.exitCode = 1;
  }
}
