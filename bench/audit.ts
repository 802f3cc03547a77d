/**
 * The audit at scale (issue 49, item 5): `pulumi-posthog audit`'s read (provider/apps/governance/audit.ts `runAudit`,
 * in this process, a fresh API key and client per run) of an organization whose one project holds --audit-dashboards
 * (1,500) dashboards, against an emulator child (bench/emulator-process.ts: its CPU is not charged to the audit).
 * Of the dashboards, every 100th is shared publicly, --audit-restricted (15) are tagged `restricted` and
 * --audit-over (500) tagged `critical`, all of these restricted to collaborators with one collaborator each.
 *
 * Three runs, each with every rule advisory (the report is whole, exit 0):
 * - `rate limit off`: the emulator's rate limit off and no added latency; the collaborator rule on `restricted`
 *   (15 collaborator lists). Goal: under 15 s (issue 49: 1,522 requests and 185 s before).
 * - `PostHog's rate`: the emulator throttling as PostHog does (480 requests a minute, 4,800 an hour per key) and
 *   answering each request after --latency-ms (80; a fault's fixed delay, so the round trip is known); the same
 *   config.
 * - `over the budget`: PostHog's rate and latency, the collaborator rule on `restricted` and `critical` (515 lists):
 *   more requests than a minute allows, so the key's rate, not the round trips, bounds the run.
 *
 * For each run: requests (the emulator's log), 429s, wall seconds, and PostHog's floor: the fewest requests the
 * audit needs (each organization list and the dashboard list: one request per 100 items, at least one; one
 * collaborator list per dashboard the rule needs) and the time they need at 480 a minute: the larger of the
 * sliding window's ⌊(n − 1)/480⌋ minutes and the chain of requests that depend on each other (the project list,
 * the first dashboard page, the other pages, the collaborator lists) × the round trip, as bench/scale.ts bounds a run.
 * Goals: requests ≤ 1.1 × the floor in every run; wall ≤ 1.1 × the time floor over the budget (where the rate
 * binds; below it the floor is a few round trips, which the CPU of reading 1,500 dashboards alone exceeds: the
 * ratio is printed, not a goal); wall < 15 s with the rate limit off.
 *
 *   npm run bench -- --only audit [--audit-dashboards 1500] [--audit-restricted 15] [--audit-over 500]
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { type AuditReport, runAudit } from "../provider/apps/governance/audit";
import { parseGovernanceConfig } from "../provider/apps/governance/rules";
import { mapLimit } from "../provider/apps/organization";
import { clientShared, createClient } from "../provider/client";
import { type Emu, round, startEmu } from "./emulator-process";

/** Mia, a member of the seeded organization: each restricted dashboard's collaborator. */
const MIA = "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03";
/** The client's page size (the default of `pageSize`, PostHog's default limit). */
const PAGE = 100;
/** PostHog's rate limit for a personal API key (a minute, an hour). */
const POSTHOG_RATE = { perMinute: 480, perHour: 4800 };

export interface AuditBenchOptions {
  /** Dashboards in the project. */
  dashboards: number;
  /** Dashboards tagged `restricted` (restricted to collaborators, one collaborator each). */
  restricted: number;
  /** Dashboards tagged `critical` likewise, read only in the `over the budget` run (0: no such run). */
  over: number;
  /** The round trip added to each request at PostHog's rate, in ms. */
  latencyMs: number;
  /** PostHog's rate limit a minute (480); a smaller one makes a small organization go over it. */
  perMinute?: number;
  progress?: (line: string) => void;
}

/** One run of the audit. */
export interface AuditBenchRun {
  name: "rate limit off" | "PostHog's rate" | "over the budget";
  /** What the report read (its `read`), and whether it came whole (every dashboard seeded found). */
  read: AuditReport["read"];
  whole: boolean;
  requests: number;
  throttled: number;
  wallSeconds: number;
  /** The fewest requests this audit needs. */
  floorRequests: number;
  /** The time those need at the key's rate: max(the window floor, chain × round trip), seconds. */
  floorSeconds: number;
  /** The dependent requests in a row: the project list, the first dashboard page, the other pages, collaborators. */
  chain: number;
  perMinute: number;
  latencyMs: number;
  /** Progress lines the audit printed (one after 3 s, then every 10 s). */
  progressLines: number;
}

export interface AuditBenchTarget {
  name: string;
  value: number;
  limit: number;
  ok: boolean;
}

export interface AuditBenchResults {
  dashboards: number;
  restricted: number;
  over: number;
  seedSeconds: number;
  runs: AuditBenchRun[];
  targets: AuditBenchTarget[];
}

/** Requests to read a list of `n` items: one a page, at least one. */
const pages = (n: number) => Math.max(1, Math.ceil(n / PAGE));

/**
 * PostHog's floor of an audit that read `read` and `collaborators` collaborator lists, at `perMinute` and a round
 * trip of `latencyMs`: the fewest requests, the chain of dependent ones, and the time they need.
 */
export function auditFloor(
  read: AuditReport["read"],
  collaborators: number,
  perMinute: number,
  latencyMs: number,
): { requests: number; chain: number; seconds: number } {
  const dashboardPages = pages(read.dashboards) * Math.max(1, read.projects);
  const requests =
    pages(read.domains) +
    pages(read.members) +
    pages(read.invites + read.expiredInvites) +
    pages(read.batchExports) +
    pages(read.projects) +
    dashboardPages +
    collaborators;
  const chain = 2 + (pages(read.dashboards) > 1 ? 1 : 0) + (collaborators > 0 ? 1 : 0);
  const window = Math.floor(Math.max(0, requests - 1) / perMinute) * 60;
  return { requests, chain, seconds: round(Math.max(window, (chain * latencyMs) / 1000), 2) };
}

/** Seeds the emulator's project (rate limit off): the dashboards, their sharing, tags and collaborators. */
export async function seedAuditOrganization(
  emu: Emu,
  o: Pick<AuditBenchOptions, "dashboards" | "restricted" | "over">,
): Promise<void> {
  const project = `/api/projects/${emu.projectId}`;
  await mapLimit(
    Array.from({ length: o.dashboards }, (_, i) => i),
    8,
    async (i) => {
      const tag = i < o.restricted ? "restricted" : i < o.restricted + o.over ? "critical" : undefined;
      const d = (await emu.api("POST", `${project}/dashboards/`, {
        name: `Dashboard ${String(i).padStart(5, "0")}`,
        ...(tag ? { tags: [tag], restriction_level: 37 } : {}),
      })) as { id: number };
      if (tag)
        await emu.api("POST", `${project}/dashboards/${d.id}/collaborators/`, { user_uuid: MIA, level: 37 });
      if (i % 100 === 99) await emu.api("PATCH", `${project}/dashboards/${d.id}/sharing/`, { enabled: true });
    },
  );
}

/** One audit in this process with a fresh key (fresh limiter and server windows), `tags` read for collaborators. */
async function auditOnce(
  emu: Emu,
  name: AuditBenchRun["name"],
  tags: string[],
  o: AuditBenchOptions,
  atPostHogRate: boolean,
): Promise<AuditBenchRun> {
  const perMinute = o.perMinute ?? POSTHOG_RATE.perMinute;
  const latencyMs = atPostHogRate ? o.latencyMs : 0;
  await emu.control(
    "POST",
    "/rate-limit",
    atPostHogRate ? { perMinute, perHour: Math.max(perMinute, POSTHOG_RATE.perHour) } : { enabled: false },
  );
  await emu.control("DELETE", "/faults");
  if (latencyMs > 0) await emu.control("POST", "/faults", { path: "^/api/", delayMs: latencyMs });
  const { key } = (await emu.control("POST", "/api-keys", {})) as { key: string };
  await emu.control("DELETE", "/requests");
  // One audit is one run: its one ClientShared, closed when it ends.
  const shared = clientShared();
  const client = createClient({
    apiKey: key,
    host: emu.url,
    rateLimit: { perMinute, perHour: Math.max(perMinute, POSTHOG_RATE.perHour) },
    shared,
  });
  const config = parseGovernanceConfig({
    all: "advisory",
    "posthog-restricted-dashboard-collaborators": { tags },
  });
  let progressLines = 0;
  const started = performance.now();
  const report = await runAudit(client, config, { progress: () => progressLines++ }).finally(() =>
    shared.close(),
  );
  const wallSeconds = round((performance.now() - started) / 1000, 3);
  await emu.control("DELETE", "/faults");
  const log = (await emu.control("GET", "/requests")) as { status: number }[];
  const collaborators =
    (tags.includes("restricted") ? o.restricted : 0) + (tags.includes("critical") ? o.over : 0);
  const floor = auditFloor(report.read, collaborators, perMinute, latencyMs);
  return {
    name,
    read: report.read,
    whole: report.read.dashboards === o.dashboards,
    requests: log.length,
    throttled: log.filter((r) => r.status === 429).length,
    wallSeconds,
    floorRequests: floor.requests,
    floorSeconds: floor.seconds,
    chain: floor.chain,
    perMinute,
    latencyMs,
    progressLines,
  };
}

/** The goals of issue 49, item 5, checked on the runs. */
export function auditTargets(runs: AuditBenchRun[]): AuditBenchTarget[] {
  const targets: AuditBenchTarget[] = [];
  const add = (name: string, value: number, limit: number) =>
    targets.push({ name, value: round(value, 3), limit, ok: value <= limit });
  for (const r of runs) {
    add(`${r.name}: requests ÷ PostHog's floor`, r.requests / r.floorRequests, 1.1);
    add(`${r.name}: 429s`, r.throttled, 0);
    add(`${r.name}: dashboards missing from the report`, r.whole ? 0 : 1, 0);
  }
  const off = runs.find((r) => r.name === "rate limit off");
  if (off) add("rate limit off: wall seconds", off.wallSeconds, 15);
  const over = runs.find((r) => r.name === "over the budget");
  if (over) add("over the budget: wall ÷ PostHog's time floor", over.wallSeconds / over.floorSeconds, 1.1);
  return targets;
}

/**
 * Seeds an emulator child and runs the audit three times (see the module's docstring).
 * @throws Error when a run's report is not whole or the audit fails (its error).
 */
export async function runAuditBench(o: AuditBenchOptions): Promise<AuditBenchResults> {
  const progress = o.progress ?? (() => {});
  const emu = await startEmu(rootOf(), ["--rate-limit", "off", "--invite-budget", "off"]);
  try {
    const seeding = performance.now();
    progress(`audit: seeding ${o.dashboards} dashboards (${o.restricted} restricted, ${o.over} critical)`);
    await seedAuditOrganization(emu, o);
    const seedSeconds = round((performance.now() - seeding) / 1000, 1);
    const runs: AuditBenchRun[] = [];
    progress("audit: rate limit off");
    runs.push(await auditOnce(emu, "rate limit off", ["restricted"], o, false));
    progress(`audit: PostHog's rate (${o.perMinute ?? POSTHOG_RATE.perMinute} a minute, ${o.latencyMs} ms)`);
    runs.push(await auditOnce(emu, "PostHog's rate", ["restricted"], o, true));
    if (o.over > 0) {
      progress(`audit: over the budget (${o.restricted + o.over} collaborator lists)`);
      runs.push(await auditOnce(emu, "over the budget", ["restricted", "critical"], o, true));
    }
    return {
      dashboards: o.dashboards,
      restricted: o.restricted,
      over: o.over,
      seedSeconds,
      runs,
      targets: auditTargets(runs),
    };
  } finally {
    await emu.stop();
  }
}

/** The checkout's root (dist/bench/audit.js or bench/audit.ts). */
function rootOf(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "dist"))) return dir;
    if (dirname(dir) === dir) throw new Error("no checkout root with a dist/ directory above this file");
  }
}

/** The table `npm run bench` prints. */
export function auditTable(r: AuditBenchResults): string {
  const lines = [
    `audit: ${r.dashboards} dashboards in one project (${r.restricted} restricted, ${r.over} critical, every 100th shared), seeded in ${r.seedSeconds} s; in process, a fresh key each run`,
  ];
  for (const x of r.runs) {
    lines.push(
      `  ${x.name.padEnd(16)} requests ${String(x.requests).padStart(5)} (floor ${x.floorRequests}, 429: ${x.throttled}), ` +
        `wall ${x.wallSeconds} s (PostHog's floor ${x.floorSeconds} s at ${x.perMinute}/min, chain ${x.chain} × ${x.latencyMs} ms` +
        `${x.floorSeconds > 0 ? `; ratio ${round(x.wallSeconds / x.floorSeconds, 2)}` : ""}), ${x.read.dashboards} dashboards read, ` +
        `${x.progressLines} progress lines`,
    );
  }
  for (const t of r.targets)
    lines.push(`  target ${t.name}: ${t.value} ≤ ${t.limit}: ${t.ok ? "met" : "MISSED"}`);
  return lines.join("\n");
}
