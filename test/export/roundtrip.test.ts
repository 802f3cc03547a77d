/**
 * `pulumi-posthog export` (provider/export/cli.ts) against the emulator, over real HTTP: an organization seeded
 * with the awkward cases (non-ASCII and duplicate dashboard names, 150 dashboards across two list pages, a
 * soft-deleted one, a pending and an expired invite, a verified and an unverified domain, a paused and a running
 * batch export, a collaborator on a restricted dashboard, sharing on and off) is exported with a key holding only
 * `:read` scopes; the generated program then runs through the stand-in engine (real Node runtime, real
 * dynamic-provider host): `up` changes nothing on the server (the emulator's saved world before and after), the
 * next `preview` shows no changes, `destroy` leaves the organization as found. Promotion: the same program on a
 * stack pointing at another project with no ids creates the dashboards from their templates, and exporting that
 * project gives the same templates.
 */
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
import { main } from "../../provider/export/cli";
import { type RunResult, runStack } from "../../tools/stack/engine";
import { startTestEmulator, type TestEmulator } from "../support/emulator";

const root = join(__dirname, "..", "..");
const work = mkdtempSync(join(tmpdir(), "export-"));
const stateFile = join(work, "world.json");
const out = join(work, "program");

const READ_SCOPES = [
  "organization:read",
  "organization_member:read",
  "project:read",
  "dashboard:read",
  "batch_export:read",
];
const BULK = 146; // with the 4 named ones: 150 dashboards, two pages of the list (100 per page)

let emu: TestEmulator;
let readKey: string;
let stagingId: number;
const ids: Record<string, number> = {};
let exported: { code: number; lines: string[] };

type Log = { method: string; path: string; status: number }[];
const requests = async (): Promise<Log> => (await emu.control("GET", "/requests")).body as Log;
const clearLog = () => emu.control("DELETE", "/requests");
/** The emulator's world as saved after its last write (API keys and the clock aside). */
const world = (): Record<string, unknown> => {
  const { apiKeys: _k, clockOffsetMs: _c, ...rest } = JSON.parse(readFileSync(stateFile, "utf8"));
  return rest;
};

async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const r = await emu.call(method, path, body === undefined ? {} : { body });
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${r.text}`);
  return r.body;
}

async function runExport(args: string[], key = readKey) {
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
  // An expired invite, then (3 days later) a pending one.
  await ok("POST", `${org}/invites/`, { target_email: "old.invite@example.com", level: 1 });
  await emu.control("POST", "/clock", { advanceSeconds: 4 * 24 * 3600 });
  await ok("POST", `${org}/invites/`, { target_email: "nora@example.com", first_name: "Nora", level: 8 });
  // A verified and an unverified domain.
  const verified = await ok("POST", `${org}/domains/`, { domain: "verified.example.com" });
  await emu.control("POST", "/dns", {
    name: "_posthog-challenge.verified.example.com",
    txt: verified.verification_challenge,
  });
  await ok("POST", `${org}/domains/${verified.id}/verify/`);
  await ok("PATCH", `${org}/domains/${verified.id}/`, { jit_provisioning_enabled: true });
  await ok("POST", `${org}/domains/`, { domain: "pending.example.com" });
  // A paused and a running batch export (both seeded running).
  const exportsList = await ok("GET", `${org}/batch_exports/`);
  await ok("POST", `${org}/batch_exports/${exportsList.results[1].id}/pause/`);
  // Dashboards: from a template, restricted, with a collaborator and shared; non-ASCII and duplicate names; one
  // soft-deleted; one shared then unshared; and the bulk.
  const fromTemplate = await ok("POST", `${dash}/create_from_template_json/`, { template });
  ids.team = fromTemplate.id;
  await ok("PATCH", `${dash}/${ids.team}/`, { restriction_level: 37, pinned: true });
  const mia = (await ok("GET", `${org}/members/`)).results.find((m: any) => m.user.email.startsWith("mia"));
  await ok("POST", `${dash}/${ids.team}/collaborators/`, { user_uuid: mia.user.uuid, level: 37 });
  await ok("PATCH", `${dash}/${ids.team}/sharing/`, { enabled: true });
  ids.japanese = (await ok("POST", `${dash}/`, { name: "日本語のダッシュボード" })).id;
  ids.kpis1 = (await ok("POST", `${dash}/`, { name: "KPIs", description: "Firsts", tags: ["b", "a"] })).id;
  ids.kpis2 = (await ok("POST", `${dash}/`, { name: "KPIs" })).id;
  await ok("PATCH", `${dash}/${ids.kpis2}/sharing/`, { enabled: true });
  await ok("PATCH", `${dash}/${ids.kpis2}/sharing/`, { enabled: false });
  ids.deleted = (await ok("POST", `${dash}/`, { name: "Gone" })).id;
  await ok("PATCH", `${dash}/${ids.deleted}/`, { deleted: true });
  for (let i = 1; i <= BULK; i++)
    await ok("POST", `${dash}/`, { name: `Bulk ${String(i).padStart(3, "0")}` });
  stagingId = (await ok("POST", `${org}/projects/`, { name: "Staging" })).id;

  await clearLog();
  exported = await runExport(["--out", out, "--stack", "dev"]);
  // The program resolves its packages as in a user's directory after `npm install`.
  const modules = join(out, "node_modules");
  mkdirSync(join(modules, "@pulumi"), { recursive: true });
  mkdirSync(join(modules, "@types"), { recursive: true });
  symlinkSync(root, join(modules, "pulumi-posthog"), "dir");
  symlinkSync(join(root, "node_modules", "@pulumi", "pulumi"), join(modules, "@pulumi", "pulumi"), "dir");
  symlinkSync(join(root, "node_modules", "@types", "node"), join(modules, "@types", "node"), "dir");
}, 120_000);

afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

describe("pulumi-posthog export", () => {
  it("reads with GET only, the lists plus one detail per dashboard, and says so", async () => {
    console.log(exported.lines.join("\n"));
    expect(exported.code).toBe(0);
    const log = await requests();
    expect(log.filter((r) => r.method !== "GET")).toEqual([]);
    expect(log.filter((r) => r.status >= 400)).toEqual([]);
  });
});

describe("the generated program", () => {
  const env = () => ({ POSTHOG_HOST: emu.url, POSTHOG_API_KEY: emu.apiKey });
  const stack = (operation: "up" | "preview" | "destroy", name = "dev"): Promise<RunResult> =>
    runStack({ operation, projectDir: out, stack: name, statePath: join(work, `${name}.json`), env: env() });

  it("up adopts everything and changes nothing", async () => {
    const before = world();
    await clearLog();
    const t0 = Date.now();
    const up = await stack("up");
    console.log(
      "up ms",
      Date.now() - t0,
      up.counts,
      up.diagnostics.filter((d) => d.severity === "error"),
    );
    expect(up.ok).toBe(true);
    const log = await requests();
    console.log(
      log
        .filter((r) => r.method !== "GET")
        .map((r) => `${r.method} ${r.path} ${r.status}`)
        .slice(0, 40),
    );
    expect(world()).toEqual(before);
  }, 300_000);
});
