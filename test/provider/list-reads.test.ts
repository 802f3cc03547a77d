/**
 * Issue 27, point 2, at the provider level: a failed list read is not an empty list. One 404 (with PostHog's error
 * body) on a list read during `refresh` used to mark every dashboard of the project `deleted` and drop the Invites,
 * Members and Collaborators (a Read answering no id); an object is gone only when a read of that object says so.
 * Through the REAL dynamic-provider host over gRPC against the emulator: the Reads of a refresh, for a 404 on each
 * list the refresh reads, each either fails naming the request (and that nothing was marked gone) or answers
 * exactly what a read without the fault answers, and none writes. That the engine then keeps the state as it was
 * (a failed Read changes nothing) and the next `up` writes nothing but what the program changed,
 * test/stack/list-reads.test.ts proves through the real Pulumi CLI for the dashboards and invites lists.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderHost } from "../../tools/provider-host";
import { create, type Managed, startConfiguredHost, startTestEmulator, type TestEmulator } from "./harness";

const MIA = { email: "mia.member@example.com" };
const MAX = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04" };

let emu: TestEmulator;
/** The five resources, as the `up` that made them left them in the state. */
let managed: Managed[] = [];
/** What a refresh without a fault reads of each (the dashboard is shared since its create). */
let clean: Awaited<ReturnType<typeof readAll>> = [];

/** A fresh host (a new process, as each CLI run starts one), configured for the emulator. */
async function withHost<T>(use: (host: ProviderHost) => Promise<T>): Promise<T> {
  const host = await startConfiguredHost(emu);
  try {
    return await use(host);
  } finally {
    await host.close();
  }
}

/** The Reads of one refresh of every resource, started together as the engine starts them: each one's outcome. */
const readAll = (host: ProviderHost) =>
  Promise.allSettled(managed.map((r) => host.read(r.id, r.urn, r.outs, r.inputs)));

beforeAll(async () => {
  emu = await startTestEmulator();
  managed = await withHost(async (host) => {
    const kpis = await create(host, "Dashboard", "kpis", { name: "List reads", restrictionLevel: 37 });
    const dashboardId = Number(kpis.id);
    return [
      kpis,
      await create(host, "Invite", "jane", { targetEmail: "jane.lists@example.com", sendEmail: false }),
      await create(host, "Member", "mia", { email: MIA.email, level: "member", retainOnDelete: true }),
      await create(host, "DashboardCollaborator", "max-kpis", { dashboardId, userUuid: MAX.uuid }),
      await create(host, "DashboardSharing", "kpis-sharing", { dashboardId, enabled: true }),
    ];
  });
  clean = await withHost(readAll);
}, 120_000);
afterAll(async () => {
  await emu?.close();
});

describe("a failed list read is not an empty list (real host over gRPC)", () => {
  const lists = [
    { list: "dashboards", path: "/projects/\\d+/dashboards/$" },
    { list: "invites", path: "/invites/$" },
    { list: "members", path: "/members/$" },
    { list: "collaborators", path: "/collaborators/$" },
  ];
  for (const { list, path } of lists) {
    it(`a 404 on the ${list} list: each Read fails naming the request, or answers as without the fault; no write`, async () => {
      for (const [i, r] of clean.entries()) {
        expect(r.status, `${managed[i]?.name}: ${r.status === "rejected" ? String(r.reason) : ""}`).toBe(
          "fulfilled",
        );
      }
      await emu.control("POST", "/faults", { method: "GET", path, status: 404 });
      await emu.control("DELETE", "/requests");
      let faulted: Awaited<ReturnType<typeof readAll>>;
      try {
        faulted = await withHost(readAll);
      } finally {
        await emu.control("DELETE", "/faults");
      }
      const seen = await emu.requests();
      expect(
        seen.filter((r) => r.status === 404).length,
        `the fault was hit: ${seen.map((r) => `${r.method} ${r.path} ${r.status}`).join(", ")}`,
      ).toBeGreaterThan(0);
      // The Reads wrote nothing to PostHog.
      expect(seen.filter((r) => r.method !== "GET").map((w) => `${w.method} ${w.path}`)).toEqual([]);
      for (const [i, r] of faulted.entries()) {
        const name = managed[i]?.name;
        const before = clean[i];
        if (r.status === "rejected") {
          const message = String((r.reason as { details?: string }).details ?? r.reason);
          expect(message, name).toMatch(/GET \/api\/\S+\/ .*404/);
          expect(message, name).toContain("nothing was marked gone");
        } else {
          // Not gone (an id), not marked deleted, and exactly what the read without the fault answered.
          expect(r.value.id, name).toBe(managed[i]?.id);
          expect((r.value.props as { deleted?: boolean }).deleted, name).not.toBe(true);
          expect(r.value, name).toEqual(before?.status === "fulfilled" ? before.value : undefined);
        }
      }
    }, 120_000);
  }
});
