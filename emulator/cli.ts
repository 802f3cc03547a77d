#!/usr/bin/env node
import { spawn } from "node:child_process";
import { parseArgs } from "node:util";
import type { z } from "zod";
import type { EmulatorOptions } from "./index";
import { ControlFaultSchema } from "./schemas";

/** The help `posthog-emulator --help` prints: every option, each on a line of its own starting `  --<option>`. */
export const USAGE = `Usage: posthog-emulator [options]

Serves an emulator of the PostHog organization/project administration API. Prints one JSON line
{"url","apiKey","organizationId","projectId","pid"} on stdout when ready ("pid": this process, to stop it
with \`kill <pid>\`); serves until SIGINT/SIGTERM, then exits with status 0. Needs fastify 5 installed
beside pulumi-posthog (\`npm install --save-dev fastify@5\`).

  --port <n>              TCP port, 0-65535 (default 0: a free port)
  --host <addr>           interface to bind (default 127.0.0.1)
  --rate-limit <spec>     off | <perMinute>/<perHour> (default 480/4800, per API key)
  --invite-budget <spec>  off | <perHour>/<perDay> (default 50/200 invites, per organization)
  --latency-ms <n>        added latency before every API request, 0-60000 (default 0)
  --latency-jitter-ms <n> each request's latency varies by up to ± this, 0-60000 (default 0),
                          e.g. --latency-ms 80 --latency-jitter-ms 20: 60-100 ms
  --state-file <path>     load the world from this JSON file (if present) and save after every write
  --api-key <phx_...>     use this seed key instead of a random one
  --fault <json>          arm a fault at start, e.g. '{"path":"/domains/","status":503}' (repeatable)
  --no-paid-features      without restriction level 37, collaborators, sharing, more than one project
  --no-saml-on-domain     serve domains as current PostHog does: no saml_* fields (SAML lives in
                          identity_provider_config), writes of them ignored
  --print-env             start the emulator in the background and print, once it is ready, the
                          shell lines export POSTHOG_HOST=… POSTHOG_API_KEY=… POSTHOG_ORGANIZATION_ID=…
                          POSTHOG_PROJECT_ID=… POSTHOG_EMULATOR_PID=…, then exit 0; the emulator serves
                          until \`kill "$POSTHOG_EMULATOR_PID"\`. In a POSIX shell:
                            eval "$(posthog-emulator --print-env --rate-limit off)"
  --help                  show this help

Errors are one line on stderr: status 2 for a bad command line, 1 when the emulator cannot start
(e.g. the port is in use).
`;

/** A command-line or start-up error: one line on stderr, no usage text. */
class CliError extends Error {
  constructor(
    message: string,
    readonly status: 1 | 2,
  ) {
    super(message);
  }
}

const HELP_HINT = "(posthog-emulator --help lists the options)";

/** One line from a zod error: `<flag or path>: <message>` per issue, joined with "; ". */
const zodLine = (error: z.ZodError, flags: Record<string, string> = {}): string =>
  error.issues
    .map((issue) => {
      const [head, ...rest] = issue.path.map(String);
      const where = head === undefined ? "" : [flags[head] ?? head, ...rest].join(".");
      return where ? `${where}: ${issue.message}` : issue.message;
    })
    .join("; ");

/** The command-line flag of each option, for messages. */
const FLAGS: Record<string, string> = {
  port: "--port",
  host: "--host",
  rateLimit: "--rate-limit",
  inviteBudget: "--invite-budget",
  latencyMs: "--latency-ms",
  latencyJitterMs: "--latency-jitter-ms",
  stateFile: "--state-file",
  apiKey: "--api-key",
  faults: "--fault",
  paidFeatures: "--no-paid-features",
  samlOnDomain: "--no-saml-on-domain",
};

/** A limit flag: `off` (false) or two positive whole numbers `<a>/<b>`; undefined when the flag is absent. */
const limitPair = (
  flag: string,
  raw: string | undefined,
  form: string,
): [number, number] | false | undefined => {
  if (raw === undefined) return undefined;
  if (raw === "off") return false;
  const m = /^(\d+)\/(\d+)$/.exec(raw);
  if (m && Number(m[1]) > 0 && Number(m[2]) > 0) return [Number(m[1]), Number(m[2])];
  throw new CliError(`${flag} must be "off" or ${form}, got "${raw}"`, 2);
};

const integer = (flag: string, raw: string | undefined, max: number): number | undefined => {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) > max) {
    throw new CliError(`${flag} needs an integer from 0 to ${max}, got "${raw}"`, 2);
  }
  return Number(raw);
};

/** node:util parseArgs errors, reworded as one line that names the flag. */
const argsError = (error: Error & { code?: string }): CliError => {
  const option = /'(-[^' ]+)/.exec(error.message)?.[1];
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return new CliError(`unknown option ${option ?? ""} ${HELP_HINT}`.replace("  ", " "), 2);
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return error.message.includes("ambiguous")
        ? new CliError(
            `${option ?? "an option"} needs a value; one that starts with "-" is written ${option ?? "--option"}=<value>`,
            2,
          )
        : new CliError(`${option ?? "an option"} needs a value ${HELP_HINT}`, 2);
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL": {
      const arg = /'([^']*)'/.exec(error.message)?.[1] ?? "";
      return new CliError(`unexpected argument "${arg}": every option starts with -- ${HELP_HINT}`, 2);
    }
    default:
      return new CliError(error.message.split("\n")[0] ?? "bad command line", 2);
  }
};

/**
 * Parses the command line into emulator options, or `"help"` for `--help`.
 * @throws CliError (one-line message, status 2) naming the bad flag and the accepted values.
 */
export function parseCli(argv: string[]): EmulatorOptions | "help" {
  let parsed: ReturnType<typeof parse>;
  function parse() {
    return parseArgs({
      args: argv,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        "rate-limit": { type: "string" },
        "invite-budget": { type: "string" },
        "latency-ms": { type: "string" },
        "latency-jitter-ms": { type: "string" },
        "state-file": { type: "string" },
        "api-key": { type: "string" },
        fault: { type: "string", multiple: true },
        "no-paid-features": { type: "boolean" },
        "no-saml-on-domain": { type: "boolean" },
        help: { type: "boolean" },
      },
      strict: true,
      allowPositionals: false,
    });
  }
  try {
    parsed = parse();
  } catch (error) {
    throw argsError(error as Error & { code?: string });
  }
  const v = parsed.values;
  if (v.help) return "help";
  const options: EmulatorOptions = {};
  const port = integer("--port", v.port, 65535);
  if (port !== undefined) options.port = port;
  if (v.host !== undefined) options.host = v.host;
  const rate = limitPair("--rate-limit", v["rate-limit"], "<perMinute>/<perHour> (e.g. 480/4800)");
  if (rate !== undefined) options.rateLimit = rate && { perMinute: rate[0], perHour: rate[1] };
  const budget = limitPair("--invite-budget", v["invite-budget"], "<perHour>/<perDay> (e.g. 50/200)");
  if (budget !== undefined) options.inviteBudget = budget && { perHour: budget[0], perDay: budget[1] };
  const latency = integer("--latency-ms", v["latency-ms"], 60_000);
  if (latency !== undefined) options.latencyMs = latency;
  const jitter = integer("--latency-jitter-ms", v["latency-jitter-ms"], 60_000);
  if (jitter !== undefined) options.latencyJitterMs = jitter;
  if (v["state-file"] !== undefined) options.stateFile = v["state-file"];
  if (v["api-key"] !== undefined) options.apiKey = v["api-key"];
  if (v["no-paid-features"]) options.paidFeatures = false;
  if (v["no-saml-on-domain"]) options.samlOnDomain = false;
  if (v.fault) {
    options.faults = v.fault.map((raw) => {
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch (error) {
        throw new CliError(
          `--fault needs a JSON object, got ${JSON.stringify(raw)}: ${(error as Error).message}`,
          2,
        );
      }
      const fault = ControlFaultSchema.safeParse(json);
      if (!fault.success) throw new CliError(`--fault ${raw}: ${zodLine(fault.error)}`, 2);
      return fault.data;
    });
  }
  return options;
}

/** A start-up error (listen, state file) as one line. */
const startError = (error: unknown, options: EmulatorOptions): CliError => {
  const e = error as Error & { code?: string; issues?: unknown };
  const host = options.host ?? "127.0.0.1";
  if (e.code === "EADDRINUSE") {
    return new CliError(
      `port ${options.port} on ${host} is in use: stop what listens there, or pass another --port (0 picks a free one)`,
      1,
    );
  }
  if (e.code === "EACCES") {
    return new CliError(
      `not allowed to listen on port ${options.port} of ${host}: use a port above 1023 (or 0 for a free one)`,
      1,
    );
  }
  if (e.code === "EADDRNOTAVAIL" || e.code === "ENOTFOUND" || e.code === "EAI_AGAIN") {
    return new CliError(`cannot listen on --host ${host}: not an address of this machine (${e.code})`, 1);
  }
  if (e.name === "ZodError" && Array.isArray(e.issues)) {
    const where = options.stateFile === undefined ? "" : ` (--state-file ${options.stateFile})`;
    return new CliError(`invalid options or state${where}: ${zodLine(e as z.ZodError, FLAGS)}`, 2);
  }
  if (e.name === "FastifyNotInstalledError") return new CliError(e.message, 1);
  const message = String(e.message ?? error).split("\n")[0] ?? "";
  return new CliError(
    options.stateFile === undefined ? message : `--state-file ${options.stateFile}: ${message}`,
    1,
  );
};

/** The environment variable that tells a background emulator (`--print-env`) to answer over IPC. */
const READY_IPC = "POSTHOG_EMULATOR_READY_IPC";

/** What the emulator prints when ready (and sends over IPC to `--print-env`). */
interface Ready {
  url: string;
  apiKey: string;
  organizationId: string;
  projectId: number;
  pid: number;
}

/** `value` as one POSIX shell word: single-quoted, each `'` written `'\\''`. */
const shellWord = (value: string): string => `'${value.replaceAll("'", "'\\''")}'`;

/**
 * The shell lines of `--print-env`: `export NAME='value'` for POSTHOG_HOST, POSTHOG_API_KEY,
 * POSTHOG_ORGANIZATION_ID, POSTHOG_PROJECT_ID (the settings the provider, the lookups and the client read) and
 * POSTHOG_EMULATOR_PID (the emulator's own pid, to stop it), one a line.
 */
export function envLines(ready: Ready): string {
  const vars: [string, string | number][] = [
    ["POSTHOG_HOST", ready.url],
    ["POSTHOG_API_KEY", ready.apiKey],
    ["POSTHOG_ORGANIZATION_ID", ready.organizationId],
    ["POSTHOG_PROJECT_ID", ready.projectId],
    ["POSTHOG_EMULATOR_PID", ready.pid],
  ];
  return vars.map(([name, value]) => `export ${name}=${shellWord(String(value))}\n`).join("");
}

/**
 * `--print-env`: starts this command again (without `--print-env`) as a detached background process with no
 * output of its own, waits until it is ready (its ready line comes over an IPC channel, which is then closed), and
 * prints `envLines` of it. The emulator outlives this process; `kill $POSTHOG_EMULATOR_PID` stops it.
 * @throws CliError with the background emulator's own error (status 1 or 2), or status 1 when it exits or is not
 * ready within 30 s.
 */
async function printEnv(argv: string[]): Promise<void> {
  const child = spawn(process.execPath, [...process.execArgv, __filename, ...argv], {
    detached: true,
    stdio: ["ignore", "ignore", "ignore", "ipc"],
    env: { ...process.env, [READY_IPC]: "1" },
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new CliError("the emulator was not ready within 30 s", 1));
    }, 30_000);
    const settle = (fn: () => void) => {
      clearTimeout(timer);
      child.removeAllListeners();
      fn();
    };
    child.once("message", (message: Ready | { error: string; status: 1 | 2 }) =>
      settle(() =>
        "error" in message ? reject(new CliError(message.error, message.status)) : resolve(message),
      ),
    );
    child.once("error", (error) => settle(() => reject(new CliError(error.message, 1))));
    child.once("exit", (code, signal) =>
      settle(() =>
        reject(new CliError(`the emulator exited (${signal ?? `status ${code}`}) before it was ready`, 1)),
      ),
    );
  });
  child.disconnect();
  child.unref();
  process.stdout.write(envLines(ready));
}

async function main(): Promise<void> {
  let emulator: { close(): Promise<void> } | undefined;
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    if (!emulator) process.exit(0);
    emulator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);

  const argv = process.argv.slice(2);
  const rest = argv.filter((arg) => arg !== "--print-env");
  // The command line is checked here, so a bad flag fails before anything starts in the background.
  const options = parseCli(rest);
  if (options === "help") {
    process.stdout.write(USAGE);
    return;
  }
  if (rest.length < argv.length) {
    await printEnv(rest);
    return;
  }
  let start: typeof import("./index").startEmulator;
  try {
    // Loaded here, not at the top: without fastify, this throws FastifyNotInstalledError (one line).
    start = (require("./index") as typeof import("./index")).startEmulator;
  } catch (error) {
    throw startError(error, options);
  }
  let running: Awaited<ReturnType<typeof start>>;
  try {
    running = await start(options);
  } catch (error) {
    throw startError(error, options);
  }
  emulator = running;
  const { url, apiKey, organizationId, projectId } = running;
  const ready: Ready = { url, apiKey, organizationId, projectId, pid: process.pid };
  if (viaIpc()) process.send?.(ready, () => process.disconnect());
  else process.stdout.write(`${JSON.stringify(ready)}\n`);
}

/**
 * The pointer the command's error line ends with, in the form of provider/client/docs-link.ts `docsLink`, written out
 * here since the emulator imports nothing of the provider (test/tools/layers.test.ts); test/docs/links.test.ts checks
 * that the page has that heading.
 */
const EMULATOR_DOCS = " (see docs/troubleshooting/commands.md#the-emulator-command-line)";

/** Whether this process is the background emulator of `--print-env` (its ready line and errors go over IPC). */
const viaIpc = (): boolean => process.env[READY_IPC] === "1" && typeof process.send === "function";

if (require.main === module) {
  main().catch((error: unknown) => {
    const e = error instanceof CliError ? error : new CliError(String((error as Error)?.message ?? error), 1);
    if (viaIpc()) process.send?.({ error: e.message, status: e.status }, () => process.exit(e.status));
    else {
      process.stderr.write(`posthog-emulator: ${e.message}${EMULATOR_DOCS}\n`);
      process.exit(e.status);
    }
  });
}
