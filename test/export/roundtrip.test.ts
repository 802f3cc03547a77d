/**
 * `pulumi-posthog export` (provider/cli.ts) against the emulator, over real HTTP: an organization seeded
 * with the awkward cases (non-ASCII and duplicate dashboard names, 150 dashboards across two list pages, a
 * soft-deleted one, a pending and an expired invite, a verified and an unverified domain, a paused and a running
 * batch export, a collaborator on a restricted dashboard, sharing on and off) is exported with a key holding only
 * `:read` scopes; the program generated from the default project and a second one with a dashboard (every kind
 * the export writes, in two projects) then runs through the real Pulumi CLI (tools/pulumi.ts, a local file
 * backend): `up` changes nothing on the server (the emulator's saved world before and after), the next `preview
 * --refresh` reads back exactly the state `up` wrote (the state a plain `preview` diffs against) and shows no
 * changes, `destroy` leaves the organization as found. Promotion: the same program on a stack pointing at another
 * project with no ids creates the dashboards from their templates, and exporting that project gives the same
 * templates.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import type { RequestLogEntry } from "../../emulator/runtime";
import { main } from "../../provider/cli";
import { type EngineEvent, linkPackage, type RunOptions, type RunResult, runStack } from "../../tools/pulumi";
import { startTestEmulator, type TestEmulator, type TestResponse } from "../support/emulator";

const root = join(__dirname, "..", "..");
const work = mkdtempSync(join(tmpdir(), "export-"));
const stateFile = join(work, "world.json");
/** The program exported from the default project (the awkward cases), run through the Pulumi CLI. */
const out = join(work, "program");
/** The export of the default project and the Bulk project (150 dashboards in all: two list pages). */
const full = join(work, "full");
/**
 * The export of the default project and the Second project (one dashboard), run through the Pulumi CLI: every
 * kind and field of the full export in two projects, at a size that keeps the CLI runs short (the export's
 * paging is proven on the full export above).
 */
const twoProjects = join(work, "two-projects");

const READ_SCOPES = [
  "organization:read",
  "organization_member:read",
  "project:read",
  "dashboard:read",
  "batch_export:read",
];
const BULK = 145; // with the 5 named ones of the default project: 150 dashboards, the Bulk list in two pages

let emu: TestEmulator;
let readKey: string;
let stagingId: number;
let bulkId: number;
let secondId: number;
let fullExport: { code: number; lines: string[] };
let original: Record<string, unknown>;
const ids: Record<string, number> = {};
let exported: { code: number; lines: string[] };
let twoExported: { code: number; lines: string[] };

type Log = RequestLogEntry[];
const requests = () => emu.requests();
const clearLog = () => emu.control("DELETE", "/requests");
/** The emulator's world as saved after its last write (API keys and the clock aside). */
const world = (): Record<string, unknown> => {
  const { apiKeys: _k, clockOffsetMs: _c, ...rest } = JSON.parse(readFileSync(stateFile, "utf8"));
  return rest;
};

async function ok(method: string, path: string, body?: unknown): Promise<TestResponse["body"]> {
  const r = await emu.call(method, path, body === undefined ? {} : { body });
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${r.text}`);
  return r.body;
}

async function runExport(args: string[], key = readKey): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await main(["export", ...args], {
    stderr: (l) => lines.push(l),
    stdout: (l) => lines.push(l),
    env: { POSTHOG_HOST: emu.url, POSTHOG_API_KEY: key, POSTHOG_PROJECT_ID: String(emu.projectId) },
    cwd: work,
  });
  return { code, lines };
}

const template = {
  template_name: "Tableau de bord — équipe 日本",
  dashboard_description: "Suivi hebdomadaire 📊",
  dashboard_filters: { date_from: "-14d" },
  tags: ["kpi"],
  tiles: [
    {
      type: "INSIGHT",
      name: "Inscriptions",
      description: "Par semaine",
      query: {
        kind: "InsightVizNode",
        source: { kind: "TrendsQuery", series: [{ kind: "EventsNode", event: "signup" }] },
      },
      layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } },
      color: "blue",
    },
    { type: "TEXT", body: "## Notes ✓", layouts: { sm: { x: 6, y: 0, w: 6, h: 2 } }, color: "purple" },
  ],
};

beforeAll(async () => {
  if (!existsSync(join(root, "dist", "sdk", "index.js"))) {
    throw new Error(
      "dist/ is missing: the program loads the built SDK (pulumi-posthog); run `npm run build` first",
    );
  }
  emu = await startTestEmulator({ stateFile });
  readKey = await emu.createKey({ scopes: READ_SCOPES });
  const org = emu.org;
  const dash = `${emu.project}/dashboards`;
  // An expired invite, then (4 days later: invites last 3) a pending one.
  await ok("POST", `${org}/invites/`, { target_email: "old.invite@example.com", level: 1 });
  await emu.control("POST", "/clock", { advanceSeconds: 4 * 24 * 3600 });
  await ok("POST", `${org}/invites/`, { target_email: "nora@example.com", first_name: "Nora", level: 8 });
  // A verified domain (JIT provisioning on) and an unverified one.
  const verified = await ok("POST", `${org}/domains/`, { domain: "verified.example.com" });
  await emu.control("POST", "/dns", {
    name: "_posthog-challenge.verified.example.com",
    txt: verified.verification_challenge,
  });
  await ok("POST", `${org}/domains/${verified.id}/verify/`);
  await ok("PATCH", `${org}/domains/${verified.id}/`, { jit_provisioning_enabled: true });
  await ok("POST", `${org}/domains/`, { domain: "pending.example.com" });
  // A paused and a running batch export (both seeded running).
  const batchExports = await ok("GET", `${org}/batch_exports/`);
  await ok("POST", `${org}/batch_exports/${batchExports.results[1].id}/pause/`);
  // Dashboards: one from template JSON, restricted, pinned, with a collaborator, shared; non-ASCII and duplicate
  // names; one soft-deleted; one shared then unshared.
  ids.team = (await ok("POST", `${dash}/create_from_template_json/`, { template })).id;
  await ok("PATCH", `${dash}/${ids.team}/`, { restriction_level: 37, pinned: true });
  const members = (await ok("GET", `${org}/members/`)).results as { user: { email: string; uuid: string } }[];
  const mia = members.find((m) => m.user.email.startsWith("mia"));
  await ok("POST", `${dash}/${ids.team}/collaborators/`, { user_uuid: mia?.user.uuid, level: 37 });
  await ok("PATCH", `${dash}/${ids.team}/sharing/`, { enabled: true });
  ids.japanese = (await ok("POST", `${dash}/`, { name: "日本語のダッシュボード" })).id;
  ids.kpis1 = (await ok("POST", `${dash}/`, { name: "KPIs", description: "Firsts", tags: ["b", "a"] })).id;
  ids.kpis2 = (await ok("POST", `${dash}/`, { name: "KPIs" })).id;
  await ok("PATCH", `${dash}/${ids.kpis2}/sharing/`, { enabled: true });
  await ok("PATCH", `${dash}/${ids.kpis2}/sharing/`, { enabled: false });
  ids.quoted = (await ok("POST", `${dash}/`, { name: 'Revenue "Q1" — l\'équipe "core"' })).id;
  ids.deleted = (await ok("POST", `${dash}/`, { name: "Gone" })).id;
  await ok("PATCH", `${dash}/${ids.deleted}/`, { deleted: true });
  // Another project with the bulk of the dashboards, and an empty one to promote to.
  bulkId = (await ok("POST", `${org}/projects/`, { name: "Bulk" })).id;
  for (let i = 1; i <= BULK; i++) {
    await ok("POST", `/api/projects/${bulkId}/dashboards/`, { name: `Bulk ${String(i).padStart(3, "0")}` });
  }
  stagingId = (await ok("POST", `${org}/projects/`, { name: "Staging" })).id;
  secondId = (await ok("POST", `${org}/projects/`, { name: "Second" })).id;
  await ok("POST", `/api/projects/${secondId}/dashboards/`, { name: "Second overview", pinned: true });
  original = world();

  await clearLog();
  fullExport = await runExport([
    "--out",
    full,
    "--project",
    String(emu.projectId),
    "--project",
    String(bulkId),
  ]);
  fullLog = await requests();
  await clearLog();
  exported = await runExport(["--out", out, "--stack", "dev", "--project", String(emu.projectId)]);
  twoExported = await runExport([
    "--out",
    twoProjects,
    "--stack",
    "dev",
    "--project",
    String(emu.projectId),
    "--project",
    String(secondId),
  ]);
  // The programs resolve their packages as in a user's directory after `npm install`.
  for (const dir of [out, full, twoProjects]) {
    const modules = join(dir, "node_modules");
    mkdirSync(join(modules, "@pulumi"), { recursive: true });
    mkdirSync(join(modules, "@types"), { recursive: true });
    linkPackage(dir);
    symlinkSync(join(root, "node_modules", "@pulumi", "pulumi"), join(modules, "@pulumi", "pulumi"), "dir");
    symlinkSync(join(root, "node_modules", "@types", "node"), join(modules, "@types", "node"), "dir");
  }
}, 120_000);

afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

let fullLog: Log;
const writes = (log: Log) =>
  log.filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path} ${r.status}`);
const read = (dir: string, file: string) => readFileSync(join(dir, file), "utf8");
const filesOf = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => !f.startsWith("node_modules") && !f.startsWith(".") && f !== "dashboards")
    .sort();
const detailPath = /^\/api\/projects\/\d+\/dashboards\/(\d+)\/$/;

describe("pulumi-posthog export", () => {
  it("sends only GETs with a :read key, paginated: the lists plus one detail per dashboard, counted in its summary", () => {
    expect(fullExport.code).toBe(0);
    expect(fullLog.filter((r) => r.method !== "GET" || r.status !== 200)).toEqual([]);
    const details = fullLog.map((r) => detailPath.exec(r.path)?.[1]).filter((id) => id !== undefined);
    expect(details).toHaveLength(150);
    expect(new Set(details).size).toBe(150); // one each
    expect(details).not.toContain(String(ids.deleted));
    const bulkPages = fullLog.filter((r) => r.path === `/api/projects/${bulkId}/dashboards/`);
    expect(bulkPages).toHaveLength(2); // 145 dashboards, 100 per page
    const collaboratorLists = fullLog.filter((r) => r.path.endsWith("/collaborators/"));
    expect(collaboratorLists.map((r) => r.path)).toEqual([
      `${emu.project}/dashboards/${ids.team}/collaborators/`,
    ]); // only the restricted dashboard's
    const lists = fullLog.length - 150 - 1;
    expect(fullExport.lines).toContain(
      `Requests: ${fullLog.length} (GET only): ${lists} list pages, 150 dashboard details, 1 collaborator list(s)`,
    );
  });

  it("reports what it skipped and why, and what it exported per kind", () => {
    expect(fullExport.lines).toContain(
      "  invites: invite of old.invite@example.com: expired (an expired invite cannot be adopted; send a new one)",
    );
    expect(fullExport.lines).toContain(
      "  domains: 2, members: 4, invites: 1, batch exports: 2, projects: 2, dashboards: 150 (1 with a template), " +
        "collaborators: 1, shared dashboards: 1",
    );
    expect(fullExport.lines.some((l) => l.startsWith("  dashboard details: 145/145"))).toBe(true);
  });

  it("writes the program, its settings and the template of each dashboard with tiles; no secret anywhere", async () => {
    expect(exported.code).toBe(0);
    expect(filesOf(out)).toEqual([
      "Pulumi.dev.yaml",
      "Pulumi.yaml",
      "dashboards/tableau-de-bord-equipe.json",
      "index.ts",
      "package.json",
      "tsconfig.json",
    ]);
    const index = read(out, "index.ts");
    const names = [...index.matchAll(/new posthog\.Dashboard\(\s*"([^"]+)"/g)].map((m) => m[1]);
    const japanese = `dashboard-${createHash("sha256").update("日本語のダッシュボード").digest("hex").slice(0, 8)}`;
    expect(names).toEqual(["tableau-de-bord-equipe", japanese, "kpis", "kpis-2", "revenue-q1-l-equipe-core"]);
    expect(index).toContain(`name: 'Revenue "Q1" — l\\'équipe "core"',`);
    expect(index).toContain('name: "日本語のダッシュボード"');
    expect(index).not.toContain("Gone");
    expect(index).toContain("dashboardId: tableauDeBordEquipe.id,");
    expect(index).toContain(`restrictionLevel: "only-collaborators-can-edit",`);
    expect(index).toContain("projectId: defaultProject.id");
    expect(index).toMatch(/^import \* as posthog from "pulumi-posthog";$/m);
    const imports = [...index.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
    expect(imports).toEqual(["node:fs", "@pulumi/pulumi", "pulumi-posthog"]);
    const settings = read(out, "Pulumi.dev.yaml");
    expect(settings).toContain(`tableau-de-bord-equipe: ${ids.team}`);
    expect(settings).toContain('targetEmail: "nora@example.com"');
    expect(settings).not.toContain("old.invite@example.com");
    expect(settings).toMatch(/key: "persons-to-bigquery"\n\s+batchExportId: "[^"]+"\n\s+paused: true/);
    expect(settings).toMatch(/key: "events-to-s3"\n\s+batchExportId: "[^"]+"\n\s+paused: false/);
    expect(settings).toMatch(/domain: "verified.example.com"\n\s+jitProvisioningEnabled: true/);
    expect(settings).toContain('- domain: "pending.example.com"');
    expect(JSON.parse(read(out, "dashboards/tableau-de-bord-equipe.json")).tiles).toHaveLength(2);
    // The stack settings as YAML reads them.
    const config = parseYaml(settings).config;
    expect(config["posthog-org:members"]).toEqual([
      { email: "adam.admin@example.com", level: 8 },
      { email: "max.member@example.com", level: 1 },
      { email: "mia.member@example.com", level: 1 },
      { email: "olivia.owner@example.com", level: 15 },
    ]);
    expect(config["posthog-org:projects"]).toEqual({
      "default-project": { name: "Default project", id: emu.projectId },
    });
    expect(config["posthog-org:dashboards"]).toEqual({
      "tableau-de-bord-equipe": ids.team,
      [japanese]: ids.japanese,
      kpis: ids.kpis1,
      "kpis-2": ids.kpis2,
      "revenue-q1-l-equipe-core": ids.quoted,
    });
    expect(config["posthog-org:invites"]).toEqual([
      { targetEmail: "nora@example.com", level: 8, firstName: "Nora" },
    ]);
    expect(config["posthog:host"]).toBe(emu.url);
    expect(config["posthog:apiKey"]).toBeUndefined();
    // Secrets: the keys, the public link's token, the projects' API tokens.
    const sharing = await ok("GET", `${emu.project}/dashboards/${ids.team}/sharing/`);
    const tokens = (await ok("GET", `${emu.org}/projects/`)).results.map(
      (p: { api_token: string }) => p.api_token,
    );
    const secrets = [emu.apiKey, readKey, sharing.access_token, ...tokens];
    for (const dir of [out, full, twoProjects]) {
      for (const f of filesOf(dir)) {
        const text = read(dir, f);
        for (const secret of secrets) expect(text.includes(secret), `${f} holds a secret`).toBe(false);
      }
    }
  });

  it("writes index.ts as biome formats it, and the same files again on a second export", async () => {
    const biome = spawnSync(
      join(root, "node_modules", ".bin", "biome"),
      ["format", "--stdin-file-path=index.ts"],
      {
        input: read(out, "index.ts"),
        encoding: "utf8",
      },
    );
    expect(biome.status).toBe(0);
    expect(biome.stdout).toBe(read(out, "index.ts"));
    const again = join(work, "again");
    expect(
      (await runExport(["--out", again, "--stack", "dev", "--project", String(emu.projectId)])).code,
    ).toBe(0);
    for (const f of filesOf(out)) expect(read(again, f), f).toBe(read(out, f));
  });

  it("skips the kinds the key may not read, naming the scope; --only narrows the export", async () => {
    const narrow = await emu.createKey({ scopes: ["organization:read", "project:read", "dashboard:read"] });
    const dir = join(work, "narrow");
    const r = await runExport(["--out", dir, "--project", String(emu.projectId)], narrow);
    expect(r.code).toBe(0);
    expect(r.lines).toContain(
      "  members: all members: the API key may not read them (403; it needs the scope organization_member:read: " +
        "API key missing required scope 'organization_member:read')",
    );
    expect(
      r.lines.some(
        (l) => l.startsWith("  batch-exports: all batch-exports:") && l.includes("batch_export:read"),
      ),
    ).toBe(true);
    expect(read(dir, "Pulumi.dev.yaml")).not.toContain("batchExportId");
    const only = await runExport([
      "--out",
      join(work, "only"),
      "--only",
      "dashboards",
      "--project",
      String(emu.projectId),
    ]);
    expect(only.code).toBe(0);
    const settings = read(join(work, "only"), "Pulumi.dev.yaml");
    expect(settings).toContain("posthog-org:dashboards:");
    expect(settings).toContain("posthog-org:projects:");
    expect(settings).not.toContain("posthog-org:members:");
    await clearLog();
    const bad = await runExport(["--out", dir, "--only", "dashboards,widgets"]);
    expect(bad.code).toBe(2);
    expect(bad.lines[0]).toBe(
      'pulumi-posthog: Invalid --only: unknown kind "widgets"; accepted: domains, members, invites, projects, ' +
        "dashboards, collaborators, sharing, batch-exports (see docs/troubleshooting/commands.md#the-export-command)",
    );
    expect(await requests()).toEqual([]);
  });

  it("is the package's pulumi-posthog bin (built), which prints its usage", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    const bin = join(root, pkg.bin["pulumi-posthog"]);
    expect(readFileSync(bin, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    const help = spawnSync(process.execPath, [bin, "--help"], { encoding: "utf8" });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage:\n {2}pulumi-posthog export \[--out DIR\]/);
    const bad = spawnSync(process.execPath, [bin, "import"], { encoding: "utf8" });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe(
      'pulumi-posthog: unknown command "import"; expected export or audit (see docs/troubleshooting/commands.md#the-export-command)\n' +
        'Run "pulumi-posthog --help" for the usage.\n',
    );
  });

  it("fails in one line naming the setting to fix, writing nothing", async () => {
    const lines: string[] = [];
    const dir = join(work, "nothing");
    const code = await main(["export", "--out", dir], {
      stderr: (l) => lines.push(l),
      stdout: (l) => lines.push(l),
      env: { POSTHOG_HOST: emu.url },
      cwd: work,
    });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^pulumi-posthog export failed: No PostHog API key: .*POSTHOG_API_KEY/);
    const wrongOrg = await main(["export", "--out", dir], {
      stderr: (l) => lines.push(l),
      stdout: () => {},
      env: {
        POSTHOG_HOST: emu.url,
        POSTHOG_API_KEY: readKey,
        POSTHOG_ORGANIZATION_ID: "0b5e7a9c-0000-4000-8000-000000000000",
      },
      cwd: work,
    });
    expect(wrongOrg).toBe(1);
    expect(lines.at(-1)).toContain("POSTHOG_ORGANIZATION_ID");
    expect(existsSync(dir)).toBe(false);
  });

  it("export dashboard ID --out FILE writes the template the full export wrote", async () => {
    const file = join(work, "one", "team.json");
    const r = await runExport(["dashboard", String(ids.team), "--out", file]);
    expect(r.code).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(read(out, "dashboards/tableau-de-bord-equipe.json"));
  });
});

describe("the generated program (every kind, dashboards in two projects) through the real Pulumi CLI", () => {
  const env = () => ({ POSTHOG_HOST: emu.url, POSTHOG_API_KEY: emu.apiKey });
  /**
   * The dev stack of the export of the default and Second projects on a local backend of its own (its settings: a
   * copy of Pulumi.dev.yaml).
   */
  const stack = (
    operation: "up" | "preview" | "destroy",
    more: Pick<RunOptions, "refresh" | "onEvent"> = {},
  ): Promise<RunResult> =>
    runStack({
      operation,
      projectDir: twoProjects,
      stack: "dev",
      stateDir: join(work, "state-dev"),
      env: env(),
      ...more,
    });
  let adopted = 0;

  it("up adopts every object: creates none, deletes none, changes no field", async () => {
    expect(twoExported.code).toBe(0);
    const before = world();
    await clearLog();
    const up = await stack("up");
    expect(up.ok, up.output).toBe(true);
    // 2 domains, 4 members, 1 invite, 2 batch exports, 2 projects, 6 dashboards (5 in the default project, 1 in
    // Second), 1 sharing, 1 collaborator
    expect(up.counts).toEqual({ create: 19, update: 0, replace: 0, delete: 0, same: 0 });
    adopted = up.counts.create;
    expect(world()).toEqual(before);
    const sent = writes(await requests());
    expect(sent.filter((w) => /^(DELETE|PUT) /.test(w))).toEqual([]);
    // Adoption reads first and writes only what differs: nothing here (Dashboard, DashboardSharing and
    // DashboardCollaborator each take what already matches with GETs only).
    expect(sent).toEqual([]);
  }, 300_000);

  it("the next preview with a refresh (the drift gate) shows no changes: the refresh reads back exactly the state up wrote, which a preview without it diffs against", async () => {
    await clearLog();
    const reads: EngineEvent[] = [];
    const refreshed = await stack("preview", {
      refresh: true,
      onEvent: (e) => {
        if (e.resOutputsEvent?.metadata.op === "refresh") reads.push(e);
      },
    });
    expect(refreshed.ok, refreshed.output).toBe(true);
    expect(refreshed.counts).toEqual({ create: 0, update: 0, replace: 0, delete: 0, same: adopted });
    expect(writes(await requests())).toEqual([]);
    // Every resource read back as up left it in the state (inputs and outputs): the preview's diff ran against
    // that very state, so a preview without --refresh, whose diff runs against the state as stored, is the same.
    const resources = reads.flatMap((e) => {
      const m = e.resOutputsEvent?.metadata;
      return m && m.type !== "pulumi:pulumi:Stack" && !m.type.startsWith("pulumi:providers:") ? [m] : [];
    });
    expect(resources).toHaveLength(adopted);
    for (const m of resources) {
      expect(Object.keys(m.old?.outputs ?? {}), m.urn).not.toEqual([]);
      expect(Object.keys(m.old?.inputs ?? {}), m.urn).not.toEqual([]);
      expect(m.new?.outputs, m.urn).toEqual(m.old?.outputs);
      expect(m.new?.inputs, m.urn).toEqual(m.old?.inputs);
    }
  }, 300_000);

  it("destroy leaves the organization as it was found", async () => {
    const destroy = await stack("destroy");
    expect(destroy.ok, destroy.output).toBe(true);
    expect(destroy.counts.delete).toBe(adopted);
    expect(world()).toEqual(original);
  }, 300_000);
});

describe("promotion: the same program on a stack of another project, with no ids", () => {
  it("creates each dashboard from its template: exporting that project gives the same templates", async () => {
    const settings = [
      "config:",
      `  posthog:host: ${JSON.stringify(emu.url)}`,
      `  posthog:organizationId: ${JSON.stringify(emu.organizationId)}`,
      "  posthog-org:projects:",
      "    default-project:",
      '      name: "Staging"',
      `      id: ${stagingId}`,
      "",
    ].join("\n");
    writeFileSync(join(out, "Pulumi.staging.yaml"), settings);
    await clearLog();
    const env = { POSTHOG_HOST: emu.url, POSTHOG_API_KEY: emu.apiKey };
    const run = (operation: "up" | "destroy") =>
      runStack({ operation, projectDir: out, stack: "staging", stateDir: join(work, "state-staging"), env });
    const up = await run("up");
    expect(up.ok, up.output).toBe(true);
    // the project adopted; 5 dashboards, the sharing and the collaborator created
    expect(up.counts).toEqual({ create: 8, update: 0, replace: 0, delete: 0, same: 0 });
    const sent = writes(await requests());
    // Four plain dashboards (no tile to template), one from its template, each then given its declared name (and
    // settings) by one PATCH (a create names its dashboard provisionally until it has the answer: issue 49, item 6),
    // its sharing and its collaborator, all in the staging project; the project itself adopted as it is.
    const staging = `/api/projects/${stagingId}/dashboards/`;
    expect(sent.map((w) => w.replace(/dashboards\/\d+\//, "dashboards/:id/")).sort()).toEqual([
      ...Array.from({ length: 5 }, () => `PATCH ${staging}:id/ 200`),
      `PATCH ${staging}:id/sharing/ 200`,
      `POST ${staging} 201`,
      `POST ${staging} 201`,
      `POST ${staging} 201`,
      `POST ${staging} 201`,
      `POST ${staging}:id/collaborators/ 201`,
      `POST ${staging}create_from_template_json/ 200`,
    ]);
    const promoted = join(work, "promoted");
    const again = await runExport([
      "--out",
      promoted,
      "--project",
      String(stagingId),
      "--only",
      "sharing,collaborators",
    ]);
    expect(again.code).toBe(0);
    expect(read(promoted, "dashboards/tableau-de-bord-equipe.json")).toBe(
      read(out, "dashboards/tableau-de-bord-equipe.json"),
    );
    // The same dashboards (names, settings), sharing and collaborator, in the other project.
    const resources = (text: string) =>
      [...text.matchAll(/new posthog\.(\w+)\(\s*("[^"]+")/g)].map((m) => `${m[1]} ${m[2]}`);
    expect(resources(read(promoted, "index.ts")).sort()).toEqual(resources(read(out, "index.ts")).sort());
    const args = (text: string) =>
      [...text.matchAll(/^ {2}(name|description|pinned|tags|restrictionLevel): .*$/gm)].map((m) => m[0]);
    expect(args(read(promoted, "index.ts")).sort()).toEqual(args(read(out, "index.ts")).sort());
    const destroy = await run("destroy");
    expect(destroy.ok, destroy.output).toBe(true);
    expect((await ok("GET", `/api/projects/${stagingId}/dashboards/`)).count).toBe(0);
  }, 300_000);
});
