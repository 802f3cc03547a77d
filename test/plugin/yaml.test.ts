import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { PULUMI_BIN, pulumi, pulumiOk, type RunResult, runStack, savedState } from "../../tools/pulumi";
import { startTestEmulator, type TestEmulator } from "../support/emulator";
import { NO_POSTHOG_ENV, ops, requireBuilt, root, stackWithSettings as stackWith, why } from "./support";

// Issue 29: the provider plugin (plugin/pulumi-resource-posthog → dist/provider/plugin/main.js) serving a Pulumi
// YAML program through the real CLI and the YAML language host (`pulumi-language-yaml`, built by
// `npm run pulumi-cli` from github.com/pulumi/pulumi-yaml), against the emulator, on a local backend. The settings
// reach the plugin only through the stack config (`posthog:host`, `posthog:organizationId`, and `posthog:apiKey`
// as a secret): no POSTHOG_* variable is in the CLI's environment.
const MIA = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03" };
/** The emulator's seeded batch export ("Events to S3"). */
const EXPORT_ID = "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c01";
const MAX = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04", email: "max.member@example.com" };
const work = mkdtempSync(join(tmpdir(), "plugin-yaml-"));
const projectDir = join(work, "program");
const stateDir = join(work, "state");
const stack = "dev";
let emu: TestEmulator;

/** The CLI's environment: no POSTHOG_* setting of the caller's, so only the stack config can reach the plugin. */
const env: NodeJS.ProcessEnv = NO_POSTHOG_ENV;

/**
 * The YAML program: a project, a dashboard restricted to collaborators, one collaborator on it (the member found by
 * the plugin's function `posthog:index:getMember`), an invite.
 */
function program(dashboardName: string): string {
  return `name: posthog-yaml
runtime: yaml
description: A Pulumi YAML program of the posthog provider plugin (test/plugin/yaml.test.ts)
plugins:
  providers:
    - name: posthog
      path: ${join(root, "plugin")}
variables:
  max:
    fn::invoke:
      function: posthog:index:getMember
      arguments:
        email: ${MAX.email}
      return: userUuid
resources:
  web:
    type: posthog:index:Project
    properties:
      name: YAML web
      timezone: Europe/Paris
  kpis:
    type: posthog:index:Dashboard
    properties:
      name: ${dashboardName}
      projectId: \${web.id}
      restrictionLevel: only-collaborators-can-edit
      tags: [yaml]
  max-kpis:
    type: posthog:index:DashboardCollaborator
    properties:
      projectId: \${web.id}
      dashboardId: \${kpis.id}
      userUuid: \${max}
  jane:
    type: posthog:index:Invite
    properties:
      targetEmail: jane.yaml@example.com
      level: member
      sendEmail: false
outputs:
  projectId: \${web.id}
  dashboardId: \${kpis.id}
  apiToken: \${web.apiToken}
`;
}

/** A Pulumi YAML interpolation of `expr`: `${expr}`. */
const ref = (expr: string) => `\${${expr}}`;
const run = (
  operation: RunResult["operation"],
  more: { expectNoChanges?: boolean; withPreview?: boolean } = {},
) => runStack({ operation, projectDir, stack, stateDir, env, ...more });

/** Every file of the local backend, as text. */
function backendText(dir: string): string {
  if (!existsSync(dir)) return "";
  return readdirSync(dir)
    .map((f) => join(dir, f))
    .map((p) => (statSync(p).isDirectory() ? backendText(p) : readFileSync(p, "latin1")))
    .join("\n");
}

let settings: Promise<string> | undefined;
/**
 * The one stack of the tests below (each writes its program, of the same project name, into `projectDir` first and
 * leaves the stack empty), made by the first that runs: its settings file beside the backend holding the emulator's
 * host and organization, and the key set with `pulumi config set --secret`. Returns the settings file.
 */
function sharedStack(): Promise<string> {
  settings ??= stackWith({ projectDir, stack, stateDir, emu, env });
  return settings;
}

beforeAll(async () => {
  requireBuilt([join(PULUMI_BIN, "pulumi-language-yaml")]);
  emu = await startTestEmulator();
  mkdirSync(projectDir, { recursive: true });
}, 60_000);

afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

describe("a Pulumi YAML program through the posthog plugin (real CLI)", () => {
  it("up creates, a change updates one resource, refresh finds nothing, destroy removes all; the key stays secret", async () => {
    // The stack, with its settings file beside the backend; the key set as a secret, as the README says.
    writeFileSync(join(projectDir, "Pulumi.yaml"), program("YAML KPIs"));
    const configFile = await sharedStack();
    expect(readFileSync(configFile, "utf8")).not.toContain(emu.apiKey);

    // With the CLI's own preview first, as `pulumi up --yes` runs it: the project's id is unknown there, so the
    // dashboard's and the collaborator's checks get Pulumi's unknown value.
    const up = await run("up", { withPreview: true });
    expect(up.ok, why(up)).toBe(true);
    expect(ops(up)).toEqual({ web: "create", kpis: "create", "max-kpis": "create", jane: "create" });
    expect(Object.fromEntries(up.steps.map((s) => [s.name, s.type]))).toEqual({
      web: "posthog:index:Project",
      kpis: "posthog:index:Dashboard",
      "max-kpis": "posthog:index:DashboardCollaborator",
      jane: "posthog:index:Invite",
    });
    const projectId = Number(up.outputs.projectId);
    const dashboardId = Number(up.outputs.dashboardId);
    expect(up.outputs.apiToken).toBe("[secret]");

    // What PostHog (the emulator) holds now.
    const project = await emu.call("GET", `${emu.org}/projects/${projectId}/`);
    expect(project.status).toBe(200);
    expect(project.body).toMatchObject({ name: "YAML web", timezone: "Europe/Paris" });
    const dashboard = await emu.call("GET", `/api/projects/${projectId}/dashboards/${dashboardId}/`);
    expect(dashboard.body).toMatchObject({ name: "YAML KPIs", restriction_level: 37, tags: ["yaml"] });
    const collaborators = await emu.call(
      "GET",
      `/api/projects/${projectId}/dashboards/${dashboardId}/collaborators/`,
    );
    expect(JSON.stringify(collaborators.body)).toContain(MAX.uuid);
    const invites = await emu.call("GET", `${emu.org}/invites/`);
    expect(JSON.stringify(invites.body)).toContain("jane.yaml@example.com");

    // The key: a secret in the settings file, nowhere in clear in the state (the backend's checkpoint, which
    // `pulumi stack export` prints) or the backend's files.
    const state = savedState({ projectDir, stack, stateDir });
    expect(JSON.stringify(state)).not.toContain(emu.apiKey);
    expect(backendText(stateDir)).not.toContain(emu.apiKey);

    // A change in the program: exactly one update, the dashboard's name, in place (same id).
    writeFileSync(join(projectDir, "Pulumi.yaml"), program("YAML KPIs, renamed"));
    const update = await run("up");
    if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`${up.output}\n${update.output}\n`);
    expect(update.ok, why(update)).toBe(true);
    expect(update.counts).toMatchObject({ create: 0, update: 1, replace: 0, delete: 0 });
    expect(update.steps.find((s) => s.op === "update")).toMatchObject({ name: "kpis", diffs: ["name"] });
    expect(Number(update.outputs.dashboardId)).toBe(dashboardId);
    const renamed = await emu.call("GET", `/api/projects/${projectId}/dashboards/${dashboardId}/`);
    expect(renamed.body).toMatchObject({ name: "YAML KPIs, renamed" });

    // Refresh: nothing changed outside Pulumi, so nothing to report, and no write.
    await emu.control("DELETE", "/requests");
    const refresh = await run("refresh", { expectNoChanges: true });
    expect(refresh.ok, why(refresh)).toBe(true);
    expect(refresh.counts).toMatchObject({ create: 0, update: 0, replace: 0, delete: 0 });
    const writes = (await emu.requests()).filter((r) => r.method !== "GET");
    expect(writes).toEqual([]);

    // Destroy: the dashboard soft-deleted (a PATCH, never an HTTP DELETE), the invite and the project gone.
    const destroy = await run("destroy");
    expect(destroy.ok, why(destroy)).toBe(true);
    expect(destroy.counts.delete).toBe(4);
    const after = await emu.call("GET", `/api/projects/${projectId}/dashboards/${dashboardId}/`);
    expect(after.status).toBe(404);
    expect(JSON.stringify((await emu.call("GET", `${emu.org}/invites/`)).body)).not.toContain(
      "jane.yaml@example.com",
    );
    expect((await emu.call("GET", `${emu.org}/projects/${projectId}/`)).status).toBe(404);
  }, 600_000);

  it("pulumi import <projectId>/<dashboardId> adopts a dashboard, and import --file a project, a member, a batch export pause and a sharing by their import ids, with no change on the next preview; a wrong id names the form; destroy leaves them as found", async () => {
    // The same stack, empty again; the program names no resource yet.
    const dir = projectDir;
    const state = stateDir;
    const header = {
      name: "posthog-yaml",
      runtime: "yaml",
      plugins: { providers: [{ name: "posthog", path: join(root, "plugin") }] },
    };
    writeFileSync(join(dir, "Pulumi.yaml"), stringifyYaml(header));
    const configFile = await sharedStack();
    const made = await emu.call("POST", `${emu.project}/dashboards/`, { body: { name: "Made by hand" } });
    expect(made.status).toBe(201);
    const dashboardId = (made.body as { id: number }).id;
    const common = ["--stack", stack, "--config-file", configFile, "--non-interactive", "--color", "never"];

    // A wrong import id: the error names the form the Dashboard's takes, and nothing is imported.
    const wrong = await pulumi(
      ["import", "posthog:index:Dashboard", "bad", String(dashboardId), "--yes", ...common],
      {
        cwd: dir,
        stateDir: state,
        env,
      },
    );
    expect(wrong.exitCode).not.toBe(0);
    expect(`${wrong.stdout}${wrong.stderr}`).toContain("its import id is <projectId>/<dashboardId>");

    // The import, as a user types it: the YAML the CLI generates goes into the program.
    const generated = join(work, "imported.yaml");
    const id = `${emu.projectId}/${dashboardId}`;
    const imported = await pulumi(
      ["import", "posthog:index:Dashboard", "kpis", id, "--yes", "--out", generated, ...common],
      { cwd: dir, stateDir: state, env },
    );
    expect(imported.exitCode, `${imported.stdout}${imported.stderr}`).toBe(0);
    if (process.env.SHOW_PLUGIN_RUN)
      process.stdout.write(`${imported.stdout}\n${readFileSync(generated, "utf8")}\n`);
    const code = parseYaml(readFileSync(generated, "utf8")) as { resources: Record<string, unknown> };
    // The YAML code generator writes the short form of the type token (`posthog:Dashboard`).
    expect(code.resources.kpis).toMatchObject({
      type: "posthog:Dashboard",
      properties: { name: "Made by hand", projectId: String(emu.projectId) },
    });
    const exported = savedState({ projectDir: dir, stack, stateDir: state });
    const dashboard = (exported.deployment.resources ?? []).find((r) => r.type === "posthog:index:Dashboard");
    expect(dashboard?.id).toBe(String(dashboardId)); // the dashboard's own id, as a created one has

    // Then `pulumi import --file` into the same stack: the seed project, a member, the seed batch export's pause
    // and the sharing of a dashboard made by hand, each by its import id.
    const board = await emu.call("POST", `${emu.project}/dashboards/`, { body: { name: "Shared by hand" } });
    const sharedId = (board.body as { id: number }).id;
    const list = join(work, "import-file.json");
    writeFileSync(
      list,
      JSON.stringify({
        resources: [
          { type: "posthog:index:Project", name: "seed", id: String(emu.projectId) },
          { type: "posthog:index:Member", name: "mia", id: MIA.uuid },
          { type: "posthog:index:BatchExportPause", name: "events", id: EXPORT_ID },
          { type: "posthog:index:DashboardSharing", name: "shared", id: `${emu.projectId}/${sharedId}` },
        ],
      }),
    );
    const generatedFromFile = join(work, "import-file.yaml");
    const fromFile = await pulumi(
      ["import", "--file", list, "--yes", "--out", generatedFromFile, ...common],
      {
        cwd: dir,
        stateDir: state,
        env,
      },
    );
    expect(fromFile.exitCode, `${fromFile.stdout}${fromFile.stderr}`).toBe(0);
    const codeFromFile = parseYaml(readFileSync(generatedFromFile, "utf8")) as {
      resources: Record<string, unknown>;
    };
    if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`${readFileSync(generatedFromFile, "utf8")}\n`);
    expect(Object.keys(codeFromFile.resources).sort()).toEqual(["events", "mia", "seed", "shared"]);

    // Both generated codes in the program: the next preview changes nothing and writes nothing.
    writeFileSync(
      join(dir, "Pulumi.yaml"),
      stringifyYaml({ ...header, resources: { ...code.resources, ...codeFromFile.resources } }),
    );
    await emu.control("DELETE", "/requests");
    const preview = await runStack({
      operation: "preview",
      projectDir: dir,
      stack,
      stateDir: state,
      env,
      expectNoChanges: true,
    });
    expect(preview.ok, why(preview)).toBe(true);
    expect(preview.counts).toMatchObject({ create: 0, update: 0, replace: 0, delete: 0 });
    expect((await emu.requests()).filter((r) => r.method !== "GET")).toEqual([]);

    // Pulumi did not create them: once unprotected, destroy leaves the dashboard as it was found (not
    // soft-deleted), and the seed project too.
    await pulumiOk(["state", "unprotect", "--all", "--yes", "--stack", stack, "--non-interactive"], {
      cwd: dir,
      stateDir: state,
      env,
    });
    const destroy = await runStack({ operation: "destroy", projectDir: dir, stack, stateDir: state, env });
    expect(destroy.ok, why(destroy)).toBe(true);
    expect(destroy.counts.delete).toBe(5);
    const kept = await emu.call("GET", `${emu.project}/dashboards/${dashboardId}/`);
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ name: "Made by hand", deleted: false });
    expect((await emu.call("GET", `${emu.org}/projects/${emu.projectId}/`)).status).toBe(200);
  }, 600_000);

  it("an explicit provider takes its settings from its properties (the key a secret of the program); check refuses what PostHog would", async () => {
    // The same stack, empty again.
    const dir = projectDir;
    const state = stateDir;
    const programOf = (restrictionLevel: number) =>
      stringifyYaml({
        name: "posthog-yaml",
        runtime: "yaml",
        plugins: { providers: [{ name: "posthog", path: join(root, "plugin") }] },
        config: { key: { type: "string", secret: true } },
        resources: {
          prov: {
            type: "pulumi:providers:posthog",
            properties: { host: emu.url, organizationId: emu.organizationId, apiKey: ref("key") },
          },
          board: {
            type: "posthog:index:Dashboard",
            properties: { name: "Explicit provider", restrictionLevel },
            options: { provider: ref("prov") },
          },
        },
        outputs: { dashboardId: ref("board.id") },
      });
    writeFileSync(join(dir, "Pulumi.yaml"), programOf(22));
    // No posthog:* stack setting and no POSTHOG_* variable: only the provider resource's properties. The program's
    // secret `key` takes the ciphertext `pulumi config set --secret` wrote for posthog:apiKey (the same key).
    const configFile = await sharedStack();
    const doc = parseYaml(readFileSync(configFile, "utf8")) as { config: Record<string, unknown> };
    const secure = doc.config["posthog:apiKey"] as { secure: string };
    expect(secure.secure).toMatch(/^v1:/);
    writeFileSync(configFile, stringifyYaml({ ...doc, config: { "posthog-yaml:key": secure } }));
    expect(readFileSync(configFile, "utf8")).not.toMatch(/posthog:|apiKey/);
    const runIt = (operation: RunResult["operation"]) =>
      runStack({ operation, projectDir: dir, stack, stateDir: state, env });

    // A value the schema's type allows but PostHog refuses: the plugin's check names it and what it accepts.
    await emu.control("DELETE", "/requests");
    const refused = await runIt("preview");
    expect(refused.ok).toBe(false);
    expect(why(refused)).toMatch(/restrictionLevel[\s\S]*expected 21 or "everyone-can-edit"/);
    expect(await emu.requests()).toEqual([]);

    writeFileSync(join(dir, "Pulumi.yaml"), programOf(37));
    const up = await runIt("up");
    expect(up.ok, why(up)).toBe(true);
    expect(ops(up)).toEqual({ board: "create" });
    const dashboardId = Number(up.outputs.dashboardId);
    const made = await emu.call("GET", `${emu.project}/dashboards/${dashboardId}/`);
    expect(made.body).toMatchObject({ name: "Explicit provider", restriction_level: 37 });
    const exported = savedState({ projectDir: dir, stack, stateDir: state });
    const provider = (exported.deployment.resources ?? []).find((r) => r.type === "pulumi:providers:posthog");
    expect(provider).toBeDefined();
    expect(JSON.stringify(exported)).not.toContain(emu.apiKey);

    const destroy = await runIt("destroy");
    expect(destroy.ok, why(destroy)).toBe(true);
    expect((await emu.call("GET", `${emu.project}/dashboards/${dashboardId}/`)).status).toBe(404);
  }, 600_000);
});
