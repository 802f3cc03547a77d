import { describe, expect, it } from "vitest";
import { IMPORT_IDS, importTarget, parseUrn } from "../../provider/adapters/plugin/index";
import { resourceNames } from "../../provider/index";

// Issue 29, item 4: the import id of each resource (README, "Other languages"). test/plugin/yaml.test.ts imports
// through the real CLI; these cover every resource's form and refusal.
const UUID = "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03";

describe("import ids of the plugin's resources", () => {
  it("each resource parses its documented form into the id the state keeps and the project it lives in", () => {
    expect(Object.keys(IMPORT_IDS).sort()).toEqual([...resourceNames].sort());
    expect(importTarget("Project", "1001")).toEqual({ id: "1001", props: {} });
    expect(importTarget("Dashboard", "1001/42")).toEqual({ id: "42", props: { projectId: "1001" } });
    expect(importTarget("DashboardSharing", "1001/42")).toEqual({ id: "42", props: { projectId: "1001" } });
    expect(importTarget("DashboardCollaborator", `1001/42/${UUID}`)).toEqual({
      id: `42/${UUID}`,
      props: { projectId: "1001" },
    });
    for (const name of ["Domain", "DomainVerification", "Invite", "Member", "BatchExportPause"] as const)
      expect(importTarget(name, UUID)).toEqual({ id: UUID, props: {} });
  });

  it("a wrong id fails naming the form the resource's import id takes", () => {
    const wrong: [(typeof resourceNames)[number], string][] = [
      ["Project", "web"],
      ["Dashboard", "42"],
      ["DashboardSharing", "1001-42"],
      ["DashboardCollaborator", "42/jane@example.com"],
      ["Domain", "example.com"],
      ["DomainVerification", "example.com"],
      ["Invite", "jane@example.com"],
      ["Member", "jane@example.com"],
      ["BatchExportPause", "Events to S3"],
    ];
    for (const [name, id] of wrong) {
      expect(() => importTarget(name, id), `${name} ${id}`).toThrow(
        `cannot import posthog:index:${name} "${id}": its import id is ${IMPORT_IDS[name].form}`,
      );
    }
    // Every resource of the list, whatever its form: an id of none.
    for (const name of resourceNames)
      expect(() => importTarget(name, "not an id"), name).toThrow(
        `cannot import posthog:index:${name} "not an id": its import id is ${IMPORT_IDS[name].form}`,
      );
  });

  it("the URN gives the type, the resource's name (even with ::) and the stack", () => {
    expect(parseUrn("urn:pulumi:dev::web::posthog:index:Dashboard::kpis")).toEqual({
      stack: "dev",
      project: "web",
      type: "posthog:index:Dashboard",
      name: "kpis",
    });
    expect(parseUrn("urn:pulumi:dev::web::my:Component$posthog:index:Invite::a::b").type).toBe(
      "posthog:index:Invite",
    );
    expect(parseUrn("urn:pulumi:dev::web::my:Component$posthog:index:Invite::a::b").name).toBe("a::b");
  });
});
