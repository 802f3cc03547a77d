/**
 * `npm run bench -- --only cold-start`: the cold start of the provider plugin against the dynamic-provider host,
 * in one run. Each sample spawns the process as the engine does (`<executable> <engine address>`), with the
 * Node.js of node_modules/.bin first on PATH, and times it to the line with its gRPC port on stdout (the moment
 * the engine can send its first call); then kills it. The two kinds alternate (ABAB…), so that the machine's load
 * hits both alike; medians and their ratio (plugin ÷ dynamic host) are reported.
 *
 * - plugin: `plugin/pulumi-resource-posthog` (dist/provider/adapters/plugin/main.js: it loads the resources, the client and
 *   zod at start);
 * - dynamic host: `@pulumi/pulumi`'s `cmd/dynamic-provider` (it loads a provider's code at its first `configure`,
 *   which the engine sends at once, so its port line comes before that cost).
 * No engine listens at the address given: neither process calls it before its first request.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, join } from "node:path";
import { readPort } from "../tools/provider-host";
import { median, round } from "./emulator-process";
import { repoRoot } from "./soak-core";

export interface ColdStartResults {
  samples: number;
  pluginMs: number[];
  dynamicHostMs: number[];
  pluginMedianMs: number;
  dynamicHostMedianMs: number;
  /** pluginMedianMs ÷ dynamicHostMedianMs. */
  ratio: number;
}

/**
 * Milliseconds from spawning `command args…` to its port line (tools/provider-host.ts `readPort`); kills it then.
 * @throws when it exits first, prints no port, or prints nothing within 60 s.
 */
async function timeToPort(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = performance.now();
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  // killed after 60 s without a port line: readPort then rejects with the process's exit and stderr
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  try {
    await readPort(child);
    return performance.now() - t0;
  } finally {
    clearTimeout(timer);
    child.kill("SIGKILL");
  }
}

/**
 * Runs `samples` cold starts of each kind, alternating.
 * @throws when dist/ is missing (run `npm run build`) or a process exits before printing its port.
 */
export async function runColdStart(samples = 15): Promise<ColdStartResults> {
  const root = repoRoot();
  const plugin = join(root, "plugin", "pulumi-resource-posthog");
  if (!existsSync(join(root, "dist", "provider", "adapters", "plugin", "main.js")))
    throw new Error("dist/provider/adapters/plugin/main.js is missing: run `npm run build` first");
  const dynamicHost = createRequire(join(root, "package.json")).resolve(
    "@pulumi/pulumi/cmd/dynamic-provider",
  );
  const env = {
    ...process.env,
    PATH: [join(root, "node_modules", ".bin"), process.env.PATH].join(delimiter),
  };
  const node = join(root, "node_modules", ".bin", "node");
  const engine = "127.0.0.1:1";
  const pluginMs: number[] = [];
  const dynamicHostMs: number[] = [];
  // one warm-up of each (the file cache), not counted
  await timeToPort(plugin, [engine], env);
  await timeToPort(node, [dynamicHost, engine], env);
  for (let i = 0; i < samples; i++) {
    const first = i % 2 === 0;
    if (first) pluginMs.push(await timeToPort(plugin, [engine], env));
    dynamicHostMs.push(await timeToPort(node, [dynamicHost, engine], env));
    if (!first) pluginMs.push(await timeToPort(plugin, [engine], env));
  }
  const p = median(pluginMs);
  const d = median(dynamicHostMs);
  return {
    samples,
    pluginMs: pluginMs.map((x) => round(x, 0)),
    dynamicHostMs: dynamicHostMs.map((x) => round(x, 0)),
    pluginMedianMs: round(p, 0),
    dynamicHostMedianMs: round(d, 0),
    ratio: round(p / d, 2),
  };
}
