import { describe, expect, it } from "vitest";
import { errorsOf, exportStack, type RunResult } from "../../tools/pulumi";
import { type Declared, fixtureDir, useFixtureProgram } from "./fixture-program";

// Issue 27, point 2: a failed list read is not an empty list. One 404 (with PostHog's error body) on a list read
// during `refresh` used to mark every dashboard of the project `deleted`, drop the Invites, Members and
// Collaborators from the state and exit 0; the next `up` sent the invited person a second invitation. An object
// is gone only when a read of that object says so (a 404 on its own URL, or a list answered with 200 that lacks
// it). A program using the SDK runs through the real Pulumi CLI against the emulator.
//
// That the provider's Reads, for a 404 on each list a refresh reads (dashboards, invites, members, collaborators),
// either fail naming the request or answer as without the fault, and write nothing, test/provider/list-reads.test.ts
// proves through the real provider host. Here is what the engine adds, for the dashboards list (every Read answers)
// and the invites list (a Read fails, so the refresh fails): the state is kept exactly as it was, and the next `up`
// writes nothing.
const MIA = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03", email: "mia.member@example.com" };
const MAX = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04" };

const fx = useFixtureProgram({ prefix: "list-reads" });
const why = (r: RunResult) => `${JSON.stringify(r.diagnostics, null, 1)}\n${r.output}`;

/** The custom resources of the stack's state (secrets shown): name → {id, inputs, outputs}; its pending operations. */
async function stateOf(stack: { name: string; stateDir: string; env(): Record<string, string> }) {
  const exported = await exportStack({
    projectDir: fixtureDir,
    stack: stack.name,
    stateDir: stack.stateDir,
    env: stack.env(),
    extra: ["--show-secrets"], // the plain values: the ciphertext of a secret changes at every save
  });
  const resources = Object.fromEntries<{ id: unknown; inputs: unknown; outputs: unknown }>(
    (exported.deployment.resources ?? [])
      .filter((r) => r.custom === true && !String(r.type).startsWith("pulumi:providers:"))
      .map((r) => [
        String(String(r.urn).split("::").pop()),
        { id: r.id, inputs: r.inputs, outputs: r.outputs },
      ]),
  );
  return { resources, pending: exported.deployment.pending_operations ?? [] };
}

describe("a failed list read is not an empty list (real Pulumi CLI)", () => {
  it("a 404 on the dashboards list or the invites list during a refresh keeps every resource in the state; the next up writes nothing", async () => {
    const s = fx.stack("lists");
    const base: Declared = [
      ["Dashboard", "kpis", { name: "List reads", restrictionLevel: 37 }],
      ["Invite", "jane", { targetEmail: "jane.lists@example.com", sendEmail: false }],
      ["Member", "mia", { email: MIA.email, level: "member", retainOnDelete: true }],
    ];
    const first = await s.run("up", base);
    expect(first.ok, why(first)).toBe(true);
    // The dashboard's id, from PostHog (the one dashboard of that name): the state's is compared with it below.
    const boards = (await fx.emu().call("GET", `${fx.emu().project}/dashboards/?limit=1000`)).body as {
      results: { id: number; name: string }[];
    };
    const named = boards.results.filter((d) => d.name === "List reads");
    expect(named).toHaveLength(1);
    const dashboardId = Number(named[0]?.id);
    expect(dashboardId).toBeGreaterThan(0);
    const program: Declared = [
      ...base,
      ["DashboardCollaborator", "max-kpis", { dashboardId, userUuid: MAX.uuid }],
      ["DashboardSharing", "kpis-sharing", { dashboardId, enabled: true }],
    ];
    const second = await s.run("up", program);
    expect(second.ok, why(second)).toBe(true);
    // A refresh without a fault first: it records what PostHog now reports (the dashboard is shared since the
    // last up), the state each refresh with a failed list read must then leave exactly as it is.
    const clean = await s.run("refresh", program);
    expect(clean.ok, why(clean)).toBe(true);
    const beforeState = await stateOf(s);
    const before = beforeState.resources;
    expect(Object.keys(before).sort()).toEqual(["jane", "kpis", "kpis-sharing", "max-kpis", "mia"]);
    expect(Number(before.kpis?.id)).toBe(dashboardId);

    const lists = [
      { list: "dashboards", path: "/projects/\\d+/dashboards/$" },
      { list: "invites", path: "/invites/$" },
    ];
    for (const { list, path } of lists) {
      const armed = await fx.emu().control("POST", "/faults", { method: "GET", path, status: 404 });
      expect(armed.status).toBe(201);
      await fx.emu().control("DELETE", "/requests");
      const refresh = await s.run("refresh", program);
      await fx.emu().control("DELETE", "/faults");
      const seen = await fx.emu().requests();
      const failedLists = seen.filter((r) => r.status === 404);
      expect(
        failedLists.length,
        `${list}: the fault was hit: ${seen.map((r) => `${r.method} ${r.path} ${r.status}`).join(", ")}\n${why(refresh)}`,
      ).toBeGreaterThan(0);
      if (!refresh.ok) {
        // The refresh fails naming the request that failed, and what to check.
        expect(errorsOf(refresh).join("\n"), why(refresh)).toMatch(/GET \/api\/\S+\/ .*404/);
        expect(errorsOf(refresh).join("\n")).toContain("nothing was marked gone");
      }
      // The refresh wrote nothing to PostHog.
      expect(
        seen.filter((r) => r.method !== "GET").map((w) => `${w.method} ${w.path}`),
        `${list}: the refresh`,
      ).toEqual([]);
      // Nothing left the state, nothing is marked deleted, no id changed.
      const afterState = await stateOf(s);
      const after = afterState.resources;
      expect(Object.keys(after).sort(), `${list}: ${why(refresh)}`).toEqual(Object.keys(before).sort());
      for (const [name, r] of Object.entries(after)) {
        expect(r.id, `${list}: ${name}`).toBe(before[name]?.id);
        expect((r.outputs as { deleted?: boolean }).deleted, `${list}: ${name}`).not.toBe(true);
      }
      // More: the state is exactly what it was before the refresh (every input and output, no pending
      // operation), and PostHog is unchanged, so an `up` now acts exactly as the one after the loop, which
      // proves it writes nothing.
      expect(afterState, `${list}: the state after the refresh`).toEqual(beforeState);
    }
    // The next up writes nothing: no second invitation, no restored dashboard (and plans no change at all).
    await fx.emu().control("DELETE", "/requests");
    const up = await s.run("up", program, { expectNoChanges: true });
    expect(up.ok, why(up)).toBe(true);
    const writes = (await fx.emu().requests()).filter((r) => r.method !== "GET");
    expect(
      writes.map((w) => `${w.method} ${w.path}`),
      "the up after the refreshes",
    ).toEqual([]);
    const quiet = await s.run("preview", program, { refresh: true, expectNoChanges: true });
    expect(quiet.ok, why(quiet)).toBe(true);
  }, 300_000);
});
