/**
 * Types that catch mistakes, as a user's program sees them: small programs importing "pulumi-posthog" (the
 * package's self-reference, through package.json "exports" to the built dist/ types) compiled with the
 * TypeScript compiler API and the repository's strict options; the emitted .d.ts carries every Args property's
 * documentation (what an editor shows on hover); `dashboardId: kpis.id` (a string Output) compiles, and
 * `dashboardId: true` is refused at run time too, by the provider's `check` on the real dynamic-provider host,
 * which parses a string of digits to the number (so state written with numbers shows no change) and a restriction
 * level's name to its number.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { readResources } from "../../tools/codegen";
import type { ProviderHost } from "../../tools/provider-host";
import {
  create,
  destroy,
  plan,
  repoRoot,
  serializeProvider,
  type TestEmulator,
  update,
  urnOf,
  useProviderHost,
} from "../provider/harness";
import { compile, compilerOptions, hoverDocumentation } from "./compile";

const dist = join(repoRoot, "dist", "sdk");

beforeAll(() => {
  if (!existsSync(join(dist, "index.d.ts")))
    throw new Error(
      "dist/sdk is missing: these tests compile against the built types; run `npm run build` first",
    );
});

const header = 'import * as posthog from "pulumi-posthog";\n';

describe("types that catch mistakes (strict programs importing pulumi-posthog)", () => {
  let results: ReturnType<typeof compile>;
  beforeAll(() => {
    results = compile({
      valid: `${header}import * as fs from "node:fs";
const kpis = new posthog.Dashboard("kpis", { name: "KPIs", restrictionLevel: 37, templateJson: fs.readFileSync("kpis.json", "utf8") });
const adopted = new posthog.Dashboard("old", { name: "Old", dashboardId: 12, restrictionLevel: "only-collaborators-can-edit" });
new posthog.Dashboard("copy", { name: "Copy", useDashboard: adopted.id, restrictionLevel: "everyone-can-edit" });
const plain = new posthog.Dashboard("plain", { name: "Plain" });
const jane = new posthog.Member("jane", { email: "jane@example.com", level: "admin" });
new posthog.Member("max", { userUuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04", level: 1, retainOnDelete: true });
new posthog.DashboardCollaborator("jane-kpis", { dashboardId: kpis.id, userUuid: jane.id });
new posthog.DashboardSharing("kpis", { dashboardId: kpis.id, enabled: true });
new posthog.DashboardSharing("old", { dashboardId: 12 });
new posthog.DashboardSharing("numbered", { dashboardId: kpis.id.apply(Number) }); // as written before: still fine
posthog.getDashboardOutput({ id: kpis.id });
export const ids = [adopted.id, plain.id];
`,
      dashboardIdTrue: `${header}new posthog.DashboardCollaborator("c", { dashboardId: true, userUuid: "u" });\n`,
      dashboardIdResource: `${header}const kpis = new posthog.Dashboard("kpis", { name: "KPIs" });
new posthog.DashboardSharing("s", { dashboardId: kpis });
`,
      restrictionLevelName: `${header}new posthog.Dashboard("d", { name: "D", restrictionLevel: "collaborators" });\n`,
      memberBoth: `${header}new posthog.Member("m", { userUuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04", email: "max@example.com", level: 1 });\n`,
      memberNeither: `${header}new posthog.Member("m", { level: 1 });\n`,
      dashboardTwoSources: `${header}new posthog.Dashboard("d", { name: "D", useTemplate: "DEFAULT_APP", templateJson: "{}" });\n`,
    });
  }, 120_000);

  it("compiles a valid program", () => {
    expect(results.valid?.map((d) => d.message)).toEqual([]);
  });

  // Each mistake fails where it is, naming the property or the Args type (as the user reads it in the editor).
  it.each([
    [
      "dashboardIdTrue",
      "dashboardId: true",
      ["dashboardId", "'boolean' is not assignable to type 'Input<string | number>'"],
    ],
    [
      "dashboardIdResource",
      "dashboardId: kpis, the Dashboard",
      ["dashboardId", "'Dashboard' is not assignable"],
    ],
    ["restrictionLevelName", 'restrictionLevel: "collaborators"', ["restrictionLevel", '"collaborators"']],
    ["memberBoth", "Member with userUuid and email", ["'MemberArgs'", "property 'email'"]],
    [
      "memberNeither",
      "Member with neither userUuid nor email",
      ["'MemberArgs'", "Property 'email' is missing"],
    ],
    [
      "dashboardTwoSources",
      "Dashboard with useTemplate and templateJson",
      ["'DashboardArgs'", "'templateJson'"],
    ],
  ])("refuses %s (%s)", (name, _what, expected) => {
    const diagnostics = results[name] ?? [];
    expect(diagnostics).toHaveLength(1);
    const [d] = diagnostics;
    expect(d?.message).toMatch(/^\d+: TS23(22|45) /);
    for (const e of expected) expect(`${d?.at}\n${d?.message}`).toContain(e);
  });
});

/** The Args types and the property declarations of the emitted .d.ts files of dist/sdk. */
function emittedArgs(): { file: string; type: string; property: string; documented: boolean }[] {
  const out: { file: string; type: string; property: string; documented: boolean }[] = [];
  for (const f of readdirSync(dist).filter((n) => n.endsWith(".d.ts"))) {
    const sf = ts.createSourceFile(f, readFileSync(join(dist, f), "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node, owner: string | undefined): void => {
      if (
        (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) &&
        /Args(Base)?$/.test(node.name.text)
      )
        owner = node.name.text;
      if (owner && ts.isPropertySignature(node) && ts.isIdentifier(node.name)) {
        const docs = ts
          .getJSDocCommentsAndTags(node)
          .filter((d) => ts.isJSDoc(d) && ts.getTextOfJSDocComment(d.comment));
        out.push({ file: f, type: owner, property: node.name.text, documented: docs.length > 0 });
        return; // the members of an object type inside a property's type are not Args properties
      }
      ts.forEachChild(node, (c) => visit(c, owner));
    };
    visit(sf, undefined);
  }
  return out;
}

describe("hover documentation in the emitted .d.ts", () => {
  /** The repository's resources (tools/codegen.ts), read once: each read type checks the schemas. */
  let read: ReturnType<typeof readResources> | undefined;
  const resources = () => {
    read ??= readResources();
    return read;
  };

  it("every property of every resource Args type in dist/sdk/*.d.ts has a JSDoc comment", () => {
    const props = emittedArgs().filter((p) => p.file !== "lookups.d.ts");
    expect(props.filter((p) => !p.documented).map((p) => `${p.type}.${p.property}`)).toEqual([]);
    // …and they are all there: each resource's Args declares each of its inputs.
    for (const r of resources()) {
      const declared = new Set(
        props.filter((p) => p.type.startsWith(`${r.name}Args`)).map((p) => p.property),
      );
      expect([...declared].sort(), r.name).toEqual(r.inputs.map((i) => i.name).sort());
    }
  });

  it("every property of every lookup Args type in dist/sdk/lookups.d.ts has a JSDoc comment", () => {
    const props = emittedArgs().filter((p) => p.file === "lookups.d.ts");
    expect(props.length).toBeGreaterThan(0);
    expect([...new Set(props.filter((p) => !p.documented).map((p) => `${p.type}.${p.property}`))]).toEqual(
      [],
    );
  });

  it("an editor finds the documentation of each Args property through the package (as on hover)", () => {
    const file = join(repoRoot, "test", "docs", "__virtual__", "hover.ts");
    const text = `import type * as posthog from "pulumi-posthog";\n${resources()
      .map((r) => `export type A_${r.name} = posthog.${r.name}Args;`)
      .join("\n")}\n`;
    const { missing, seen, diagnostics } = hoverDocumentation(file, text, compilerOptions());
    expect(diagnostics).toEqual([]);
    expect(seen).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  }, 60_000);
});

describe("dashboardId at run time (the provider's check on the real dynamic-provider host)", () => {
  let emu: TestEmulator;
  let host: ProviderHost;
  useProviderHost((e, h) => {
    emu = e;
    host = h;
  });

  it.each([
    ["DashboardCollaborator", true, "got true"],
    ["DashboardSharing", true, "got true"],
    ["DashboardSharing", "12a", 'got the string "12a"'],
    ["DashboardSharing", "", 'got the string ""'],
    ["DashboardSharing", 0, "got 0"],
    ["DashboardSharing", "0", 'got the string "0"'],
    ["DashboardSharing", 1.5, "got 1.5"],
    ["DashboardSharing", { id: 12 }, "got an object"],
  ])("%s refuses dashboardId %j, naming the property and what it accepts", async (type, value, got) => {
    const provider = await serializeProvider(type);
    const inputs = {
      dashboardId: value,
      userUuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03",
      __provider: provider,
    };
    if (type === "DashboardSharing") delete (inputs as Record<string, unknown>).userUuid;
    const { failures } = await host.check(urnOf(type, "bad"), {}, inputs);
    expect(failures).toEqual([
      {
        property: "dashboardId",
        reason:
          "expected a dashboard id (a positive integer, or a string of its digits such as a Dashboard's id: " +
          `\`dashboardId: kpis.id\`), ${got}`,
      },
    ]);
    expect(await emu.requests()).toEqual([]); // refused before any request
  });

  it.each([
    ["a positive integer", 12],
    ["a Dashboard's id as it is (a string of digits)", "12"],
  ])("accepts %s, as the number", async (_what, value) => {
    for (const type of ["DashboardSharing", "DashboardCollaborator"]) {
      const provider = await serializeProvider(type);
      const userUuid =
        type === "DashboardCollaborator" ? { userUuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03" } : {};
      const ok = await host.check(
        urnOf(type, "ok"),
        {},
        { dashboardId: value, ...userUuid, __provider: provider },
      );
      expect(ok.failures).toEqual([]);
      expect(ok.inputs.dashboardId).toBe(12);
    }
  });

  it("state written with numbers shows no change when the program passes the ids as strings and the level by name", async () => {
    const project = String(emu.projectId);
    const dashboard = await create(host, "Dashboard", "kpis", {
      name: "KPIs",
      restrictionLevel: 37,
      projectId: emu.projectId,
    });
    const id = Number(dashboard.id);
    const other = (await emu.api("POST", `/api/projects/${project}/dashboards/`, { name: "Other" })).body as {
      id: number;
    };
    const adopted = await create(host, "Dashboard", "adopted", { name: "Other", dashboardId: other.id });
    const sharing = await create(host, "DashboardSharing", "kpis", {
      dashboardId: id,
      projectId: emu.projectId,
    });
    const mia = "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03";
    const collaborator = await create(host, "DashboardCollaborator", "mia", {
      dashboardId: id,
      userUuid: mia,
    });
    expect(sharing.outs.dashboardId).toBe(id);
    expect(collaborator.outs.dashboardId).toBe(id);
    await emu.control("DELETE", "/requests");

    const same = [
      plan(host, dashboard, {
        name: "KPIs",
        restrictionLevel: "only-collaborators-can-edit",
        projectId: project,
      }),
      plan(host, adopted, { name: "Other", dashboardId: String(other.id) }),
      plan(host, sharing, { dashboardId: dashboard.id, projectId: project }),
      plan(host, collaborator, { dashboardId: dashboard.id, userUuid: mia }),
    ];
    for (const { checked, diff } of await Promise.all(same)) {
      expect(checked.failures).toEqual([]);
      expect(diff).toMatchObject({ changes: false, replaces: [] });
    }
    expect(await emu.requests()).toEqual([]); // check and diff send nothing

    // A level given by name is stored and compared as its number: "everyone-can-edit" is 21, a change.
    const relaxed = await plan(host, dashboard, { name: "KPIs", restrictionLevel: "everyone-can-edit" });
    expect(relaxed.checked.inputs.restrictionLevel).toBe(21);
    expect(relaxed.diff).toMatchObject({ changes: true, replaces: [] });
    const updated = await update(host, dashboard, { name: "KPIs", restrictionLevel: "everyone-can-edit" });
    expect(updated.outs.restrictionLevel).toBe(21);
    for (const r of [collaborator, sharing, adopted, updated]) await destroy(host, r);
  }, 60_000);

  it("refuses an unknown restriction level name, naming both forms of each level", async () => {
    const provider = await serializeProvider("Dashboard");
    const { failures } = await host.check(
      urnOf("Dashboard", "bad"),
      {},
      { name: "D", restrictionLevel: "collaborators", __provider: provider },
    );
    expect(failures).toEqual([
      {
        property: "restrictionLevel",
        reason:
          'expected 21 or "everyone-can-edit" (everyone in the project can edit), or 37 or ' +
          '"only-collaborators-can-edit" (only collaborators can edit)',
      },
    ]);
  });
});
