/**
 * Issue 51, item 5: release notes that say what breaks (tools/schema-diff.mts, `npm run schema-diff`). The
 * comparison is pure and runs here on doctored copies of this repository's schema.json: each kind of change is found
 * and classified, identical schemas report nothing, the version rule refuses a patch release that breaks, and
 * hostile schemas fail with a message or are quoted so that no name forges a line of the notes. Then the script
 * itself, once, in a temporary git repository with tags: the default previous release is the newest `v*` tag that
 * is an ancestor of HEAD, a patch release that breaks exits 1 naming the change, a minor one passes, no tag is
 * the first release, and a shallow clone is refused.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type Change,
  checkBump,
  code,
  diffSchemas,
  isBreaking,
  renderMarkdown,
  SchemaShapeError,
} from "../../tools/schema-diff.mjs";

const root = join(__dirname, "..", "..");
// biome-ignore lint/suspicious/noExplicitAny: a schema doctored by hand; the tests read what they set
type Schema = any;
const schemaText = readFileSync(join(root, "schema.json"), "utf8");
/** A fresh parsed copy of this repository's schema.json. */
const schema = (): Schema => JSON.parse(schemaText);

/**
 * The previous and current schemas of one doctored release, from schema.json: the current one removed a resource, a
 * function, an input and an output, changed an input's type, made an input required and added a required one,
 * changed the provider's default host, dropped an enum value, and added a resource and an input.
 */
function doctored(): { previous: Schema; current: Schema } {
  const previous = schema();
  const current = schema();
  previous.resources["posthog:index:Annotation"] = { inputProperties: { content: { type: "string" } } };
  delete current.functions["posthog:index:getMember"];
  previous.resources["posthog:index:Dashboard"].inputProperties.color = { type: "string" };
  delete current.resources["posthog:index:Project"].properties.name;
  previous.resources["posthog:index:Dashboard"].inputProperties.pinned.type = "string";
  previous.resources["posthog:index:Dashboard"].requiredInputs = [];
  current.resources["posthog:index:Member"].inputProperties.reason = { type: "string" };
  current.resources["posthog:index:Member"].requiredInputs.push("reason");
  previous.provider.inputProperties.host.default = "https://eu.posthog.com";
  previous.types["posthog:index:Level"] = {
    type: "integer",
    enum: [{ value: 1 }, { value: 8 }, { value: 15 }],
  };
  current.types["posthog:index:Level"] = { type: "integer", enum: [{ value: 1 }, { value: 8 }] };
  delete previous.resources["posthog:index:BatchExportPause"];
  current.resources["posthog:index:Invite"].inputProperties.note = { type: "string" };
  return { previous, current };
}

describe("diffSchemas: each change found and classified", () => {
  it("lists the doctored changes in their groups, breaking first, naming token, role and property", () => {
    const { previous, current } = doctored();
    const changes = diffSchemas(previous, current);
    expect(changes).toEqual([
      { group: "removedResources", token: "posthog:index:Annotation" },
      { group: "removedFunctions", token: "posthog:index:getMember" },
      { group: "removedProperties", token: "posthog:index:Project", role: "output", name: "name" },
      { group: "removedProperties", token: "posthog:index:Dashboard", role: "input", name: "color" },
      {
        group: "changedTypes",
        token: "posthog:index:Dashboard",
        role: "input",
        name: "pinned",
        detail: "`string` → `boolean`",
      },
      {
        group: "changedTypes",
        token: "posthog:index:Level",
        role: "enum value",
        name: "15",
        detail: "removed",
      },
      {
        group: "newRequired",
        token: "posthog:index:Member",
        role: "input",
        name: "reason",
        detail: "added, required",
      },
      {
        group: "newRequired",
        token: "posthog:index:Dashboard",
        role: "input",
        name: "name",
        detail: "became required",
      },
      {
        group: "changedDefaults",
        token: "pulumi:providers:posthog",
        role: "input",
        name: "host",
        detail: 'default `"https://eu.posthog.com"` → `"https://us.posthog.com"`',
      },
      { group: "addedResources", token: "posthog:index:BatchExportPause" },
      { group: "addedProperties", token: "posthog:index:Invite", role: "input", name: "note" },
    ]);
    expect(changes.filter(isBreaking)).toHaveLength(9);
  });

  it("renders the section for the release notes, one line per change", () => {
    const { previous, current } = doctored();
    const md = renderMarkdown("0.1.0", diffSchemas(previous, current));
    expect(md.split("\n").slice(0, 2)).toEqual(["## Schema changes since v0.1.0", ""]);
    expect(md).toContain("### Breaking\n\n**Removed resources**\n\n- `posthog:index:Annotation`\n");
    expect(md).toContain("- `posthog:index:Dashboard` input `pinned`: `string` → `boolean`\n");
    expect(md).toContain("### Not breaking\n\n**Added resources**\n\n- `posthog:index:BatchExportPause`\n");
    expect(md.match(/^- /gm)).toHaveLength(11);
  });

  it("sees changes of items, map values, oneOf, const and language overrides", () => {
    const previous = schema();
    const current = schema();
    const inputs = (s: Schema) => s.resources["posthog:index:Dashboard"].inputProperties;
    inputs(previous).tags.items = { type: "integer" };
    inputs(previous).templateJson.oneOf[1].additionalProperties = { type: "string" };
    inputs(previous).projectId.oneOf = [{ type: "integer" }];
    inputs(previous).name.const = "x";
    inputs(current).description.language = { csharp: { name: "Text" } };
    expect(diffSchemas(previous, current).map((c) => `${c.name}: ${c.detail}`)).toEqual([
      "tags: `array<integer>` → `array<string>`",
      "projectId: `integer` → `integer | string`",
      "templateJson: `map<string> | string` → `map<pulumi.json#/Any> | string`",
      'name: const `"x"` → `none`',
      'description: language `none` → `{"csharp":{"name":"Text"}}`',
    ]);
  });

  it("reports nothing for identical schemas, nor for a changed description", () => {
    expect(diffSchemas(schema(), schema())).toEqual([]);
    const current = schema();
    current.resources["posthog:index:Dashboard"].inputProperties.name.description = "Another text.";
    expect(diffSchemas(schema(), current)).toEqual([]);
    expect(renderMarkdown("0.1.0", [])).toBe(
      "## Schema changes since v0.1.0\n\nNone: no resource, function, type or property changed.\n",
    );
  });
});

describe("checkBump: a breaking change needs a minor version under 1.0, a major one from 1.0", () => {
  it.each([
    ["0.1.0", "0.1.1", false, "0.2.0"],
    ["0.1.0", "0.1.0", false, "0.2.0"],
    ["0.1.0", "0.1.1-alpha.1", false, "0.2.0"],
    ["0.1.0", "0.2.0", true, undefined],
    ["0.1.0", "1.0.0", true, undefined],
    ["1.2.3", "1.2.4", false, "2.0.0"],
    ["1.2.3", "1.3.0", false, "2.0.0"],
    ["1.2.3", "2.0.0", true, undefined],
  ])("%s → %s: allowed %s", (previous, next, ok, needed) => {
    const verdict = checkBump(previous, next);
    expect(verdict.ok).toBe(ok);
    if (!verdict.ok) expect(verdict.needed).toBe(needed);
  });

  it("refuses what is not a version", () => {
    expect(() => checkBump("0.1.0", "next")).toThrow("not a version x.y.z: `next`");
  });
});

describe("hostile schemas: a clear error, or names quoted so that they cannot forge a line", () => {
  it.each([
    [null, "previous schema: the schema is not a JSON object"],
    [[], "previous schema: the schema is not a JSON object"],
    [{ resources: [] }, "previous schema: resources is not a JSON object"],
    [{ resources: { "a\nb": null } }, "previous schema: resources.`a\\u000ab` is not a JSON object"],
    [
      { functions: { f: { inputs: { required: "x" } } } },
      "previous schema: functions.`f`.inputs.required is not",
    ],
    [{ types: { t: { enum: "x" } } }, "previous schema: types.`t`.enum is not a list"],
  ])("previous %j fails naming the path", (previous, message) => {
    expect(() => diffSchemas(previous, schema())).toThrow(SchemaShapeError);
    expect(() => diffSchemas(previous, schema())).toThrow(message);
  });

  it("refuses a property that is not an object, a type that is not a string, nesting without end", () => {
    const current = schema();
    current.resources["posthog:index:Dashboard"].inputProperties.name = null;
    expect(() => diffSchemas(schema(), current)).toThrow(
      "current posthog:index:Dashboard.input.name is not a JSON object",
    );
    current.resources["posthog:index:Dashboard"].inputProperties.name = { type: 7 };
    expect(() => diffSchemas(schema(), current)).toThrow("name.type is not a string");
    let deep: Schema = { type: "string" };
    for (let i = 0; i < 40; i++) deep = { type: "array", items: deep };
    current.resources["posthog:index:Dashboard"].inputProperties.name = deep;
    expect(() => diffSchemas(schema(), current)).toThrow("nests deeper than 32 levels");
  });

  it("takes missing sections as empty", () => {
    const changes = diffSchemas({}, { resources: { "posthog:index:A": {} }, functions: {} });
    expect(changes).toEqual([{ group: "addedResources", token: "posthog:index:A" }]);
  });

  it("quotes names with newlines, controls and backticks as one code span on one line", () => {
    const names = [
      "x\n## Forged heading",
      "a`b",
      "``",
      "`start",
      "bidi\u202eevil\u2028",
      "tab\there\r\n- item",
    ];
    const current = schema();
    for (const name of names) current.resources[name] = { inputProperties: { [name]: { type: name } } };
    current.resources["posthog:index:Dashboard"].inputProperties.name = { $ref: "#/types/`x\n- forged" };
    const changes: Change[] = diffSchemas(schema(), current);
    const md = renderMarkdown("0.1.0", changes);
    expect(md.split("\n").filter((l) => /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(l))).toEqual([]);
    expect(md.match(/^- /gm)).toHaveLength(changes.length);
    expect(md.split("\n").filter((l) => l !== "" && !/^(- |### |## |\*\*)/.test(l))).toEqual([]);
    expect(md).toContain("- `x\\u000a## Forged heading`\n");
    expect(md).toContain("- ``a`b``\n");
    expect(md).toContain("- ``` `` ```\n");
    expect(md).toContain("- `` `start ``\n");
    expect(md).toContain("- `bidi\\u202eevil\\u2028`\n");
    expect(md).toContain("input `name`: `string` → ``#/types/`x\\u000a- forged``\n");
    expect(code("")).toBe("(empty)");
    expect(code("back\\slash")).toBe("`back\\\\slash`");
  });
});

/** Temporary folders made here, removed after the file. */
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** `git args…` in `dir` (no signing, a fixed author); its stdout; throws on failure. */
function git(dir: string, ...args: string[]): string {
  const r = spawnSync(
    "git",
    [
      "-c",
      "user.name=t",
      "-c",
      "user.email=t@example.com",
      "-c",
      "commit.gpgsign=false",
      "-c",
      "tag.gpgsign=false",
      ...args,
    ],
    { cwd: dir, encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/**
 * A git repository holding the script (as tools/schema-diff.mts), a package.json of `version` and schema.json:
 * `schemas` committed in turn, each commit then tagged with its `tag` (if any).
 */
function repository(version: string, schemas: Array<{ schema: Schema; tag?: string }>): string {
  const dir = mkdtempSync(join(tmpdir(), "schema-diff-"));
  made.push(dir);
  mkdirSync(join(dir, "tools"));
  cpSync(join(root, "tools", "schema-diff.mts"), join(dir, "tools", "schema-diff.mts"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "x", version }));
  git(dir, "init", "-q", "-b", "main");
  for (const [i, { schema: s, tag }] of schemas.entries()) {
    writeFileSync(join(dir, "schema.json"), JSON.stringify(s));
    git(dir, "add", "-A");
    git(dir, "commit", "-q", "-m", `schema ${i}`);
    if (tag) git(dir, "tag", tag);
  }
  return dir;
}

/** `node tools/schema-diff.mts args…` in `dir`, as `npm run schema-diff -- args…` runs it. */
const run = (dir: string, ...args: string[]) =>
  spawnSync(process.execPath, [join(dir, "tools", "schema-diff.mts"), ...args], {
    cwd: dir,
    encoding: "utf8",
  });

describe("the script in a git repository (npm run schema-diff)", () => {
  it("compares with the newest v* tag that is an ancestor of HEAD, and refuses a patch release that breaks", () => {
    const { previous, current } = doctored();
    const older = schema();
    older.resources["posthog:index:Older"] = {};
    const dir = repository("0.1.1", [
      { schema: older, tag: "v0.0.9" },
      { schema: previous, tag: "v0.1.0" },
    ]);
    // A later tag off HEAD's history, and a prerelease tag on it: neither is the previous release.
    git(dir, "checkout", "-q", "-b", "side");
    writeFileSync(join(dir, "schema.json"), JSON.stringify(schema()));
    git(dir, "commit", "-q", "-am", "side");
    git(dir, "tag", "v0.5.0");
    git(dir, "checkout", "-q", "main");
    writeFileSync(join(dir, "schema.json"), JSON.stringify(current));
    git(dir, "commit", "-q", "-am", "doctored");
    git(dir, "tag", "v0.1.1-rc.1");

    const patch = run(dir, "--markdown", "dist/schema-changes.md");
    expect(patch.stderr).toContain("version 0.1.1 breaks the schema of 0.1.0 (schema.json at v0.1.0)");
    expect(patch.stderr).toContain("  - Removed resources: `posthog:index:Annotation`\n");
    expect(patch.stderr).toContain("  - Changed defaults: `pulumi:providers:posthog` input `host`");
    expect(patch.stderr).toContain("Release it as 0.2.0");
    expect(patch.status).toBe(1);
    const md = readFileSync(join(dir, "dist", "schema-changes.md"), "utf8");
    expect(md).toBe(renderMarkdown("0.1.0", diffSchemas(previous, current)));
    expect(patch.stdout).toBe(md);

    const minor = run(dir, "--version", "0.2.0");
    expect([minor.status, minor.stdout]).toEqual([0, md]);
    const older2 = run(dir, "--previous", "v0.0.9", "--version", "0.2.0");
    expect(older2.stdout).toContain("## Schema changes since v0.0.9\n");
    expect(older2.stdout).toContain("- `posthog:index:Older`\n");
  });

  it("says so for the first release (no tag), and refuses a shallow clone", () => {
    const dir = repository("0.1.0", [{ schema: schema() }]);
    const first = run(dir, "--markdown", "notes.md");
    expect(first.stdout).toContain("The first release: there is no earlier release");
    expect(first.status).toBe(0);
    expect(readFileSync(join(dir, "notes.md"), "utf8")).toBe(first.stdout);

    const shallow = mkdtempSync(join(tmpdir(), "schema-diff-shallow-"));
    made.push(shallow);
    git(dir, "tag", "v0.0.1");
    git(shallow, "clone", "-q", "--depth", "1", `file://${dir}`, "clone");
    const refused = run(join(shallow, "clone"));
    expect(refused.stderr).toContain("shallow clone");
    expect(refused.stderr).toContain("fetch-depth: 0");
    expect(refused.status).toBe(2);
  });
});
