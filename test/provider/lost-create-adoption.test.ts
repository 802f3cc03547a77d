/**
 * A create whose answer was lost adopts only an object that this operation provably made (issue 12, points 2
 * and 3): never the object of another resource of the run, and a lost `create_from_template_json` adopts its
 * dashboard instead of leaving it to be made again. Real HTTP: the emulator answers one POST 500 (PostHog's own error) without
 * applying it, or drops the answer of one it applied; the real provider host.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderHost } from "../../tools/provider-host";
import {
  create,
  createFails,
  serializeProvider,
  startConfiguredHost,
  startTestEmulator,
  type TestEmulator,
  urnOf,
  useProviderHost,
} from "./harness";

let emu: TestEmulator;
let host: ProviderHost;
useProviderHost((e, h) => {
  emu = e;
  host = h;
});

const named = async (path: string, name: string) =>
  ((await emu.api("GET", `${path}?limit=200`)).body as { results: { id: number; name: string }[] }).results
    .filter((x) => x.name === name)
    .map((x) => x.id);
/** The ids of the objects named `name`, or provisionally so: `name` and a create's marker (a create that never saw its answer). */
const namedOrMarked = async (path: string, name: string) =>
  ((await emu.api("GET", `${path}?limit=200`)).body as { results: { id: number; name: string }[] }).results
    .filter((x) => x.name === name || x.name.startsWith(`${name} [pulumi create `))
    .map((x) => x.id);

describe("a lost create never adopts another resource's object", () => {
  it("Project: the second of two Projects named Twin, answered 500 (PostHog's own error: the request had ended) without applying, fails and adopts nothing", async () => {
    const projects = `/api/organizations/${emu.organizationId}/projects/`;
    const first = await create(host, "Project", "twinA", { name: "Twin", __resourceName: "twinA" });
    await emu.control("POST", "/faults", { method: "POST", path: "/projects/$", status: 500, times: 1 });
    const message = await createFails(host, "Project", "twinB", { name: "Twin" });
    expect(message).toMatch(/500/);
    expect(message).toMatch(/nothing was adopted/);
    expect(message).not.toContain(`${first.id}`);
    expect(await named(projects, "Twin")).toEqual([Number(first.id)]);
  });

  it("Dashboard: the same for two Dashboards of one name", async () => {
    const dashboards = `/api/projects/${emu.projectId}/dashboards/`;
    const first = await create(host, "Dashboard", "twinA", { name: "Twin board", __resourceName: "twinA" });
    await emu.control("POST", "/faults", { method: "POST", path: "/dashboards/$", status: 500, times: 1 });
    const message = await createFails(host, "Dashboard", "twinB", { name: "Twin board" });
    expect(message).toMatch(/nothing was adopted/);
    // Its id as a number of its own (the emulator's first dashboards have ids of one digit; the path holds 1001).
    expect(message).not.toMatch(new RegExp(`(?<!\\d)${first.id}(?!\\d)`));
    expect(await named(dashboards, "Twin board")).toEqual([Number(first.id)]);
  });

  it("an existing resource's object (seen by diff) is never adopted either", async () => {
    const dashboards = `/api/projects/${emu.projectId}/dashboards/`;
    const made = await emu.api("POST", dashboards, { name: "Held board" });
    const id = String((made.body as { id: number }).id);
    // the engine diffs the resource that holds it before creating the new one
    const provider = await serializeProvider("Dashboard");
    const held = { name: "Held board", description: "", pinned: false, tags: [], restrictionLevel: 21 };
    await host.diff(
      id,
      urnOf("Dashboard", "held"),
      { ...held, projectId: String(emu.projectId), deleteInsights: false, __provider: provider },
      { ...held, deleteInsights: false, __provider: provider },
    );
    await emu.control("POST", "/faults", { method: "POST", path: "/dashboards/$", status: 500, times: 1 });
    expect(await createFails(host, "Dashboard", "second", { name: "Held board" })).toMatch(
      /nothing was adopted/,
    );
    expect(await named(dashboards, "Held board")).toEqual([Number(id)]);
  });
});

describe("a lost create never takes an object of its name made before it started (the create's window)", () => {
  // PostHog's invite carries nothing a create could mark it with: after a lost answer, only an invite of the address
  // made since the create started (its `created_at`, give or take the clock skew allowed) may be the create's. An
  // invite sent 11 minutes before is not: made by the emulator's own clock, set 11 minutes behind this machine's
  // through its state file (--state-file) and then advanced to it (POST /_emulator/clock).
  let early: TestEmulator;
  let earlyHost: ProviderHost;
  const dir = mkdtempSync(join(tmpdir(), "lost-create-window-"));
  beforeAll(async () => {
    const stateFile = join(dir, "world.json");
    const seed = await startTestEmulator({ stateFile });
    await seed.control("POST", "/clock", { frozen: false }); // a write: the world is saved
    await seed.close();
    const world = JSON.parse(readFileSync(stateFile, "utf8")) as { clockOffsetMs: number };
    writeFileSync(stateFile, JSON.stringify({ ...world, clockOffsetMs: -11 * 60_000 }));
    early = await startTestEmulator({ stateFile });
    earlyHost = await startConfiguredHost(early);
  });
  afterAll(async () => {
    await earlyHost?.close();
    await early?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("Invite, adopt: true of another level: a pending invite of the address sent 11 minutes before; the POST answered 500 (PostHog's own error) without applying: the create did not apply, and that invite is neither taken nor named", async () => {
    const invites = `/api/organizations/${early.organizationId}/invites/`;
    const email = "early@example.com";
    const theirs = (await early.api("POST", invites, { target_email: email, level: 1 })).body as {
      id: string;
      created_at: string;
    };
    await early.control("POST", "/clock", { advanceSeconds: 11 * 60 });
    expect(Date.parse(theirs.created_at)).toBeLessThan(Date.now() - 10 * 60_000);
    await early.control("POST", "/faults", {
      method: "POST",
      path: "/invites/(bulk/)?$",
      status: 500,
      times: 1,
    });
    const message = await createFails(earlyHost, "Invite", "early", {
      targetEmail: email,
      level: 8,
      adopt: true,
    });
    expect(message).toMatch(/500/);
    expect(message).toMatch(/the create did not apply, and nothing was adopted/);
    expect(message).not.toContain(theirs.id);
    const listed = (await early.api("GET", invites)).body as { results: { id: string; level: number }[] };
    expect(listed.results.map((i) => [i.id, i.level])).toEqual([[theirs.id, 1]]);
  });
});

describe("a lost create whose search failed too", () => {
  // The fault soak's finding: the answer to a POST was lost AND the list to look for what it made failed, so the
  // create failed; the engine's retry of the same resource in the same run then POSTed again (a duplicate).
  it("Dashboard: the retry of the same resource takes the dashboard the first try made, no second POST", async () => {
    const dashboards = `/api/projects/${emu.projectId}/dashboards/`;
    await emu.control("POST", "/faults", {
      method: "POST",
      path: "/dashboards/$",
      dropResponse: true,
      times: 1,
    });
    await emu.control("POST", "/faults", {
      method: "GET",
      path: "/dashboards/($|\\?)",
      status: 400,
      times: 1,
    });
    const inputs = { name: "Retried board", __resourceName: "retried" };
    expect(await createFails(host, "Dashboard", "retried", inputs)).toMatch(/400/);
    const made = await namedOrMarked(dashboards, "Retried board");
    expect(made).toHaveLength(1); // the lost POST applied (its dashboard still has the create's provisional name)
    const retry = await create(host, "Dashboard", "retried", inputs);
    expect(retry.id).toBe(String(made[0]));
    expect(await named(dashboards, "Retried board")).toEqual(made);
  });

  it("Project: the same", async () => {
    const projects = `/api/organizations/${emu.organizationId}/projects/`;
    await emu.control("POST", "/faults", {
      method: "POST",
      path: "/projects/$",
      dropResponse: true,
      times: 1,
    });
    await emu.control("POST", "/faults", { method: "GET", path: "/projects/($|\\?)", status: 400, times: 1 });
    const inputs = { name: "Retried project", __resourceName: "retried" };
    expect(await createFails(host, "Project", "retried", inputs)).toMatch(/400/);
    const made = await namedOrMarked(projects, "Retried project");
    expect(made).toHaveLength(1);
    const retry = await create(host, "Project", "retried", inputs);
    expect(retry.id).toBe(String(made[0]));
    expect(await named(projects, "Retried project")).toEqual(made);
  });
});

describe("a lost create from templateJson", () => {
  const template = {
    template_name: "Web KPIs",
    dashboard_description: "",
    dashboard_filters: {},
    tiles: [{ type: "TEXT", body: "KPIs" }],
  };

  it("adopts the dashboard it made (dropped answer): one Web KPIs, the state holds its id", async () => {
    const dashboards = `/api/projects/${emu.projectId}/dashboards/`;
    await emu.control("POST", "/faults", {
      method: "POST",
      path: "/create_from_template_json/$",
      dropResponse: true,
      times: 1,
    });
    const d = await create(host, "Dashboard", "kpis", { name: "Web KPIs", templateJson: template });
    expect(await named(dashboards, "Web KPIs")).toEqual([Number(d.id)]);
    expect(d.outs).toMatchObject({ name: "Web KPIs", templateJson: template });
  });

  it("answered 500 (PostHog's own error: the request had ended) without applying: fails, makes nothing and does not take another resource's Web KPIs", async () => {
    const dashboards = `/api/projects/${emu.projectId}/dashboards/`;
    const before = await named(dashboards, "Web KPIs");
    await emu.control("POST", "/faults", {
      method: "POST",
      path: "/create_from_template_json/$",
      status: 500,
      times: 1,
    });
    const message = await createFails(host, "Dashboard", "kpis2", {
      name: "Web KPIs",
      templateJson: template,
    });
    expect(message).toMatch(/nothing was adopted/);
    expect(await named(dashboards, "Web KPIs")).toEqual(before);
  });
});

// Issue 49, item 6: what the proof costs and where its name goes. Each create names its object provisionally (the
// declared name and a marker with its nonce, within the API's limit) and renames it with one PATCH once it has the
// answer; the emulator refuses a name over the limit and a lone surrogate, as PostHog does.
describe("provisional names", () => {
  type Held = { hits: number; held: { method: string; path: string; body: Record<string, unknown> }[] };
  /** Holds the next POST to `path`, runs `create`, and returns the body that POST carried and the create's result. */
  async function postedBody<T>(path: string, create: () => Promise<T>) {
    const hold = (await emu.control("POST", "/holds", { method: "POST", path, times: 1 })) as { id: string };
    const pending = create();
    let body: Record<string, unknown> | undefined;
    await expect
      .poll(
        async () => {
          body = ((await emu.control("GET", `/holds/${hold.id}`)) as Held).held[0]?.body;
          return body !== undefined;
        },
        { timeout: 30_000 },
      )
      .toBe(true);
    await emu.control("POST", `/holds/${hold.id}/release`, {});
    return { body: body as Record<string, unknown>, result: await pending };
  }
  const writes = async () =>
    (await emu.requests())
      .filter((r) => r.method !== "GET")
      .map((r) => `${r.method} ${r.path.replace(/\d+\/$/, ":id/")}`);
  const MARKER = / \[pulumi create [0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{12}\]$/;

  it("Dashboard: one POST with the name cut to fit 400 characters with the marker (never inside a surrogate pair), one PATCH to the declared name", async () => {
    const dashboards = `/api/projects/${emu.projectId}/dashboards/`;
    // 400 UTF-16 code units, a surrogate pair at the place the provisional name is cut (400 − 47 = 353)
    const name = `${"a".repeat(352)}\u{1F600}${"b".repeat(46)}`;
    expect(name).toHaveLength(400);
    await emu.control("DELETE", "/requests");
    const { body, result } = await postedBody("/dashboards/$", () =>
      create(host, "Dashboard", "long", { name, __resourceName: "long" }),
    );
    const posted = String(body.name);
    expect(posted).toMatch(MARKER);
    expect(posted.length).toBeLessThanOrEqual(400);
    expect(posted.startsWith(`${"a".repeat(352)} [pulumi create `)).toBe(true); // the pair dropped whole
    expect(result.outs.name).toBe(name);
    expect(await named(dashboards, name)).toEqual([Number(result.id)]);
    expect(await writes()).toEqual([`POST ${dashboards}`, `PATCH ${dashboards}:id/`]);
  });

  it("Dashboard from templateJson: the template's name is replaced by the provisional name, and the one PATCH gives the declared name", async () => {
    const dashboards = `/api/projects/${emu.projectId}/dashboards/`;
    const template = {
      template_name: "From template",
      dashboard_description: "",
      dashboard_filters: {},
      tiles: [{ type: "TEXT", body: "Hi" }],
    };
    await emu.control("DELETE", "/requests");
    const { body, result } = await postedBody("/create_from_template_json/$", () =>
      create(host, "Dashboard", "templated", { name: "Templated", templateJson: template }),
    );
    expect(String((body.template as { template_name: string }).template_name)).toMatch(
      /^Templated \[pulumi create /,
    );
    expect(result.outs).toMatchObject({ name: "Templated", templateJson: template });
    expect(await named(dashboards, "Templated")).toEqual([Number(result.id)]);
    expect(await writes()).toEqual([
      `POST ${dashboards}create_from_template_json/`,
      `PATCH ${dashboards}:id/`,
    ]);
  });

  it("Project: one POST with the name cut to fit 200 characters, one PATCH to the declared name", async () => {
    const projects = `/api/organizations/${emu.organizationId}/projects/`;
    const name = `P${"r".repeat(199)}`;
    await emu.control("DELETE", "/requests");
    const { body, result } = await postedBody("/projects/$", () => create(host, "Project", "long", { name }));
    expect(String(body.name)).toMatch(MARKER);
    expect(String(body.name)).toHaveLength(200);
    expect(result.outs.name).toBe(name);
    expect(await named(projects, name)).toEqual([Number(result.id)]);
    expect(await writes()).toEqual([`POST ${projects}`, `PATCH ${projects}:id/`]);
  });
});
