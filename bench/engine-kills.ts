/**
 * The ENGINE-KILL soak (part of `npm run soak`): SIGKILL of the real Pulumi CLI (`pulumi up|destroy --stack dev
 * --non-interactive …` through tools/pulumi.ts, on a local file backend of its own) and of its whole process group
 * (its Node.js language host, the program, the dynamic-provider host: {@link killTree}) at random points while it
 * applies the GitOps example (examples/gitops, the root Pulumi.yaml) to an emulator started in this process, with
 * a DNS automation publishing the domain's TXT record as `npm start` does; then what a user runs after such a crash:
 * `pulumi cancel --yes` when the killed run's lock refuses the next (the file backend locks each operation and a
 * killed CLI leaves its lock), the same command again, un-killed, until it exits 0 and `preview
 * --expect-no-changes` passes, and `pulumi refresh --clear-pending-creates` when the state still holds pending
 * creates (v3.274.1 keeps them through every `up`, with a warning, and through a non-interactive `refresh`
 * without that flag: pkg/backend/snapshot.go, cmd/pulumi/operations/refresh.go).
 *
 * Kills hit, in turn, the CLI's process group, the dynamic-provider host alone, the CLI again, and the program alone
 * (each found by the soak's marker in its environment), so a create's answer is lost with its provider while the
 * engine lives on too. The program declares six dashboards of one name (`posthog-gitops:weeklyReviews`, look-alikes):
 * six live dashboards of that name are expected, a seventh is a duplicate.
 *
 * First, un-killed runs of each kind are measured (an `up` from an empty stack, an `up` of the other settings, a
 * `destroy`). Then each kill is one episode, in a fixed cycle of kinds:
 * - `create`: from an empty stack, `up` of the dev settings, killed;
 * - `change`: from the dev settings deployed, `up` of the other settings (in-place updates of the project, a
 *   dashboard and the sharing, a replaced invite, a new collaborator), killed;
 * - `destroy`: from the dev settings deployed, `destroy`, killed, then `destroy` again until it exits 0;
 * and two kinds of kill points, alternating per kind:
 * - `time`: a uniform random delay within the shortest un-killed run of that kind so far;
 * - `operation`: the n-th provider operation the run records as pending in its state (the backend's
 *   `<stack>.json`, watched; n random within the operations of an un-killed run), plus a random delay up to 1.5
 *   API round trips, so that the kill lands while a write is on the wire.
 * The emulator answers every API request after `latencyMs` (default 40 ms, a real server's order of magnitude),
 * and applies a write even when its client has died meanwhile, as a real server does.
 *
 * Random timing rarely lands on the moment that matters most, so `killPoints` (`random`, `held`, `both`: every other
 * episode held, the default) adds `create` episodes whose kill point is made certain by the emulator's holds
 * (docs/emulator.md): every dashboard POST (`/dashboards/$`) is held; the first look-alike create at the head of the
 * hold (others before it are let through), once the state shows the engine has begun a second one, freezes the
 * engine (SIGSTOP of the `pulumi` process itself, so it can never record an answer), then that create is released
 * (the provider host answers it and journals the id), and once the next look-alike create is held at the emulator
 * (the host went on to it, one at a time), the target is SIGKILLed (in turn: the CLI's process group, the provider
 * host, the program; the CLI is resumed when it is not the target). PostHog then applies what is still held (the
 * next look-alike's create, and any other the engine sent meanwhile, on the wire with no one to record it) at one of
 * two moments, alternating: `before` the re-run (at the kill), or `during` it (2 s after the re-run's first GET of
 * dashboards, or at the latest 1 s before the end of the lost-create window of the earliest create still held,
 * POSTHOG_LOST_CREATE_WINDOW after the bench saw the first look-alike at the head of the hold: PostHog applying a
 * create later than that breaks the one rule the provider relies on, that a read started a window after a create
 * shows all it made; the record says which came first, and with the soak's 5 s window the window's end does: a
 * re-run's first read comes 5 to 20 s after a kill). `before` waits until the killed process is gone. Two kill point
 * kinds, alternating:
 * - `answered`: the next `up` (after `pulumi cancel`, run at once for the lock the killed run left) must adopt
 *   the answered create and the held one: six look-alikes, no duplicate, no orphan;
 * - `clear-pending`: the operator's way out, alternating: `pulumi cancel`, `pulumi refresh
 *   --clear-pending-creates`, then `up`; or `pulumi cancel`, `up`, `pulumi-posthog clear-pending` (it drops the
 *   pending creates whose resource the state holds; one it keeps is a finding), then `up` again. Either must
 *   leave no object the state does not hold.
 * The report counts kills and findings per kill point kind (`totals.byKillPoint`).
 *
 * Each episode records what the state held when the CLI died (`deployment.pending_operations` of `pulumi stack
 * export`), which writes the server applied that the state does not record, and whether a process of the killed
 * run (the language host, the program, the dynamic-provider host) outlived it (found by a marker in their
 * environment). Once re-run, it audits:
 * - duplicates: two live server objects for one declared resource (same project name, same dashboard name in
 *   one project, same invite e-mail, same domain);
 * - orphans: live objects, not in the seeded world, whose id no resource of the state holds;
 * - missing: resources of the state whose object is gone;
 * - differences: what `refresh` changes in the converged state (state ≠ server), beyond the drift un-killed
 *   runs show too;
 * then removes the orphans through the API (so a finding is counted once), destroys (un-killed, for `create` and
 * `change`) and compares the organization with the seeded one: members' levels, invites, domains, projects,
 * dashboards of the seeded project, every batch export's `paused` flag; then puts back what differs.
 * When the re-runs keep failing on an object the state does not hold (a lost Domain create), the operator
 * removes the orphans and runs again (`refresh --import-pending-creates URN ID` would need the id, which only the
 * server knows). When a re-run fails asking to declare an Invite with `adopt: true` (a create killed before its
 * answer cannot prove that the pending invite of its address is its own: provider/framework/lost-create.ts), the user does so,
 * as the message says (the example's `adopt`), and the re-runs go on: counted as `adoptedOnRequest`, not as the
 * operator's clean-up.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseDocument } from "yaml";
import { emulatorEnv, startEmulator } from "../emulator";
import {
  checkpointFile,
  type EngineEvent,
  ensureStack,
  exportStack,
  killTree,
  operationArgs,
  processesWithMarker,
  pulumiEnv,
  pulumiExecutable,
  pulumiOk,
  type RunResult,
  readProject,
  startPulumi,
  summarize,
  writeStackSettings,
} from "../tools/pulumi";
import { dnsAutomation, type SeedApi, seedApi } from "../tools/seed-api";
import { repoRoot, SOAK_FAULTS } from "./soak-core";

/** The processes kills hit, in turn (the CLI, the provider host, the program). */
const KILL_TARGETS: readonly KillTarget[] = ["cli", "provider", "cli", "program"];

/** Dashboards of one name the program declares (`posthog-gitops:weeklyReviews`), and that name. */
const LOOK_ALIKES = 6;
const LOOK_ALIKE_NAME = "Weekly review";

/** Options of {@link runEngineKills}. */
export interface EngineKillOptions {
  /** SIGKILLs of the engine, one per episode (default 12). */
  kills?: number;
  /** Added latency of every emulator API request in ms (default 40). */
  latencyMs?: number;
  /** Seed of the random kill points (default: random; printed in the report). */
  seed?: number;
  /** Un-killed re-runs allowed per episode before it counts as not converged (default 4; 8 with `faults`). */
  maxRecoveryRuns?: number;
  /**
   * The fault soak's mix (bench/soak-core.ts `SOAK_FAULTS`: 429s, 5xx, connection resets, writes applied and their
   * answer dropped; about 20 % of API requests) armed in the emulator during each killed run and its re-runs, and
   * off for the audits (default false).
   */
  faults?: boolean;
  /**
   * Which kill points (default `both`): `random` (the `time` and `operation` kinds), `held` (the `answered` and
   * `clear-pending` kinds, made certain by emulator holds; `create` episodes only), `both` (every other episode).
   */
  killPoints?: KillPoints;
  /** Progress lines (optional). */
  log?: (line: string) => void;
}

export type EpisodeKind = "create" | "change" | "destroy";

/** Which kill points a soak uses (see {@link EngineKillOptions.killPoints}). */
export type KillPoints = "random" | "held" | "both";

/** A kill point's kind: random (`time`, `operation`) or made certain by holds (`answered`, `clear-pending`). */
export type KillTrigger = "time" | "operation" | "answered" | "clear-pending";

/** When PostHog applies the creates a held kill left on the wire (see the module doc). */
export type HeldRelease = "before" | "during";

/** What a held kill point did (`answered`, `clear-pending`). */
export interface HeldOutcome {
  release: HeldRelease;
  /** `clear-pending`: cancel, `refresh --clear-pending-creates`, up; or cancel, up, `pulumi-posthog clear-pending`, up. */
  operator?: "refresh" | "package";
  /** When the engine (the `pulumi` process) was frozen, ms after the CLI was spawned. */
  frozenAtMs?: number;
  /** The next look-alike create was held at the emulator before the kill: the moment was the certain one. */
  nextHeld: boolean;
  /** The creates the hold still held at the kill (their objects' names), applied later. */
  heldAtKill: string[];
  /** ms after the kill at which they were released (PostHog applies them then). */
  releasedAfterKillMs?: number;
  /** What released them: the kill (`before`), 2 s after the re-run's first read (`read`), the window (`window`). */
  releasedBy?: "kill" | "read" | "window";
  /** ms after the kill of the re-run's first GET of dashboards (undefined: it made none). */
  firstReadAfterKillMs?: number;
  /** `refresh`: pending creates `pulumi refresh --clear-pending-creates` dropped before the up. */
  refreshCleared?: number;
  /** `package`: pending creates `pulumi-posthog clear-pending` dropped after the up, and those it kept. */
  packageCleared?: number;
  packageKept?: string[];
}

/** A provider operation the state recorded as under way when the CLI died (`deployment.pending_operations`). */
export interface PendingAtKill {
  operation: "creating" | "updating" | "deleting" | "reading" | "importing";
  type: string;
  name: string;
}

/** One kill and what followed. */
export interface KillRecord {
  index: number;
  kind: EpisodeKind;
  /** The settings variant the killed run applied (`destroy`: the one deployed). */
  variant: "v1" | "v2";
  trigger: KillTrigger;
  /** Held kill points (`answered`, `clear-pending`): how the moment was made and what followed. */
  held?: HeldOutcome;
  /** The process killed (`cli`: the CLI's process group; `provider`, `program`: that process alone). */
  target: KillTarget;
  /** For `operation` kills: the n-th pending operation of the run. */
  nth?: number;
  /** When SIGKILL was sent, ms after the CLI was spawned; undefined when the run ended before the kill point. */
  killedAtMs?: number;
  /** The run ended (exit status) before its kill point: nothing was killed. */
  finishedFirst?: number;
  /** Provider operations of the killed run under way in the state it left (`deployment.pending_operations`). */
  pending: PendingAtKill[];
  /**
   * Writes the server applied that the killed run's state does not record (a create whose answer the CLI never
   * saved): live objects no resource of the state holds, a batch export paused with no BatchExportPause recorded.
   */
  lostAtKill: string[];
  /** Pending operations of earlier runs the state still held when this run started (the CLI keeps pending creates until a refresh clears them). */
  carried: number;
  /** Resources in that state (the stack and its providers excluded). */
  stateResources: number;
  /** Processes of the killed run (its program and provider host) found alive right after the kill. */
  childrenAtKill: number;
  /** ms until none was left (undefined when one outlived the wait). */
  childrenGoneMs?: number;
  /** How long each of them outlived the kill (ms, within 10 ms), by role: `program`, `host` (dynamic-provider host), `engine`. */
  outlivedMs: Record<string, number>;
  /**
   * Processes of the killed run still alive 10 s after the kill (command lines; then SIGKILLed by the soak), but
   * Pulumi's language host: the CLI starts its plugins in process groups of their own; our provider host ends once
   * the engine is gone (provider/framework/engine-watch.ts), the program and the plugin script with it.
   */
  leaked: string[];
  /** Pulumi's own language host still alive then (it checks on the engine every 5 minutes): not ours to end. */
  languageHostLingering: number;
  /** Un-killed runs until one exited 0 and the following preview showed no changes. */
  recoveryRuns: number;
  /**
   * Invites whose re-run failed naming a pending invite of their address and `adopt: true` (a create whose answer
   * was lost, killed with its run, cannot prove the invite it finds is its own: provider/framework/lost-create.ts): the user
   * declares them with `adopt: true` (the example's `adopt`), as the message says, and runs again.
   */
  adoptedOnRequest: string[];
  /** With `faults`: the API requests of the killed run and its re-runs, and how many were faulted. */
  apiRequests: number;
  faulted: number;
  /**
   * The first re-run was refused because the killed CLI's lock was left in the backend (`the stack is currently
   * locked`), so `pulumi cancel --yes` removed it (the real file backend locks each operation; not counted as a run).
   */
  cancelledLock: boolean;
  /**
   * Pending creates the converged state still held, dropped by the episode's `pulumi refresh
   * --clear-pending-creates` (the CLI keeps them through every `up` and a non-interactive refresh).
   */
  clearedPendingCreates: number;
  /**
   * The re-runs kept failing on an object the state does not hold (e.g. `Domain … already exists`), so the
   * operator removed the orphans before running again (`refresh --import-pending-creates` needs the object's id).
   */
  neededOperator: boolean;
  converged: boolean;
  /** Errors of the failed recovery runs (first line each). */
  recoveryErrors: string[];
  duplicates: string[];
  orphans: string[];
  missing: string[];
  /** Resources whose refresh changed the converged state (`type name: op (properties)`). */
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
  /** Whether the fault mix was armed during the killed runs and their re-runs. */
  faults: boolean;
  /**
   * The un-killed runs measured first: an `up` from an empty stack, an `up` of the other settings, a `destroy`
   * (durations in ms, and the provider operations each recorded as pending in its state).
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
    /** Kills that landed while the state recorded a provider operation under way. */
    duringOperation: number;
    /** Creates under way when the CLI died (each may or may not have reached the server). */
    pendingCreates: number;
    /** Writes applied by the server and not recorded in the state when the CLI died. */
    lostWrites: number;
    /** With `faults`: API requests made while armed, and how many were faulted. */
    apiRequests: number;
    faulted: number;
    notConverged: number;
    duplicates: number;
    orphans: number;
    missing: number;
    differences: number;
    leakedProcesses: number;
    /** Pulumi's language hosts still alive 10 s after a kill (see {@link KillRecord}'s `languageHostLingering`). */
    languageHostsLingering: number;
    /** The longest a process of a killed run (program, provider host) outlived it, in ms. */
    longestOutlivedMs: number;
    /** The same by role (`program`, `host`). */
    longestOutlivedMsByRole: Record<string, number>;
    notSeededAfterDestroy: number;
    cleanedUp: number;
    /** Kills after which the re-runs only converged once the operator removed orphans. */
    neededOperator: number;
    /** Invites the user declared with `adopt: true` as a re-run's failure asked ({@link EpisodeRecord}). */
    adoptedOnRequest: number;
    /** Kills whose lock refused the next run until `pulumi cancel`. */
    cancelledLocks: number;
    /** Pending creates dropped by `refresh --clear-pending-creates` once the episode converged. */
    clearedPendingCreates: number;
    /**
     * Per kill point kind: killed runs, episodes not converged, duplicates, orphans, missing; for the held kinds
     * also the kills whose moment was the certain one (the next look-alike create held at the kill).
     */
    byKillPoint: Partial<
      Record<
        KillTrigger,
        {
          episodes: number;
          kills: number;
          certain: number;
          notConverged: number;
          duplicates: number;
          orphans: number;
          missing: number;
        }
      >
    >;
    /**
     * Per resource type: creates under way at a kill, those the server applied without the state recording
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
  /** Where the API key was found in clear text: the backend's state file, a run's event log or output. */
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

/** The stack's state as the file backend keeps it (and `pulumi stack export` prints its `deployment`). */
interface StateView {
  resources: { urn: string; type: string; name: string; id?: string; custom: boolean }[];
  pendingOperations: { urn: string; type: string; name: string; operation: PendingAtKill["operation"] }[];
}

/** Pulumi's `deployment` (v3): resources and `pending_operations` (`{resource, type: "creating"|…}`). */
interface Deployment {
  resources?: { urn: string; type: string; id?: string; custom?: boolean }[];
  pending_operations?: { resource: { urn: string; type: string }; type: string }[];
}

const nameOf = (urn: string) => urn.slice(urn.lastIndexOf("::") + 2);

function viewOf(d: Deployment | undefined): StateView {
  return {
    resources: (d?.resources ?? []).map((r) => ({
      urn: r.urn,
      type: r.type,
      name: nameOf(r.urn),
      ...(r.id ? { id: r.id } : {}),
      custom: r.custom === true,
    })),
    pendingOperations: (d?.pending_operations ?? []).map((p) => ({
      urn: p.resource.urn,
      type: p.resource.type,
      name: nameOf(p.resource.urn),
      operation: p.type as PendingAtKill["operation"],
    })),
  };
}

/**
 * The stack's state read from the file backend's `<stack>.json` (`{checkpoint: {latest: deployment}}`), for
 * watching a run: the CLI replaces the file whole at each save (a temporary file renamed over it). Empty when
 * the file is missing; throws while it cannot be parsed.
 */
function readStateFile(path: string): StateView {
  if (!existsSync(path)) return { resources: [], pendingOperations: [] };
  const file = JSON.parse(readFileSync(path, "utf8")) as { checkpoint?: { latest?: Deployment } };
  return viewOf(file.checkpoint?.latest);
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
/** Which process a kill hits: the CLI's process group, the dynamic-provider host, or the program. */
export type KillTarget = "cli" | "provider" | "program";

type KillPlan =
  | { trigger: "none" }
  | { trigger: "time"; afterMs: number; target: KillTarget }
  | { trigger: "operation"; nth: number; extraMs: number; target: KillTarget }
  | { trigger: "held"; held: HeldControl; target: KillTarget };

/** The targets of held kills, in turn. */
const HELD_TARGETS: readonly KillTarget[] = ["cli", "provider", "program"];

/** A held kill in progress: the hold, what its driver saw, when it released the hold. */
interface HeldControl {
  holdId: string;
  out: HeldOutcome;
  /**
   * Date.now() when the first look-alike was seen at the head of the hold: every create still held at the kill
   * arrived after it (those before it were let through), the next look-alike's and any other the engine sent
   * meanwhile. The lost-create windows of `during` count from here.
   */
  heldFrom?: number;
  /** Date.now() when the next look-alike was seen held (its create started before), and of the kill. */
  heldAt?: number;
  killedAt?: number;
  /** Date.now() when the re-run (or the operator's first command) started; set by the episode. */
  rerunFrom?: number;
  /** Settles once the hold is released and disarmed. */
  released?: Promise<void>;
}

/** A view of a hold (`GET /_emulator/holds/:id`). */
interface HoldView {
  hits: number;
  held: { method: string; path: string; body: { name?: unknown } | null }[];
}

/** A create of a look-alike: its name, provisional (the name and a create's marker: provider/framework/lost-create.ts). */
const isLookAlike = (r: HoldView["held"][number]) =>
  typeof r.body?.name === "string" &&
  (r.body.name === LOOK_ALIKE_NAME || r.body.name.startsWith(`${LOOK_ALIKE_NAME} [pulumi create `));

/** Whether process `pid` still runs (not gone, not a zombie). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** One CLI command of an episode: the operation, the settings variant it runs with, more flags. */
interface Cmd {
  op: "up" | "destroy" | "preview" | "refresh";
  variant?: "v1" | "v2";
  extra?: string[];
}

interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  durationMs: number;
  /** Steps and diagnostics from the run's event log (what it logged before it died, when killed). */
  result: Pick<RunResult, "steps" | "diagnostics" | "counts">;
  /** What the CLI printed (stdout, stderr). */
  output: string;
  killedAtMs?: number;
  /** Distinct pending operations the run recorded (seen by watching the backend's state file). */
  operationsSeen: number;
}

/** The emulator a soak starts (emulator/index.ts `startEmulator`). */
type SoakEmulator = Awaited<ReturnType<typeof startEmulator>>;

/**
 * One engine-kill soak's state, made once by {@link startSoak} and handed to every stage: its settings, the
 * emulator, stack and files it drives, and what it has seen so far (the kill points' scale, leaks, children).
 */
interface Soak {
  kills: number;
  latencyMs: number;
  seed: number;
  faultsOn: boolean;
  /** Un-killed re-runs allowed per episode before it counts as not converged. */
  maxRecovery: number;
  killPoints: KillPoints;
  log: (line: string) => void;
  /** The seeded PRNG of the kill points. */
  random: () => number;
  /** The repository root (the project's directory: the root Pulumi.yaml runs examples/gitops). */
  root: string;
  /** This soak's temporary directory (the backend, the settings file, the event logs). */
  work: string;
  stateDir: string;
  /** The stack's settings file (`--config-file`). */
  configFile: string;
  /** The file backend's `<stack>.json`, watched during runs. */
  stateFile: string;
  /** The marker in the environment of every process of this soak's runs (`POSTHOG_ENGINE_KILL_SOAK=<work>`). */
  marker: string;
  /** The two settings variants' YAML text. */
  variants: { readonly v1: string; readonly v2: string };
  emulator: SoakEmulator;
  a: Api;
  /** The environment of every CLI run (the emulator's settings, the short lost-create window). */
  env: NodeJS.ProcessEnv;
  /** The lost-create window the provider hosts of the runs apply (ms). */
  windowMs: number;
  /** The e-mails whose Invite the user declares with `adopt: true` in this episode (a re-run's failure asked). */
  adopting: Set<string>;
  dns: ReturnType<typeof dnsAutomation>;
  /** CLI runs and commands under way (killed at the end). */
  children: Set<ChildProcess>;
  /** Where the API key was found in clear text: the state file, a run's event log or output. */
  keyLeaks: Set<string>;
  /** Durations (ms) and provider operations of un-killed complete runs of each kind: the kill points' scale. */
  scale: Record<EpisodeKind, { ms: number[]; operations: number }>;
  /** CLI runs so far (numbers each run's event log). */
  runs: number;
  /** Live objects of the seeded world (`Type:id`), and its projects and snapshot (what a destroy must leave). */
  seededLive: Set<string>;
  seededProjects: number[];
  seeded: Record<string, unknown>;
}

/**
 * The two settings variants of the example (examples/gitops/Pulumi.dev.yaml, with {@link LOOK_ALIKES} look-alike
 * dashboards): `v1` as it is, `v2` with in-place updates (project timezone, dashboard description, public sharing),
 * a replaced invite (level) and a new collaborator. Returns their YAML text.
 */
function settingsVariants(root: string): { readonly v1: string; readonly v2: string } {
  const dev = parseDocument(readFileSync(join(root, "examples", "gitops", "Pulumi.dev.yaml"), "utf8"));
  // Look-alikes: dashboards of one name, whose lost creates must each adopt their own (issue 27).
  dev.setIn(["config", "posthog-gitops:weeklyReviews"], LOOK_ALIKES);
  const v1 = dev.toString();
  const doc = parseDocument(v1);
  doc.setIn(["config", "posthog-gitops:project", "timezone"], "UTC");
  doc.setIn(["config", "posthog-gitops:teamDashboardDescription"], "v2");
  doc.setIn(["config", "posthog-gitops:publicKpis"], true);
  doc.setIn(["config", "posthog-gitops:kpiEditors"], ["mia.member@example.com", "max.member@example.com"]);
  doc.setIn(["config", "posthog-gitops:invites", 0, "level"], "admin");
  return { v1, v2: doc.toString() };
}

/** The environment of the soak's CLI runs against `emulator`, marked with `work` (the soak's marker). */
function soakEnv(emulator: SoakEmulator, work: string): NodeJS.ProcessEnv {
  return {
    ...emulatorEnv(emulator),
    POSTHOG_RATE_LIMIT: "off",
    // the language host's own switch: no type-check of the example on every run (it is type-checked by lint)
    PULUMI_NODEJS_TRANSPILE_ONLY: "true",
    POSTHOG_ENGINE_KILL_SOAK: work,
    // The emulator applies a request within its latency (no hold outlives a run): a create killed or lost 5 s ago
    // that it does not list never will be, instead of PostHog's 10-minute window (provider/framework/lost-create.ts).
    POSTHOG_LOST_CREATE_WINDOW: "5",
    POSTHOG_LOST_CREATE_WAIT: "6",
  };
}

/**
 * Sets a soak up: checks the CLI and the build, makes its directory, starts its emulator (with `latencyMs`) and
 * the DNS automation, makes the stack on a local backend of its own, and snapshots the seeded organization.
 * Returns the soak's state. Throws when the CLI or dist/ is missing.
 */
async function startSoak(options: EngineKillOptions): Promise<Soak> {
  const latencyMs = options.latencyMs ?? 40;
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const faultsOn = options.faults ?? false;
  const root = repoRoot();
  pulumiExecutable(); // throws saying how to get the CLI
  if (!existsSync(join(root, "dist", "sdk", "index.js")))
    throw new Error(
      `${join(root, "dist")} is missing: run \`npm run build\` first (the example loads the built SDK)`,
    );
  const work = mkdtempSync(join(tmpdir(), "posthog-engine-kills-"));
  const stateDir = join(work, "state");
  const configFile = join(work, "Pulumi.dev.yaml");
  const stateFile = checkpointFile(stateDir, readProject(root).name, "dev");
  // The two settings variants; the one a command runs with is written into the stack's settings file
  // (`--config-file`) beside the passphrase's salt.
  const variants = settingsVariants(root);
  const emulator = await startEmulator({ rateLimit: false, inviteBudget: false, latencyMs });
  const a = seedApi(emulator.url, emulator.apiKey);
  const env = soakEnv(emulator, work);
  // the stack on a local backend of this run (tools/pulumi.ts: passphrase, PULUMI_HOME in it, no Pulumi Cloud)
  await ensureStack({ projectDir: root, stack: "dev", stateDir, configFile, env });
  const dns = dnsAutomation(a, 100);
  const seededLive = new Set((await liveObjects(a)).map((l) => `${l.type}:${l.id}`));
  const seededProjects = (await a.all<{ id: number }>(`${ORG}/projects/`)).map((p) => p.id);
  return {
    kills: options.kills ?? 12,
    latencyMs,
    seed,
    faultsOn,
    maxRecovery: options.maxRecoveryRuns ?? (faultsOn ? 8 : 4),
    killPoints: options.killPoints ?? "both",
    log: options.log ?? (() => {}),
    random: prng(seed),
    root,
    work,
    stateDir,
    configFile,
    stateFile,
    marker: `POSTHOG_ENGINE_KILL_SOAK=${work}`,
    variants,
    emulator,
    a,
    env,
    windowMs: Number(env.POSTHOG_LOST_CREATE_WINDOW) * 1000,
    adopting: new Set(),
    dns,
    children: new Set(),
    keyLeaks: new Set(),
    scale: {
      create: { ms: [], operations: 0 },
      change: { ms: [], operations: 0 },
      destroy: { ms: [], operations: 0 },
    },
    runs: 0,
    seededLive,
    seededProjects,
    seeded: await orgSnapshot(a, seededProjects),
  };
}

/** Writes variant `v`'s settings into the stack's settings file, the invites of `s.adopting` with `adopt: true`. */
function useVariant(s: Soak, v: "v1" | "v2"): void {
  const settings = parseDocument(s.variants[v]);
  const people = settings.getIn(["config", "posthog-gitops:invites"]) as { items?: unknown[] } | undefined;
  (people?.items ?? []).forEach((_, i) => {
    const email = String(settings.getIn(["config", "posthog-gitops:invites", i, "email"])).toLowerCase();
    if (s.adopting.has(email)) settings.setIn(["config", "posthog-gitops:invites", i, "adopt"], true);
  });
  writeStackSettings(s.configFile, settings.toString());
}

/**
 * The addresses a failed run asked to declare with `adopt: true` (`Invite "<email>": … adopt … explicitly with
 * adopt: true`, `Invite for <email>: … declare it with adopt: true`), lower-cased, from its error lines.
 */
function adoptionsAsked(errors: string[]): string[] {
  return errors.flatMap((e) => {
    const m =
      /Invite (?:"([^"]+)"|for (\S+?)):.*(?:explicitly with adopt: true|declare it with adopt: true)/.exec(e);
    return m ? [(m[1] ?? m[2] ?? "").toLowerCase()] : [];
  });
}

/** With `faults`: arms the fault mix for the runs that follow (the soak's own reads go with faults off). */
async function armFaults(s: Soak): Promise<void> {
  if (!s.faultsOn) return;
  await s.a.call("DELETE", "/_emulator/requests");
  for (const f of SOAK_FAULTS) await s.a.call("POST", "/_emulator/faults", f);
}

/** Disarms the fault mix; returns the API requests made while armed, and how many of them were faulted. */
async function disarmFaults(s: Soak): Promise<{ requests: number; faulted: number }> {
  if (!s.faultsOn) return { requests: 0, faulted: 0 };
  await s.a.call("DELETE", "/_emulator/faults");
  const seen = ((await s.a.call("GET", "/_emulator/requests")) as { path: string; status: number }[]).filter(
    (r) => r.path.startsWith("/api/"),
  );
  await s.a.call("DELETE", "/_emulator/requests");
  return {
    requests: seen.length,
    faulted: seen.filter((r) => r.status === 0 || r.status === 429 || r.status >= 500).length,
  };
}

/** The hold `id` as the emulator shows it (`GET /_emulator/holds/:id`). */
async function holdView(s: Soak, id: string): Promise<HoldView> {
  return (await s.a.call("GET", `/_emulator/holds/${id}`)) as HoldView;
}

/** Releases and disarms a held kill's hold once (PostHog applies what it held); records when and why. */
function releaseHeld(s: Soak, h: HeldControl, by: NonNullable<HeldOutcome["releasedBy"]>): Promise<void> {
  if (h.out.releasedBy !== undefined) return Promise.resolve();
  h.out.releasedBy = by;
  h.out.releasedAfterKillMs = h.killedAt === undefined ? 0 : Date.now() - h.killedAt;
  return s.a.call("DELETE", `/_emulator/holds/${h.holdId}`).then(
    () => undefined,
    () => undefined, // released already
  );
}

/** The first GET of dashboards the emulator answered at or after `since` (Date.now() ms), if any. */
async function firstDashboardRead(s: Soak, since: number): Promise<number | undefined> {
  const logged = (await s.a.call("GET", "/_emulator/requests")) as {
    method: string;
    path: string;
    at: string;
  }[];
  const first = logged.find(
    (r) => r.method === "GET" && /\/dashboards(\/|$)/.test(r.path) && Date.parse(r.at) >= since,
  );
  return first ? Date.parse(first.at) : undefined;
}

/**
 * `during`: releases the hold 2 s after the re-run's first read of dashboards, or 1 s before the lost-create
 * window of the earliest create it may hold ends ({@link HeldControl.heldFrom}), whichever comes first.
 */
async function releaseDuring(s: Soak, h: HeldControl): Promise<void> {
  const deadline = (h.heldFrom ?? h.heldAt ?? Date.now()) + s.windowMs - 1000;
  let readAt: number | undefined;
  for (;;) {
    if (readAt === undefined && h.rerunFrom !== undefined) {
      readAt = await firstDashboardRead(s, h.rerunFrom).catch(() => undefined);
      if (readAt !== undefined && h.killedAt !== undefined) h.out.firstReadAfterKillMs = readAt - h.killedAt;
    }
    const now = Date.now();
    if (readAt !== undefined && now >= readAt + 2000) return releaseHeld(s, h, "read");
    if (now >= deadline) return releaseHeld(s, h, "window");
    await sleep(Math.min(100, Math.max(5, deadline - now)));
  }
}

/** One CLI run under way ({@link runCli}): its process, when it started, what it killed and saw in the state. */
interface RunUnderWay {
  child: ChildProcess;
  /** performance.now() at the spawn. */
  started: number;
  /** Pending operations already in the state when it started (carried over from a killed run: not this run's). */
  before: Set<string>;
  /** Distinct pending operations of this run, seen by watching the backend's state file (replaced at each save). */
  seen: Set<string>;
  /** When SIGKILL was sent, ms after the spawn. */
  killedAtMs: number | undefined;
  /** The timer of a `time` or `operation` kill point. */
  timer: NodeJS.Timeout | undefined;
  exited: boolean;
  /** The processes SIGKILLed (the CLI, or the target), to see them gone. */
  killedPids: number[];
}

/**
 * SIGKILLs the run's target once (unless it has exited): the provider host or the program (found by the soak's
 * marker in their environment: they run in process groups of their own), or the CLI's process group when the
 * target is the CLI, has not started or has already ended. Records when and which processes.
 */
function killTarget(s: Soak, run: RunUnderWay, plan: KillPlan): void {
  if (run.killedAtMs !== undefined || run.exited) return;
  run.killedAtMs = Math.round(performance.now() - run.started);
  const target = plan.trigger === "none" ? "cli" : plan.target;
  const hits = processesWithMarker(`${s.marker}\0`).filter((p) =>
    target === "provider"
      ? p.cmd.includes("dynamic-provider")
      : target === "program"
        ? p.cmd.includes(join("cmd", "run"))
        : false,
  );
  if (hits.length === 0) killTree(run.child);
  if (hits.length === 0 && run.child.pid !== undefined) run.killedPids.push(run.child.pid);
  for (const { pid } of hits) {
    run.killedPids.push(pid);
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

/**
 * Reads the backend's state file into `run.seen` (this run's pending provider operations); for an `operation`
 * kill point, sets the kill's timer once the n-th is seen. A file caught between writes is skipped.
 */
function lookAtState(s: Soak, run: RunUnderWay, plan: KillPlan): void {
  try {
    for (const p of readStateFile(s.stateFile).pendingOperations) {
      if (p.type.startsWith("pulumi:")) continue; // the stack and the default provider are not the provider's
      const k = `${p.operation} ${p.urn}`;
      if (!run.before.has(k)) run.seen.add(k);
    }
  } catch {
    return; // between writes
  }
  if (plan.trigger === "operation" && run.seen.size >= plan.nth && run.timer === undefined)
    run.timer = setTimeout(() => killTarget(s, run, plan), plan.extraMs);
}

/** A held kill's hold on the engine: the `pulumi` process's pid, whether it is stopped, the `during` release. */
interface EngineHold {
  pid: number | undefined;
  stopped: boolean;
  during: Promise<void> | undefined;
}

/** Sends signal `sig` to the held engine (the `pulumi` process), if it is still there. */
function signalEngine(engine: EngineHold, sig: NodeJS.Signals): void {
  try {
    if (engine.pid !== undefined) process.kill(engine.pid, sig);
  } catch {
    // gone meanwhile
  }
}

/** How many look-alike creates the state records as begun (pending `creating`); 0 between writes. */
function lookAlikesBegun(s: Soak): number {
  try {
    return readStateFile(s.stateFile).pendingOperations.filter(
      (p) => p.operation === "creating" && p.name.startsWith("weekly-review-"),
    ).length;
  } catch {
    return 0; // between writes
  }
}

/**
 * The held kill point up to the kill (see the module doc): lets other dashboard creates through until a look-alike
 * is at the head of the hold, waits until the engine has begun a second one, freezes the engine, releases that
 * create, waits for the next look-alike's create at the hold, kills the target, then releases the hold at once
 * (`before`) or starts the `during` release. Records all of it on `plan.held`; returns early if the run exits.
 */
async function holdUntilKill(
  s: Soak,
  run: RunUnderWay,
  plan: Extract<KillPlan, { trigger: "held" }>,
  engine: EngineHold,
): Promise<void> {
  const h = plan.held;
  for (;;) {
    if (run.exited) return;
    const head = (await holdView(s, h.holdId)).held[0];
    if (head && isLookAlike(head)) break;
    if (head) await s.a.call("POST", `/_emulator/holds/${h.holdId}/release`, { count: 1 });
    else await sleep(5);
  }
  h.heldFrom = Date.now();
  // The engine begins each create on its own: one look-alike held does not mean it has sent the next. It
  // records a create in the state's pending operations before it sends it (docs/contributing/tests.md, "The rules"):
  // wait for two look-alikes there, then 1 s for the call itself.
  for (const end = Date.now() + 5000; lookAlikesBegun(s) < 2 && Date.now() < end && !run.exited; )
    await sleep(5);
  await sleep(1000);
  if (run.exited) return;
  signalEngine(engine, "SIGSTOP"); // the engine: it cannot read (nor record) any answer from now on
  engine.stopped = true;
  h.out.frozenAtMs = Math.round(performance.now() - run.started);
  await s.a.call("POST", `/_emulator/holds/${h.holdId}/release`, { count: 1 });
  // the provider host has the answer (and journals the id) once it sends the next look-alike's create
  const until = Date.now() + 5000;
  for (;;) {
    if ((await holdView(s, h.holdId)).held.some(isLookAlike)) {
      h.out.nextHeld = true;
      break;
    }
    if (Date.now() >= until) break;
    await sleep(5);
  }
  h.heldAt = Date.now();
  killTarget(s, run, plan); // SIGKILL ends a stopped process too
  h.killedAt = Date.now();
  // PostHog applies the held creates only once the killed process is gone (its sockets closed): a provider
  // host whose engine is gone then sends no create it still had queued
  while (run.killedPids.some(alive) && Date.now() - h.killedAt < 2000) await sleep(2);
  h.out.heldAtKill = (await holdView(s, h.holdId)).held.map((r) =>
    typeof r.body?.name === "string" ? r.body.name : r.path,
  );
  if (plan.target !== "cli") signalEngine(engine, "SIGCONT"); // the engine lives on, as with the other kinds
  engine.stopped = false;
  if (h.out.release === "before") await releaseHeld(s, h, "kill");
  else engine.during = releaseDuring(s, h);
}

/**
 * Drives a held kill point during `run` ({@link holdUntilKill}); returns the promise that settles once the hold
 * is released and disarmed (whatever happened: a failure is logged, the engine resumed, the hold released).
 */
function driveHeldKill(
  s: Soak,
  run: RunUnderWay,
  plan: Extract<KillPlan, { trigger: "held" }>,
): Promise<void> {
  const h = plan.held;
  const engine: EngineHold = { pid: run.child.pid, stopped: false, during: undefined };
  return holdUntilKill(s, run, plan, engine).then(
    () => {
      if (engine.stopped) signalEngine(engine, "SIGCONT");
      return engine.during ?? releaseHeld(s, h, "kill");
    },
    (e: unknown) => {
      s.log(`  held kill point failed: ${(e as Error).message}`);
      if (engine.stopped) signalEngine(engine, "SIGCONT");
      return releaseHeld(s, h, "kill");
    },
  );
}

/**
 * What a CLI run gives once it exited: records an un-killed complete run in the kill points' scale (an up from an
 * empty stack, a whole destroy), reads the complete lines of its event log (then removes it), records where the API
 * key appears in the log or output, and returns the {@link CliRun}.
 */
function finishRun(
  s: Soak,
  cmd: Cmd,
  plan: KillPlan,
  run: RunUnderWay,
  at: { eventLog: string; fromEmpty: boolean },
  exit: { exitCode: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string },
): CliRun {
  const ms = Math.round(performance.now() - run.started);
  if (run.killedAtMs === undefined && exit.exitCode === 0 && plan.trigger !== "held") {
    const kind =
      cmd.op === "destroy" && !at.fromEmpty
        ? "destroy"
        : cmd.op === "up" && at.fromEmpty
          ? "create"
          : undefined;
    if (kind) {
      s.scale[kind].ms.push(ms);
      s.scale[kind].operations = Math.max(s.scale[kind].operations, run.seen.size);
    }
  }
  // the complete lines of the event log (a killed CLI may leave half a line)
  const text = existsSync(at.eventLog) ? readFileSync(at.eventLog, "utf8") : "";
  const events: EngineEvent[] = [];
  for (const line of text.slice(0, text.lastIndexOf("\n") + 1).split("\n"))
    if (line.trim() !== "") events.push(JSON.parse(line) as EngineEvent);
  const output = `${exit.stdout}${exit.stderr}`;
  for (const [where, t] of [
    [`event log of pulumi ${cmd.op}`, text],
    [`output of pulumi ${cmd.op}`, output],
  ] as const)
    if (t.includes(s.emulator.apiKey)) s.keyLeaks.add(where);
  rmSync(at.eventLog, { force: true });
  return {
    code: exit.exitCode,
    signal: exit.signal,
    durationMs: ms,
    result: summarize(events, cmd.op),
    output,
    ...(run.killedAtMs === undefined ? {} : { killedAtMs: run.killedAtMs }),
    operationsSeen: run.seen.size,
  };
}

/**
 * One CLI run, as a user types it (`pulumi <op> --stack dev --config-file … --non-interactive`, with `--yes
 * --skip-preview` for up, refresh and destroy), with `--event-log`; `plan` says when to SIGKILL the CLI's
 * process group (the CLI, its language host, the program, the provider host: {@link killTree}) or another target.
 * Resolves once the CLI exited (killed or not); rejects when it cannot be run.
 */
function runCli(s: Soak, cmd: Cmd, plan: KillPlan): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    if (cmd.variant) useVariant(s, cmd.variant);
    const eventLog = join(s.work, `events-${++s.runs}.json`);
    const args = [...operationArgs(cmd.op, "dev", s.configFile, eventLog), ...(cmd.extra ?? [])];
    const started = performance.now();
    const fromEmpty = stackResources(s).length === 0;
    const before = new Set(
      readStateFile(s.stateFile).pendingOperations.map((p) => `${p.operation} ${p.urn}`),
    );
    const { child, done } = startPulumi(args, {
      cwd: s.root,
      stateDir: s.stateDir,
      env: s.env,
      timeoutMs: 600_000,
    });
    s.children.add(child);
    const run: RunUnderWay = {
      child,
      started,
      before,
      seen: new Set(),
      killedAtMs: undefined,
      timer: undefined,
      exited: false,
      killedPids: [],
    };
    const watcher = watch(dirname(s.stateFile), (_event, file) => {
      if (file === "dev.json") lookAtState(s, run, plan);
    });
    if (plan.trigger === "time") run.timer = setTimeout(() => killTarget(s, run, plan), plan.afterMs);
    if (plan.trigger === "held") plan.held.released = driveHeldKill(s, run, plan);
    done.then(
      (exit) => {
        run.exited = true;
        s.children.delete(child);
        watcher.close();
        if (run.timer) clearTimeout(run.timer);
        lookAtState(s, run, plan);
        resolve(finishRun(s, cmd, plan, run, { eventLog, fromEmpty }, exit));
      },
      (e: unknown) => {
        watcher.close();
        reject(e);
      },
    );
  });
}

/** The first line of each error of a failed run: failed steps, error diagnostics, else the output's tail. */
function firstErrors(r: CliRun): string[] {
  const errs = [
    ...r.result.steps.filter((c) => c.error).map((c) => `${shortType(c.type)} ${c.name}: ${c.error}`),
    ...r.result.diagnostics.filter((d) => d.severity === "error" && !d.urn).map((d) => d.message),
  ];
  if (errs.length === 0 && r.code !== 0) errs.push(r.output.trim().split("\n").slice(-3).join(" | "));
  return errs.map((e) => e.split("\n")[0]?.slice(0, 300) ?? "");
}

/** The stack's custom resources in the backend's state file (the stack and its providers excluded). */
function stackResources(s: Soak): StateView["resources"] {
  return readStateFile(s.stateFile).resources.filter((r) => r.custom && !r.type.startsWith("pulumi:"));
}

/**
 * The stack's state as `pulumi stack export` prints it. The backend runs with `metadata=skip` (tools/pulumi.ts
 * `backendUrl`): before, a kill of the CLI while it rewrote a `.attrs` sidecar left it empty, and this failed
 * with "failed to load checkpoint: EOF" for good (the soak of decd9e4 stopped on it at kill 28).
 */
async function exported(s: Soak): Promise<StateView> {
  return viewOf(
    (await exportStack({ projectDir: s.root, stack: "dev", stateDir: s.stateDir, env: s.env }))
      .deployment as Deployment,
  );
}

/** Records a leak when the backend's state file holds the API key in clear text. */
function checkKey(s: Soak): void {
  if (existsSync(s.stateFile) && readFileSync(s.stateFile, "utf8").includes(s.emulator.apiKey))
    s.keyLeaks.add("the backend's state file");
}

/** What {@link audit} finds: duplicates, orphans (as text and as objects to remove), missing. */
interface Audit {
  duplicates: string[];
  orphans: string[];
  orphanObjects: Live[];
  missing: string[];
}

/** Server vs state: duplicates, orphans (live, not seeded, not in the state), missing. */
async function audit(s: Soak): Promise<Audit> {
  const objects = (await liveObjects(s.a)).filter((l) => !s.seededLive.has(`${l.type}:${l.id}`));
  const state = stackResources(s);
  const known = new Set(state.map((r) => `${shortType(r.type)}:${r.id}`));
  const counts = new Map<string, number>();
  for (const o of objects) counts.set(o.identity, (counts.get(o.identity) ?? 0) + 1);
  // One object per declared resource: LOOK_ALIKES dashboards are declared under one name.
  const declared = (identity: string) =>
    identity.startsWith(`Dashboard "${LOOK_ALIKE_NAME}"`) ? LOOK_ALIKES : 1;
  const duplicates = [...counts].filter(([k, c]) => c > declared(k)).map(([k, c]) => `${k} ×${c}`);
  const orphanObjects = objects.filter((o) => !known.has(`${o.type}:${o.id}`));
  const liveIds = new Set((await liveObjects(s.a)).map((l) => `${l.type}:${l.id}`));
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
}

/**
 * Writes the server applied and the state does not record: live objects no resource of the state holds, and a
 * batch export paused while no BatchExportPause is in the state (its create paused it, and the next create
 * will find it paused).
 */
async function lostWrites(s: Soak): Promise<string[]> {
  const state = stackResources(s);
  const known = new Set(state.map((r) => `${shortType(r.type)}:${r.id}`));
  const out = (await liveObjects(s.a))
    .filter((l) => !s.seededLive.has(`${l.type}:${l.id}`) && !known.has(`${l.type}:${l.id}`))
    .map((l) => `${l.identity} (id ${l.id})`);
  const exportsPaused = s.seeded.batchExportsPaused as Record<string, boolean>;
  const pauses = new Set(state.filter((r) => shortType(r.type) === "BatchExportPause").map((r) => r.id));
  for (const b of await s.a.all<{ id: string; paused: boolean }>(`${ORG}/batch_exports/`))
    if (b.paused && exportsPaused[b.id] === false && !pauses.has(b.id))
      out.push(`BatchExportPause: batch export ${b.id} paused, no BatchExportPause in the state`);
  return out;
}

/** `pulumi cancel --yes` for the lock a killed CLI left in the backend. */
async function cancelLock(s: Soak): Promise<void> {
  await pulumiOk(["cancel", "--yes", "--stack", "dev", "--non-interactive"], {
    cwd: s.root,
    stateDir: s.stateDir,
    env: s.env,
  });
}

/** What {@link recover} did: the runs, whether one converged, the errors of the others, a lock cancelled. */
interface Recovery {
  runs: number;
  converged: boolean;
  errors: string[];
  cancelledLock: boolean;
}

/**
 * Un-killed runs of `cmd` until one exits 0 (and, for `up`, `preview --expect-no-changes` passes), at most
 * `s.maxRecovery`. A run the backend refuses because the killed CLI left its lock (`the stack is currently locked
 * by 1 lock(s)`) is followed by `pulumi cancel --yes`, as its message says, and not counted. An invite a failure
 * asks to declare with `adopt: true` joins `s.adopting`, as the user would.
 */
async function recover(s: Soak, cmd: Cmd): Promise<Recovery> {
  const errors: string[] = [];
  let cancelledLock = false;
  for (let runs = 1; runs <= s.maxRecovery; runs++) {
    const r = await runCli(s, cmd, { trigger: "none" });
    checkKey(s);
    if (r.code !== 0 && !cancelledLock && /currently locked/.test(r.output)) {
      await cancelLock(s);
      cancelledLock = true;
      runs--;
      continue;
    }
    if (r.code !== 0) {
      errors.push(...firstErrors(r));
      // The user declares with `adopt: true` an invite the failure asks for, as its message says.
      const asked = adoptionsAsked([
        ...r.result.steps.map((c) => c.error ?? ""),
        ...r.result.diagnostics.map((d) => d.message),
      ]).filter((email) => !s.adopting.has(email));
      for (const email of asked) s.adopting.add(email);
      continue;
    }
    if (cmd.op !== "up") return { runs, converged: true, errors, cancelledLock };
    const p = await runCli(s, { op: "preview", extra: ["--expect-no-changes"] }, { trigger: "none" });
    if (p.code === 0) return { runs, converged: true, errors, cancelledLock };
    errors.push(
      `preview after up: ${
        p.result.steps
          .filter((c) => c.op !== "same")
          .map((c) => `${c.op} ${shortType(c.type)} ${c.name}`)
          .join(", ") || firstErrors(p).join("; ")
      }`,
    );
  }
  return { runs: s.maxRecovery, converged: false, errors, cancelledLock };
}

/**
 * `pulumi refresh`: the resources whose refreshed state differs from the state (none when state = server; the
 * real CLI reports outputs that changed too). With `--clear-pending-creates` when the state still holds pending
 * creates (an `up` keeps them, warning, and a non-interactive refresh keeps them without that flag: the CLI
 * says they need `pulumi refresh` run interactively): by then the re-run `up` made or adopted those resources.
 * Returns the differences and how many pending creates the refresh dropped.
 */
async function differences(s: Soak): Promise<{ drift: string[]; clearedPendingCreates: number }> {
  const pendingCreates = (await exported(s)).pendingOperations.filter(
    (p) => p.operation === "creating",
  ).length;
  const r = await runCli(
    s,
    { op: "refresh", ...(pendingCreates > 0 ? { extra: ["--clear-pending-creates"] } : {}) },
    { trigger: "none" },
  );
  const drift = r.result.steps
    .filter((c) => c.op !== "same" || c.error)
    .map(
      (c) =>
        `${shortType(c.type)} ${c.name}: ${c.op}${c.diffs.length ? ` (${c.diffs.join(", ")})` : ""}${c.error ? ` ${c.error}` : ""}`,
    );
  if (r.code !== 0 && drift.length === 0) drift.push(`refresh failed: ${firstErrors(r).join("; ")}`);
  const left = (await exported(s)).pendingOperations.filter((p) => p.operation === "creating").length;
  if (left > 0) drift.push(`refresh --clear-pending-creates left ${left} pending create(s)`);
  return { drift, clearedPendingCreates: pendingCreates - left };
}

/** Puts the organization back as seeded where an episode left it otherwise (operator clean-up); says what it did. */
async function restoreSeeded(s: Soak): Promise<string[]> {
  const done: string[] = [];
  const exportsPaused = s.seeded.batchExportsPaused as Record<string, boolean>;
  for (const b of await s.a.all<{ id: string; paused: boolean }>(`${ORG}/batch_exports/`)) {
    const want = exportsPaused[b.id];
    if (want === undefined || want === b.paused) continue;
    await s.a.call("POST", `${ORG}/batch_exports/${b.id}/${want ? "pause" : "unpause"}/`, {});
    done.push(`batch export ${b.id} ${want ? "paused" : "unpaused"} again`);
  }
  const levels = s.seeded.members as Record<string, number>;
  for (const m of await s.a.all<{ user: { email: string; uuid: string }; level: number }>(
    `${ORG}/members/`,
  )) {
    const want = levels[m.user.email];
    if (want === undefined || want === m.level) continue;
    await s.a.call("PATCH", `${ORG}/members/${m.user.uuid}/`, { level: want });
    done.push(`member ${m.user.email} level ${want} again`);
  }
  return done;
}

/** Destroys what the stack holds (un-killed, until it converges). Throws when it does not. */
async function ensureEmpty(s: Soak): Promise<void> {
  if (stackResources(s).length === 0) return;
  const d = await recover(s, { op: "destroy" });
  if (!d.converged) throw new Error(`setup destroy failed: ${d.errors.join("; ")}`);
}

/** From an empty stack, deploys the dev settings (un-killed, until it converges). Throws when it does not. */
async function ensureDeployed(s: Soak): Promise<void> {
  await ensureEmpty(s);
  const u = await recover(s, { op: "up", variant: "v1" });
  if (!u.converged) throw new Error(`setup up failed: ${u.errors.join("; ")}`);
}

/** The role of a process of a run, from its command line (`host`, `program`, `language host`, `engine`, …). */
function roleOf(cmd: string): string {
  return cmd.includes("dynamic-provider")
    ? "host"
    : cmd.includes("cmd/run")
      ? "program"
      : cmd.includes("pulumi-language-nodejs")
        ? "language host"
        : cmd.includes("pulumi-resource-pulumi-nodejs")
          ? "plugin script"
          : /(^|\/)pulumi( |$)/.test(cmd)
            ? "engine"
            : "other";
}

/**
 * What outlived a killed run (the language host, the program, the provider host), and for how long: the
 * processes carrying the soak's marker when it is called, followed (by pid: a re-run started meanwhile carries
 * the marker too) until none is left or 10 s passed; then those left are recorded on `rec` and SIGKILLed.
 */
async function watchKilled(s: Soak, rec: KillRecord): Promise<void> {
  const t = performance.now();
  const atKill = processesWithMarker(s.marker);
  const ofKilledRun = new Set(atKill.map((p) => p.pid));
  rec.childrenAtKill = atKill.length;
  let left = atKill;
  while (left.length > 0 && performance.now() - t < 10_000) {
    await sleep(10);
    const now = processesWithMarker(s.marker).filter((p) => ofKilledRun.has(p.pid));
    for (const p of left)
      if (!now.some((q) => q.pid === p.pid)) {
        const r = roleOf(p.cmd);
        rec.outlivedMs[r] = Math.max(rec.outlivedMs[r] ?? 0, Math.round(performance.now() - t));
      }
    left = now;
  }
  if (left.length === 0) rec.childrenGoneMs = Math.round(performance.now() - t);
  rec.leaked = left.filter((p) => roleOf(p.cmd) !== "language host").map((p) => `${p.pid} ${p.cmd}`);
  rec.languageHostLingering = left.filter((p) => roleOf(p.cmd) === "language host").length;
  // Recorded, then ended (they carry this run's marker): the real CLI starts each plugin (the language host,
  // the provider host) in a process group of its own, so they outlive a SIGKILL of the CLI's group and would
  // otherwise pile up from one episode to the next.
  killAll(left);
}

/** SIGKILLs each process of `processes` (one gone meanwhile is skipped). */
function killAll(processes: { pid: number }[]): void {
  for (const p of processes) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

/** Whether the backend holds a lock (a killed CLI leaves its own: the next command is refused until `pulumi cancel`). */
function lockHeld(s: Soak): boolean {
  const dir = join(s.stateDir, ".pulumi", "locks");
  return (
    existsSync(dir) && readdirSync(dir, { recursive: true, withFileTypes: true }).some((e) => e.isFile())
  );
}

/** The built script of the package's `pulumi-posthog` command (package.json's `bin`), under `root`. */
function packageCommand(root: string): string {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    bin?: Record<string, string>;
  };
  const bin = pkg.bin?.["pulumi-posthog"];
  if (!bin) throw new Error(`${join(root, "package.json")} names no "pulumi-posthog" in its bin`);
  return join(root, bin);
}

/**
 * `pulumi-posthog clear-pending --stack dev` (the package's bin, {@link packageCommand}), as an operator runs it in
 * the project's directory: the pending creates it cleared and those it kept (URNs), or its error.
 */
function clearPendingCommand(s: Soak): Promise<{ cleared: string[]; kept: string[]; error?: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [packageCommand(s.root), "clear-pending", "--stack", "dev"], {
      cwd: s.root,
      env: pulumiEnv(s.stateDir, s.env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    s.children.add(p);
    let out = "";
    p.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    p.stderr?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const urns = (re: RegExp) => [...out.matchAll(re)].map((m) => nameOf(m[1] ?? ""));
    p.on("error", (e) => resolve({ cleared: [], kept: [], error: e.message }));
    p.on("close", (code) => {
      s.children.delete(p);
      if (out.includes(s.emulator.apiKey)) s.keyLeaks.add("output of pulumi-posthog clear-pending");
      resolve({
        cleared: urns(/^cleared: the pending create of (\S+)/gm),
        kept: urns(/^kept: the pending create of (\S+?):/gm),
        ...(code === 0 ? {} : { error: `exit ${code}: ${out.trim().split("\n").slice(-2).join(" | ")}` }),
      });
    });
  });
}

/** What the un-killed runs measured first give the report (see {@link EngineKillReport}). */
type Baseline = Pick<EngineKillReport, "baseline" | "baselineNotSeeded" | "expectedDrift">;

/**
 * The kill points' scale: un-killed runs of each kind (an up from an empty stack, an up of the other settings,
 * a destroy). The refresh after each up gives the example's own drift (the Domain's verification and SSO
 * enforcement happen after its create, and the real CLI's refresh reports changed outputs: the README's CLI
 * sequence runs refresh + up for them), which an episode's refresh is compared against. Throws when a run fails.
 */
async function measureBaseline(s: Soak): Promise<Baseline> {
  const base = await runCli(s, { op: "up", variant: "v1" }, { trigger: "none" });
  if (base.code !== 0) throw new Error(`the baseline up failed: ${firstErrors(base).join("; ")}`);
  let expectedDrift = (await differences(s)).drift;
  const change = await runCli(s, { op: "up", variant: "v2" }, { trigger: "none" });
  if (change.code !== 0) throw new Error(`the baseline change failed: ${firstErrors(change).join("; ")}`);
  s.scale.change = { ms: [change.durationMs], operations: change.operationsSeen };
  expectedDrift = [...new Set([...expectedDrift, ...(await differences(s)).drift])];
  const baseDestroy = await runCli(s, { op: "destroy" }, { trigger: "none" });
  if (baseDestroy.code !== 0)
    throw new Error(`the baseline destroy failed: ${firstErrors(baseDestroy).join("; ")}`);
  const baselineNotSeeded = snapshotDiff(s.seeded, await orgSnapshot(s.a, s.seededProjects));
  const baseline = {
    upMs: base.durationMs,
    upOperations: base.operationsSeen,
    changeMs: change.durationMs,
    changeOperations: change.operationsSeen,
    destroyMs: baseDestroy.durationMs,
    destroyOperations: baseDestroy.operationsSeen,
  };
  s.log(
    `engine kills: un-killed up ${baseline.upMs} ms (${baseline.upOperations} provider operations), change ${baseline.changeMs} ms (${baseline.changeOperations}), ` +
      `destroy ${baseline.destroyMs} ms (${baseline.destroyOperations}); drift of un-killed runs: ${expectedDrift.join("; ") || "none"}; seed ${s.seed}`,
  );
  return { baseline, baselineNotSeeded, expectedDrift };
}

/** The kinds of random episodes, in turn. */
const EPISODE_CYCLE: readonly EpisodeKind[] = ["create", "change", "create", "destroy"];

/** Counters across episodes: random and held episodes so far, and random episodes per kind (their trigger). */
interface EpisodeCounters {
  randomEpisodes: number;
  heldEpisodes: number;
  triggerCount: Record<EpisodeKind, number>;
}

/** One episode's plan: the command it kills, where and how. */
interface Episode {
  index: number;
  kind: EpisodeKind;
  variant: "v1" | "v2";
  cmd: Cmd;
  trigger: KillTrigger;
  target: KillTarget;
  plan: KillPlan;
  /** For `operation` kills: the n-th pending operation. */
  nth: number;
  /** For held kill points: the hold and what it saw. */
  heldCtl: HeldControl | undefined;
}

/**
 * Starts episode `index`: picks its kind (`both`: random kill points in the odd episodes, held ones in the even;
 * each with counters of its own, so that the random episodes cycle through kinds and targets as with `random`
 * alone), clears the adoptions asked, readies the stack (empty for `create`, the dev settings deployed otherwise),
 * then draws the kill point within what un-killed runs of this kind took so far. Returns the plan.
 */
async function startEpisode(s: Soak, index: number, counters: EpisodeCounters): Promise<Episode> {
  const isHeld = s.killPoints === "held" || (s.killPoints === "both" && index % 2 === 0);
  s.adopting.clear(); // each episode starts from the example's settings
  const r0 = isHeld ? 0 : counters.randomEpisodes++;
  const h = isHeld ? counters.heldEpisodes++ : 0;
  const kind: EpisodeKind = isHeld ? "create" : (EPISODE_CYCLE[r0 % EPISODE_CYCLE.length] as EpisodeKind);
  if (kind === "create") await ensureEmpty(s);
  else await ensureDeployed(s);
  const variant: "v1" | "v2" = kind === "change" ? "v2" : "v1";
  const cmd: Cmd = kind === "destroy" ? { op: "destroy" } : { op: "up", variant };
  const episode = { index, kind, variant, cmd };
  if (!isHeld) {
    const trigger: KillTrigger = counters.triggerCount[kind]++ % 2 === 0 ? "operation" : "time";
    // kill points within what un-killed runs of this kind took so far (the machine's load varies)
    const nth = 1 + Math.floor(s.random() * Math.max(1, s.scale[kind].operations));
    const target = KILL_TARGETS[r0 % KILL_TARGETS.length] as KillTarget;
    const plan: KillPlan =
      trigger === "operation"
        ? { trigger: "operation", nth, extraMs: Math.floor(s.random() * s.latencyMs * 1.5), target }
        : { trigger: "time", afterMs: Math.floor(s.random() * Math.min(...s.scale[kind].ms)), target };
    return { ...episode, trigger, target, plan, nth, heldCtl: undefined };
  }
  // held kinds, releases, targets and operator paths: every combination within 12 held episodes
  const trigger: KillTrigger = h % 2 === 0 ? "answered" : "clear-pending";
  const target = HELD_TARGETS[h % HELD_TARGETS.length] as KillTarget;
  const c = Math.floor(h / 2);
  const heldCtl: HeldControl = {
    holdId: "",
    out: {
      release: c % 2 === 0 ? "before" : "during",
      nextHeld: false,
      heldAtKill: [],
      ...(trigger === "clear-pending"
        ? { operator: Math.floor((c + 1) / 2) % 2 === 0 ? ("refresh" as const) : ("package" as const) }
        : {}),
    },
  };
  return { ...episode, trigger, target, plan: { trigger: "held", held: heldCtl, target }, nth: 0, heldCtl };
}

/** A fresh record of episode `ep`, with the pending operations carried into it and its faults while killed. */
function newRecord(ep: Episode, carried: number, faults: { requests: number; faulted: number }): KillRecord {
  return {
    index: ep.index,
    kind: ep.kind,
    variant: ep.variant,
    trigger: ep.trigger,
    target: ep.target,
    ...(ep.trigger === "operation" ? { nth: ep.nth } : {}),
    ...(ep.heldCtl ? { held: ep.heldCtl.out } : {}),
    pending: [],
    lostAtKill: [],
    carried,
    stateResources: 0,
    childrenAtKill: 0,
    outlivedMs: {},
    leaked: [],
    languageHostLingering: 0,
    recoveryRuns: 0,
    apiRequests: faults.requests,
    faulted: faults.faulted,
    cancelledLock: false,
    clearedPendingCreates: 0,
    neededOperator: false,
    adoptedOnRequest: [],
    converged: false,
    recoveryErrors: [],
    duplicates: [],
    orphans: [],
    missing: [],
    differences: [],
    notSeeded: [],
    cleanedUp: [],
  };
}

/** The killed run of an episode and what it left: the record so far, the state at the kill, the watch of what outlived it. */
interface Killed {
  rec: KillRecord;
  /** The stack's state right after the kill (`pulumi stack export`). */
  atKill: StateView;
  /** Settles once what outlived the killed run is recorded ({@link watchKilled}). */
  watching: Promise<void>;
}

/**
 * Runs episode `ep`'s command and kills it (faults armed, the hold set for a held kill point); then records what
 * outlived it (awaited, but with a held kill released during the re-run, watched while it runs), what the server
 * applied that the state does not hold, and what the state held when the CLI died. Logs the kill.
 */
async function killEpisode(s: Soak, ep: Episode): Promise<Killed> {
  const carriedBefore = (await exported(s)).pendingOperations;
  await armFaults(s);
  if (ep.heldCtl)
    ep.heldCtl.holdId = (
      (await s.a.call("POST", "/_emulator/holds", { method: "POST", path: "/dashboards/?$" })) as {
        id: string;
      }
    ).id;
  const killed = await runCli(s, ep.cmd, ep.plan);
  const faultsAtKill = await disarmFaults(s);
  checkKey(s);
  const rec = newRecord(ep, carriedBefore.length, faultsAtKill);
  let watching: Promise<void> = Promise.resolve();
  if (killed.killedAtMs === undefined) {
    rec.finishedFirst = killed.code ?? -1;
  } else {
    rec.killedAtMs = killed.killedAtMs;
    watching = watchKilled(s, rec);
    if (ep.heldCtl?.out.release !== "during") await watching;
  }
  if (rec.killedAtMs !== undefined) {
    // what the server applied that the state does not hold (writes still on the wire finish first)
    await sleep(s.latencyMs * 3 + 100);
    rec.lostAtKill = await lostWrites(s);
  }
  // what the state held when the CLI died: `pulumi stack export`, its pending operations less those carried
  const atKill = await exported(s);
  const carried = new Set(carriedBefore.map((p) => `${p.operation} ${p.urn}`));
  rec.pending = atKill.pendingOperations
    .filter((p) => !carried.has(`${p.operation} ${p.urn}`))
    .map((p) => ({ operation: p.operation, type: shortType(p.type), name: p.name }));
  rec.stateResources = atKill.resources.filter((r) => r.custom && !r.type.startsWith("pulumi:")).length;
  logKill(s, ep, rec);
  return { rec, atKill, watching };
}

/** Logs an episode's kill: when (and how, for a held kill point), the state it left, what it lost. */
function logKill(s: Soak, ep: Episode, rec: KillRecord): void {
  const plan = ep.plan;
  const when =
    rec.killedAtMs === undefined
      ? `not killed: the run ended first (exit ${rec.finishedFirst})`
      : `killed at ${rec.killedAtMs} ms (${
          plan.trigger === "operation"
            ? `operation #${ep.nth} + ${plan.extraMs} ms`
            : plan.trigger === "held"
              ? `${ep.trigger}${rec.held?.operator ? ` via ${rec.held.operator}` : ""}, release ${rec.held?.release}: engine frozen at ${rec.held?.frozenAtMs} ms, ` +
                `next look-alike create held ${rec.held?.nextHeld ? "yes" : "NO (uncertain moment)"}, held at the kill [${rec.held?.heldAtKill.join(", ")}]`
              : "random time"
        })`;
  s.log(
    `kill ${ep.index}/${s.kills} ${ep.kind} [${ep.trigger}] (${ep.target}): ${when}; state: ${rec.stateResources} resources, pending [${rec.pending.map((p) => `${p.operation} ${p.type} ${p.name}`).join(", ")}]` +
      `; applied, not recorded: ${rec.lostAtKill.join(", ") || "nothing"}`,
  );
}

/** {@link recover} of `cmd` with the fault mix armed; adds the requests and faults to `rec`. */
async function recoverUnderFaults(s: Soak, cmd: Cmd, rec: KillRecord): Promise<Recovery> {
  await armFaults(s);
  try {
    return await recover(s, cmd);
  } finally {
    const f = await disarmFaults(s);
    rec.apiRequests += f.requests;
    rec.faulted += f.faulted;
  }
}

/**
 * The operator's `refresh` path of a `clear-pending` kill point: `pulumi refresh --clear-pending-creates` before
 * the up; records on `held` how many pending creates of `atKill` it dropped, and its errors on `rec`.
 */
async function operatorRefresh(
  s: Soak,
  rec: KillRecord,
  held: HeldControl,
  atKill: StateView,
): Promise<void> {
  const creating = (v: StateView) => v.pendingOperations.filter((p) => p.operation === "creating").length;
  const rr = await runCli(s, { op: "refresh", extra: ["--clear-pending-creates"] }, { trigger: "none" });
  checkKey(s);
  if (rr.code !== 0) rec.recoveryErrors.push(...firstErrors(rr).map((e) => `refresh: ${e}`));
  held.out.refreshCleared = creating(atKill) - creating(await exported(s));
}

/**
 * The operator's `package` path of a `clear-pending` kill point, after an up that converged: the up adopted what
 * the killed run made, so `pulumi-posthog clear-pending` clears every pending create; then up again. Records on
 * `held` what it cleared and kept, its findings in `findings`; returns the recovery of the runs so far and again.
 */
async function operatorPackage(
  s: Soak,
  ep: Episode,
  rec: KillRecord,
  held: HeldControl,
  r: Recovery,
  findings: string[],
): Promise<Recovery> {
  const c = await clearPendingCommand(s);
  held.out.packageCleared = c.cleared.length;
  held.out.packageKept = c.kept;
  if (c.error) findings.push(`pulumi-posthog clear-pending failed: ${c.error}`);
  for (const k of c.kept) findings.push(`pulumi-posthog clear-pending kept the pending create of ${k}`);
  const left = (await exported(s)).pendingOperations.filter((p) => p.operation === "creating");
  if (!c.error && left.length > 0)
    findings.push(`pulumi-posthog clear-pending left ${left.length} pending create(s)`);
  const again = await recoverUnderFaults(s, ep.cmd, rec);
  rec.recoveryRuns += again.runs;
  rec.recoveryErrors.push(...again.errors);
  return { ...again, runs: r.runs + again.runs, errors: [...r.errors, ...again.errors] };
}

/**
 * Once a held kill's re-runs are done: waits until PostHog has applied what the hold kept (before anything is
 * audited), finds the re-run's first read of dashboards if the release did not, and logs how the hold ended.
 */
async function settleHeld(s: Soak, held: HeldControl): Promise<void> {
  await held.released;
  if (held.out.firstReadAfterKillMs === undefined && held.rerunFrom !== undefined) {
    const readAt = await firstDashboardRead(s, held.rerunFrom);
    if (readAt !== undefined && held.killedAt !== undefined)
      held.out.firstReadAfterKillMs = readAt - held.killedAt;
  }
  const o = held.out;
  s.log(
    `  held: released by ${o.releasedBy ?? "?"} ${o.releasedAfterKillMs ?? "?"} ms after the kill; the re-run's first read of dashboards ` +
      `${o.firstReadAfterKillMs === undefined ? "none" : `${o.firstReadAfterKillMs} ms after the kill`}` +
      `${o.refreshCleared !== undefined ? `; refresh --clear-pending-creates dropped ${o.refreshCleared} pending create(s)` : ""}` +
      `${o.packageCleared !== undefined ? `; pulumi-posthog clear-pending cleared ${o.packageCleared}, kept ${o.packageKept?.length ?? 0}` : ""}`,
  );
}

/**
 * Recovers from the kill as a user would: `pulumi cancel` if the killed run's lock refuses the next, then the
 * same command again until it succeeds; for held kill points, `pulumi cancel` at once for the lock a killed CLI
 * left, and the operator's path (`clear-pending`) around the same command. Returns the recovery and the operator's
 * findings; with a held kill point, PostHog has applied what the hold kept when it returns.
 */
async function recoverEpisode(s: Soak, ep: Episode, k: Killed): Promise<{ r: Recovery; findings: string[] }> {
  const { rec } = k;
  const findings: string[] = [];
  const held = ep.heldCtl;
  const operator = held?.out.operator;
  if (held) {
    held.rerunFrom = Date.now();
    if (lockHeld(s)) {
      await cancelLock(s);
      rec.cancelledLock = true;
    }
  }
  if (held && operator === "refresh") await operatorRefresh(s, rec, held, k.atKill);
  let r = await recoverUnderFaults(s, ep.cmd, rec);
  rec.recoveryRuns = r.runs;
  rec.recoveryErrors.push(...r.errors);
  rec.cancelledLock ||= r.cancelledLock;
  if (held && operator === "package" && r.converged) r = await operatorPackage(s, ep, rec, held, r, findings);
  if (held) await settleHeld(s, held);
  return { r, findings };
}

/**
 * Audits the episode once re-run (duplicates, orphans, missing; the operator removes orphans and runs again when
 * the re-runs were stuck on them), compares a refresh with the state, removes the orphans, destroys (but after a
 * `destroy` episode) and compares the organization with the seeded one, puts back what differs. Fills `rec`.
 */
async function auditEpisode(
  s: Soak,
  ep: Episode,
  k: Killed,
  recovered: { r: Recovery; findings: string[] },
  expectedDrift: string[],
): Promise<void> {
  const { rec } = k;
  let r = recovered.r;
  await k.watching;
  rec.differences.push(...recovered.findings);
  let au = await audit(s);
  if (!r.converged && au.orphanObjects.length > 0) {
    // stuck on an object the state does not know (e.g. a domain a lost create made): the operator removes the
    // orphans, then runs the command again
    rec.neededOperator = true;
    rec.duplicates = au.duplicates;
    rec.orphans = au.orphans;
    for (const o of au.orphanObjects) await o.remove().catch(() => undefined);
    rec.cleanedUp.push(...au.orphanObjects.map((o) => `${o.identity} (id ${o.id})`));
    r = await recoverUnderFaults(s, ep.cmd, rec);
    rec.recoveryRuns += r.runs;
    rec.recoveryErrors.push(...r.errors);
    au = await audit(s);
  }
  rec.converged = r.converged;
  rec.adoptedOnRequest = [...s.adopting];
  rec.duplicates = [...new Set([...rec.duplicates, ...au.duplicates])];
  rec.orphans = [...new Set([...rec.orphans, ...au.orphans])];
  rec.missing = au.missing;
  if (ep.kind !== "destroy" && r.converged) {
    const { drift, clearedPendingCreates } = await differences(s);
    rec.differences.push(...drift.filter((d) => !expectedDrift.includes(d)));
    rec.clearedPendingCreates = clearedPendingCreates;
  }
  // each finding is counted once: the orphans go before the destroy that ends the episode
  for (const o of au.orphanObjects) await o.remove().catch(() => undefined);
  rec.cleanedUp.push(...au.orphanObjects.map((o) => `${o.identity} (id ${o.id})`));
  if (ep.kind !== "destroy") await ensureEmpty(s);
  rec.notSeeded = snapshotDiff(s.seeded, await orgSnapshot(s.a, s.seededProjects));
  rec.cleanedUp.push(...(await restoreSeeded(s)));
  rec.cleanedUp = [...new Set(rec.cleanedUp)];
}

/** Logs how an episode ended: its recovery, its findings one a line. */
function logEpisode(s: Soak, rec: KillRecord): void {
  s.log(
    `  recovered in ${rec.recoveryRuns} run(s), converged ${rec.converged}${s.faultsOn ? ` (${rec.faulted} of ${rec.apiRequests} API requests faulted)` : ""}; duplicates ${rec.duplicates.length}, orphans ${rec.orphans.length}, ` +
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
    ...rec.adoptedOnRequest.map((d) => `declared with adopt: true, as a re-run asked: ${d}`),
  ])
    s.log(`    ${x}`);
}

/** One episode (see the module doc): planned, killed, recovered, audited and logged. Returns its record. */
async function runEpisode(
  s: Soak,
  index: number,
  counters: EpisodeCounters,
  expectedDrift: string[],
): Promise<KillRecord> {
  const ep = await startEpisode(s, index, counters);
  const killed = await killEpisode(s, ep);
  const recovered = await recoverEpisode(s, ep, killed);
  await auditEpisode(s, ep, killed, recovered, expectedDrift);
  logEpisode(s, killed.rec);
  return killed.rec;
}

/** Per kill point kind: episodes, kills, certain moments, not converged, duplicates, orphans, missing. */
function tallyByKillPoint(records: KillRecord[]): EngineKillReport["totals"]["byKillPoint"] {
  const byKillPoint: EngineKillReport["totals"]["byKillPoint"] = {};
  for (const r of records) {
    byKillPoint[r.trigger] ??= {
      episodes: 0,
      kills: 0,
      certain: 0,
      notConverged: 0,
      duplicates: 0,
      orphans: 0,
      missing: 0,
    };
    const row = byKillPoint[r.trigger];
    if (!row) continue;
    row.episodes++;
    if (r.killedAtMs !== undefined) row.kills++;
    if (r.killedAtMs !== undefined && r.held?.nextHeld) row.certain++;
    if (!r.converged) row.notConverged++;
    row.duplicates += r.duplicates.length;
    row.orphans += r.orphans.length;
    row.missing += r.missing.length;
  }
  return byKillPoint;
}

/** The report's totals over the episodes' records (see {@link EngineKillReport}'s `totals`). */
function totalsOf(
  records: KillRecord[],
  byKillPoint: EngineKillReport["totals"]["byKillPoint"],
): EngineKillReport["totals"] {
  const sum = (f: (r: KillRecord) => number) => records.reduce((acc, r) => acc + f(r), 0);
  const killedRuns = records.filter((r) => r.killedAtMs !== undefined);
  return {
    kills: killedRuns.length,
    duringOperation: killedRuns.filter((r) => r.pending.length > 0).length,
    pendingCreates: sum((r) => r.pending.filter((p) => p.operation === "creating").length),
    lostWrites: sum((r) => r.lostAtKill.length),
    apiRequests: sum((r) => r.apiRequests),
    faulted: sum((r) => r.faulted),
    notConverged: records.filter((r) => !r.converged).length,
    duplicates: sum((r) => r.duplicates.length),
    orphans: sum((r) => r.orphans.length),
    missing: sum((r) => r.missing.length),
    differences: sum((r) => r.differences.length),
    leakedProcesses: sum((r) => r.leaked.length),
    languageHostsLingering: sum((r) => r.languageHostLingering),
    longestOutlivedMs: Math.max(0, ...records.map((r) => r.childrenGoneMs ?? 0)),
    longestOutlivedMsByRole: records.reduce<Record<string, number>>((acc, r) => {
      for (const [k, v] of Object.entries(r.outlivedMs)) acc[k] = Math.max(acc[k] ?? 0, v);
      return acc;
    }, {}),
    notSeededAfterDestroy: sum((r) => r.notSeeded.length),
    cleanedUp: sum((r) => r.cleanedUp.length),
    neededOperator: records.filter((r) => r.neededOperator).length,
    adoptedOnRequest: sum((r) => r.adoptedOnRequest.length),
    cancelledLocks: records.filter((r) => r.cancelledLock).length,
    clearedPendingCreates: sum((r) => r.clearedPendingCreates),
    byKillPoint,
    byType: tallyByType(records),
  };
}

/**
 * The end of a soak: nothing deployed, the organization as seeded, no process of any run left (those found are
 * recorded and SIGKILLed). Returns how the organization differs from the seeded one and the processes left.
 */
async function finalCheck(s: Soak): Promise<Pick<EngineKillReport, "finalNotSeeded" | "finalLeaked">> {
  await ensureEmpty(s);
  const finalNotSeeded = snapshotDiff(s.seeded, await orgSnapshot(s.a, s.seededProjects));
  const left = processesWithMarker(s.marker);
  const finalLeaked = left.map((p) => `${p.pid} ${p.cmd}`);
  killAll(left);
  return { finalNotSeeded, finalLeaked };
}

/**
 * Runs the engine-kill soak (see the module doc): the un-killed baseline, then one episode per kill, then a final
 * destroy. Starts and stops its own emulator; never throws for what it measures (it is in the report), only for
 * setup errors.
 */
export async function runEngineKills(options: EngineKillOptions = {}): Promise<EngineKillReport> {
  const t0 = performance.now();
  const s = await startSoak(options);
  try {
    const measured = await measureBaseline(s);
    const counters: EpisodeCounters = {
      randomEpisodes: 0,
      heldEpisodes: 0,
      triggerCount: { create: 0, change: 0, destroy: 0 },
    };
    const records: KillRecord[] = [];
    for (let index = 1; index <= s.kills; index++)
      records.push(await runEpisode(s, index, counters, measured.expectedDrift));
    const final = await finalCheck(s);
    const byKillPoint = tallyByKillPoint(records);
    s.log(
      `engine kills by kill point: ${Object.entries(byKillPoint)
        .map(
          ([k, v]) =>
            `${k}: ${v.kills} kills of ${v.episodes} episodes${k === "answered" || k === "clear-pending" ? ` (${v.certain} at the certain moment)` : ""}, ` +
            `not converged ${v.notConverged}, duplicates ${v.duplicates}, orphans ${v.orphans}, missing ${v.missing}`,
        )
        .join("; ")}`,
    );
    return {
      seed: s.seed,
      latencyMs: s.latencyMs,
      faults: s.faultsOn,
      ...measured,
      kills: records,
      totals: totalsOf(records, byKillPoint),
      ...final,
      keyLeaks: [...s.keyLeaks],
      wallMs: Math.round(performance.now() - t0),
    };
  } finally {
    for (const c of s.children) killTree(c);
    await s.dns.stop();
    await s.emulator.close();
    rmSync(s.work, { recursive: true, force: true });
  }
}
