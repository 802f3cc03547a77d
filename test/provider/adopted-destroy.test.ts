/**
 * What destroy does with an object the provider did not create (issue 12, point 4): adopted objects are left as
 * they were found unless an input says to delete them; objects the provider created are deleted as before.
 * Real HTTP against the emulator, through the real provider host.
 */
import { describe, expect, it } from "vitest";
import type { ProviderHost } from "../../tools/provider-host";
import { create, destroy, type TestEmulator, useProviderHost } from "./harness";

let emu: TestEmulator;
let host: ProviderHost;
useProviderHost((e, h) => {
  emu = e;
  host = h;
});

const org = () => `/api/organizations/${emu.organizationId}`;
const dashboards = () => `/api/projects/${emu.projectId}/dashboards`;
/** A project made outside Pulumi: its id. */
const newProject = async (name: string) =>
  String(((await emu.api("POST", `${org()}/projects/`, { name })).body as { id: number }).id);

describe("Project", () => {
  it("an adopted project (projectId) is kept on destroy", async () => {
    const id = await newProject("Found project");
    const p = await create(host, "Project", "found", { name: "Found project", projectId: id });
    expect(p.outs.adopted).toBe(true);
    await emu.control("DELETE", "/requests");
    await destroy(host, p);
    const calls = await emu.requests();
    expect(calls.filter((c) => c.method !== "GET")).toEqual([]);
    expect((await emu.api("GET", `${org()}/projects/${id}/`)).status).toBe(200);
  });

  it("deleteAdoptedOnDestroy: true deletes the adopted project", async () => {
    const id = await newProject("Found, to delete");
    const p = await create(host, "Project", "found2", {
      name: "Found, to delete",
      projectId: id,
      deleteAdoptedOnDestroy: true,
    });
    await destroy(host, p);
    expect((await emu.api("GET", `${org()}/projects/${id}/`)).status).toBe(404);
  });

  it("a project the provider created is deleted; state without the marker (written before it) keeps it", async () => {
    const made = await create(host, "Project", "made", { name: "Made here" });
    expect(made.outs.adopted).toBe(false);
    await destroy(host, made);
    expect((await emu.api("GET", `${org()}/projects/${made.id}/`)).status).toBe(404);

    const old = await create(host, "Project", "old", { name: "Old state" });
    const { adopted: _, ...outs } = old.outs;
    await destroy(host, { ...old, outs });
    expect((await emu.api("GET", `${org()}/projects/${old.id}/`)).status).toBe(200);
  });
});

describe("Dashboard", () => {
  it("an adopted dashboard (dashboardId) is kept on destroy, not soft-deleted", async () => {
    const id = ((await emu.api("POST", `${dashboards()}/`, { name: "Found board" })).body as { id: number })
      .id;
    const d = await create(host, "Dashboard", "found", { name: "Found board", dashboardId: id });
    await destroy(host, d);
    const live = await emu.api("GET", `${dashboards()}/${id}/`);
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({ deleted: false });
  });
});

describe("Member", () => {
  it("destroy keeps the person and restores the level they had when Pulumi took them over", async () => {
    await emu.control("POST", "/users", { email: "kept@example.com", level: 1 });
    const m = await create(host, "Member", "kept", { email: "kept@example.com", level: "admin" });
    expect(m.outs).toMatchObject({ level: 8, levelBefore: 1 });
    await destroy(host, m);
    const members = (await emu.api("GET", `${org()}/members/?limit=200`)).body as {
      results: { level: number; user: { email: string } }[];
    };
    expect(members.results.find((x) => x.user.email === "kept@example.com")?.level).toBe(1);
  });
});

describe("Invite and Domain", () => {
  it("an adopted invite is kept on destroy", async () => {
    const sent = await emu.api("POST", `${org()}/invites/`, { target_email: "found@example.com", level: 1 });
    const id = (sent.body as { id: string }).id;
    const i = await create(host, "Invite", "found", { targetEmail: "found@example.com", adopt: true });
    expect(i.id).toBe(id);
    await destroy(host, i);
    const list = (await emu.api("GET", `${org()}/invites/?limit=200`)).body as { results: { id: string }[] };
    expect(list.results.map((x) => x.id)).toContain(id);
  });

  it("an adopted domain is kept on destroy", async () => {
    const made = await emu.api("POST", `${org()}/domains/`, { domain: "found.example.com" });
    const id = (made.body as { id: string }).id;
    const d = await create(host, "Domain", "found", { domain: "found.example.com", adopt: true });
    expect(d.id).toBe(id);
    await destroy(host, d);
    expect((await emu.api("GET", `${org()}/domains/${id}/`)).status).toBe(200);
  });
});

describe("BatchExportPause", () => {
  it("with pausedBefore unknown (not in the state), destroy leaves the export as it is", async () => {
    const exports = `${org()}/batch_exports/`;
    const all = (await emu.api("GET", exports)).body as { results: { id: string; paused: boolean }[] };
    const target = all.results.find((b) => !b.paused);
    if (!target) throw new Error("the seed has no running batch export");
    const b = await create(host, "BatchExportPause", "unknown", { batchExportId: target.id, paused: true });
    expect(b.outs.pausedBefore).toBe(false);
    const { pausedBefore: _, ...outs } = b.outs;
    await emu.control("DELETE", "/requests");
    await destroy(host, { ...b, outs });
    const calls = await emu.requests();
    expect(calls.filter((c) => c.method !== "GET")).toEqual([]);
    expect(((await emu.api("GET", `${exports}${target.id}/`)).body as { paused: boolean }).paused).toBe(true);
  });
});
