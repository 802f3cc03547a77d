#!/usr/bin/env node
import { parseArgs } from "node:util";
import { type EmulatorOptions, startEmulator } from "./index";
import { ControlFaultSchema } from "./schemas";

const USAGE = `Usage: posthog-emulator [options]

Serves an emulator of the PostHog organization/project administration API. Prints one JSON line
{"url","apiKey","organizationId","projectId"} when ready; serves until SIGINT/SIGTERM.

  --port <n>              TCP port (default 0: a free port)
  --host <addr>           interface to bind (default 127.0.0.1)
  --rate-limit <spec>     off | <perMinute>/<perHour> (default 480/4800, per API key)
  --latency-ms <n>        added latency before every API request (default 0)
  --state-file <path>     load the world from this JSON file (if present) and save after every write
  --api-key <phx_...>     use this seed key instead of a random one
  --fault <json>          arm a fault at start, e.g. '{"path":"/domains/","status":503}' (repeatable)
  --no-paid-features      without restriction level 37, collaborators, sharing, more than one project
  --help                  show this help
`;

const fail = (message: string): never => {
  process.stderr.write(`posthog-emulator: ${message}\n\n${USAGE}`);
  process.exit(2);
};

const integer = (flag: string, raw: string | undefined): number | undefined => {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) fail(`${flag} needs a non-negative integer, got "${raw}"`);
  return Number(raw);
};

/** Parses the command line into emulator options (exits with status 2 and usage on bad input). */
export function parseCli(argv: string[]): EmulatorOptions {
  let parsed: ReturnType<typeof parse>;
  function parse() {
    return parseArgs({
      args: argv,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        "rate-limit": { type: "string" },
        "latency-ms": { type: "string" },
        "state-file": { type: "string" },
        "api-key": { type: "string" },
        fault: { type: "string", multiple: true },
        "no-paid-features": { type: "boolean" },
        help: { type: "boolean" },
      },
      strict: true,
      allowPositionals: false,
    });
  }
  try {
    parsed = parse();
  } catch (error) {
    return fail((error as Error).message);
  }
  const v = parsed.values;
  if (v.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const options: EmulatorOptions = {};
  const port = integer("--port", v.port);
  if (port !== undefined) options.port = port;
  if (v.host !== undefined) options.host = v.host;
  const rate = v["rate-limit"];
  if (rate !== undefined) {
    if (rate === "off") options.rateLimit = false;
    else {
      const m = /^(\d+)\/(\d+)$/.exec(rate);
      if (!m) fail(`--rate-limit must be "off" or <perMinute>/<perHour>, got "${rate}"`);
      options.rateLimit = { perMinute: Number(m?.[1]), perHour: Number(m?.[2]) };
    }
  }
  const latency = integer("--latency-ms", v["latency-ms"]);
  if (latency !== undefined) options.latencyMs = latency;
  if (v["state-file"] !== undefined) options.stateFile = v["state-file"];
  if (v["api-key"] !== undefined) options.apiKey = v["api-key"];
  if (v["no-paid-features"]) options.paidFeatures = false;
  if (v.fault) {
    options.faults = v.fault.map((raw) => {
      try {
        return ControlFaultSchema.parse(JSON.parse(raw));
      } catch (error) {
        return fail(`--fault: ${(error as Error).message}`);
      }
    });
  }
  return options;
}

async function main(): Promise<void> {
  const options = parseCli(process.argv.slice(2));
  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  try {
    emulator = await startEmulator(options);
  } catch (error) {
    return fail((error as Error).message);
  }
  const { url, apiKey, organizationId, projectId } = emulator;
  process.stdout.write(`${JSON.stringify({ url, apiKey, organizationId, projectId })}\n`);
  const stop = () => {
    emulator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (require.main === module) void main();
