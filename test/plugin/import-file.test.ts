/**
 * Issue 29, item 4: `pulumi-posthog export --import-file FILE` (provider/export/import-file.ts) writes the list
 * `pulumi import --file FILE` takes, for an organization holding each kind the export reads (a project; a plain,
 * a restricted and a shared dashboard, two of the same name and one named in Japanese; a collaborator; a verified
 * and an unverified domain; a member; a pending invite; a paused and a running batch export). The real CLI
 * imports it into a Pulumi YAML project through the provider plugin (plugins path in Pulumi.yaml, as
 * test/plugin/yaml.test.ts), against the emulator on a local backend; the code it generates (`--out`) previews no
 * change, and the emulator saw no write. Each imported resource is the object its name says (a wrong id would
 * import another object, or none), and its name is the one the exported TypeScript program gives it.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { main } from "../../provider/export/cli";
import type { ImportSpec } from "../../provider/export/import-file";
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

async function ok(method: string, path: string, body?: unknown): Promise<TestResponse["body"]> {
  const r = await emu.call(method, path, body === undefined ? {} : { body });
  if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${r.text}`);
  return r.body;
}

beforeAll(async () => {
  for (const needed of [
    join(PULUMI_BIN, "pulumi-language-yaml"),
    join(root, "dist", "provider", "plugin", "main.js"),
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

  it("pulumi import --file imports every entry as the object its name says; the generated code previews no change", async () => {
    const header = {
      name: "posthog-import-file",
      runtime: "yaml",
      plugins: { providers: [{ name: "posthog", path: join(root, "plugin") }] },
    };
    mkdirSync(projectDir, { recursive: true });
    writeFileSync(join(projectDir, "Pulumi.yaml"), stringifyYaml(header));
    const configFile = await stackWithSettings({ projectDir, stack, stateDir, emu, env });
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

    // The generated code in the program: the next preview changes nothing and writes nothing.
    const code = parseYaml(readFileSync(generated, "utf8")) as { resources: Record<string, unknown> };
    expect(Object.keys(code.resources).sort()).toEqual(resources.map((r) => r.name).sort());
    writeFileSync(join(projectDir, "Pulumi.yaml"), stringifyYaml({ ...header, resources: code.resources }));
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
  }, 600_000);

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
});
