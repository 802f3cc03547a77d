/**
 * The package as a user gets it: `npm pack` of a copy of this checkout that holds only sources (no dist/, so the
 * `prepare` script must build it), packed once per run for every test file that needs it (`packedTarball()`), and
 * installed into a fresh project beside `@pulumi/pulumi` and `typescript` (the versions of our lock file, from the
 * npm cache at ~/.npm: offline when it holds them). Tests that need the installed package call `installPacked()`
 * once per test file (in `beforeAll`, with a generous timeout) and then `compile()` / `runNode()` in its directory.
 */
import { execFile, type SpawnSyncReturns, spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { inject } from "vitest";

/** This checkout. */
export const root = join(__dirname, "..", "..");
/** Node 24 of node_modules/.bin (the system Node may be older than the package's floor). */
export const nodeBin = join(root, "node_modules", ".bin", "node");
/** PATH with node_modules/.bin first, so `npm`, `node` and `tsc` are this checkout's. */
export const toolPath = `${join(root, "node_modules", ".bin")}:${process.env.PATH ?? ""}`;

/** What the package needs to be packed: the sources `prepare` builds and the files it ships. */
const SOURCES = [
  "package.json",
  "tsconfig.json",
  "tsconfig.pack.json",
  "README.md",
  "LICENSE",
  "CHANGELOG.md",
  "docs",
  "examples/ci",
  "provider",
  "sdk",
  "emulator",
  "plugin",
  "policy",
  "schema.json",
];

/** The version of `name` in our package-lock.json. */
export function lockedVersion(name: string): string {
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version?: string }>;
  };
  const version = lock.packages[`node_modules/${name}`]?.version;
  if (!version) throw new Error(`${name} is not in package-lock.json`);
  return version;
}

/** Runs `command` to completion; throws with its output unless it exits 0. */
export function sh(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  const result = spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, PATH: toolPath, npm_config_update_notifier: "false", ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(" ")} (in ${cwd}) exited ${result.status}:\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

/**
 * npm's flags for every install of these tests: from the npm cache where it holds the packages (the registry is
 * asked only for what the cache lacks), no audit, no funding request.
 */
export const NPM_OFFLINE = ["--prefer-offline", "--no-audit", "--no-fund"];

/** Runs `npm install` with {@link NPM_OFFLINE} and `args` in `dir` (see {@link sh}); returns npm's output. */
export function npmInstall(args: string[], dir: string): string {
  return sh("npm", ["install", ...NPM_OFFLINE, ...args], dir);
}

/** The packed package: the tarball `npm pack` made of a source-only copy of this checkout. */
export type Tarball = {
  /** The tarball (`pulumi-posthog-<version>.tgz`). */
  tarball: string;
  /** Paths in the tarball, relative to the package root (`dist/sdk/index.js`, `LICENSE`, …), sorted. */
  files: string[];
  /** The tarball's package extracted (`tar -xzf`): the files as npm installs them, to read. */
  packageDir: string;
};

/** A packed and installed package. */
export type Packed = Tarball & {
  /** Temporary directory of this test file holding everything below; removed by `cleanup()`. */
  base: string;
  /** The fresh project: node_modules holds the tarball's package, @pulumi/pulumi and typescript. */
  dir: string;
  /** The installed package: `<dir>/node_modules/pulumi-posthog`. */
  packageDir: string;
  cleanup(): void;
};

/**
 * Packs a source-only copy of this checkout into `dir` (an empty or missing folder) and extracts the tarball beside
 * it. `npm pack` runs `prepare`, which builds dist/ from the sources: there is none before. Throws with npm's output
 * if packing fails.
 */
function packInto(dir: string): Tarball {
  const src = join(dir, "src");
  for (const entry of SOURCES) cpSync(join(root, entry), join(src, entry), { recursive: true });
  symlinkSync(join(root, "node_modules"), join(src, "node_modules"), "dir");
  const name =
    sh("npm", ["pack", "--silent", "--pack-destination", dir], src).trim().split("\n").at(-1) ?? "";
  const tarball = join(dir, name);
  const files = sh("tar", ["-tzf", tarball], dir)
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => line.replace(/^package\//, ""))
    .sort();
  sh("tar", ["-xzf", tarball], dir);
  rmSync(src, { recursive: true, force: true });
  return { tarball, files, packageDir: join(dir, "package") };
}

let tarball: Promise<Tarball> | undefined;

/**
 * The tarball of this run, packed once for all test files: the first file to ask packs it into the folder that
 * test/support/global-setup.ts provides (`inject("packDir")`, under a lock: `mkdir` of `lock` there), the others
 * wait for its `tarball.json` (or `error.txt`). Without that folder (another config), packs into a temporary
 * folder of this file. Takes tens of seconds: call it in `beforeAll` with a timeout of minutes.
 */
export function packedTarball(): Promise<Tarball> {
  tarball ??= (async () => {
    const shared = inject("packDir");
    if (!shared) {
      const own = mkdtempSync(join(tmpdir(), "pulumi-posthog-pack-"));
      process.on("exit", () => rmSync(own, { recursive: true, force: true }));
      return packInto(own);
    }
    const done = join(shared, "tarball.json");
    const failed = join(shared, "error.txt");
    let mine = false;
    try {
      mkdirSync(join(shared, "lock"));
      mine = true;
    } catch {
      // another file packs: wait for it below
    }
    if (mine) {
      try {
        const packed = packInto(join(shared, "pack"));
        writeFileSync(`${done}.tmp`, JSON.stringify(packed));
        renameSync(`${done}.tmp`, done);
        return packed;
      } catch (error) {
        writeFileSync(failed, String((error as Error).stack ?? error));
        throw error;
      }
    }
    for (;;) {
      if (existsSync(done)) return JSON.parse(readFileSync(done, "utf8")) as Tarball;
      if (existsSync(failed))
        throw new Error(`npm pack failed in another test file:\n${readFileSync(failed, "utf8")}`);
      await sleep(500);
    }
  })();
  return tarball;
}

let packed: Promise<Packed> | undefined;

/**
 * The run's tarball ({@link packedTarball}) installed into a fresh project of this test file (once per file; later
 * calls return the same install). Takes tens of seconds: call it in `beforeAll` with a timeout of minutes. Throws
 * with npm's output if packing (the `prepare` build) or installing fails.
 */
export function installPacked(): Promise<Packed> {
  packed ??= (async () => {
    const { tarball, files } = await packedTarball();
    const base = mkdtempSync(join(tmpdir(), "pulumi-posthog-packed-"));
    try {
      const dir = join(base, "app");
      mkdirSync(dir);
      writeFileSync(
        join(dir, "package.json"),
        `${JSON.stringify({ name: "app", version: "1.0.0", private: true }, null, 2)}\n`,
      );
      npmInstall(
        [
          tarball,
          `@pulumi/pulumi@${lockedVersion("@pulumi/pulumi")}`,
          `typescript@${lockedVersion("typescript")}`,
        ],
        dir,
      );
      return {
        base,
        tarball,
        files,
        dir,
        packageDir: join(dir, "node_modules", "pulumi-posthog"),
        cleanup: () => rmSync(base, { recursive: true, force: true }),
      };
    } catch (error) {
      rmSync(base, { recursive: true, force: true });
      throw error;
    }
  })();
  return packed;
}

/**
 * Runs `command` without blocking this process (an emulator started in it keeps answering); resolves with its exit
 * status (1 when it was killed, e.g. after `timeout` ms) and output, never rejects.
 */
export function runAsync(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeout?: number },
): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolveRun) => {
    execFile(
      command,
      args,
      { ...options, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = (error as { code?: unknown } | null)?.code;
        resolveRun({ status: error ? (typeof code === "number" ? code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/**
 * The first line `command` prints on stdout, after which it is killed (a server that prints its address or port
 * when ready, e.g.). @throws (rejects) when it exits first (with its stderr) or prints no line within 60 s.
 */
export function firstLine(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<string> {
  return new Promise((resolveLine, reject) => {
    const child = spawn(command, args, options);
    let out = "";
    let err = "";
    const timer = setTimeout(() => child.kill(), 60_000);
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (!out.includes("\n")) return;
      clearTimeout(timer);
      child.kill();
      resolveLine(out.split("\n")[0] ?? "");
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited (${code}) before printing a line: ${err}`));
    });
  });
}

/** Runs `node -e <code>` in `dir` with the given Node binary (default Node 24); returns the whole result. */
export function runNode(dir: string, code: string, node: string = nodeBin): SpawnSyncReturns<string> {
  return spawnSync(node, ["-e", code], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, PATH: toolPath },
  });
}

/** Compiler options of a user's strict program (what `pulumi new typescript` sets, plus `strict`). */
export type ProgramOptions = {
  module: "commonjs" | "node16";
  moduleResolution?: "node10" | "node16" | "bundler";
};

/**
 * Type-checks `source` as `<name>.ts` in the installed project with `tsc --strict --noEmit` (no `skipLibCheck`:
 * the package's .d.ts files are checked too). Returns tsc's status and output (`file(line,col): error TS…`).
 */
export function compile(
  pkg: Packed,
  source: string,
  options: ProgramOptions = { module: "commonjs" },
  name = "program",
): { status: number | null; output: string } {
  const { status, output } = compileAll(pkg, { [name]: source }, options);
  return { status, output };
}

/**
 * Type-checks several programs (`<name>.ts` each, all modules) in one `tsc --strict --noEmit` run, as
 * {@link compile} does one: one compilation of the package's and `@pulumi/pulumi`'s declarations for them all.
 * Returns the run's status and whole output, and each program's own diagnostics (the lines tsc starts with
 * `<name>.ts(`, with their continuation lines).
 */
export function compileAll(
  pkg: Packed,
  sources: Record<string, string>,
  options: ProgramOptions = { module: "commonjs" },
): { status: number | null; output: string; outputs: Record<string, string> } {
  const names = Object.keys(sources);
  const dir = join(pkg.dir, `tsc-${names.join("+")}-${options.module}`);
  mkdirSync(dir, { recursive: true });
  for (const name of names) writeFileSync(join(dir, `${name}.ts`), sources[name] ?? "");
  const compilerOptions: Record<string, unknown> = {
    strict: true,
    target: "es2022",
    module: options.module,
    noEmit: true,
    types: [],
  };
  if (options.moduleResolution) compilerOptions.moduleResolution = options.moduleResolution;
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions, files: names.map((name) => `${name}.ts`) }, null, 2),
  );
  const tsc = join(pkg.dir, "node_modules", "typescript", "bin", "tsc");
  const result = spawnSync(nodeBin, [tsc, "-p", dir], { cwd: dir, encoding: "utf8" });
  const output = `${result.stdout}${result.stderr}`;
  const outputs: Record<string, string> = Object.fromEntries(names.map((name) => [name, ""]));
  let current: string | undefined;
  for (const line of output.split("\n")) {
    if (line === "") continue;
    if (/^\s/.test(line)) {
      if (current !== undefined) outputs[current] += `${line}\n`;
      continue;
    }
    current = names.find((name) => line.startsWith(`${name}.ts(`));
    if (current !== undefined) outputs[current] += `${line}\n`;
  }
  return { status: result.status, output, outputs };
}

/** The fenced blocks of language `lang` (```ts, ```sh…) of a Markdown file of the packed package. */
export function markdownBlocks(pkg: Tarball, file: string, lang: string): string[] {
  const text = readFileSync(join(pkg.packageDir, file), "utf8");
  return [...text.matchAll(new RegExp(`\`\`\`${lang}\n([\\s\\S]*?)\`\`\``, "g"))].map((m) => m[1] ?? "");
}

/**
 * The compiler options of Pulumi's `typescript` template (pulumi/templates typescript/tsconfig.json), what
 * `pulumi new typescript` writes: no `esModuleInterop`, no `skipLibCheck`, `moduleResolution` node (node10).
 */
export const TEMPLATE_COMPILER_OPTIONS = {
  strict: true,
  outDir: "bin",
  target: "es2020",
  module: "commonjs",
  moduleResolution: "node",
  sourceMap: true,
  experimentalDecorators: true,
  pretty: true,
  noFallthroughCasesInSwitch: true,
  noImplicitReturns: true,
  forceConsistentCasingInFileNames: true,
} as const;

/**
 * A project as `pulumi new typescript --yes` makes it (Pulumi's template written here, since `pulumi new` needs
 * the network: Pulumi.yaml, package.json with `typescript` ^5, tsconfig.json), then the README's quick start: its
 * install command (the tarball in place of `./pulumi-posthog-<version>.tgz`) and its program as index.ts. With
 * `typescript: 6` the package.json asks for ^6 and tsconfig.json gets the one setting the README says to add
 * (`"ignoreDeprecations": "6.0"`). Installs from the npm cache where it can (`--prefer-offline`); TypeScript 5 and
 * `@types/node` 18 are not in our lock file, so a machine whose cache lacks them fetches them from the registry.
 * Returns the project's directory, under `base`.
 */
export function quickStartProject(pkg: Tarball, typescript: 5 | 6, base: string): string {
  const name = `quick-start-ts${typescript}`;
  const dir = join(base, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "Pulumi.yaml"),
    `name: ${name}\nruntime:\n  name: nodejs\n  options:\n    packagemanager: npm\n` +
      "description: A minimal TypeScript Pulumi program\n",
  );
  writeFileSync(
    join(dir, "package.json"),
    `${JSON.stringify(
      {
        name,
        main: "index.ts",
        devDependencies: { "@types/node": "^18", typescript: `^${typescript}.0.0` },
        dependencies: { "@pulumi/pulumi": "^3.113.0" },
      },
      null,
      4,
    )}\n`,
  );
  const compilerOptions: Record<string, unknown> = { ...TEMPLATE_COMPILER_OPTIONS };
  if (typescript === 6) Object.assign(compilerOptions, readmeTypeScript6Setting(pkg));
  writeFileSync(
    join(dir, "tsconfig.json"),
    `${JSON.stringify({ compilerOptions, files: ["index.ts"] }, null, 4)}\n`,
  );
  writeFileSync(join(dir, "index.ts"), markdownBlocks(pkg, "README.md", "ts")[0] ?? "");
  const [npm = "npm", verb = "install", ...packages] = readmeInstallCommand(pkg);
  const specs = packages.map((a) => (a.startsWith("./pulumi-posthog-") ? pkg.tarball : a));
  sh(npm, [verb, ...NPM_OFFLINE, ...specs], dir);
  return dir;
}

/** The README's install command (`npm install ./pulumi-posthog-… "@pulumi/pulumi@…"`), as its arguments. */
export function readmeInstallCommand(pkg: Tarball): string[] {
  const line = markdownBlocks(pkg, "README.md", "sh")
    .flatMap((b) => b.split("\n"))
    .find((l) => l.startsWith("npm install ./pulumi-posthog-"));
  if (!line) throw new Error("README.md has no `npm install ./pulumi-posthog-…` line in a ```sh block");
  return [...line.replace(/#.*$/, "").matchAll(/"([^"]+)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? "");
}

/** The setting the README's quick start says to add to `compilerOptions` with TypeScript 6. */
export function readmeTypeScript6Setting(pkg: Tarball): Record<string, unknown> {
  const readme = readFileSync(join(pkg.packageDir, "README.md"), "utf8");
  const quickStart = readme.slice(readme.indexOf("## Quick start"), readme.indexOf("### Install"));
  const setting =
    /\*\*TypeScript 6\*\*.*?add `("ignoreDeprecations": "[^"]+")` to the `compilerOptions`/.exec(
      quickStart.replace(/\s+/g, " "),
    );
  if (!setting?.[1]) throw new Error("README.md's quick start no longer names the TypeScript 6 setting");
  return JSON.parse(`{${setting[1]}}`) as Record<string, unknown>;
}
