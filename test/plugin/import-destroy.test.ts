/**
 * Issue 35, item 6: what existed before Pulumi stays as found. One object of every kind is made outside Pulumi (a
 * project; a restricted dashboard, publicly shared, with a collaborator; a verified domain; a pending invite; a
 * member; a paused batch export), imported with `pulumi import --file` through the real CLI and the provider plugin
 * (a YAML project, as test/plugin/import-file.test.ts), unprotected (`--protect=false`), then destroyed: the
 * emulator's request log counts the writes destroy sends for each kind (none), and every object is as it was found
 * (docs/how-it-works.md, "What destroy does", the table of imported objects). Then, on the same stack (empty again),
 * `deleteAdoptedOnDestroy: true` (a Member's `removeFromOrganizationOnDestroy: true`) added to the generated code
 * after an import of other objects still makes destroy delete: one write each.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { resourceNames } from "../../provider/index";
import { pulumi, savedState } from "../../tools/pulumi";
import { requestsSince, startTestEmulator, type TestEmulator, type TestResponse } from "../support/emulator";
import { NO_POSTHOG_ENV, requireBuilt, root, stackWithSettings } from "./support";

const work = mkdtempSync(join(tmpdir(), "plugin-import-destroy-"));
const projectDir = join(work, "program");
const stateDir = join(work, "state");
const stack = "dev";
const env = NO_POSTHOG_ENV;
/** The program's Pulumi.yaml with no resource: the plugin named by its folder in the clone. */
const header = {
  name: "posthog-import-destroy",
  runtime: "yaml",
  plugins: { providers: [{ name: "posthog", path: join(root, "plugin") }] },
};

let emu: TestEmulator;
let settings: Promise<string> | undefined;
/** The stack both tests import into, made by the first that runs; its settings file. */
function stackSettings(): Promise<string> {
  settings ??= (async () => {
    mkdirSync(projectDir, { recursive: true });
    writeFileSync(join(projectDir, "Pulumi.yaml"), stringifyYaml(header));
    return stackWithSettings({ projectDir, stack, stateDir, emu, env });
  })();
  return settings;
}

beforeAll(async () => {
  requireBuilt([]);
  emu = await startTestEmulator();
}, 60_000);

afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

async function ok(method: string, path: string, body?: unknown): Promise<TestResponse["body"]> {
  const r = await emu.call(method, path, body === undefined ? {} : { body });
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${r.text}`);
  return r.body;
}

/** The resource kind a request of the emulator's log (`METHOD path`) is about, from its path. */
function kindOf(request: string): string {
  const path = request.split(" ")[1] ?? "";
  const rules: [RegExp, string][] = [
    [/\/dashboards\/\d+\/sharing\//, "DashboardSharing"],
    [/\/dashboards\/\d+\/collaborators\//, "DashboardCollaborator"],
    [/\/dashboards\//, "Dashboard"],
    [/\/domains\/[^/]+\/verify\//, "DomainVerification"],
    [/\/domains\//, "Domain"],
    [/\/invites\//, "Invite"],
    [/\/members\//, "Member"],
    [/\/batch_exports\//, "BatchExportPause"],
    [/\/projects\//, "Project"],
  ];
  return rules.find(([re]) => re.test(path))?.[1] ?? "other";
}

describe("destroy of imported objects (real CLI, provider plugin)", () => {
  it("sends no write for any kind and leaves every object as it was found", async () => {
    const configFile = await stackSettings();
    const common = ["--stack", stack, "--config-file", configFile, "--non-interactive", "--color", "never"];

    // Objects made outside Pulumi, one of each kind.
    const org = emu.org;
    const project = (await ok("POST", `${org}/projects/`, { name: "Found project" })).id as number;
    const dash = `${emu.project}/dashboards`;
    const board = (await ok("POST", `${dash}/`, { name: "Found board" })).id as number;
    await ok("PATCH", `${dash}/${board}/`, { restriction_level: 37 });
    await ok("PATCH", `${dash}/${board}/sharing/`, { enabled: true });
    const members = (await ok("GET", `${org}/members/`)).results as {
      level: number;
      user: { email: string; uuid: string };
    }[];
    const mia = members.find((m) => m.user.email.startsWith("mia")) as (typeof members)[number];
    await ok("POST", `${dash}/${board}/collaborators/`, { user_uuid: mia.user.uuid, level: 37 });
    const domain = await ok("POST", `${org}/domains/`, { domain: "found.example.com" });
    await emu.control("POST", "/dns", {
      name: "_posthog-challenge.found.example.com",
      txt: domain.verification_challenge,
    });
    await ok("POST", `${org}/domains/${domain.id}/verify/`);
    const invite = (await ok("POST", `${org}/invites/`, { target_email: "found@example.com", level: 1 }))
      .id as string;
    const exportId = ((await ok("GET", `${org}/batch_exports/`)).results as { id: string }[])[0]
      ?.id as string;
    await ok("POST", `${org}/batch_exports/${exportId}/pause/`);
    const p = emu.projectId;
    const objects: Record<string, string> = {
      Project: String(project),
      Dashboard: `${p}/${board}`,
      DashboardSharing: `${p}/${board}`,
      DashboardCollaborator: `${p}/${board}/${mia.user.uuid}`,
      Domain: domain.id,
      DomainVerification: domain.id,
      Invite: invite,
      Member: mia.user.uuid,
      BatchExportPause: exportId,
    };
    expect(Object.keys(objects).sort()).toEqual([...resourceNames].sort());
    /** What PostHog shows of these objects. */
    const found = async () => ({
      project: (await emu.call("GET", `${org}/projects/${project}/`)).status,
      dashboard: (await ok("GET", `${dash}/${board}/`)).deleted,
      sharing: (await ok("GET", `${dash}/${board}/sharing/`)).enabled,
      // PostHog answers a dashboard's collaborators as a plain list.
      collaborators: ((await ok("GET", `${dash}/${board}/collaborators/`)) as { user: { uuid: string } }[])
        .map((c) => c.user.uuid)
        .sort(),
      domain: (await ok("GET", `${org}/domains/${domain.id}/`)).is_verified,
      invites: ((await ok("GET", `${org}/invites/`)).results as { id: string }[]).map((i) => i.id).sort(),
      level: ((await ok("GET", `${org}/members/`)).results as typeof members).find(
        (m) => m.user.uuid === mia.user.uuid,
      )?.level,
      paused: (await ok("GET", `${org}/batch_exports/${exportId}/`)).paused,
    });
    const before = await found();
    expect(before).toMatchObject({
      project: 200,
      dashboard: false,
      sharing: true,
      domain: true,
      paused: true,
    });
    expect(before.collaborators).toEqual([mia.user.uuid]);
    expect(before.invites).toContain(invite);

    const list = join(work, "import.json");
    writeFileSync(
      list,
      JSON.stringify({
        resources: Object.entries(objects).map(([type, id]) => ({
          type: `posthog:index:${type}`,
          name: type.toLowerCase(),
          id,
        })),
      }),
    );
    await requestsSince(emu);
    // Imported unprotected, so that destroy may remove them from the state.
    const imported = await pulumi(["import", "--file", list, "--yes", "--protect=false", ...common], {
      cwd: projectDir,
      stateDir,
      env,
    });
    expect(imported.exitCode, `${imported.stdout}${imported.stderr}`).toBe(0);
    expect((await requestsSince(emu)).filter((r) => !r.startsWith("GET "))).toEqual([]);
    const state = savedState({ projectDir, stack, stateDir });
    const posthog = (state.deployment.resources ?? []).filter((r) =>
      String(r.type).startsWith("posthog:index:"),
    );
    expect(posthog).toHaveLength(resourceNames.length);

    expect(posthog.map((r) => r.protect ?? false)).toEqual(posthog.map(() => false));
    await requestsSince(emu);
    const destroyed = await pulumi(["destroy", "--yes", ...common], { cwd: projectDir, stateDir, env });
    const output = `${destroyed.stdout}${destroyed.stderr}`;
    expect(destroyed.exitCode, output).toBe(0);
    expect(output).toMatch(/- 10 deleted/); // the nine resources and the stack
    // The providers' notes reach the CLI's output through the engine's Log RPC (provider/plugin/main.ts
    // forwardNotes), not only its debug log: one "destroy kept" warning per kept Project, say.
    expect(output).toMatch(/warning: destroy kept Project \d+/);

    // Per kind, the requests destroy sent: reads only (the run's one access check, GET …/projects/, is the
    // provider's, not the Project's: counted under Project).
    const sent = await requestsSince(emu);
    const of = (kind: string) => sent.filter((r) => kindOf(r) === kind);
    if (process.env.SHOW_PLUGIN_RUN)
      process.stdout.write(
        `${JSON.stringify(Object.fromEntries(resourceNames.map((k) => [k, of(k)])), null, 1)}\n`,
      );
    for (const kind of [...resourceNames, "other"])
      expect(
        of(kind).filter((r) => !r.startsWith("GET ")),
        `writes of ${kind}'s destroy`,
      ).toEqual([]);

    // Every object as it was found.
    expect(await found()).toEqual(before);
  }, 600_000);

  it("deleteAdoptedOnDestroy (a Member's removeFromOrganizationOnDestroy) added after the import: destroy deletes, one write each", async () => {
    const dir = projectDir;
    const state = stateDir;
    const configFile = await stackSettings();
    const common = ["--stack", stack, "--config-file", configFile, "--non-interactive", "--color", "never"];
    const org = emu.org;
    const project = (await ok("POST", `${org}/projects/`, { name: "To delete" })).id as number;
    const board = (await ok("POST", `${emu.project}/dashboards/`, { name: "To delete" })).id as number;
    const domain = (await ok("POST", `${org}/domains/`, { domain: "to-delete.example.com" })).id as string;
    const invite = (await ok("POST", `${org}/invites/`, { target_email: "to-delete@example.com", level: 1 }))
      .id as string;
    const max = "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04"; // Max Member, level 1 in the seed
    const list = join(work, "delete.json");
    writeFileSync(
      list,
      JSON.stringify({
        resources: [
          { type: "posthog:index:Project", name: "project", id: String(project) },
          { type: "posthog:index:Dashboard", name: "dashboard", id: `${emu.projectId}/${board}` },
          { type: "posthog:index:Domain", name: "domain", id: domain },
          { type: "posthog:index:Invite", name: "invite", id: invite },
          { type: "posthog:index:Member", name: "member", id: max },
        ],
      }),
    );
    const generated = join(work, "delete.yaml");
    const imported = await pulumi(["import", "--file", list, "--yes", "--out", generated, ...common], {
      cwd: dir,
      stateDir: state,
      env,
    });
    expect(imported.exitCode, `${imported.stdout}${imported.stderr}`).toBe(0);
    // The generated code, unprotected, each resource told to delete its object on destroy.
    const code = parseYaml(readFileSync(generated, "utf8")) as {
      resources: Record<string, { type: string; properties: Record<string, unknown> }>;
    };
    const resources = Object.fromEntries(
      Object.entries(code.resources).map(([name, r]) => [
        name,
        {
          type: r.type,
          properties: {
            ...r.properties,
            ...(name === "member"
              ? { removeFromOrganizationOnDestroy: true }
              : { deleteAdoptedOnDestroy: true }),
          },
        },
      ]),
    );
    writeFileSync(join(dir, "Pulumi.yaml"), stringifyYaml({ ...header, resources }));
    const up = await pulumi(["up", "--yes", "--skip-preview", ...common], { cwd: dir, stateDir: state, env });
    expect(up.exitCode, `${up.stdout}${up.stderr}`).toBe(0);
    await requestsSince(emu);
    const destroyed = await pulumi(["destroy", "--yes", "--skip-preview", ...common], {
      cwd: dir,
      stateDir: state,
      env,
    });
    expect(destroyed.exitCode, `${destroyed.stdout}${destroyed.stderr}`).toBe(0);
    const writes = (await requestsSince(emu)).filter((r) => !r.startsWith("GET ")).sort();
    expect(writes).toEqual(
      [
        `DELETE ${org}/domains/${domain}/`,
        `DELETE ${org}/invites/${invite}/`,
        `DELETE ${org}/members/${max}/`,
        `DELETE ${org}/projects/${project}/`,
        `PATCH ${emu.project}/dashboards/${board}/`,
      ].sort(),
    );
    expect((await emu.call("GET", `${emu.project}/dashboards/${board}/`)).status).toBe(404); // soft-deleted
    expect((await emu.call("GET", `${org}/projects/${project}/`)).status).toBe(404);
  }, 600_000);
});
