/**
 * The generated SDK Args (sdk/args.ts), the resource pages' tables (docs/resources/<kebab>.md) and the examples
 * of the resource and lookup pages (tools/examples.ts) are what tools/codegen.ts makes of the zod schemas and
 * schema.json today (its check mode), every resource has its page with its generated parts and its hand-written
 * sections, and the generator refuses an input without documentation.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RULES } from "../../provider/apps/governance/rules";
import { resourceNames } from "../../provider/resources/index";
import {
  diff,
  generate,
  markers,
  ROOT,
  readResources,
  readSchema,
  rulesTable,
  stale,
  withPart,
} from "../../tools/codegen";
import {
  EXAMPLES,
  exampleOf,
  goFunctionName,
  pyName,
  renderCsharp,
  renderGo,
  renderPython,
  renderYaml,
} from "../../tools/examples";

const scratch: string[] = [];
afterAll(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

/**
 * A scratch copy of the generator's inputs (schemas, SDK classes, pages, tsconfig) inside the repository, so
 * `zod` and `@pulumi/pulumi` resolve from its node_modules.
 */
function scratchRoot(): string {
  const dir = mkdtempSync(join(ROOT, "test", "docs", ".codegen-"));
  scratch.push(dir);
  for (const d of ["provider", "sdk", "docs/resources", "docs/lookups"])
    cpSync(join(ROOT, d), join(dir, d), { recursive: true });
  for (const f of ["tsconfig.json", "schema.json", "docs/governance.md", "docs/_index.md", "README.md"])
    cpSync(join(ROOT, f), join(dir, f));
  mkdirSync(join(dir, "tools"));
  return dir;
}

/** The repository's resources, read once for the tests that read the repository itself (a type check of the schemas). */
let rootResources: ReturnType<typeof readResources> | undefined;
const resourcesOfRoot = () => {
  rootResources ??= readResources(ROOT);
  return rootResources;
};

/**
 * A scratch copy with a hand edit in each kind of generated file (a resource page's table, a lookup page's
 * example, an SDK class's outputs, docs/governance.md's rules table), and what check mode reports of it: one
 * generation (a type check of the lookups' schemas and a biome run) for the tests below, each reading its file's
 * part. The scratch's schemas are unchanged copies of the repository's, so the repository's resources serve it.
 */
let edited: { path: string; diff: string }[] | undefined;
function staleOfEdits(): { path: string; diff: string }[] {
  if (edited) return edited;
  const dir = scratchRoot();
  const edit = (path: string, from: string, to: string) => {
    const file = join(dir, path);
    const text = readFileSync(file, "utf8");
    expect(text, path).toContain(from);
    writeFileSync(file, text.replace(from, to));
  };
  edit("docs/resources/domain.md", "| `adopt` |", "| `adopted` |");
  edit(
    "docs/lookups/get-member.md",
    "function: posthog:index:getMember",
    "function: posthog:index:getMembers",
  );
  edit(
    "sdk/dashboard.ts",
    "declare readonly deleted: pulumi.Output<boolean>;",
    "declare readonly deleted: pulumi.Output<boolean | undefined>;",
  );
  edit("docs/governance.md", "posthog-max-owners", "posthog-max-owner");
  edited = stale(dir, generate(dir, resourcesOfRoot()));
  // Each edited file is stale, and nothing else.
  expect(edited.map((o) => o.path)).toEqual([
    "sdk/dashboard.ts",
    "docs/resources/domain.md",
    "docs/lookups/get-member.md",
    "docs/governance.md",
  ]);
  return edited;
}
const staleDiff = (path: string) => staleOfEdits().find((o) => o.path === path)?.diff;

describe("tools/codegen.ts", () => {
  it("finds every generated file up to date (npm run codegen -- --check)", () => {
    const old = stale(ROOT, generate(ROOT, resourcesOfRoot()));
    expect(old.map((o) => `${o.path}\n${o.diff}`)).toEqual([]);
  }, 120_000); // the first read of the schemas, shared by the tests below

  it("every resource has a page with its generated tables and its hand-written sections", () => {
    const resources = resourcesOfRoot();
    expect(resources.map((r) => r.name).sort()).toEqual([...resourceNames].sort());
    for (const r of resources) {
      const page = readFileSync(join(ROOT, "docs", "resources", `${r.kebab}.md`), "utf8");
      for (const part of ["inputs", "outputs", "examples"] as const) {
        expect(page, `${r.kebab}.md ${part}`).toContain(markers(part).begin);
        expect(page, `${r.kebab}.md ${part}`).toContain(markers(part).end);
      }
      for (const input of r.inputs) expect(page, `${r.kebab}.md`).toContain(`| \`${input.name}\` |`);
      for (const heading of [
        "## Example",
        "## Inputs",
        "## Outputs",
        "## Replacement",
        "## Delete",
        "## Adoption",
      ])
        expect(page, `${r.kebab}.md lacks ${heading}`).toContain(`\n${heading}`);
      expect(page, `${r.kebab}.md`).toMatch(/```ts\n/);
    }
  });

  it("every resource and lookup page has its examples in YAML, Python, Go and C#, with its type token", () => {
    const schema = readSchema();
    const pages = EXAMPLES.map((e) => e.page).sort();
    expect(pages).toEqual(
      [
        ...resourcesOfRoot().map((r) => `docs/resources/${r.kebab}.md`),
        ...Object.keys(schema.functions).map(
          (t) =>
            `docs/lookups/${(t.split(":").at(-1) ?? "").replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}.md`,
        ),
      ].sort(),
    );
    for (const ex of EXAMPLES) {
      const page = readFileSync(join(ROOT, ex.page), "utf8");
      const { begin, end } = markers("examples");
      const part = page.slice(page.indexOf(begin), page.indexOf(end));
      for (const fence of ["```yaml\n", "```python\n", "```go\n", "```csharp\n"])
        expect(part, `${ex.page} ${fence}`).toContain(fence);
      expect(part, ex.page).toContain(`\`posthog:index:${ex.subject}\``);
      if (!ex.subject.startsWith("get")) expect(part, ex.page).toMatch(/\nImport id: `</);
      // The TypeScript example of the dynamic SDK stays before the generated part.
      expect(page.indexOf("```ts\n"), ex.page).toBeLessThan(page.indexOf(begin));
    }
  });

  it("renders names as Pulumi's generators do, and refuses an example the schema does not have", () => {
    const schema = readSchema();
    expect(goFunctionName(schema, "getDashboard")).toBe("LookupDashboard");
    expect(goFunctionName(schema, "getDashboardSharing")).toBe("LookupDashboardSharing");
    expect(goFunctionName(schema, "getBatchExports")).toBe("GetBatchExports");
    expect(goFunctionName(schema, "getDashboardAccessControls")).toBe("GetDashboardAccessControls");
    expect(pyName("deleteAdoptedOnDestroy")).toBe("delete_adopted_on_destroy");
    expect(pyName("default_access_level")).toBe("default_access_level");
    const dashboard = exampleOf("Dashboard");
    expect(renderPython(schema, dashboard)).toContain("project_id=web.id");
    expect(renderGo(schema, dashboard)).toContain("ProjectId: web.ID(),");
    expect(renderCsharp(schema, dashboard)).toContain("ProjectId = web.Id,");
    const wrong = {
      ...dashboard,
      statements: [
        ...dashboard.statements.slice(0, 1),
        { kind: "resource", type: "Dashboard", name: "kpis", args: { title: "KPIs" } } as const,
      ],
    };
    expect(() => renderYaml(schema, wrong)).toThrow(
      /docs\/resources\/dashboard\.md: kpis: title is no input of Dashboard/,
    );
    const early = { ...dashboard, statements: [...dashboard.statements].reverse() };
    expect(() => renderGo(schema, early)).toThrow(/kpis\.projectId: refers to web, not declared before it/);
  });

  it("the SDK Args carry each input's documentation and Input type", () => {
    const args = readFileSync(join(ROOT, "sdk", "args.ts"), "utf8");
    expect(args.startsWith("// Generated by `npm run codegen`")).toBe(true);
    expect(args).toContain("dashboardId: pulumi.Input<string | number>;");
    expect(args).toMatch(/export type MemberArgs = MemberArgsBase &/);
  });

  it("check mode reports a stale file with a readable diff, and a page without its markers", () => {
    // A resource page's table and a lookup page's example edited by hand (staleOfEdits: stale, and nothing else).
    const domainDiff = staleDiff("docs/resources/domain.md");
    expect(domainDiff).toMatch(/^--- docs\/resources\/domain\.md \(on disk\)/);
    expect(domainDiff).toMatch(/\n-\| `adopted` \|/);
    expect(domainDiff).toMatch(/\n\+\| `adopt` \|/);
    expect(staleDiff("docs/lookups/get-member.md")).toMatch(
      /\n- {6}function: posthog:index:getMembers\n\+ {6}function: posthog:index:getMember\n/,
    );
    const dir = scratchRoot();
    const page = join(dir, "docs", "resources", "domain.md");
    const text = readFileSync(join(dir, "docs", "lookups", "get-member.md"), "utf8");
    const resources = resourcesOfRoot(); // the scratch's schemas are unchanged copies of the repository's
    expect(() =>
      withPart(text.replace(markers("examples").begin, ""), "examples", "", "docs/lookups/get-member.md"),
    ).toThrow(/docs\/lookups\/get-member\.md lacks the markers of its generated examples/);
    writeFileSync(page, "# Domain\n\nNo tables.\n");
    expect(() => generate(dir, resources)).toThrow(
      /docs\/resources\/domain\.md lacks the markers of its generated TypeScript example/,
    );
  }, 120_000);

  it("fails naming an input that has no JSDoc comment", () => {
    const dir = scratchRoot();
    const file = join(dir, "provider", "resources", "domain-verification.ts");
    const source = readFileSync(file, "utf8");
    const undocumented = source.replace(
      "  /** How long to keep retrying, in seconds (0..3600). Default 300. */\n",
      "",
    );
    expect(undocumented).not.toBe(source);
    writeFileSync(file, undocumented);
    expect(() => readResources(dir)).toThrow(
      /input DomainVerification\.timeoutSeconds has no JSDoc comment: document it/,
    );
  });

  it("generates the SDK classes whole from the cards, their outputs from the OutputsSchemas, and fails naming what is missing (issues 35, 50)", () => {
    // a hand edit of a generated declaration is stale, with a diff naming it (staleOfEdits)
    expect(staleDiff("sdk/dashboard.ts")).toMatch(
      /\n\+ {2}declare readonly deleted: pulumi\.Output<boolean>;/,
    );
    const dir = scratchRoot();
    const sdk = join(dir, "sdk", "dashboard.ts");
    const declared = readFileSync(sdk, "utf8");
    const resources = resourcesOfRoot(); // the scratch's schemas are unchanged copies until the JSDoc edits below
    // The class is generated whole from the card (issue 50): gone, it is written again, as it was; its hand hook
    // (sdk/hooks/dashboard.ts) runs when it exists, and the class has none without it.
    writeFileSync(sdk, "");
    const classOf = (files: ReturnType<typeof generate>) =>
      files.find((f) => f.path === "sdk/dashboard.ts")?.content;
    expect(classOf(generate(dir, resources))).toBe(declared);
    expect(declared).toContain("afterConstruct(this, name);");
    rmSync(join(dir, "sdk", "hooks", "dashboard.ts"));
    expect(classOf(generate(dir, resources))).not.toContain("afterConstruct");
    writeFileSync(sdk, declared);

    const file = join(dir, "provider", "resources", "domain-verification.ts");
    const source = readFileSync(file, "utf8");
    const undocumented = source.replace("  /** True when the domain is verified. */\n", "");
    expect(undocumented).not.toBe(source);
    writeFileSync(file, undocumented);
    expect(() => readResources(dir)).toThrow(/output DomainVerification\.isVerified has no JSDoc comment/);
    const withoutInput = source.replace(
      / {2}\/\*\* As declared: how long[^\n]*\n {2}timeoutSeconds: z\.number\(\),\n/,
      "",
    );
    expect(withoutInput).not.toBe(source);
    writeFileSync(file, withoutInput);
    expect(() => readResources(dir)).toThrow(
      /DomainVerification's outputs schema lacks the input\(s\) timeoutSeconds/,
    );
    writeFileSync(file, source.replace("export const DomainVerificationOutputsSchema", "const Renamed"));
    // The card names its outputs schema: without one the compiler can read, codegen says what the card lacks.
    expect(() => readResources(dir)).toThrow(
      /DomainVerification's card has no outputs schema the compiler can read/,
    );
  }, 120_000);

  it("diff shows the changed lines in hunks with context", () => {
    expect(diff("f", "a\nb\nc\n", "a\nB\nc\n")).toBe(
      "--- f (on disk)\n+++ f (generated)\n@@ on disk line 1, generated line 1 @@\n a\n-b\n+B\n c\n ",
    );
    const far = diff("g", "1\n2\nx\n4\n5\n6\n7\n8\n9\ny\n", "1\n2\nX\n4\n5\n6\n7\n8\n9\nY\n").split("\n");
    expect(far.filter((l) => l.startsWith("@@"))).toEqual([
      "@@ on disk line 1, generated line 1 @@",
      "@@ on disk line 8, generated line 8 @@",
    ]);
    expect(far.filter((l) => /^[-+][^-+]/.test(l))).toEqual(["-x", "+X", "-y", "+Y"]);
  });
});

describe("docs/governance.md's rules table (issue 37)", () => {
  it("is generated from RULES: every rule's id, description and configuration keys with their defaults; a stale table fails the check", () => {
    const table = rulesTable();
    for (const rule of RULES) {
      expect(table).toContain(`| \`${rule.id}\` | ${rule.description.replace(/\|/g, "\\|")} |`);
      for (const key of Object.keys(rule.configSchema)) expect(table).toContain(`\`${key}\` (`);
    }
    expect(table).toContain("`maxOwners` (integer, default `3`)");
    expect(table).toContain('`tags` (list, default `["restricted"]`)');
    // The table edited by hand (posthog-max-owners renamed) is stale (staleOfEdits), with a diff naming it.
    expect(staleDiff("docs/governance.md")).toMatch(/\n\+.*`posthog-max-owners`/);
  }, 120_000);
});
