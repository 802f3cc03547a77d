/**
 * Reliability under faults, at a size that keeps `npm test` fast (`npm run soak` runs 300 resources): apply,
 * change and destroy 30 resources (dashboards, restricted dashboards with a collaborator, invites, domains,
 * projects) through the REAL dynamic-provider host while the emulator injects ~20 % faults (429 with and
 * without Retry-After, 500/502/503, connection resets, writes applied then the response dropped). Each phase
 * is re-run as a user re-runs `pulumi up` until no operation fails (at most 8 rounds). Then the server must
 * hold no duplicate and no orphan, the state must equal a fresh read, and the API key must appear nowhere in
 * the saved checkpoints, the host's output or the error messages. See bench/soak-core.ts.
 */
import { describe, expect, it } from "vitest";
import { runSoak, SOAK_FAULTS } from "../../bench/soak-core";

describe("fault-injection soak through the real provider host", () => {
  it("converges with no duplicate, no orphan, state equal to the server, and no key anywhere", async () => {
    const report = await runSoak({ resources: 30, parallel: 10, maxRounds: 8, retryBaseDelayMs: 20 });
    // the faults were really injected (statuses and resets; dropped responses come on top)
    expect(SOAK_FAULTS.some((f) => f.dropResponse)).toBe(true);
    expect(report.faulted).toBeGreaterThan(0);
    expect(report.phases.map((p) => p.phase)).toEqual(["apply", "change", "destroy"]);
    for (const p of report.phases) {
      expect(p.converged, `${p.phase}: failed operations per round ${p.failuresPerRound}`).toBe(true);
      expect(p.audit, p.phase).toEqual({ duplicates: [], orphans: [], missing: [], stale: [] });
    }
    expect(report.phases[0]?.stateSize).toBe(30);
    expect(report.phases[1]?.stateSize).toBe(30);
    expect(report.phases[2]?.stateSize).toBe(0);
    expect(report.keyLeaks).toEqual([]);
  }, 120_000);
});
