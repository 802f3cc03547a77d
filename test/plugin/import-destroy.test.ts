/**
 * Issue 35, item 6: what existed before Pulumi stays as found. One object of every kind is made outside Pulumi (a
 * project; a restricted dashboard, publicly shared, with a collaborator; a verified domain; a pending invite; a
 * member; a paused batch export), imported with `pulumi import --file` through the real CLI and the provider plugin
 * (a YAML project, as test/plugin/import-file.test.ts), unprotected (`--protect=false`), then destroyed: the
 * emulator's request log counts the writes destroy sends for each kind (none), and every object is as it was found
 * (docs/how-it-works/adoption.md, "What destroy does", the table of imported objects). In the same import and destroy, other
 * objects whose generated code gets `deleteAdoptedOnDestroy: true` (a Member's `removeFromOrganizationOnDestroy:
 * true`) before an `up` of them alone are deleted: one write each.
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
/** Makes the stack the test imports into, its program naming no resource; returns its settings file. */
function stackSettings(): Promise<string> {
  mkdirSync(projectDir, { recursive: true });
  writeFileSync(join(projectDir, "Pulumi.yaml"), stringifyYaml(header));
  return stackWithSettings({ projectDir, stack, stateDir, emu, env });
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
  it("sends no write for any kind and leaves every object as it was found; deleteAdoptedOnDestroy (a Member's removeFromOrganizationOnDestroy) added after the import makes it delete, one write each", async () => {
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

    // The objects to delete, made outside Pulumi too.
    const gone = {
      project: (await ok("POST", `${org}/projects/`, { name: "To delete" })).id as number,
      board: (await ok("POST", `${emu.project}/dashboards/`, { name: "To delete" })).id as number,
      domain: (await ok("POST", `${org}/domains/`, { domain: "to-delete.example.com" })).id as string,
      invite: (await ok("POST", `${org}/invites/`, { target_email: "to-delete@example.com", level: 1 }))
        .id as string,
      member: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04", // Max Member, level 1 in the seed
    };
    const toDelete = [
      { type: "posthog:index:Project", name: "delete-project", id: String(gone.project) },
      { type: "posthog:index:Dashboard", name: "delete-dashboard", id: `${p}/${gone.board}` },
      { type: "posthog:index:Domain", name: "delete-domain", id: gone.domain },
      { type: "posthog:index:Invite", name: "delete-invite", id: gone.invite },
      { type: "posthog:index:Member", name: "delete-member", id: gone.member },
    ];

    /** What PostHog shows of the objects to keep. */
    const found = async () => ({
      project: (await emu.call("GET", `${org}/projects/${project}/`)).status,
      dashboard: (await ok("GET", `${dash}/${board}/`)).deleted,
      sharing: (await ok("GET", `${dash}/${board}/sharing/`)).enabled,
      // PostHog answers a dashboard's collaborators as a plain list.
      collaborators: ((await ok("GET", `${dash}/${board}/collaborators/`)) as { user: { uuid: string } }[])
        .map((c) => c.user.uuid)
        .sort(),
      domain: (await ok("GET", `${org}/domains/${domain.id}/`)).is_verified,
      // Every pending invite but the one to delete.
      invites: ((await ok("GET", `${org}/invites/`)).results as { id: string }[])
        .map((i) => i.id)
        .filter((id) => id !== gone.invite)
        .sort(),
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
        resources: [
          ...Object.entries(objects).map(([type, id]) => ({
            type: `posthog:index:${type}`,
            name: type.toLowerCase(),
            id,
          })),
          ...toDelete,
        ],
      }),
    );
    await requestsSince(emu);
    // Imported unprotected, so that destroy may remove them from the state.
    const generated = join(work, "import.yaml");
    const imported = await pulumi(
      ["import", "--file", list, "--yes", "--protect=false", "--out", generated, ...common],
      { cwd: projectDir, stateDir, env },
    );
    expect(imported.exitCode, `${imported.stdout}${imported.stderr}`).toBe(0);
    expect((await requestsSince(emu)).filter((r) => !r.startsWith("GET "))).toEqual([]);
    const state = savedState({ projectDir, stack, stateDir });
    const posthog = (state.deployment.resources ?? []).filter((r) =>
      String(r.type).startsWith("posthog:index:"),
    );
    expect(posthog).toHaveLength(resourceNames.length + toDelete.length);
    expect(posthog.map((r) => r.protect ?? false)).toEqual(posthog.map(() => false));

    // The generated code of the objects to delete, each resource told to delete its object on destroy, in the
    // program; `up` of these alone (`--target`), the others left in the state as imported.
    const code = parseYaml(readFileSync(generated, "utf8")) as {
      resources: Record<string, { type: string; properties: Record<string, unknown> }>;
    };
    const resources = Object.fromEntries(
      toDelete.map(({ name }) => {
        const r = code.resources[name] as { type: string; properties: Record<string, unknown> };
        expect(r, name).toBeDefined();
        return [
          name,
          {
            type: r.type,
            properties: {
              ...r.properties,
              ...(name === "delete-member"
                ? { removeFromOrganizationOnDestroy: true }
                : { deleteAdoptedOnDestroy: true }),
            },
          },
        ];
      }),
    );
    writeFileSync(join(projectDir, "Pulumi.yaml"), stringifyYaml({ ...header, resources }));
    const urnOf = (type: string, name: string) => `urn:pulumi:${stack}::${header.name}::${type}::${name}`;
    const up = await pulumi(
      [
        "up",
        "--yes",
        "--skip-preview",
        ...toDelete.flatMap((r) => ["--target", urnOf(r.type, r.name)]),
        ...common,
      ],
      { cwd: projectDir, stateDir, env },
    );
    expect(up.exitCode, `${up.stdout}${up.stderr}`).toBe(0);

    await requestsSince(emu);
    const destroyed = await pulumi(["destroy", "--yes", "--skip-preview", ...common], {
      cwd: projectDir,
      stateDir,
      env,
    });
    const output = `${destroyed.stdout}${destroyed.stderr}`;
    expect(destroyed.exitCode, output).toBe(0);
    expect(output).toMatch(/- 15 deleted/); // the nine kept, the five deleted and the stack
    // The providers' notes reach the CLI's output through the engine's Log RPC (provider/adapters/plugin/main.ts
    // forwardNotes), not only its debug log: one "destroy kept" warning per kept Project, say.
    expect(output).toMatch(new RegExp(`warning: destroy kept Project ${project}\\b`));

    // Per kind, the requests destroy sent: reads only for the objects to keep (the run's one access check,
    // GET …/projects/, is the provider's, not the Project's: counted under Project), one write for each object to
    // delete.
    const sent = await requestsSince(emu);
    const of = (kind: string) => sent.filter((r) => kindOf(r) === kind);
    if (process.env.SHOW_PLUGIN_RUN)
      process.stdout.write(
        `${JSON.stringify(Object.fromEntries(resourceNames.map((k) => [k, of(k)])), null, 1)}\n`,
      );
    const deletes: Record<string, string[]> = {
      Project: [`DELETE ${org}/projects/${gone.project}/`],
      Dashboard: [`PATCH ${emu.project}/dashboards/${gone.board}/`],
      Domain: [`DELETE ${org}/domains/${gone.domain}/`],
      Invite: [`DELETE ${org}/invites/${gone.invite}/`],
      Member: [`DELETE ${org}/members/${gone.member}/`],
    };
    for (const kind of [...resourceNames, "other"])
      expect(
        of(kind).filter((r) => !r.startsWith("GET ")),
        `writes of ${kind}'s destroy`,
      ).toEqual(deletes[kind] ?? []);

    // Every object to keep as it was found; those deleted gone.
    expect(await found()).toEqual(before);
    expect((await emu.call("GET", `${emu.project}/dashboards/${gone.board}/`)).status).toBe(404); // soft-deleted
    expect((await emu.call("GET", `${org}/projects/${gone.project}/`)).status).toBe(404);
  }, 600_000);
});
