/**
 * The ENGINE-KILL soak (part of `npm run soak`): SIGKILL of the stand-in engine's CLI
 * (`node dist/tools/stack/cli.js up|destroy …`, tools/stack/cli.ts) at random points while it applies the GitOps
 * example (examples/gitops, the root Pulumi.yaml) to an emulator started in this process, with a DNS automation
 * publishing the domain's TXT record as `npm start` does; then the same command again, un-killed, until it exits
 * 0 and a preview shows no changes, as a user re-runs `pulumi up` after a crash.
 *
 * First, un-killed runs of each kind are measured (an `up` from an empty stack, an `up` of the other settings, a
 * `destroy`). Then each kill is one episode, in a fixed cycle of kinds:
 * - `create`: from an empty stack, `up` of the dev settings, killed;
 * - `change`: from the dev settings deployed, `up` of the other settings (in-place updates of the project, a
 *   dashboard and the sharing, a replaced invite, a new collaborator), killed;
 * - `destroy`: from the dev settings deployed, `destroy`, killed, then `destroy` again until it exits 0;
 * and two kinds of kill points, alternating per kind:
 * - `time`: a uniform random delay within the shortest un-killed run of that kind so far;
 * - `operation`: the n-th provider operation the run records as pending in its checkpoint (n random within the
 *   operations of an un-killed run), plus a random delay up to 1.5 API round trips, so that the kill lands while a
 *   write is on the wire.
 * The emulator answers every API request after `latencyMs` (default 40 ms, a real server's order of magnitude),
 * and applies a write even when its client has died meanwhile, as a real server does.
 *
 * Each episode records what the checkpoint held when the engine died (pending operations), which writes the
 * server applied that the checkpoint does not record, and whether a process of the killed run (the program, the
 * dynamic-provider host) outlived it (found by a marker in their environment). Once re-run, it audits:
 * - duplicates: two live server objects for one declared resource (same project name, same dashboard name in
 *   one project, same invite e-mail, same domain);
 * - orphans: live objects, not in the seeded world, whose id no checkpoint entry holds;
 * - missing: checkpoint entries whose object is gone;
 * - differences: what `refresh` changes in the converged checkpoint (state ≠ server), beyond the drift un-killed
 *   runs show too;
 * then removes the orphans through the API (so a finding is counted once), destroys (un-killed, for `create` and
 * `change`) and compares the organization with the seeded one: members' levels, invites, domains, projects,
 * dashboards of the seeded project, every batch export's `paused` flag; then puts back what differs.
 * When the re-runs keep failing on an object the checkpoint does not hold (a lost Domain create), the operator
 * removes the orphans and runs again: the stand-in, like the engine without `--import-pending-creates`, has no
 * other way out.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  watch,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseDocument } from "yaml";
import { startEmulator } from "../emulator";
import { dnsAutomation, type SeedApi, seedApi } from "../tools/stack/seed-api";
import { repoRoot } from "./soak-core";

/** Options of {@link runEngineKills}. */
export interface EngineKillOptions {
  /** SIGKILLs of the engine, one per episode (default 12). */
  kills?: number;
  /** Added latency of every emulator API request in ms (default 40). */
  latencyMs?: number;
  /** Seed of the random kill points (default: random; printed in the report). */
  seed?: number;
  /** Un-killed re-runs allowed per episode before it counts as not converged (default 4). */
  maxRecoveryRuns?: number;
  /** Progress lines (optional). */
  log?: (line: string) => void;
}

export type EpisodeKind = "create" | "change" | "destroy";

/** A provider operation the checkpoint recorded as under way when the engine died. */
export interface PendingAtKill {
  operation: "creating" | "updating" | "deleting";
  type: string;
  name: string;
}

/** One kill and what followed. */
export interface KillRecord {
  index: number;
  kind: EpisodeKind;
  /** The settings variant the killed run applied (`destroy`: the one deployed). */
  variant: "v1" | "v2";
  trigger: "time" | "operation";
  /** For `operation` kills: the n-th pending operation of the run. */
  nth?: number;
  /** When SIGKILL was sent, ms after the CLI was spawned; undefined when the run ended before the kill point. */
  killedAtMs?: number;
  /** The run ended (exit status) before its kill point: nothing was killed. */
  finishedFirst?: number;
  /** Provider operations of the killed run under way in the checkpoint it left. */
  pending: PendingAtKill[];
  /**
   * Writes the server applied that the killed run's checkpoint does not record (a create whose answer the engine
   * never saved): live objects no checkpoint entry holds, a batch export paused with no BatchExportPause recorded.
   */
  lostAtKill: string[];
  /** Pending creates of earlier killed runs the checkpoint still held (the engine keeps them until a refresh clears them). */
  carried: number;
  /** Resources in that checkpoint (the stack resource excluded). */
  stateResources: number;
  /** Processes of the killed run (its program and provider host) found alive right after the kill. */
  childrenAtKill: number;
  /** ms until none was left (undefined when one outlived the wait). */
  childrenGoneMs?: number;
  /** How long each of them outlived the kill (ms, within 10 ms), by role: `program`, `host` (dynamic-provider host), `engine`. */
  outlivedMs: Record<string, number>;
  /** Processes of the killed run still alive 10 s after the kill (command lines). */
  leaked: string[];
  /** Un-killed runs until one exited 0 and the following preview showed no changes. */
  recoveryRuns: number;
  /**
   * The re-runs kept failing on an object the checkpoint does not hold (e.g. `Domain … already exists`), so the
   * operator removed the orphans before running again (the stand-in has no `refresh --import-pending-creates`).
   */
  neededOperator: boolean;
  converged: boolean;
  /** Errors of the failed recovery runs (first line each). */
  recoveryErrors: string[];
  duplicates: string[];
  orphans: string[];
  missing: string[];
  /** Resources whose refresh changed the converged checkpoint (`type name: properties`). */
  differences: string[];
  /** After the episode's destroy: how the organization differs from the seeded one. */
  notSeeded: string[];
  /** Orphans removed through the API after the audit. */
  cleanedUp: string[];
}

/** The engine-kill soak's result. */
export interface EngineKillReport {
  seed: number;
  latencyMs: number;
  /**
   * The un-killed runs measured first: an `up` from an empty stack, an `up` of the other settings, a `destroy`
   * (durations in ms, and the provider operations each recorded as pending in its checkpoint).
   */
  baseline: {
    upMs: number;
    upOperations: number;
    changeMs: number;
    changeOperations: number;
    destroyMs: number;
    destroyOperations: number;
  };
  /** How the organization differed from the seeded one after that destroy (empty when as seeded). */
  baselineNotSeeded: string[];
  /** What `refresh` changes after an un-killed `up` (the example's own drift); not counted as differences. */
  expectedDrift: string[];
  kills: KillRecord[];
  totals: {
    kills: number;
    /** Kills that landed while the checkpoint recorded a provider operation under way. */
    duringOperation: number;
    /** Creates under way when the engine died (each may or may not have reached the server). */
    pendingCreates: number;
    /** Writes applied by the server and not recorded in the checkpoint when the engine died. */
    lostWrites: number;
    notConverged: number;
    duplicates: number;
    orphans: number;
    missing: number;
    differences: number;
    leakedProcesses: number;
    /** The longest a process of a killed run (program, provider host) outlived it, in ms. */
    longestOutlivedMs: number;
    /** The same by role (`program`, `host`). */
    longestOutlivedMsByRole: Record<string, number>;
    notSeededAfterDestroy: number;
    cleanedUp: number;
    /** Kills after which the re-runs only converged once the operator removed orphans. */
    neededOperator: number;
    /**
     * Per resource type: creates under way at a kill, those the server applied without the checkpoint recording
     * them, and what followed (duplicates; re-runs failing until the operator stepped in; a destroy not restoring
     * the seeded organization).
     */
    byType: Record<
      string,
      { pendingCreates: number; lost: number; duplicates: number; stuck: number; notRestored: number }
    >;
  };
  /** After the last episode, a final destroy: the organization equals the seeded one (empty when so). */
  finalNotSeeded: string[];
  /** Processes carrying this run's marker still alive at the end. */
  finalLeaked: string[];
  /** The API key found in clear text in a checkpoint (file names). */
  keyLeaks: string[];
  wallMs: number;
}

/** The resource type a finding names first (`Project "x"`, `BatchExportPause: …`, `posthog:Domain …`). */
const typeOf = (finding: string): string => /^(?:posthog:)?([A-Za-z]+)/.exec(finding)?.[1] ?? "other";

function tallyByType(records: KillRecord[]): EngineKillReport["totals"]["byType"] {
  const out: EngineKillReport["totals"]["byType"] = {};
  const row = (t: string) => {
    out[t] ??= { pendingCreates: 0, lost: 0, duplicates: 0, stuck: 0, notRestored: 0 };
    return out[t];
  };
  for (const r of records) {
    if (r.killedAtMs === undefined) continue;
    for (const p of r.pending) if (p.operation === "creating") row(p.type).pendingCreates++;
    for (const x of r.lostAtKill) row(typeOf(x)).lost++;
    for (const x of r.duplicates) row(typeOf(x)).duplicates++;
    if (r.neededOperator)
      for (const t of new Set(r.recoveryErrors.filter((e) => /^posthog:/.test(e)).map(typeOf)))
        row(t).stuck++;
    for (const x of r.notSeeded) {
      if (x.startsWith("batchExportsPaused")) row("BatchExportPause").notRestored++;
      else row(typeOf(x)).notRestored++;
    }
  }
  return out;
}

/** mulberry32: a small seeded PRNG, so that a run's kill points can be replayed with `--seed`. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Live processes whose environment holds `marker` (`/proc/<pid>/environ`), with their command lines. */
export function processesWithMarker(marker: string): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  } catch {
    return out; // no procfs: nothing can be checked
  }
  for (const p of pids) {
    const pid = Number(p);
    if (pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      if (/^\d+ \(.*\) Z/s.test(stat)) continue; // a zombie runs nothing
      if (!readFileSync(`/proc/${p}/environ`).includes(marker)) continue;
      // the command line without the inline `--import data:…` module (long), cut for the report
      const cmd = readFileSync(`/proc/${p}/cmdline`, "utf8")
        .split("\0")
        .filter((a) => !a.startsWith("data:"))
        .join(" ")
        .trim();
      out.push({ pid, cmd: cmd.length > 200 ? `${cmd.slice(0, 200)}…` : cmd });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

interface CheckpointView {
  resources: { urn: string; type: string; name: string; id?: string; custom: boolean }[];
  pendingOperations: {
    urn: string;
    type: string;
    name: string;
    operation: PendingAtKill["operation"];
    startedAt: string;
    inputs?: Record<string, unknown>;
  }[];
}

function readCheckpoint(path: string): CheckpointView {
  if (!existsSync(path)) return { resources: [], pendingOperations: [] };
  const cp = JSON.parse(readFileSync(path, "utf8")) as Partial<CheckpointView>;
  return { resources: cp.resources ?? [], pendingOperations: cp.pendingOperations ?? [] };
}

const shortType = (t: string) => t.replace(/^pulumi-nodejs:dynamic\/posthog:/, "");

type Api = SeedApi;

const ORG = "/api/organizations/@current";

/** A live server object of a kind a declared resource creates. */
interface Live {
  type: "Project" | "Dashboard" | "Invite" | "Domain" | "DashboardCollaborator";
  id: string;
  /** What a declared resource is identified by (two live objects with one identity = a duplicate). */
  identity: string;
  /** How to remove it (operator clean-up). */
  remove: () => Promise<unknown>;
}

async function liveObjects(a: Api): Promise<Live[]> {
  const out: Live[] = [];
  const projects = await a.all<{ id: number; name: string }>(`${ORG}/projects/`);
  for (const p of projects) {
    out.push({
      type: "Project",
      id: String(p.id),
      identity: `Project "${p.name}"`,
      remove: () => a.call("DELETE", `${ORG}/projects/${p.id}/`),
    });
    const dashboards = await a.all<{ id: number; name: string; restriction_level?: number }>(
      `/api/projects/${p.id}/dashboards/`,
    );
    for (const d of dashboards) {
      const path = `/api/projects/${p.id}/dashboards/${d.id}`;
      out.push({
        type: "Dashboard",
        id: String(d.id),
        identity: `Dashboard "${d.name}" in project ${p.id}`,
        remove: () => a.call("PATCH", `${path}/`, { deleted: true }),
      });
      const collaborators = await a.all<{ user: { uuid: string } }>(`${path}/collaborators/`);
      for (const c of collaborators) {
        out.push({
          type: "DashboardCollaborator",
          id: `${d.id}/${c.user.uuid}`,
          identity: `DashboardCollaborator ${d.id}/${c.user.uuid}`,
          remove: () => a.call("DELETE", `${path}/collaborators/${c.user.uuid}/`),
        });
      }
    }
  }
  for (const i of await a.all<{ id: string; target_email: string }>(`${ORG}/invites/`)) {
    out.push({
      type: "Invite",
      id: i.id,
      identity: `Invite ${i.target_email}`,
      remove: () => a.call("DELETE", `${ORG}/invites/${i.id}/`),
    });
  }
  for (const d of await a.all<{ id: string; domain: string }>(`${ORG}/domains/`)) {
    out.push({
      type: "Domain",
      id: d.id,
      identity: `Domain ${d.domain}`,
      remove: () => a.call("DELETE", `${ORG}/domains/${d.id}/`),
    });
  }
  return out;
}

/** The organization as `destroy` must leave it. */
async function orgSnapshot(a: Api, seededProjects: number[]): Promise<Record<string, unknown>> {
  const members = await a.all<{ user: { email: string }; level: number }>(`${ORG}/members/`);
  const exports = await a.all<{ id: string; paused: boolean }>(`${ORG}/batch_exports/`);
  const dashboards: Record<string, number[]> = {};
  for (const p of seededProjects) {
    dashboards[p] = (await a.all<{ id: number }>(`/api/projects/${p}/dashboards/`)).map((d) => d.id).sort();
  }
  return {
    members: Object.fromEntries(members.map((m) => [m.user.email, m.level]).sort()),
    invites: (await a.all<{ target_email: string }>(`${ORG}/invites/`)).map((i) => i.target_email).sort(),
    domains: (await a.all<{ domain: string }>(`${ORG}/domains/`)).map((d) => d.domain).sort(),
    projects: (await a.all<{ id: number }>(`${ORG}/projects/`)).map((p) => p.id).sort((x, y) => x - y),
    dashboards,
    batchExportsPaused: Object.fromEntries(exports.map((b) => [b.id, b.paused]).sort()),
  };
}

function snapshotDiff(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  return Object.keys(before)
    .filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]))
    .map((k) => `${k}: seeded ${JSON.stringify(before[k])}, now ${JSON.stringify(after[k])}`);
}

/** How a CLI run is to be killed. */
type KillPlan =
  | { trigger: "none" }
  | { trigger: "time"; afterMs: number }
  | { trigger: "operation"; nth: number; extraMs: number };

interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  durationMs: number;
  /** The `--json` line (absent when killed). */
  result?: {
    ok: boolean;
    counts: Record<string, number>;
    changes: { op: string; type: string; name: string; diffs: string[]; error?: string }[];
    errors: string[];
  };
  stderr: string;
  killedAtMs?: number;
  /** Distinct pending operations the run recorded (seen by watching its checkpoint). */
  operationsSeen: number;
}

/**
 * Runs the engine-kill soak (see the module doc). Starts and stops its own emulator; never throws for what it
 * measures (it is in the report), only for setup errors.
 */
export async function runEngineKills(options: EngineKillOptions = {}): Promise<EngineKillReport> {
  const t0 = performance.now();
  const kills = options.kills ?? 12;
  const latencyMs = options.latencyMs ?? 40;
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const maxRecovery = options.maxRecoveryRuns ?? 4;
  const log = options.log ?? (() => {});
  const random = prng(seed);
  const root = repoRoot();
  const cli = join(root, "dist", "tools", "stack", "cli.js");
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` first`);

  const work = mkdtempSync(join(tmpdir(), "posthog-engine-kills-"));
  const statePath = join(work, "dev.json");
  const marker = `POSTHOG_ENGINE_KILL_SOAK=${work}`;
  const variants = { v1: join(work, "Pulumi.v1.yaml"), v2: join(work, "Pulumi.v2.yaml") } as const;
  copyFileSync(join(root, "examples", "gitops", "Pulumi.dev.yaml"), variants.v1);
  {
    // v2: in-place updates (project timezone, dashboard description, public sharing), a replaced invite
    // (level), a new collaborator.
    const doc = parseDocument(readFileSync(variants.v1, "utf8"));
    doc.setIn(["config", "posthog-gitops:project", "timezone"], "UTC");
    doc.setIn(["config", "posthog-gitops:teamDashboardDescription"], "v2");
    doc.setIn(["config", "posthog-gitops:publicKpis"], true);
    doc.setIn(["config", "posthog-gitops:kpiEditors"], ["mia.member@example.com", "max.member@example.com"]);
    doc.setIn(["config", "posthog-gitops:invites", 0, "level"], "admin");
    writeFileSync(variants.v2, doc.toString());
  }

  const emulator = await startEmulator({ rateLimit: false, inviteBudget: false, latencyMs });
  const a = seedApi(emulator.url, emulator.apiKey);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    POSTHOG_HOST: emulator.url,
    POSTHOG_API_KEY: emulator.apiKey,
    POSTHOG_ORGANIZATION_ID: emulator.organizationId,
    POSTHOG_PROJECT_ID: String(emulator.projectId),
    POSTHOG_RATE_LIMIT: "off",
    // the language host's own switch: no type-check of the example on every run (it is type-checked by lint)
    PULUMI_NODEJS_TRANSPILE_ONLY: "true",
    // the checkpoint's key file beside it, whatever the caller's environment holds
    PULUMI_CONFIG_PASSPHRASE: "",
    POSTHOG_ENGINE_KILL_SOAK: work,
  };
  const dns = dnsAutomation(a, 100);
  const children = new Set<ChildProcess>();

  /** Durations (ms) and provider operations of un-killed complete runs of each kind: the kill points' scale. */
  const scale: Record<EpisodeKind, { ms: number[]; operations: number }> = {
    create: { ms: [], operations: 0 },
    change: { ms: [], operations: 0 },
    destroy: { ms: [], operations: 0 },
  };
  // the shortest: a kill point within it lands inside the run (the first run is slower, with cold caches)
  const shortest = (xs: number[]) => Math.min(...xs);

  /** One CLI run; `plan` says when to SIGKILL it. */
  const runCli = (args: string[], plan: KillPlan): Promise<CliRun> =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const startedWall = Date.now();
      const fromEmpty = stackResources().length === 0;
      const child = spawn(
        process.execPath,
        [cli, ...args, "--cwd", root, "--stack", "dev", "--state", statePath, "--json"],
        { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] },
      );
      children.add(child);
      let stdout = "";
      let stderr = "";
      child.stdout?.on("data", (c: Buffer) => {
        stdout += c.toString();
      });
      child.stderr?.on("data", (c: Buffer) => {
        stderr += c.toString();
      });
      let killedAtMs: number | undefined;
      let timer: NodeJS.Timeout | undefined;
      const kill = () => {
        if (killedAtMs !== undefined || child.exitCode !== null || child.signalCode !== null) return;
        killedAtMs = Math.round(performance.now() - started);
        child.kill("SIGKILL");
      };
      // Distinct pending operations of this run, seen by watching the checkpoint (saved atomically by rename).
      const seen = new Set<string>();
      const look = () => {
        try {
          for (const p of readCheckpoint(statePath).pendingOperations) {
            if (Date.parse(p.startedAt) < startedWall - 1000) continue; // carried over from an earlier run
            seen.add(`${p.operation} ${p.urn} ${p.startedAt}`);
          }
        } catch {
          return; // between writes
        }
        if (plan.trigger === "operation" && seen.size >= plan.nth && timer === undefined)
          timer = setTimeout(kill, plan.extraMs);
      };
      const watcher = watch(work, (_event, file) => {
        if (file === "dev.json") look();
      });
      if (plan.trigger === "time") timer = setTimeout(kill, plan.afterMs);
      child.once("error", (e) => {
        watcher.close();
        reject(e);
      });
      child.once("close", (code, signal) => {
        children.delete(child);
        watcher.close();
        if (timer) clearTimeout(timer);
        look();
        // un-killed complete runs set the scale of the kill points: an up from an empty stack, a whole destroy
        const ms = Math.round(performance.now() - started);
        if (killedAtMs === undefined && code === 0) {
          const kind =
            args[0] === "destroy" && !fromEmpty
              ? "destroy"
              : args[0] === "up" && fromEmpty
                ? "create"
                : undefined;
          if (kind) {
            scale[kind].ms.push(ms);
            scale[kind].operations = Math.max(scale[kind].operations, seen.size);
          }
        }
        const line = stdout.trim().split("\n").at(-1);
        let result: CliRun["result"];
        try {
          result = line ? (JSON.parse(line) as CliRun["result"]) : undefined;
        } catch {
          result = undefined;
        }
        resolve({
          code,
          signal,
          durationMs: ms,
          ...(result ? { result } : {}),
          stderr,
          ...(killedAtMs === undefined ? {} : { killedAtMs }),
          operationsSeen: seen.size,
        });
      });
    });

  const firstErrors = (r: CliRun): string[] => {
    const errs = [
      ...(r.result?.changes ?? []).filter((c) => c.error).map((c) => `${c.type} ${c.name}: ${c.error}`),
      ...(r.result?.errors ?? []),
    ];
    if (errs.length === 0 && r.code !== 0) errs.push(r.stderr.trim().split("\n").slice(-3).join(" | "));
    return errs.map((e) => e.split("\n")[0]?.slice(0, 300) ?? "");
  };

  const stackResources = () =>
    readCheckpoint(statePath).resources.filter((r) => r.custom && r.type !== "pulumi:pulumi:Stack");
  const live = () => liveObjects(a);

  const seededLive = new Set((await live()).map((l) => `${l.type}:${l.id}`));
  const seededProjects = (await a.all<{ id: number }>(`${ORG}/projects/`)).map((p) => p.id);
  const seeded = await orgSnapshot(a, seededProjects);
  const keyLeaks = new Set<string>();
  const checkKey = () => {
    if (existsSync(statePath) && readFileSync(statePath, "utf8").includes(emulator.apiKey))
      keyLeaks.add(statePath);
  };

  /** Server vs checkpoint: duplicates, orphans (live, not seeded, not in the checkpoint), missing. */
  const audit = async () => {
    const objects = (await live()).filter((l) => !seededLive.has(`${l.type}:${l.id}`));
    const state = stackResources();
    const known = new Set(state.map((r) => `${shortType(r.type)}:${r.id}`));
    const counts = new Map<string, number>();
    for (const o of objects) counts.set(o.identity, (counts.get(o.identity) ?? 0) + 1);
    const duplicates = [...counts].filter(([, c]) => c > 1).map(([k, c]) => `${k} ×${c}`);
    const orphanObjects = objects.filter((o) => !known.has(`${o.type}:${o.id}`));
    const liveIds = new Set((await live()).map((l) => `${l.type}:${l.id}`));
    const missing = state
      .filter((r) =>
        ["Project", "Dashboard", "Invite", "Domain", "DashboardCollaborator"].includes(shortType(r.type)),
      )
      .filter((r) => !liveIds.has(`${shortType(r.type)}:${r.id}`))
      .map((r) => `${shortType(r.type)} ${r.name} (${r.id})`);
    return {
      duplicates,
      orphans: orphanObjects.map((o) => `${o.identity} (id ${o.id})`),
      orphanObjects,
      missing,
    };
  };

  /**
   * Writes the server applied and the checkpoint does not record: live objects no checkpoint entry holds, and a
   * batch export paused while no BatchExportPause is in the checkpoint (its create paused it, and the next create
   * will find it paused).
   */
  const lostWrites = async (): Promise<string[]> => {
    const state = stackResources();
    const known = new Set(state.map((r) => `${shortType(r.type)}:${r.id}`));
    const out = (await live())
      .filter((l) => !seededLive.has(`${l.type}:${l.id}`) && !known.has(`${l.type}:${l.id}`))
      .map((l) => `${l.identity} (id ${l.id})`);
    const exportsPaused = seeded.batchExportsPaused as Record<string, boolean>;
    const pauses = new Set(state.filter((r) => shortType(r.type) === "BatchExportPause").map((r) => r.id));
    for (const b of await a.all<{ id: string; paused: boolean }>(`${ORG}/batch_exports/`))
      if (b.paused && exportsPaused[b.id] === false && !pauses.has(b.id))
        out.push(`BatchExportPause: batch export ${b.id} paused, no BatchExportPause in the checkpoint`);
    return out;
  };

  /** Un-killed `args` runs until one exits 0 (and, for `up`, a preview shows no changes). */
  const recover = async (
    args: string[],
    isUp: boolean,
  ): Promise<{ runs: number; converged: boolean; errors: string[] }> => {
    const errors: string[] = [];
    for (let runs = 1; runs <= maxRecovery; runs++) {
      const r = await runCli(args, { trigger: "none" });
      checkKey();
      if (r.code !== 0) {
        errors.push(...firstErrors(r));
        continue;
      }
      if (!isUp) return { runs, converged: true, errors };
      const p = await runCli(["preview", "--config-file", args[2] ?? "", "--expect-no-changes"], {
        trigger: "none",
      });
      if (p.code === 0) return { runs, converged: true, errors };
      errors.push(
        `preview after up: ${(p.result?.changes ?? []).map((c) => `${c.op} ${c.type} ${c.name}`).join(", ") || firstErrors(p).join("; ")}`,
      );
    }
    return { runs: maxRecovery, converged: false, errors };
  };

  /** `refresh`: the resources whose refreshed state differs from the checkpoint (none when state = server). */
  const differences = async (): Promise<string[]> => {
    const r = await runCli(["refresh"], { trigger: "none" });
    const out = (r.result?.changes ?? []).map(
      (c) =>
        `${c.type} ${c.name}: ${c.op}${c.diffs.length ? ` (${c.diffs.join(", ")})` : ""}${c.error ? ` ${c.error}` : ""}`,
    );
    if (r.code !== 0 && out.length === 0) out.push(`refresh failed: ${firstErrors(r).join("; ")}`);
    return out;
  };

  /** Puts the organization back as seeded where an episode left it otherwise (operator clean-up). */
  const restoreSeeded = async (): Promise<string[]> => {
    const done: string[] = [];
    const exportsPaused = seeded.batchExportsPaused as Record<string, boolean>;
    for (const b of await a.all<{ id: string; paused: boolean }>(`${ORG}/batch_exports/`)) {
      const want = exportsPaused[b.id];
      if (want === undefined || want === b.paused) continue;
      await a.call("POST", `${ORG}/batch_exports/${b.id}/${want ? "pause" : "unpause"}/`, {});
      done.push(`batch export ${b.id} ${want ? "paused" : "unpaused"} again`);
    }
    const levels = seeded.members as Record<string, number>;
    for (const m of await a.all<{ user: { email: string; uuid: string }; level: number }>(
      `${ORG}/members/`,
    )) {
      const want = levels[m.user.email];
      if (want === undefined || want === m.level) continue;
      await a.call("PATCH", `${ORG}/members/${m.user.uuid}/`, { level: want });
      done.push(`member ${m.user.email} level ${want} again`);
    }
    return done;
  };

  const ensureEmpty = async () => {
    if (stackResources().length === 0) return;
    const d = await recover(["destroy"], false);
    if (!d.converged) throw new Error(`setup destroy failed: ${d.errors.join("; ")}`);
  };
  const ensureDeployed = async () => {
    await ensureEmpty();
    const u = await recover(["up", "--config-file", variants.v1], true);
    if (!u.converged) throw new Error(`setup up failed: ${u.errors.join("; ")}`);
  };

  const records: KillRecord[] = [];
  let baseline: EngineKillReport["baseline"] = {
    upMs: 0,
    upOperations: 0,
    changeMs: 0,
    changeOperations: 0,
    destroyMs: 0,
    destroyOperations: 0,
  };
  let baselineNotSeeded: string[] = [];
  let expectedDrift: string[] = [];
  try {
    // The kill points' scale: un-killed runs of each kind (an up from an empty stack, an up of the other settings,
    // a destroy). The refresh after them gives the example's own drift (the Domain's verification and SSO
    // enforcement happen after its create: the README's CLI sequence runs refresh + up for them), which an
    // episode's refresh is compared against.
    const base = await runCli(["up", "--config-file", variants.v1], { trigger: "none" });
    if (base.code !== 0) throw new Error(`the baseline up failed: ${firstErrors(base).join("; ")}`);
    const change = await runCli(["up", "--config-file", variants.v2], { trigger: "none" });
    if (change.code !== 0) throw new Error(`the baseline change failed: ${firstErrors(change).join("; ")}`);
    scale.change = { ms: [change.durationMs], operations: change.operationsSeen };
    expectedDrift = await differences();
    const baseDestroy = await runCli(["destroy"], { trigger: "none" });
    if (baseDestroy.code !== 0)
      throw new Error(`the baseline destroy failed: ${firstErrors(baseDestroy).join("; ")}`);
    baselineNotSeeded = snapshotDiff(seeded, await orgSnapshot(a, seededProjects));
    baseline = {
      upMs: base.durationMs,
      upOperations: base.operationsSeen,
      changeMs: change.durationMs,
      changeOperations: change.operationsSeen,
      destroyMs: baseDestroy.durationMs,
      destroyOperations: baseDestroy.operationsSeen,
    };
    log(
      `engine kills: un-killed up ${baseline.upMs} ms (${baseline.upOperations} provider operations), change ${baseline.changeMs} ms (${baseline.changeOperations}), ` +
        `destroy ${baseline.destroyMs} ms (${baseline.destroyOperations}); drift of un-killed runs: ${expectedDrift.join("; ") || "none"}; seed ${seed}`,
    );

    const cycle: EpisodeKind[] = ["create", "change", "create", "destroy"];
    const triggerCount: Record<EpisodeKind, number> = { create: 0, change: 0, destroy: 0 };
    for (let index = 1; index <= kills; index++) {
      const kind = cycle[(index - 1) % cycle.length] as EpisodeKind;
      const trigger: "time" | "operation" = triggerCount[kind]++ % 2 === 0 ? "operation" : "time";
      if (kind === "create") await ensureEmpty();
      else await ensureDeployed();
      const variant: "v1" | "v2" = kind === "change" ? "v2" : "v1";
      const args = kind === "destroy" ? ["destroy"] : ["up", "--config-file", variants[variant]];
      // kill points within what un-killed runs of this kind took so far (the machine's load varies)
      const nth = 1 + Math.floor(random() * Math.max(1, scale[kind].operations));
      const plan: KillPlan =
        trigger === "operation"
          ? { trigger, nth, extraMs: Math.floor(random() * latencyMs * 1.5) }
          : {
              trigger,
              afterMs: Math.floor(random() * shortest(scale[kind].ms)),
            };
      const carriedBefore = readCheckpoint(statePath).pendingOperations.length;

      const killed = await runCli(args, plan);
      checkKey();
      const rec: KillRecord = {
        index,
        kind,
        variant,
        trigger,
        ...(trigger === "operation" ? { nth } : {}),
        pending: [],
        lostAtKill: [],
        carried: carriedBefore,
        stateResources: 0,
        childrenAtKill: 0,
        outlivedMs: {},
        leaked: [],
        recoveryRuns: 0,
        neededOperator: false,
        converged: false,
        recoveryErrors: [],
        duplicates: [],
        orphans: [],
        missing: [],
        differences: [],
        notSeeded: [],
        cleanedUp: [],
      };
      if (killed.killedAtMs === undefined) {
        rec.finishedFirst = killed.code ?? -1;
      } else {
        rec.killedAtMs = killed.killedAtMs;
        // what outlived the engine (the program, the provider host), and for how long
        const t = performance.now();
        const atKill = processesWithMarker(marker);
        rec.childrenAtKill = atKill.length;
        const role = (cmd: string) =>
          cmd.includes("dynamic-provider")
            ? "host"
            : cmd.includes("cmd/run")
              ? "program"
              : cmd.includes("tools/stack/cli.js")
                ? "engine"
                : "other";
        let left = atKill;
        while (left.length > 0 && performance.now() - t < 10_000) {
          await sleep(10);
          const now = processesWithMarker(marker);
          for (const p of left)
            if (!now.some((q) => q.pid === p.pid)) {
              const r = role(p.cmd);
              rec.outlivedMs[r] = Math.max(rec.outlivedMs[r] ?? 0, Math.round(performance.now() - t));
            }
          left = now;
        }
        if (left.length === 0) rec.childrenGoneMs = Math.round(performance.now() - t);
        else rec.leaked = left.map((p) => `${p.pid} ${p.cmd}`);
      }
      if (rec.killedAtMs !== undefined) {
        // what the server applied that the checkpoint does not hold (writes still on the wire finish first)
        await sleep(latencyMs * 3 + 100);
        rec.lostAtKill = await lostWrites();
      }
      const cp = readCheckpoint(statePath);
      rec.pending = cp.pendingOperations.slice(carriedBefore).map((p) => ({
        operation: p.operation,
        type: shortType(p.type),
        name: p.name,
      }));
      rec.stateResources = cp.resources.filter((r) => r.custom).length;
      const when =
        rec.killedAtMs === undefined
          ? `not killed: the run ended first (exit ${rec.finishedFirst})`
          : `killed at ${rec.killedAtMs} ms (${plan.trigger === "operation" ? `operation #${nth} + ${plan.extraMs} ms` : "random time"})`;
      log(
        `kill ${index}/${kills} ${kind}: ${when}; checkpoint: ${rec.stateResources} resources, pending [${rec.pending.map((p) => `${p.operation} ${p.type} ${p.name}`).join(", ")}]` +
          `; applied, not recorded: ${rec.lostAtKill.join(", ") || "nothing"}`,
      );

      // recover as a user would: the same command again until it succeeds
      let r = await recover(args, kind !== "destroy");
      rec.recoveryRuns = r.runs;
      rec.recoveryErrors = r.errors;
      let au = await audit();
      if (!r.converged && au.orphanObjects.length > 0) {
        // stuck on an object the state does not know (e.g. a domain a lost create made): the operator removes the
        // orphans, then runs the command again
        rec.neededOperator = true;
        rec.duplicates = au.duplicates;
        rec.orphans = au.orphans;
        for (const o of au.orphanObjects) await o.remove().catch(() => undefined);
        rec.cleanedUp.push(...au.orphanObjects.map((o) => `${o.identity} (id ${o.id})`));
        r = await recover(args, kind !== "destroy");
        rec.recoveryRuns += r.runs;
        rec.recoveryErrors.push(...r.errors);
        au = await audit();
      }
      rec.converged = r.converged;
      rec.duplicates = [...new Set([...rec.duplicates, ...au.duplicates])];
      rec.orphans = [...new Set([...rec.orphans, ...au.orphans])];
      rec.missing = au.missing;
      if (kind !== "destroy" && r.converged) {
        const drift = await differences();
        rec.differences = drift.filter((d) => !expectedDrift.includes(d));
      }
      // each finding is counted once: the orphans go before the destroy that ends the episode
      for (const o of au.orphanObjects) await o.remove().catch(() => undefined);
      rec.cleanedUp.push(...au.orphanObjects.map((o) => `${o.identity} (id ${o.id})`));
      if (kind !== "destroy") await ensureEmpty();
      rec.notSeeded = snapshotDiff(seeded, await orgSnapshot(a, seededProjects));
      rec.cleanedUp.push(...(await restoreSeeded()));
      rec.cleanedUp = [...new Set(rec.cleanedUp)];
      log(
        `  recovered in ${rec.recoveryRuns} run(s), converged ${rec.converged}; duplicates ${rec.duplicates.length}, orphans ${rec.orphans.length}, ` +
          `missing ${rec.missing.length}, differences ${rec.differences.length}; after destroy the organization ${rec.notSeeded.length === 0 ? "is as seeded" : "differs"}; ` +
          `processes of the killed run: ${rec.childrenAtKill} at kill, ${rec.leaked.length} leaked${rec.childrenGoneMs !== undefined ? ` (all gone after ${rec.childrenGoneMs} ms)` : ""}`,
      );
      for (const x of [
        ...rec.duplicates.map((d) => `duplicate: ${d}`),
        ...rec.orphans.map((d) => `orphan: ${d}`),
        ...rec.missing.map((d) => `missing: ${d}`),
        ...rec.differences.map((d) => `difference: ${d}`),
        ...rec.notSeeded.map((d) => `not as seeded: ${d}`),
        ...rec.recoveryErrors.map((d) => `recovery error: ${d}`),
        ...rec.leaked.map((d) => `leaked: ${d}`),
      ])
        log(`    ${x}`);
      records.push(rec);
    }

    // the end: nothing deployed, the organization as seeded, no process of any run left
    await ensureEmpty();
    const finalNotSeeded = snapshotDiff(seeded, await orgSnapshot(a, seededProjects));
    const finalLeaked = processesWithMarker(marker).map((p) => `${p.pid} ${p.cmd}`);
    const sum = (f: (r: KillRecord) => number) => records.reduce((s, r) => s + f(r), 0);
    const killedRuns = records.filter((r) => r.killedAtMs !== undefined);
    return {
      seed,
      latencyMs,
      baseline,
      baselineNotSeeded,
      expectedDrift,
      kills: records,
      totals: {
        kills: killedRuns.length,
        duringOperation: killedRuns.filter((r) => r.pending.length > 0).length,
        pendingCreates: sum((r) => r.pending.filter((p) => p.operation === "creating").length),
        lostWrites: sum((r) => r.lostAtKill.length),
        notConverged: records.filter((r) => !r.converged).length,
        duplicates: sum((r) => r.duplicates.length),
        orphans: sum((r) => r.orphans.length),
        missing: sum((r) => r.missing.length),
        differences: sum((r) => r.differences.length),
        leakedProcesses: sum((r) => r.leaked.length),
        longestOutlivedMs: Math.max(0, ...records.map((r) => r.childrenGoneMs ?? 0)),
        longestOutlivedMsByRole: records.reduce<Record<string, number>>((acc, r) => {
          for (const [k, v] of Object.entries(r.outlivedMs)) acc[k] = Math.max(acc[k] ?? 0, v);
          return acc;
        }, {}),
        notSeededAfterDestroy: sum((r) => r.notSeeded.length),
        cleanedUp: sum((r) => r.cleanedUp.length),
        neededOperator: records.filter((r) => r.neededOperator).length,
        byType: tallyByType(records),
      },
      finalNotSeeded,
      finalLeaked,
      keyLeaks: [...keyLeaks],
      wallMs: Math.round(performance.now() - t0),
    };
  } finally {
    for (const c of children) c.kill("SIGKILL");
    await dns.stop();
    await emulator.close();
    rmSync(work, { recursive: true, force: true });
  }
}
