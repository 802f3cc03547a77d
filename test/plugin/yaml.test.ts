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
import {
  type EngineEvent,
  ensureStack,
  PULUMI_BIN,
  pulumiOk,
  type RunResult,
  runStack,
  savedState,
  writeStackSettings,
} from "../../tools/pulumi";
import { startTestEmulator, type TestEmulator } from "../support/emulator";
import {
  NO_POSTHOG_ENV,
  ops,
  pluginProject,
  refreshOf,
  requireBuilt,
  root,
  why,
  yamlDeclaration,
} from "./support";

// Issue 29: the provider plugin (plugin/pulumi-resource-posthog → dist/provider/adapters/plugin/main.js) serving a Pulumi
// YAML program through the real CLI and the YAML language host (`pulumi-language-yaml`, built by
// `npm run pulumi-cli` from github.com/pulumi/pulumi-yaml), against the emulator, on a local backend. The default
// provider's settings reach the plugin only through the stack config (`posthog:host`, `posthog:organizationId`, and
// `posthog:apiKey` as a secret): no POSTHOG_* variable is in the CLI's environment. An explicit provider of the same
// program takes its settings from its properties only: they name a second emulator, which no stack setting names.
// The plugin's imports are tested in test/plugin/import-file.test.ts and test/plugin/import-destroy.test.ts.
const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
const MIA = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03" };
const MAX = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04", email: "max.member@example.com" };
const work = mkdtempSync(join(tmpdir(), "plugin-yaml-"));
const projectDir = join(work, "program");
const stateDir = join(work, "state");
const stack = "dev";
/** The emulator of the stack config (the default provider's), and the one only the explicit provider names. */
let emu: TestEmulator;
let other: TestEmulator;

/** The CLI's environment: no POSTHOG_* setting of the caller's, so only the stack config can reach the plugin. */
const env: NodeJS.ProcessEnv = NO_POSTHOG_ENV;

/** A Pulumi YAML interpolation of `expr`: `${expr}`. */
const ref = (expr: string) => `\${${expr}}`;

/**
 * The YAML program: through the default provider a project, a dashboard restricted to collaborators, one
 * collaborator on it (the member found by the plugin's function `posthog:index:getMember`), an invite; through the
 * explicit provider `prov` (the other emulator; the key the program's secret `key`) a dashboard `board` of
 * `restrictionLevel`.
 */
function program(dashboardName: string, restrictionLevel: number): string {
  return `${pluginProject("posthog-yaml")}description: A Pulumi YAML program of the posthog provider plugin (test/plugin/yaml.test.ts)
config:
  key:
    type: string
    secret: true
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
      projectId: ${ref("web.id")}
      restrictionLevel: only-collaborators-can-edit
      tags: [yaml]
  max-kpis:
    type: posthog:index:DashboardCollaborator
    properties:
      projectId: ${ref("web.id")}
      dashboardId: ${ref("kpis.id")}
      userUuid: ${ref("max")}
  jane:
    type: posthog:index:Invite
    properties:
      targetEmail: jane.yaml@example.com
      level: member
      sendEmail: false
  prov:
    type: pulumi:providers:posthog
    properties:
      host: ${other.url}
      organizationId: ${other.organizationId}
      apiKey: ${ref("key")}
  board:
    type: posthog:index:Dashboard
    properties:
      name: Explicit provider
      restrictionLevel: ${restrictionLevel}
    options:
      provider: ${ref("prov")}
outputs:
  projectId: ${ref("web.id")}
  dashboardId: ${ref("kpis.id")}
  apiToken: ${ref("web.apiToken")}
  boardId: ${ref("board.id")}
`;
}

const run = (
  operation: RunResult["operation"],
  more: {
    expectNoChanges?: boolean;
    withPreview?: boolean;
    refresh?: boolean;
    onEvent?: (e: EngineEvent) => void;
  } = {},
) => runStack({ operation, projectDir, stack, stateDir, env, ...more });

/** Every file of the local backend, as text. */
function backendText(dir: string): string {
  if (!existsSync(dir)) return "";
  return readdirSync(dir)
    .map((f) => join(dir, f))
    .map((p) => (statSync(p).isDirectory() ? backendText(p) : readFileSync(p, "latin1")))
    .join("\n");
}

beforeAll(async () => {
  requireBuilt([join(PULUMI_BIN, "pulumi-language-yaml")]);
  emu = await startTestEmulator();
  other = await startTestEmulator();
  mkdirSync(join(projectDir, "sdks"), { recursive: true });
  // The package declared, as the README says for YAML: the default provider is registered at the version.
  writeFileSync(join(projectDir, "sdks", "posthog.yaml"), yamlDeclaration());
}, 60_000);

afterAll(async () => {
  await emu?.close();
  await other?.close();
  rmSync(work, { recursive: true, force: true });
});

describe("a Pulumi YAML program through the posthog plugin (real CLI)", () => {
  it("check refuses what PostHog would; up creates through the default provider (the stack config, registered as default_<version>_<download URL>) and an explicit provider (its properties only); refresh finds nothing and a change updates one resource (one up --refresh); destroy removes all; the keys stay secret", async () => {
    writeFileSync(join(projectDir, "Pulumi.yaml"), program("YAML KPIs", 22));
    // The stack, with its settings file beside the backend: the default provider's host and organization, its key
    // set as a secret as the README says, and the program's secret `key` (the other emulator's key), both set by
    // the CLI in one run. No posthog:* setting names the other emulator: the explicit provider has only its
    // properties.
    const configFile = await ensureStack({ projectDir, stack, stateDir, env });
    writeStackSettings(
      configFile,
      `config:\n  posthog:host: ${emu.url}\n  posthog:organizationId: ${emu.organizationId}\n`,
    );
    await pulumiOk(
      [
        "config",
        "set-all",
        "--secret",
        `posthog:apiKey=${emu.apiKey}`,
        "--secret",
        `posthog-yaml:key=${other.apiKey}`,
        "--stack",
        stack,
        "--config-file",
        configFile,
      ],
      { cwd: projectDir, stateDir, env },
    );
    const settings = readFileSync(configFile, "utf8");
    expect(settings).not.toContain(emu.apiKey);
    expect(settings).not.toContain(other.apiKey);
    expect(settings).not.toContain(other.url);

    // A value the schema's type allows but PostHog refuses: the plugin's check names it and what it accepts, and
    // the explicit provider's PostHog gets no request.
    await other.control("DELETE", "/requests");
    const refused = await run("preview");
    expect(refused.ok).toBe(false);
    expect(why(refused)).toMatch(/restrictionLevel[\s\S]*expected 21 or "everyone-can-edit"/);
    expect(await other.requests()).toEqual([]);

    // With the CLI's own preview first, as `pulumi up --yes` runs it: the project's id is unknown there, so the
    // dashboard's and the collaborator's checks get Pulumi's unknown value.
    writeFileSync(join(projectDir, "Pulumi.yaml"), program("YAML KPIs", 37));
    const up = await run("up", { withPreview: true });
    expect(up.ok, why(up)).toBe(true);
    expect(ops(up)).toEqual({
      web: "create",
      kpis: "create",
      "max-kpis": "create",
      jane: "create",
      board: "create",
    });
    expect(Object.fromEntries(up.steps.map((s) => [s.name, s.type]))).toEqual({
      web: "posthog:index:Project",
      kpis: "posthog:index:Dashboard",
      "max-kpis": "posthog:index:DashboardCollaborator",
      jane: "posthog:index:Invite",
      board: "posthog:index:Dashboard",
    });
    const projectId = Number(up.outputs.projectId);
    const dashboardId = Number(up.outputs.dashboardId);
    const boardId = Number(up.outputs.boardId);
    expect(up.outputs.apiToken).toBe("[secret]");

    // What PostHog (the emulator of the stack config) holds now.
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
    expect(JSON.stringify(collaborators.body)).not.toContain(MIA.uuid);
    const invites = await emu.call("GET", `${emu.org}/invites/`);
    expect(JSON.stringify(invites.body)).toContain("jane.yaml@example.com");
    // The explicit provider's dashboard: in the PostHog its properties name, not in the stack config's.
    const made = await other.call("GET", `${other.project}/dashboards/${boardId}/`);
    expect(made.body).toMatchObject({ name: "Explicit provider", restriction_level: 37 });
    const defaultBoards = (await emu.call("GET", `${emu.project}/dashboards/?limit=100`)).body as {
      results: { name: string }[];
    };
    expect(defaultBoards.results.map((d) => d.name)).not.toContain("Explicit provider");

    // The providers in the state: the default one registered at the package's version, and `prov`. The keys: secrets
    // in the settings file, nowhere in clear in the state (the backend's checkpoint, which `pulumi stack export`
    // prints) or the backend's files.
    const state = savedState({ projectDir, stack, stateDir });
    const providers = (state.deployment.resources ?? [])
      .map((r) => String(r.urn))
      .filter((urn) => urn.includes("::pulumi:providers:"));
    // Sorted: `default_…` before `prov`. The default one's name: `default_<version>_<download URL as a QName>`, as
    // for the Go and Node.js SDKs (the declaration names the plugin's download URL; test/plugin/sdk-install.test.ts).
    const { pluginDownloadURL } = JSON.parse(readFileSync(join(root, "schema.json"), "utf8")) as {
      pluginDownloadURL: string;
    };
    const defaultName = `default_${version.replaceAll(".", "_")}_${pluginDownloadURL.replace("://", "_/")}`;
    expect(providers.sort()).toEqual([
      `urn:pulumi:${stack}::posthog-yaml::pulumi:providers:posthog::${defaultName}`,
      expect.stringMatching(/::pulumi:providers:posthog::prov$/),
    ]);
    expect(JSON.stringify(state)).not.toContain(emu.apiKey);
    expect(JSON.stringify(state)).not.toContain(other.apiKey);
    expect(backendText(stateDir)).not.toContain(emu.apiKey);
    expect(backendText(stateDir)).not.toContain(other.apiKey);

    // A change in the program, applied by `pulumi up --refresh`: its refresh steps (op "refresh" in the event log,
    // before the update's) read the five resources and find them as they are (nothing changed outside Pulumi); then
    // exactly one update, the dashboard's name, in place (same id). The only write to either PostHog is that update.
    writeFileSync(join(projectDir, "Pulumi.yaml"), program("YAML KPIs, renamed", 37));
    await emu.control("DELETE", "/requests");
    await other.control("DELETE", "/requests");
    const events: EngineEvent[] = [];
    const update = await run("up", { refresh: true, onEvent: (e) => events.push(e) });
    if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`${up.output}\n${update.output}\n`);
    expect(update.ok, why(update)).toBe(true);
    const refresh = refreshOf(events);
    expect(ops(refresh)).toEqual({
      web: "same",
      kpis: "same",
      "max-kpis": "same",
      jane: "same",
      board: "same",
    });
    expect(refresh.counts).toMatchObject({ create: 0, update: 0, replace: 0, delete: 0 });
    expect(update.counts).toMatchObject({ create: 0, update: 1, replace: 0, delete: 0 });
    expect(update.steps.find((s) => s.op === "update")).toMatchObject({ name: "kpis", diffs: ["name"] });
    expect(Number(update.outputs.dashboardId)).toBe(dashboardId);
    const renamed = await emu.call("GET", `/api/projects/${projectId}/dashboards/${dashboardId}/`);
    expect(renamed.body).toMatchObject({ name: "YAML KPIs, renamed" });
    expect(
      (await emu.requests()).filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path}`),
    ).toEqual([`PATCH /api/projects/${projectId}/dashboards/${dashboardId}/`]);
    expect((await other.requests()).filter((r) => r.method !== "GET")).toEqual([]);

    // Destroy: the dashboards soft-deleted (a PATCH, never an HTTP DELETE), the invite and the project gone.
    const destroy = await run("destroy");
    expect(destroy.ok, why(destroy)).toBe(true);
    if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`${destroy.output}\n`);
    expect(destroy.counts.delete).toBe(5);
    const after = await emu.call("GET", `/api/projects/${projectId}/dashboards/${dashboardId}/`);
    expect(after.status).toBe(404);
    expect(JSON.stringify((await emu.call("GET", `${emu.org}/invites/`)).body)).not.toContain(
      "jane.yaml@example.com",
    );
    expect((await emu.call("GET", `${emu.org}/projects/${projectId}/`)).status).toBe(404);
    expect((await other.call("GET", `${other.project}/dashboards/${boardId}/`)).status).toBe(404);
  }, 600_000);
});
