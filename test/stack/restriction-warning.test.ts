import { describe, expect, it } from "vitest";
import type { RunOptions, RunResult } from "../../tools/pulumi";
import { type Declared, useFixtureProgram } from "./fixture-program";

// Issue 13: `restrictionLevel: 37` on an organization without PostHog's advanced permissions silently became 21
// (effectiveRestrictionLevel). A program using the SDK (test/stack/fixtures/posthog) runs through the real Pulumi
// CLI (test/stack/fixture-program.ts) against the emulator with its paid features off; the SDK's warning reaches
// the engine as a diagnostic on the dashboard. The stack is not destroyed (the emulator ends with the file): that
// destroy soft-deletes dashboards, test/provider/dashboards.test.ts proves, and test/stack/gitops.test.ts through
// the CLI.
const fx = useFixtureProgram({ prefix: "restriction", paidFeatures: false });
const run = (operation: RunOptions["operation"], stack: string, resources: Declared): Promise<RunResult> =>
  fx.stack(stack).run(operation, resources);

const warnings = (r: RunResult) =>
  r.diagnostics.filter((d) => d.severity === "warning").map((d) => d.message);

describe("a dashboard whose restriction level is not in effect", () => {
  // The SDK warns from the dashboard's outputs (restrictionLevel beside effectiveRestrictionLevel) in every run of
  // the program, so an update of a dashboard that stays at 37 warns again: its Update reports 21 in effect as its
  // Create does, test/provider/invite-restriction.test.ts proves through the real provider host.
  it("warns at create, saying why and what to do, on the dashboard; no warning when it is in effect", async () => {
    // Beside it, a dashboard declared at 21, the level in effect: it gets no warning.
    const restricted: Declared = [
      ["Dashboard", "board", { name: "Board", restrictionLevel: 37 }],
      ["Dashboard", "open", { name: "Open" }],
    ];
    const up = await run("up", "a", restricted);
    expect(up.ok, up.output).toBe(true);
    const created = warnings(up).filter((m) => m.includes('Dashboard "board"'));
    expect(created).toHaveLength(1);
    expect(created[0]).toContain("restrictionLevel 37 (only collaborators can edit) is not in effect");
    expect(created[0]).toContain("enforces 21");
    expect(created[0]).toContain("advanced permissions");
    expect(created[0]).toContain("declare restrictionLevel: 21");
    const warned = up.diagnostics.find((d) => d.message === created[0]);
    expect(warned?.urn).toMatch(/::pulumi-nodejs:dynamic\/posthog:Dashboard::board$/);
    expect(warnings(up)).toHaveLength(1); // none for "open"
    expect(up.diagnostics.filter((d) => d.urn?.endsWith("::open"))).toEqual([]);
  }, 300_000);
});
