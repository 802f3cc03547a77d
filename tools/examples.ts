/**
 * One example per resource page (each resource card's `examples.program`, provider/resources/<kebab>.ts) and per
 * lookup page (here), as plain data, and the functions that render it in each language of the provider plugin's
 * package (`posthog:index:<Name>` resources, `posthog:index:get<Name>` functions): Pulumi
 * YAML, Python, Go and C#. tools/codegen.ts writes the renderings between the `<!-- generated:examples … -->`
 * markers of docs/resources/<kebab>.md and docs/lookups/<kebab>.md; test/docs/examples-yaml.test.ts runs each
 * page's YAML through the real CLI and the plugin against the emulator.
 *
 * The types of the properties (which Go constructor wraps a value, which name a property has in each language)
 * come from the package schema (schema.json, written by tools/schema.ts from the same zod schemas). The names
 * follow Pulumi's generators (pulumi/pkg/v3@v3.274.1 in the Go module cache):
 * - Go (codegen/go/gen.go): the package is the last element of `language.go.importBasePath`; a field is
 *   `Title(name)` (first letter upper-cased); a resource is `New<Name>(ctx, name, &<Name>Args{…})`; a function
 *   `get<X>` is `Lookup<X>` when a resource `<X>` exists (its `Get<X>` would clash), else `Get<X>`; the output form
 *   is `<Fn>Output(ctx, <Fn>OutputArgs{…})`, its result's fields accessor methods; a union-typed input is
 *   `pulumi.Input` (any Input), a string `pulumi.StringInput`, and so on;
 * - Python (codegen/python/python.go `PyName`): the module `language.python.packageName`, arguments and result
 *   fields in snake_case, functions `get_x` and `get_x_output`;
 * - C# (codegen/dotnet/gen.go of pulumi/pkg/v3@v3.206.0): the namespace `<rootNamespace>.<Title(package)>`,
 *   properties `Title(name)`, functions as classes `GetX` with `Invoke` (Output form) and `InvokeAsync`.
 */
import { IMPORT_IDS } from "../provider/adapters/plugin/index";
import {
  call,
  type ExampleProgram,
  type InvokeStatement,
  type Ref,
  type ResourceStatement,
  ref,
  res,
  type Statement,
  type Value,
} from "../provider/framework/examples";
import { RESOURCES } from "../provider/resources/index";

export type { Ref, Statement, Value } from "../provider/framework/examples";

/** One page's example: the resource (`Dashboard`) or function (`getDashboard`) it documents, its page, its program. */
export interface Example extends ExampleProgram {
  subject: string;
  /** The page, relative to the root. */
  page: string;
}

/** A seeded member of the emulator (emulator/world.ts: Mia Member). */
const MIA = "mia.member@example.com";

/** `DashboardCollaborator` → `dashboard-collaborator`. */
const kebab = (name: string) => name.replace(/(?<!^)([A-Z])/g, "-$1").toLowerCase();

/** The examples, one per resource page (from each resource's card) and one per lookup page. */
export const EXAMPLES: readonly Example[] = [
  ...RESOURCES.map((r) => ({
    subject: r.card.name,
    page: `docs/resources/${kebab(r.card.name)}.md`,
    ...r.card.examples.program,
  })),
  {
    subject: "getMember",
    page: "docs/lookups/get-member.md",
    statements: [call("getMember", "mia", { email: MIA })],
    outputs: { miaUuid: ref("mia", "userUuid"), miaLevel: ref("mia", "level") },
  },
  {
    subject: "getProject",
    page: "docs/lookups/get-project.md",
    statements: [call("getProject", "defaultProject", { name: "Default project" })],
    outputs: { projectId: ref("defaultProject", "id"), timezone: ref("defaultProject", "timezone") },
  },
  {
    subject: "getDashboard",
    page: "docs/lookups/get-dashboard.md",
    statements: [
      res("Dashboard", "kpis", { name: "KPIs" }),
      call("getDashboard", "live", { id: ref("kpis") }),
    ],
    outputs: { liveName: ref("live", "name") },
  },
  {
    subject: "getDashboardSharing",
    page: "docs/lookups/get-dashboard-sharing.md",
    statements: [
      res("Dashboard", "kpis", { name: "KPIs" }),
      call("getDashboardSharing", "sharing", { dashboardId: ref("kpis") }),
    ],
    outputs: { shared: ref("sharing", "enabled") },
  },
  {
    subject: "getDashboardAccessControls",
    page: "docs/lookups/get-dashboard-access-controls.md",
    statements: [
      res("Dashboard", "kpis", { name: "KPIs" }),
      call("getDashboardAccessControls", "acl", { dashboardId: ref("kpis") }),
    ],
    outputs: { myAccess: ref("acl", "user_access_level") },
  },
  {
    subject: "getBatchExports",
    page: "docs/lookups/get-batch-exports.md",
    statements: [call("getBatchExports", "exports")],
    outputs: { batchExports: ref("exports", "batchExports") },
  },
];

// ---------------------------------------------------------------------------------------------
// The package schema, as far as the renderers read it.

/** A property's type in the package schema. */
export interface SchemaType {
  type?: string;
  items?: SchemaType;
  oneOf?: SchemaType[];
  $ref?: string;
  additionalProperties?: SchemaType;
}

/** What the renderers read of schema.json. */
export interface PackageSchema {
  name: string;
  language: {
    go: { importBasePath: string };
    python: { packageName: string };
    csharp: { rootNamespace: string };
  };
  resources: Record<
    string,
    { inputProperties: Record<string, SchemaType>; properties: Record<string, SchemaType> }
  >;
  functions: Record<
    string,
    {
      inputs: { properties: Record<string, SchemaType> };
      outputs: { properties: Record<string, SchemaType>; required?: string[] };
    }
  >;
}

const token = (schema: PackageSchema, name: string) => `${schema.name}:index:${name}`;

const fail = (message: string): never => {
  throw new Error(`examples: ${message}`);
};

/** The schema's view of one statement: its inputs, and what a reference to it may name. */
function shapeOf(schema: PackageSchema, s: Statement, where: string) {
  if (s.kind === "resource") {
    const r =
      schema.resources[token(schema, s.type)] ?? fail(`${where}: schema.json has no resource ${s.type}`);
    return { inputs: r.inputProperties, outputs: r.properties, required: undefined };
  }
  const f = schema.functions[token(schema, s.fn)] ?? fail(`${where}: schema.json has no function ${s.fn}`);
  return { inputs: f.inputs.properties, outputs: f.outputs.properties, required: f.outputs.required ?? [] };
}

/**
 * Checks an example against the schema: each argument is an input of its resource or function, each reference
 * names an earlier statement and, with `prop`, one of its outputs (a resource) or result fields (a function).
 * @throws naming the page and the property
 */
export function validate(schema: PackageSchema, ex: Example): void {
  const seen = new Map<string, Statement>();
  const checkValue = (v: Value, where: string): void => {
    if (Array.isArray(v)) for (const e of v) checkValue(e, where);
    else if (isRef(v)) {
      const target = seen.get(v.ref) ?? fail(`${where}: refers to ${v.ref}, not declared before it`);
      if (target.kind === "invoke" && v.prop === undefined)
        fail(`${where}: a reference to the result of ${target.fn} names one of its fields`);
      if (v.prop !== undefined && !(v.prop in shapeOf(schema, target, where).outputs))
        fail(`${where}: ${v.ref} has no output ${v.prop} in schema.json`);
    }
  };
  for (const s of ex.statements) {
    const where = `${ex.page}: ${s.name}`;
    if (seen.has(s.name)) fail(`${where}: the name is used twice`);
    const shape = shapeOf(schema, s, where);
    for (const [k, v] of Object.entries(s.args)) {
      if (!(k in shape.inputs))
        fail(`${where}: ${k} is no input of ${s.kind === "resource" ? s.type : s.fn}`);
      checkValue(v, `${where}.${k}`);
    }
    seen.set(s.name, s);
  }
  for (const [k, v] of Object.entries(ex.outputs)) checkValue(v, `${ex.page}: output ${k}`);
}

export const isRef = (v: Value): v is Ref => typeof v === "object" && v !== null && !Array.isArray(v);

/** `mia-kpis` → `miaKpis` (a variable name in Go, C#). */
const camel = (name: string) => name.replace(/[-_](\w)/g, (_, c: string) => c.toUpperCase());
/** Go's and C#'s `Title`: the first letter upper-cased. */
const title = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
/** Python's `PyName` for the camelCase and snake_case names of this schema: `userUuid` → `user_uuid`. */
export const pyName = (s: string) =>
  s
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .toLowerCase();

/** A Python variable for a logical name: `mia-kpis` → `mia_kpis`. */
const pyVar = (name: string) => pyName(camel(name));

/** The Go name of a function: `Lookup<X>` when it clashes with resource `<X>`'s `Get<X>`, else `Get<X>`. */
export function goFunctionName(schema: PackageSchema, fn: string): string {
  const name = title(fn);
  const resource = name.startsWith("Get") ? name.slice(3) : "";
  return resource && token(schema, resource) in schema.resources ? `Lookup${resource}` : name;
}

/** The statement `name` refers to. */
const target = (ex: Example, name: string) =>
  ex.statements.find((s) => s.name === name) ?? fail(`${ex.page}: no statement ${name}`);

/** Whether a statement is referred to by a later one or an output. */
function referenced(ex: Example, name: string): boolean {
  const refs = (v: Value): boolean => (Array.isArray(v) ? v.some(refs) : isRef(v) ? v.ref === name : false);
  return ex.statements.some((s) => Object.values(s.args).some(refs)) || Object.values(ex.outputs).some(refs);
}

// ---------------------------------------------------------------------------------------------
// Pulumi YAML

/** A YAML scalar: plain when YAML reads it back as the same string, else double-quoted. */
function yamlScalar(v: string | number | boolean): string {
  if (typeof v !== "string") return String(v);
  const plain =
    /^[A-Za-z0-9$][^:#]*$/.test(v) &&
    !/^(true|false|yes|no|on|off|null|~|[-+.\d][\d.eE+-]*)$/i.test(v) &&
    v.trim() === v &&
    !v.includes(": ");
  return plain ? v : JSON.stringify(v);
}

/** A reference as Pulumi YAML interpolates it. */
const yamlRef = (r: Ref) => `\${${r.ref}.${r.prop ?? "id"}}`;

function yamlValue(v: Value, indent: string): string {
  if (Array.isArray(v)) return v.map((e) => `\n${indent}- ${yamlValue(e, `${indent}  `)}`).join("");
  if (isRef(v)) return ` ${yamlRef(v)}`;
  return ` ${yamlScalar(v as string | number | boolean)}`;
}

const yamlArgs = (args: Readonly<Record<string, Value>>, indent: string) =>
  Object.entries(args)
    .map(([k, v]) => {
      const text = yamlValue(v, `${indent}  `);
      return `${indent}${k}:${text}\n`;
    })
    .join("");

/**
 * The example as the `variables` (functions), `resources` and `outputs` of a Pulumi YAML program: what goes
 * below `name:` and `runtime: yaml` in a `Pulumi.yaml`.
 */
export function renderYaml(schema: PackageSchema, ex: Example): string {
  validate(schema, ex);
  let out = "";
  const invokes = ex.statements.filter((s): s is InvokeStatement => s.kind === "invoke");
  if (invokes.length > 0) {
    out += "variables:\n";
    for (const s of invokes) {
      out += `  ${s.name}:\n    fn::invoke:\n      function: ${token(schema, s.fn)}\n`;
      if (Object.keys(s.args).length > 0) out += `      arguments:\n${yamlArgs(s.args, "        ")}`;
    }
  }
  const resources = ex.statements.filter((s): s is ResourceStatement => s.kind === "resource");
  if (resources.length > 0) out += "resources:\n";
  for (const s of resources) {
    out += `  ${s.name}:\n    type: ${token(schema, s.type)}\n`;
    if (Object.keys(s.args).length > 0) out += `    properties:\n${yamlArgs(s.args, "      ")}`;
  }
  out += "outputs:\n";
  for (const [k, v] of Object.entries(ex.outputs)) out += `  ${k}: ${yamlRef(v)}\n`;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Python

function pyValue(ex: Example, v: Value): string {
  if (Array.isArray(v)) return `[${v.map((e) => pyValue(ex, e)).join(", ")}]`;
  if (isRef(v)) return `${pyVar(v.ref)}.${pyName(v.prop ?? "id")}`;
  if (typeof v === "boolean") return v ? "True" : "False";
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

/** A call `head(first, k=v, …)`: on one line when it fits in 100 characters, else one argument per line. */
function pyCall(head: string, args: string[]): string {
  const line = `${head}(${args.join(", ")})`;
  if (line.length <= 100) return line;
  return `${head}(\n${args.map((a) => `    ${a},`).join("\n")}\n)`;
}

/** The example as a Python program of the generated SDK (`import pulumi_posthog as posthog`). */
export function renderPython(schema: PackageSchema, ex: Example): string {
  validate(schema, ex);
  const lines = ["import pulumi", `import ${schema.language.python.packageName} as ${schema.name}`, ""];
  for (const s of ex.statements) {
    const kwargs = Object.entries(s.args).map(([k, v]) => `${pyName(k)}=${pyValue(ex, v)}`);
    const lhs = referenced(ex, s.name) ? `${pyVar(s.name)} = ` : "";
    if (s.kind === "resource")
      lines.push(pyCall(`${lhs}${schema.name}.${s.type}`, [JSON.stringify(s.name), ...kwargs]));
    else lines.push(pyCall(`${lhs}${schema.name}.${pyName(s.fn)}_output`, kwargs));
  }
  lines.push("");
  for (const [k, v] of Object.entries(ex.outputs))
    lines.push(`pulumi.export(${JSON.stringify(k)}, ${pyValue(ex, v)})`);
  return `${lines.join("\n")}\n`;
}

// ---------------------------------------------------------------------------------------------
// Go

const isUnion = (t: SchemaType | undefined) => t?.oneOf !== undefined;

/** A Go literal wrapped as the Input its schema type takes (`pulumi.String("x")`, `pulumi.Int(3)`, …). */
function goLiteral(v: string | number | boolean, t: SchemaType | undefined): string {
  if (typeof v === "boolean") return `pulumi.Bool(${v})`;
  if (typeof v === "string") return `pulumi.String(${JSON.stringify(v)})`;
  if (t?.type === "number" || (!Number.isInteger(v) && t?.type !== "integer")) return `pulumi.Float64(${v})`;
  return `pulumi.Int(${v})`;
}

/** Go's element Input of an array (`pulumi.StringArray`, …) by its items' type. */
const goArray = (t: SchemaType | undefined) =>
  ({
    string: "pulumi.StringArray",
    integer: "pulumi.IntArray",
    number: "pulumi.Float64Array",
    boolean: "pulumi.BoolArray",
  })[t?.items?.type ?? ""] ?? "pulumi.Array";

/** A reference in Go: a resource's `ID()` or output field, a function result's accessor (`.Elem()` of an optional one into a plain Input). */
function goRef(schema: PackageSchema, ex: Example, r: Ref, into: SchemaType | undefined): string {
  const s = target(ex, r.ref);
  const v = camel(r.ref);
  if (s.kind === "resource") return r.prop === undefined ? `${v}.ID()` : `${v}.${title(r.prop)}`;
  const required = shapeOf(schema, s, ex.page).required ?? [];
  const accessor = `${v}.${title(r.prop ?? "")}()`;
  return into && !isUnion(into) && !required.includes(r.prop ?? "") ? `${accessor}.Elem()` : accessor;
}

function goValue(schema: PackageSchema, ex: Example, v: Value, t: SchemaType | undefined): string {
  if (Array.isArray(v)) return `${goArray(t)}{${v.map((e) => goValue(schema, ex, e, t?.items)).join(", ")}}`;
  if (isRef(v)) return goRef(schema, ex, v, t);
  return goLiteral(v as string | number | boolean, t);
}

/** `Field: value,` lines of a Go struct literal, at `indent`. */
function goFields(
  schema: PackageSchema,
  ex: Example,
  args: Readonly<Record<string, Value>>,
  types: Record<string, SchemaType>,
  indent: string,
): string {
  // gofmt aligns the values of a composite literal's consecutive one-line keyed elements.
  const width = Math.max(0, ...Object.keys(args).map((k) => k.length + 1));
  return Object.entries(args)
    .map(([k, v]) => `${indent}${`${title(k)}:`.padEnd(width)} ${goValue(schema, ex, v, types[k])},\n`)
    .join("");
}

/** The example as a Go program of the generated SDK (`posthog.New<Name>(ctx, …)`). */
export function renderGo(schema: PackageSchema, ex: Example): string {
  validate(schema, ex);
  const pkg = schema.language.go.importBasePath.split("/").at(-1) ?? schema.name;
  const body: string[] = [];
  let errDeclared = false;
  for (const s of ex.statements) {
    const shape = shapeOf(schema, s, ex.page);
    const v = camel(s.name);
    if (s.kind === "resource") {
      const used = referenced(ex, s.name);
      const assign = used ? `${v}, err :=` : errDeclared ? "_, err =" : "_, err :=";
      errDeclared = true;
      body.push(
        `${assign} ${pkg}.New${s.type}(ctx, ${JSON.stringify(s.name)}, &${pkg}.${s.type}Args{\n` +
          `${goFields(schema, ex, s.args, shape.inputs, "\t\t\t")}\t\t})\n` +
          "\t\tif err != nil {\n\t\t\treturn err\n\t\t}",
      );
    } else {
      const fn = goFunctionName(schema, s.fn);
      const fields = goFields(schema, ex, s.args, shape.inputs, "\t\t\t");
      body.push(
        `${v} := ${pkg}.${fn}Output(ctx, ${pkg}.${fn}OutputArgs{${fields ? `\n${fields}\t\t` : ""}})`,
      );
    }
  }
  const exports = Object.entries(ex.outputs).map(
    ([k, r]) => `ctx.Export(${JSON.stringify(k)}, ${goRef(schema, ex, r, undefined)})`,
  );
  return [
    "package main",
    "",
    "import (",
    `\t"${schema.language.go.importBasePath}"`,
    '\t"github.com/pulumi/pulumi/sdk/v3/go/pulumi"',
    ")",
    "",
    "func main() {",
    "\tpulumi.Run(func(ctx *pulumi.Context) error {",
    ...body.map((b) => `\t\t${b}`),
    ...exports.map((e) => `\t\t${e}`),
    "\t\treturn nil",
    "\t})",
    "}",
    "",
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------
// C#

function csValue(ex: Example, v: Value): string {
  if (Array.isArray(v)) return `new[] { ${v.map((e) => csValue(ex, e)).join(", ")} }`;
  if (isRef(v)) return csRef(ex, v);
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

/** A reference in C#: a resource's `Id` or output property, a function result's field through `Apply`. */
function csRef(ex: Example, r: Ref): string {
  const s = target(ex, r.ref);
  const v = camel(r.ref);
  if (s.kind === "resource") return `${v}.${title(r.prop ?? "id")}`;
  return `${v}.Apply(result => result.${title(r.prop ?? "")})`;
}

/** `{ Name = value, … }` of an object initializer `new() {…}`, at `indent`. */
const csInit = (ex: Example, args: Readonly<Record<string, Value>>, indent: string) =>
  `new()\n${indent}{\n${Object.entries(args)
    .map(([k, v]) => `${indent}    ${title(k)} = ${csValue(ex, v)},\n`)
    .join("")}${indent}}`;

/** The example as a C# program of the generated SDK (`new Posthog.Dashboard("kpis", new() { … })`). */
export function renderCsharp(schema: PackageSchema, ex: Example): string {
  validate(schema, ex);
  const ns = title(schema.name);
  const body: string[] = [];
  for (const s of ex.statements) {
    const lhs = referenced(ex, s.name) ? `var ${camel(s.name)} = ` : "";
    if (s.kind === "resource")
      body.push(`${lhs}new ${ns}.${s.type}(${JSON.stringify(s.name)}, ${csInit(ex, s.args, "    ")});`);
    else {
      const args = Object.keys(s.args).length > 0 ? csInit(ex, s.args, "    ") : "";
      body.push(`${lhs}${ns}.${title(s.fn)}.Invoke(${args});`);
    }
  }
  const outputs = Object.entries(ex.outputs)
    .map(([k, r]) => `        [${JSON.stringify(k)}] = ${csRef(ex, r)},`)
    .join("\n");
  return [
    "using System.Collections.Generic;",
    "using Pulumi;",
    `using ${ns} = ${schema.language.csharp.rootNamespace}.${ns};`,
    "",
    "return await Deployment.RunAsync(() =>",
    "{",
    ...body.map((b) => `    ${b}\n`),
    "    return new Dictionary<string, object?>",
    "    {",
    outputs,
    "    };",
    "});",
    "",
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------
// The generated part of a page

/** The marker comment before each block no test compiles yet, with its reason. */
export const NOT_COMPILED: Readonly<Record<"python" | "go" | "csharp", string>> = {
  python:
    "not run: the Python SDK needs the pulumi package from PyPI, not reachable here; test/docs/examples-yaml.test.ts checks its names against the SDK generated into sdk-gen/python, and the YAML example above runs the same program",
  go: "not run: test/docs/examples-yaml.test.ts type-checks it (go vet) against the Go SDK generated into sdk-gen/go; the YAML example above runs the same program",
  csharp:
    "not run: the .NET SDK is generated (sdk-gen/dotnet, net8.0) but no .NET SDK and no NuGet are reachable here, so this block is not compiled; the YAML example above runs the same program",
};

/** Prose in lines of at most `width` characters, never breaking inside a `code span`. */
export function wrapProse(text: string, width = 115): string {
  const words = text.match(/(?:`[^`]*`|[^\s`])+/g) ?? [];
  const lines: string[] = [];
  let line = "";
  for (const word of words) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join("\n");
}

/** The example of a page by its subject (`Dashboard`, `getDashboard`). */
export const exampleOf = (subject: string): Example =>
  EXAMPLES.find((e) => e.subject === subject) ?? fail(`no example for ${subject} in tools/examples.ts`);

/**
 * The generated examples part of a page: which SDK the TypeScript example above uses, the type token (a
 * resource: its import id too; a function: its name in each language), and the example in YAML, Python, Go, C#.
 */
export function examplesPart(schema: PackageSchema, ex: Example): string {
  const subject = ex.subject;
  const isFunction = /^get[A-Z]/.test(subject);
  const tok = token(schema, subject);
  const py = schema.language.python.packageName;
  const ns = title(schema.name);
  const head: string[] = [];
  if (isFunction) {
    const goName = goFunctionName(schema, subject);
    head.push(
      "### In other languages",
      "",
      wrapProse(
        "The TypeScript above uses this package's own SDK (`pulumi-posthog`, the dynamic provider's SDK). Programs in " +
          "other languages call the provider plugin's function " +
          `\`${tok}\` through the SDK generated from [schema.json](../../schema.json): \`${pyName(subject)}\` / ` +
          `\`${pyName(subject)}_output\` in Python (\`${py}\`), \`${goName}\` / \`${goName}Output\` in Go ` +
          `(\`${schema.language.go.importBasePath}\`), \`${ns}.${title(subject)}.InvokeAsync\` / \`.Invoke\` in C# ` +
          `(\`${schema.language.csharp.rootNamespace}.${ns}\`), \`fn::invoke\` in Pulumi YAML.`,
      ),
    );
  } else {
    const imp = IMPORT_IDS[subject as keyof typeof IMPORT_IDS] ?? fail(`no import id for ${subject}`);
    head.push(
      "### In other languages",
      "",
      wrapProse(
        "The TypeScript above uses this package's own SDK (`pulumi-posthog`, the dynamic provider's SDK, type " +
          `\`pulumi-nodejs:dynamic/${schema.name}:${subject}\`). Programs in other languages use the provider plugin: ` +
          `type token \`${tok}\`, the same inputs and outputs, through the SDK generated from ` +
          `[schema.json](../../schema.json) (Python \`${py}\`, Go \`${schema.language.go.importBasePath}\`, C# ` +
          `\`${schema.language.csharp.rootNamespace}.${ns}\`).`,
      ),
      "",
      wrapProse(
        `Import id: \`${imp.form}\`, as in \`pulumi import ${tok} <name> ${imp.form.replace(/ \(.*\)$/, "")}\`.`,
      ),
    );
  }
  const block = (title: string, lang: string, code: string, marker?: string) => [
    "",
    title,
    "",
    ...(marker ? [`<!-- docs-test: ${marker} -->`] : []),
    `\`\`\`${lang}`,
    code.trimEnd(),
    "```",
  ];
  return [
    ...head,
    ...block(
      "Pulumi YAML (below `name:` and `runtime: yaml` of a `Pulumi.yaml`; test/docs/examples-yaml.test.ts runs it):",
      "yaml",
      renderYaml(schema, ex),
    ),
    ...block("Python:", "python", renderPython(schema, ex), NOT_COMPILED.python),
    ...block("Go:", "go", renderGo(schema, ex), NOT_COMPILED.go),
    ...block("C#:", "csharp", renderCsharp(schema, ex), NOT_COMPILED.csharp),
  ].join("\n");
}
