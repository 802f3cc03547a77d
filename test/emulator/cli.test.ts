/**
 * The `posthog-emulator` command over real processes (the compiled dist/emulator/cli.js, run by the Node 24 of
 * node_modules/.bin): the ready line (with the emulator's own pid), clean exits on SIGTERM and SIGINT, and
 * command-line and start-up errors as ONE line on stderr (no usage text, no zod dump). The usage text is for
 * --help only. A missing fastify is covered over a real install in test/package/install.test.ts.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(__dirname, "..", "..");
const cli = join(root, "dist", "emulator", "cli.js");
const node = join(root, "node_modules", ".bin", "node");

type Ready = { url: string; apiKey: string; organizationId: string; projectId: number; pid: number };

const start = (args: string[]): ChildProcessWithoutNullStreams =>
  spawn(node, [cli, ...args], { stdio: ["pipe", "pipe", "pipe"] });

/** Resolves with the first stdout line parsed as JSON; rejects if the process exits first. */
const readyLine = (child: ChildProcessWithoutNullStreams): Promise<Ready> =>
  new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += String(chunk);
    });
    createInterface({ input: child.stdout }).once("line", (line) => resolve(JSON.parse(line) as Ready));
    child.once("exit", (code) => reject(new Error(`exited early with ${code}: ${stderr}`)));
  });

const exited = (child: ChildProcessWithoutNullStreams) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
    } else child.once("exit", (code, signal) => resolve({ code, signal }));
  });

/** Runs the command to completion; returns its status and output. */
const run = async (args: string[]) => {
  const child = start(args);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += String(chunk);
  });
  child.stderr.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const { code } = await exited(child);
  return { code, stdout, stderr };
};

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

beforeAll(() => {
  expect(existsSync(cli), "dist/emulator/cli.js is missing: run `npm run build` first").toBe(true);
});

describe("ready line and stopping", () => {
  it.each(["SIGTERM", "SIGINT"] as const)(
    "prints one JSON line with its own pid, serves, and on %s stops listening and exits 0",
    async (signal) => {
      const child = start(["--port", "0", "--rate-limit", "off"]);
      try {
        const ready = await readyLine(child);
        expect(Object.keys(ready).sort()).toEqual(["apiKey", "organizationId", "pid", "projectId", "url"]);
        expect(ready.pid).toBe(child.pid);
        const res = await request(`${ready.url}/api/organizations/${ready.organizationId}/members/`, {
          headers: { authorization: `Bearer ${ready.apiKey}` },
        });
        expect(res.statusCode).toBe(200);
        await res.body.dump();
        const exit = exited(child);
        process.kill(ready.pid, signal); // what a CI script does with the pid of the ready line
        expect(await exit).toEqual({ code: 0, signal: null });
        expect(await listening(ready.url)).toBe(false);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      }
    },
  );

  it("prints the usage on --help (stdout, status 0) and nothing else", async () => {
    const { code, stdout, stderr } = await run(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: posthog-emulator \[options\]/);
    expect(stdout).toContain('"pid"');
    expect(stderr).toBe("");
  });
});

/** The pointer every error line of the command ends with (its section of the troubleshooting pages). */
const EMULATOR_DOCS = " (see docs/troubleshooting/commands.md#the-emulator-command-line)";

describe("errors are one line on stderr, without the usage text, pointing at the docs", () => {
  const oneLine = (stderr: string): string => {
    expect(stderr.endsWith("\n")).toBe(true);
    const lines = stderr.trimEnd().split("\n");
    expect(lines, stderr).toHaveLength(1);
    const [line = ""] = lines;
    expect(line.startsWith("posthog-emulator: ")).toBe(true);
    expect(line.endsWith(EMULATOR_DOCS), line).toBe(true);
    expect(line).not.toMatch(/Usage|"code":|"path":\s*\[|ZodError|at .*\.js:\d+/);
    return line;
  };

  it.each([
    [["--port", "abc"], '--port needs an integer from 0 to 65535, got "abc"'],
    [["--port", "65536"], '--port needs an integer from 0 to 65535, got "65536"'],
    [["--port", "-1"], '--port needs a value; one that starts with "-" is written --port=<value>'],
    [["--port=-1"], '--port needs an integer from 0 to 65535, got "-1"'],
    [["--port"], "--port needs a value"],
    [["--latency-ms", "60001"], '--latency-ms needs an integer from 0 to 60000, got "60001"'],
    [["--bogus"], "unknown option --bogus (posthog-emulator --help lists the options)"],
    [["serve"], 'unexpected argument "serve"'],
    [
      ["--rate-limit", "lots"],
      '--rate-limit must be "off" or <perMinute>/<perHour> (e.g. 480/4800), got "lots"',
    ],
    [["--rate-limit", "0/10"], '--rate-limit must be "off" or <perMinute>/<perHour>'],
    [
      ["--invite-budget", "many"],
      '--invite-budget must be "off" or <perHour>/<perDay> (e.g. 50/200), got "many"',
    ],
    [["--api-key", "nope"], "--api-key: apiKey must look like phx_ followed by 16+ URL-safe characters"],
    [["--fault", "{"], '--fault needs a JSON object, got "{"'],
    [["--fault", '{"path":"/domains/","status":"busy"}'], "status: Invalid input: expected number"],
  ])("%j → status 2: %s", async (args, message) => {
    const { code, stdout, stderr } = await run(args);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(oneLine(stderr)).toContain(message);
  });

  describe("start-up failures → status 1", () => {
    let blocker: Server;
    let port: number;
    let dir: string;
    beforeAll(async () => {
      blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
      port = (blocker.address() as { port: number }).port;
      dir = mkdtempSync(join(tmpdir(), "posthog-emulator-cli-"));
    });
    afterAll(async () => {
      await new Promise((resolve) => blocker.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    });

    it("a port in use names the port and what to do", async () => {
      const { code, stdout, stderr } = await run(["--port", String(port)]);
      expect(code).toBe(1);
      expect(stdout).toBe("");
      expect(oneLine(stderr)).toBe(
        `posthog-emulator: port ${port} on 127.0.0.1 is in use: stop what listens there, or pass another --port (0 picks a free one)${EMULATOR_DOCS}`,
      );
    });

    it("a state file that is not the emulator's JSON names the file", async () => {
      const notJson = join(dir, "not-json.json");
      writeFileSync(notJson, "hello");
      const bad = await run(["--state-file", notJson]);
      expect(bad.code).toBe(1);
      expect(oneLine(bad.stderr)).toContain(`--state-file ${notJson}: `);

      const wrongShape = join(dir, "wrong-shape.json");
      writeFileSync(wrongShape, JSON.stringify({ organization: 1 }));
      const shape = await run(["--state-file", wrongShape]);
      expect(shape.code).toBe(2);
      expect(oneLine(shape.stderr)).toContain(`invalid options or state (--state-file ${wrongShape}): `);
    });
  });
});
