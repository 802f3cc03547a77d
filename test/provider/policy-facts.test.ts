/**
 * Issue 49, item 1: a DashboardSharing's check records its dashboard's name and tags in the checked inputs
 * (`_policy`, provider/framework/policy-facts.ts), so that the policy pack's resource policy (posthog-sharing-allow-list)
 * judges the sharing before the engine writes it, even under `pulumi up --skip-preview`. Through the real
 * dynamic-provider host: what this run plans for a dashboard it declares (whether the sharing is on or off, so that
 * turning it on or off changes no fact), nothing for another dashboard or an unknown id; never a request, and never a
 * byte of it sent to PostHog. The pack through the real CLI: test/stack/policy-pack.test.ts.
 */
import { describe, expect, it } from "vitest";
import { UNKNOWN } from "../../provider/framework/values";
import type { ProviderHost } from "../../tools/provider-host";
import { create, plan, serializeProvider, type TestEmulator, urnOf, useProviderHost } from "./harness";

let emu: TestEmulator;
let host: ProviderHost;
useProviderHost((e, h) => {
  emu = e;
  host = h;
});

/** The API requests since the last call (method and path). */
async function since(): Promise<string[]> {
  const log = await emu.requests();
  await emu.control("DELETE", "/requests");
  return log.map((r) => `${r.method} ${r.path}`);
}

/** Check of a new DashboardSharing with `inputs`: its checked inputs. */
async function checkSharing(name: string, inputs: Record<string, unknown>) {
  const provider = await serializeProvider("DashboardSharing");
  const r = await host.check(urnOf("DashboardSharing", name), {}, { ...inputs, __provider: provider });
  expect(r.failures).toEqual([]);
  return r.inputs as Record<string, unknown>;
}

describe("DashboardSharing's policy facts (real host over gRPC)", () => {
  it("a dashboard this run created, then renamed in its plan: the planned name and tags, with no request", async () => {
    const d = await create(host, "Dashboard", "sales", { name: "Sales", tags: ["team"] });
    await since();
    const created = await checkSharing("sales", { dashboardId: Number(d.id) });
    expect(created._policy).toEqual({ dashboard: { id: Number(d.id), name: "Sales", tags: ["team"] } });
    const off = await checkSharing("sales", { dashboardId: Number(d.id), enabled: false });
    expect(off._policy).toEqual(created._policy);
    expect(await since()).toEqual([]);
    // A preview that renames it (check and diff, no update): the sharing is judged by what the run leaves.
    const { diff } = await plan(host, d, { name: "Public KPIs", tags: ["public"] });
    expect(diff.changes).toBe(true);
    const renamed = await checkSharing("sales", { dashboardId: Number(d.id) });
    expect(renamed._policy).toEqual({
      dashboard: { id: Number(d.id), name: "Public KPIs", tags: ["public"] },
    });
    expect(await since()).toEqual([]);
  });

  it("a dashboard the run does not declare: no facts (the pack knows it by its id alone); never a request", async () => {
    const made = await emu.api("POST", `/api/projects/${emu.projectId}/dashboards/`, {
      name: "Made by hand",
      tags: ["public"],
    });
    const id = (made.body as { id: number }).id;
    await since();
    expect((await checkSharing("hand", { dashboardId: id }))._policy).toBeUndefined();
    expect(await since()).toEqual([]);
  });

  it("a sharing whose dashboard's id is unknown (a preview of a dashboard the run creates): the dashboards the run creates, as candidates (new to the stack, or replaced)", async () => {
    const provider = await serializeProvider("Dashboard");
    const checkDashboard = async (
      name: string,
      olds: Record<string, unknown>,
      news: Record<string, unknown>,
    ) => {
      const r = await host.check(urnOf("Dashboard", name), olds, {
        ...news,
        __provider: provider,
        __resource: { name, stack: "posthog-test/test" },
      });
      expect(r.failures).toEqual([]);
    };
    const project = String(emu.projectId);
    const stored = (name: string) => ({ name, projectId: project, __provider: provider });
    await checkDashboard("new-one", {}, { name: "New one", tags: ["x"] });
    await checkDashboard("kept", stored("Kept"), { name: "Kept, renamed", projectId: project });
    await checkDashboard("moved", stored("Moved"), { name: "Moved", projectId: "9999" });
    const checked = await checkSharing("unknown", { dashboardId: UNKNOWN });
    expect(checked._policy).toEqual({
      candidates: expect.arrayContaining([
        { name: "New one", tags: ["x"] },
        { name: "Moved", tags: [] },
      ]),
    });
    expect((checked._policy as { candidates: unknown[] }).candidates).not.toContainEqual(
      expect.objectContaining({ name: "Kept, renamed" }),
    );
    expect(await since()).toEqual([]);
  });

  it("create never sends the facts (the sharing's PATCH carries `enabled` alone); a refresh keeps them", async () => {
    const d = await create(host, "Dashboard", "kpis", { name: "KPIs" });
    const urn = urnOf("DashboardSharing", "kpis");
    const inputs = await checkSharing("kpis", { dashboardId: Number(d.id) });
    expect(inputs._policy).toBeDefined();
    // The PATCH is held until its body has been read from the hold, then let go.
    const path = `/api/projects/${emu.projectId}/dashboards/${d.id}/sharing/`;
    const { id: hold } = (await emu.control("POST", "/holds", { method: "PATCH", path })) as { id: string };
    const made = host.create(urn, inputs);
    let held: { body: unknown }[] = [];
    while (held.length === 0) {
      held = ((await emu.control("GET", `/holds/${hold}`)) as { held: { body: unknown }[] }).held;
      if (held.length === 0) await new Promise((r) => setTimeout(r, 20));
    }
    await emu.control("DELETE", `/holds/${hold}`);
    expect(held.map((h) => h.body)).toEqual([{ enabled: true }]);
    // Kept in the outputs (as `__resource` is), so that a refresh, which runs no check, reports them back as they
    // were and changes no input of its own; the next check records them anew.
    const outs = (await made).outs;
    expect(outs._policy).toEqual(inputs._policy);
    const read = await host.read(d.id, urn, outs, inputs);
    expect(read.inputs?._policy).toEqual(inputs._policy);
  });
});
