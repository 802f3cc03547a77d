/**
 * Validating inputs with the providers' `check` (from `pulumi-posthog/provider`): the same validation
 * `pulumi preview` runs, with no engine and no request. A unit test runs the program under mocks with the
 * settings of a stack and checks every resource it declares, so a bad setting fails in the test, naming the
 * resource and the property, instead of in a preview.
 */
import * as pulumi from "@pulumi/pulumi";
import { Dashboard, DashboardSharing, Project } from "pulumi-posthog/provider";
import { describe, expect, it } from "vitest";
import { posthogMocks, settled } from "./mocks";
import { analytics } from "./program";

/** Every failure of `check` for the resources the mocks saw, as `<resource name>.<property>: <reason>`. */
async function checkAll(resources: { type: string; name: string; inputs: Record<string, unknown> }[]) {
  const providers: Record<string, typeof Project> = { Project, Dashboard, DashboardSharing };
  const failures: string[] = [];
  for (const r of resources) {
    const provider = providers[r.type.split(":").pop() ?? ""];
    if (!provider) continue;
    const result = await provider.check({}, r.inputs);
    for (const f of result.failures ?? []) failures.push(`${r.name}.${f.property}: ${f.reason}`);
  }
  return failures;
}

describe("check", () => {
  it("refuses a setting the API would refuse, naming the property and what it accepts", async () => {
    const result = await Dashboard.check({}, { name: "KPIs", restrictionLevel: 30 });
    expect(result.failures).toEqual([
      {
        property: "restrictionLevel",
        reason:
          'expected 21 or "everyone-can-edit" (everyone in the project can edit), or 37 or ' +
          '"only-collaborators-can-edit" (only collaborators can edit)',
      },
    ]);
    const ok = await Dashboard.check({}, { name: "KPIs" });
    expect(ok.failures).toBeUndefined();
    expect(ok.inputs).toMatchObject({ name: "KPIs", restrictionLevel: 21, pinned: false }); // defaults applied
  });

  it("catches a bad stack setting in a unit test of the whole program", async () => {
    const mocks = await posthogMocks({});
    const made = await mocks.runProgram(() =>
      analytics({ projectName: " ", kpiEditors: [], publicKpis: false, host: "https://us.posthog.com" }),
    );
    await settled(pulumi.all([made.project.urn, made.kpis.urn, made.sharing.urn])); // all registered
    expect(await checkAll(mocks.resources)).toEqual([
      "web.name: expected a project name (1..200 characters)",
    ]);
  });
});
