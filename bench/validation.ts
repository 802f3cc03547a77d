/**
 * Benchmark: the CPU cost of the client's validation of representative bodies, in microseconds per body,
 * with no network in the measurement: a full project (GET `/api/projects/:id/`, ~50 fields), a page of 100
 * members (GET `/api/organizations/:id/members/?limit=100`), a dashboard with tiles (GET
 * `…/dashboards/:id/` of a dashboard made from the `DEFAULT_APP` template, 6 tiles) and a dashboard request
 * body (`parseBody`, as create and update send it). The bodies are taken once from an emulator started in this
 * process (closed before timing); then `parseResponse` / `parseBody` of `provider/client/common.ts` (what the
 * client runs on every response and request body) are timed, and beside them `schema.parse` alone (zod's
 * public API, no wrapper) as a reference.
 *
 * Run after a build: `npm run build && node_modules/.bin/node dist/bench/validation.js [--rounds 30]
 * [--per-round 200] [--json]`. Prints a table (median of the per-round means, with the lowest and highest
 * round) or, with `--json`, one JSON object: per body `{client: {median, min, max}, zod: {…}}` in µs.
 *
 * A figure, not a target: a provider operation against PostHog waits 50–300 ms on the network; the figures
 * say how much of that is validation.
 */
import { parseArgs } from "node:util";
import { request } from "undici";
import type { z } from "zod";
import { startEmulator } from "../emulator/index";
import { DashboardBodySchema, DashboardSchema, MemberSchema, ProjectSchema } from "../provider/client";
import { pageSchema, parseBody, parseResponse } from "../provider/client/common";

interface Case {
  name: string;
  /** What the client runs on this body. */
  client: () => unknown;
  /** zod's `parse` alone on the same body and schema. */
  zod: () => unknown;
}

interface Figure {
  median: number;
  min: number;
  max: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** Mean µs per call of `f`, over `perRound` calls, for each of `rounds` rounds. */
function time(f: () => unknown, rounds: number, perRound: number): Figure {
  const means: number[] = [];
  let sink = 0;
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < perRound; i++) if (f() !== undefined) sink++;
    means.push(Number(process.hrtime.bigint() - start) / 1_000 / perRound);
  }
  if (sink < 0) console.log(sink); // keeps the calls from being optimised away
  return { median: median(means), min: Math.min(...means), max: Math.max(...means) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: "30" },
      "per-round": { type: "string", default: "200" },
      json: { type: "boolean", default: false },
    },
  });
  const rounds = Number(values.rounds);
  const perRound = Number(values["per-round"]);

  const emu = await startEmulator({ rateLimit: false, inviteBudget: false, port: 0, host: "127.0.0.1" });
  const get = async (method: "GET" | "POST", path: string, body?: unknown): Promise<unknown> => {
    const res = await request(`${emu.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${emu.apiKey}`, "content-type": "application/json" },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const json = (await res.body.json()) as unknown;
    if (res.statusCode >= 300)
      throw new Error(`${method} ${path} → ${res.statusCode} ${JSON.stringify(json)}`);
    return json;
  };

  const projectPath = `/api/organizations/${emu.organizationId}/projects/${emu.projectId}/`;
  const project = await get("GET", projectPath);
  const dashboardsPath = `/api/projects/${emu.projectId}/dashboards/`;
  const membersPath = `/api/organizations/${emu.organizationId}/members/`;
  const seeded = ((await get("GET", `${membersPath}?limit=1`)) as { count: number }).count;
  for (let i = seeded; i < 100; i++) {
    await get("POST", "/_emulator/users", { email: `bench${i}@example.com`, level: 1 });
  }
  const members = await get("GET", `${membersPath}?limit=100`);
  const dashboardBody = {
    name: "Product analytics",
    description: "Weekly review",
    pinned: true,
    tags: ["growth", "weekly"],
    restriction_level: 21,
    use_template: "DEFAULT_APP",
  };
  const created = (await get("POST", dashboardsPath, dashboardBody)) as { id: number };
  const dashboardPath = `${dashboardsPath}${created.id}/`;
  const dashboard = await get("GET", dashboardPath);
  await emu.close();

  const tiles = (dashboard as { tiles?: unknown[] }).tiles?.length ?? 0;
  const memberCount = (members as { results: unknown[] }).results.length;
  const response = <S extends z.ZodType>(name: string, schema: S, body: unknown, path: string): Case => ({
    name,
    client: () => parseResponse(schema, { status: 200, body }, "GET", path),
    zod: () => schema.parse(body),
  });
  const cases: Case[] = [
    response("project (full, GET)", ProjectSchema, project, projectPath),
    response(`page of ${memberCount} members (GET)`, pageSchema(MemberSchema), members, membersPath),
    response(`dashboard with ${tiles} tiles (GET)`, DashboardSchema, dashboard, dashboardPath),
    {
      name: "dashboard request body (create/update)",
      client: () => parseBody(DashboardBodySchema, dashboardBody, "body"),
      zod: () => DashboardBodySchema.parse(dashboardBody),
    },
  ];

  const results: Record<string, { client: Figure; zod: Figure }> = {};
  for (const c of cases) {
    time(c.client, 5, perRound); // warm-up: zod compiles a schema on first use, V8 optimises
    time(c.zod, 5, perRound);
    results[c.name] = { client: time(c.client, rounds, perRound), zod: time(c.zod, rounds, perRound) };
  }

  if (values.json) {
    console.log(JSON.stringify({ rounds, perRound, node: process.version, results }));
    return;
  }
  const f = (x: Figure) => `${x.median.toFixed(1)} (${x.min.toFixed(1)}–${x.max.toFixed(1)})`;
  console.log(
    `validation, µs per body: median of ${rounds} rounds × ${perRound} calls (lowest–highest round)`,
  );
  console.log(`${"body".padEnd(42)} ${"client".padEnd(22)} zod.parse alone`);
  for (const [name, r] of Object.entries(results)) {
    console.log(`${name.padEnd(42)} ${f(r.client).padEnd(22)} ${f(r.zod)}`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
