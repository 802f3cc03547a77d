/**
 * Types that catch mistakes, as a user's program sees them: small programs importing "pulumi-posthog" (the
 * package's self-reference, through package.json "exports" to the built dist/ types) compiled with the
 * TypeScript compiler API and the repository's strict options; the emitted .d.ts carries every Args property's
 * documentation (what an editor shows on hover); and `dashboardId: true` is refused at run time too, by the
 * provider's `check` on the real dynamic-provider host.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { readResources } from "../../tools/codegen";
import type { ProviderHost } from "../../tools/provider-host";
import { repoRoot, serializeProvider, type TestEmulator, urnOf, useProviderHost } from "../provider/harness";
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
const adopted = new posthog.Dashboard("old", { name: "Old", dashboardId: 12 });
const plain = new posthog.Dashboard("plain", { name: "Plain" });
const jane = new posthog.Member("jane", { email: "jane@example.com", level: "admin" });
new posthog.Member("max", { userUuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04", level: 1, retainOnDelete: true });
new posthog.DashboardCollaborator("jane-kpis", { dashboardId: kpis.id.apply(Number), userUuid: jane.id });
new posthog.DashboardSharing("kpis", { dashboardId: kpis.id.apply(Number), enabled: true });
new posthog.DashboardSharing("old", { dashboardId: 12 });
export const ids = [adopted.id, plain.id];
`,
      dashboardIdTrue: `${header}new posthog.DashboardCollaborator("c", { dashboardId: true, userUuid: "u" });\n`,
      dashboardIdResource: `${header}const kpis = new posthog.Dashboard("kpis", { name: "KPIs" });
new posthog.DashboardSharing("s", { dashboardId: kpis });
`,
      dashboardIdString: `${header}const kpis = new posthog.Dashboard("kpis", { name: "KPIs" });
new posthog.DashboardSharing("s", { dashboardId: kpis.id });
`,
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
      ["dashboardId", "'boolean' is not assignable to type 'Input<number>'"],
    ],
    [
      "dashboardIdResource",
      "dashboardId: kpis, the Dashboard",
      ["dashboardId", "'Dashboard' is not assignable"],
    ],
    ["dashboardIdString", "dashboardId: kpis.id, a string Output", ["dashboardId", "'Output<string>'"]],
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
  it("every property of every resource Args type in dist/sdk/*.d.ts has a JSDoc comment", () => {
    const props = emittedArgs().filter((p) => p.file !== "lookups.d.ts");
    expect(props.filter((p) => !p.documented).map((p) => `${p.type}.${p.property}`)).toEqual([]);
    // …and they are all there: each resource's Args declares each of its inputs.
    for (const r of readResources()) {
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
    const resources = readResources();
    const text = `import type * as posthog from "pulumi-posthog";\n${resources
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
    ["DashboardSharing", "12", 'got the string "12"'],
    ["DashboardSharing", 0, "got 0"],
    ["DashboardSharing", 1.5, "got 1.5"],
  ])("%s refuses dashboardId %j, naming the property and the fix", async (type, value, got) => {
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
        reason: `expected a dashboard id (a positive integer), ${got}: pass the Dashboard's id as a number, e.g. \`dashboardId: kpis.id.apply(Number)\``,
      },
    ]);
    expect(await emu.control("GET", "/requests")).toEqual([]); // refused before any request
  });

  it("accepts a positive integer", async () => {
    const provider = await serializeProvider("DashboardSharing");
    const ok = await host.check(
      urnOf("DashboardSharing", "ok"),
      {},
      { dashboardId: 12, __provider: provider },
    );
    expect(ok.failures).toEqual([]);
    expect(ok.inputs).toMatchObject({ dashboardId: 12, enabled: true });
  });
});
