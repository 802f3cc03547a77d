/**
 * Throughput benchmark of the emulator for simple reads (not a test).
 *
 *   npm run build && node_modules/.bin/node dist/bench/emulator.js [--seconds 5] [--connections 16]
 *
 * Starts the emulator CLI in a child process (rate limit off) and a bare Fastify "hello" server as a
 * baseline, drives each with keep-alive connections for a fixed time and prints requests/second,
 * latency percentiles and the ratio emulator/baseline as one JSON object per line. The load generator
 * runs in this process, so on a small machine it, not the server, may be the limit: read the ratio.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { Pool } from "undici";

const root = join(__dirname, "..", "..");
const node = process.execPath;

type Server = { url: string; headers: Record<string, string>; child: ChildProcess };

const readyLine = (child: ChildProcess): Promise<string> =>
  new Promise((resolve, reject) => {
    if (!child.stdout) throw new Error("no stdout");
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });

async function startEmulatorChild(): Promise<Server & { org: string; project: string }> {
  const child = spawn(
    node,
    [join(root, "dist", "emulator", "cli.js"), "--port", "0", "--rate-limit", "off"],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const ready = JSON.parse(await readyLine(child)) as {
    url: string;
    apiKey: string;
    organizationId: string;
    projectId: number;
  };
  return {
    url: ready.url,
    headers: { authorization: `Bearer ${ready.apiKey}` },
    child,
    org: `/api/organizations/${ready.organizationId}`,
    project: `/api/projects/${ready.projectId}`,
  };
}

async function startBaselineChild(): Promise<Server> {
  const script = `
    const app = require("fastify")({ logger: false });
    app.get("/hello", async () => ({ hello: "world" }));
    app.listen({ port: 0, host: "127.0.0.1" }).then(() => console.log("http://127.0.0.1:" + app.server.address().port));
  `;
  const child = spawn(node, ["-e", script], { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
  return { url: await readyLine(child), headers: {}, child };
}

type Result = { name: string; requests: number; errors: number; rps: number; p50Ms: number; p99Ms: number };

async function drive(
  name: string,
  server: Server,
  path: string,
  seconds: number,
  connections: number,
  method: "GET" | "POST" = "GET",
  body?: string,
): Promise<Result> {
  const pool = new Pool(server.url, { connections, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  const headers = body ? { ...server.headers, "content-type": "application/json" } : server.headers;
  const deadline = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const start = performance.now();
      try {
        const res = await pool.request({ path, method, headers, ...(body ? { body } : {}) });
        await res.body.dump();
        if (res.statusCode >= 400) errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - start);
    }
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: connections }, worker));
  const elapsed = (performance.now() - began) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => Math.round((latencies[Math.floor((latencies.length - 1) * p)] ?? 0) * 100) / 100;
  return {
    name,
    requests: latencies.length,
    errors,
    rps: Math.round(latencies.length / elapsed),
    p50Ms: pct(0.5),
    p99Ms: pct(0.99),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { seconds: { type: "string", default: "5" }, connections: { type: "string", default: "16" } },
  });
  const seconds = Number(values.seconds);
  const connections = Number(values.connections);
  const emulator = await startEmulatorChild();
  const baseline = await startBaselineChild();
  try {
    // A few dashboards so that the list read has content.
    for (let i = 0; i < 20; i++) {
      await drive(
        "seed",
        emulator,
        `${emulator.project}/dashboards/`,
        0,
        1,
        "POST",
        JSON.stringify({ name: `D${i}` }),
      );
    }
    await drive("warm-up", emulator, `${emulator.org}/members/`, 1, connections);
    await drive("warm-up", baseline, "/hello", 1, connections);
    const base = await drive("baseline: bare Fastify GET /hello", baseline, "/hello", seconds, connections);
    const runs = [
      await drive("emulator: GET members list", emulator, `${emulator.org}/members/`, seconds, connections),
      await drive(
        "emulator: GET dashboard list (20)",
        emulator,
        `${emulator.project}/dashboards/`,
        seconds,
        connections,
      ),
      await drive(
        "emulator: GET one batch export",
        emulator,
        `${emulator.org}/batch_exports/9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c01/`,
        seconds,
        connections,
      ),
    ];
    console.log(JSON.stringify({ ...base, connections, seconds }));
    for (const run of runs) {
      console.log(JSON.stringify({ ...run, ratioToBaseline: Math.round((run.rps / base.rps) * 100) / 100 }));
    }
  } finally {
    emulator.child.kill("SIGTERM");
    baseline.child.kill("SIGTERM");
  }
}

void main();
