/**
 * `npm run bench`: every figure of the performance section, each beside its baseline, in one run.
 *
 *   npm run bench                      # table on stdout, writes bench/results.json
 *   npm run --silent bench -- --json   # prints the JSON instead of the table (also written)
 *   options: --samples 1000 (per side, overhead) --fleet 1000 --fleet-rate 600 --only a,b,c,sub,d (sections)
 *
 * (a) Overhead: create / read / update of a Dashboard through OUR provider object (compiled dist, in process)
 *     against a bare `undici.request` doing the same HTTP call on the same emulator (child process), ABBA
 *     interleaved; median ratio (target ≤ 1.10). Also the existing client and emulator benches' figures
 *     (dist/bench/client.js and emulator.js run as child processes: section "sub", left out by an --only without it).
 * (b) Requests per operation from the emulator's request log, ours and the naive baseline
 *     (bench/naive-provider.ts); refreshing 500 Members, 500 Invites and 200 Collaborators concurrently.
 * (c) `__provider` bytes per resource, ours and naive; ours from two installed copies with different versions.
 * (d) Fleet: N resources (70 % dashboards, 30 % invites) created through the REAL provider host, all at once
 *     (more than Pulumi's default parallelism, 4 × CPUs, would start), the emulator's rate limit on at --fleet-rate per minute and
 *     the client's limiter at the same rate (posthog:rateLimit); the naive provider likewise.
 * (e) RSS of the provider host process after the fleet (VmRSS from /proc/<pid>/status).
 * latency: `up`, `preview --refresh`, `destroy` of the example and of a generated program of --latency-size
 *     resources (300) through the real Pulumi CLI (tools/pulumi.ts), the emulator at --latency-ms (80) ± --latency-jitter-ms (20)
 *     and at 0, real rate limits, --latency-repeat (3) rounds, median walls; ours, the provider plugin (generated program) and naive; then three stacks applying at once with one key
 *     (bench/latency.ts; `--only shared-key` runs that part alone). Not in the default --only: about 10 minutes.
 * scale: `up`, `preview --refresh`, `destroy` of the generated program at --scale-sizes (300,1000,3000) resources,
 *     ours, naive, naive with ours' outputs and a no-op provider at each size (--scale-repeat (6) rounds at the
 *     smallest), at --latency-ms, PostHog's rate limits; per run wall, requests, 429s, failures, provider host peak
 *     RSS, state size; the engine-floor table (ours, naive, naive with outputs, no-op, PostHog's floor) and goals;
 *     the CLI saves the state at the end of each operation only (PULUMI_SKIP_CHECKPOINTS); targets
 *     (bench/scale.ts). Not in the default --only: ~35 minutes at 300,3000 on a quiet machine.
 * cold-start: spawn to port line of the provider plugin and of the dynamic-provider host, --cold-start-samples (15)
 *     each, alternating; medians and their ratio (bench/cold-start.ts). Not in the default --only: under a minute.
 * profile: the CPU of the program and the provider host during up / preview --refresh / destroy of the generated
 *     program (--profile-size, 300) at zero latency, ours and naive, from V8 CPU profiles (bench/profile.ts).
 * audit: `pulumi-posthog audit`'s read of --audit-dashboards (1,500) dashboards in one project, with the emulator's
 *     rate limit off, at PostHog's rate and --latency-ms, and over the key's budget (--audit-over more collaborator
 *     lists); requests and wall beside PostHog's floor (bench/audit.ts). Not in the default --only: about 2 minutes.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Agent, request } from "undici";
import { clientShared, createClient } from "../provider/client";
import * as ours from "../provider/index";
import { startProviderHost } from "../tools/provider-host";
import { type AuditBenchResults, auditTable, runAuditBench } from "./audit";
import { type ColdStartResults, runColdStart } from "./cold-start";
import { type Emu, median, round, startEmu } from "./emulator-process";
import { type LatencyResults, latencyTable, providerHostMemoryKiB, runLatencyBench } from "./latency";
import { type NaiveConfig, naiveProviders } from "./naive-provider";
import { profileTable, runProfileBench } from "./profile";
import { runScaleBench, type ScaleResults, scaleTable } from "./scale";
import { repoRoot, serializeOurs } from "./soak-core";

const root = repoRoot();
const nativeRequire = createRequire(__filename);
const serializer = nativeRequire("@pulumi/pulumi/runtime/closure/serializeClosure") as {
  serializeFunction(f: () => unknown, o: { allowSecrets: boolean }): Promise<{ text: string }>;
};

/** The emulator CLI in a child process (so its CPU time is not charged to the measured process). */
/** The emulator child at `rateLimit`; the invite budget is lifted (section b alone sends 500 invites). */
const startEmuChild = (rateLimit: string): Promise<Emu> =>
  startEmu(root, ["--rate-limit", rateLimit, "--invite-budget", "off"]);

/** Number of API requests `fn` makes, from the emulator's request log. */
async function requestsOf(emu: Emu, fn: () => Promise<unknown>): Promise<number> {
  await emu.control("DELETE", "/requests");
  await fn();
  return ((await emu.control("GET", "/requests")) as unknown[]).length;
}

function machine() {
  const c = cpus();
  return {
    cpu: c[0]?.model ?? "unknown",
    cores: c.length,
    node: process.version,
    loadAverage: loadavg().map((l) => round(l)),
    platform: `${process.platform} ${process.arch}`,
  };
}

/**
 * Configures our in-process providers for `emu` the way the provider host does: `configure()` with the stack
 * config (the next operation builds its client from it). `rate` is `posthog:rateLimit` ("perMinute/perHour" or "off").
 */
async function configureOurs(emu: Emu, rate: string): Promise<void> {
  const values: Record<string, string> = {
    "posthog:apiKey": emu.apiKey,
    "posthog:host": emu.url,
    "posthog:organizationId": emu.organizationId,
    "posthog:projectId": String(emu.projectId),
    "posthog:rateLimit": rate,
  };
  const config = { get: (k: string) => values[k], require: (k: string) => values[k] as string };
  const providers = [ours.Domain, ours.DomainVerification, ours.Invite, ours.Member, ours.Project];
  providers.push(ours.Dashboard, ours.DashboardCollaborator, ours.DashboardSharing, ours.BatchExportPause);
  for (const provider of providers) await provider.configure?.({ config });
}
const naiveConfig = (emu: Emu): NaiveConfig => ({
  host: emu.url,
  apiKey: emu.apiKey,
  organizationId: emu.organizationId,
  projectId: emu.projectId,
});

/** (a) ours vs bare undici.request, ABBA-interleaved, for Dashboard create/read/update. */
async function overhead(emu: Emu, samples: number) {
  // The client-side limiter stays on (as users run it), with room for every request of the section.
  await configureOurs(emu, "100000/100000");
  const dispatcher = new Agent({ keepAliveTimeout: 4_000 });
  const path = `/api/projects/${emu.projectId}/dashboards/`;
  const headers = {
    authorization: `Bearer ${emu.apiKey}`,
    "content-type": "application/json",
    accept: "application/json",
    "user-agent": "bench",
  };
  const bare = async (method: "GET" | "POST" | "PATCH", p: string, body?: unknown) => {
    const res = await request(`${emu.url}${p}`, {
      method,
      headers,
      dispatcher,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await res.body.json()) as { id: number };
    if (res.statusCode >= 300) throw new Error(`bare ${method} ${p}: ${res.statusCode}`);
    return json;
  };
  const D = ours.Dashboard;
  const checked = (await D.check({}, { name: "Overhead" })).inputs as Record<string, unknown>;
  const made = await D.create(checked);
  const id = made.id;
  let outs = made.outs as Record<string, unknown>;
  const bareId = (await bare("POST", path, { name: "Overhead", description: "", pinned: false, tags: [] }))
    .id;
  let flip = 0;
  const ops = {
    create: {
      ours: () => D.create(checked),
      bare: () => bare("POST", path, { name: "Overhead", description: "", pinned: false, tags: [] }),
    },
    read: {
      ours: () => D.read(id, outs),
      bare: () => bare("GET", `${path}${bareId}/`),
    },
    update: {
      ours: async () => {
        const news = { ...checked, description: `v${flip++}` };
        outs = (await D.update(id, outs, news)).outs as Record<string, unknown>;
      },
      bare: () => bare("PATCH", `${path}${bareId}/`, { description: `v${flip++}` }),
    },
  };
  const time = async (fn: () => Promise<unknown>) => {
    const t0 = process.hrtime.bigint();
    await fn();
    return Number(process.hrtime.bigint() - t0) / 1000;
  };
  const results: Record<
    string,
    { oursMedianUs: number; bareMedianUs: number; ratio: number; medianPairRatio: number }
  > = {};
  for (const [name, op] of Object.entries(ops)) {
    for (let i = 0; i < 50; i++) {
      await op.ours();
      await op.bare();
    }
    const a: number[] = [];
    const b: number[] = [];
    const pairs: number[] = [];
    for (let i = 0; i < samples; i++) {
      let x: number;
      let y: number;
      if (i % 2 === 0) {
        x = await time(op.ours);
        y = await time(op.bare);
      } else {
        y = await time(op.bare);
        x = await time(op.ours);
      }
      a.push(x);
      b.push(y);
      pairs.push(x / y);
    }
    results[name] = {
      oursMedianUs: round(median(a), 0),
      bareMedianUs: round(median(b), 0),
      ratio: round(median(a) / median(b), 3),
      medianPairRatio: round(median(pairs), 3),
    };
  }
  await dispatcher.close();
  return results;
}

/** Runs a compiled sibling bench and returns its JSON lines. */
async function subBench(file: string, args: string[]): Promise<unknown[]> {
  const child = spawn(process.execPath, [join(__dirname, file), ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  await once(child, "exit");
  return out
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as unknown);
}

/** A create result with its outputs (the dynamic provider type makes them optional). */
const norm = (r: { id: string; outs?: unknown }) => ({
  id: r.id,
  outs: (r.outs ?? {}) as Record<string, unknown>,
});

/** Requests per operation of one resource kind: ours, and the naive provider's where it has the operation. */
type OpRow = Record<string, { ours: number; naive?: number }>;

/** Counts the API requests a call makes ({@link requestsOf} on the section's emulator). */
type Count = (fn: () => Promise<unknown>) => Promise<number>;

/** The naive baseline's providers (bench/naive-provider.ts). */
type Naive = ReturnType<typeof naiveProviders>;

/**
 * The access check (issue 12, point 7): the first create/read/update/delete of a provider process proves the
 * organization and project with one GET, none after. Counted on a client of its own, with a ClientShared of its own
 * (this process may have made the check already), closed after. Returns the "once per run" row.
 */
async function accessCheckRow(emu: Emu, count: Count): Promise<OpRow> {
  const shared = clientShared();
  const client = createClient({
    apiKey: emu.apiKey,
    host: emu.url,
    organizationId: emu.organizationId,
    projectId: emu.projectId,
    rateLimit: false,
    shared,
  });
  try {
    return { accessCheck: { ours: await count(() => client.checkAccess()), naive: 0 } };
  } finally {
    await shared.close();
  }
}

/** Dashboard: the requests of every operation, ours then naive (create, read, update, delete). */
async function dashboardRow(count: Count, naive: Naive): Promise<OpRow> {
  const D = ours.Dashboard;
  const c = await D.check({}, { name: "Counted" });
  const inputs = c.inputs as Record<string, unknown>;
  const row: OpRow = {};
  row.check = { ours: await count(() => D.check({}, { name: "Counted" })), naive: 0 };
  let made = { id: "", outs: {} as Record<string, unknown> };
  row.create = { ours: await count(async () => (made = norm(await D.create(inputs)))) };
  row.diff = {
    ours: await count(() => D.diff(made.id, made.outs, { ...inputs, description: "x" })),
    naive: 0,
  };
  row.read = { ours: await count(() => D.read(made.id, made.outs)) };
  let upd: Record<string, unknown> = {};
  row.update = {
    ours: await count(
      async () => (upd = (await D.update(made.id, made.outs, { ...inputs, description: "x" })).outs),
    ),
  };
  row.delete = { ours: await count(() => D.delete(made.id, upd)) };
  let n = { id: "", outs: {} as Record<string, unknown> };
  const nd = naive.Dashboard as NonNullable<Naive["Dashboard"]>;
  (row.create as { naive?: number }).naive = await count(
    async () => (n = await nd.create({ name: "Naive" })),
  );
  (row.read as { naive?: number }).naive = await count(() => nd.read(n.id, n.outs));
  (row.update as { naive?: number }).naive = await count(() =>
    (nd.update as NonNullable<typeof nd.update>)(n.id, n.outs, { name: "Naive", description: "x" }),
  );
  (row.delete as { naive?: number }).naive = await count(() => nd.delete(n.id, n.outs));
  return row;
}

/** Project: the requests of every operation, ours (the naive baseline has no Project). */
async function projectRow(count: Count): Promise<OpRow> {
  const P = ours.Project;
  const inputs = (await P.check({}, { name: "Counted project" })).inputs as Record<string, unknown>;
  const row: OpRow = {};
  row.check = { ours: await count(() => P.check({}, { name: "Counted project" })) };
  let made = { id: "", outs: {} as Record<string, unknown> };
  row.create = { ours: await count(async () => (made = norm(await P.create(inputs)))) };
  row.diff = { ours: await count(() => P.diff(made.id, made.outs, { ...inputs, name: "Renamed" })) };
  row.read = { ours: await count(() => P.read(made.id, made.outs)) };
  let upd: Record<string, unknown> = {};
  row.update = {
    ours: await count(
      async () => (upd = (await P.update(made.id, made.outs, { ...inputs, name: "Renamed" })).outs),
    ),
  };
  row.delete = { ours: await count(() => P.delete(made.id, upd)) };
  return row;
}

/** Invite: the requests of every operation, ours then naive (no update: a change replaces it). */
async function inviteRow(count: Count, naive: Naive): Promise<OpRow> {
  const I = ours.Invite;
  const raw = { targetEmail: "counted@example.com", sendEmail: false };
  const inputs = (await I.check({}, raw)).inputs as Record<string, unknown>;
  const row: OpRow = {};
  row.check = { ours: await count(() => I.check({}, raw)), naive: 0 };
  let made = { id: "", outs: {} as Record<string, unknown> };
  row.create = { ours: await count(async () => (made = norm(await I.create(inputs)))) };
  row.diff = { ours: await count(() => I.diff(made.id, made.outs, inputs)), naive: 0 };
  row.read = { ours: await count(() => I.read(made.id, made.outs)) };
  row.delete = { ours: await count(() => I.delete(made.id, made.outs)) };
  const ni = naive.Invite as NonNullable<Naive["Invite"]>;
  let n = { id: "", outs: {} as Record<string, unknown> };
  (row.create as { naive?: number }).naive = await count(
    async () => (n = await ni.create({ target_email: "naive@example.com" })),
  );
  (row.read as { naive?: number }).naive = await count(() => ni.read(n.id, n.outs));
  (row.delete as { naive?: number }).naive = await count(() => ni.delete(n.id, n.outs));
  return row;
}

/** What {@link seedForRefresh} made: members' uuids, invites' ids, the restricted dashboard, the lists' sizes. */
interface RefreshWorld {
  uuids: string[];
  inviteIds: string[];
  dashId: number;
  /** How many members and invites the organization's lists hold. */
  orgMembers: number;
  orgInvites: number;
}

/**
 * Seeds the organization for the refresh at scale: `sizes.members` members (control plane), `sizes.invites`
 * invites (bulk, 20 a request), a restricted dashboard with `sizes.collaborators` collaborators. Returns them.
 */
async function seedForRefresh(
  emu: Emu,
  sizes: { members: number; invites: number; collaborators: number },
): Promise<RefreshWorld> {
  const org = `/api/organizations/${emu.organizationId}`;
  const uuids: string[] = [];
  for (let i = 0; i < sizes.members; i++) {
    const r = (await emu.control("POST", "/users", { email: `m${i}@example.com`, level: 1 })) as {
      user: { uuid: string };
    };
    uuids.push(r.user.uuid);
  }
  const inviteIds: string[] = [];
  for (let i = 0; i < sizes.invites; i += 20) {
    const batch = Array.from({ length: Math.min(20, sizes.invites - i) }, (_, k) => ({
      target_email: `inv${i + k}@example.com`,
      level: 1,
    }));
    const made = (await emu.api("POST", `${org}/invites/bulk/`, batch)) as { id: string }[] | undefined;
    for (const m of made ?? []) inviteIds.push(m.id);
  }
  if (inviteIds.length < sizes.invites) {
    const all = (await emu.api("GET", `${org}/invites/?limit=${sizes.invites + 100}`)) as {
      results: { id: string }[];
    };
    inviteIds.splice(0, inviteIds.length, ...all.results.map((x) => x.id));
  }
  const dash = (await emu.api("POST", `/api/projects/${emu.projectId}/dashboards/`, {
    name: "Shared",
    restriction_level: 37,
  })) as { id: number };
  for (let i = 0; i < sizes.collaborators; i++)
    await emu.api("POST", `/api/projects/${emu.projectId}/dashboards/${dash.id}/collaborators/`, {
      user_uuid: uuids[i],
      level: 37,
    });
  const orgMembers = ((await emu.api("GET", `${org}/members/?limit=1`)) as { count: number }).count;
  const orgInvites = ((await emu.api("GET", `${org}/invites/?limit=1`)) as { count: number }).count;
  return { uuids, inviteIds, dashId: dash.id, orgMembers, orgInvites };
}

/**
 * The refresh at scale: reading every seeded member, invite and collaborator at once, ours (one list read per
 * page, `limit`) and naive (one GET each). Returns, per kind, resources, list size, the limit and both counts.
 */
async function refreshCounts(
  count: Count,
  naive: Naive,
  sizes: { members: number; invites: number; collaborators: number },
  w: RefreshWorld,
) {
  const { uuids, inviteIds, dashId } = w;
  const memberProps = (uuid: string) => ({ userUuid: uuid, level: 1, retainOnDelete: true });
  const inviteProps = { targetEmail: "x@example.com", level: 1, accepted: false };
  const collabProps = (uuid: string) => ({ dashboardId: dashId, userUuid: uuid, level: 37 });
  const nm = naive.Member as NonNullable<Naive["Member"]>;
  const ni = naive.Invite as NonNullable<Naive["Invite"]>;
  const nc = naive.DashboardCollaborator as NonNullable<Naive["DashboardCollaborator"]>;
  return {
    Member: {
      resources: sizes.members,
      listed: w.orgMembers,
      limit: 1 + Math.ceil(w.orgMembers / 100),
      ours: await count(() =>
        Promise.all(uuids.slice(0, sizes.members).map((u) => ours.Member.read(u, memberProps(u)))),
      ),
      naive: await count(() => Promise.all(uuids.slice(0, sizes.members).map((u) => nm.read(u, {})))),
    },
    Invite: {
      resources: inviteIds.length,
      listed: w.orgInvites,
      limit: 1 + Math.ceil(w.orgInvites / 100),
      ours: await count(() => Promise.all(inviteIds.map((id) => ours.Invite.read(id, inviteProps)))),
      naive: await count(() => Promise.all(inviteIds.map((id) => ni.read(id, {})))),
    },
    DashboardCollaborator: {
      resources: sizes.collaborators,
      listed: sizes.collaborators,
      limit: 1 + Math.ceil(sizes.collaborators / 100),
      ours: await count(() =>
        Promise.all(
          uuids
            .slice(0, sizes.collaborators)
            .map((u) => ours.DashboardCollaborator.read(`${dashId}/${u}`, collabProps(u))),
        ),
      ),
      naive: await count(() =>
        Promise.all(uuids.slice(0, sizes.collaborators).map((u) => nc.read(`${dashId}/${u}`, {}))),
      ),
    },
  };
}

/** (b) requests per operation, ours and naive, and the cost of refreshing many members/invites/collaborators. */
async function requestCounts(emu: Emu, sizes: { members: number; invites: number; collaborators: number }) {
  await configureOurs(emu, "off");
  const naive = naiveProviders(naiveConfig(emu));
  const perOp: Record<string, OpRow> = {};
  const count: Count = (fn) => requestsOf(emu, fn);
  perOp["once per run"] = await accessCheckRow(emu, count);
  // made here, uncounted, so the per-operation rows below show the operations alone
  await ours.Project.read(String(emu.projectId), {});
  perOp.Dashboard = await dashboardRow(count, naive);
  perOp.Project = await projectRow(count);
  perOp.Invite = await inviteRow(count, naive);
  const seeded = await seedForRefresh(emu, sizes);
  const refresh = await refreshCounts(count, naive, sizes, seeded);
  return { perOperation: perOp, refresh };
}

/** Installs this checkout's compiled package as `<dir>/node_modules/pulumi-posthog` with another version. */
function installCopy(version: string): { dir: string; sdkDir: string } {
  const dir = mkdtempSync(join(tmpdir(), "posthog-bench-install-"));
  const pkgDir = join(dir, "node_modules", "pulumi-posthog");
  for (const part of ["sdk", "provider"])
    cpSync(join(root, "dist", part), join(pkgDir, "dist", part), { recursive: true });
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, unknown>;
  writeFileSync(join(pkgDir, "package.json"), JSON.stringify({ ...pkg, version }));
  symlinkSync(join(root, "node_modules"), join(pkgDir, "node_modules"), "dir");
  return { dir, sdkDir: join(pkgDir, "dist", "sdk") };
}

/** (c) `__provider` bytes per resource, ours and naive; ours across two installed versions. */
async function stateSizes(emu: Emu) {
  const oursBytes: Record<string, number> = {};
  for (const name of ours.resourceNames) oursBytes[name] = (await serializeOurs(name)).length;
  const naiveBytes: Record<string, number> = {};
  let naiveHoldsKey = false;
  const cfg = naiveConfig(emu);
  for (const name of Object.keys(naiveProviders(cfg))) {
    const provider = naiveProviders(cfg)[name];
    const text = (await serializer.serializeFunction(() => provider, { allowSecrets: true })).text;
    naiveBytes[name] = text.length;
    naiveHoldsKey ||= text.includes(emu.apiKey);
  }
  let oursHoldsKey = false;
  for (const name of ours.resourceNames) oursHoldsKey ||= (await serializeOurs(name)).includes(emu.apiKey);
  const v1 = installCopy("0.1.0");
  const v2 = installCopy("9.9.9");
  let identical = true;
  try {
    for (const name of ours.resourceNames) {
      const texts = [];
      for (const c of [v1, v2]) {
        const shim = nativeRequire(
          join(c.sdkDir, "provider-shim.js"),
        ) as typeof import("../sdk/provider-shim");
        const p = shim.providerShim(name);
        texts.push((await serializer.serializeFunction(() => p, { allowSecrets: true })).text);
      }
      identical &&= texts[0] === texts[1];
    }
  } finally {
    for (const c of [v1, v2]) rmSync(c.dir, { recursive: true, force: true });
  }
  return {
    ours: oursBytes,
    naive: naiveBytes,
    oursHoldsApiKey: oursHoldsKey,
    naiveHoldsApiKey: naiveHoldsKey,
    oursIdenticalAcrossVersions: identical,
  };
}

/** VmRSS of the provider-host child of this process, in MiB (Linux /proc). */
function hostRssMiB(): number | undefined {
  const [kib] = providerHostMemoryKiB("VmRSS");
  return kib === undefined ? undefined : round(kib / 1024, 1);
}

/** (d)+(e) N resources through the real host with the rate limit on; ours then naive. */
async function fleet(size: number, perMinute: number) {
  const rate = `${perMinute}/${perMinute * 10}`;
  const declared = Array.from({ length: size }, (_, i) =>
    i % 10 < 7
      ? { type: "Dashboard", inputs: { name: `Fleet ${i}` } as Record<string, unknown> }
      : {
          type: "Invite",
          inputs: { targetEmail: `fleet${i}@example.com`, sendEmail: false } as Record<string, unknown>,
        },
  );
  const urn = (t: string, i: number) => `urn:pulumi:bench::fleet::pulumi-nodejs:dynamic/posthog:${t}::r${i}`;
  const run = async (kind: "ours" | "naive") => {
    const emu = await startEmuChild(rate);
    const host = await startProviderHost({ cwd: root, project: "fleet", deadlineMs: 600_000 });
    try {
      await host.configure(
        {
          "posthog:apiKey": emu.apiKey,
          "posthog:host": emu.url,
          "posthog:organizationId": emu.organizationId,
          "posthog:projectId": String(emu.projectId),
          "posthog:rateLimit": rate,
        },
        ["posthog:apiKey"],
      );
      const providers: Record<string, string> = {};
      for (const t of ["Dashboard", "Invite"]) {
        if (kind === "ours") providers[t] = await serializeOurs(t);
        else {
          const p = naiveProviders(naiveConfig(emu))[t];
          providers[t] = (await serializer.serializeFunction(() => p, { allowSecrets: true })).text;
        }
      }
      const naiveInputs = (t: string, inputs: Record<string, unknown>) =>
        t === "Invite" ? { target_email: inputs.targetEmail, level: 1 } : inputs;
      await emu.control("DELETE", "/requests");
      const t0 = performance.now();
      const errors: string[] = [];
      await Promise.all(
        declared.map(async (d, i) => {
          try {
            const news = {
              ...(kind === "ours" ? d.inputs : naiveInputs(d.type, d.inputs)),
              __provider: providers[d.type],
            };
            const checked = await host.check(urn(d.type, i), {}, news);
            if (checked.failures.length) throw new Error(JSON.stringify(checked.failures));
            await host.create(urn(d.type, i), checked.inputs);
          } catch (e) {
            errors.push(String((e as { details?: string }).details ?? e));
          }
        }),
      );
      const wallMs = performance.now() - t0;
      const log = (await emu.control("GET", "/requests")) as { status: number }[];
      return {
        resources: size,
        failed: errors.length,
        wallSeconds: round(wallMs / 1000, 1),
        requests: log.length,
        throttled: log.filter((r) => r.status === 429).length,
        hostRssMiB: hostRssMiB(),
        firstError: errors[0]?.replace(emu.apiKey, "[key]").slice(0, 160),
      };
    } finally {
      await host.close();
      await emu.stop();
    }
  };
  const o = await run("ours");
  const n = await run("naive");
  // the floors: requests ÷ rate, and what a sliding 60 s window allows (perMinute sends per window)
  const writes = size;
  const floorRateSeconds = (writes / perMinute) * 60;
  const floorWindowSeconds = Math.floor((writes - 1) / perMinute) * 60;
  return {
    rate: { perMinute, perHour: perMinute * 10 },
    floorRequestsOverRateSeconds: round(floorRateSeconds, 1),
    floorSlidingWindowSeconds: floorWindowSeconds,
    ours: {
      ...o,
      ratioToRequestsOverRate: round(o.wallSeconds / floorRateSeconds, 3),
      ratioToSlidingWindowFloor: floorWindowSeconds > 0 ? round(o.wallSeconds / floorWindowSeconds, 3) : null,
    },
    naive: n,
  };
}

/** `npm run bench`'s options (see the module doc). */
function parseBenchArgs() {
  return parseArgs({
    options: {
      json: { type: "boolean", default: false },
      samples: { type: "string", default: "1000" },
      fleet: { type: "string", default: "1000" },
      "fleet-rate": { type: "string", default: "600" },
      only: { type: "string", default: "a,b,c,sub,d" },
      "latency-size": { type: "string", default: "300" },
      "latency-ms": { type: "string", default: "80" },
      "latency-jitter-ms": { type: "string", default: "20" },
      "latency-repeat": { type: "string", default: "3" },
      "scale-sizes": { type: "string", default: "300,1000,3000" },
      "scale-repeat": { type: "string", default: "6" },
      "profile-size": { type: "string", default: "300" },
      "cold-start-samples": { type: "string", default: "15" },
      "profile-dir": { type: "string" },
      "audit-dashboards": { type: "string", default: "1500" },
      "audit-restricted": { type: "string", default: "15" },
      "audit-over": { type: "string", default: "500" },
    },
  }).values;
}

/** One bench run: its options, the sections asked for (`--only`), the results so far, where progress goes. */
interface BenchRun {
  values: ReturnType<typeof parseBenchArgs>;
  only: Set<string>;
  results: Record<string, unknown>;
  /** The figures of the previous run (bench/results.json), kept for sections not run this time. */
  previous: Record<string, unknown>;
  progress: (s: string) => void;
}

/** The previous run's results from `file`, or none when it is missing or unreadable. */
function readPrevious(file: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** Sections (a), (b), (c), in this process against one emulator child with the rate limit off. */
async function inProcessSections(b: BenchRun): Promise<void> {
  const { only, results, progress } = b;
  const emu = await startEmuChild("off");
  try {
    if (only.has("a")) {
      progress("(a) overhead");
      results.overhead = await overhead(emu, Number(b.values.samples));
    }
    if (only.has("b")) {
      progress("(b) requests per operation and refresh");
      results.requests = await requestCounts(emu, { members: 500, invites: 500, collaborators: 200 });
    }
    if (only.has("c")) {
      progress("(c) __provider sizes");
      results.providerBytes = await stateSizes(emu);
    }
  } finally {
    await emu.stop();
  }
}

/** The sibling benches (`sub`: client and emulator) and the fleet (d, e) through the provider host. */
async function childSections(b: BenchRun): Promise<void> {
  const { only, results, progress, values } = b;
  if (only.has("sub")) {
    progress("client and emulator benches");
    results.clientBench = (
      await subBench("client.js", ["--rounds", "5", "--per-round", "100", "--warmup", "100"])
    )[0];
    results.emulatorBench = await subBench("emulator.js", ["--seconds", "3"]);
  }
  if (only.has("d")) {
    progress("(d) fleet through the provider host (rate limit on)");
    results.fleet = await fleet(Number(values.fleet), Number(values["fleet-rate"]));
  }
}

/**
 * The latency bench (`latency`, `shared-key`): sets the exit status when one of issue 15's targets fails; with
 * `--only shared-key` alone, the scenarios of the last latency run are kept.
 */
async function latencySection(b: BenchRun): Promise<void> {
  const { only, values, previous } = b;
  b.progress("latency: up, preview --refresh, destroy at real latency and rate limits (bench/latency.ts)");
  const latency = await runLatencyBench({
    latencyMs: Number(values["latency-ms"]),
    jitterMs: Number(values["latency-jitter-ms"]),
    size: Number(values["latency-size"]),
    repeat: Number(values["latency-repeat"]),
    scenarios: only.has("latency"),
    sharedKey: only.has("shared-key") || only.has("latency"),
    progress: b.progress,
  });
  // The targets of issue 15: a failing one sets the exit status (the table says which).
  const refresh = latency.scenarios["generated.ours.previewRefresh"];
  if (
    latency.refreshLists?.some((l) => !l.ok) ||
    (refresh && refresh.ratioToFloor > 1.5) ||
    (latency.sharedKey && latency.sharedKey.failed > 0)
  )
    process.exitCode = 1;
  // --only shared-key keeps the scenarios of the last latency run
  b.results.latency = only.has("latency")
    ? latency
    : {
        ...(previous.latency as object),
        ...latency,
        scenarios: (previous.latency as LatencyResults | undefined)?.scenarios ?? {},
      };
}

/** The CLI benches asked for: scale, cold start, profile, audit (a missed target sets the exit status). */
async function cliSections(b: BenchRun): Promise<void> {
  const { only, values, results, progress } = b;
  if (only.has("scale")) {
    progress("scale: up, preview --refresh, destroy of 300 to 3,000 resources (bench/scale.ts)");
    const scale = await runScaleBench({
      sizes: values["scale-sizes"].split(",").map(Number),
      repeat: Number(values["scale-repeat"]),
      latencyMs: Number(values["latency-ms"]),
      jitterMs: Number(values["latency-jitter-ms"]),
      progress,
    });
    if (scale.targets.some((t) => !t.ok)) process.exitCode = 1;
    results.scale = scale;
  }
  if (only.has("cold-start")) {
    progress("cold start: the provider plugin against the dynamic-provider host (bench/cold-start.ts)");
    results.coldStart = await runColdStart(Number(values["cold-start-samples"]));
  }
  if (only.has("profile")) {
    progress("profile: CPU of the program and the provider host, ours and naive (bench/profile.ts)");
    results.profile = await runProfileBench({
      size: Number(values["profile-size"]),
      ...(values["profile-dir"] ? { dir: values["profile-dir"] } : {}),
      progress,
    });
  }
  if (only.has("audit")) {
    progress("audit: pulumi-posthog audit of 1,500 dashboards beside PostHog's floor (bench/audit.ts)");
    const audit = await runAuditBench({
      dashboards: Number(values["audit-dashboards"]),
      restricted: Number(values["audit-restricted"]),
      over: Number(values["audit-over"]),
      latencyMs: Number(values["latency-ms"]),
      progress,
    });
    if (audit.targets.some((t) => !t.ok)) process.exitCode = 1;
    results.audit = audit;
  }
}

async function main(): Promise<void> {
  const values = parseBenchArgs();
  const progress = (s: string) => process.stderr.write(`bench: ${s}\n`);
  const started = performance.now();
  const results: Record<string, unknown> = { machine: machine(), startedAt: new Date().toISOString() };
  const only = new Set(values.only.split(","));
  // Sections not run this time keep their figures from the previous run (an --only run updates its own).
  const file = join(root, "bench", "results.json");
  const b: BenchRun = { values, only, results, previous: readPrevious(file), progress };
  await inProcessSections(b);
  await childSections(b);
  if (only.has("latency") || only.has("shared-key")) await latencySection(b);
  await cliSections(b);
  results.machine = { ...(results.machine as object), loadAverageAfter: loadavg().map((l) => round(l)) };
  results.totalSeconds = round((performance.now() - started) / 1000, 1);
  writeFileSync(file, `${JSON.stringify({ ...b.previous, ...results }, null, 2)}\n`);
  if (values.json) console.log(JSON.stringify(results, null, 2));
  else console.log(table(results));
}

/** The machine line and section (a)'s lines: overhead per operation, the client and emulator benches. */
function overheadLines(r: Record<string, unknown>): string[] {
  const lines: string[] = [];
  const m = r.machine as ReturnType<typeof machine> & { loadAverageAfter: number[] };
  lines.push(
    `machine: ${m.cpu}, ${m.cores} cores, node ${m.node}, load ${m.loadAverage.join(" ")} → ${m.loadAverageAfter.join(" ")}`,
  );
  lines.push("");
  if (r.overhead)
    lines.push(
      "(a) overhead, Dashboard, ours (provider from dist, in process) vs bare undici.request — target ≤ 1.10",
    );
  for (const [op, v] of Object.entries(
    (r.overhead ?? {}) as Record<
      string,
      { oursMedianUs: number; bareMedianUs: number; ratio: number; medianPairRatio: number }
    >,
  ))
    lines.push(
      `  ${op.padEnd(8)} ours ${String(v.oursMedianUs).padStart(6)} µs  bare ${String(v.bareMedianUs).padStart(6)} µs  ratio ${v.ratio}  (pairwise ${v.medianPairRatio})`,
    );
  const cb = r.clientBench as { results?: Record<string, { ratio: number }> } | undefined;
  if (cb?.results)
    for (const [ep, v] of Object.entries(cb.results))
      lines.push(`  client bench: ${ep}: client/bare ${v.ratio}`);
  for (const e of (r.emulatorBench as { name?: string; rps?: number; ratio?: number }[] | undefined) ?? [])
    lines.push(`  emulator bench: ${JSON.stringify(e).slice(0, 160)}`);
  return lines;
}

/** Section (b)'s lines: requests per operation, ours / naive, and the refresh at scale. */
function requestLines(r: Record<string, unknown>): string[] {
  const lines: string[] = [];
  if (r.requests) {
    lines.push("");
    lines.push("(b) requests per operation (emulator request log) — ours / naive");
  }
  const req = r.requests as
    | undefined
    | {
        perOperation: Record<string, Record<string, { ours: number; naive?: number }>>;
        refresh: Record<
          string,
          { resources: number; listed: number; limit: number; ours: number; naive: number }
        >;
      };
  for (const [kind, ops] of Object.entries(req?.perOperation ?? {}))
    lines.push(
      `  ${kind.padEnd(22)} ${Object.entries(ops)
        .map(([op, v]) => `${op} ${v.ours}${v.naive === undefined ? "" : `/${v.naive}`}`)
        .join("  ")}`,
    );
  for (const [kind, v] of Object.entries(req?.refresh ?? {}))
    lines.push(
      `  refresh ${v.resources} ${kind}s (${v.listed} in the list): ours ${v.ours} requests (limit ${v.limit}), naive ${v.naive}`,
    );
  return lines;
}

/** Section (c)'s lines: `__provider` bytes per resource, ours / naive, the same across versions, the key inside. */
function providerBytesLines(r: Record<string, unknown>): string[] {
  const pb = r.providerBytes as
    | undefined
    | {
        ours: Record<string, number>;
        naive: Record<string, number>;
        oursIdenticalAcrossVersions: boolean;
        oursHoldsApiKey: boolean;
        naiveHoldsApiKey: boolean;
      };
  if (!pb) return [];
  const lines = ["(c) __provider bytes per resource — ours / naive"];
  for (const k of Object.keys(pb.ours))
    lines.push(`  ${k.padEnd(22)} ${pb.ours[k]}${pb.naive[k] ? ` / ${pb.naive[k]}` : ""}`);
  lines.push(
    `  ours identical across versions 0.1.0 and 9.9.9: ${pb.oursIdenticalAcrossVersions}; API key inside: ours ${pb.oursHoldsApiKey}, naive ${pb.naiveHoldsApiKey}`,
  );
  return lines;
}

/** Sections (d) and (e)'s lines: the fleet beside its floors, the provider host's RSS after it. */
function fleetLines(r: Record<string, unknown>): string[] {
  const f = r.fleet as
    | {
        rate: { perMinute: number };
        floorRequestsOverRateSeconds: number;
        floorSlidingWindowSeconds: number;
        ours: Record<string, unknown>;
        naive: Record<string, unknown>;
      }
    | undefined;
  if (!f) return [];
  const lines = [
    "",
    `(d) fleet: ${f.ours.resources} resources through the provider host, rate limit ${f.rate.perMinute}/min (server and client)`,
    `  floor: requests ÷ rate ${f.floorRequestsOverRateSeconds} s; sliding 60 s window ${f.floorSlidingWindowSeconds} s`,
  ];
  for (const k of ["ours", "naive"] as const) {
    const v = f[k];
    lines.push(
      `  ${k.padEnd(6)} failed ${v.failed}, wall ${v.wallSeconds} s, requests ${v.requests} (429: ${v.throttled})${k === "ours" ? `, ratio to requests÷rate ${v.ratioToRequestsOverRate}, to the window floor ${v.ratioToSlidingWindowFloor}` : ""}`,
    );
  }
  lines.push(
    `(e) provider host RSS after the fleet: ours ${f.ours.hostRssMiB} MiB, naive ${f.naive.hostRssMiB} MiB`,
  );
  return lines;
}

/** The CLI benches' tables (cold start, latency, scale, profile, audit), each after a blank line. */
function cliBenchLines(r: Record<string, unknown>): string[] {
  const lines: string[] = [];
  if (r.coldStart) {
    const c = r.coldStart as ColdStartResults;
    lines.push(
      "",
      `cold start to the port line, ${c.samples} samples each, alternating: plugin median ${c.pluginMedianMs} ms, ` +
        `dynamic-provider host ${c.dynamicHostMedianMs} ms, ratio ${c.ratio}`,
    );
  }
  if (r.latency) lines.push("", latencyTable(r.latency as LatencyResults));
  if (r.scale) lines.push("", scaleTable(r.scale as ScaleResults));
  if (r.profile) lines.push("", profileTable(r.profile as Parameters<typeof profileTable>[0]));
  if (r.audit) lines.push("", auditTable(r.audit as AuditBenchResults));
  return lines;
}

/** The human-readable table of {@link main}'s results. */
function table(r: Record<string, unknown>): string {
  return [
    ...overheadLines(r),
    ...requestLines(r),
    "",
    ...providerBytesLines(r),
    ...fleetLines(r),
    ...cliBenchLines(r),
    "",
    `total ${r.totalSeconds} s; written to bench/results.json`,
  ].join("\n");
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
