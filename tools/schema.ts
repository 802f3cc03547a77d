/**
 * The Pulumi package schema of the provider plugin (`schema.json` at the repository root), generated from the
 * resources' zod inputs schemas, so that the plugin, the dynamic SDK and the schema have one source of truth.
 *
 * `npm run schema` writes it; `npm run schema -- --check` writes nothing and exits 1 with a diff when it is stale
 * (both build first and run dist/tools/schema.js). test/plugin/schema.test.ts fails when it is stale.
 *
 * Per resource `<Name>` (type token `posthog:index:<Name>`):
 * - `inputProperties`: each property of its card's `inputs` schema, its type from `z.toJSONSchema(schema, {io: "input"})`
 *   ({@link pulumiType}), its description from the property's JSDoc (read by tools/codegen.ts); `requiredInputs`
 *   from the same JSON schema; the provider applies the defaults (they are in the descriptions, not in the schema,
 *   so no SDK fills them in on its side);
 * - `properties` and `required` (outputs): each property of its card's `outputs` schema (beside the inputs schema in
 *   provider/resources/<kebab>.ts; the same definition gives the SDK class's declarations and the docs' outputs
 *   table), its type from `z.toJSONSchema(schema, {io: "output"})`, its description from its JSDoc; `required`: the
 *   outputs neither optional nor nullable, which the provider always returns (test/provider/outputs-schema.test.ts).
 *   Object types the inputs define are reused. Outputs the providers record for themselves (`adopted`,
 *   `identifiedBy`, `__inputs`, `__resource`) are not in the schema;
 * - `secret: true` for the outputs the plugin always returns as secrets (provider/adapters/plugin: SECRET_OUTPUTS).
 *
 * Unions are flat (`projectId`: integer or string, once). Descriptions are plain text for every language: a
 * `{@link X}` of the sources becomes `X` in backquotes (test/plugin/schema.test.ts scans them for TypeScript).
 *
 * The provider configuration (`config.variables` and the provider's `inputProperties`) lists the settings of
 * provider/client/settings.ts ({@link SETTINGS}) with their types, defaults and environment variables
 * (`defaultInfo.environment`). `version` is package.json's.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { z } from "zod";
import { PACKAGE, SECRET_OUTPUTS, typeToken } from "../provider/adapters/plugin/index";
import { BatchExportSchema } from "../provider/client/batch-exports";
import { AccessControlsSchema, DashboardSchema } from "../provider/client/dashboards";
import { ProjectSchema } from "../provider/client/projects";
import { DEFAULT_FIND_CACHE_MS, DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_HOST } from "../provider/client/settings";
import { SharingSchema } from "../provider/client/sharing";
import * as resources from "../provider/index";
import { LOOKUPS } from "../provider/lookups";
import { LookupArgsSchemas } from "../provider/lookups/args";
import { diff, type InputProperty, type OutputProperty, ROOT, readResources } from "./codegen";

/** A Pulumi schema type reference (`type`, `items`, `additionalProperties`, `$ref`, `oneOf`). */
export interface TypeSpec {
  type?: "string" | "number" | "integer" | "boolean" | "array" | "object";
  items?: TypeSpec;
  additionalProperties?: TypeSpec;
  $ref?: string;
  oneOf?: TypeSpec[];
}

/** A property of the schema: its type, description, whether it is secret, its default (config only). */
export interface PropertySpec extends TypeSpec {
  description?: string;
  secret?: boolean;
  default?: string | number;
  defaultInfo?: { environment: string[] };
}

/** An object type of `types` (a nested input object, e.g. an Invite's `privateProjectAccess` item). */
interface ObjectTypeSpec {
  type: "object";
  description?: string;
  properties: Record<string, PropertySpec>;
  required?: string[];
}

const ANY: TypeSpec = { $ref: "pulumi.json#/Any" };

/** A provider setting: Pulumi config `posthog:<name>`, else its environment variable, else its default. */
export interface Setting {
  name: string;
  env: string;
  /** Its type in the schema: what the setting accepts (provider/client/settings.ts `resolveSettings`). */
  type: "string" | "integer";
  /** The value the provider uses when neither the config nor the environment sets it (none: see description). */
  default?: string | number;
  /**
   * false: the default is said in the description, not given as the schema's `default`. Pulumi's generated SDKs
   * read an integer setting's environment variable as `getEnvNumber(…) || <default>`, so `0` (which turns
   * `findCacheMs` off) would become the default.
   */
  defaultInSchema?: false;
  secret?: boolean;
  description: string;
}

/**
 * The provider settings (provider/client/settings.ts): types as the settings accept them, defaults as
 * `resolveSettings` applies them (test/plugin/schema.test.ts compares both). `apiKey` has no `defaultInfo`: the
 * plugin reads `POSTHOG_API_KEY` in its own process, whereas a generated SDK would read it in the program and send it
 * as a provider input, into the state.
 */
export const SETTINGS: readonly Setting[] = [
  {
    name: "host",
    env: "POSTHOG_HOST",
    type: "string",
    default: DEFAULT_HOST,
    description:
      "The PostHog API base URL, e.g. `https://eu.posthog.com` or a self-hosted origin with its path prefix.",
  },
  {
    name: "apiKey",
    env: "POSTHOG_API_KEY",
    type: "string",
    secret: true,
    description:
      "A personal API key (`phx_…`). Set it as a secret: `pulumi config set --secret posthog:apiKey …`; else the " +
      "provider reads the environment variable `POSTHOG_API_KEY`.",
  },
  {
    name: "organizationId",
    env: "POSTHOG_ORGANIZATION_ID",
    type: "string",
    description:
      'The organization (a UUID, or "@current") the organization-scoped resources live in; default the API key\'s ' +
      "current one.",
  },
  {
    name: "projectId",
    env: "POSTHOG_PROJECT_ID",
    type: "string",
    description:
      "The project of project-scoped resources that declare none: its id, a positive integer written as a string " +
      '(e.g. "12345"), or "@current"; default the API key\'s current one.',
  },
  {
    name: "rateLimit",
    env: "POSTHOG_RATE_LIMIT",
    type: "string",
    default: "480/4800",
    description:
      'The client rate limit per API key, `"<perMinute>/<perHour>"` with positive whole numbers, or `"off"`.',
  },
  {
    name: "maxRateLimitWait",
    env: "POSTHOG_MAX_RATE_LIMIT_WAIT",
    type: "string",
    default: "2m",
    description:
      'The longest wait a 429 answer may name that is waited out: a duration string, whole seconds ("120") or a ' +
      'whole number with the unit s, m or h ("90s", "10m", "1h").',
  },
  {
    name: "retryBaseDelayMs",
    env: "POSTHOG_RETRY_BASE_DELAY_MS",
    type: "integer",
    default: 500,
    defaultInSchema: false,
    description: "The base of the retry backoff, in milliseconds (a whole number).",
  },
  {
    name: "findCacheMs",
    env: "POSTHOG_FIND_CACHE_MS",
    type: "integer",
    default: DEFAULT_FIND_CACHE_MS,
    defaultInSchema: false,
    description:
      "How long a completed list read is reused by later lookups of the process, in milliseconds (a whole " +
      "number; 0 turns it off).",
  },
  {
    name: "headersTimeoutMs",
    env: "POSTHOG_HEADERS_TIMEOUT_MS",
    type: "integer",
    default: DEFAULT_HEADERS_TIMEOUT_MS,
    defaultInSchema: false,
    description:
      "How long a request waits for the response's headers, in milliseconds (a positive whole number). A create " +
      "that times out has an unknown outcome: PostHog may still apply it, and the next `pulumi up` looks for it " +
      "before creating again.",
  },
];

type Json = Record<string, unknown>;

/** The Pulumi type of one JSON schema of scalars (`type` and `enum`/`const`), or undefined for anything else. */
function scalarType(js: Json): TypeSpec | undefined {
  const values = Array.isArray(js.enum) ? js.enum : "const" in js ? [js.const] : undefined;
  const type = js.type;
  if (type === "string" || type === "boolean") return { type };
  if (type === "number" || type === "integer") {
    const integral = type === "integer" || values?.every((v) => Number.isInteger(v)) === true;
    return { type: integral ? "integer" : "number" };
  }
  return undefined;
}

/** `specs` flattened (a `oneOf` in a `oneOf` is its members) without duplicates; one spec as itself, several as `oneOf`. */
function union(specs: TypeSpec[]): TypeSpec {
  const flat = specs.flatMap((s) => s.oneOf ?? [s]);
  const seen = new Map(flat.map((s) => [JSON.stringify(s), s]));
  if ([...seen.values()].some((s) => s.$ref === ANY.$ref)) return ANY;
  // One order whatever the sources' order: integer, number, string, boolean, then arrays, objects, references.
  const rank = (t: TypeSpec) =>
    ["integer", "number", "string", "boolean", "array", "object"].indexOf(t.type ?? "") + 1 || 9;
  const distinct = [...seen.values()].sort((a, b) => rank(a) - rank(b));
  return distinct.length === 1 ? (distinct[0] as TypeSpec) : { oneOf: distinct };
}

/**
 * The Pulumi type of a property's JSON schema (zod's `toJSONSchema`, input side): scalars and their enums as the
 * scalar (the accepted values are in the description), `anyOf` and a list of `type`s as `oneOf`, arrays, maps
 * (`additionalProperties`), objects with declared properties as a type of `types` named `typeName` (added to
 * `types`; with `reuse`, a type already there is kept: an output refers to the type its input defines), anything
 * else as `pulumi.json#/Any`.
 */
export function pulumiType(
  js: Json,
  typeName: string,
  types: Record<string, ObjectTypeSpec>,
  reuse = false,
): TypeSpec {
  // null is no type of its own in Pulumi: a value that may be null is optional.
  const alternatives = ((js.anyOf ?? js.oneOf) as Json[] | undefined)?.filter((a) => a.type !== "null");
  if (alternatives) return union(alternatives.map((a) => pulumiType(a, typeName, types, reuse)));
  if (Array.isArray(js.type)) {
    const kinds = js.type.filter((t) => t !== "null");
    return union(kinds.map((type) => pulumiType({ ...js, type }, typeName, types, reuse)));
  }
  const scalar = scalarType(js);
  if (scalar) return scalar;
  if (js.type === "array" && js.items && typeof js.items === "object") {
    return { type: "array", items: pulumiType(js.items as Json, typeName, types, reuse) };
  }
  if (js.type === "object") {
    const props = js.properties as Record<string, Json> | undefined;
    if (props && Object.keys(props).length > 0) {
      const token = typeToken(typeName);
      if (reuse && types[token]) return { $ref: `#/types/${token}` };
      types[token] = {
        type: "object",
        properties: Object.fromEntries(
          Object.entries(props).map(([k, v]) => [k, pulumiType(v, `${typeName}${pascal(k)}`, types, reuse)]),
        ),
        ...(Array.isArray(js.required) && js.required.length > 0
          ? { required: js.required as string[] }
          : {}),
      };
      return { $ref: `#/types/${token}` };
    }
    const values = js.additionalProperties;
    return {
      type: "object",
      additionalProperties:
        values && typeof values === "object" && Object.keys(values).length > 0
          ? pulumiType(values as Json, `${typeName}Value`, types, reuse)
          : ANY,
    };
  }
  return ANY;
}

/** `created_by` or `privateProjectAccess` → `CreatedBy`, `PrivateProjectAccess` (type names). */
const pascal = (s: string) =>
  s
    .split(/[_-]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");

/**
 * The Pulumi type of an output declared in the SDK class as `pulumi.Output<T>`: `T` of string, number, boolean or
 * string[] (with or without `| null`); anything else `pulumi.json#/Any`.
 */
export function outputType(ts: string): TypeSpec {
  const t = ts
    .split("|")
    .map((p) => p.trim())
    .filter((p) => p !== "null" && p !== "undefined")
    .join(" | ");
  if (t === "string" || t === "boolean" || t === "number") return { type: t };
  if (t === "string[]") return { type: "array", items: { type: "string" } };
  return ANY;
}

/** The text of a JSDoc comment as one paragraph per blank line. */
const paragraphs = (lines: readonly string[]) =>
  lines
    .join("\n")
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s*\n\s*/g, " ").trim())
    .join("\n\n");

/** The card of resource `name` (provider/resources/<kebab>.ts). @throws when the list has no such resource */
function cardOf(name: string) {
  const r = resources.resourceOf(name);
  if (!r) throw new Error(`schema: no resource ${name} in provider/resources/index.ts`);
  return r.card;
}

/** The description of resource `name`, from its card. */
function cardDescription(name: string): string {
  return cardOf(name).description;
}

/** JSDoc of the declarations of a TypeScript file: `<name>` (functions, interfaces, consts) and `<name>.<member>`. */
function docsOf(file: string): Map<string, string> {
  const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const docs = new Map<string, string>();
  const docOf = (node: ts.Node) => {
    const last = ts
      .getJSDocCommentsAndTags(node)
      .filter((d): d is ts.JSDoc => ts.isJSDoc(d))
      .at(-1);
    if (!last) return undefined;
    const lines = sf.text
      .slice(last.pos, last.end)
      .replace(/^\/\*\*/, "")
      .replace(/\*\/$/, "")
      .split("\n")
      .map((l) => l.replace(/^\s*\* ?/, "").trim());
    const untilTags = lines.findIndex((l) => l.startsWith("@"));
    return paragraphs(untilTags < 0 ? lines : lines.slice(0, untilTags)).trim() || undefined;
  };
  const note = (key: string, node: ts.Node) => {
    const d = docOf(node);
    if (d !== undefined) docs.set(key, d);
  };
  const members = (owner: string, node: ts.Node) => {
    const visit = (n: ts.Node): void => {
      if ((ts.isPropertySignature(n) || ts.isPropertyAssignment(n)) && ts.isIdentifier(n.name))
        note(`${owner}.${n.name.text}`, n);
      if (!ts.isPropertyAssignment(n)) ts.forEachChild(n, visit);
    };
    ts.forEachChild(node, visit);
  };
  for (const st of sf.statements) {
    if ((ts.isFunctionDeclaration(st) || ts.isInterfaceDeclaration(st)) && st.name) {
      note(st.name.text, st);
      members(st.name.text, st);
    }
    if (ts.isVariableStatement(st))
      for (const d of st.declarationList.declarations)
        if (ts.isIdentifier(d.name)) {
          note(d.name.text, st);
          if (d.initializer) members(d.name.text, d.initializer);
        }
  }
  return docs;
}

/** Where each lookup's result is declared: a zod schema of the client, or a plain interface (provider/lookups/types.ts). */
const LOOKUP_RESULTS: Readonly<
  Record<string, { schema: string; file: string } | { interface: string; file: string }>
> = {
  getMember: { interface: "MemberInfo", file: "provider/lookups/types.ts" },
  getProject: { schema: "ProjectSchema", file: "provider/client/projects.ts" },
  getDashboard: { schema: "DashboardSchema", file: "provider/client/dashboards.ts" },
  getDashboardSharing: { schema: "SharingSchema", file: "provider/client/sharing.ts" },
  getDashboardAccessControls: { schema: "AccessControlsSchema", file: "provider/client/dashboards.ts" },
  getBatchExports: { schema: "BatchExportSchema", file: "provider/client/batch-exports.ts" },
};

/** The interfaces of each lookup's arguments in sdk/lookups.ts (their members' JSDoc describe the inputs). */
const LOOKUP_ARGS: Readonly<Record<string, string[]>> = {
  getMember: ["GetMemberByEmail", "GetMemberByUuid"],
  getProject: ["GetProjectById", "GetProjectByName"],
  getDashboard: ["GetDashboardArgs"],
  getDashboardSharing: ["GetDashboardSharingArgs"],
  getDashboardAccessControls: ["GetDashboardSharingArgs"],
  getBatchExports: ["GetBatchExportsArgs"],
};

/** The client's zod schemas of the lookups' results, by name. */
const CLIENT_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  AccessControlsSchema,
  BatchExportSchema,
  DashboardSchema,
  ProjectSchema,
  SharingSchema,
};

/** The client's zod schema `name` (one of {@link CLIENT_SCHEMAS}). */
function clientSchema(name: string): z.ZodType {
  const schema = CLIENT_SCHEMAS[name];
  if (!schema) throw new Error(`schema: no client schema ${name}`);
  return schema;
}

/**
 * The functions (`posthog:index:<lookup>`): inputs from the lookups' zod argument schemas (provider/lookups/args.ts; the
 * properties of every form, required only when every form requires them), described by the SDK's argument
 * interfaces; outputs from the client's zod schema of the result (`io: "output"`; `getBatchExports` as
 * `{batchExports: [...]}`), or for `getMember` from its result interface `MemberInfo` ({@link outputType}).
 */
function functionsOf(root: string, types: Record<string, ObjectTypeSpec>): Record<string, Json> {
  const sdkDocs = docsOf(join(root, "sdk", "lookups.ts"));
  const out: Record<string, Json> = {};
  for (const name of Object.keys(LOOKUPS)) {
    const forms = LookupArgsSchemas[name as keyof typeof LookupArgsSchemas] as readonly z.ZodType[];
    const inputs: Record<string, PropertySpec> = {};
    let required: string[] | undefined;
    for (const form of forms) {
      const js = z.toJSONSchema(form, { io: "input", unrepresentable: "any" }) as Json;
      for (const [k, v] of Object.entries((js.properties ?? {}) as Record<string, Json>)) {
        const doc = (LOOKUP_ARGS[name] ?? [])
          .map((i) => sdkDocs.get(`${i}.${k}`))
          .find((d) => d !== undefined);
        inputs[k] = {
          ...pulumiType(v, `${pascal(name)}${pascal(k)}`, types),
          ...(doc ? { description: doc } : {}),
        };
      }
      const req = (js.required ?? []) as string[];
      required = required === undefined ? req : required.filter((k) => req.includes(k));
    }
    const result = LOOKUP_RESULTS[name];
    if (!result) throw new Error(`schema: no result declared for lookup ${name}`);
    const secret = new Set((LOOKUPS as Record<string, { secret?: readonly string[] }>)[name]?.secret ?? []);
    let properties: Record<string, PropertySpec> = {};
    let requiredOutputs: string[] = [];
    if ("interface" in result) {
      const text = readFileSync(join(root, result.file), "utf8");
      const resultDocs = docsOf(join(root, result.file));
      const body =
        new RegExp(`export interface ${result.interface} \\{([\\s\\S]*?)\\n\\}`).exec(text)?.[1] ?? "";
      for (const m of body.matchAll(/^\s+(\w+)(\?)?: ([^;]+);/gm)) {
        const [, key = "", optional, type = ""] = m;
        const doc = resultDocs.get(`${result.interface}.${key}`);
        properties[key] = { ...outputType(type), ...(doc ? { description: doc } : {}) };
        if (!optional && !type.includes("null")) requiredOutputs.push(key);
      }
    } else {
      const js = z.toJSONSchema(clientSchema(result.schema), {
        io: "output",
        unrepresentable: "any",
      }) as Json;
      const docs = docsOf(join(root, result.file));
      const itemName = `${pascal(name)}Result`;
      const each: Record<string, PropertySpec> = {};
      const jsProps = (js.properties ?? {}) as Record<string, Json>;
      for (const [k, v] of Object.entries(jsProps)) {
        const doc = docs.get(`${result.schema}.${k}`);
        each[k] = {
          ...pulumiType(v, `${itemName}${pascal(k)}`, types),
          ...(doc ? { description: doc } : {}),
          ...(secret.has(k) ? { secret: true } : {}),
        };
      }
      // A field that may be null is no required output.
      const eachRequired = ((js.required ?? []) as string[]).filter((k) => {
        const t = jsProps[k]?.type;
        return !(Array.isArray(t) && t.includes("null"));
      });
      if (name === "getBatchExports") {
        const token = typeToken("BatchExport");
        types[token] = {
          type: "object",
          description: "A batch export, as the client reads it.",
          properties: each,
          ...(eachRequired.length > 0 ? { required: eachRequired } : {}),
        };
        properties = {
          batchExports: {
            type: "array",
            items: { $ref: `#/types/${token}` },
            description: "The organization's batch exports.",
          },
        };
        requiredOutputs = ["batchExports"];
      } else {
        properties = each;
        requiredOutputs = eachRequired;
      }
    }
    out[typeToken(name)] = {
      description: functionDescription(sdkDocs.get(name) ?? name),
      inputs: { properties: inputs, ...(required && required.length > 0 ? { required } : {}) },
      outputs: { properties, ...(requiredOutputs.length > 0 ? { required: requiredOutputs } : {}) },
    };
  }
  return out;
}

/**
 * A lookup's description for the package schema, from its JSDoc in sdk/lookups.ts without what only the TypeScript
 * SDK has: the sentences naming the token for `pulumi.runtime.setMocks` ("Mock token: …"), "in clear; `getXOutput`
 * returns it secret" (the plugin's function returns those fields as secrets: {@link LOOKUPS}), and "as an array"
 * (the function's result is an object).
 */
export function functionDescription(doc: string): string {
  return (
    plainDescription(doc)
      .split(/(?<=\.)\s+/)
      .filter((sentence) => !/\bMock token\b/.test(sentence))
      .join(" ")
      .replace(/ is in clear(?: here)?; `\w+Output` returns it secret\./g, " is returned as a secret.")
      .replace(/ in clear(?: here)?; `\w+Output` returns it secret\./g, " as a secret.")
      // The function's result is an object: getBatchExports's list is its `batchExports`.
      .replace(/, as an array\./g, ", as `batchExports`.")
      .trim()
  );
}

/** The inputs schema of resource `name`: its card's (provider/resources/<kebab>.ts). */
function inputsSchema(name: string): z.ZodType {
  return cardOf(name).inputs;
}

/**
 * Where the plugin's releases are published, in Pulumi's form for GitHub releases: the engine downloads
 * `pulumi-resource-posthog-v<version>-<os>-<arch>.tar.gz` from the release `v<version>` of this repository.
 */
export const PLUGIN_DOWNLOAD_URL = "github://api.github.com/pulumi-posthog/pulumi-posthog";

/** The package's version: `version` of package.json at `root` (the one source of every version). */
export function packageVersion(root = ROOT): string {
  const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: unknown })
    .version;
  if (typeof version !== "string" || version === "")
    throw new Error(`schema: ${join(root, "package.json")} has no version`);
  return version;
}

/** The outputs schema of resource `name`: its card's. */
function outputsSchema(name: string): z.ZodType {
  return cardOf(name).outputs;
}

/**
 * A description as every language's SDK shows it: `{@link X}` (or `{@link X text}`) of the TypeScript sources as
 * `X` in backquotes.
 */
export function plainDescription(text: string): string {
  return text.replace(/\{@link\s+([^}\s|]+)[^}]*\}/g, "`$1`");
}

/** `value` with every `description` string in it made plain ({@link plainDescription}). */
function plainDescriptions<T>(value: T): T {
  if (Array.isArray(value)) return value.map(plainDescriptions) as T;
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === "description" && typeof v === "string" ? plainDescription(v) : plainDescriptions(v),
    ]),
  ) as T;
}

/** The package schema, as an object (see the module's comment). */
export function packageSchema(root = ROOT): Json {
  const types: Record<string, ObjectTypeSpec> = {};
  const out: Record<string, Json> = {};
  const infos = new Map(readResources(root).map((r) => [r.name, r]));
  for (const name of resources.resourceNames) {
    const info = infos.get(name);
    if (!info) throw new Error(`schema: tools/codegen.ts read no resource ${name}`);
    const js = z.toJSONSchema(inputsSchema(name), { io: "input", unrepresentable: "any" }) as Json;
    const jsProps = (js.properties ?? {}) as Record<string, Json>;
    const docs = new Map<string, InputProperty>(info.inputs.map((i) => [i.name, i]));
    const inputProperties: Record<string, PropertySpec> = {};
    for (const [key, prop] of Object.entries(jsProps)) {
      const doc = docs.get(key);
      inputProperties[key] = {
        ...pulumiType(prop, `${name}${pascal(key)}`, types),
        ...(doc ? { description: paragraphs(doc.doc) } : {}),
      };
    }
    const secret = new Set(SECRET_OUTPUTS[name] ?? []);
    const outJs = z.toJSONSchema(outputsSchema(name), { io: "output", unrepresentable: "any" }) as Json;
    const outProps = (outJs.properties ?? {}) as Record<string, Json>;
    const properties: Record<string, PropertySpec> = {};
    for (const o of info.outputs as OutputProperty[]) {
      const prop = outProps[o.name];
      if (!prop) throw new Error(`schema: ${name}'s outputs schema (its card's) has no ${o.name} in JSON`);
      properties[o.name] = {
        ...pulumiType(prop, `${name}${pascal(o.name)}`, types, true),
        description: paragraphs(o.doc),
        ...(secret.has(o.name) ? { secret: true } : {}),
      };
    }
    out[typeToken(name)] = {
      description: cardDescription(name),
      inputProperties,
      requiredInputs: (js.required ?? []) as string[],
      properties,
      required: info.outputs.filter((o) => !o.optional && !o.nullable).map((o) => o.name),
    };
  }
  const variables = Object.fromEntries(
    SETTINGS.map((s): [string, PropertySpec] => [
      s.name,
      {
        type: s.type,
        description: [
          s.description,
          ...(s.default !== undefined && s.defaultInSchema === false ? [`Default ${s.default}.`] : []),
          ...(s.secret ? [] : [`Environment variable: \`${s.env}\`.`]),
        ].join(" "),
        ...(s.default !== undefined && s.defaultInSchema !== false ? { default: s.default } : {}),
        ...(s.secret ? { secret: true } : { defaultInfo: { environment: [s.env] } }),
      },
    ]),
  );
  return plainDescriptions({
    name: PACKAGE,
    displayName: "PostHog",
    version: packageVersion(root),
    description:
      "Manage a PostHog organization as code: domains and SAML SSO, invites, members, projects, dashboards, " +
      "collaborators, sharing and batch-export pauses.",
    keywords: ["pulumi", "posthog", "category/monitoring", "kind/native"],
    homepage: "https://github.com/pulumi-posthog/pulumi-posthog#readme",
    repository: "https://github.com/pulumi-posthog/pulumi-posthog",
    license: "Apache-2.0",
    publisher: "pulumi-posthog",
    pluginDownloadURL: PLUGIN_DOWNLOAD_URL,
    meta: { moduleFormat: "(.*)" },
    config: { variables },
    provider: {
      description:
        "The posthog provider: its settings, each also read from its environment variable when unset.",
      inputProperties: variables,
    },
    types,
    resources: out,
    functions: functionsOf(root, types),
    // respectSchemaVersion: each generator writes the schema's `version` into its SDK (Node.js package.json,
    // Python's metadata, Go's and .NET's pulumi-plugin.json and version) instead of a placeholder
    // (pkg/v3 codegen/<lang>/importer.go: RespectSchemaVersion).
    language: {
      go: {
        importBasePath: "github.com/pulumi-posthog/pulumi-posthog/sdk-gen/go/posthog",
        respectSchemaVersion: true,
      },
      nodejs: { packageName: "@pulumi-posthog/posthog", respectSchemaVersion: true },
      python: { packageName: "pulumi_posthog", respectSchemaVersion: true },
      csharp: { rootNamespace: "PulumiPosthog", respectSchemaVersion: true },
    },
  });
}

/** The text of schema.json: the schema as JSON, two-space indented, with a final newline. */
export function schemaJson(root = ROOT): string {
  return `${JSON.stringify(packageSchema(root), null, 2)}\n`;
}

function main(argv: string[]): number {
  const path = join(ROOT, "schema.json");
  try {
    const now = schemaJson(ROOT);
    const was = existsSync(path) ? readFileSync(path, "utf8") : undefined;
    if (was === now) return 0;
    if (argv.includes("--check")) {
      process.stderr.write(
        `${was === undefined ? "schema.json is missing" : diff("schema.json", was, now)}\n\n` +
          "schema: schema.json is stale: run `npm run schema` and commit the result\n",
      );
      return 1;
    }
    writeFileSync(path, now);
    process.stdout.write("schema: wrote schema.json\n");
    return 0;
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
