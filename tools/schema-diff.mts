#!/usr/bin/env node
/**
 * `npm run schema-diff -- [--previous <git-ref> | --previous-file <schema.json>] [--version <x.y.z>] [--markdown FILE]`:
 * what schema.json changes since the previous release, for the release notes (issue 51, item 5), and a refusal of a
 * patch release that breaks.
 *
 * The previous schema: `git show <ref>:schema.json` of `--previous <ref>`, the file `--previous-file`, else (the
 * default) that of the newest tag `v<x.y.z>` (by version; prerelease tags such as `v0.2.0-alpha.1` are skipped)
 * that is an ancestor of HEAD and is not the version released. No such tag: the first release; it says so, writes
 * that to `--markdown` and exits 0. A shallow clone (actions/checkout's default depth 1) has no tags to look at: it
 * exits 2 asking for `fetch-depth: 0` or `--previous`. The version released is `--version`, else package.json's;
 * the previous one is the tag's (`--previous v<x.y.z>` too), else the previous schema's `version`.
 *
 * Compared (by {@link diffSchemas}, a pure function over the two parsed schemas): the resources, the functions, the
 * provider (`pulumi:providers:<name>`) and the object and enum types, each by token. Breaking: removed resources,
 * functions and types; removed properties (inputs and outputs; a type's properties); changed property types (`type`,
 * `$ref`, `items`, `additionalProperties`, `oneOf`; an enum type's removed values); new required inputs (an added
 * input that is required, or an input that became required); changed defaults (`default`, `const`, `language`).
 * Not breaking: added resources, functions, types, properties and enum values. Descriptions are not compared, nor
 * `config` (the provider's inputs are the same settings).
 *
 * Prints the section "Schema changes since v<prev>" (Markdown: each change a list item naming the token and the
 * property as code spans, e.g. `` `posthog:index:Dashboard` input `name`: `string` → `integer` ``; names are quoted
 * with control characters escaped, so no name can forge a line), and writes it to `--markdown FILE` when given, to
 * append to the release notes.
 *
 * The version rule ({@link checkBump}): a breaking change needs a new major version, or while under 1.0 a new minor
 * one. That is semver's 0.x rule as npm applies it: semver (item 4) lets anything change in 0.y.z, and npm's caret
 * range, which `npm install` writes, takes `^0.1.0` as `>=0.1.0 <0.2.0`, so a user gets every 0.1.z patch without
 * asking and only a minor (under 1.0) or a major may need something from them; CHANGELOG.md promises the same.
 * Hence a patch release that breaks fails, and from 1.0 a minor one too (semver items 7 and 8).
 *
 * Exit status: 0; 1 when the version released is too small a bump for its breaking changes (each named on stderr,
 * with the version to set instead or the advice to restore what was removed or changed; `--markdown` is written
 * first); 2 with one message when an argument, git, a file or a schema is wrong. Run directly by Node 24 (type
 * stripping); imports none of the project's modules.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";

/** The groups a change falls in, in the order they are listed; each is breaking or not. */
export const GROUPS = [
  { id: "removedResources", title: "Removed resources", breaking: true },
  { id: "removedFunctions", title: "Removed functions", breaking: true },
  { id: "removedTypes", title: "Removed types", breaking: true },
  { id: "removedProperties", title: "Removed properties", breaking: true },
  { id: "changedTypes", title: "Changed property types", breaking: true },
  { id: "newRequired", title: "New required inputs", breaking: true },
  { id: "changedDefaults", title: "Changed defaults", breaking: true },
  { id: "addedResources", title: "Added resources", breaking: false },
  { id: "addedFunctions", title: "Added functions", breaking: false },
  { id: "addedTypes", title: "Added types", breaking: false },
  { id: "addedProperties", title: "Added properties", breaking: false },
] as const;

/** A group's id, e.g. `removedProperties`. */
export type GroupId = (typeof GROUPS)[number]["id"];

/** One difference between two schemas. */
export interface Change {
  group: GroupId;
  /** The token: `posthog:index:Dashboard`, `pulumi:providers:posthog`. */
  token: string;
  /** What the name is of the token: `input`, `output`, `property` (of a type), `enum value`; absent for the token. */
  role?: string;
  /** The property's name (or the enum value, as JSON). */
  name?: string;
  /** What changed, each part quoted by {@link code}: e.g. `` `string` → `integer` ``. */
  detail?: string;
}

/** Thrown for a schema that is not a Pulumi package schema: its message names the path and what is wrong. */
export class SchemaShapeError extends Error {}

type Json = Record<string, unknown>;

/**
 * Characters shown escaped: controls (C0, DEL, C1: newlines among them), format characters (bidirectional
 * overrides, zero-width ones) and the line and paragraph separators.
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/** `text` with backslashes doubled and each {@link HIDDEN} character written `\uXXXX`: one visible line. */
export function visible(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(HIDDEN, (c) => {
    const hex = (c.codePointAt(0) ?? 0).toString(16);
    return hex.length > 4 ? `\\u{${hex}}` : `\\u${hex.padStart(4, "0")}`;
  });
}

/**
 * `text` as one Markdown code span (CommonMark): {@link visible}, between fences of one backtick more than its
 * longest run of backticks, padded with a space when it starts or ends with a backtick or a space; `(empty)` for "".
 */
export function code(text: string): string {
  if (text === "") return "(empty)";
  const shown = visible(text);
  const longest = Math.max(0, ...(shown.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  const pad = /^[` ]|[` ]$/.test(shown) ? " " : "";
  return `${fence}${pad}${shown}${pad}${fence}`;
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** `value` at `path` as an object (absent: `{}`); else a {@link SchemaShapeError}. */
function section(value: unknown, path: string): Json {
  if (value === undefined) return {};
  if (!isObject(value)) throw new SchemaShapeError(`${path} is not a JSON object`);
  return value;
}

/** `value` at `path` as a list of names (absent: empty); else a {@link SchemaShapeError}. */
function names(value: unknown, path: string): Set<string> {
  if (value === undefined) return new Set();
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    throw new SchemaShapeError(`${path} is not a list of strings`);
  }
  return new Set(value as string[]);
}

/** What is compared of one token: its property sets by role, the required names of each, an enum's values. */
interface Entity {
  kind: "resource" | "function" | "type" | "provider";
  roles: Array<{ role: string; properties: Json; required: Set<string>; requiredIsInput: boolean }>;
  /** An enum type's values, each as JSON. */
  enumValues?: string[];
}

/** The entity of a resource or the provider: `inputProperties` (`requiredInputs`), `properties` (`required`). */
function resourceEntity(kind: "resource" | "provider", spec: Json, path: string): Entity {
  return {
    kind,
    roles: [
      {
        role: "input",
        properties: section(spec.inputProperties, `${path}.inputProperties`),
        required: names(spec.requiredInputs, `${path}.requiredInputs`),
        requiredIsInput: true,
      },
      {
        role: "output",
        properties: section(spec.properties, `${path}.properties`),
        required: names(spec.required, `${path}.required`),
        requiredIsInput: false,
      },
    ],
  };
}

/** The entity of a function: `inputs.properties` (`inputs.required`), `outputs.properties` (`outputs.required`). */
function functionEntity(spec: Json, path: string): Entity {
  const inputs = section(spec.inputs, `${path}.inputs`);
  const outputs = section(spec.outputs, `${path}.outputs`);
  return {
    kind: "function",
    roles: [
      {
        role: "input",
        properties: section(inputs.properties, `${path}.inputs.properties`),
        required: names(inputs.required, `${path}.inputs.required`),
        requiredIsInput: true,
      },
      {
        role: "output",
        properties: section(outputs.properties, `${path}.outputs.properties`),
        required: names(outputs.required, `${path}.outputs.required`),
        requiredIsInput: false,
      },
    ],
  };
}

/** The entity of a type: an object type's `properties` (`required`), or an enum type's values. */
function typeEntity(spec: Json, path: string): Entity {
  if (spec.enum !== undefined) {
    if (!Array.isArray(spec.enum)) throw new SchemaShapeError(`${path}.enum is not a list`);
    const values = spec.enum.map((e, i) => {
      if (!isObject(e)) throw new SchemaShapeError(`${path}.enum[${i}] is not a JSON object`);
      return JSON.stringify(e.value ?? null);
    });
    return { kind: "type", roles: [], enumValues: values };
  }
  return {
    kind: "type",
    roles: [
      {
        role: "property",
        properties: section(spec.properties, `${path}.properties`),
        required: names(spec.required, `${path}.required`),
        requiredIsInput: true,
      },
    ],
  };
}

/**
 * Every token of `schema` and what is compared of it, by token. Sections that are absent count as empty; a schema,
 * section or entry of the wrong JSON type throws a {@link SchemaShapeError} naming it.
 */
function entities(schema: unknown): Map<string, Entity> {
  if (!isObject(schema)) throw new SchemaShapeError("the schema is not a JSON object");
  const out = new Map<string, Entity>();
  const each = (key: string, make: (spec: Json, path: string) => Entity) => {
    for (const [token, spec] of Object.entries(section(schema[key], key))) {
      const path = `${key}.${code(token)}`;
      out.set(token, make(section(spec, path), path));
    }
  };
  each("resources", (spec, path) => resourceEntity("resource", spec, path));
  each("functions", functionEntity);
  each("types", typeEntity);
  if (schema.provider !== undefined) {
    const name = typeof schema.name === "string" ? schema.name : "";
    out.set(
      `pulumi:providers:${name}`,
      resourceEntity("provider", section(schema.provider, "provider"), "provider"),
    );
  }
  return out;
}

/** How deep `items` and `additionalProperties` may nest before a schema is refused. */
const MAX_DEPTH = 32;

/**
 * A property's type as one readable string: its `$ref`; `array<…>` of `items`; `map<…>` of `additionalProperties`;
 * the `oneOf` members sorted and joined by ` | `; else its `type`. Throws a {@link SchemaShapeError} for a property
 * that is not an object, a `type` or `$ref` that is not a string, or nesting deeper than {@link MAX_DEPTH}.
 */
function typeOf(property: unknown, path: string, depth = 0): string {
  if (depth > MAX_DEPTH) throw new SchemaShapeError(`${path} nests deeper than ${MAX_DEPTH} levels`);
  if (!isObject(property)) throw new SchemaShapeError(`${path} is not a JSON object`);
  const { type, $ref, items, additionalProperties, oneOf } = property;
  if (type !== undefined && typeof type !== "string")
    throw new SchemaShapeError(`${path}.type is not a string`);
  if ($ref !== undefined) {
    if (typeof $ref !== "string") throw new SchemaShapeError(`${path}.$ref is not a string`);
    return $ref;
  }
  if (oneOf !== undefined) {
    if (!Array.isArray(oneOf)) throw new SchemaShapeError(`${path}.oneOf is not a list`);
    const members = oneOf.map((m, i) => typeOf(m, `${path}.oneOf[${i}]`, depth + 1));
    return [...new Set(members)].sort().join(" | ");
  }
  if (type === "array")
    return `array<${items === undefined ? "?" : typeOf(items, `${path}.items`, depth + 1)}>`;
  if (type === "object" && additionalProperties !== undefined) {
    return `map<${typeOf(additionalProperties, `${path}.additionalProperties`, depth + 1)}>`;
  }
  return type ?? "?";
}

/** JSON with object keys sorted, so that two equal values read the same; `none` for undefined. */
function canonical(value: unknown): string {
  if (value === undefined) return "none";
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : isObject(v)
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort(v[k])]),
          )
        : v;
  return JSON.stringify(sort(value));
}

/** The fields whose change is listed under "Changed defaults". */
const DEFAULT_FIELDS = ["default", "const", "language"] as const;

/** The changes of one property present in both schemas: its type, its defaults, whether it became required. */
function propertyChanges(
  at: { token: string; role: string; name: string; path: string },
  before: unknown,
  after: unknown,
  becameRequired: boolean,
): Change[] {
  const { token, role, name } = at;
  const out: Change[] = [];
  const was = typeOf(before, `previous ${at.path}`);
  const is = typeOf(after, `current ${at.path}`);
  if (was !== is)
    out.push({ group: "changedTypes", token, role, name, detail: `${code(was)} → ${code(is)}` });
  for (const field of DEFAULT_FIELDS) {
    const old = canonical((before as Json)[field]);
    const now = canonical((after as Json)[field]);
    if (old !== now) {
      out.push({
        group: "changedDefaults",
        token,
        role,
        name,
        detail: `${field} ${code(old)} → ${code(now)}`,
      });
    }
  }
  if (becameRequired) out.push({ group: "newRequired", token, role, name, detail: "became required" });
  return out;
}

/** The changes between two entities of one token: properties removed, added or changed, enum values. */
function entityChanges(token: string, before: Entity, after: Entity): Change[] {
  const out: Change[] = [];
  for (const now of after.roles) {
    const old = before.roles.find((r) => r.role === now.role);
    if (!old) continue;
    const { role } = now;
    for (const name of Object.keys(old.properties)) {
      if (!Object.hasOwn(now.properties, name)) out.push({ group: "removedProperties", token, role, name });
    }
    for (const [name, property] of Object.entries(now.properties)) {
      const path = `${token}.${role}.${name}`;
      const required = now.requiredIsInput && now.required.has(name);
      if (!Object.hasOwn(old.properties, name)) {
        typeOf(property, `current ${visible(path)}`);
        out.push(
          required
            ? { group: "newRequired", token, role, name, detail: "added, required" }
            : { group: "addedProperties", token, role, name },
        );
        continue;
      }
      const at = { token, role, name, path: visible(path) };
      out.push(...propertyChanges(at, old.properties[name], property, required && !old.required.has(name)));
    }
  }
  const was = new Set(before.enumValues ?? []);
  const is = new Set(after.enumValues ?? []);
  for (const v of was)
    if (!is.has(v))
      out.push({ group: "changedTypes", token, role: "enum value", name: v, detail: "removed" });
  for (const v of is)
    if (!was.has(v)) out.push({ group: "addedProperties", token, role: "enum value", name: v });
  return out;
}

const REMOVED = { resource: "removedResources", function: "removedFunctions", type: "removedTypes" } as const;
const ADDED = { resource: "addedResources", function: "addedFunctions", type: "addedTypes" } as const;

/**
 * What changed from `previous` to `current` (two parsed Pulumi package schemas), each change in its group
 * ({@link GROUPS}), in the order of {@link GROUPS}, then of the current (else previous) schema. Pure. Throws a
 * {@link SchemaShapeError} naming the schema (`previous`, `current`) and the path when one is not a package
 * schema (null, a section or property of the wrong JSON type, nesting deeper than {@link MAX_DEPTH}).
 */
export function diffSchemas(previous: unknown, current: unknown): Change[] {
  const read = (schema: unknown, which: string) => {
    try {
      return entities(schema);
    } catch (e) {
      if (e instanceof SchemaShapeError) throw new SchemaShapeError(`${which} schema: ${e.message}`);
      throw e;
    }
  };
  const before = read(previous, "previous");
  const after = read(current, "current");
  const out: Change[] = [];
  for (const [token, old] of before) {
    if (!after.has(token) && old.kind !== "provider") out.push({ group: REMOVED[old.kind], token });
  }
  for (const [token, now] of after) {
    const old = before.get(token);
    if (old === undefined) {
      if (now.kind !== "provider") out.push({ group: ADDED[now.kind], token });
    } else {
      out.push(...entityChanges(token, old, now));
    }
  }
  const order = (c: Change) => GROUPS.findIndex((g) => g.id === c.group);
  return out
    .map((c, i) => ({ c, i }))
    .sort((a, b) => order(a.c) - order(b.c) || a.i - b.i)
    .map(({ c }) => c);
}

/** Whether a change is breaking (its group's). */
export const isBreaking = (c: Change) => GROUPS.find((g) => g.id === c.group)?.breaking === true;

/** One change as one line: `` `token` input `name`: detail ``; every name quoted by {@link code}. */
export function changeLine(c: Change): string {
  const subject = c.role === undefined ? "" : ` ${c.role} ${code(c.name ?? "")}`;
  return `${code(c.token)}${subject}${c.detail === undefined ? "" : `: ${c.detail}`}`;
}

/** A version `x.y.z` with an optional prerelease (`-alpha.1`) and build (`+sha`). */
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/**
 * The Markdown section for the release notes: `## Schema changes since v<previous>`, then `### Breaking` and
 * `### Not breaking`, each group a bold title and a list of {@link changeLine}s; a sentence when nothing changed.
 */
export function renderMarkdown(previous: string, changes: readonly Change[]): string {
  const since = SEMVER.test(previous) ? `v${previous}` : code(previous);
  const lines = [`## Schema changes since ${since}`, ""];
  if (changes.length === 0)
    return `${[...lines, "None: no resource, function, type or property changed."].join("\n")}\n`;
  for (const breaking of [true, false]) {
    const groups = GROUPS.filter((g) => g.breaking === breaking);
    const inSection = changes.filter((c) => groups.some((g) => g.id === c.group));
    if (inSection.length === 0) continue;
    lines.push(breaking ? "### Breaking" : "### Not breaking", "");
    for (const g of groups) {
      const of = inSection.filter((c) => c.group === g.id);
      if (of.length > 0) lines.push(`**${g.title}**`, "", ...of.map((c) => `- ${changeLine(c)}`), "");
    }
  }
  return `${lines.join("\n").trimEnd()}\n`;
}

/** `[major, minor, patch]` of a {@link SEMVER} version; undefined for anything else. */
export function versionParts(version: string): [number, number, number] | undefined {
  const m = SEMVER.exec(version);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** Whether a bump from `previous` to `next` may break, and the smallest version that may. */
export type Verdict = { ok: true; why: string } | { ok: false; why: string; needed: string };

/**
 * Whether `next` may carry breaking changes over `previous` (both {@link SEMVER}): from 1.0 only a new major may;
 * under 1.0 a new minor or major may (semver's 0.x rule as npm's caret ranges apply it: see the file's docstring).
 * So a patch bump never may, nor (from 1.0) a minor one, nor a version not above `previous`. Pure; throws for a
 * version that is not {@link SEMVER}.
 */
export function checkBump(previous: string, next: string): Verdict {
  const p = versionParts(previous);
  const n = versionParts(next);
  if (!p || !n) throw new Error(`not a version x.y.z: ${code(p ? next : previous)}`);
  const [major, minor] = p;
  if (major >= 1) {
    if (n[0] > major) return { ok: true, why: `${next} is a new major version over ${previous}` };
    return {
      ok: false,
      why: `${next} is not a new major version over ${previous}`,
      needed: `${major + 1}.0.0`,
    };
  }
  if (n[0] > 0 || n[1] > minor) {
    return {
      ok: true,
      why: `${next} is a new ${n[0] > 0 ? "major" : "minor"} version over ${previous} (under 1.0)`,
    };
  }
  return {
    ok: false,
    why: `${next} is not a new minor version over ${previous} (under 1.0 a breaking change needs one)`,
    needed: `0.${minor + 1}.0`,
  };
}

/** The previous schema to compare with: its version, how it was found, and its parsed JSON. */
interface Previous {
  version: string;
  source: string;
  schema: unknown;
}

/** Thrown for what the user must fix (exit 2): an argument, git, a file. */
class UsageError extends Error {}

/** `git args…` in `root`: its stdout, or undefined when it fails (`must`: a {@link UsageError} naming it instead). */
function git(root: string, args: string[], must = true): string | undefined {
  const r = spawnSync("git", args, { cwd: root, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  if (r.status === 0) return r.stdout;
  if (!must) return undefined;
  const why = (r.error?.message ?? r.stderr ?? "").trim().split("\n")[0];
  throw new UsageError(`\`git ${args.join(" ")}\` failed in ${root}: ${why}`);
}

/** `text` (from `source`) parsed as JSON; a {@link UsageError} naming the source when it is not JSON. */
function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${source} is not JSON: ${(e as Error).message}`);
  }
}

/**
 * The newest tag `v<x.y.z>` (no prerelease) that is an ancestor of HEAD and not `v<version>`; undefined when there
 * is none. A {@link UsageError} in a shallow clone (no tags to see) or outside a git repository.
 */
export function previousTag(root: string, version: string): string | undefined {
  if (git(root, ["rev-parse", "--is-shallow-repository"])?.trim() === "true") {
    throw new UsageError(
      "this is a shallow clone: its history and tags are missing, so the previous release cannot be found. Fetch them (`git fetch --unshallow --tags`; in a workflow, actions/checkout with `fetch-depth: 0`), or name it with --previous <git-ref> or --previous-file <schema.json>",
    );
  }
  const tags = (git(root, ["tag", "--merged", "HEAD", "--list", "v*"]) ?? "")
    .split("\n")
    .map((t) => t.trim())
    .filter((t) => /^v\d+\.\d+\.\d+$/.test(t) && versionParts(t.slice(1)) && t !== `v${version}`);
  const key = (t: string) => versionParts(t.slice(1)) ?? [0, 0, 0];
  tags.sort((a, b) => {
    const x = key(a);
    const y = key(b);
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
  });
  return tags.at(-1);
}

/** The previous schema's version: `ref`'s when it is `v<x.y.z>`, else the schema's `version`; else a UsageError. */
function versionOf(schema: unknown, ref: string | undefined, source: string): string {
  if (ref !== undefined && /^v/.test(ref) && versionParts(ref.slice(1))) return ref.slice(1);
  if (!isObject(schema)) throw new SchemaShapeError(`${source}: the schema is not a JSON object`);
  const v = schema.version;
  if (typeof v === "string" && versionParts(v)) return v;
  throw new UsageError(`${source} has no \`version\` x.y.z: name a tag v<x.y.z> with --previous instead`);
}

/** The previous schema by the options (see the file's docstring); undefined for the first release. */
function findPrevious(
  root: string,
  opts: { ref?: string; file?: string },
  version: string,
): Previous | undefined {
  if (opts.file !== undefined) {
    const source = opts.file;
    let text: string;
    try {
      text = readFileSync(resolve(opts.file), "utf8");
    } catch (e) {
      throw new UsageError(`cannot read --previous-file ${opts.file}: ${(e as Error).message}`);
    }
    const schema = parseJson(text, source);
    return { version: versionOf(schema, undefined, source), source, schema };
  }
  const ref = opts.ref ?? previousTag(root, version);
  if (ref === undefined) return undefined;
  const source = `schema.json at ${ref}`;
  const text = git(root, ["show", `${ref}:schema.json`], false);
  if (text === undefined) {
    throw new UsageError(
      `${ref} has no schema.json (\`git show ${ref}:schema.json\` failed): name another with --previous`,
    );
  }
  const schema = parseJson(text, source);
  return { version: versionOf(schema, ref, source), source, schema };
}

/** Writes `text` to `file` (its folder made), or a UsageError naming it. */
function writeMarkdown(file: string, text: string): void {
  try {
    mkdirSync(dirname(resolve(file)), { recursive: true });
    writeFileSync(resolve(file), text);
  } catch (e) {
    throw new UsageError(`cannot write --markdown ${file}: ${(e as Error).message}`);
  }
}

/** The version released: `--version`, else package.json's; a UsageError when it is not x.y.z. */
function releasedVersion(root: string, given: string | undefined): string {
  const version =
    given ?? (parseJson(readFileSync(join(root, "package.json"), "utf8"), "package.json") as Json).version;
  if (typeof version !== "string" || !versionParts(version)) {
    throw new UsageError(
      `the version released is not x.y.z: ${code(String(version))} (--version or package.json)`,
    );
  }
  return version;
}

/** The command: compares, prints, writes `--markdown`; returns the exit status (see the file's docstring). */
function main(root: string, argv: string[]): number {
  const { values } = parseArgs({
    args: argv,
    options: {
      previous: { type: "string" },
      "previous-file": { type: "string" },
      version: { type: "string" },
      markdown: { type: "string" },
    },
    strict: true,
  });
  if (values.previous !== undefined && values["previous-file"] !== undefined) {
    throw new UsageError("give --previous <git-ref> or --previous-file <schema.json>, not both");
  }
  const version = releasedVersion(root, values.version);
  const opts = {
    ...(values.previous !== undefined ? { ref: values.previous } : {}),
    ...(values["previous-file"] !== undefined ? { file: values["previous-file"] } : {}),
  };
  const previous = findPrevious(root, opts, version);
  if (previous === undefined) {
    const text = `## Schema changes\n\nThe first release: there is no earlier release (no tag v<x.y.z> before HEAD) to compare with.\n`;
    process.stdout.write(text);
    if (values.markdown !== undefined) writeMarkdown(values.markdown, text);
    return 0;
  }
  const current = parseJson(readFileSync(join(root, "schema.json"), "utf8"), "schema.json");
  let changes: Change[];
  try {
    changes = diffSchemas(previous.schema, current);
  } catch (e) {
    if (!(e instanceof SchemaShapeError)) throw e;
    throw new SchemaShapeError(`${e.message} (previous: ${previous.source}; current: schema.json)`);
  }
  const text = renderMarkdown(previous.version, changes);
  process.stdout.write(text);
  if (values.markdown !== undefined) writeMarkdown(values.markdown, text);
  const breaking = changes.filter(isBreaking);
  if (breaking.length === 0) return 0;
  const verdict = checkBump(previous.version, version);
  if (verdict.ok) {
    process.stderr.write(`schema-diff: ${breaking.length} breaking change(s), allowed: ${verdict.why}\n`);
    return 0;
  }
  process.stderr.write(
    [
      `schema-diff: version ${version} breaks the schema of ${previous.version} (${previous.source}), and ${verdict.why}:`,
      ...breaking.map((c) => `  - ${GROUPS.find((g) => g.id === c.group)?.title}: ${changeLine(c)}`),
      `Release it as ${verdict.needed} (npm version ${verdict.needed} --no-git-tag-version, then npm run schema and npm run gen-sdk), or restore what was removed or changed.`,
      "",
    ].join("\n"),
  );
  return 1;
}

if (import.meta.main) {
  const root = resolve(import.meta.dirname, "..");
  try {
    process.exitCode = main(root, process.argv.slice(2));
  } catch (e) {
    if (
      !(
        e instanceof UsageError ||
        e instanceof SchemaShapeError ||
        (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")
      )
    )
      throw e;
    process.stderr.write(`schema-diff: ${(e as Error).message}\n`);
    process.exitCode = 2;
  }
}
