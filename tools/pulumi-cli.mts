#!/usr/bin/env node
/**
 * `npm run pulumi-cli`: makes sure a supported Pulumi CLI, its Node.js language host and the dynamic-provider
 * plugin are ready in `.pulumi-cli/bin` (git-ignored), the folder every stack test, `npm start` and the
 * benchmarks run `pulumi` from.
 *
 * - A `pulumi` on `PATH` whose version is in {@link SUPPORTED} is used as it is (linked, with the
 *   `pulumi-language-nodejs` beside it).
 * - Otherwise the pinned CLI ({@link PINNED}) is built with Go from its public Go modules, in the two module
 *   folders of tools/pulumi-cli/ (their go.mod and go.sum pin every module): `pulumi` from
 *   `github.com/pulumi/pulumi/pkg/v3/cmd/pulumi`, and the Node.js language host from the `sdk/v3` module (see
 *   tools/pulumi-cli/langhost/go.mod for why that version). Go's module and build caches are Go's own (by
 *   default ~/go/pkg/mod and ~/.cache/go-build), so a second build is quick and a ready folder takes no build.
 * - The plugin `pulumi-resource-pulumi-nodejs` (a shell script running `@pulumi/pulumi`'s dynamic-provider host)
 *   is copied from node_modules/@pulumi/pulumi: the CLI finds plugins next to its own executable.
 * - The YAML language host `pulumi-language-yaml` ({@link YAML_VERSION}, for Pulumi YAML programs of the posthog
 *   provider plugin: test/plugin/yaml.test.ts): linked when one is beside a `pulumi` taken from PATH, else built
 *   with Go from `github.com/pulumi/pulumi-yaml` in tools/pulumi-cli/yaml (its go.mod and go.sum pin every
 *   module). Without Go and without one beside the CLI, a line says so and the rest stays usable.
 * - The Go language host `pulumi-language-go` (for the Pulumi Go program of test/plugin/go.test.ts): linked when
 *   one is beside a `pulumi` taken from PATH, else built with Go from `sdk/v3` {@link GO_HOST_VERSION} in
 *   tools/pulumi-cli/golang (see its go.mod for why that version); likewise optional.
 *
 * Prints each step and its duration; exit 1 with one message when neither Go nor a supported CLI is there, or
 * naming the step that failed and the tail of its log. `--out DIR` readies DIR instead of `.pulumi-cli`. Run directly by Node 24 (type stripping; hence `.mts`), so that a second
 * run takes no TypeScript build: keep this file free of imports of the project's own modules.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";

/** The version built when no supported `pulumi` is on PATH; tools/pulumi-cli/cli/go.mod requires it. */
export const PINNED = "3.274.1";
/**
 * The CLI versions this project supports: from 3.139 the engine hands the `pulumi-nodejs` provider the whole
 * stack config (the provider's settings, pulumi/pulumi#17229); below 4 (the next major may change the protocol).
 */
export const SUPPORTED = { min: "3.139.0", belowMajor: 4 };

const root = resolve(import.meta.dirname, "..");
const { values: flags } = parseArgs({ options: { out: { type: "string" } } });
/** The folder made ready: `.pulumi-cli` of the repository, or `--out DIR` (the tests use an empty one). */
const outDir = resolve(flags.out ?? join(root, ".pulumi-cli"));
const binDir = join(outDir, "bin");
const stampPath = join(outDir, "stamp.json");
const modules = join(root, "tools", "pulumi-cli");
const PLUGIN = "pulumi-resource-pulumi-nodejs";
/** The YAML language host's version; tools/pulumi-cli/yaml/go.mod requires it. */
export const YAML_VERSION = "1.25.0";
const YAML_HOST = "pulumi-language-yaml";
/** The `sdk/v3` release the Go language host is built from; tools/pulumi-cli/golang/go.mod requires it. */
export const GO_HOST_VERSION = "3.62.0";
const GO_HOST = "pulumi-language-go";

interface Stamp {
  version: string;
  source: "built" | "path";
  /** For `path`: the directory of the `pulumi` used; for `built`: the Go version that built it. */
  from: string;
  /** `pulumi-language-yaml`: the version built ({@link YAML_VERSION}) or `linked <path>`; absent when missing. */
  yaml?: string;
  /** `pulumi-language-go`: the sdk/v3 version built ({@link GO_HOST_VERSION}) or `linked <path>`; absent when missing. */
  go?: string;
}

const say = (line: string) => process.stdout.write(`pulumi-cli: ${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** `[major, minor, patch]` of a version string such as `v3.274.1` or `3.139.0-alpha.1`, or undefined. */
function parseVersion(text: string): [number, number, number] | undefined {
  const m = /v?(\d+)\.(\d+)\.(\d+)/.exec(text);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

function compare(a: [number, number, number], b: [number, number, number]): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** Whether `version` is in {@link SUPPORTED}. */
export function isSupported(version: string): boolean {
  const v = parseVersion(version);
  const min = parseVersion(SUPPORTED.min);
  return v !== undefined && min !== undefined && compare(v, min) >= 0 && v[0] < SUPPORTED.belowMajor;
}

/** `pulumi version` of an executable, trimmed, or undefined when it does not run. */
function versionOf(pulumi: string): string | undefined {
  const r = spawnSync(pulumi, ["version"], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, PULUMI_SKIP_UPDATE_CHECK: "true" },
  });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** The first `name` on PATH that is not in our own bin folder. */
function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "" || resolve(dir) === binDir) continue;
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Copies the dynamic-provider plugin script from the installed `@pulumi/pulumi`, executable. */
function installPlugin(): void {
  const source = join(root, "node_modules", "@pulumi", "pulumi", PLUGIN);
  if (!existsSync(source)) {
    fail(`${source} is missing: run \`npm ci\` first (it installs @pulumi/pulumi, which ships the plugin)`);
  }
  copyFileSync(source, join(binDir, PLUGIN));
  chmodSync(join(binDir, PLUGIN), 0o755);
}

function fail(message: string): never {
  process.stderr.write(`pulumi-cli: ${message}\n`);
  process.exit(1);
}

function readStamp(): Stamp | undefined {
  try {
    return JSON.parse(readFileSync(stampPath, "utf8")) as Stamp;
  } catch {
    return undefined;
  }
}

/** The folder is ready when its `pulumi` runs and reports the stamped version, with the other two beside it. */
function ready(stamp: Stamp | undefined): boolean {
  if (!stamp) return false;
  if (stamp.source === "built" && stamp.version !== PINNED) return false;
  for (const name of ["pulumi", "pulumi-language-nodejs", PLUGIN])
    if (!existsSync(join(binDir, name))) return false;
  const version = versionOf(join(binDir, "pulumi"));
  return version !== undefined && parseVersion(version)?.join(".") === stamp.version;
}

/** Runs one build step, printing its name and duration; on failure prints the tail of its log and exits 1. */
function step(title: string, command: string, args: string[], cwd: string): void {
  say(`${title} …`);
  const started = Date.now();
  const r = spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: {
      ...process.env,
      CGO_ENABLED: "0",
      GOFLAGS: "-mod=readonly",
      // The go.mod files name the Go they need; never download another toolchain behind the user's back.
      GOTOOLCHAIN: "local",
    },
  });
  const log = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  if (r.status !== 0) {
    const tail = log.trimEnd().split("\n").slice(-30).join("\n");
    fail(
      `step "${title}" failed (${r.error?.message ?? `exit ${r.status}`}) after ${seconds(Date.now() - started)}; ` +
        `\`${command} ${args.join(" ")}\` in ${cwd}; last lines:\n${tail}`,
    );
  }
  say(`${title}: done in ${seconds(Date.now() - started)}`);
}

function build(): Stamp {
  const go = spawnSync("go", ["version"], { encoding: "utf8" });
  if (go.status !== 0) {
    const onPathPulumi = onPath("pulumi");
    fail(
      `neither a supported Pulumi CLI (>= ${SUPPORTED.min}, < ${SUPPORTED.belowMajor}) on PATH${
        onPathPulumi ? ` (${onPathPulumi} is ${versionOf(onPathPulumi) ?? "not runnable"})` : ""
      } nor Go to build v${PINNED}: install the Pulumi CLI (https://www.pulumi.com/docs/iac/download-install/) ` +
        "or Go 1.26.6 or later (https://go.dev/dl/), then run `npm run pulumi-cli` again",
    );
  }
  say(
    `building pulumi v${PINNED} and its Node.js language host with ${go.stdout.trim()} (Go's caches stay warm)`,
  );
  const started = Date.now();
  const cli = join(modules, "cli");
  const langhost = join(modules, "langhost");
  rmSync(binDir, { recursive: true, force: true });
  mkdirSync(binDir, { recursive: true });
  step("download the CLI's modules (go mod download)", "go", ["mod", "download"], cli);
  step(
    "build pulumi",
    "go",
    [
      "build",
      "-trimpath",
      "-ldflags",
      `-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v${PINNED}`,
      "-o",
      join(binDir, "pulumi"),
      "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi",
    ],
    cli,
  );
  step("download the language host's modules (go mod download)", "go", ["mod", "download"], langhost);
  step(
    "build pulumi-language-nodejs",
    "go",
    [
      "build",
      "-trimpath",
      "-ldflags",
      "-s -w",
      "-o",
      join(binDir, "pulumi-language-nodejs"),
      "github.com/pulumi/pulumi/sdk/v3/nodejs/cmd/pulumi-language-nodejs",
    ],
    langhost,
  );
  say(`built in ${seconds(Date.now() - started)}`);
  return { version: PINNED, source: "built", from: go.stdout.trim() };
}

/** A language host the tests need beside the CLI, built with Go from a module folder of tools/pulumi-cli. */
interface LanguageHost {
  /** Its executable's name, e.g. `pulumi-language-yaml`. */
  name: string;
  /** What the programs it runs are called in messages ("Pulumi YAML programs"). */
  programs: string;
  /** The stamp's field recording it, and the version it records. */
  stampKey: "yaml" | "go";
  version: string;
  /** Its module folder under tools/pulumi-cli, the package built, and the linker flags. */
  moduleDir: string;
  pkg: string;
  ldflags: string;
  /** How the build step is named ("v1.25.0", "sdk/v3 v3.62.0"). */
  label: string;
}

const LANGUAGE_HOSTS: readonly LanguageHost[] = [
  {
    name: YAML_HOST,
    programs: "Pulumi YAML programs",
    stampKey: "yaml",
    version: YAML_VERSION,
    moduleDir: "yaml",
    pkg: "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml",
    ldflags: `-s -w -X github.com/pulumi/pulumi-yaml/pkg/version.Version=v${YAML_VERSION}`,
    label: `v${YAML_VERSION}`,
  },
  {
    name: GO_HOST,
    programs: "Pulumi Go programs",
    stampKey: "go",
    version: GO_HOST_VERSION,
    moduleDir: "golang",
    pkg: "github.com/pulumi/pulumi/sdk/v3/go/pulumi-language-go",
    ldflags: "-s -w",
    label: `sdk/v3 v${GO_HOST_VERSION}`,
  },
];

/**
 * Readies the language host `host` in the bin folder for `stamp`'s CLI: kept when the stamp says it is there at
 * its version (or linked); linked from beside a `pulumi` taken from PATH; else built with Go from its module
 * folder. Returns what the stamp records, undefined (and a line saying why) when there is neither one beside the
 * CLI nor Go. @throws (through `step`) naming the step that failed and the tail of its log.
 */
function readyLanguageHost(host: LanguageHost, stamp: Stamp): string | undefined {
  const target = join(binDir, host.name);
  const recorded = stamp[host.stampKey];
  if (existsSync(target) && (recorded === host.version || recorded?.startsWith("linked "))) return recorded;
  rmSync(target, { force: true });
  if (stamp.source === "path") {
    const beside = join(stamp.from, host.name);
    if (existsSync(beside)) {
      symlinkSync(beside, target);
      say(`using ${beside}`);
      return `linked ${beside}`;
    }
  }
  if (spawnSync("go", ["version"], { encoding: "utf8" }).status !== 0) {
    say(
      `no ${host.name} beside the CLI and no Go to build it: ${host.programs} will not run ` +
        "(install Go 1.26.6 or later and run `npm run pulumi-cli` again)",
    );
    return undefined;
  }
  const started = Date.now();
  const dir = join(modules, host.moduleDir);
  step(`download the modules of ${host.name} (go mod download)`, "go", ["mod", "download"], dir);
  step(
    `build ${host.name} (${host.label})`,
    "go",
    ["build", "-trimpath", "-ldflags", host.ldflags, "-o", target, host.pkg],
    dir,
  );
  say(`built ${host.name} in ${seconds(Date.now() - started)}`);
  return host.version;
}

/** Readies every language host of {@link LANGUAGE_HOSTS}; returns the stamp's fields for them. */
function readyLanguageHosts(stamp: Stamp): Pick<Stamp, "yaml" | "go"> {
  const fields: Pick<Stamp, "yaml" | "go"> = {};
  for (const host of LANGUAGE_HOSTS) {
    const v = readyLanguageHost(host, stamp);
    if (v) fields[host.stampKey] = v;
  }
  return fields;
}

function main(): void {
  const started = Date.now();
  const stamp = readStamp();
  if (ready(stamp) && stamp) {
    installPlugin();
    const hosts = readyLanguageHosts(stamp);
    if (hosts.yaml !== stamp.yaml || hosts.go !== stamp.go) {
      const { yaml: _old, go: _oldGo, ...rest } = stamp;
      writeFileSync(stampPath, `${JSON.stringify({ ...rest, ...hosts }, null, 2)}\n`);
    }
    say(
      `ready: pulumi v${stamp.version} (${stamp.source === "built" ? `built with ${stamp.from}` : `from ${stamp.from}`}) in ${binDir} (${seconds(Date.now() - started)})`,
    );
    return;
  }
  let next: Stamp | undefined;
  const existing = onPath("pulumi");
  if (existing) {
    const version = versionOf(existing);
    const dir = dirname(realpathSync(existing));
    if (version && isSupported(version) && existsSync(join(dir, "pulumi-language-nodejs"))) {
      rmSync(binDir, { recursive: true, force: true });
      mkdirSync(binDir, { recursive: true });
      symlinkSync(join(dir, "pulumi"), join(binDir, "pulumi"));
      symlinkSync(join(dir, "pulumi-language-nodejs"), join(binDir, "pulumi-language-nodejs"));
      next = { version: parseVersion(version)?.join(".") ?? version, source: "path", from: dir };
      say(`using ${existing} (${version})`);
    } else if (version && !isSupported(version)) {
      say(
        `${existing} is ${version}, outside the supported range (>= ${SUPPORTED.min}, < ${SUPPORTED.belowMajor}.0.0): not used`,
      );
    } else if (version) {
      say(`${existing} (${version}) has no pulumi-language-nodejs beside it: not used`);
    }
  }
  next ??= build();
  installPlugin();
  Object.assign(next, readyLanguageHosts(next));
  writeFileSync(stampPath, `${JSON.stringify(next, null, 2)}\n`);
  say(`ready: pulumi v${next.version} in ${binDir} (${seconds(Date.now() - started)})`);
}

main();
