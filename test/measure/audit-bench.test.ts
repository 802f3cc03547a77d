/**
 * The audit bench (bench/audit.ts, `npm run bench -- --only audit`) at a small size, so that it does not rot: 250
 * dashboards (three pages), 3 restricted with a collaborator, an emulator child; the runs with the rate limit off
 * and at PostHog's rate (5 ms a request here) each read exactly PostHog's floor of requests (the five organization
 * lists, three dashboard pages, three collaborator lists: no detail), with no 429, every dashboard in the report.
 * Then the floor and the goals on runs given here, the over-the-budget run's included. Needs `npm run build` (the
 * emulator child runs from dist/).
 */
import { describe, expect, it } from "vitest";
import { type AuditBenchRun, auditFloor, auditTable, auditTargets, runAuditBench } from "../../bench/audit";

describe("the audit bench", () => {
  it("runs the audit at a small size: requests at PostHog's floor, the report whole, the goals computed", async () => {
    const r = await runAuditBench({ dashboards: 250, restricted: 3, over: 0, latencyMs: 5 });
    expect(r.runs.map((x) => x.name)).toEqual(["rate limit off", "PostHog's rate"]);
    for (const x of r.runs) {
      expect(x.whole, x.name).toBe(true);
      expect(x.read.dashboards).toBe(250);
      expect(x.floorRequests).toBe(5 + 3 + 3);
      expect(x.requests, x.name).toBe(x.floorRequests);
      expect(x.throttled).toBe(0);
      expect(x.chain).toBe(4);
      expect(x.wallSeconds).toBeGreaterThan(0);
    }
    expect(r.runs[1]?.floorSeconds).toBe(0.02); // 4 × 5 ms: the window allows 11 requests at once
    expect(r.targets.filter((t) => t.name.endsWith("requests ÷ PostHog's floor")).every((t) => t.ok)).toBe(
      true,
    );
    expect(auditTable(r)).toContain("rate limit off   requests    11 (floor 11, 429: 0)");
  }, 120_000);

  it("the floor: one request a page of each list, one a collaborator list; the window of 480 a minute beyond", () => {
    const read = {
      domains: 3,
      members: 6,
      invites: 4,
      expiredInvites: 0,
      projects: 1,
      dashboards: 1500,
      sharedDashboards: 15,
      batchExports: 2,
      requests: 0,
    };
    expect(auditFloor(read, 15, 480, 80)).toEqual({ requests: 5 + 15 + 15, chain: 4, seconds: 0.32 });
    // 535 requests: the window lets 480 go in the first minute, the rest in the next
    expect(auditFloor(read, 515, 480, 80)).toEqual({ requests: 535, chain: 4, seconds: 60 });
    expect(auditFloor({ ...read, dashboards: 0 }, 0, 480, 80)).toEqual({
      requests: 6,
      chain: 2,
      seconds: 0.16,
    });
  });

  it("the goals: requests within 10 % of the floor, no 429, the whole report; 15 s without a rate limit; the wall within 10 % of the floor over the budget", () => {
    const run = (name: AuditBenchRun["name"], requests: number, wallSeconds: number, floorSeconds: number) =>
      ({
        name,
        read: { dashboards: 1500 },
        whole: true,
        requests,
        throttled: 0,
        wallSeconds,
        floorRequests: 35,
        floorSeconds,
        chain: 4,
        perMinute: 480,
        latencyMs: 80,
        progressLines: 0,
      }) as AuditBenchRun;
    const t = Object.fromEntries(
      auditTargets([
        run("rate limit off", 35, 16, 0),
        run("PostHog's rate", 39, 0.6, 0.32),
        run("over the budget", 35, 67, 60),
      ]).map((x) => [x.name, x]),
    );
    expect(t["rate limit off: wall seconds"]).toMatchObject({ value: 16, limit: 15, ok: false });
    expect(t["PostHog's rate: requests ÷ PostHog's floor"]).toMatchObject({ value: 1.114, ok: false });
    expect(t["over the budget: wall ÷ PostHog's time floor"]).toMatchObject({ value: 1.117, ok: false });
    expect(t["over the budget: requests ÷ PostHog's floor"]).toMatchObject({ value: 1, ok: true });
  });
});
