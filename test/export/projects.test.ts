/**
 * Which projects `pulumi-posthog export` covers (issue 21), against the emulator over real HTTP: every project the
 * key can read unless `--project` narrows it (POSTHOG_PROJECT_ID does not), a project the key may not read left
 * out and named in the summary with PostHog's reason (a key scoped to some projects: the organization's list is
 * refused to it, so the projects come from `/api/projects/`), a scope the key lacks said once; and what the
 * generated package.json depends on for pulumi-posthog (provider/apps/export/package-source.ts), for each way npm
 * records an install.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { packageSource } from "../../provider/apps/export/package-source";
import { main } from "../../provider/cli";
import { startTestEmulator, type TestEmulator } from "../support/emulator";

const root = join(__dirname, "..", "..");
const work = mkdtempSync(join(tmpdir(), "export-projects-"));
let emu: TestEmulator;
let web: number;
let privateId: number;

async function runExport(args: string[], key = emu.apiKey, env: Record<string, string> = {}) {
  const lines: string[] = [];
  const code = await main(["export", ...args], {
    stderr: (l) => lines.push(l),
    stdout: (l) => lines.push(l),
    env: { POSTHOG_HOST: emu.url, POSTHOG_API_KEY: key, ...env },
    cwd: work,
  });
  return { code, lines };
}

/** The project keys → ids and the dashboard keys of an exported stack file. */
function exported(dir: string): { projects: Record<string, number>; dashboards: string[] } {
  const config = parseYaml(readFileSync(join(dir, "Pulumi.dev.yaml"), "utf8")).config;
  const projects = config["posthog-org:projects"] ?? {};
  return {
    projects: Object.fromEntries(
      Object.entries(projects as Record<string, { id: number }>).map(([k, v]) => [k, v.id]),
    ),
    dashboards: Object.keys(config["posthog-org:dashboards"] ?? {}).sort(),
  };
}

beforeAll(async () => {
  emu = await startTestEmulator();
  const create = async (path: string, body: unknown) => {
    const r = await emu.call("POST", path, { body });
    if (r.status !== 201) throw new Error(`POST ${path} → ${r.status} ${r.text}`);
    return r.body.id as number;
  };
  web = await create(`${emu.org}/projects/`, { name: "Web" });
  privateId = await create(`${emu.org}/projects/`, { name: "Private" });
  await create(`${emu.project}/dashboards/`, { name: "Default board" });
  await create(`/api/projects/${web}/dashboards/`, { name: "Web board" });
  await create(`/api/projects/${privateId}/dashboards/`, { name: "Private board" });
});

afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

describe("the projects an export covers", () => {
  it("every project the key can read, though POSTHOG_PROJECT_ID is set (it says so)", async () => {
    const dir = join(work, "all");
    const r = await runExport(["--out", dir], emu.apiKey, { POSTHOG_PROJECT_ID: String(emu.projectId) });
    expect(r.code, r.lines.join("\n")).toBe(0);
    expect(exported(dir)).toEqual({
      projects: { "default-project": emu.projectId, web, private: privateId },
      dashboards: ["default-board", "private-board", "web-board"],
    });
    expect(r.lines).toContain(
      `  every project the key can read (POSTHOG_PROJECT_ID=${emu.projectId} does not narrow the export: ` +
        `pass --project ${emu.projectId} for that one only)`,
    );
    expect(r.lines).toContain("Skipped: nothing");
  });

  it("--project narrows it to the projects named", async () => {
    const dir = join(work, "narrowed");
    const r = await runExport(["--out", dir, "--project", String(web)]);
    expect(r.code).toBe(0);
    expect(exported(dir)).toEqual({ projects: { web }, dashboards: ["web-board"] });
    expect(r.lines.some((l) => l.includes("does not narrow"))).toBe(false);
  });

  it("a key scoped to two projects: those two, the third named as skipped with PostHog's reason", async () => {
    const scoped = await emu.createKey({ projects: [emu.projectId, web] });
    const dir = join(work, "scoped");
    const r = await runExport(["--out", dir], scoped);
    expect(r.code, r.lines.join("\n")).toBe(0);
    expect(exported(dir)).toEqual({
      projects: { "default-project": emu.projectId, web },
      dashboards: ["default-board", "web-board"],
    });
    const skipped = r.lines.slice(r.lines.findIndex((l) => l.startsWith("Skipped (")));
    expect(skipped).toContain(
      `  projects: project ${privateId} "Private": the API key may not read it (403: API key does not have ` +
        `access to the requested project: ID ${privateId}.)`,
    );
    // The organization-level kinds are refused to such a key: each is named with PostHog's reason, not a scope.
    expect(skipped).toContain(
      "  domains: all domains: the API key may not read them (403: API keys with scoped projects are only " +
        "supported on project-based endpoints.)",
    );
    expect(r.lines).toContain(
      "  projects: 3 (the organization's list is refused to this key: API keys with scoped projects are only " +
        "supported on project-based endpoints.; read from /api/projects/)",
    );
    expect(readFileSync(join(dir, "index.ts"), "utf8")).not.toContain("Private");
  });

  it("a key without dashboard:read: the dashboards skipped once, naming the scope; the projects exported", async () => {
    const key = await emu.createKey({ scopes: ["organization:read", "project:read"] });
    const dir = join(work, "no-dashboards");
    const r = await runExport(["--out", dir], key);
    expect(r.code).toBe(0);
    expect(exported(dir).projects).toEqual({ "default-project": emu.projectId, web, private: privateId });
    const dashboards = r.lines.filter((l) => l.startsWith("  dashboards: all dashboards:"));
    expect(dashboards).toEqual([
      "  dashboards: all dashboards: the API key may not read them (403; it needs the scope dashboard:read: " +
        "API key missing required scope 'dashboard:read')",
    ]);
  });
});

describe("a dashboard detail answering 404 (issue 49, item 2)", () => {
  /** The id of the dashboard named `name` in the default project. */
  const idOf = async (name: string) => {
    const list = await emu.call("GET", `${emu.project}/dashboards/`);
    return (list.body.results as { id: number; name: string }[]).find((d) => d.name === name)?.id as number;
  };

  it("a dashboard still listed: the export fails naming it (exit 1), no program without it", async () => {
    const id = await idOf("Default board");
    const armed = await emu.control("POST", "/faults", {
      method: "GET",
      path: `^/api/projects/${emu.projectId}/dashboards/${id}/$`,
      status: 404,
    });
    expect(armed.status).toBe(201);
    try {
      const dir = join(work, "listed-404");
      const r = await runExport(["--out", dir, "--project", String(emu.projectId)]);
      expect(r.code).toBe(1);
      expect(r.lines.at(-1)).toMatch(
        new RegExp(
          `^pulumi-posthog export failed: Dashboard ${id} "Default board" of project ${emu.projectId} is listed, but reading it answered 404 \\(GET /api/projects/${emu.projectId}/dashboards/${id}/ → 404 .*\\); it is still listed, so it was not deleted: check that the key \\(POSTHOG_API_KEY\\) may read it, then run again \\(see docs/troubleshooting/commands\\.md#the-export-command\\)$`,
        ),
      );
    } finally {
      await emu.control("DELETE", "/faults");
    }
  });

  it("a dashboard soft-deleted between the list and its detail: left out, said so, the rest exported", async () => {
    const made = await emu.call("POST", `${emu.project}/dashboards/`, {
      body: { name: "Deleted meanwhile" },
    });
    expect(made.status).toBe(201);
    const id = made.body.id as number;
    // Its detail read waits until it is deleted, then is answered (404: PostHog does not serve a deleted dashboard).
    const hold = await emu.control("POST", "/holds", {
      method: "GET",
      path: `^/api/projects/${emu.projectId}/dashboards/${id}/$`,
    });
    const dir = join(work, "deleted-meanwhile");
    const run = runExport(["--out", dir, "--project", String(emu.projectId)]);
    for (;;) {
      const held = await emu.control("GET", `/holds/${hold.body.id}`);
      if (held.body.held.length === 1) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const deleted = await emu.call("PATCH", `${emu.project}/dashboards/${id}/`, { body: { deleted: true } });
    expect(deleted.status).toBe(200);
    await emu.control("DELETE", `/holds/${hold.body.id}`);
    const r = await run;
    expect(r.code, r.lines.join("\n")).toBe(0);
    expect(r.lines).toContain(
      `  dashboards: dashboard ${id} "Deleted meanwhile": soft-deleted while exporting (PostHog answered 404, and the list no longer holds it)`,
    );
    expect(exported(dir).dashboards).toEqual(["default-board"]);
  });
});

describe("the generated package.json installs pulumi-posthog from where it came", () => {
  it("from this checkout: a file: link to it, relative to the exported directory, with a note", async () => {
    const dir = join(work, "checkout");
    const r = await runExport(["--out", dir, "--only", "members"]);
    expect(r.code).toBe(0);
    const spec = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).dependencies["pulumi-posthog"];
    expect(spec).toBe(`file:${relative(dir, root)}`);
    expect(resolve(dir, spec.slice("file:".length))).toBe(resolve(root));
    expect(r.lines).toContain(
      `  package.json: "pulumi-posthog": "${spec}" (this checkout of the repository)`,
    );
    expect(r.lines.some((l) => l.startsWith("  note: package.json links this checkout"))).toBe(true);
  });

  /** A project that installed pulumi-posthog into node_modules, with these files beside node_modules. */
  function installed(name: string, files: Record<string, unknown>, own: Record<string, unknown> = {}) {
    const project = join(work, "installs", name);
    const pkg = join(project, "node_modules", "pulumi-posthog");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(
      join(pkg, "package.json"),
      JSON.stringify({ name: "pulumi-posthog", version: "0.1.0", ...own }),
    );
    for (const [file, content] of Object.entries(files))
      writeFileSync(join(project, file), JSON.stringify(content));
    return { project, pkg };
  }

  it.each([
    [
      "a tarball (npm install ../pulumi-posthog-0.1.0.tgz): its path, now relative to the exported directory",
      { "package.json": { dependencies: { "pulumi-posthog": "file:../pulumi-posthog-0.1.0.tgz" } } },
      {},
      () => "file:../../pulumi-posthog-0.1.0.tgz",
    ],
    [
      "git: the URL as it is",
      {
        "package.json": {
          devDependencies: { "pulumi-posthog": "github:pulumi-posthog/pulumi-posthog#v0.1.0" },
        },
      },
      {},
      () => "github:pulumi-posthog/pulumi-posthog#v0.1.0",
    ],
    [
      "only the lock file knows: its resolved source",
      {
        "package.json": {},
        "package-lock.json": {
          packages: {
            "node_modules/pulumi-posthog": { resolved: "file:/srv/releases/pulumi-posthog-0.1.0.tgz" },
          },
        },
      },
      {},
      (out: string) => `file:${relative(out, "/srv/releases/pulumi-posthog-0.1.0.tgz")}`,
    ],
    [
      "an older npm's _resolved in the installed package.json",
      { "package.json": {} },
      { _resolved: "git+https://github.com/pulumi-posthog/pulumi-posthog.git#0123abc" },
      () => "git+https://github.com/pulumi-posthog/pulumi-posthog.git#0123abc",
    ],
  ])("%s", (name, files, own, expected) => {
    const { project, pkg } = installed(name.replace(/\W+/g, "-").slice(0, 30), files, own);
    // The exported directory beside the project's package.json, as `pulumi-posthog export --out posthog-org`.
    const out = join(project, "posthog-org");
    const source = packageSource(out, pkg);
    expect(source.spec).toBe(expected(out));
    expect(source.note).toBeUndefined();
  });

  it("nothing says where it came from: the git tag of this version, with a note saying what to check", () => {
    const { project, pkg } = installed("unknown", { "package.json": {} });
    const source = packageSource(join(project, "out"), pkg);
    expect(source.spec).toMatch(/^github:pulumi-posthog\/pulumi-posthog#v\d+\.\d+\.\d+/);
    expect(source.note).toContain("put the tarball path or git URL you installed from there");
  });
});
