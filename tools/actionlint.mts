#!/usr/bin/env node
/**
 * `npm run actionlint`: checks the GitHub Actions workflows with actionlint (github.com/rhysd/actionlint, the
 * version tools/pulumi-cli/actionlint/go.mod requires): `.github/workflows/*.yml` (the release workflow) and
 * `examples/ci/workflows/*.yml` (the workflows docs/ci.md gives users). Other arguments go to actionlint as they
 * are (`npm run actionlint -- -format '{{json .}}' FILE…`: files given replace the default ones).
 *
 * actionlint is built with Go from its public Go module, as the Pulumi CLI is (tools/pulumi-cli.mts):
 * `GOTOOLCHAIN=local`, `-mod=readonly`, Go's own caches, into .pulumi-cli/tools/actionlint, rebuilt only when
 * its go.mod or go.sum change (a stamp beside it). A cold build (empty GOCACHE, modules downloaded) takes 20–23 s
 * on 2 idle cores, 108 s measured while other builds loaded them; with the stamp current, none. actionlint runs `shellcheck` on each `run:` script when one is on
 * PATH (`-shellcheck=` turns that off).
 *
 * `--print-path` builds when needed and prints the executable's path instead of running it. Exit status:
 * actionlint's (0: no problem, 1: problems, each printed as `file:line:col: message [rule]`); 2 with one message
 * when Go is missing or the build fails. Run directly by Node 24 (type stripping); imports none of the project's
 * modules.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
/** The Go module whose `tool` directive names actionlint's command. */
export const MODULE_DIR = join(root, "tools", "pulumi-cli", "actionlint");
/** The package built: actionlint's command. */
const PKG = "github.com/rhysd/actionlint/cmd/actionlint";
const toolDir = join(root, ".pulumi-cli", "tools");
/** Where the executable is built. */
export const ACTIONLINT = join(toolDir, "actionlint");
const stampPath = `${ACTIONLINT}.stamp`;
/** The folders whose `*.yml` and `*.yaml` files are checked when no file is named. */
export const WORKFLOW_DIRS = [join(".github", "workflows"), join("examples", "ci", "workflows")];

const say = (line: string) => process.stderr.write(`actionlint: ${line}\n`);

function fail(message: string): never {
  say(message);
  process.exit(2);
}

/** A hash of the module's go.mod and go.sum: the build is redone when it differs from the stamp's. */
function sourceHash(): string {
  const hash = createHash("sha256");
  for (const name of ["go.mod", "go.sum"]) hash.update(readFileSync(join(MODULE_DIR, name)));
  return hash.digest("hex");
}

/**
 * Builds actionlint unless the stamp says this build of its go.mod and go.sum is there; returns the executable.
 * Exits 2 naming what to install when Go is missing, or the step and the tail of Go's output when it fails.
 */
export function ensureActionlint(): string {
  const hash = sourceHash();
  if (existsSync(ACTIONLINT) && existsSync(stampPath) && readFileSync(stampPath, "utf8").trim() === hash)
    return ACTIONLINT;
  if (spawnSync("go", ["version"], { encoding: "utf8" }).status !== 0) {
    fail("Go is needed to build actionlint: install Go 1.26.6 or later (https://go.dev/dl/) and run again");
  }
  mkdirSync(toolDir, { recursive: true });
  const started = Date.now();
  say(
    "building actionlint from tools/pulumi-cli/actionlint (a cold build takes 20 s to 2 minutes; Go's caches keep it warm) …",
  );
  const env = { ...process.env, CGO_ENABLED: "0", GOFLAGS: "-mod=readonly", GOTOOLCHAIN: "local" };
  for (const args of [
    ["mod", "download"],
    ["build", "-trimpath", "-ldflags", "-s -w", "-o", ACTIONLINT, PKG],
  ]) {
    const r = spawnSync("go", args, { cwd: MODULE_DIR, encoding: "utf8", env, maxBuffer: 16 * 1024 * 1024 });
    if (r.status !== 0) {
      const tail = `${r.stdout ?? ""}${r.stderr ?? ""}`.trimEnd().split("\n").slice(-30).join("\n");
      fail(
        `\`go ${args.join(" ")}\` failed (${r.error?.message ?? `exit ${r.status}`}) in ${MODULE_DIR}:\n${tail}`,
      );
    }
  }
  writeFileSync(stampPath, `${hash}\n`);
  say(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return ACTIONLINT;
}

/** The workflow files of {@link WORKFLOW_DIRS}, relative to the checkout, sorted. */
export function workflowFiles(): string[] {
  return WORKFLOW_DIRS.flatMap((dir) =>
    existsSync(join(root, dir))
      ? readdirSync(join(root, dir))
          .filter((f) => /\.ya?ml$/.test(f))
          .sort()
          .map((f) => join(dir, f))
      : [],
  );
}

if (import.meta.filename === resolve(process.argv[1] ?? "")) {
  const args = process.argv.slice(2).filter((a) => a !== "--print-path");
  const exe = ensureActionlint();
  if (process.argv.includes("--print-path")) {
    process.stdout.write(`${exe}\n`);
  } else {
    // A file argument is one that is not a flag nor a flag's value (actionlint's flags take `-flag=value` or
    // `-flag value`): with none, the default workflows.
    const valued = new Set([
      "-format",
      "-config-file",
      "-ignore",
      "-shellcheck",
      "-pyflakes",
      "-stdin-filename",
    ]);
    const files = args.filter((a, i) => !a.startsWith("-") && !valued.has(args[i - 1] ?? ""));
    const r = spawnSync(exe, files.length > 0 ? args : [...args, ...workflowFiles()], {
      cwd: root,
      stdio: "inherit",
    });
    process.exitCode = r.status ?? 2;
  }
}
