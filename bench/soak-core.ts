/**
 * The fault-injection soak, shared by `test/measure/soak.test.ts` (small N, in `npm test`) and
 * `bench/soak.ts` (`npm run soak`, larger N).
 *
 * It applies, changes and destroys N resources (dashboards, restricted dashboards with a collaborator,
 * invites, domains, projects) through the REAL dynamic-provider host over gRPC, with the providers serialized
 * from the compiled `dist/` as `pulumi.dynamic.Resource` does, while the emulator injects faults with
 * probabilities (429 with and without Retry-After, 500/502/503, connection resets, writes applied and then
 * the response dropped; about 20 % of API requests in all). Each phase is re-run as a user re-runs
 * `pulumi up`: from the saved state, retrying the failed operations, for a bounded number of rounds.
 * After each phase (faults off) it compares the server with the state: duplicates (two server objects for
 * one declared resource), orphans (a server object, not in the seeded world, that the state does not know),
 * missing objects, and the state equal to a fresh read. It collects everything that could leak the API key:
 * the saved checkpoints, the host's stdout/stderr and every error message.
 *
 * The "engine" here is a minimal one (Check, Diff, Create, Update, create-before-delete or
 * delete-before-replace Replace, Delete, dependents first), driving the host directly like
 * test/provider/harness.ts, so that failures of single operations can be counted and retried.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startEmulator } from "../emulator";
import { mapLimit } from "../provider/apps/organization";
import { type ProviderHost, startProviderHost } from "../tools/provider-host";

/** The checkout root (the directory with package.json), from bench/ or dist/bench/. */
export function repoRoot(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "dist"))) return dir;
    if (dirname(dir) === dir) throw new Error("no checkout root with a dist/ directory above this file");
  }
}

const nativeRequire = createRequire(__filename);

/** Serializes the provider of `name` from the compiled SDK shim, as pulumi.dynamic.Resource does. */
export async function serializeOurs(name: string): Promise<string> {
  const file = join(repoRoot(), "dist", "sdk", "provider-shim.js");
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first`);
  const shim = nativeRequire(file) as typeof import("../sdk/provider-shim");
  const serializer = nativeRequire("@pulumi/pulumi/runtime/closure/serializeClosure") as {
    serializeFunction(f: () => unknown, o: { allowSecrets: boolean }): Promise<{ text: string }>;
  };
  const provider = shim.providerShim(name);
  return (await serializer.serializeFunction(() => provider, { allowSecrets: true })).text;
}

/** One fault rule of the emulator's control plane (`POST /_emulator/faults`). */
export interface FaultRule {
  method?: string;
  path: string;
  status?: number;
  retryAfter?: number;
  reset?: boolean;
  dropResponse?: boolean;
  probability: number;
}

/**
 * The soak's fault mix: about 20 % of API requests fail in one of these ways (rules are tried in order,
 * each with its own probability: 1 − Π(1 − p) ≈ 19 % of reads and ≈ 23 % of writes).
 */
export const SOAK_FAULTS: readonly FaultRule[] = [
  { path: "^/api/", status: 429, retryAfter: 1, probability: 0.04 },
  { path: "^/api/", status: 429, probability: 0.04 }, // no Retry-After: the body names the wait
  { path: "^/api/", status: 500, probability: 0.04 },
  { path: "^/api/", status: 502, probability: 0.03 },
  { path: "^/api/", status: 503, probability: 0.03 },
  { path: "^/api/", reset: true, probability: 0.04 },
  { method: "POST", path: "^/api/", dropResponse: true, probability: 0.05 },
  { method: "PATCH", path: "^/api/", dropResponse: true, probability: 0.05 },
  { method: "DELETE", path: "^/api/", dropResponse: true, probability: 0.05 },
];

type Kind = "Dashboard" | "Invite" | "Domain" | "Project" | "DashboardCollaborator";

/** A resource of the generated program: its inputs may depend on other resources' state (their ids). */
interface Declared {
  name: string;
  type: Kind;
  /** Names this resource depends on (created first, deleted last). */
  dependsOn: string[];
  inputs(state: Map<string, StateEntry>): Record<string, unknown> | undefined;
}

/** What the "engine" keeps per resource (like a checkpoint entry). */
export interface StateEntry {
  name: string;
  type: Kind;
  urn: string;
  id: string;
  inputs: Record<string, unknown>;
  outs: Record<string, unknown>;
}

/**
 * The program at `version` 1 (initial) or 2 (every kind that can change, changed), N resources in all. The Invites
 * named in `adopting` are declared with `adopt: true` and `deleteAdoptedOnDestroy: true`: what a user does when a
 * create whose answer was lost fails naming the invite and `adopt: true` (PostHog's invite carries no marker that
 * would prove which create made it: provider/framework/lost-create.ts).
 */
function program(
  n: number,
  run: string,
  version: 1 | 2,
  collaboratorUuid: string,
  adopting: ReadonlySet<string> = new Set(),
): Declared[] {
  const out: Declared[] = [];
  for (let i = 0; out.length < n; i++) {
    const slot = i % 6;
    if (slot === 0) {
      out.push({
        name: `dash-${i}`,
        type: "Dashboard",
        dependsOn: [],
        inputs: () => ({ name: `${run} dash ${i}`, description: version === 1 ? "first" : "second" }),
      });
    } else if (slot === 1) {
      out.push({
        name: `invite-${i}`,
        type: "Invite",
        dependsOn: [],
        // a level change replaces the invite (create the new one, then delete the old one)
        inputs: () => ({
          targetEmail: `${run}-${i}@example.com`,
          level: version === 1 ? "member" : "admin",
          sendEmail: false,
          ...(adopting.has(`invite-${i}`) ? { adopt: true, deleteAdoptedOnDestroy: true } : {}),
        }),
      });
    } else if (slot === 2) {
      out.push({
        name: `domain-${i}`,
        type: "Domain",
        dependsOn: [],
        inputs: () => ({ domain: `${run}-${i}.example.com` }),
      });
    } else if (slot === 3) {
      out.push({
        name: `project-${i}`,
        type: "Project",
        dependsOn: [],
        inputs: () => ({ name: `${run} project ${i}${version === 2 ? " v2" : ""}` }),
      });
    } else if (slot === 4) {
      out.push({
        name: `restricted-${i}`,
        type: "Dashboard",
        dependsOn: [],
        inputs: () => ({ name: `${run} restricted ${i}`, restrictionLevel: 37, pinned: version === 2 }),
      });
    } else {
      const dash = `restricted-${i - 1}`;
      out.push({
        name: `collaborator-${i}`,
        type: "DashboardCollaborator",
        dependsOn: [dash],
        inputs: (state) => {
          const d = state.get(dash);
          return d ? { dashboardId: Number(d.id), userUuid: collaboratorUuid } : undefined;
        },
      });
    }
  }
  return out;
}

/** Runs `tasks` with at most `limit` in flight. */
async function pool(limit: number, tasks: (() => Promise<void>)[]): Promise<void> {
  await mapLimit(tasks, limit, (t) => t());
}

const messageOf = (e: unknown): string =>
  String((e as { details?: string }).details ?? (e as Error).message ?? e);

/** The minimal engine: state, pending deletes of replaced objects, and one `up` round over a program. */
function engine(host: ProviderHost, providers: Record<string, string>, stack: string) {
  const state = new Map<string, StateEntry>();
  const pendingDeletes: StateEntry[] = [];
  const urnOf = (type: Kind, name: string) =>
    `urn:pulumi:${stack}::posthog-soak::pulumi-nodejs:dynamic/posthog:${type}::${name}`;

  async function applyOne(d: Declared): Promise<void> {
    const inputs = d.inputs(state);
    if (inputs === undefined) throw new Error(`${d.name}: a dependency is not in the state yet`);
    const urn = urnOf(d.type, d.name);
    const provider = providers[d.type] as string;
    const old = state.get(d.name);
    const checked = await host.check(urn, old?.inputs ?? {}, { ...inputs, __provider: provider });
    if (checked.failures.length > 0) throw new Error(`${d.name}: check: ${JSON.stringify(checked.failures)}`);
    if (!old) {
      const c = await host.create(urn, checked.inputs);
      state.set(d.name, { name: d.name, type: d.type, urn, id: c.id, inputs: checked.inputs, outs: c.outs });
      return;
    }
    const diff = await host.diff(old.id, urn, old.outs, checked.inputs);
    if (diff.changes === false) return;
    if (diff.replaces.length > 0) {
      if (diff.deleteBeforeReplace) {
        await host.delete(old.id, urn, old.outs);
        state.delete(d.name);
        const c = await host.create(urn, checked.inputs);
        state.set(d.name, { ...old, id: c.id, inputs: checked.inputs, outs: c.outs });
      } else {
        const c = await host.create(urn, checked.inputs);
        state.set(d.name, { ...old, id: c.id, inputs: checked.inputs, outs: c.outs });
        pendingDeletes.push(old);
        await host.delete(old.id, urn, old.outs);
        pendingDeletes.splice(pendingDeletes.indexOf(old), 1);
      }
      return;
    }
    const u = await host.update(old.id, urn, old.outs, checked.inputs);
    state.set(d.name, { ...old, inputs: checked.inputs, outs: u.outs });
  }

  async function deleteOne(e: StateEntry, pending: boolean): Promise<void> {
    await host.delete(e.id, e.urn, e.outs);
    if (pending) pendingDeletes.splice(pendingDeletes.indexOf(e), 1);
    else state.delete(e.name);
  }

  /** One `up`: creates/updates/replaces what is declared, deletes what is not. Returns the failures. */
  async function up(declared: Declared[], parallel: number): Promise<string[]> {
    const failures: string[] = [];
    const guard = (what: string, f: () => Promise<void>) => async () => {
      try {
        await f();
      } catch (e) {
        failures.push(`${what}: ${messageOf(e)}`);
      }
    };
    const roots = declared.filter((d) => d.dependsOn.length === 0);
    const dependents = declared.filter((d) => d.dependsOn.length > 0);
    await pool(
      parallel,
      roots.map((d) => guard(d.name, () => applyOne(d))),
    );
    await pool(
      parallel,
      dependents.map((d) => guard(d.name, () => applyOne(d))),
    );
    // deletes: dependents first (collaborators), then the rest; and the old objects of replacements
    const names = new Set(declared.map((d) => d.name));
    const gone = [...state.values()].filter((e) => !names.has(e.name));
    const first = gone.filter((e) => e.type === "DashboardCollaborator");
    const rest = gone.filter((e) => e.type !== "DashboardCollaborator");
    await pool(
      parallel,
      first.map((e) => guard(`delete ${e.name}`, () => deleteOne(e, false))),
    );
    await pool(parallel, [
      ...rest.map((e) => guard(`delete ${e.name}`, () => deleteOne(e, false))),
      ...[...pendingDeletes].map((e) => guard(`delete replaced ${e.name}`, () => deleteOne(e, true))),
    ]);
    return failures;
  }

  return { state, pendingDeletes, up, urnOf };
}

/** Options of {@link runSoak}. */
export interface SoakOptions {
  /** Resources in the program (default 30). */
  resources?: number;
  /** Operations in flight at once (default 10; Pulumi's default is 4 × CPUs). */
  parallel?: number;
  /** Bound on the `up` rounds per phase (default 8). */
  maxRounds?: number;
  /** Fault rules (default {@link SOAK_FAULTS}). */
  faults?: readonly FaultRule[];
  /** Client retry base delay in milliseconds, given to the host as POSTHOG_RETRY_BASE_DELAY_MS (default 20). */
  retryBaseDelayMs?: number;
  /** Progress lines (optional). */
  log?: (line: string) => void;
}

/** What the server and the state disagree on after a phase (all empty when they agree). */
export interface Audit {
  /** Declared identities (e.g. `Dashboard:<name>`) with more than one live server object. */
  duplicates: string[];
  /** Live server objects, not in the seeded world, whose id no state entry holds. */
  orphans: string[];
  /** State entries whose server object is gone. */
  missing: string[];
  /** State entries whose fresh read differs from the stored outputs (`name: property, …`). */
  stale: string[];
}

/** One phase (apply, change, destroy): failures per round and the audit once converged. */
export interface PhaseReport {
  phase: "apply" | "change" | "destroy";
  /** Failed operations per `up` round; the phase converged when the last is 0. */
  failuresPerRound: number[];
  converged: boolean;
  audit: Audit;
  /** State entries after the phase. */
  stateSize: number;
}

/** The soak's result. */
export interface SoakReport {
  resources: number;
  phases: PhaseReport[];
  /**
   * API requests seen by the emulator while applying (audits excluded), and how many were answered by an
   * injected status or reset (dropped responses are logged with the status of the applied write).
   */
  requests: number;
  faulted: number;
  /** Places where the API key was found in clear text (checkpoint files, host output, error messages). */
  keyLeaks: string[];
  /** Sample of the error messages collected (first 5), for the report. */
  sampleErrors: string[];
  wallMs: number;
}

interface Live {
  kind: Kind;
  id: string;
  identity: string;
}

/** A small client of the soak's emulator with its seed key: one request (throws on a status ≥ 400), or every page of a list. */
interface EmuClient {
  send(method: string, path: string, body?: unknown): Promise<unknown>;
  all(path: string): Promise<Record<string, unknown>[]>;
}

/** The {@link EmuClient} of `emu`. */
function emulatorClient(emu: { url: string; apiKey: string }): EmuClient {
  const send = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${emu.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${emu.apiKey}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${method} ${path} → ${res.status} ${text}`);
    return text ? (JSON.parse(text) as unknown) : undefined;
  };
  const all = async (path: string): Promise<Record<string, unknown>[]> => {
    const out: Record<string, unknown>[] = [];
    let url: string | null = `${path}${path.includes("?") ? "&" : "?"}limit=100`;
    while (url) {
      const page = (await send("GET", url)) as { results: Record<string, unknown>[]; next: string | null };
      out.push(...page.results);
      url = page.next ? new URL(page.next).pathname + new URL(page.next).search : null;
    }
    return out;
  };
  return { send, all };
}

/**
 * Every live object of the kinds the soak manages, with the identity a declared resource gives it: the dashboards
 * of project `proj` (and the collaborators of the restricted ones), then the projects, invites and domains of `org`.
 */
async function liveObjects(api: EmuClient, org: string, proj: string): Promise<Live[]> {
  const out: Live[] = [];
  const dashboards = await api.all(`${proj}/dashboards/`);
  for (const d of dashboards) {
    out.push({ kind: "Dashboard", id: String(d.id), identity: `Dashboard:${String(d.name)}` });
    if (d.restriction_level === 37) {
      const cs = (await api.send("GET", `${proj}/dashboards/${d.id}/collaborators/`)) as
        | { user: { uuid: string } }[]
        | { results: { user: { uuid: string } }[] };
      for (const c of Array.isArray(cs) ? cs : cs.results) {
        const id = `${d.id}/${c.user.uuid}`;
        out.push({ kind: "DashboardCollaborator", id, identity: `DashboardCollaborator:${id}` });
      }
    }
  }
  for (const p of await api.all(`${org}/projects/`))
    out.push({ kind: "Project", id: String(p.id), identity: `Project:${String(p.name)}` });
  for (const i of await api.all(`${org}/invites/`))
    out.push({ kind: "Invite", id: String(i.id), identity: `Invite:${String(i.target_email)}` });
  for (const d of await api.all(`${org}/domains/`))
    out.push({ kind: "Domain", id: String(d.id), identity: `Domain:${String(d.domain)}` });
  return out;
}

/** The real provider host of a soak, its output collected in `hostOutput` (scanned for the API key at the end). */
function startSoakHost(options: SoakOptions, hostOutput: string[]): Promise<ProviderHost> {
  return startProviderHost({
    cwd: repoRoot(),
    project: "posthog-soak",
    deadlineMs: 120_000,
    env: {
      POSTHOG_RETRY_BASE_DELAY_MS: String(options.retryBaseDelayMs ?? 20),
      // The emulator applies a request before it answers or never (the soak arms no holds): a create its 502 or reset
      // lost is decided by a list read 1 s after it started, instead of PostHog's 10-minute window.
      POSTHOG_LOST_CREATE_WINDOW: "1",
      POSTHOG_LOST_CREATE_WAIT: "3",
    },
    onOutput: (t) => hostOutput.push(t),
  });
}

/** One soak's state, made by {@link readySoak} and handed to each phase. */
interface SoakRun {
  parallel: number;
  maxRounds: number;
  faults: readonly FaultRule[];
  log: (line: string) => void;
  emu: { apiKey: string };
  api: EmuClient;
  /** The organization's and the project's API paths. */
  org: string;
  proj: string;
  host: ProviderHost;
  /** The minimal engine driving the host, with its state. */
  eng: ReturnType<typeof engine>;
  /** Live objects of the seeded world (`Kind:id`): never orphans. */
  seeded: Set<string>;
  /** The seeded member Mia's uuid: the restricted dashboards' collaborator. */
  collaboratorUuid: string;
  /** Where each round's checkpoint is saved. */
  stateDir: string;
  /** The Invites a failure told to declare with `adopt: true` (see {@link program}); the user follows it. */
  adopting: Set<string>;
  /** Every failure message of every round; the phases so far; API requests while armed and how many faulted. */
  errors: string[];
  phases: PhaseReport[];
  requests: number;
  faulted: number;
}

/**
 * Readies a soak once its emulator and host run: configures the host (the API key as a secret), finds the seeded
 * member Mia, serializes the providers, records the seeded world and makes the engine. Returns the soak's state.
 * Throws when Mia is missing.
 */
async function readySoak(
  options: SoakOptions,
  emu: { url: string; apiKey: string; organizationId: string; projectId: number },
  host: ProviderHost,
  stateDir: string,
): Promise<SoakRun> {
  const api = emulatorClient(emu);
  const org = `/api/organizations/${emu.organizationId}`;
  const proj = `/api/projects/${emu.projectId}`;
  await host.configure(
    {
      "posthog:apiKey": emu.apiKey,
      "posthog:host": emu.url,
      "posthog:organizationId": emu.organizationId,
      "posthog:projectId": String(emu.projectId),
      "posthog:rateLimit": "off",
    },
    ["posthog:apiKey"],
  );
  const members = await api.all(`${org}/members/`);
  const mia = members.find((m) => (m.user as { email: string }).email === "mia.member@example.com");
  const miaUuid = (mia?.user as { uuid: string } | undefined)?.uuid;
  if (!miaUuid) throw new Error("the seeded member mia.member@example.com is missing");
  const providers: Record<string, string> = {};
  for (const k of ["Dashboard", "Invite", "Domain", "Project", "DashboardCollaborator"])
    providers[k] = await serializeOurs(k);
  const seeded = new Set((await liveObjects(api, org, proj)).map((l) => `${l.kind}:${l.id}`));
  return {
    parallel: options.parallel ?? 10,
    maxRounds: options.maxRounds ?? 8,
    faults: options.faults ?? SOAK_FAULTS,
    log: options.log ?? (() => {}),
    emu,
    api,
    org,
    proj,
    host,
    eng: engine(host, providers, "soak"),
    seeded,
    collaboratorUuid: miaUuid,
    stateDir,
    adopting: new Set(),
    errors: [],
    phases: [],
    requests: 0,
    faulted: 0,
  };
}

/** The identities (`Kind:…`) the declared resources give their objects, from their inputs in `state`. */
function declaredIdentities(declared: Declared[], state: Map<string, StateEntry>): Set<string> {
  const ids = new Set<string>();
  for (const d of declared) {
    const inputs = d.inputs(state);
    if (!inputs) continue;
    if (d.type === "Dashboard") ids.add(`Dashboard:${inputs.name}`);
    if (d.type === "Project") ids.add(`Project:${inputs.name}`);
    if (d.type === "Invite") ids.add(`Invite:${inputs.targetEmail}`);
    if (d.type === "Domain") ids.add(`Domain:${inputs.domain}`);
    if (d.type === "DashboardCollaborator")
      ids.add(`DashboardCollaborator:${inputs.dashboardId}/${inputs.userUuid}`);
  }
  return ids;
}

/** Server vs state after a phase (faults off): duplicates, orphans, missing, and entries a fresh read contradicts. */
async function audit(s: SoakRun, declared: Declared[]): Promise<Audit> {
  const { eng } = s;
  const objects = (await liveObjects(s.api, s.org, s.proj)).filter((l) => !s.seeded.has(`${l.kind}:${l.id}`));
  const counts = new Map<string, number>();
  for (const o of objects) counts.set(o.identity, (counts.get(o.identity) ?? 0) + 1);
  const wanted = declaredIdentities(declared, eng.state);
  const duplicates = [...counts].filter(([k, c]) => c > 1 && wanted.has(k)).map(([k, c]) => `${k} ×${c}`);
  const known = new Set([...eng.state.values()].map((e) => `${e.type}:${e.id}`));
  const orphans = objects.filter((o) => !known.has(`${o.kind}:${o.id}`)).map((o) => o.identity);
  const liveIds = new Set(objects.map((o) => `${o.kind}:${o.id}`));
  const missing = [...eng.state.values()]
    .filter((e) => !liveIds.has(`${e.type}:${e.id}`))
    .map((e) => `${e.name} (${e.type} ${e.id})`);
  const stale: string[] = [];
  for (const e of eng.state.values()) {
    const read = await s.host.read(e.id, e.urn, e.outs, e.inputs);
    const diffs = Object.keys({ ...read.props, ...e.outs }).filter(
      (k) => JSON.stringify(read.props[k]) !== JSON.stringify(e.outs[k]),
    );
    if (read.id !== e.id || diffs.length > 0) stale.push(`${e.name}: ${diffs.join(", ") || "id"}`);
  }
  return { duplicates, orphans, missing, stale };
}

/**
 * One phase: arms the faults, runs `up` rounds of `program()` until one has no failure (at most `maxRounds`; an
 * invite a failure asks to declare with `adopt: true` is, from the next round), saving each round's checkpoint;
 * disarms, counts the requests and faults, audits. Appends its report to `s.phases`.
 */
async function runPhase(s: SoakRun, phase: PhaseReport["phase"], program: () => Declared[]): Promise<void> {
  const { api, eng } = s;
  await api.send("DELETE", "/_emulator/requests");
  for (const f of s.faults) await api.send("POST", "/_emulator/faults", f);
  const failuresPerRound: number[] = [];
  let declared = program();
  for (let round = 1; round <= s.maxRounds; round++) {
    const failures = await eng.up(declared, s.parallel);
    for (const f of failures) {
      const told = /^(invite-\d+): [\s\S]*(explicitly with adopt: true|declare it with adopt: true)/.exec(f);
      if (told?.[1]) s.adopting.add(told[1]);
    }
    declared = program();
    s.errors.push(...failures);
    failuresPerRound.push(failures.length);
    // the saved checkpoint, as a user's state file (scanned for the key at the end)
    writeFileSync(
      join(s.stateDir, `${phase}-${round}.json`),
      JSON.stringify({ resources: [...eng.state.values()], pendingDeletes: eng.pendingDeletes }),
    );
    s.log(`${phase} round ${round}: ${failures.length} failed of ${declared.length} declared`);
    if (failures.length === 0) break;
  }
  await api.send("DELETE", "/_emulator/faults");
  const seen = (await api.send("GET", "/_emulator/requests")) as { status: number }[];
  s.requests += seen.length;
  s.faulted += seen.filter((r) => r.status === 0 || r.status === 429 || r.status >= 500).length;
  const report: PhaseReport = {
    phase,
    failuresPerRound,
    converged: failuresPerRound.at(-1) === 0,
    audit: await audit(s, declared),
    stateSize: eng.state.size + eng.pendingDeletes.length,
  };
  s.log(`${phase} audit: ${JSON.stringify(report.audit)}`);
  s.phases.push(report);
}

/** Where the API key is in clear text: a saved checkpoint, the host's output, an error message. */
function keyLeaksOf(s: SoakRun, hostOutput: string[]): string[] {
  const keyLeaks: string[] = [];
  for (const p of s.phases) {
    for (let round = 1; round <= p.failuresPerRound.length; round++) {
      const file = join(s.stateDir, `${p.phase}-${round}.json`);
      if (readFileSync(file, "utf8").includes(s.emu.apiKey)) keyLeaks.push(file);
    }
  }
  if (hostOutput.join("").includes(s.emu.apiKey)) keyLeaks.push("provider host stdout/stderr");
  for (const e of s.errors) if (e.includes(s.emu.apiKey)) keyLeaks.push(`error message: ${e.slice(0, 80)}…`);
  return keyLeaks;
}

/**
 * Runs the soak against a fresh in-process emulator (rate limit off, faults armed while applying) and a real
 * provider host: the phases apply, change and destroy. Never throws for failed operations: they are counted in
 * the report.
 */
export async function runSoak(options: SoakOptions = {}): Promise<SoakReport> {
  const n = options.resources ?? 30;
  const t0 = performance.now();
  const emu = await startEmulator({ rateLimit: false, inviteBudget: false });
  const hostOutput: string[] = [];
  const stateDir = mkdtempSync(join(tmpdir(), "posthog-soak-"));
  const run = `soak${Date.now().toString(36)}`;
  const host = await startSoakHost(options, hostOutput);
  try {
    const s = await readySoak(options, emu, host, stateDir);
    const uuid = s.collaboratorUuid;
    await runPhase(s, "apply", () => program(n, run, 1, uuid, s.adopting));
    await runPhase(s, "change", () => program(n, run, 2, uuid, s.adopting));
    await runPhase(s, "destroy", () => []);
    await host.close();
    return {
      resources: n,
      phases: s.phases,
      requests: s.requests,
      faulted: s.faulted,
      keyLeaks: keyLeaksOf(s, hostOutput),
      sampleErrors: s.errors.slice(0, 5),
      wallMs: Math.round(performance.now() - t0),
    };
  } finally {
    await host.close();
    await emu.close();
  }
}
