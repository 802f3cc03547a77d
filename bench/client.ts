/**
 * Benchmark: per-request cost of the PostHog client against a bare `undici.request` to the same emulator in
 * the same run (a figure, not a target: the loopback target was retired in issue 15).
 *
 * Run after a build: `npm run build && node_modules/.bin/node dist/bench/client.js [--rounds 20] [--per-round 100]`
 * (or via `npm run bench`). The emulator runs in a child process (rate limit off) so its CPU time is not
 * charged to the measured process. Both sides make sequential GETs of the same URLs with the same headers and
 * parse the JSON; the client additionally validates with zod, passes its rate limiter (on, with limits
 * high enough never to wait), retry and coalescing layers. Requests alternate bare/client (ABBA) so that
 * other load on the machine hits both sides alike. Prints one JSON line per run: per endpoint the median
 * latencies in microseconds, their ratio, and the median of the per-pair ratios.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { Agent, request } from "undici";
import { clientShared, createClient } from "../provider/client";

interface Emulator {
  url: string;
  apiKey: string;
  organizationId: string;
  projectId: number;
  stop(): Promise<void>;
}

async function startEmulatorProcess(): Promise<Emulator> {
  const cli = join(__dirname, "..", "emulator", "cli.js");
  const child = spawn(process.execPath, [cli, "--port", "0", "--rate-limit", "off"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const [line] = (await once(lines, "line")) as [string];
  const info = JSON.parse(line) as Omit<Emulator, "stop">;
  return {
    ...info,
    async stop() {
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "20" },
      "per-round": { type: "string", default: "100" },
      warmup: { type: "string", default: "300" },
    },
  });
  const rounds = Number(values.rounds);
  const perRound = Number(values["per-round"]);
  const warmup = Number(values.warmup);

  const emu = await startEmulatorProcess();
  // The bench run's one ClientShared: its pools are closed at the end.
  const shared = clientShared();
  try {
    const client = createClient({
      shared,
      apiKey: emu.apiKey,
      host: emu.url,
      organizationId: emu.organizationId,
      projectId: emu.projectId,
      rateLimit: { perMinute: 100_000, perHour: 1_000_000 },
    });
    // The bare side gets the same kind of dispatcher the client uses: keep-alive to one origin.
    const dispatcher = new Agent({ keepAliveTimeout: 4_000 });
    const headers = {
      authorization: `Bearer ${emu.apiKey}`,
      "user-agent": "bench",
      accept: "application/json",
    };
    const bare = async (path: string) => {
      const res = await request(`${emu.url}${path}`, { method: "GET", headers, dispatcher });
      const body = await res.body.json();
      if (res.statusCode !== 200) throw new Error(`bare ${path}: ${res.statusCode}`);
      return body;
    };
    const endpoints = [
      {
        name: "projects.retrieve (full project, ~50 fields)",
        bare: () => bare(`/api/organizations/${emu.organizationId}/projects/${emu.projectId}/`),
        client: () => client.projects.retrieve({ id: emu.projectId }),
      },
      {
        name: "members.list (page of members)",
        bare: () => bare(`/api/organizations/${emu.organizationId}/members/`),
        client: () => client.members.list(),
      },
    ];

    const results: Record<
      string,
      { bareMedianUs: number; clientMedianUs: number; ratio: number; medianPairRatio: number }
    > = {};
    for (const ep of endpoints) {
      for (let i = 0; i < warmup; i++) {
        await ep.bare();
        await ep.client();
      }
      // Alternate one request each, in ABBA order, so load from anything else on the machine hits both sides
      // alike; also keep the ratio of each adjacent pair.
      const bareTimes: number[] = [];
      const clientTimes: number[] = [];
      const pairRatios: number[] = [];
      const time = async (fn: () => Promise<unknown>) => {
        const t0 = process.hrtime.bigint();
        await fn();
        return Number(process.hrtime.bigint() - t0) / 1000;
      };
      for (let i = 0; i < rounds * perRound; i++) {
        let b: number;
        let c: number;
        if (i % 2 === 0) {
          b = await time(ep.bare);
          c = await time(ep.client);
        } else {
          c = await time(ep.client);
          b = await time(ep.bare);
        }
        bareTimes.push(b);
        clientTimes.push(c);
        pairRatios.push(c / b);
      }
      const b = median(bareTimes);
      const c = median(clientTimes);
      results[ep.name] = {
        bareMedianUs: Math.round(b * 10) / 10,
        clientMedianUs: Math.round(c * 10) / 10,
        ratio: Math.round((c / b) * 1000) / 1000,
        medianPairRatio: Math.round(median(pairRatios) * 1000) / 1000,
      };
    }
    const worst = Math.max(...Object.values(results).map((r) => r.ratio));
    console.log(
      JSON.stringify({
        bench: "client",
        samplesPerSide: rounds * perRound,
        results,
        worstRatio: worst,
        target: 1.1,
        pass: worst <= 1.1,
      }),
    );
    await dispatcher.close();
  } finally {
    await shared.close();
    await emu.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
