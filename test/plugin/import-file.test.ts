/**
 * Issue 29, item 4: `pulumi-posthog export --import-file FILE` (provider/apps/export/import-file.ts) writes the list
 * `pulumi import --file FILE` takes, for an organization holding each kind the export reads (a project; a plain,
 * a restricted and a shared dashboard, two of the same name and one named in Japanese; a collaborator; a verified
 * and an unverified domain; a member; a pending invite; a paused and a running batch export). The real CLI
 * imports it into a Pulumi YAML project through the provider plugin (plugins path in Pulumi.yaml, as
 * test/plugin/yaml.test.ts), against the emulator on a local backend, then `pulumi import <type> <name> <id>` adds
 * a dashboard made by hand after the export (the generated YAML names the type by its short form); the code both
 * generate (`--out`) previews no change, and the emulator saw no write. Each imported resource is the object its
 * name says (a wrong id would import another object, or none), and its name is the one the exported TypeScript
 * program gives it. Then refresh of imported resources is as for created ones: a dashboard soft-deleted since shows
 * `deleted: true`, a revoked invite leaves the state.
 *
 * Before that import, on the same stack (issue 35, item 5: imports never invent an object): `pulumi import --file`
 * with a well-formed import id of a missing object for every kind (a soft-deleted dashboard among them, and a
 * dashboard of a project that does not exist), an id of another kind's object and ids of the wrong form, beside one
 * dashboard that exists: each entry fails with one line naming the kind, the object and the import id (or the form
 * its import id takes), the state gains nothing, not even the existing dashboard, and nothing is written to
 * PostHog. One CLI run for all of them: the engine reads every entry before it imports any.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import type { ImportSpec } from "../../provider/apps/export/import-file";
import { main } from "../../provider/cli";
import { PULUMI_BIN, pulumi, runStack, savedState } from "../../tools/pulumi";
import { startTestEmulator, type TestEmulator, type TestResponse } from "../support/emulator";
import { NO_POSTHOG_ENV, root, stackWithSettings, why } from "./support";

const work = mkdtempSync(join(tmpdir(), "plugin-import-file-"));
const exportDir = join(work, "export");
const listFile = join(work, "posthog-import.json");
const projectDir = join(work, "program");
const stateDir = join(work, "state");
const stack = "dev";
/** The CLI's environment: no POSTHOG_* setting of the caller's; the stack config reaches the plugin. */
const env: NodeJS.ProcessEnv = NO_POSTHOG_ENV;

let emu: TestEmulator;
let exported: { code: number; lines: string[] };
const ids: Record<string, number> = {};
let mia: { email: string; uuid: string };
let pausedExport: { id: string; name: string };

/** The program's Pulumi.yaml with no resource: the plugin named by its folder in the clone. */
const header = {
  name: "posthog-import-file",
  runtime: "yaml",
  plugins: { providers: [{ name: "posthog", path: join(root, "plugin") }] },
};
/** A UUID no object of the emulator's seed has. */
const NOBODY = "5f0c9d3e-2b7a-4e1f-9c8d-6a5b4c3d2e1f";
let settings: Promise<string> | undefined;
/** The stack both imports run on, made by the first test that needs it; its settings file. */
function sharedStack(): Promise<string> {
  settings ??= (async () => {
    mkdirSync(projectDir, { recursive: true });
    writeFileSync(join(projectDir, "Pulumi.yaml"), stringifyYaml(header));
    return stackWithSettings({ projectDir, stack, stateDir, emu, env });
  })();
  return settings;
}

/** The diagnostics of resource `name` in the CLI's output: the lines under its `<type> (<name>):` heading. */
function diagnosticsOf(output: string, type: string, name: string): string[] {
  const lines = output.split("\n");
  const at = lines.findIndex((l) => l.trim() === `posthog:index:${type} (${name}):`);
  if (at < 0) return [];
  const out: string[] = [];
  for (const l of lines.slice(at + 1)) {
    if (!/^ {4}\S/.test(l)) break;
    out.push(l.trim());
  }
  return out;
}

async function ok(method: string, path: string, body?: unknown): Promise<TestResponse["body"]> {
  const r = await emu.call(method, path, body === undefined ? {} : { body });
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${r.text}`);
  return r.body;
}

beforeAll(async () => {
  for (const needed of [
    join(PULUMI_BIN, "pulumi-language-yaml"),
    join(root, "dist", "provider", "adapters", "plugin", "main.js"),
  ])
    if (!existsSync(needed))
      throw new Error(`${needed} is missing: run \`npm run build\` and \`npm run pulumi-cli\` first`);
  emu = await startTestEmulator();
  const org = emu.org;
  const dash = `${emu.project}/dashboards`;
  await ok("POST", `${org}/invites/`, { target_email: "nora@example.com", first_name: "Nora", level: 8 });
  const verified = await ok("POST", `${org}/domains/`, { domain: "verified.example.com" });
  await emu.control("POST", "/dns", {
    name: "_posthog-challenge.verified.example.com",
    txt: verified.verification_challenge,
  });
  await ok("POST", `${org}/domains/${verified.id}/verify/`);
  await ok("PATCH", `${org}/domains/${verified.id}/`, { jit_provisioning_enabled: true });
  await ok("POST", `${org}/domains/`, { domain: "pending.example.com" });
  const batchExports = (await ok("GET", `${org}/batch_exports/`)).results as { id: string; name: string }[];
  pausedExport = batchExports[1] as { id: string; name: string };
  await ok("POST", `${org}/batch_exports/${pausedExport.id}/pause/`);
  const members = (await ok("GET", `${org}/members/`)).results as { user: { email: string; uuid: string } }[];
  mia = (members.find((m) => m.user.email.startsWith("mia")) as { user: typeof mia }).user;
  ids.restricted = (await ok("POST", `${dash}/`, { name: "Team board", tags: ["kpi"] })).id;
  await ok("PATCH", `${dash}/${ids.restricted}/`, { restriction_level: 37, pinned: true });
  await ok("POST", `${dash}/${ids.restricted}/collaborators/`, { user_uuid: mia.uuid, level: 37 });
  ids.shared = (await ok("POST", `${dash}/`, { name: "Public KPIs", description: "For everyone" })).id;
  await ok("PATCH", `${dash}/${ids.shared}/sharing/`, { enabled: true });
  ids.plain = (await ok("POST", `${dash}/`, { name: "Plain" })).id;
  // Names that are no identifier: a duplicate (key plain-2) and one with no ASCII letter (key dashboard-<hash>).
  ids.plain2 = (await ok("POST", `${dash}/`, { name: "Plain" })).id;
  ids.japanese = (await ok("POST", `${dash}/`, { name: "日本語のダッシュボード" })).id;

  const lines: string[] = [];
  const code = await main(
    ["export", "--out", exportDir, "--project", String(emu.projectId), "--import-file", listFile],
    {
      stderr: (l) => lines.push(l),
      stdout: (l) => lines.push(l),
      env: { POSTHOG_HOST: emu.url, POSTHOG_API_KEY: emu.apiKey },
      cwd: work,
    },
  );
  exported = { code, lines };
}, 120_000);

afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

describe("pulumi-posthog export --import-file, then pulumi import --file (real CLI, provider plugin)", () => {
  it("writes each object with its import id and the exported program's name; says what it leaves out", () => {
    expect(exported.code, exported.lines.join("\n")).toBe(0);
    const text = exported.lines.join("\n");
    expect(text).toMatch(/Import file .*posthog-import\.json: \d+ resources/);
    expect(text).toContain("not in it: posthog:index:DomainVerification");
    const { resources } = JSON.parse(readFileSync(listFile, "utf8")) as { resources: ImportSpec[] };
    const byId = (type: string, id: string) =>
      resources.find((r) => r.type === `posthog:index:${type}` && r.id === id);
    const p = emu.projectId;
    // The import ids of the README's table.
    expect(byId("Project", String(p))).toBeDefined();
    for (const id of [ids.restricted, ids.shared, ids.plain, ids.plain2, ids.japanese])
      expect(byId("Dashboard", `${p}/${id}`)).toBeDefined();
    expect(byId("Dashboard", `${p}/${ids.plain2}`)).toMatchObject({ name: "plain2", logicalName: "plain-2" });
    expect(byId("Dashboard", `${p}/${ids.japanese}`)?.logicalName).toMatch(/^dashboard-[0-9a-f]{8}$/);
    expect(byId("DashboardSharing", `${p}/${ids.shared}`)).toBeDefined();
    expect(byId("DashboardCollaborator", `${p}/${ids.restricted}/${mia.uuid}`)).toMatchObject({
      logicalName: `team-board/${mia.email}`,
    });
    expect(byId("Member", mia.uuid)).toMatchObject({ logicalName: mia.email });
    expect(byId("BatchExportPause", pausedExport.id)).toBeDefined();
    expect(resources.filter((r) => r.type === "posthog:index:Domain")).toHaveLength(2);
    expect(resources.filter((r) => r.type === "posthog:index:Invite")).toHaveLength(1);
    expect(resources.filter((r) => r.type === "posthog:index:DomainVerification")).toEqual([]);
    // Code names: unique identifiers.
    expect(new Set(resources.map((r) => r.name)).size).toBe(resources.length);
    for (const r of resources) expect(r.name).toMatch(/^[A-Za-z_][A-Za-z0-9_]*$/);

    // The names are the program's: its code for the dashboards, sharing and collaborators, its stack settings
    // for the others.
    const program = readFileSync(join(exportDir, "index.ts"), "utf8");
    const settings = parseYaml(readFileSync(join(exportDir, "Pulumi.dev.yaml"), "utf8")).config as Record<
      string,
      unknown
    >;
    const fromSettings = (key: string, field: string) =>
      (settings[`posthog-org:${key}`] as Record<string, string>[]).map((e) => e[field]);
    const names: Record<string, string[]> = {
      Project: Object.keys(settings["posthog-org:projects"] as object),
      Dashboard: Object.keys(settings["posthog-org:dashboards"] as object),
      Domain: fromSettings("domains", "domain") as string[],
      Member: fromSettings("members", "email") as string[],
      Invite: fromSettings("invites", "targetEmail") as string[],
      BatchExportPause: fromSettings("batchExportPauses", "key") as string[],
    };
    for (const r of resources) {
      const type = r.type.replace("posthog:index:", "");
      const logical = r.logicalName ?? r.name;
      if (type === "DashboardSharing" || type === "DashboardCollaborator")
        expect(program.replace(/\(\s+/g, "(")).toContain(`new posthog.${type}(${JSON.stringify(logical)}`);
      else expect(names[type], `${type} ${logical}`).toContain(logical);
    }
    expect(resources).toHaveLength(Object.values(names).flat().length + 2);
  });

  // Before the import below, which changes the organization.
  it("--no-program writes the same list and no program; it needs --import-file", async () => {
    const cwd = join(work, "no-program");
    mkdirSync(cwd, { recursive: true });
    const run = async (args: string[]) => {
      const lines: string[] = [];
      const code = await main(["export", ...args], {
        stderr: (l) => lines.push(l),
        stdout: (l) => lines.push(l),
        env: { POSTHOG_HOST: emu.url, POSTHOG_API_KEY: emu.apiKey },
        cwd,
      });
      return { code, text: lines.join("\n") };
    };
    const only = await run([
      "--project",
      String(emu.projectId),
      "--import-file",
      "list.json",
      "--no-program",
    ]);
    expect(only.code, only.text).toBe(0);
    expect(only.text).toContain("no program written");
    expect(readFileSync(join(cwd, "list.json"), "utf8")).toBe(readFileSync(listFile, "utf8"));
    expect(existsSync(join(cwd, "posthog-org"))).toBe(false);

    const without = await run(["--no-program"]);
    expect(without.code).toBe(2);
    expect(without.text).toContain("--no-program writes only the import list: give it --import-file FILE");
    const both = await run(["--no-program", "--import-file", "l.json", "--out", "dir"]);
    expect(both.code).toBe(2);
    expect(both.text).toContain("--no-program writes no program: drop --out DIR");
  });

  it("pulumi import --file of objects that do not exist (and ids of the wrong form): every entry fails with one line naming the kind, the object and its import id; the state gains nothing, not even an existing dashboard listed beside them", async () => {
    // The stack, empty: before the import of the test below.
    const configFile = await sharedStack();
    const dash = `${emu.project}/dashboards`;
    const made = async (path: string, body: unknown) => {
      const r = await emu.call("POST", path, { body });
      if (r.status !== 201) throw new Error(`POST ${path} → ${r.status} ${r.text}`);
      return r.body as { id: number | string };
    };
    const soft = (await made(`${dash}/`, { name: "Soft-deleted" })).id;
    expect((await emu.call("PATCH", `${dash}/${soft}/`, { body: { deleted: true } })).status).toBe(200);
    const board = (await made(`${dash}/`, { name: "Board" })).id;
    const domain = (await made(`${emu.org}/domains/`, { domain: "another-kind.example.com" })).id;
    const p = emu.projectId;

    const token = (t: string) => `posthog:index:${t}`;
    const missing = (what: string, t: string, id: string, form: string, why?: string) =>
      `${what} does not exist: check the import id "${id}" (${token(t)} takes ${form}); nothing is imported.` +
      (why ? ` ${why}.` : "");
    const wrongForm = (t: string, id: string, form: string) =>
      `cannot import ${token(t)} "${id}": its import id is ${form}, e.g. \`pulumi import ${token(t)} <name> ${form.split(" ")[0]}\``;
    const softly = (n: string | number) =>
      "PostHog answers 404 for it: there is no dashboard of that id, or it is soft-deleted (a Dashboard declared " +
      `with dashboardId: ${n} takes a soft-deleted one over and restores it)`;
    const cases: { type: string; name: string; id: string; message: string }[] = [
      {
        type: "Project",
        name: "project",
        id: "99999",
        message: missing("Project 99999", "Project", "99999", "<projectId>"),
      },
      {
        type: "Dashboard",
        name: "dashboard",
        id: `${p}/999999`,
        message: missing(
          `Dashboard 999999 of project ${p}`,
          "Dashboard",
          `${p}/999999`,
          "<projectId>/<dashboardId>",
          softly(999999),
        ),
      },
      {
        type: "Dashboard",
        name: "soft-deleted",
        id: `${p}/${soft}`,
        message: missing(
          `Dashboard ${soft} of project ${p}`,
          "Dashboard",
          `${p}/${soft}`,
          "<projectId>/<dashboardId>",
          softly(soft),
        ),
      },
      {
        type: "Dashboard",
        name: "no-project",
        id: "99999/1",
        message: missing(
          "Dashboard 1 of project 99999",
          "Dashboard",
          "99999/1",
          "<projectId>/<dashboardId>",
          "Project 99999 does not exist in the organization, or the API key cannot reach it",
        ),
      },
      {
        type: "DashboardSharing",
        name: "sharing",
        id: `${p}/999999`,
        message: missing(
          `DashboardSharing of dashboard 999999 of project ${p}`,
          "DashboardSharing",
          `${p}/999999`,
          "<projectId>/<dashboardId>",
          "PostHog answers 404 for its dashboard: there is no dashboard of that id, or it is soft-deleted",
        ),
      },
      {
        type: "DashboardCollaborator",
        name: "collaborator",
        id: `${p}/${board}/${NOBODY}`,
        message: missing(
          `DashboardCollaborator ${NOBODY} of dashboard ${board} of project ${p}`,
          "DashboardCollaborator",
          `${p}/${board}/${NOBODY}`,
          "<projectId>/<dashboardId>/<userUuid>",
          "That user is not a collaborator of the dashboard, or the dashboard does not exist",
        ),
      },
      {
        type: "Domain",
        name: "domain",
        id: NOBODY,
        message: missing(`Domain ${NOBODY}`, "Domain", NOBODY, "<domainId> (a UUID)"),
      },
      {
        type: "DomainVerification",
        name: "verification",
        id: NOBODY,
        message: missing(
          `DomainVerification ${NOBODY}`,
          "DomainVerification",
          NOBODY,
          "<domainId> (a UUID)",
          "Its id is the id of the domain it verifies: the organization has no domain of that id",
        ),
      },
      {
        type: "Invite",
        name: "invite",
        id: NOBODY,
        message: missing(
          `Invite ${NOBODY}`,
          "Invite",
          NOBODY,
          "<inviteId> (a UUID)",
          "The organization has no pending invite of that id: an accepted or revoked invite leaves its list",
        ),
      },
      {
        type: "Member",
        name: "member",
        id: NOBODY,
        message: missing(
          `Member ${NOBODY}`,
          "Member",
          NOBODY,
          "<userUuid>",
          "No member of the organization has that user UUID",
        ),
      },
      {
        type: "BatchExportPause",
        name: "export",
        id: NOBODY,
        message: missing(
          `BatchExportPause ${NOBODY}`,
          "BatchExportPause",
          NOBODY,
          "<batchExportId> (a UUID)",
        ),
      },
      // The id of another kind's object: a domain's id given to a Member (same form), a collaborator's to a Dashboard.
      {
        type: "Member",
        name: "a-domain-id",
        id: String(domain),
        message: missing(
          `Member ${domain}`,
          "Member",
          String(domain),
          "<userUuid>",
          "No member of the organization has that user UUID",
        ),
      },
      {
        type: "Dashboard",
        name: "a-collaborator-id",
        id: `${p}/${board}/${NOBODY}`,
        message: wrongForm("Dashboard", `${p}/${board}/${NOBODY}`, "<projectId>/<dashboardId>"),
      },
      // Ids of the wrong form (a dashboard's own id without its project's, as `pulumi import` of one is typed).
      {
        type: "Dashboard",
        name: "bad",
        id: String(board),
        message: wrongForm("Dashboard", String(board), "<projectId>/<dashboardId>"),
      },
      { type: "Project", name: "by-name", id: "web", message: wrongForm("Project", "web", "<projectId>") },
      {
        type: "Member",
        name: "by-email",
        id: "jane@example.com",
        message: wrongForm("Member", "jane@example.com", "<userUuid>"),
      },
    ];
    const list = join(work, "import.json");
    writeFileSync(
      list,
      JSON.stringify({
        resources: [
          ...cases.map((c) => ({ type: token(c.type), name: c.name, id: c.id })),
          { type: token("Dashboard"), name: "existing", id: `${p}/${board}` },
        ],
      }),
    );
    const common = ["--stack", stack, "--config-file", configFile, "--non-interactive", "--color", "never"];
    await emu.control("DELETE", "/requests");
    const run = await pulumi(["import", "--file", list, "--yes", ...common], {
      cwd: projectDir,
      stateDir,
      env,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`${output}\n`);
    expect(run.exitCode, output).not.toBe(0);
    for (const c of cases) {
      // One line per failed import: the engine's "Preview failed: " and the provider's message, nothing else.
      expect(diagnosticsOf(output, c.type, c.name), `${c.type} ${c.id}`).toEqual([
        `error: Preview failed: ${c.message}`,
      ]);
    }
    expect(output).not.toContain("provider does not support importing resources");
    expect(output).not.toMatch(/\bat \S+ \(.*:\d+:\d+\)/); // no stack trace

    // Nothing in the state (not even the dashboard that exists: the engine reads every entry before it imports),
    // and nothing written to PostHog.
    const state = savedState({ projectDir, stack, stateDir });
    expect(state.deployment.resources ?? []).toEqual([]);
    expect((await emu.requests()).filter((r) => r.method !== "GET")).toEqual([]);
  }, 600_000);

  it("pulumi import --file imports every entry as the object its name says, pulumi import <projectId>/<dashboardId> a dashboard by its own id; the generated code previews no change; refresh then finds a dashboard soft-deleted since (`deleted: true`) and drops a revoked invite", async () => {
    const configFile = await sharedStack();
    const common = ["--stack", stack, "--config-file", configFile, "--non-interactive", "--color", "never"];
    const { resources } = JSON.parse(readFileSync(listFile, "utf8")) as { resources: ImportSpec[] };

    await emu.control("DELETE", "/requests");
    const generated = join(work, "imported.yaml");
    const imported = await pulumi(["import", "--file", listFile, "--yes", "--out", generated, ...common], {
      cwd: projectDir,
      stateDir,
      env,
    });
    expect(imported.exitCode, `${imported.stdout}${imported.stderr}`).toBe(0);
    // An import reads: nothing written to PostHog.
    expect((await emu.requests()).filter((r) => r.method !== "GET")).toEqual([]);
    if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`${readFileSync(generated, "utf8")}\n`);

    // The state: every entry, under its Pulumi name, holding the object the export read under that name.
    const state = savedState({ projectDir, stack, stateDir });
    type StateResource = { type: string; urn: string; id?: string; outputs?: Record<string, unknown> };
    const posthog = ((state.deployment.resources ?? []) as StateResource[]).filter((r) =>
      r.type.startsWith("posthog:index:"),
    );
    expect(posthog).toHaveLength(resources.length);
    const outputsOf = (type: string, name: string) => {
      const r = posthog.find((x) => x.type === `posthog:index:${type}` && x.urn.endsWith(`::${name}`));
      expect(r, `${type} ${name}`).toBeDefined();
      return { id: r?.id, outputs: r?.outputs ?? {} };
    };
    /** The same, from the state as the backend holds it now. */
    const outputsOfState = (type: string, name: string) => {
      const now = (savedState({ projectDir, stack, stateDir }).deployment.resources ?? []) as StateResource[];
      const r = now.find((x) => x.type === `posthog:index:${type}` && x.urn.endsWith(`::${name}`));
      expect(r, `${type} ${name}`).toBeDefined();
      return { id: r?.id, outputs: r?.outputs ?? {} };
    };
    const logical = (type: string, id: string) => {
      const r = resources.find((x) => x.type === `posthog:index:${type}` && x.id === id) as ImportSpec;
      return r.logicalName ?? r.name;
    };
    const p = emu.projectId;
    expect(outputsOf("Dashboard", "team-board")).toMatchObject({
      id: String(ids.restricted),
      outputs: { name: "Team board" },
    });
    expect(outputsOf("Dashboard", "public-kpis")).toMatchObject({
      id: String(ids.shared),
      outputs: { name: "Public KPIs" },
    });
    expect(outputsOf("Dashboard", "plain").id).toBe(String(ids.plain));
    expect(outputsOf("Dashboard", "plain-2").id).toBe(String(ids.plain2));
    expect(outputsOf("Dashboard", logical("Dashboard", `${p}/${ids.japanese}`))).toMatchObject({
      id: String(ids.japanese),
      outputs: { name: "日本語のダッシュボード" },
    });
    expect(outputsOf("DashboardSharing", "public-kpis").outputs).toMatchObject({ enabled: true });
    expect(outputsOf("DashboardCollaborator", `team-board/${mia.email}`).outputs).toMatchObject({
      userUuid: mia.uuid,
    });
    expect(outputsOf("Member", mia.email).outputs).toMatchObject({ email: mia.email });
    expect(outputsOf("Invite", "nora@example.com").outputs).toMatchObject({
      targetEmail: "nora@example.com",
    });
    expect(outputsOf("Domain", "verified.example.com").outputs).toMatchObject({
      domain: "verified.example.com",
    });
    expect(outputsOf("Domain", "pending.example.com").outputs).toMatchObject({
      domain: "pending.example.com",
    });
    expect(outputsOf("BatchExportPause", logical("BatchExportPause", pausedExport.id)).outputs).toMatchObject(
      {
        batchExportId: pausedExport.id,
        paused: true,
      },
    );
    expect(outputsOf("Project", logical("Project", String(p))).id).toBe(String(p));

    const code = parseYaml(readFileSync(generated, "utf8")) as { resources: Record<string, unknown> };
    expect(Object.keys(code.resources).sort()).toEqual(resources.map((r) => r.name).sort());

    // A dashboard made by hand after the export, imported alone as a user types it: the YAML the CLI generates
    // goes into the program.
    const made = (await ok("POST", `${emu.project}/dashboards/`, { name: "Made by hand" })).id as number;
    const generatedOne = join(work, "imported-one.yaml");
    const one = await pulumi(
      [
        "import",
        "posthog:index:Dashboard",
        "kpis",
        `${p}/${made}`,
        "--yes",
        "--out",
        generatedOne,
        ...common,
      ],
      { cwd: projectDir, stateDir, env },
    );
    expect(one.exitCode, `${one.stdout}${one.stderr}`).toBe(0);
    if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`${readFileSync(generatedOne, "utf8")}\n`);
    const codeOne = parseYaml(readFileSync(generatedOne, "utf8")) as { resources: Record<string, unknown> };
    // The YAML code generator writes the short form of the type token (`posthog:Dashboard`).
    expect(codeOne.resources.kpis).toMatchObject({
      type: "posthog:Dashboard",
      properties: { name: "Made by hand", projectId: String(p) },
    });
    // The dashboard's own id, as a created one has.
    expect(outputsOfState("Dashboard", "kpis").id).toBe(String(made));

    // Both generated codes in the program: the next preview changes nothing and writes nothing.
    writeFileSync(
      join(projectDir, "Pulumi.yaml"),
      stringifyYaml({ ...header, resources: { ...code.resources, ...codeOne.resources } }),
    );
    await emu.control("DELETE", "/requests");
    const preview = await runStack({
      operation: "preview",
      projectDir,
      stack,
      stateDir,
      env,
      expectNoChanges: true,
    });
    expect(preview.ok, why(preview)).toBe(true);
    expect(preview.counts).toMatchObject({ create: 0, update: 0, replace: 0, delete: 0 });
    expect((await emu.requests()).filter((r) => r.method !== "GET")).toEqual([]);

    // Outside Pulumi, the plain dashboard is soft-deleted and the invite revoked: refresh records the dashboard as
    // `deleted: true` and drops the invite (its object is gone), the others as they were.
    expect(
      (await emu.call("PATCH", `${emu.project}/dashboards/${ids.plain}/`, { body: { deleted: true } }))
        .status,
    ).toBe(200);
    const invite = outputsOf("Invite", "nora@example.com").id as string;
    expect((await emu.call("DELETE", `${emu.org}/invites/${invite}/`)).status).toBe(204);
    const refreshed = await pulumi(["refresh", "--yes", ...common], { cwd: projectDir, stateDir, env });
    expect(refreshed.exitCode, `${refreshed.stdout}${refreshed.stderr}`).toBe(0);
    const after = (
      (savedState({ projectDir, stack, stateDir }).deployment.resources ?? []) as StateResource[]
    )
      .filter((r) => r.type === "posthog:index:Dashboard" || r.type === "posthog:index:Invite")
      .map((r) => [r.type, r.id, (r.outputs as { deleted?: boolean }).deleted ?? false]);
    expect(after.sort()).toEqual(
      [
        ...[ids.restricted, ids.shared, ids.plain2, ids.japanese, made].map((id) => [
          "posthog:index:Dashboard",
          String(id),
          false,
        ]),
        ["posthog:index:Dashboard", String(ids.plain), true],
      ].sort(),
    );
  }, 600_000);
});
