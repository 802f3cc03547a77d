/**
 * Issue 12, points 1 and 7, through the REAL dynamic-provider host over gRPC against the emulator:
 * - a refresh (Read) reports an object gone only when PostHog says that object is gone; with a wrong
 *   organization id, or a host answering 404 to everything, every read fails naming the setting to check, where
 *   it came from and the host, and none returns id "" (which the engine would drop from the state);
 * - the first operation of a provider process proves the organization and the project exist and the key reaches
 *   them, so a wrong project id fails before any write; the proof costs one request per process.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderHost, startProviderHost } from "../../tools/provider-host";
import {
  create,
  destroy,
  failure,
  type Managed,
  repoRoot,
  stackConfigOf,
  startConfiguredHost,
  startTestEmulator,
  type TestEmulator,
} from "./harness";

let emu: TestEmulator;
let good: ProviderHost;
const hosts: ProviderHost[] = [];
let managed: Managed[] = [];
let notPostHog: ReturnType<typeof createServer>;
let notPostHogUrl: string;

const requests = () => emu.requests();
const org = () => `/api/organizations/${emu.organizationId}`;

/** A provider host (a new process, as the engine starts per run) configured with `overrides` over the good config. */
async function hostWith(overrides: Record<string, string>): Promise<ProviderHost> {
  const host = await startProviderHost({ cwd: repoRoot, project: "posthog-test", deadlineMs: 30_000 });
  hosts.push(host);
  await host.configure({ ...stackConfigOf(emu), ...overrides }, ["posthog:apiKey"]);
  return host;
}

beforeAll(async () => {
  emu = await startTestEmulator();
  good = await startConfiguredHost(emu);
  hosts.push(good);
  const exports = (await emu.api("GET", `${org()}/batch_exports/`)).body as { results: { id: string }[] };
  managed = [
    await create(good, "Domain", "domain", { domain: "reach.example.com" }),
    await create(good, "Invite", "invite", { targetEmail: "reach@example.com" }),
    await create(good, "Member", "member", {
      email: "mia.member@example.com",
      level: "member",
      retainOnDelete: true,
    }),
    await create(good, "Project", "project", { name: "Reach" }),
    await create(good, "Dashboard", "dashboard", { name: "Reach board" }),
    await create(good, "BatchExportPause", "pause", { batchExportId: exports.results[0]?.id ?? "" }),
  ];
  // What a mistyped host may answer: 404 to everything, in no PostHog shape.
  notPostHog = createServer((_req, res) => {
    res.writeHead(404, { "content-type": "text/html" });
    res.end("<html><body><h1>404 Not Found</h1></body></html>");
  });
  await new Promise<void>((resolve) => notPostHog.listen(0, "127.0.0.1", resolve));
  notPostHogUrl = `http://127.0.0.1:${(notPostHog.address() as { port: number }).port}`;
}, 60_000);

afterAll(async () => {
  for (const r of [...managed].reverse()) await destroy(good, r).catch(() => {});
  await Promise.all(hosts.map((h) => h.close()));
  await new Promise<void>((resolve) => notPostHog.close(() => resolve()));
  await emu.close();
});

describe("refresh with wrong settings keeps the state (issue 12, point 1)", () => {
  it("a wrong organization id: every read fails naming posthog:organizationId, the id and the host", async () => {
    const other = randomUUID();
    const wrong = await hostWith({ "posthog:organizationId": other });
    await emu.control("DELETE", "/requests");
    for (const r of managed) {
      const message = await failure(wrong.read(r.id, r.urn, r.outs, r.inputs));
      expect(message, r.name).toContain("Organization not found.");
      expect(message, r.name).toContain(
        `organization ${other} (set by the stack config posthog:organizationId) was not found at ${emu.url}`,
      );
    }
    // Nor is a delete "done".
    const domain = managed[0] as Managed;
    expect(await failure(wrong.delete(domain.id, domain.urn, domain.outs))).toContain(
      "Organization not found.",
    );
    // The access check failed once, definitely: no object was even read, or deleted.
    expect((await requests()).map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      `GET /api/organizations/${other}/projects/${emu.projectId}/ 404`,
    ]);
    expect((await emu.api("GET", `${org()}/domains/${domain.id}/`)).status).toBe(200);
  });

  it("a host answering 404 to everything: every read fails naming posthog:host; no dashboard is marked deleted", async () => {
    const wrong = await hostWith({ "posthog:host": notPostHogUrl });
    for (const r of managed) {
      const message = await failure(wrong.read(r.id, r.urn, r.outs, r.inputs));
      expect(message, r.name).toContain("the answer is not PostHog's");
      expect(message, r.name).toContain(
        `check the host ${notPostHogUrl}, set by the stack config posthog:host`,
      );
    }
  });

  it("the same settings read every object (the control): only PostHog's 'this object is gone' is gone", async () => {
    const fresh = await hostWith({});
    for (const r of managed) expect((await fresh.read(r.id, r.urn, r.outs, r.inputs)).id, r.name).toBe(r.id);
    const domain = managed[0] as Managed;
    const dashboard = managed[4] as Managed;
    expect((await emu.api("DELETE", `${org()}/domains/${domain.id}/`)).status).toBe(204);
    expect((await fresh.read(domain.id, domain.urn, domain.outs, domain.inputs)).id).toBe("");
    const soft = await emu.api("PATCH", `/api/projects/${emu.projectId}/dashboards/${dashboard.id}/`, {
      deleted: true,
    });
    expect(soft.status).toBe(200);
    const read = await fresh.read(dashboard.id, dashboard.urn, dashboard.outs, dashboard.inputs);
    expect(read.props.deleted).toBe(true);
    managed = managed.filter((r) => r !== domain);
  });
});

describe("the first operation proves organization and project before any write (issue 12, point 7)", () => {
  it("a wrong project id fails the first create, and every later one, with no write at all", async () => {
    const wrong = await hostWith({ "posthog:projectId": "99999" });
    await emu.control("DELETE", "/requests");
    const exports = (await emu.api("GET", `${org()}/batch_exports/`)).body as { results: { id: string }[] };
    await emu.control("DELETE", "/requests");
    const attempts = [
      wrong.create("urn:pulumi:test::posthog-test::pulumi-nodejs:dynamic/posthog:Project::p", {
        name: "Half applied",
        __provider: (managed.find((r) => r.name === "Project") as Managed).provider,
      }),
      wrong.create("urn:pulumi:test::posthog-test::pulumi-nodejs:dynamic/posthog:BatchExportPause::b", {
        batchExportId: exports.results[1]?.id ?? "",
        paused: true,
        __provider: (managed.find((r) => r.name === "BatchExportPause") as Managed).provider,
      }),
    ];
    for (const attempt of attempts) {
      const message = await failure(attempt);
      expect(message).toContain(
        `project 99999 (set by the stack config posthog:projectId) is not a project of organization ${emu.organizationId}`,
      );
      expect(message).toContain("nothing was written");
    }
    const log = await requests();
    expect(log.filter((r) => r.method !== "GET")).toEqual([]);
    expect(log.map((r) => `${r.method} ${r.path}`)).toEqual([`GET ${org()}/projects/99999/`]);
  });

  it("costs one request per provider process: the first operation's check, none after", async () => {
    const fresh = await hostWith({});
    await emu.control("DELETE", "/requests");
    const [project, dashboard] = [
      managed.find((r) => r.name === "Project"),
      managed.find((r) => r.name === "Dashboard"),
    ];
    for (const r of [project, dashboard, project] as Managed[])
      await fresh.read(r.id, r.urn, r.outs, r.inputs);
    const log = (await requests()).map((r) => `${r.method} ${r.path}`);
    expect(log).toEqual([
      `GET ${org()}/projects/${emu.projectId}/`, // the check
      `GET ${org()}/projects/${(project as Managed).id}/`,
      // a refresh reads dashboards from their project's list; this one, soft-deleted above, is not in it: one GET
      `GET /api/projects/${emu.projectId}/dashboards/`,
      `GET /api/projects/${emu.projectId}/dashboards/${(dashboard as Managed).id}/`,
      `GET ${org()}/projects/${(project as Managed).id}/`,
    ]);
  });
});
