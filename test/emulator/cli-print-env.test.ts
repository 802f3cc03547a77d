/**
 * `posthog-emulator --print-env` (issue 28): the emulator's ready output as the user's own variables. Run with
 * bash as a user runs it, `eval "$(posthog-emulator --print-env …)"` (the compiled dist/emulator/cli.js): the
 * command returns once the emulator is ready, prints exactly the `export` lines of POSTHOG_HOST, POSTHOG_API_KEY,
 * POSTHOG_ORGANIZATION_ID, POSTHOG_PROJECT_ID and POSTHOG_EMULATOR_PID, the shell then reaches the emulator with
 * them, and `kill "$POSTHOG_EMULATOR_PID"` stops it. Errors before the emulator is ready are the emulator's own
 * one line and status, and leave no process behind. The docs' own block runs in test/docs/code-blocks.test.ts.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envLines } from "../../emulator/cli";

const root = join(__dirname, "..", "..");
const cli = join(root, "dist", "emulator", "cli.js");
/** The seed key of this file's emulators: tells their processes apart from other test files'. */
const marker = `phx_printenv${randomBytes(12).toString("hex")}`;
/** The environment of a user's shell: no POSTHOG_* of its own, the Node 24 of node_modules/.bin first. */
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("POSTHOG_"))),
  PATH: `${join(root, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
};
const dir = mkdtempSync(join(tmpdir(), "print-env-"));

/** `bash -c script` to completion (the emulator it starts in the background does not hold its output open). */
const bash = (script: string) => {
  const r = spawnSync("bash", ["--noprofile", "--norc", "-c", script], {
    env,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

/** Pids of the emulators this file started that still run (zombies excluded). */
const ours = (): number[] =>
  spawnSync("ps", ["-eo", "pid=,stat=,args="], { encoding: "utf8" })
    .stdout.split("\n")
    .filter((line) => line.includes(cli) && line.includes(marker) && !/^\s*\d+\s+Z/.test(line))
    .map((line) => Number.parseInt(line, 10));

/** Whether something accepts TCP connections at `url`. */
const listening = async (url: string): Promise<boolean> => {
  try {
    const res = await request(url, { headersTimeout: 2_000 });
    await res.body.dump();
    return true;
  } catch {
    return false;
  }
};

const waitUntil = async (what: () => boolean | Promise<boolean>, ms = 10_000) => {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (await what()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
};

beforeAll(() => {
  expect(existsSync(cli), "dist/emulator/cli.js is missing: run `npm run build` first").toBe(true);
});
afterAll(() => {
  for (const pid of ours()) process.kill(pid, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe('eval "$(posthog-emulator --print-env …)"', () => {
  it("returns once ready with the five export lines; the shell reaches the emulator with them; kill stops it", async () => {
    const printed = bash(`node ${cli} --print-env --port 0 --rate-limit off --api-key ${marker}`);
    expect(printed.stderr).toBe("");
    expect(printed.status).toBe(0);
    const lines = printed.stdout.trimEnd().split("\n");
    expect(lines.map((l) => l.slice(0, l.indexOf("=")))).toEqual([
      "export POSTHOG_HOST",
      "export POSTHOG_API_KEY",
      "export POSTHOG_ORGANIZATION_ID",
      "export POSTHOG_PROJECT_ID",
      "export POSTHOG_EMULATOR_PID",
    ]);
    // What `eval` makes of them, in a new shell.
    const vars = bash(`eval "$(cat <<'EOF'\n${printed.stdout}EOF\n)"; env | grep '^POSTHOG_' | sort`);
    const set = Object.fromEntries(
      vars.stdout
        .trim()
        .split("\n")
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    expect(set).toEqual({
      POSTHOG_API_KEY: marker,
      POSTHOG_EMULATOR_PID: expect.stringMatching(/^\d+$/),
      POSTHOG_HOST: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      POSTHOG_ORGANIZATION_ID: "4d1b8f2e-6c3a-4e5f-9a7b-2c8d0e1f3a5b",
      POSTHOG_PROJECT_ID: "1001",
    });
    const pid = Number(set.POSTHOG_EMULATOR_PID);
    // The printed pid is the emulator's own process, in a session of its own (it outlives the shell).
    expect(ours()).toEqual([pid]);
    const session = spawnSync("ps", ["-p", String(pid), "-o", "sid="], { encoding: "utf8" }).stdout.trim();
    expect(Number(session)).toBe(pid);

    // The same shell line as the docs: eval, then a request made with the variables alone, then kill.
    const used = bash(
      `eval "$(node ${cli} --print-env --rate-limit off --api-key ${marker})"
node -e 'fetch(process.env.POSTHOG_HOST + "/api/organizations/" + process.env.POSTHOG_ORGANIZATION_ID + "/members/", { headers: { authorization: "Bearer " + process.env.POSTHOG_API_KEY } }).then(async (r) => console.log(r.status, (await r.json()).count))'
echo "$POSTHOG_HOST" >&2
kill "$POSTHOG_EMULATOR_PID"`,
    );
    expect(used.status, used.stderr).toBe(0);
    expect(used.stdout.trim()).toBe("200 4");
    const host = used.stderr.trim();
    expect(await waitUntil(async () => !(await listening(host)))).toBe(true);

    // The first emulator still serves until its own kill.
    expect(await listening(set.POSTHOG_HOST ?? "")).toBe(true);
    expect(bash(`kill ${pid}`).status).toBe(0);
    expect(await waitUntil(() => ours().length === 0)).toBe(true);
    expect(await listening(set.POSTHOG_HOST ?? "")).toBe(false);
  }, 60_000);

  it.each([
    [["--port", "abc"], 2, 'posthog-emulator: --port needs an integer from 0 to 65535, got "abc"'],
    [
      ["--state-file", join(dir, "missing", "world.json")],
      1,
      `posthog-emulator: --state-file ${join(dir, "missing", "world.json")}: ENOENT`,
    ],
  ] as const)(
    "%j: the emulator's one-line error and status, nothing printed for eval, no process left",
    async (args, status, message) => {
      const r = bash(`node ${cli} --print-env ${args.join(" ")} --api-key ${marker}`);
      expect(r.status).toBe(status);
      expect(r.stdout).toBe("");
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain(message);
      expect(await waitUntil(() => ours().length === 0)).toBe(true);
    },
  );

  it("quotes each value as one shell word", () => {
    const tricky = `phx_it's $HOME "x" \`id\``;
    const lines = envLines({ url: "http://h:1", apiKey: tricky, organizationId: "o", projectId: 7, pid: 9 });
    const r = bash(`eval "$(cat <<'EOF'\n${lines}EOF\n)"; printf '%s' "$POSTHOG_API_KEY"`);
    expect(r.stdout).toBe(tricky);
  });
});
