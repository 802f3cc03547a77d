/**
 * Issue 34, item 6: `pulumi-posthog export` never hangs on an output path it cannot write. Node's recursive mkdir
 * never returns under /proc (mkdir there fails with ENOENT, which it answers by making the parent, again and
 * again): `--import-file /proc/nope/x.json` read the whole organization, then spun at 100% CPU for ever. The
 * built CLI (dist/provider/cli.js, as `npx pulumi-posthog` runs it) now checks every output path before
 * its first request and exits 2 with one line naming the flag, the path and what to fix.
 *
 * The CLI runs as a child process (killed after 20 s) against the emulator over real HTTP; the emulator's
 * request log shows that a refused path costs no request.
 */
import { execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../support/emulator";

const CLI = join(__dirname, "..", "..", "dist", "provider", "cli.js");
const KILL_AFTER = 20_000;
const work = mkdtempSync(join(tmpdir(), "export-output-paths-"));
let emu: TestEmulator;

beforeAll(async () => {
  expect(existsSync(CLI), "npm run build first").toBe(true);
  emu = await startTestEmulator();
});
afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});
beforeEach(async () => {
  await emu.control("DELETE", "/requests");
});

/**
 * The built CLI with `args`, in `work`, against the emulator; killed after 20 s (`killed` then). `as`: the user
 * (uid and gid) it runs as, this process's by default.
 */
function run(
  args: string[],
  as: { uid?: number; gid?: number } = {},
): Promise<{ code: number | null; killed: boolean; stderr: string; ms: number }> {
  return new Promise((done, fail) => {
    const started = Date.now();
    const child = spawn(process.execPath, [CLI, ...args], {
      ...as,
      cwd: work,
      env: {
        PATH: process.env.PATH ?? "",
        POSTHOG_HOST: emu.url,
        POSTHOG_API_KEY: emu.apiKey,
        POSTHOG_ORGANIZATION_ID: emu.organizationId,
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER);
    child.on("error", fail);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      done({ code, killed: signal !== null, stderr, ms: Date.now() - started });
    });
  });
}

/** The one line of the CLI errors of docs/troubleshooting/ that contains `text` (the doc's example paths in it). */
function quoted(text: string): string {
  const dir = join(__dirname, "..", "..", "docs", "troubleshooting");
  const pages = readdirSync(dir).filter((f) => f.endsWith(".md"));
  expect(pages.length, "the pages of docs/troubleshooting/").toBeGreaterThan(1);
  const lines = pages
    .flatMap((f) => readFileSync(join(dir, f), "utf8").split("\n"))
    .filter((l) => l.startsWith("pulumi-posthog: ") && l.includes(text));
  expect(lines, `docs/troubleshooting/ quotes one line with "${text}"`).toHaveLength(1);
  return lines[0] ?? "";
}

/** The uid and gid of the user `nobody` (for running the CLI as a user other than root). */
function nobody(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync("id", [flag, "nobody"], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

describe("pulumi-posthog export: an output path that cannot be written is refused before any request", () => {
  it.each([
    ["--import-file", "/proc/nope/x.json", ["export", "--no-program", "--import-file", "/proc/nope/x.json"]],
    [
      "--import-file",
      "/proc/nope/x.json",
      ["export", "--out", "program", "--import-file", "/proc/nope/x.json"],
    ],
    ["--out", "/proc/nope/dir", ["export", "--out", "/proc/nope/dir"]],
    ["--out", "/proc/nope/t.json", ["export", "dashboard", "1", "--out", "/proc/nope/t.json"]],
    ["--out", "/sys/nope/dir", ["export", "--out", "/sys/nope/dir"]],
  ])(
    "%s %s: exit 2 at once, one line naming the flag, the path and the fix; no request, nothing written",
    async (flag, path, args) => {
      const r = await run(args);
      expect(r.killed, `still running after ${KILL_AFTER} ms: ${r.stderr}`).toBe(false);
      expect(r.code, r.stderr).toBe(2);
      expect(r.ms).toBeLessThan(10_000);
      const lines = r.stderr.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`${flag} ${path} cannot be written:`);
      expect(lines[0]).toMatch(/pseudo file system, which holds no files: give a path on a disk/);
      expect(await emu.requests()).toEqual([]);
      expect(readdirSync(work)).toEqual([]); // not even the program's directory of the second case
    },
    KILL_AFTER + 5_000,
  );

  it("a file where a directory is needed, or a directory where a file is: exit 2, no request", async () => {
    writeFileSync(join(work, "a-file"), "");
    mkdirSync(join(work, "a-dir"));
    try {
      for (const [args, says] of [
        [["export", "--out", "a-file"], "--out a-file cannot be written: "],
        [["export", "--out", "a-file/sub"], "--out a-file/sub cannot be written: "],
        [["export", "--no-program", "--import-file", "a-dir"], "--import-file a-dir cannot be written: "],
        [
          ["export", "--no-program", "--import-file", "a-file/x.json"],
          "--import-file a-file/x.json cannot be",
        ],
      ] as const) {
        const r = await run([...args]);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
        expect(r.stderr).toContain(says);
        expect(r.stderr).toMatch(/is a (file, not a directory|directory, not a file): give a/);
      }
      expect(await emu.requests()).toEqual([]);
    } finally {
      rmSync(join(work, "a-file"));
      rmSync(join(work, "a-dir"), { recursive: true });
    }
  }, 60_000);

  it("a directory this user cannot write to: exit 2 with the line docs/troubleshooting/ quotes, no request", async () => {
    // Root may write to any directory, whatever its mode: as root (CI here), the CLI runs as `nobody` instead,
    // in a working directory it may enter, beside a directory of root's it may not write to.
    const asUser = process.getuid?.() === 0 ? nobody() : {};
    chmodSync(work, 0o755);
    const locked = join(work, "locked");
    mkdirSync(locked, { mode: 0o555 }); // anyone may enter it, no one (but root) may write to it
    try {
      const r = await run(["export", "--no-program", "--import-file", "locked/deeper/x.json"], asUser);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trimEnd()).toBe(
        quoted("is not writable by this user (EACCES)")
          .replace("--import-file /srv/x.json", "--import-file locked/deeper/x.json")
          .replace(": /srv is not", `: ${locked} is not`) +
          " (see docs/troubleshooting/commands.md#the-export-command)", // the pointer the quotes leave out
      );
      expect(await emu.requests()).toEqual([]);
    } finally {
      chmodSync(locked, 0o700);
      rmSync(locked, { recursive: true });
    }
  }, 30_000);

  it("paths that can be written, missing levels included, are made and written (exit 0), and no probe is left behind", async () => {
    const r = await run([
      "export",
      "--out",
      "deep/er/program",
      "--only",
      "projects",
      "--import-file",
      "lists/of/imports.json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(work, "deep", "er", "program", "index.ts"))).toBe(true);
    expect(existsSync(join(work, "deep", "er", "program", "dashboards"))).toBe(true);
    expect(existsSync(join(work, "lists", "of", "imports.json"))).toBe(true);
    expect(readdirSync(work).sort()).toEqual(["deep", "lists"]);
    expect((await emu.requests()).length).toBeGreaterThan(0);
    rmSync(join(work, "deep"), { recursive: true });
    rmSync(join(work, "lists"), { recursive: true });
  }, 60_000);
});
