#!/usr/bin/env node
/**
 * `npm run sdk-pack -- --out DIR`: packs the generated Node.js SDK (sdk-gen/nodejs, as `npm run gen-sdk` writes
 * it) as npm users expect a package: compiled JavaScript with its declarations, nothing to build where it is
 * installed. Writes `DIR/pulumi-posthog-posthog-<version>.tgz` and prints its path and sha256.
 *
 * The generated folder is Pulumi's "local SDK" form: TypeScript sources, a postinstall script that runs `tsc` on
 * the user's machine, and `typescript` and `@types/node` as runtime dependencies. This command, on a copy of it:
 * - compiles it with the package's own tsconfig.json (`outDir` bin/, declarations; source and declaration maps
 *   off, since the TypeScript sources are not shipped) by this checkout's TypeScript, `@pulumi/pulumi` and
 *   `@types/node` (node_modules: `npm ci` first);
 * - adds the repository's LICENSE (the package.json names Apache-2.0);
 * - rewrites package.json ({@link packedManifest}): `main` bin/index.js, `types` bin/index.d.ts, `files` bin/ (and
 *   README.md), no scripts, `typescript` and `@types/node` moved to devDependencies; a copy goes to bin/ as the
 *   postinstall did (the SDK's getVersion reads `./package.json` beside its compiled utilities.js);
 * - runs `npm pack` (npm fixes each entry's time and mode, so the same files give the same bytes).
 *
 * sdk-gen/nodejs is left as it is. Run directly by Node 24 (type stripping); imports none of the project's
 * modules. Exit 1 with one message saying what to fix when an argument is missing or a step fails.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const root = resolve(import.meta.dirname, "..");
const SDK = join(root, "sdk-gen", "nodejs");
const TSC = join(root, "node_modules", "typescript", "bin", "tsc");
/** What the generated package needs only to compile: moved from dependencies to devDependencies. */
const BUILD_ONLY = ["typescript", "@types/node"];

/** The generated package.json's fields this command reads or rewrites. */
interface Manifest {
  name: string;
  version: string;
  main?: string;
  types?: string;
  files?: string[];
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  [key: string]: unknown;
}

function fail(message: string): never {
  process.stderr.write(`sdk-pack: ${message}\n`);
  process.exit(1);
}

/** Runs `command args…` in `cwd`; exits naming the step and its output's tail when it fails; returns stdout. */
function run(title: string, command: string, args: string[], cwd: string): string {
  const r = spawnSync(command, args, { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) {
    const tail = `${r.stdout ?? ""}${r.stderr ?? ""}`.trimEnd().split("\n").slice(-30).join("\n");
    fail(`step "${title}" failed (${r.error?.message ?? `exit ${r.status}`}) in ${cwd}:\n${tail}`);
  }
  return r.stdout;
}

/**
 * The packed package's manifest from the generated one: compiled entry points under bin/, only bin/ shipped (npm
 * adds package.json and README.md), no install-time scripts (nor the build script, which needs the sources), and
 * the compile-only dependencies ({@link BUILD_ONLY}) as devDependencies. Other fields (name, version, `pulumi`, …)
 * are kept as generated.
 */
function packedManifest(generated: Manifest): Manifest {
  const { scripts: _scripts, dependencies = {}, devDependencies = {}, ...rest } = generated;
  const runtime = Object.fromEntries(Object.entries(dependencies).filter(([d]) => !BUILD_ONLY.includes(d)));
  const dev = { ...devDependencies };
  for (const d of BUILD_ONLY) if (dependencies[d]) dev[d] = dependencies[d];
  return {
    ...rest,
    main: "bin/index.js",
    types: "bin/index.d.ts",
    files: ["bin/", "README.md"],
    dependencies: runtime,
    devDependencies: dev,
  };
}

function main(): void {
  const { values } = parseArgs({ options: { out: { type: "string" } } });
  if (!values.out) fail("say where to write the tarball: npm run sdk-pack -- --out DIR");
  const out = resolve(values.out);
  if (!existsSync(join(SDK, "package.json"))) fail(`${SDK}/package.json is missing: run npm run gen-sdk`);
  if (!existsSync(TSC)) fail(`${TSC} is missing: run npm ci in ${root}`);
  const stage = mkdtempSync(join(tmpdir(), "sdk-pack-"));
  try {
    const dir = join(stage, "nodejs");
    // What a build or an install leaves in the generated folder (its .gitignore) is not copied.
    cpSync(SDK, dir, { recursive: true, filter: (src) => !/[/\\](node_modules|bin)$/.test(src) });
    cpSync(join(root, "LICENSE"), join(dir, "LICENSE"));
    // The checkout's node_modules: tsc resolves @pulumi/pulumi and @types/node there.
    symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
    run(
      "tsc (the package's tsconfig.json)",
      process.execPath,
      [TSC, "-p", "tsconfig.json", "--sourceMap", "false", "--declarationMap", "false"],
      dir,
    );
    unlinkSync(join(dir, "node_modules"));
    const manifest = packedManifest(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest);
    const text = `${JSON.stringify(manifest, null, 4)}\n`;
    writeFileSync(join(dir, "package.json"), text);
    writeFileSync(join(dir, "bin", "package.json"), text);
    mkdirSync(out, { recursive: true });
    const packed = JSON.parse(
      run("npm pack", "npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", out], dir),
    ) as { filename: string }[];
    const tarball = join(out, packed[0]?.filename ?? fail("npm pack named no tarball"));
    const sha256 = createHash("sha256").update(readFileSync(tarball)).digest("hex");
    process.stdout.write(`${tarball}\nsha256 ${sha256}\n`);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

main();
