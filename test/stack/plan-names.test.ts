import { describe, expect, it } from "vitest";
import { errorsOf, type RunResult } from "../../tools/pulumi";
import { type Declared, useFixtureProgram } from "./fixture-program";

// Issue 27, point 5: the plan names the right property. The real engine shows a dynamic resource's plan as its
// stored inputs against the program's; a refresh used to store every input-shaped field PostHog filled in, so a
// dashboard deleted outside Pulumi showed as `~ update [diff: -projectId]` and an expired invite as
// `replace [diff: -message]`, naming neither the deletion nor the expiry. Through the real Pulumi CLI. The stack is
// not destroyed (the emulator ends with the file): that destroy deletes dashboards and revokes invites,
// test/provider/dashboards.test.ts and test/provider/people.test.ts prove, and test/stack/gitops.test.ts through
// the CLI.
const fx = useFixtureProgram({ prefix: "plan-names" });
const why = (r: RunResult) => `${JSON.stringify(errorsOf(r), null, 1)}\n${r.output}`;
/** The lines of the CLI's output about resource `name`. */
const linesOf = (r: RunResult, name: string) =>
  r.output.split("\n").filter((l) => new RegExp(`posthog:\\w+ ${name} `).test(l));

describe("the plan names the property that changed (real Pulumi CLI)", () => {
  it("a dashboard soft-deleted outside Pulumi shows as -deleted, an expired invite as -isExpired; nothing PostHog filled in; once healed, no difference", async () => {
    const s = fx.stack("names");
    const program: Declared = [
      ["Dashboard", "kpis", { name: "Named in the plan" }],
      ["Invite", "jane", { targetEmail: "jane.plan@example.com", sendEmail: false }],
    ];
    const up = await s.run("up", program);
    expect(up.ok, why(up)).toBe(true);

    const list = (await fx.emu().call("GET", `${fx.emu().project}/dashboards/`)).body as {
      results: { id: number; name: string }[];
    };
    const kpis = list.results.find((d) => d.name === "Named in the plan");
    await fx.emu().call("PATCH", `${fx.emu().project}/dashboards/${kpis?.id}/`, { body: { deleted: true } });
    await fx.emu().control("POST", "/clock", { advanceSeconds: 4 * 86_400 }); // invites expire after 3 days

    const drift = await s.run("preview", program, { refresh: true });
    expect(drift.ok, why(drift)).toBe(true);
    const board = linesOf(drift, "kpis").join("\n");
    const invite = linesOf(drift, "jane").join("\n");
    expect(board, drift.output).toMatch(/ update \[diff: -deleted\]/);
    expect(invite, drift.output).toMatch(/ replace \[diff: -isExpired\]/);
    const named = drift.output.match(/\[diff: [^\]]*\]/g) ?? [];
    expect(named.length).toBeGreaterThan(0);
    for (const filled of ["projectId", "message"]) expect(named.join(" ")).not.toContain(filled);

    // `up --refresh`: its refresh names the drift it stores (+deleted, +isExpired), then it heals.
    const heal = await s.run("up", program, { refresh: true });
    expect(heal.ok, why(heal)).toBe(true);
    expect(linesOf(heal, "kpis").join("\n"), heal.output).toMatch(/\[diff: \+deleted\]/);
    expect(linesOf(heal, "jane").join("\n"), heal.output).toMatch(/\[diff: \+isExpired\]/);
    // A refresh with nothing changed outside Pulumi shows no difference at all: here after the heal (an update of
    // the dashboard, a new invite). Without the heal, test/stack/invite-two-stacks.test.ts proves it for an invite
    // declared as here (its prod stack, right after the create), test/stack/list-reads.test.ts for a dashboard.
    const quiet = await s.run("preview", program, { refresh: true, expectNoChanges: true });
    expect(quiet.ok, why(quiet)).toBe(true);
    expect(quiet.output).not.toMatch(/\[diff:/);
  }, 300_000);
});
