/**
 * The CI recipe examples/ci/posthog-emulator.sh, run with bash as a user's CI runs it: it starts the emulator,
 * hands the command POSTHOG_* from the ready line, and leaves no emulator process behind, whether the command
 * passes, fails or the script is interrupted. The emulator is the compiled dist/emulator/cli.js behind a
 * one-line `exec` wrapper standing in for node_modules/.bin/posthog-emulator (same process, same pid).
 */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(__dirname, "..", "..");
const recipe = join(root, "examples", "ci", "posthog-emulator.sh");
const cli = join(root, "dist", "emulator", "cli.js");
let dir: string;
let env: NodeJS.ProcessEnv;
/**
 * The seed key of this file's emulators: it shows in their command lines, so the processes this file started
 * are told apart from those of other test files running at the same time.
 */
const marker = `phx_recipe${randomBytes(12).toString("hex")}`;
const flags = ["--port", "0", "--rate-limit", "off", "--api-key", marker];

/** Whether process `pid` runs (a zombie, exited but not yet reaped by its parent, does not). */
const alive = (pid: number): boolean => {
  const state = spawnSync("ps", ["-p", String(pid), "-o", "stat="], { encoding: "utf8" }).stdout.trim();
  return state !== "" && !state.startsWith("Z");
};

/** A statement writing `expression`'s value to `file` through `file`.tmp and a rename: readers see all or nothing. */
const atomicWrite = (file: string, expression: string): string =>
  `require("fs").writeFileSync(${JSON.stringify(`${file}.tmp`)}, ${expression}); require("fs").renameSync(${JSON.stringify(`${file}.tmp`)}, ${JSON.stringify(file)});`;

/** Pids of the emulator processes this file started (running this checkout's emulator with its key). */
const emulatorPids = (): number[] =>
  spawnSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" })
    .stdout.split("\n")
    .filter((line) => line.includes(cli) && line.includes(marker) && !line.includes("<defunct>"))
    .map((line) => Number.parseInt(line, 10));

/**
 * A command (run by the recipe) that records what it saw: the POSTHOG_* variables and a members call. It writes
 * `file` whole or not at all (a write beside it, then a rename), so a test polling for `file` never reads it
 * half-written: the cause of a clean-clone failure of the SIGINT test ("Unexpected end of JSON input").
 */
const probe = (file: string, exitCode = 0) => [
  join(root, "node_modules", ".bin", "node"),
  "-e",
  `(async () => {
     const res = await fetch(process.env.POSTHOG_HOST + "/api/organizations/" + process.env.POSTHOG_ORGANIZATION_ID + "/members/", { headers: { authorization: "Bearer " + process.env.POSTHOG_API_KEY } });
     const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("POSTHOG_")));
     ${atomicWrite(file, "JSON.stringify({ status: res.status, env })")}
     process.exit(${exitCode});
   })();`,
];

beforeAll(() => {
  expect(existsSync(cli), "dist/emulator/cli.js is missing: run `npm run build` first").toBe(true);
  dir = mkdtempSync(join(tmpdir(), "posthog-emulator-recipe-"));
  const bin = join(dir, "posthog-emulator");
  writeFileSync(bin, `#!/bin/sh\nexec node ${JSON.stringify(cli)} "$@"\n`);
  chmodSync(bin, 0o755);
  env = {
    ...process.env,
    PATH: `${join(root, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
    POSTHOG_EMULATOR_BIN: bin,
    POSTHOG_EMULATOR_FLAGS: flags.join(" "),
  };
  for (const name of Object.keys(env))
    if (name.startsWith("POSTHOG_") && !name.startsWith("POSTHOG_EMULATOR_")) delete env[name];
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("posthog-emulator.sh run -- <command>", () => {
  it.each([0, 3])(
    "hands the command the ready line's values, exits with its status (%i), leaves no emulator",
    (code) => {
      const seen = join(dir, `seen-${code}.json`);
      const before = emulatorPids();
      const result = spawnSync("bash", [recipe, "run", "--", ...probe(seen, code)], {
        env,
        encoding: "utf8",
      });
      expect(result.status, result.stderr).toBe(code);
      const { status, env: vars } = JSON.parse(readFileSync(seen, "utf8"));
      expect(status).toBe(200);
      expect(vars.POSTHOG_HOST).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(vars.POSTHOG_API_KEY).toBe(marker); // POSTHOG_EMULATOR_FLAGS reached the emulator
      expect(vars.POSTHOG_PROJECT_ID).toBe("1001");
      const pid = Number(vars.POSTHOG_EMULATOR_PID);
      expect(pid).toBeGreaterThan(0);
      expect(alive(pid)).toBe(false);
      expect(emulatorPids().filter((p) => !before.includes(p))).toEqual([]);
    },
  );

  it("stops the emulator when the script itself is interrupted (SIGINT) mid-command", async () => {
    const seen = join(dir, "seen-interrupted.json");
    // The command records what it saw, then waits to be interrupted (one process: no race with a shell).
    const [node, flag, script] = probe(seen);
    const waiting = `${script?.replace("process.exit(0);", "")} setTimeout(() => {}, 60_000);`;
    const child = spawn("bash", [recipe, "run", "--", node ?? "node", flag ?? "-e", waiting], {
      env,
      stdio: "ignore",
      detached: true, // its own process group, as a CI job has
    });
    while (!existsSync(seen)) await new Promise((resolve) => setTimeout(resolve, 50));
    const pid = Number(JSON.parse(readFileSync(seen, "utf8")).env.POSTHOG_EMULATOR_PID);
    expect(alive(pid)).toBe(true);
    const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
    // What Ctrl-C or a CI runner's cancel does: the whole process group gets the signal.
    process.kill(-(child.pid as number), "SIGINT");
    expect(await exit).toBe(130);
    expect(alive(pid)).toBe(false);
  });

  // The cause of a clean-clone failure of the test above (exit 1, not 130): the emulator gets the same Ctrl-C and
  // exits on its own. Linux frees an exiting process's memory, so `ps` shows its command line as "[node]", before
  // it becomes a zombie; `stop` looked in that moment and refused the pid as "not the emulator". A stand-in holds
  // that state on purpose: it shows "[node]" from the start and exits a second after SIGINT.
  it("Ctrl-C while the emulator is exiting (ps shows it as [node]): waits for it, exits 130", async () => {
    const seen = join(dir, "seen-exiting.json");
    const standIn = join(dir, "exiting-emulator.js");
    writeFileSync(
      standIn,
      `process.title = "[node]";
       console.log(JSON.stringify({ url: "http://127.0.0.1:9", apiKey: "k", organizationId: "o", projectId: 1, pid: process.pid }));
       process.once("SIGINT", () => setTimeout(() => process.exit(0), 1000));
       setInterval(() => {}, 60_000);`,
    );
    const bin = join(dir, "exiting-emulator");
    writeFileSync(bin, `#!/bin/sh\nexec node ${JSON.stringify(standIn)}\n`);
    chmodSync(bin, 0o755);
    const command = `${atomicWrite(seen, "process.env.POSTHOG_EMULATOR_PID")} setTimeout(() => {}, 60_000);`;
    const child = spawn("bash", [recipe, "run", "--", "node", "-e", command], {
      env: { ...env, POSTHOG_EMULATOR_BIN: bin },
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
    });
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
    while (!existsSync(seen)) await new Promise((resolve) => setTimeout(resolve, 50));
    const pid = Number(readFileSync(seen, "utf8"));
    expect(alive(pid)).toBe(true);
    process.kill(-(child.pid as number), "SIGINT");
    expect(await exit, stderr).toBe(130);
    expect(stderr).toBe("");
    expect(alive(pid)).toBe(false);
  });
});

describe("posthog-emulator.sh start / stop (one step each, e.g. in GitHub Actions)", () => {
  it("start prints NAME=value lines for $GITHUB_ENV; stop kills that pid and waits until it is gone", () => {
    const started = spawnSync("bash", [recipe, "start", ...flags], {
      env,
      encoding: "utf8",
      timeout: 40_000,
    });
    expect(started.status, started.stderr).toBe(0);
    const lines = started.stdout.trim().split("\n");
    expect(lines.map((l) => l.split("=")[0])).toEqual([
      "POSTHOG_HOST",
      "POSTHOG_API_KEY",
      "POSTHOG_ORGANIZATION_ID",
      "POSTHOG_PROJECT_ID",
      "POSTHOG_EMULATOR_PID",
    ]);
    const pid = Number(lines[4]?.split("=")[1]);
    try {
      expect(alive(pid)).toBe(true); // still running after the step's shell exited
      const stopped = spawnSync("bash", [recipe, "stop"], {
        env: { ...env, POSTHOG_EMULATOR_PID: String(pid) },
        encoding: "utf8",
      });
      expect(stopped.status, stopped.stderr).toBe(0);
      expect(alive(pid)).toBe(false);
    } finally {
      if (alive(pid)) process.kill(pid, "SIGKILL");
    }
  });

  it("stop refuses a pid that is not the emulator, and start reports an emulator that cannot start", () => {
    const refused = spawnSync("bash", [recipe, "stop", String(process.pid)], { env, encoding: "utf8" });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`process ${process.pid} is not the emulator`);
    expect(alive(process.pid)).toBe(true);

    const bad = spawnSync("bash", [recipe, "start", "--port", "nope"], { env, encoding: "utf8" });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('posthog-emulator: --port needs an integer from 0 to 65535, got "nope"');
    expect(bad.stderr).toContain("the emulator exited before it was ready");
  });
});
