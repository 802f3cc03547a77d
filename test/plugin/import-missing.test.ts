/**
 * Issue 35, item 5: imports never invent an object. `pulumi import --file` through the real CLI and the provider
 * plugin (a YAML project, as test/plugin/import-file.test.ts), against the emulator on a local backend, with a
 * well-formed import id of a missing object for every kind (a soft-deleted dashboard among them, and a dashboard of
 * a project that does not exist), an id of another kind's object and ids of the wrong form, beside one dashboard
 * that exists: each entry fails with one line naming the kind, the object and the import id (or the form its
 * import id takes), the state gains nothing, not even the existing dashboard, and nothing is written to PostHog.
 * One CLI run for all of them: the engine reads every entry before it imports any. Then refresh of imported
 * resources is as before: a dashboard soft-deleted since shows `deleted: true`, a revoked invite leaves the state.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify as stringifyYaml } from "yaml";
import { pulumi, savedState } from "../../tools/pulumi";
import { startTestEmulator, type TestEmulator } from "../support/emulator";
import { NO_POSTHOG_ENV, requireBuilt, root, stackWithSettings } from "./support";

const work = mkdtempSync(join(tmpdir(), "plugin-import-missing-"));
const projectDir = join(work, "program");
const stateDir = join(work, "state");
const stack = "dev";
const env = NO_POSTHOG_ENV;
/** A UUID no object of the emulator's seed has. */
const NOBODY = "5f0c9d3e-2b7a-4e1f-9c8d-6a5b4c3d2e1f";

let emu: TestEmulator;
/** The settings file of the stack, and the dashboard that exists (made in the first test). */
let configFile: string;
let board: number | string;

beforeAll(async () => {
  requireBuilt([]);
  emu = await startTestEmulator();
}, 60_000);

afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

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

describe("pulumi import of objects that do not exist (real CLI, provider plugin)", () => {
  it("every kind fails with one line naming the object and its import id; the state gains nothing", async () => {
    mkdirSync(projectDir, { recursive: true });
    writeFileSync(
      join(projectDir, "Pulumi.yaml"),
      stringifyYaml({
        name: "posthog-import-missing",
        runtime: "yaml",
        plugins: { providers: [{ name: "posthog", path: join(root, "plugin") }] },
      }),
    );
    configFile = await stackWithSettings({ projectDir, stack, stateDir, emu, env });
    const dash = `${emu.project}/dashboards`;
    const made = async (path: string, body: unknown) => {
      const r = await emu.call("POST", path, { body });
      if (r.status !== 201) throw new Error(`POST ${path} → ${r.status} ${r.text}`);
      return r.body as { id: number | string };
    };
    const soft = (await made(`${dash}/`, { name: "Soft-deleted" })).id;
    expect((await emu.call("PATCH", `${dash}/${soft}/`, { body: { deleted: true } })).status).toBe(200);
    board = (await made(`${dash}/`, { name: "Board" })).id;
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
      // Ids of the wrong form.
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

  it("refresh is as before: an imported dashboard soft-deleted since shows `deleted: true`, a revoked invite leaves the state", async () => {
    const common = ["--stack", stack, "--config-file", configFile, "--non-interactive", "--color", "never"];
    const invite = (
      await emu.call("POST", `${emu.org}/invites/`, { body: { target_email: "gone@example.com", level: 1 } })
    ).body.id as string;
    const list = join(work, "existing.json");
    writeFileSync(
      list,
      JSON.stringify({
        resources: [
          { type: "posthog:index:Dashboard", name: "board", id: `${emu.projectId}/${board}` },
          { type: "posthog:index:Invite", name: "invite", id: invite },
        ],
      }),
    );
    const imported = await pulumi(["import", "--file", list, "--yes", ...common], {
      cwd: projectDir,
      stateDir,
      env,
    });
    expect(imported.exitCode, `${imported.stdout}${imported.stderr}`).toBe(0);
    expect(
      (await emu.call("PATCH", `${emu.project}/dashboards/${board}/`, { body: { deleted: true } })).status,
    ).toBe(200);
    expect((await emu.call("DELETE", `${emu.org}/invites/${invite}/`)).status).toBe(204);
    const refreshed = await pulumi(["refresh", "--yes", ...common], { cwd: projectDir, stateDir, env });
    expect(refreshed.exitCode, `${refreshed.stdout}${refreshed.stderr}`).toBe(0);
    const state = savedState({ projectDir, stack, stateDir });
    const posthog = (state.deployment.resources ?? []).filter((r) =>
      String(r.type).startsWith("posthog:index:"),
    );
    expect(posthog.map((r) => [r.type, r.id, (r.outputs as { deleted?: boolean }).deleted])).toEqual([
      ["posthog:index:Dashboard", String(board), true],
    ]);
  }, 600_000);
});
