/**
 * `npm run bench -- --only latency` (and `--only shared-key`): the wall time users feel for `pulumi up`,
 * `pulumi preview --refresh` and `pulumi destroy`, with the emulator answering after a network round trip
 * (default 80 ms ± 20 ms, uniform) and PostHog's real per-key rate limits (480/minute, 4,800/hour, 429 without
 * `Retry-After`, "Expected available in N seconds." in the body).
 *
 * Programs, each through the real Pulumi CLI (tools/pulumi.ts runs the `pulumi` that `npm run pulumi-cli` readied,
 * v3.274.1, on a local file backend of its own per sequence; its Node.js language host runs the program, its
 * dynamic-provider plugin the provider host; the CLI's default `--parallel`, 4 × CPUs):
 * - `example`: examples/gitops on the dev stack (13 resources of every kind; a DNS automation publishes the
 *   domain's TXT record, as `npm start` does; TypeScript, type-checked by the language host as a user's is);
 * - `generated`: a program of N resources (default 300): N/5 Members (seeded users), N/5 Invites, N/5
 *   DashboardCollaborators (on one restricted dashboard per project, user = a Member's id) and the rest
 *   Dashboards, across 3 projects (the seeded one and two more, existing); plain JavaScript.
 * The provider plugin `pulumi-resource-posthog` (the same resource code behind the plugin adapter, found through
 * `plugins: providers:` in Pulumi.yaml) runs the `generated` program too, its resources declared as the generated
 * Node.js SDK declares them (`pulumi.CustomResource` of type `posthog:index:<Name>`).
 * The naive provider of bench/naive-provider.ts runs variants of both with the kinds it has (Dashboard, Invite,
 * Member, DashboardCollaborator): for `generated` the same 300 objects; for `example` its 8 resources of those
 * kinds (invites, members, the two dashboards, the collaborator). Both variants get the same emulator, seed,
 * latency and limits; ratios are normalised by each program's own floor, so they compare across variants.
 *
 * Every operation starts with a fresh rate-limit budget (the emulator's throttle history cleared, as if the
 * operations ran minutes apart), on an emulator (child process) started for each (program, provider, latency).
 * For each operation: wall time of the CLI (the stack is created before the clock starts: the local backend's
 * files of a stack with no deployment, as `pulumi stack init` writes them), requests sent (the emulator's log, the
 * DNS automation's polls left out), 429s, failed operations, the provider host's peak RSS, the state's size, and
 *
 *   ratioToFloor = (wall at latency − wall of the same operation at zero latency)
 *                  ÷ max(longest chain of dependent requests × mean RTT, requests ÷ (480/60 s))
 *
 * The chain (see {@link chainOf}): the dependency graph is the state's (the file backend's checkpoint, what
 * `pulumi stack export` prints: `dependencies` of each resource, as the program declared them through inputs,
 * and its parent); each resource weighs the requests its operation sends one after another ({@link REQUESTS}, read
 * from provider/resources/*.ts and bench/naive-provider.ts, cross-checked: the modelled total per operation is
 * printed beside the requests sent at zero latency); ours adds the access check (one GET before the first
 * operation of each provider process). up: the heaviest path through the graph; refresh: the heaviest single
 * read (all run at once); destroy: the heaviest path through the reversed graph. `preview --refresh` is the
 * refresh's chain plus the program's data-source reads (getBatchExports).
 *
 * Shared key: three CLIs on three stacks of the generated program (disjoint objects, one backend) apply at once
 * with one key: three provider processes, each with its own client-side limiter at 480/minute, so the server's
 * limit is what holds them; 429s must be waited out ("Expected available in N seconds"); reported against
 * the shared floor (all requests ÷ 480/minute).
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { emulatorEnv } from "../emulator";
import { OUTPUT_KEYS } from "../sdk/output-keys";
import {
  checkpointFile,
  linkPackage,
  type RunResult,
  readProject,
  runStack,
  savedState,
} from "../tools/pulumi";
import { dnsAutomation, seedApi } from "../tools/seed-api";
import { type Emu, median, round, startEmu } from "./emulator-process";
import { repoRoot } from "./soak-core";

const root = repoRoot();
/** PostHog's limits per personal API key. */
const PER_MINUTE = 480;
const PER_HOUR = 4800;
const RATE_PER_SECOND = PER_MINUTE / 60;
/**
 * Pulumi's default parallelism, 4 × CPUs (the CLI's `--parallel` default: 8 measured on 2 cores with v3.274.1).
 */
const ENGINE_PARALLEL = 4 * availableParallelism();

/**
 * `ours`: the dynamic SDK (pulumi-posthog); `plugin`: the same resources through the provider plugin
 * `pulumi-resource-posthog` (type tokens `posthog:index:<Name>`, the generated program only); `naive`: the naive
 * provider of bench/naive-provider.ts; `naiveOutputs`: the same naive provider returning ours' output properties
 * (its `withOutputs`); `noop`: the no-op provider of bench/naive-provider.ts (no HTTP, ours' outputs) behind ours'
 * generated program (the last two: the generated program only).
 */
export type ProviderKind = "ours" | "plugin" | "naive" | "naiveOutputs" | "noop";
export type ProgramKind = "example" | "generated";
export type OpName = "up" | "previewRefresh" | "destroy";
const OPS: OpName[] = ["up", "previewRefresh", "destroy"];

/**
 * The emulator CLI in a child process (its CPU is not charged to the engine's process) at PostHog's request limits.
 * The invite budget (50 invites an hour per organization) is lifted: the generated program declares 60 invites per
 * 300 resources, and these benchmarks measure the request budget (test/stack/org-rules-and-drift.test.ts covers the other).
 */
const startEmuChild = (latencyMs: number, jitterMs: number): Promise<Emu> =>
  startEmu(root, [
    "--invite-budget",
    "off",
    "--rate-limit",
    `${PER_MINUTE}/${PER_HOUR}`,
    "--latency-ms",
    String(latencyMs),
    "--latency-jitter-ms",
    String(jitterMs),
  ]);

interface LogEntry {
  method: string;
  path: string;
  status: number;
  latencyMs: number;
}

/** The DNS automation's poll (seed-api.ts lists `@current` domains); the providers name the organization. */
const isDnsPoll = (e: LogEntry) => e.path === "/api/organizations/@current/domains/";

/** What the bench seeds and the programs use. */
interface Seed {
  /** The provider's key (full access; its own rate-limit budget). */
  key: string;
  projects: number[];
  /** Users that are members (level 1), per stack. */
  users: { email: string; uuid: string }[][];
}

/**
 * Seeds `stacks` sets of `members` users (organization members, level 1) and two more projects; creates the
 * provider's key. Seeding uses the seed key (a budget of its own); throttles are cleared afterwards.
 */
async function seed(emu: Emu, stacks: number, members: number): Promise<Seed> {
  const api = seedApi(emu.url, emu.apiKey);
  const users: Seed["users"] = [];
  for (let s = 0; s < stacks; s++) {
    const set: Seed["users"][number] = [];
    for (let i = 0; i < members; i++) {
      const made = (await emu.control("POST", "/users", {
        email: `s${s}.person${i}@example.com`,
        first_name: `Person ${i}`,
        level: 1,
      })) as { user: { uuid: string; email: string } };
      set.push({ email: made.user.email, uuid: made.user.uuid });
    }
    users.push(set);
  }
  const projects = [emu.projectId];
  for (const name of ["Latency B", "Latency C"])
    projects.push(
      ((await api.call("POST", "/api/organizations/@current/projects/", { name })) as { id: number }).id,
    );
  const { key } = (await emu.control("POST", "/api-keys", {})) as { key: string };
  await emu.control("POST", "/rate-limit", { perMinute: PER_MINUTE, perHour: PER_HOUR });
  return { key, projects, users };
}

/** Sizes of the generated program of `n` resources. */
export function generatedSizes(n: number) {
  const fifth = Math.floor(n / 5);
  return { projects: 3, members: fifth, invites: fifth, collaborators: fifth, dashboards: n - 3 * fifth };
}

/**
 * Writes a program directory: Pulumi.yaml (plain JavaScript, no ts-node), Pulumi.<stack>.yaml, index.js, and
 * node_modules links to this checkout (pulumi-posthog) and its @pulumi/pulumi, as after `npm install`.
 */
function writeProgram(dir: string, stacks: string[], source: string, plugin = false): void {
  mkdirSync(join(dir, "node_modules", "@pulumi"), { recursive: true });
  writeFileSync(
    join(dir, "Pulumi.yaml"),
    "name: latency-bench\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.js\n" +
      // the provider plugin from this checkout's plugin/ folder, as README "Other languages" shows
      (plugin ? `plugins:\n  providers:\n    - name: posthog\n      path: ${join(root, "plugin")}\n` : ""),
  );
  for (const s of stacks) writeFileSync(join(dir, `Pulumi.${s}.yaml`), "config: {}\n");
  writeFileSync(join(dir, "index.js"), source);
  linkPackage(dir);
  symlinkSync(
    join(root, "node_modules", "@pulumi", "pulumi"),
    join(dir, "node_modules", "@pulumi", "pulumi"),
    "dir",
  );
}

/**
 * The naive program's prelude: providers from bench/naive-provider.ts, configured from the environment;
 * `withOutputs` makes them return ours' output properties (the `naiveOutputs` kind), and its resources declare
 * the output properties ours' classes declare beyond their inputs (sdk/output-keys.ts `OUTPUT_KEYS`, as `undefined`
 * inputs), as a user's dynamic resource with outputs does: the program pays Pulumi's per-property cost of them as
 * ours' does.
 */
const naivePreludeOf = (withOutputs: boolean) => `
const { naiveProviders } = require(${JSON.stringify(join(root, "dist", "bench", "naive-provider.js"))});
const env = process.env;
const naive = (projectId) => naiveProviders({ host: env.POSTHOG_HOST, apiKey: env.POSTHOG_API_KEY,
  organizationId: env.POSTHOG_ORGANIZATION_ID, projectId: Number(projectId ?? env.POSTHOG_PROJECT_ID),
  withOutputs: ${withOutputs} });
const declared = ${JSON.stringify(withOutputs ? OUTPUT_KEYS : {})};
class Naive extends pulumi.dynamic.Resource {
  constructor(kind, provider, name, props, opts) {
    const outs = Object.fromEntries((declared[kind] ?? []).map((k) => [k, undefined]));
    super(provider, name, { ...outs, ...props }, opts, "naive", kind);
  }
}
`;
const naivePrelude = naivePreludeOf(false);

/**
 * The no-op program's prelude: ours' resource names as dynamic resources of the no-op providers of
 * bench/naive-provider.ts (type tokens `pulumi-nodejs:dynamic/noop:<Name>`), so ours' program text runs unchanged.
 * Each resource's provider is a thin forwarder, as ours' (sdk/provider-shim.ts): its serialized text holds the
 * module's path and the kind only, so the state is the size of ours and the engine handles as many bytes.
 */
const noopPrelude = `const noopModule = ${JSON.stringify(join(root, "dist", "bench", "naive-provider.js"))};
const kind = (name) => {
  const [f, n, pid] = [noopModule, name, Number(process.env.POSTHOG_PROJECT_ID)];
  const p = () => require(f).noopProviders(pid)[n];
  const provider = { create: (...a) => p().create(...a), read: (...a) => p().read(...a),
    update: (...a) => p().update(...a), delete: (...a) => p().delete(...a) };
  return class extends pulumi.dynamic.Resource {
    constructor(n, args, opts) { super(provider, n, args, opts, "noop", name); }
  };
};
const posthog = Object.fromEntries(["Member", "Invite", "Dashboard", "DashboardCollaborator"].map((k) => [k, kind(k)]));
`;

/**
 * The generated program's source (see the module doc): ours' program for ours, the plugin and the no-op provider,
 * the naive one for naive and naiveOutputs. Stack `s` of `stacks` uses its own users,
 * names and e-mails, so three stacks manage disjoint objects in one organization.
 */
function generatedSource(provider: ProviderKind, n: number, seedData: Seed): string {
  const z = generatedSizes(n);
  const data = { sizes: z, projects: seedData.projects, users: seedData.users };
  const common = `const pulumi = require("@pulumi/pulumi");
const data = ${JSON.stringify(data)};
const s = Number(pulumi.getStack().replace(/\\D/g, "") || 0);
const users = data.users[s];
const z = data.sizes;
const perProject = (total, p) => Math.floor(total / 3) + (p < total % 3 ? 1 : 0);
`;
  // The plugin's resources as the generated Node.js SDK declares them: custom resources of type posthog:index:<Name>.
  const pluginPrelude = `const kind = (name) => class extends pulumi.CustomResource {
  constructor(n, args, opts) { super("posthog:index:" + name, n, args, opts); }
};
const posthog = Object.fromEntries(["Member", "Invite", "Dashboard", "DashboardCollaborator"].map((k) => [k, kind(k)]));
`;
  const oursPrelude = {
    ours: 'const posthog = require("pulumi-posthog");\n',
    plugin: pluginPrelude,
    noop: noopPrelude,
  } as Partial<Record<ProviderKind, string>>;
  if (provider !== "naive" && provider !== "naiveOutputs")
    return `${common}${oursPrelude[provider]}const members = users.slice(0, z.members).map((u, i) =>
  new posthog.Member("member-" + i, { email: u.email, level: "member", retainOnDelete: true }));
for (let i = 0; i < z.invites; i++)
  new posthog.Invite("invite-" + i, { targetEmail: "s" + s + ".invitee" + i + "@example.com", sendEmail: false });
let c = 0;
data.projects.forEach((projectId, p) => {
  for (let d = 0; d < perProject(z.dashboards, p); d++) {
    const restricted = d === 0;
    const dash = new posthog.Dashboard("dash-" + p + "-" + d, { projectId, name: "S" + s + " dashboard " + p + "-" + d,
      ...(restricted ? { restrictionLevel: 37 } : {}) });
    if (restricted)
      for (let k = 0; k < perProject(z.collaborators, p); k++, c++)
        new posthog.DashboardCollaborator("collab-" + p + "-" + k, { projectId, dashboardId: dash.id,
          userUuid: members[c % members.length].id });
  }
});
`;
  return `${common}${naivePreludeOf(provider === "naiveOutputs")}
const byProject = Object.fromEntries(data.projects.map((p) => [p, naive(p)]));
const first = byProject[data.projects[0]];
const members = users.slice(0, z.members).map((u, i) =>
  new Naive("Member", first.Member, "member-" + i, { email: u.email, level: 1 }));
for (let i = 0; i < z.invites; i++)
  new Naive("Invite", first.Invite, "invite-" + i, { target_email: "s" + s + ".invitee" + i + "@example.com", level: 1 });
let c = 0;
data.projects.forEach((projectId, p) => {
  const pr = byProject[projectId];
  for (let d = 0; d < perProject(z.dashboards, p); d++) {
    const restricted = d === 0;
    const dash = new Naive("Dashboard", pr.Dashboard, "dash-" + p + "-" + d, { name: "S" + s + " dashboard " + p + "-" + d,
      ...(restricted ? { restriction_level: 37 } : {}) });
    if (restricted)
      for (let k = 0; k < perProject(z.collaborators, p); k++, c++)
        new Naive("DashboardCollaborator", pr.DashboardCollaborator, "collab-" + p + "-" + k,
          { dashboardId: dash.id, userUuid: members[c % members.length].id });
  }
});
`;
}

/** The naive variant of examples/gitops (dev stack): its resources of the kinds the naive provider has. */
function exampleNaiveSource(): string {
  return `const pulumi = require("@pulumi/pulumi");
${naivePrelude}
const p = naive();
for (const [email, first_name, level] of [["priya.patel@acme-analytics.com", "Priya", 1], ["jonas.berg@acme-analytics.com", "Jonas", 8]])
  new Naive("Invite", p.Invite, "invite-" + email, { target_email: email, first_name, level });
const members = {};
for (const [email, level] of [["adam.admin@example.com", 8], ["mia.member@example.com", 1], ["max.member@example.com", 1]])
  members[email] = new Naive("Member", p.Member, "member-" + email, { email, level });
new Naive("Dashboard", p.Dashboard, "team-overview", { name: "Team overview", pinned: true, tags: ["gitops", "dev"] });
const kpis = new Naive("Dashboard", p.Dashboard, "web-kpis", { name: "Web KPIs", restriction_level: 37, tags: ["gitops", "dev"] });
new Naive("DashboardCollaborator", p.DashboardCollaborator, "kpi-editor-mia.member@example.com",
  { dashboardId: kpis.id, userUuid: members["mia.member@example.com"].id });
`;
}

/**
 * Requests each operation sends one after another, per resource type (the last segment of the type token),
 * read from provider/resources/*.ts (ours) and bench/naive-provider.ts (naive) for the inputs these programs
 * declare.
 * Ours: Dashboard create POST (the restriction level in its body, the name provisional) + PATCH (the declared name:
 * issue 49, item 6), read GET (a refresh: its project's list, shared), delete PATCH deleted;
 * Invite create list (find: no pending invite of the address, issue 49 item 8) + POST (invites created together share
 * one list read and one POST …/invites/bulk/ of up to 20), read list (find),
 * delete DELETE; Member create list (find; level as declared: no PATCH),
 * read list, delete none (retainOnDelete); DashboardCollaborator create POST (on a dashboard the run made; else
 * list (find first) + POST), read list,
 * delete DELETE; Project create POST + PATCH (the same), read GET, delete DELETE; Domain create GET (find by name) + POST, read
 * GET, delete DELETE; DomainVerification create GET + verify + GET (once the record is published), read GET,
 * delete none; DashboardSharing create GET (+ PATCH when it differs), read GET, delete PATCH; BatchExportPause
 * create GET + pause, read GET, delete unpause.
 * Naive: one request each, but Member create lists every page then PATCHes, Member and Invite reads list every
 * page (one page here), Member delete sends nothing.
 */
const OURS_REQUESTS: Record<string, { create: number; read: number; delete: number }> = {
  Dashboard: { create: 2, read: 1, delete: 1 },
  Invite: { create: 2, read: 1, delete: 1 },
  Member: { create: 1, read: 1, delete: 0 },
  DashboardCollaborator: { create: 1, read: 1, delete: 1 },
  Project: { create: 2, read: 1, delete: 1 },
  Domain: { create: 2, read: 1, delete: 1 },
  DomainVerification: { create: 3, read: 1, delete: 0 },
  DashboardSharing: { create: 1, read: 1, delete: 1 },
  BatchExportPause: { create: 2, read: 1, delete: 1 },
};

const NAIVE_REQUESTS: Record<string, { create: number; read: number; delete: number }> = {
  Dashboard: { create: 1, read: 1, delete: 1 },
  Invite: { create: 1, read: 1, delete: 1 },
  Member: { create: 2, read: 1, delete: 0 },
  DashboardCollaborator: { create: 1, read: 1, delete: 1 },
};

export const REQUESTS: Record<
  ProviderKind,
  Record<string, { create: number; read: number; delete: number }>
> = {
  ours: OURS_REQUESTS,
  plugin: OURS_REQUESTS, // the same resource code (provider/resources) behind another adapter
  naive: NAIVE_REQUESTS,
  naiveOutputs: NAIVE_REQUESTS, // the same requests, other outputs
  // no request at all
  noop: Object.fromEntries(Object.keys(NAIVE_REQUESTS).map((k) => [k, { create: 0, read: 0, delete: 0 }])),
};

/** Whether `provider` is ours' resource code (the SDK or the plugin): the access check, bulk invites. */
const isOurs = (provider: ProviderKind) => provider === "ours" || provider === "plugin";

export interface GraphNode {
  urn: string;
  kind: string;
  dependencies: string[];
}

/**
 * The custom resources of the stack's state with their dependencies (parents count), read from the file backend's
 * checkpoint (`savedState`: what `pulumi stack export` prints, without a CLI run; no secret is read here).
 */
function graphOf(projectDir: string, stack: string, stateDir: string) {
  const { deployment } = savedState({ projectDir, stack, stateDir });
  const custom = (deployment.resources ?? []) as {
    urn: string;
    type: string;
    custom?: boolean;
    dependencies?: string[];
    parent?: string;
  }[];
  const mine = custom.filter((r) => r.custom && !r.type.startsWith("pulumi:providers:"));
  const urns = new Set(mine.map((r) => r.urn));
  return mine.map(
    (r): GraphNode => ({
      urn: r.urn,
      kind: r.type.split(":").at(-1) ?? r.type,
      dependencies: [...(r.dependencies ?? []), ...(r.parent ? [r.parent] : [])].filter((u) => urns.has(u)),
    }),
  );
}

/**
 * The longest chain of dependent requests of one operation over `graph` (see the module doc).
 * `invokes`: data-source reads of the program that the chain waits for (1 in the example: getBatchExports).
 */
export function chainOf(
  graph: GraphNode[],
  provider: ProviderKind,
  op: OpName,
  invokes: number,
): { chain: number; modelledRequests: number } {
  const table = REQUESTS[provider];
  const weight = (n: GraphNode, o: "create" | "read" | "delete") => {
    const row = table[n.kind];
    if (!row) throw new Error(`no request count for ${n.kind}`);
    return row[o];
  };
  const access = isOurs(provider) ? 1 : 0;
  const byUrn = new Map(graph.map((n) => [n.urn, n]));
  const longest = (o: "create" | "delete") => {
    const memo = new Map<string, number>();
    const dependents = new Map<string, GraphNode[]>();
    for (const n of graph)
      for (const d of n.dependencies) dependents.set(d, [...(dependents.get(d) ?? []), n]);
    const visit = (n: GraphNode): number => {
      const known = memo.get(n.urn);
      if (known !== undefined) return known;
      const before =
        o === "create"
          ? n.dependencies.map((d) => byUrn.get(d)).filter((x): x is GraphNode => x !== undefined)
          : (dependents.get(n.urn) ?? []);
      const extra = o === "create" && n.kind === "BatchExportPause" ? invokes : 0;
      const v = weight(n, o) + Math.max(extra, ...before.map(visit));
      memo.set(n.urn, v);
      return v;
    };
    return Math.max(0, ...graph.map(visit));
  };
  const sum = (o: "create" | "read" | "delete") => graph.reduce((a, n) => a + weight(n, o), 0);
  if (op === "up") {
    // Ours: the invites the engine's workers create together share one list read and one bulk request (at most 20),
    // so k invites cost ⌈k / min(20, workers)⌉ times their requests, still each request on the chain.
    const invites = !isOurs(provider) ? 0 : graph.filter((n) => n.kind === "Invite").length;
    const perInvite = table.Invite?.create ?? 0;
    const shared = (Math.ceil(invites / Math.min(20, ENGINE_PARALLEL)) - invites) * perInvite;
    return { chain: access + longest("create"), modelledRequests: access + sum("create") + shared + invokes };
  }
  if (op === "destroy")
    return { chain: access + longest("delete"), modelledRequests: access + sum("delete") };
  const reads = Math.max(0, ...graph.map((n) => weight(n, "read")));
  return { chain: access + reads + invokes, modelledRequests: access + sum("read") + invokes };
}

/** One operation's measured figures. */
export interface OpFigures {
  wallSeconds: number;
  requests: number;
  throttled: number;
  failed: number;
  /** Mean added latency of the requests (ms; 0 at zero latency). */
  meanRttMs: number;
  /** List requests per list path (refresh only): GETs of members/invites/collaborators/dashboards lists. */
  lists?: Record<string, number>;
  /** Peak resident memory of the provider host process during the operation (VmHWM, MiB; Linux). */
  providerRssMiB?: number;
  /** Size of the state after the operation (the file backend's `<stack>.json`, bytes). */
  stateBytes?: number;
  firstError?: string;
}

/** List endpoints a refresh reads: members, invites, a dashboard's collaborators, a project's dashboards. */
const listPath = /\/(members|invites|collaborators|dashboards)\/$/;

/** Parent pid of each live process (`/proc/<pid>/stat`); empty where /proc is missing. */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  let pids: string[] = [];
  try {
    pids = readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  } catch {
    return out;
  }
  for (const pid of pids) {
    try {
      // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so read after the last ')'
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      out.set(Number(pid), ppid);
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** Pids of every descendant of `root` (children, their children, …). */
export function descendantsOf(root: number): number[] {
  const byParent = new Map<number, number[]>();
  for (const [pid, ppid] of parents()) byParent.set(ppid, [...(byParent.get(ppid) ?? []), pid]);
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const kid of byParent.get(queue.shift() as number) ?? []) {
      out.push(kid);
      queue.push(kid);
    }
  }
  return out;
}

/**
 * A memory figure of each dynamic-provider host among this process's descendants, in KiB, read from
 * `/proc/<pid>/status`: `VmRSS` (now) or `VmHWM` (peak). The host is the node process whose command line names
 * `cmd/dynamic-provider`: a child of this process when the bench starts it (tools/provider-host.ts), a
 * great-grandchild under the real CLI (this process → `pulumi` → the plugin `pulumi-resource-pulumi-nodejs`, a
 * shell script → `node …/@pulumi/pulumi/cmd/dynamic-provider`). Empty where /proc is missing or no host runs.
 */
export function providerHostMemoryKiB(field: "VmRSS" | "VmHWM"): number[] {
  const out: number[] = [];
  for (const pid of descendantsOf(process.pid)) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (
        !cmdline.includes("dynamic-provider") &&
        !/provider[\\/]adapters[\\/]plugin[\\/]main\.js/.test(cmdline)
      )
        continue;
      // the shell script's own `node -e "require.resolve('@pulumi/pulumi/cmd/dynamic-provider')"` is not a host
      if (cmdline.includes("require.resolve")) continue;
      const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (m) out.push(Number(m[1]));
    } catch {
      // a process that just exited
    }
  }
  return out;
}

/**
 * Samples the peak resident memory (VmHWM, MiB) of the provider hosts among this process's descendants every
 * 200 ms until
 * `stop()`, which resolves the largest seen (undefined where /proc is missing).
 */
export function sampleProviderRss(): { stop(): number | undefined } {
  let peak: number | undefined;
  const sample = () => {
    for (const kib of providerHostMemoryKiB("VmHWM")) peak = Math.max(peak ?? 0, Math.round(kib / 1024));
  };
  const timer = setInterval(sample, 200);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

/**
 * Makes the local backend in `stateDir` hold `stack` of the project in `projectDir` with no deployment, as
 * `pulumi stack init` leaves it, without running the CLI: the backend's `.pulumi/meta.yaml` and the stack's
 * checkpoint with no snapshot. The CLI writes the passphrase's salt into the stack's settings file at the first
 * operation (the key is derived at every operation anyway, so the clock is not charged more).
 */
function freshStack(projectDir: string, stateDir: string, stack: string): void {
  const { name } = readProject(projectDir);
  const file = checkpointFile(stateDir, name, stack);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(join(stateDir, ".pulumi", "meta.yaml"), "version: 1\n");
  writeFileSync(
    file,
    JSON.stringify({ version: 3, checkpoint: { stack: `organization/${name}/${stack}`, latest: null } }),
  );
}

/**
 * Runs up → preview --refresh → destroy of one program with one provider on a fresh emulator at `latencyMs`
 * (± `jitterMs`). Resolves each operation's figures and the dependency graph after `up`. `extraEnv` goes to the
 * program and the provider host (e.g. `NODE_OPTIONS: "--cpu-prof"` to profile them).
 */
export async function runSequence(
  program: ProgramKind,
  provider: ProviderKind,
  size: number,
  latencyMs: number,
  jitterMs: number,
  progress: (s: string) => void,
  extraEnv: Record<string, string> = {},
  onLog?: (op: OpName, log: (LogEntry & { at: string })[]) => void,
): Promise<{ ops: Record<OpName, OpFigures>; graph: GraphNode[] }> {
  const emu = await startEmuChild(latencyMs, jitterMs);
  const work = mkdtempSync(join(tmpdir(), "posthog-latency-"));
  let dns: ReturnType<typeof dnsAutomation> | undefined;
  try {
    const seeded = await seed(emu, 1, program === "generated" ? generatedSizes(size).members : 0);
    // the example with ours is the repository's root project (examples/gitops); the others are written to `work`
    let projectDir = root;
    if (program !== "example" || provider !== "ours") {
      projectDir = join(work, "program");
      writeProgram(
        projectDir,
        ["dev"],
        program === "example" ? exampleNaiveSource() : generatedSource(provider, size, seeded),
        provider === "plugin",
      );
    }
    const stateDir = join(work, "state");
    const stateFile = checkpointFile(stateDir, readProject(projectDir).name, "dev");
    const env = {
      ...emulatorEnv(emu, seeded.key),
      ...extraEnv,
    };
    // the stack exists before the first clock starts (runStack copies the settings file into stateDir)
    freshStack(projectDir, stateDir, "dev");
    if (program === "example" && provider === "ours") dns = dnsAutomation(seedApi(emu.url, emu.apiKey));
    const ops = {} as Record<OpName, OpFigures>;
    let graph: GraphNode[] = [];
    for (const op of OPS) {
      await emu.control("POST", "/rate-limit", { perMinute: PER_MINUTE, perHour: PER_HOUR });
      await emu.control("DELETE", "/requests");
      const rss = sampleProviderRss();
      const t0 = performance.now();
      const result = await runStack({
        operation: op === "previewRefresh" ? "preview" : op,
        ...(op === "previewRefresh" ? { refresh: true } : {}),
        projectDir,
        stack: "dev",
        stateDir,
        env,
      });
      const wall = (performance.now() - t0) / 1000;
      const providerRssMiB = rss.stop();
      const log = ((await emu.control("GET", "/requests")) as LogEntry[]).filter((e) => !isDnsPoll(e));
      onLog?.(op, log as (LogEntry & { at: string })[]);
      ops[op] = {
        ...figures(result, wall, log, emu, seeded.key, op === "previewRefresh"),
        ...(providerRssMiB !== undefined ? { providerRssMiB } : {}),
        ...(existsSync(stateFile) ? { stateBytes: statSync(stateFile).size } : {}),
      };
      progress(
        `  ${program}/${provider} @${latencyMs}ms ${op}: ${round(wall, 1)} s, ${ops[op].requests} requests, ${ops[op].throttled} × 429, ${ops[op].failed} failed`,
      );
      if (op === "up") graph = graphOf(projectDir, "dev", stateDir);
    }
    return { ops, graph };
  } finally {
    await dns?.stop();
    await emu.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

function figures(
  result: RunResult,
  wall: number,
  log: LogEntry[],
  emu: Emu,
  key: string,
  refresh: boolean,
): OpFigures {
  const failedSteps = result.steps.filter((s) => s.error);
  const programError = result.ok
    ? undefined
    : result.diagnostics.find((d) => d.severity === "error")?.message;
  const firstError = (failedSteps[0]?.error ?? programError)
    ?.replaceAll(key, "[key]")
    .replaceAll(emu.apiKey, "[key]")
    .slice(0, 300);
  const lists: Record<string, number> = {};
  if (refresh)
    for (const e of log)
      if (e.method === "GET" && listPath.test(e.path) && e.status === 200)
        lists[e.path] = (lists[e.path] ?? 0) + 1;
  return {
    wallSeconds: round(wall, 2),
    requests: log.length,
    throttled: log.filter((e) => e.status === 429).length,
    failed: failedSteps.length + (result.ok || failedSteps.length > 0 ? 0 : 1),
    meanRttMs: round(log.reduce((a, e) => a + e.latencyMs, 0) / Math.max(1, log.length), 1),
    ...(refresh ? { lists } : {}),
    ...(firstError ? { firstError } : {}),
  };
}

/** The rounds of one operation as one: median wall and requests, all 429s and failures, every wall. */
function combine(rounds: OpFigures[]): OpFigures & { wallSamples: number[] } {
  const first = rounds[0] as OpFigures;
  const firstError = rounds.find((r) => r.firstError)?.firstError;
  return {
    wallSeconds: round(median(rounds.map((r) => r.wallSeconds))),
    requests: Math.round(median(rounds.map((r) => r.requests))),
    throttled: rounds.reduce((a, r) => a + r.throttled, 0),
    failed: rounds.reduce((a, r) => a + r.failed, 0),
    meanRttMs: round(rounds.reduce((a, r) => a + r.meanRttMs, 0) / rounds.length, 1),
    ...(first.lists ? { lists: first.lists } : {}),
    ...(firstError ? { firstError } : {}),
    wallSamples: rounds.map((r) => r.wallSeconds),
  };
}

/** One scenario's row: an operation of a program with a provider, at latency and at zero latency. */
export interface ScenarioResult {
  program: ProgramKind;
  provider: ProviderKind;
  operation: OpName;
  resources: number;
  atLatency: OpFigures;
  atZero: OpFigures;
  /** Longest chain of dependent requests (see chainOf) and the requests the model expects. */
  chain: number;
  modelledRequests: number;
  /** chain × mean RTT, and requests (at latency, 429s left out) ÷ 8/s, in seconds. */
  chainFloorSeconds: number;
  rateFloorSeconds: number;
  /** (wall at latency − wall at zero) ÷ max(chainFloorSeconds, rateFloorSeconds). */
  ratioToFloor: number;
  /** The same difference ÷ chainFloorSeconds alone. */
  ratioToChain: number;
  /**
   * refresh and destroy: the engine runs 4 × CPUs operations at once, so their requests take at least
   * ⌈modelled requests ÷ (4 × CPUs)⌉ round trips (up: its creates are not limited; the chain). In seconds.
   */
  engineFloorSeconds: number;
  /** The difference ÷ max(chainFloorSeconds, engineFloorSeconds): how close to what latency alone costs. */
  ratioToEngineFloor: number;
}

/** The refresh list bound: ⌈N/100⌉ + 1 list requests for the N objects of each list read by a refresh. */
export interface ListCheck {
  path: string;
  kind: string;
  objects: number;
  requests: number;
  limit: number;
  ok: boolean;
}

export interface SharedKeyResult {
  stacks: number;
  resourcesPerStack: number;
  wallSeconds: number;
  requests: number;
  throttled: number;
  failed: number;
  /** All non-429 requests ÷ 480/minute. */
  sharedFloorSeconds: number;
  ratioToSharedFloor: number;
  /**
   * What PostHog's sliding window allows: 480 requests in any 60 s, so the last of n requests goes out no sooner
   * than ⌊(n − 1)/480⌋ × 60 s (a burst of 480 at once is allowed: below requests ÷ rate for n < 960).
   */
  slidingWindowFloorSeconds: number;
  ratioToSlidingWindowFloor: number | null;
  perStack: { wallSeconds: number; failed: number; firstError?: string }[];
}

export interface LatencyResults {
  latencyMs: number;
  jitterMs: number;
  rateLimit: { perMinute: number; perHour: number };
  size: number;
  scenarios: Record<string, ScenarioResult>;
  refreshLists?: ListCheck[];
  sharedKey?: SharedKeyResult;
}

export interface LatencyOptions {
  latencyMs?: number;
  jitterMs?: number;
  /** Resources of the generated program (default 300). */
  size?: number;
  programs?: ProgramKind[];
  providers?: ProviderKind[];
  /** Rounds of every scenario, at latency and at zero (default 3): walls are the medians. */
  repeat?: number;
  /** Run the scenarios (default true). */
  scenarios?: boolean;
  /** Run the shared-key scenario (default true). */
  sharedKey?: boolean;
  progress?: (line: string) => void;
}

/** Kind of the objects listed at a list path. */
const listKind = (path: string) =>
  path.endsWith("/members/")
    ? "Member"
    : path.endsWith("/invites/")
      ? "Invite"
      : path.endsWith("/collaborators/")
        ? "DashboardCollaborator"
        : "Dashboard";

/**
 * Runs the latency section (see the module doc). Needs `npm run build` first (the emulator CLI, the SDK and the
 * naive provider are loaded from dist/).
 */
export async function runLatencyBench(o: LatencyOptions = {}): Promise<LatencyResults> {
  const latencyMs = o.latencyMs ?? 80;
  const jitterMs = o.jitterMs ?? 20;
  const size = o.size ?? 300;
  const progress = o.progress ?? (() => undefined);
  const results: LatencyResults = {
    latencyMs,
    jitterMs,
    rateLimit: { perMinute: PER_MINUTE, perHour: PER_HOUR },
    size,
    scenarios: {},
  };
  if (o.scenarios !== false) {
    const repeat = Math.max(1, o.repeat ?? 3);
    const pairs: { program: ProgramKind; provider: ProviderKind }[] = [];
    // the plugin has no variant of the example (a TypeScript program of the dynamic SDK)
    for (const program of o.programs ?? ["example", "generated"])
      for (const provider of o.providers ?? ["ours", "plugin", "naive"])
        if (program === "generated" || provider !== "plugin") pairs.push({ program, provider });
    type Seq = Awaited<ReturnType<typeof runSequence>>;
    const runs = pairs.map(() => ({ lat: [] as Seq[], zero: [] as Seq[] }));
    // Repeated, latency and zero alternating first, so that a drift of the machine's load hits both alike.
    for (let rep = 0; rep < repeat; rep++)
      for (const [i, { program, provider }] of pairs.entries()) {
        progress(`latency: ${program} with ${provider}, round ${rep + 1} of ${repeat}`);
        const run = runs[i] as (typeof runs)[number];
        const at = (ms: number) =>
          runSequence(program, provider, size, ms, ms === 0 ? 0 : jitterMs, progress);
        if (rep % 2 === 0) {
          run.lat.push(await at(latencyMs));
          run.zero.push(await at(0));
        } else {
          run.zero.push(await at(0));
          run.lat.push(await at(latencyMs));
        }
      }
    for (const [i, { program, provider }] of pairs.entries()) {
      const run = runs[i] as (typeof runs)[number];
      const graph = (run.lat[0] as Seq).graph;
      const invokes = program === "example" && provider === "ours" ? 1 : 0;
      for (const op of OPS) {
        const { chain, modelledRequests } = chainOf(graph, provider, op, invokes);
        const a = combine(run.lat.map((r) => r.ops[op]));
        const z = combine(run.zero.map((r) => r.ops[op]));
        const chainFloor = (chain * a.meanRttMs) / 1000;
        const rateFloor = (a.requests - a.throttled) / RATE_PER_SECOND;
        const delta = a.wallSeconds - z.wallSeconds;
        const engineFloor =
          op === "up" ? chainFloor : (Math.ceil(modelledRequests / ENGINE_PARALLEL) * a.meanRttMs) / 1000;
        results.scenarios[`${program}.${provider}.${op}`] = {
          program,
          provider,
          operation: op,
          resources: graph.length,
          atLatency: a,
          atZero: z,
          chain,
          modelledRequests,
          chainFloorSeconds: round(chainFloor, 2),
          rateFloorSeconds: round(rateFloor, 2),
          ratioToFloor: round(delta / Math.max(chainFloor, rateFloor), 3),
          ratioToChain: round(delta / chainFloor, 3),
          engineFloorSeconds: round(engineFloor, 2),
          ratioToEngineFloor: round(delta / Math.max(chainFloor, engineFloor), 3),
        };
      }
      if (program === "generated" && provider === "ours") {
        const z = generatedSizes(size);
        const perDashboard = Math.ceil(z.collaborators / 3);
        // the refresh with the most list requests, of all rounds at latency and at zero (each round has an
        // emulator of its own: the dashboards' ids, so the collaborator lists' paths, differ between rounds)
        const total = (l: Record<string, number>) => Object.values(l).reduce((a, n) => a + n, 0);
        const worst = [...run.lat, ...run.zero]
          .map((r) => r.ops.previewRefresh.lists ?? {})
          .reduce((a, l) => (total(l) > total(a) ? l : a), {});
        results.refreshLists = Object.entries(worst).map(([path, requests]) => {
          const kind = listKind(path);
          const objects =
            kind === "Member"
              ? z.members
              : kind === "Invite"
                ? z.invites
                : kind === "Dashboard"
                  ? Math.ceil(z.dashboards / 3)
                  : perDashboard;
          const limit = Math.ceil(objects / 100) + 1;
          return { path, kind, objects, requests, limit, ok: requests <= limit };
        });
      }
    }
  }
  if (o.sharedKey !== false) results.sharedKey = await sharedKey(size, latencyMs, jitterMs, progress);
  return results;
}

/** Three engines, three stacks of the generated program, one key, at once (see the module doc). */
async function sharedKey(
  size: number,
  latencyMs: number,
  jitterMs: number,
  progress: (s: string) => void,
): Promise<SharedKeyResult> {
  const stacks = ["s0", "s1", "s2"];
  progress(
    `shared key: ${stacks.length} stacks of ${size} resources, one key, at ${latencyMs} ± ${jitterMs} ms`,
  );
  const emu = await startEmuChild(latencyMs, jitterMs);
  const work = mkdtempSync(join(tmpdir(), "posthog-shared-key-"));
  try {
    const seeded = await seed(emu, stacks.length, generatedSizes(size).members);
    const projectDir = join(work, "program");
    const stateDir = join(work, "state");
    writeProgram(projectDir, stacks, generatedSource("ours", size, seeded));
    const env = {
      ...emulatorEnv(emu, seeded.key),
    };
    // the stacks exist before the clock starts
    for (const stack of stacks) freshStack(projectDir, stateDir, stack);
    await emu.control("DELETE", "/requests");
    const t0 = performance.now();
    const runs = await Promise.all(
      stacks.map(async (stack) => {
        const r = await runStack({ operation: "up", projectDir, stack, stateDir, env });
        return { r, wall: (performance.now() - t0) / 1000 };
      }),
    );
    const wall = (performance.now() - t0) / 1000;
    const log = (await emu.control("GET", "/requests")) as LogEntry[];
    const throttled = log.filter((e) => e.status === 429).length;
    const floor = ((log.length - throttled) / PER_MINUTE) * 60;
    const windowFloor = Math.floor((log.length - throttled - 1) / PER_MINUTE) * 60;
    const perStack = runs.map(({ r, wall: w }) => {
      const f = figures(r, w, [], emu, seeded.key, false);
      return {
        wallSeconds: f.wallSeconds,
        failed: f.failed,
        ...(f.firstError ? { firstError: f.firstError } : {}),
      };
    });
    return {
      stacks: stacks.length,
      resourcesPerStack: size,
      wallSeconds: round(wall, 1),
      requests: log.length,
      throttled,
      failed: perStack.reduce((a, s) => a + s.failed, 0),
      sharedFloorSeconds: round(floor, 1),
      ratioToSharedFloor: round(wall / floor, 3),
      slidingWindowFloorSeconds: windowFloor,
      ratioToSlidingWindowFloor: windowFloor > 0 ? round(wall / windowFloor, 3) : null,
      perStack,
    };
  } finally {
    await emu.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** The human-readable table of {@link runLatencyBench}'s results. */
export function latencyTable(r: LatencyResults): string {
  const lines: string[] = [];
  lines.push(
    `latency: RTT ${r.latencyMs} ± ${r.jitterMs} ms, rate limit ${r.rateLimit.perMinute}/min ${r.rateLimit.perHour}/h per key; generated program ${r.size} resources`,
  );
  lines.push(
    "  scenario                              wall@RTT  wall@0   Δ s   req  429 fail  chain modelled  floor: chain s  req÷rate s  ratioToFloor  engine floor s  ratioToEngineFloor",
  );
  for (const [name, s] of Object.entries(r.scenarios))
    lines.push(
      `  ${name.padEnd(36)} ${String(s.atLatency.wallSeconds).padStart(8)} ${String(s.atZero.wallSeconds).padStart(7)} ${String(round(s.atLatency.wallSeconds - s.atZero.wallSeconds, 1)).padStart(5)} ${String(s.atLatency.requests).padStart(5)} ${String(s.atLatency.throttled).padStart(4)} ${String(s.atLatency.failed + s.atZero.failed).padStart(4)} ${String(s.chain).padStart(6)} ${`${s.modelledRequests}/${s.atZero.requests}`.padStart(8)} ${String(s.chainFloorSeconds).padStart(15)} ${String(s.rateFloorSeconds).padStart(11)} ${String(s.ratioToFloor).padStart(13)} ${String(s.engineFloorSeconds).padStart(15)} ${String(s.ratioToEngineFloor).padStart(19)}`,
    );
  const refresh = r.scenarios["generated.ours.previewRefresh"];
  if (refresh)
    lines.push(
      `  target: preview --refresh of the generated program, ours: ratioToFloor ${refresh.ratioToFloor} ≤ 1.5: ${refresh.ratioToFloor <= 1.5 ? "OK" : "MISSED"}`,
    );
  if (r.refreshLists) {
    const bad = r.refreshLists.filter((l) => !l.ok);
    lines.push(
      `  refresh of the generated program: list requests within ⌈N/100⌉ + 1 per list: ${bad.length === 0 ? "OK" : `EXCEEDED (${bad.length})`}`,
    );
    const byKind = new Map<string, { lists: number; requests: number; limit: number }>();
    for (const l of r.refreshLists) {
      const k = byKind.get(l.kind) ?? { lists: 0, requests: 0, limit: 0 };
      byKind.set(l.kind, { lists: k.lists + 1, requests: k.requests + l.requests, limit: k.limit + l.limit });
    }
    for (const [kind, k] of byKind)
      lines.push(
        `    ${kind.padEnd(22)} ${k.requests} list requests over ${k.lists} list(s) (limit ${k.limit})`,
      );
    for (const l of bad)
      lines.push(`    EXCEEDED ${l.path}: ${l.requests} > ${l.limit} (${l.objects} objects)`);
  }
  const sk = r.sharedKey;
  if (sk) {
    lines.push(
      `  shared key: ${sk.stacks} stacks × ${sk.resourcesPerStack} resources up at once, one key: wall ${sk.wallSeconds} s, ${sk.requests} requests (${sk.throttled} × 429), ${sk.failed} failed; shared floor (requests ÷ 480/min) ${sk.sharedFloorSeconds} s (ratio ${sk.ratioToSharedFloor}), sliding-window floor ${sk.slidingWindowFloorSeconds} s (ratio ${sk.ratioToSlidingWindowFloor})`,
    );
    for (const [i, s] of sk.perStack.entries())
      lines.push(
        `    stack s${i}: ${s.wallSeconds} s, ${s.failed} failed${s.firstError ? `: ${s.firstError}` : ""}`,
      );
  }
  for (const [name, s] of Object.entries(r.scenarios))
    for (const f of [s.atLatency, s.atZero]) if (f.firstError) lines.push(`  ${name}: ${f.firstError}`);
  return lines.join("\n");
}
