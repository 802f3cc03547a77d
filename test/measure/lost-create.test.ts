/**
 * A create whose write is applied but whose response is lost (the soak's duplicate finding): Dashboard and
 * Project adopt the object that create made, so the user's next `up` does not create a second one. Through
 * the real provider host; the emulator drops the response of exactly one POST.
 */
import { describe, expect, it } from "vitest";
import type { ProviderHost } from "../../tools/provider-host";
import {
  create,
  failure,
  serializeProvider,
  type TestEmulator,
  urnOf,
  useProviderHost,
} from "../provider/harness";

let emu: TestEmulator;
let host: ProviderHost;
useProviderHost((e, h) => {
  emu = e;
  host = h;
});

const count = async (path: string, name: string) =>
  ((await emu.api("GET", `${path}?limit=200`)).body as { results: { name: string }[] }).results.filter(
    (x) => x.name === name,
  ).length;

describe("a create whose response is lost after the write applied", () => {
  it("Dashboard adopts the dashboard it made: one object, the id in the state is the server's", async () => {
    const dashboards = `/api/projects/${emu.projectId}/dashboards/`;
    await emu.control("POST", "/faults", {
      method: "POST",
      path: "/dashboards/$",
      dropResponse: true,
      times: 1,
    });
    const d = await create(host, "Dashboard", "lost", { name: "Lost answer" });
    expect(await count(dashboards, "Lost answer")).toBe(1);
    expect((await emu.api("GET", `${dashboards}${d.id}/`)).body).toMatchObject({ name: "Lost answer" });
  });

  it("Project adopts the project it made", async () => {
    const projects = `/api/organizations/${emu.organizationId}/projects/`;
    await emu.control("POST", "/faults", {
      method: "POST",
      path: "/projects/$",
      dropResponse: true,
      times: 1,
    });
    const p = await create(host, "Project", "lost", { name: "Lost project" });
    expect(await count(projects, "Lost project")).toBe(1);
    expect(p.outs).toMatchObject({ name: "Lost project" });
  });

  it("a create that did not apply (500) still fails: nothing is adopted", async () => {
    await emu.control("POST", "/faults", { method: "POST", path: "/dashboards/$", status: 500, times: 1 });

    const urn = urnOf("Dashboard", "not-applied");
    const provider = await serializeProvider("Dashboard");
    const checked = await host.check(urn, {}, { name: "Never made", __provider: provider });
    expect(await failure(host.create(urn, checked.inputs))).toMatch(/500/);
    expect(await count(`/api/projects/${emu.projectId}/dashboards/`, "Never made")).toBe(0);
  });
});
