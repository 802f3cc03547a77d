#!/usr/bin/env node
/**
 * `npm run reproducible`: packs this checkout's HEAD commit twice and checks that both packs are the same bytes,
 * for the npm tarball (`npm pack`, whose `prepare` builds dist/) and this machine's plugin tarball
 * (tools/plugin-tarball.mts, on the dist/ that pack built). Each pack runs in a clone of its own (`git clone` of
 * this checkout, HEAD checked out: what is not committed is not packed), sharing this checkout's node_modules (run
 * `npm ci` first); the second clone is made later with umask 002, so that its files' times and modes differ from the
 * first's. Prints each artifact's two sha256 and whether they match; exit 1 on a difference (both folders are then
 * kept, and their paths printed, to compare) or when a step fails (its command and output).
 *
 * Takes about a minute (two `npm pack`, two plugin tarballs of ~55 MB): the release workflow runs it, `npm test`
 * does not (test/plugin/reproducible.test.ts checks the plugin tarball's writer on a small tree).
 *
 * Run directly by Node 24 (type stripping); imports none of the project's modules.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");

/** Runs `command` in `cwd`; returns stdout. @throws Error with the command and its output unless it exits 0. */
function run(command: string, args: string[], cwd: string): string {
  const r = spawnSync(command, args, { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0)
    throw new Error(
      `\`${command} ${args.join(" ")}\` in ${cwd} failed (${r.status ?? r.error?.message}):\n${r.stdout}${r.stderr}`,
    );
  return r.stdout;
}

/** The sha256 of `file`, in hex. */
const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

/**
 * Packs commit `sha` in a fresh clone under `dir`: the npm tarball and this machine's plugin tarball, into
 * `dir/out`. Returns each artifact's file name and sha256.
 * @throws Error naming the command that failed.
 */
function packOnce(dir: string, sha: string): Map<string, string> {
  const src = join(dir, "src");
  const out = join(dir, "out");
  run("git", ["clone", "--quiet", "--no-checkout", root, src], dir);
  run("git", ["-c", "advice.detachedHead=false", "checkout", "--quiet", sha], src);
  symlinkSync(join(root, "node_modules"), join(src, "node_modules"), "dir");
  mkdirSync(out);
  run("npm", ["pack", "--silent", "--pack-destination", out], src);
  run(process.execPath, [join(src, "tools", "plugin-tarball.mts"), "--out", out], src);
  return new Map(readdirSync(out).map((name) => [name, sha256(join(out, name))]));
}

if (import.meta.filename === resolve(process.argv[1] ?? "")) {
  const dirs: string[] = [];
  let keep = false;
  try {
    const sha = run("git", ["rev-parse", "HEAD"], root).trim();
    if (run("git", ["status", "--porcelain", "--untracked-files=no"], root).trim() !== "")
      process.stderr.write(`reproducible: packs commit ${sha}; what is not committed is not in it\n`);
    const packs: Map<string, string>[] = [];
    for (const umask of [0o022, 0o002]) {
      process.umask(umask);
      const dir = mkdtempSync(join(tmpdir(), "pulumi-posthog-reproducible-"));
      dirs.push(dir);
      packs.push(packOnce(dir, sha));
    }
    const [first, second] = packs as [Map<string, string>, Map<string, string>];
    let differ = 0;
    for (const name of new Set([...first.keys(), ...second.keys()])) {
      const [a, b] = [first.get(name) ?? "missing", second.get(name) ?? "missing"];
      if (a !== b) differ += 1;
      process.stdout.write(`${name}\n  ${a}\n  ${b}\n  ${a === b ? "same bytes" : "DIFFERENT"}\n`);
    }
    if (differ > 0) {
      process.stderr.write(
        `reproducible: ${differ} artifact(s) of commit ${sha} differ between two packs; compare ${dirs.map((d) => join(d, "out")).join(" and ")}\n`,
      );
      process.exitCode = 1;
      keep = true;
    } else {
      process.stdout.write(`commit ${sha}: ${first.size} artifacts, each packed twice to the same bytes\n`);
    }
  } catch (e) {
    process.stderr.write(`reproducible: ${(e as Error).message}\n`);
    process.exitCode = 1;
  } finally {
    if (!keep) for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
