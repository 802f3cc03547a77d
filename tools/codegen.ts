/**
 * What derives from the resources' cards (provider/resources/index.ts `RESOURCES`, provider/framework/card.ts): the
 * SDK's Args types, the SDK classes, their output keys, and the resource pages' generated parts, so that a property
 * cannot be added without its documentation and its type, nor a resource without its class and its page.
 *
 * `npm run codegen` writes; `npm run codegen -- --check` writes nothing and exits 1 with a diff when a
 * generated file is stale (both build first and run dist/tools/codegen.js).
 *
 * Read from the list's values: each card's exclusive inputs, lifecycle facts (`replaceOnChanges`, whether it has
 * `update`: without it, every change replaces; `deleteBeforeReplace`), summary, examples, secret outputs and
 * resolved inputs. Read with the TypeScript compiler API (public API only), per resource `<Name>` of
 * `provider/resources/<kebab>.ts`: each property of `<Name>InputsSchema`'s object literal: its JSDoc (required: the
 * generator fails naming the property without one), its `.default(…)`, and its type as the checker prints
 * `z.input<typeof Schema>[prop]` (without the `undefined` of an optional property), optionality from the checker
 * too; each property of `<Name>OutputsSchema` (the outputs create, read and update return): its JSDoc (required, as
 * for inputs), its type as the checker prints `z.output<typeof Schema>[prop]`, whether it is optional (absent when
 * unknown) or nullable; every input must be an output too (the provider returns them).
 *
 * Writes `sdk/args.ts` (an `<Name>Args` per resource, every property documented and `pulumi.Input<T>`), each SDK
 * class `sdk/<kebab>.ts` whole ({@link classModule}: a hand hook `sdk/hooks/<kebab>.ts` where a class truly needs
 * one), `sdk/output-keys.ts` ({@link outputKeysModule}), the parts of `docs/resources/<kebab>.md` between
 * `<!-- generated:… -->` markers (the prose around them is kept: the TypeScript example, the inputs and outputs
 * tables, and the examples in Pulumi YAML, Python, Go and C# of tools/examples.ts with the type token and import id),
 * the examples part of each `docs/lookups/<kebab>.md`, and `sdk/lookup-types.ts`: the lookups' options and results as
 * plain interfaces, from the client's schemas ({@link LOOKUP_TYPES}), so that the SDK's declaration files import no
 * zod type. From the list itself (tools/list-parts.ts): `sdk/resources.ts` (the classes the package exports),
 * `provider/resources/modules.ts` (the cards' modules), `provider/providers.ts` (the named dynamic providers), docs/_index.md's table of
 * resources and the README's links to their pages and table of import ids.
 *
 * It reads schema.json (the examples' types) and the build (dist/): run it through `npm run generate`, which runs
 * every generator in the order they need (tools/generate.mts).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { RULES } from "../provider/apps/governance/rules";
import { resourceOf } from "../provider/resources/index";
import { EXAMPLES, exampleOf, examplesPart, type PackageSchema } from "./examples";
import {
  dynamicProvidersModule,
  importIdsTable,
  listedCards,
  resourceLinks,
  resourceModulesModule,
  resourcesTable,
  sdkResourcesModule,
} from "./list-parts";

/** The repository root: tools/.. from the source, dist/tools/../.. from the build. */
export const ROOT = [resolve(__dirname, ".."), resolve(__dirname, "..", "..")].find((d) =>
  existsSync(join(d, "tsconfig.json")),
) as string;

/** One input property of a resource, as read from its schema. */
export interface InputProperty {
  name: string;
  /** The type of a value (what `z.input` accepts, `undefined` of optionality removed), as TypeScript prints it. */
  type: string;
  optional: boolean;
  /** The source text of the argument of `.default(…)`, if any. */
  defaultValue?: string;
  /** The JSDoc text, comment markers removed, one entry per line. */
  doc: string[];
}

/** One output property of a resource, as read from its `<Name>OutputsSchema`. */
export interface OutputProperty {
  name: string;
  /** The type of a value (`z.output`, `undefined` of optionality removed; `| null` kept), as TypeScript prints it. */
  type: string;
  /** Absent when unknown (`.optional()`). */
  optional: boolean;
  /** May be null (`.nullable()`). */
  nullable: boolean;
  /** The JSDoc text, comment markers removed, one entry per line. */
  doc: string[];
}

/** A group of mutually exclusive inputs, as declared by `<Name>ExclusiveInputs`. */
export interface Group {
  kind: "exactlyOne" | "atMostOne";
  keys: string[];
}

/** What the generator knows of one resource. */
export interface ResourceInfo {
  name: string;
  kebab: string;
  inputs: InputProperty[];
  groups: Group[];
  outputs: OutputProperty[];
  /** Inputs whose change replaces the object: every input when the resource has no update. */
  replaceOnChanges: string[];
  hasUpdate: boolean;
  /** A replacement deletes the old object before creating the new one (names unique on the server). */
  deleteBeforeReplace: boolean;
}

/** A generated file: its path relative to the root and its full expected content. */
export interface Generated {
  path: string;
  content: string;
}

const fail = (message: string): never => {
  throw new Error(`codegen: ${message}`);
};

/**
 * One property of a resource's `<Name>InputsSchema` or `<Name>OutputsSchema` object literal: its name, JSDoc lines
 * and schema expression. Throws naming the file and property when it is not a plain `name: schema` or has no JSDoc.
 */
function documentedProperty(
  p: ts.PropertyAssignment,
  r: { name: string },
  side: "input" | "output",
): { name: string; doc: string[]; initializer: ts.Expression } {
  const name = p.name.getText();
  const doc = docLines(p, p.getSourceFile());
  if (doc.length === 0)
    fail(
      `${p.getSourceFile().fileName}: ${side} ${r.name}.${name} has no JSDoc comment: document it above the property`,
    );
  return { name, doc, initializer: p.initializer };
}

/** The text of a JSDoc comment without its markers, one entry per line, surrounding blank lines dropped. */
function docLines(node: ts.Node, sf: ts.SourceFile): string[] {
  const docs = ts.getJSDocCommentsAndTags(node).filter((d): d is ts.JSDoc => ts.isJSDoc(d));
  const last = docs.at(-1);
  if (!last) return [];
  const text = sf.text.slice(last.pos, last.end);
  const lines = text
    .replace(/^\/\*\*/, "")
    .replace(/\*\/$/, "")
    .split("\n")
    .map((l) => l.replace(/^\s*\* ?/, "").trimEnd());
  while (lines.length > 0 && lines[0]?.trim() === "") lines.shift();
  while (lines.length > 0 && lines.at(-1)?.trim() === "") lines.pop();
  return lines.map((l) => l.trim());
}

/** The source text of the argument of the outermost `.default(…)` in a property's schema expression. */
function defaultOf(expr: ts.Expression, sf: ts.SourceFile): string | undefined {
  let e: ts.Expression = expr;
  while (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression)) {
    if (e.expression.name.text === "default") return e.arguments[0]?.getText(sf);
    e = e.expression.expression;
  }
  return undefined;
}

/** The card of resource `name` (provider/resources/index.ts). */
function cardOf(name: string) {
  return resourceOf(name)?.card ?? fail(`no resource ${name} in provider/resources/index.ts`);
}

/** The source files the probes' programs parsed, by name and language version (reused while a file's text is the same). */
const parsedFiles = new Map<string, ts.SourceFile>();

/**
 * The checker of a program over a probe file `probe` (never written: its text is `text`) with the options of
 * `root`'s tsconfig.json, and each `type` alias the probe declares, by name.
 * @throws when the probe does not type-check (a schema renamed or moved)
 */
function probeTypes(
  root: string,
  probe: string,
  text: string,
): { checker: ts.TypeChecker; aliases: Map<string, ts.Type>; probeSf: ts.SourceFile } {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(root, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => fail(ts.flattenDiagnosticMessageText(d.messageText, "\n")),
    },
  );
  const options = { ...(parsed?.options ?? {}), noEmit: true };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, lang, ...rest) => {
    if (resolve(fileName) === probe) return ts.createSourceFile(fileName, text, lang, true);
    // Parsed once per text: each probe's program (three in codegen, two in schema) reads the same files.
    const key = `${fileName}\0${JSON.stringify(lang)}`;
    const now = ts.sys.readFile(fileName);
    const known = parsedFiles.get(key);
    if (known && known.text === now) return known;
    const sf = getSourceFile(fileName, lang, ...rest);
    if (sf) parsedFiles.set(key, sf);
    return sf;
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => resolve(fileName) === probe || fileExists(fileName);
  const program = ts.createProgram([probe], options, host);
  const checker = program.getTypeChecker();
  const probeSf = program.getSourceFile(probe) ?? fail("the probe file did not load");
  const errors = ts.getPreEmitDiagnostics(program, probeSf);
  if (errors.length > 0) fail(`the schemas' types do not resolve:\n${ts.formatDiagnostics(errors, host)}`);
  const aliases = new Map<string, ts.Type>();
  for (const st of probeSf.statements)
    if (ts.isTypeAliasDeclaration(st)) aliases.set(st.name.text, checker.getTypeAtLocation(st.name));
  return { checker, aliases, probeSf };
}

/** A resource as the list's types show it: its name, and its inputs' and outputs' declarations (the schemas' properties). */
interface Listed {
  /** Its place in the list. */
  index: number;
  name: string;
  kebab: string;
  /** The file of its inputs schema (its card's file), for messages. */
  file: string;
  inputs: ts.PropertyAssignment[];
  outputs: ts.PropertyAssignment[];
}

/**
 * The resources of `root`'s list (provider/resources/index.ts `RESOURCES`), read from its type: for each card, its
 * `name` and the property declarations of its `inputs` and `outputs` schemas' shapes (where their JSDoc and
 * `.default(…)` are), whatever file and names they have.
 * @throws naming the file and property when a property is not a plain `name: schema` one
 */
function listedResources(root: string): Listed[] {
  const probe = join(root, "tools", "__codegen_list__.ts");
  const list = relative(dirname(probe), join(root, "provider", "resources", "index")).replace(/\\/g, "/");
  const text = `import type { RESOURCES } from "./${list}";\nexport type L = typeof RESOURCES;\n`;
  const { checker, aliases } = probeTypes(root, probe, text);
  const tuple = aliases.get("L") ?? fail("no type for the list");
  const prop = (t: ts.Type, key: string, what: string): ts.Type => {
    const sym = t.getProperty(key) ?? fail(`the list's ${what} has no ${key}`);
    return checker.getTypeOfSymbol(sym);
  };
  const declarations = (schema: ts.Type, name: string, side: string): ts.PropertyAssignment[] =>
    (schema.getProperty("shape") ??
      fail(
        `${name}'s card has no ${side}s schema the compiler can read: its \`${side}s\` must be a z.object({…}) ` +
          "(or z.strictObject) of every property, each with its JSDoc",
      )) &&
    checker
      .getTypeOfSymbol(schema.getProperty("shape") as ts.Symbol)
      .getProperties()
      .map((sym) => {
        const decl = sym.declarations?.[0];
        if (!decl || !ts.isPropertyAssignment(decl) || !ts.isIdentifier(decl.name))
          return fail(`${name}: ${side} ${sym.name}: only plain \`name: schema\` properties are supported`);
        return decl;
      });
  return checker.getTypeArguments(tuple as ts.TypeReference).map((element, index) => {
    const card = prop(element, "card", "resource");
    const nameType = prop(card, "name", "card");
    const name = nameType.isStringLiteral() ? nameType.value : fail("a card's name is not a string literal");
    const inputs = declarations(prop(card, "inputs", name), name, "input");
    return {
      index,
      name,
      kebab: name.replace(/(?<!^)([A-Z])/g, "-$1").toLowerCase(),
      file: inputs[0]?.getSourceFile().fileName ?? join(root, "provider", "resources"),
      inputs,
      outputs: declarations(prop(card, "outputs", name), name, "output"),
    };
  });
}

/**
 * Reads every resource of `root`'s list (provider/resources/index.ts): the values its cards hold, and what only the
 * compiler sees of them (each property's JSDoc, `.default(…)` and type, through the list's types).
 * @throws naming the file and property when an input or output has no JSDoc, or an input is not an output
 */
export function readResources(root = ROOT): ResourceInfo[] {
  // In file order, as the generated files list them (the list's own order is schema.json's).
  const file = (r: Listed) => `${r.kebab}.ts`;
  const found = listedResources(root).sort((a, b) => (file(a) < file(b) ? -1 : file(a) > file(b) ? 1 : 0));
  // One program over a probe file: `z.input<the card's inputs>[prop]`, as the checker resolves it.
  const probe = join(root, "tools", "__codegen_probe__.ts");
  const list = relative(dirname(probe), join(root, "provider", "resources", "index")).replace(/\\/g, "/");
  const lines = ['import type { z } from "zod";', `import type { RESOURCES } from "./${list}";`];
  for (const r of found) {
    lines.push(`export type I_${r.name} = z.input<(typeof RESOURCES)[${r.index}]["card"]["inputs"]>;`);
    lines.push(`export type O_${r.name} = z.output<(typeof RESOURCES)[${r.index}]["card"]["outputs"]>;`);
    for (const p of r.inputs)
      lines.push(
        `export type P_${r.name}__${p.name.getText()} = Exclude<I_${r.name}["${p.name.getText()}"], undefined>;`,
      );
    for (const p of r.outputs)
      lines.push(
        `export type Q_${r.name}__${p.name.getText()} = Exclude<O_${r.name}["${p.name.getText()}"], undefined>;`,
      );
  }
  const { checker, aliases } = probeTypes(root, probe, lines.join("\n"));
  const print = (t: ts.Type) =>
    checker
      .typeToString(
        t,
        undefined,
        ts.TypeFormatFlags.NoTruncation |
          ts.TypeFormatFlags.InTypeAlias |
          ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType,
      )
      .replace(/'/g, '"');

  return found.map((r) => {
    const whole = aliases.get(`I_${r.name}`) ?? fail(`no type for ${r.name}`);
    const props = new Map(checker.getPropertiesOfType(whole).map((s) => [s.name, s]));
    const inputs: InputProperty[] = [];
    for (const p of r.inputs) {
      const { name, doc, initializer } = documentedProperty(p, r, "input");
      const sym = props.get(name) ?? fail(`${r.name}: z.input has no property ${name}`);
      const type = aliases.get(`P_${r.name}__${name}`) ?? fail(`no type for ${r.name}.${name}`);
      const defaultValue = defaultOf(initializer, p.getSourceFile());
      inputs.push({
        name,
        type: print(type),
        optional: (sym.flags & ts.SymbolFlags.Optional) !== 0,
        doc,
        ...(defaultValue !== undefined ? { defaultValue } : {}),
      });
    }
    if (props.size !== inputs.length)
      fail(`${r.name}: z.input has properties ${[...props.keys()].join(", ")}, the literal ${inputs.length}`);
    const card = cardOf(r.name);
    const groups: Group[] = card.exclusiveInputs.map((g) => ({ kind: g.kind, keys: [...g.keys] }));
    for (const g of groups)
      for (const k of g.keys)
        if (!props.has(k)) fail(`${r.file}: ${r.name}'s exclusive inputs name ${k}, not an input`);
    const outputs = outputsOf(r, checker, aliases, print);
    const missing = inputs.filter((i) => !outputs.some((o) => o.name === i.name)).map((i) => i.name);
    if (missing.length > 0)
      fail(
        `${r.file}: ${r.name}'s outputs schema lacks the input(s) ${missing.join(", ")}: the provider returns every ` +
          "input as an output; declare each (its type as the provider returns it) with its JSDoc",
      );
    const life = {
      replaceOnChanges: [...(card.replaceOnChanges ?? [])],
      hasUpdate: card.update !== undefined,
      deleteBeforeReplace: card.deleteBeforeReplace === true,
    };
    return {
      name: r.name,
      kebab: r.kebab,
      inputs,
      groups,
      outputs,
      replaceOnChanges: life.hasUpdate ? life.replaceOnChanges : inputs.map((i) => i.name),
      hasUpdate: life.hasUpdate,
      deleteBeforeReplace: life.deleteBeforeReplace,
    };
  });
}

/**
 * The outputs of a resource from its card's outputs schema's properties: JSDoc (required), the type the checker
 * resolves `z.output<…>[prop]` to (probe aliases `O_<Name>`, `Q_<Name>__<prop>`), optional and nullable.
 * @throws naming the file and property when an output has no JSDoc
 */
function outputsOf(
  r: Listed,
  checker: ts.TypeChecker,
  aliases: Map<string, ts.Type>,
  print: (t: ts.Type) => string,
): OutputProperty[] {
  const whole = aliases.get(`O_${r.name}`) ?? fail(`no type for ${r.name}'s outputs schema`);
  const props = new Map(checker.getPropertiesOfType(whole).map((s) => [s.name, s]));
  return r.outputs.map((p) => {
    const { name, doc } = documentedProperty(p, r, "output");
    const sym = props.get(name) ?? fail(`${r.name}: z.output has no property ${name}`);
    const type = aliases.get(`Q_${r.name}__${name}`) ?? fail(`no type for output ${r.name}.${name}`);
    return {
      name,
      type: print(type),
      optional: (sym.flags & ts.SymbolFlags.Optional) !== 0,
      nullable: type.isUnion() && type.types.some((t) => (t.flags & ts.TypeFlags.Null) !== 0),
      doc,
    };
  });
}

/** `text` in lines of at most `width` characters (words are never split). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return line ? [...lines, line] : lines;
}

/** A JSDoc block of `lines`, indented by `indent`. */
function jsdoc(lines: readonly string[], indent: string): string {
  if (lines.length === 1 && (lines[0]?.length ?? 0) + indent.length + 7 <= 110)
    return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => (l ? `${indent} * ${l}` : `${indent} *`)).join("\n")}\n${indent} */\n`;
}

const ruleOf = (g: Group) =>
  `${g.kind === "exactlyOne" ? "exactly one" : "at most one"} of ${g.keys.slice(0, -1).join(", ")} and ${g.keys.at(-1)}`;

/**
 * The member of an Args type for input `p` (`required` overrides its optionality). An optional input also takes
 * `undefined`, as `z.input` has it (an Output that may resolve to undefined is fine: undefined means not given).
 */
function member(p: InputProperty, indent: string, required = !p.optional): string {
  const type = required ? p.type : `${p.type} | undefined`;
  return `${jsdoc(p.doc, indent)}${indent}${p.name}${required ? "" : "?"}: pulumi.Input<${type}>;\n`;
}

/** The content of sdk/args.ts (before formatting). */
export function argsModule(resources: readonly ResourceInfo[]): string {
  let out =
    "// Generated by `npm run codegen` from the inputs schemas of provider/resources/*.ts; do not edit.\n" +
    'import type * as pulumi from "@pulumi/pulumi";\n';
  for (const r of resources) {
    const grouped = new Set(r.groups.flatMap((g) => g.keys));
    const rules = r.groups.map(ruleOf);
    const head = wrap(
      `Arguments of a ${r.name} (\`new ${r.name}(name, args, opts)\`), generated from \`${r.name}InputsSchema\` ` +
        `in provider/resources/${r.kebab}.ts.${rules.length > 0 ? ` Give ${rules.join("; ")}.` : ""}`,
      106,
    );
    const base = r.inputs.filter((p) => !grouped.has(p.name));
    if (r.groups.length === 0) {
      out += `\n${jsdoc(head, "")}export interface ${r.name}Args {\n${base.map((p) => member(p, "  ")).join("")}}\n`;
      continue;
    }
    out += `\n${jsdoc([`The inputs of a ${r.name} outside its exclusive groups (see ${r.name}Args).`], "")}`;
    out += `export interface ${r.name}ArgsBase {\n${base.map((p) => member(p, "  ")).join("")}}\n`;
    const unions = r.groups.map((g) => {
      const branches = g.keys.map((k) => {
        const members = g.keys.map((other) => {
          const p = r.inputs.find((i) => i.name === other) ?? fail(`${r.name}: no input ${other}`);
          if (other === k) return member(p, "      ", g.kind === "exactlyOne");
          const note = wrap(`Not with \`${k}\`: give ${ruleOf(g)}.`, 96);
          return `${jsdoc(note, "      ")}      ${other}?: never;\n`;
        });
        return `    | {\n${members.join("")}    }\n`;
      });
      return `(\n${branches.join("")}  )`;
    });
    out += `\n${jsdoc(head, "")}export type ${r.name}Args = ${r.name}ArgsBase &\n  ${unions.join(" &\n  ")};\n`;
  }
  const byName = resources.map((r) => `  ${r.name}: ${r.name}Args;\n`).join("");
  out += `\n/** Each resource's Args by its name (test/docs/args-match.test.ts checks each against its card's inputs). */\n`;
  return `${out}export interface ArgsByName {\n${byName}}\n`;
}

/** One type of sdk/lookup-types.ts: a lookup's options or result, as the client's zod schema `schema` has it. */
export interface LookupType {
  /** The name in the SDK (`ProjectInfo`, …). */
  name: string;
  /** The schema's exported name and file (relative to the root). */
  schema: string;
  file: string;
  /** `z.input` (what a caller passes) or `z.output` (what the lookup returns). */
  side: "input" | "output";
  /** The first lines of the type's documentation. */
  doc: string;
  /** Whether the schema's own JSDoc follows them. */
  schemaDoc: boolean;
}

/**
 * The lookups' connection options and results, generated as plain TypeScript (sdk/lookup-types.ts) so that the
 * SDK's declaration files import no zod type: a user's program compiles them under its own options (Pulumi's
 * template has no `esModuleInterop`, under which TypeScript 5 refuses zod's `.d.cts`), and reads no zod at all.
 */
export const LOOKUP_TYPES: readonly LookupType[] = [
  {
    name: "LookupOptions",
    schema: "ClientOptionsSchema",
    file: "provider/client/settings.ts",
    side: "input",
    doc:
      "Connection options of every `getX` lookup, all optional: those of the client's `createClient`. The " +
      "connection settings not given come from the stack config, else the environment (see the lookups' " +
      "module documentation).",
    schemaDoc: false,
  },
  {
    name: "ProjectInfo",
    schema: "ProjectSchema",
    file: "provider/client/projects.ts",
    side: "output",
    doc: "A project as `getProject` returns it.",
    schemaDoc: true,
  },
  {
    name: "DashboardInfo",
    schema: "DashboardSchema",
    file: "provider/client/dashboards.ts",
    side: "output",
    doc: "A dashboard as `getDashboard` returns it.",
    schemaDoc: true,
  },
  {
    name: "SharingInfo",
    schema: "SharingSchema",
    file: "provider/client/sharing.ts",
    side: "output",
    doc: "A dashboard's sharing configuration as `getDashboardSharing` returns it.",
    schemaDoc: true,
  },
  {
    name: "AccessControlsInfo",
    schema: "AccessControlsSchema",
    file: "provider/client/dashboards.ts",
    side: "output",
    doc: "A dashboard's access controls as `getDashboardAccessControls` returns them.",
    schemaDoc: true,
  },
  {
    name: "BatchExportInfo",
    schema: "BatchExportSchema",
    file: "provider/client/batch-exports.ts",
    side: "output",
    doc: "A batch export as `getBatchExports` returns each.",
    schemaDoc: true,
  },
];

/**
 * Named types a printed lookup type may refer to, and the module (without zod) the generated file imports them
 * from; a name neither here nor a global of the language fails the generator.
 */
const LOOKUP_IMPORTS: Readonly<Record<string, string>> = {
  ApiKey: "../provider/client/option-types",
  RetryInfo: "../provider/client/option-types",
};
const GLOBAL_TYPES = new Set(["Array", "ReadonlyArray", "Record", "Promise", "Date", "Map", "Set"]);

/** The JSDoc of `export const <name>` in a source file, one entry per line. */
function constDoc(sf: ts.SourceFile, name: string): string[] {
  for (const st of sf.statements)
    if (
      ts.isVariableStatement(st) &&
      st.declarationList.declarations.some((d) => ts.isIdentifier(d.name) && d.name.text === name)
    )
      return docLines(st, sf);
  return fail(`${sf.fileName}: no \`export const ${name}\``);
}

/** `{@link X}` as `` `X` `` (what a link names in the client does not resolve in the SDK). */
const unlink = (text: string) => text.replace(/\{@link\s+([^}\s]+)\s*\}/g, "`$1`");

/** Attaches `doc` as a JSDoc comment to a printed node (on one line when it is one line). */
function attachDoc(node: ts.Node, doc: string): void {
  const lines = unlink(doc)
    .split("\n")
    .map((l) => l.trimEnd());
  const text =
    lines.length === 1 ? `* ${lines[0]} ` : `*\n${lines.map((l) => (l ? ` * ${l}` : " *")).join("\n")}\n `;
  ts.addSyntheticLeadingComment(node, ts.SyntaxKind.MultiLineCommentTrivia, text, true);
}

/**
 * Gives each property of `literal` (the printed form of `type`) its documentation from the schema, nested object
 * literals included (each matched to the object type of the property that has the same property names).
 */
function documentMembers(literal: ts.TypeLiteralNode, type: ts.Type, checker: ts.TypeChecker): void {
  for (const m of literal.members) {
    if (!ts.isPropertySignature(m) || !m.name || !(ts.isIdentifier(m.name) || ts.isStringLiteral(m.name)))
      continue;
    const sym = type.getProperty(m.name.text);
    if (!sym) continue;
    const doc = ts.displayPartsToString(sym.getDocumentationComment(checker)).trim();
    if (doc) attachDoc(m, doc);
    if (!m.type) continue;
    // The object types this property's type holds (in unions and arrays), to match nested literals by keys.
    const objects: ts.Type[] = [];
    const collect = (t: ts.Type): void => {
      if (t.isUnion()) for (const u of t.types) collect(u);
      else if (checker.isArrayType(t))
        for (const e of checker.getTypeArguments(t as ts.TypeReference)) collect(e);
      else if (t.getProperties().length > 0 && t.getCallSignatures().length === 0) objects.push(t);
    };
    collect(checker.getTypeOfSymbol(sym));
    const visit = (n: ts.Node): void => {
      if (ts.isTypeLiteralNode(n)) {
        const keys = n.members
          .flatMap((k) => (k.name && ts.isIdentifier(k.name) ? [k.name.text] : []))
          .sort();
        const match = objects.find(
          (o) =>
            o
              .getProperties()
              .map((p) => p.name)
              .sort()
              .join() === keys.join(),
        );
        if (match) documentMembers(n, match, checker);
        return;
      }
      ts.forEachChild(n, visit);
    };
    visit(m.type);
  }
}

/**
 * The content of sdk/lookup-types.ts (before formatting): each of {@link LOOKUP_TYPES} as an interface whose
 * properties are what the checker resolves `z.input`/`z.output` of its schema to, with their documentation.
 * @throws when a printed type names a type that is neither in {@link LOOKUP_IMPORTS} nor a global
 */
export function lookupTypesModule(root = ROOT): string {
  const probe = join(root, "tools", "__codegen_lookup_probe__.ts");
  const lines = ['import type { z } from "zod";'];
  for (const t of LOOKUP_TYPES) {
    const rel = `./${relative(dirname(probe), join(root, t.file)).replace(/\\/g, "/").replace(/\.ts$/, "")}`;
    lines.push(`import type { ${t.schema} as S_${t.name} } from "${rel}";`);
    lines.push(`export type L_${t.name} = z.${t.side}<typeof S_${t.name}>;`);
  }
  const { checker, aliases, probeSf } = probeTypes(root, probe, lines.join("\n"));
  const printer = ts.createPrinter({ removeComments: false });
  const imports = new Map<string, Set<string>>();
  let body = "";
  for (const t of LOOKUP_TYPES) {
    const type = aliases.get(`L_${t.name}`) ?? fail(`no type for ${t.name}`);
    const node = checker.typeToTypeNode(
      type,
      undefined,
      ts.NodeBuilderFlags.NoTruncation |
        ts.NodeBuilderFlags.InTypeAlias |
        ts.NodeBuilderFlags.MultilineObjectLiterals,
    );
    if (!node || !ts.isTypeLiteralNode(node))
      return fail(
        `${t.file}: ${t.schema}: expected an object type, got ${node ? ts.SyntaxKind[node.kind] : "none"}`,
      );
    const named = (n: ts.Node): void => {
      if (ts.isTypeReferenceNode(n) && ts.isIdentifier(n.typeName)) {
        const ref = n.typeName.text;
        const from = LOOKUP_IMPORTS[ref];
        if (from) imports.set(from, (imports.get(from) ?? new Set()).add(ref));
        else if (!GLOBAL_TYPES.has(ref))
          fail(
            `${t.file}: ${t.schema} refers to the type ${ref}: move it to a module without zod and name it in LOOKUP_IMPORTS (tools/codegen.ts)`,
          );
      }
      ts.forEachChild(n, named);
    };
    named(node);
    documentMembers(node, type, checker);
    const decl = ts.factory.createInterfaceDeclaration(
      [ts.factory.createModifier(ts.SyntaxKind.ExportKeyword)],
      t.name,
      undefined,
      undefined,
      node.members,
    );
    const sf = ts.createSourceFile(
      join(root, t.file),
      readFileSync(join(root, t.file), "utf8"),
      ts.ScriptTarget.Latest,
      true,
    );
    const doc = [
      ...wrap(t.doc, 106),
      "",
      ...(t.schemaDoc ? [...constDoc(sf, t.schema).map(unlink), ""] : []),
      ...wrap(`Generated from \`${t.schema}\` (\`z.${t.side}\`) in ${t.file}.`, 106),
    ];
    body += `\n${jsdoc(doc, "")}${printer.printNode(ts.EmitHint.Unspecified, decl, probeSf)}\n`;
  }
  const head =
    "// Generated by `npm run codegen` from the client's zod schemas (LOOKUP_TYPES of tools/codegen.ts); do not edit.\n" +
    "// Plain types, so that the SDK's declaration files import nothing from zod.\n";
  const importLines = [...imports]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([from, names]) => `import type { ${[...names].sort().join(", ")} } from "${from}";\n`)
    .join("");
  return `${head}${importLines}${body}`;
}

/**
 * Formats TypeScript files (each `{ path, text }`, `path` relative to the repository) with the repository's biome
 * and its settings (biome.json), in one `biome format --write` over copies in a temporary folder: one biome start
 * for them all (about 0.3 CPU-s each), not one per file. Returns the formatted texts in the order given.
 * @throws when biome refuses a file (e.g. a syntax error), with its message.
 */
function formatTs(files: { path: string; text: string }[]): string[] {
  const bin = join(ROOT, "node_modules", ".bin", process.platform === "win32" ? "biome.cmd" : "biome");
  const dir = mkdtempSync(join(tmpdir(), "posthog-codegen-"));
  try {
    const paths = files.map((f) => {
      const path = join(dir, f.path);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, f.text);
      return path;
    });
    execFileSync(bin, ["format", "--write", `--config-path=${join(ROOT, "biome.json")}`, ...paths], {
      cwd: dir,
      stdio: ["ignore", "ignore", "pipe"],
    });
    return paths.map((path) => readFileSync(path, "utf8"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Markdown table cell: one line, pipes escaped, `{@link X}` as `X`. */
function cell(text: string): string {
  return text
    .replace(/\{@link\s+([^}\s]+)\s*\}/g, "`$1`")
    .replace(/\|/g, "\\|")
    .replace(/\s+/g, " ")
    .trim();
}

/** The generated inputs part of a resource page. */
export function inputsTable(r: ResourceInfo): string {
  const replaces = new Set(r.replaceOnChanges);
  const replacing = r.inputs.filter((p) => replaces.has(p.name)).map((p) => `\`${p.name}\``);
  const exactlyOne = new Set(r.groups.filter((g) => g.kind === "exactlyOne").flatMap((g) => g.keys));
  const rows = r.inputs.map((p) => {
    const required = exactlyOne.has(p.name) ? "one of (below)" : p.optional ? "no" : "yes";
    const change = replaces.has(p.name) ? "replaces" : "updates in place";
    const def = p.defaultValue !== undefined ? `\`${cell(p.defaultValue)}\`` : "";
    return `| \`${p.name}\` | \`${cell(p.type)}\` | ${required} | ${def} | ${change} | ${cell(p.doc.join(" "))} |`;
  });
  const notes: string[] = [];
  for (const g of r.groups) notes.push(`Give ${ruleOf(g).replace(/(\w+)(?=,| and|$)/g, "`$1`")}.`);
  notes.push(
    r.hasUpdate
      ? `A change of ${replacing.join(", ") || "no input"} replaces the ${r.name}; other changes update it in place.`
      : `There is no update: a change of any input replaces the ${r.name}.`,
  );
  if (r.deleteBeforeReplace)
    notes.push(
      `A replacement deletes the old ${r.name} before creating the new one (the name is unique in PostHog).`,
    );
  return [
    "| Input | Type | Required | Default | On change | Description |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    ...notes.flatMap((n) => [n, ""]),
  ]
    .join("\n")
    .trimEnd();
}

/** The generated outputs part of a resource page. */
export function outputsTable(r: ResourceInfo): string {
  const always = (o: OutputProperty) =>
    o.optional ? "no (may be absent)" : o.nullable ? "no (may be null)" : "yes";
  return [
    `Generated from \`${r.name}OutputsSchema\`; an output that is always set is \`required\` in the package schema`,
    "(a plain, non-optional value in the generated SDKs).",
    "",
    "| Output | Type | Always set | Description |",
    "| --- | --- | --- | --- |",
    `| \`id\` | \`string\` | yes | The resource id (see above). |`,
    ...r.outputs.map(
      (o) => `| \`${o.name}\` | \`${cell(o.type)}\` | ${always(o)} | ${cell(o.doc.join(" "))} |`,
    ),
  ].join("\n");
}

/**
 * The SDK class of resource `r` (`sdk/<kebab>.ts`), whole, from its card: the class documentation (the card's summary
 * and TypeScript example), a `declare readonly` per output, and the constructor registering the output keys and the
 * card's secret outputs; when `sdk/hooks/<kebab>.ts` exists (a hand hook, where a class truly needs one), its
 * `afterConstruct(this, name)` runs last. Before formatting.
 */
export function classModule(r: ResourceInfo, root = ROOT): string {
  const card = cardOf(r.name);
  const hook = existsSync(join(root, "sdk", "hooks", `${r.kebab}.ts`));
  const secret = card.secretOutputs;
  const imports = ["MODULE", "named", "outputKeys", ...(secret.length > 0 ? ["withSecretOutputs"] : [])];
  const doc = [...card.summary.split("\n"), "", "```ts", ...card.examples.typescript, "```"];
  const members = r.outputs
    .map(
      (o) =>
        `${jsdoc(o.doc, "  ")}  declare readonly ${o.name}: pulumi.Output<${o.optional ? `${o.type} | undefined` : o.type}>;\n`,
    )
    .join("");
  const secretNote =
    secret.length === 0
      ? ""
      : ` (${secret.map((k) => `\`${k}\``).join(" and ")} ${secret.length === 1 ? "is" : "are"} always added as ${secret.length === 1 ? "a secret output" : "secret outputs"})`;
  const opts = secret.length === 0 ? "opts" : `withSecretOutputs(opts, ${JSON.stringify(secret)})`;
  return [
    `// The ${r.name} class: generated by \`npm run codegen\` from the resource's card (provider/resources/${r.kebab}.ts); do not edit.`,
    'import * as pulumi from "@pulumi/pulumi";',
    `import type { ${r.name}Args } from "./args";`,
    `import { ${imports.join(", ")} } from "./common";`,
    ...(hook ? [`import { afterConstruct } from "./hooks/${r.kebab}";`] : []),
    'import { providerShim } from "./provider-shim";',
    "",
    `export type { ${r.name}Args } from "./args";`,
    "",
    `const provider = providerShim("${r.name}");`,
    "",
    jsdoc(doc, "").trimEnd(),
    `export class ${r.name} extends pulumi.dynamic.Resource {`,
    `${members}`,
    "  /**",
    "   * @param name the Pulumi resource name",
    `   * @param args the resource's inputs (see {@link ${r.name}Args})`,
    `   * @param opts resource options${secretNote}`,
    "   */",
    `  constructor(name: string, args: ${r.name}Args, opts?: pulumi.CustomResourceOptions) {`,
    `    const outs = outputKeys("${r.name}");`,
    `    super(provider, name, { ...outs, ...args, ...named(name, args) }, ${opts}, MODULE, "${r.name}");`,
    ...(hook ? ["    afterConstruct(this, name);"] : []),
    "  }",
    "}",
    "",
  ].join("\n");
}

/**
 * sdk/output-keys.ts, from the cards: the output properties each SDK class registers beyond the inputs it is given
 * (the outputs that are no inputs, and the inputs the provider fills in when unset: the card's `resolvedInputs`).
 * Before formatting.
 */
export function outputKeysModule(resources: readonly ResourceInfo[]): string {
  const entries = resources
    .map((r) => {
      const card = cardOf(r.name);
      const inputs = new Set(r.inputs.map((i) => i.name));
      const keys = [...card.resolvedInputs, ...r.outputs.map((o) => o.name).filter((o) => !inputs.has(o))];
      return `  ${r.name}: ${JSON.stringify(keys)},`;
    })
    .join("\n");
  return [
    "// Generated by `npm run codegen` from the resources' cards (provider/resources/index.ts); do not edit.",
    "/**",
    " * The output properties each resource class registers beyond the inputs it is given (as `undefined` inputs, so",
    " * the engine's outputs fill them), by class name (sdk/common.ts `outputKeys`): the outputs that are no inputs, and",
    " * the inputs its provider fills in when unset. bench/latency.ts's naive provider with outputs declares the same",
    " * ones, so the scale bench's baseline pays the program's cost of the properties ours declares. A module of its own",
    " * that imports nothing: the bench reads it without loading `@pulumi/pulumi`.",
    " */",
    "export const OUTPUT_KEYS = {",
    entries,
    "} as const satisfies Record<string, readonly string[]>;",
    "",
  ].join("\n");
}

/**
 * A generated part of a page: a resource page's TypeScript example, inputs and outputs tables and examples in other
 * languages; the governance rules; the lists of resources (docs/_index.md's table, the README's links and import ids).
 */
export type Part =
  | "typescript"
  | "inputs"
  | "outputs"
  | "examples"
  | "rules"
  | "resources"
  | "resource-links"
  | "import-ids";

/** The markers around a generated part of a page. */
export const markers = (part: Part) => ({
  begin: `<!-- generated:${part} (npm run codegen; do not edit) -->`,
  end: `<!-- /generated:${part} -->`,
});

/** The TypeScript example of resource `r`'s page: its card's, as one ```ts block. */
function typescriptPart(r: ResourceInfo): string {
  return ["```ts", ...cardOf(r.name).examples.typescript, "```"].join("\n");
}

/**
 * `page` with the text between the markers of `part` replaced by `body`, a blank line on each side (none when `tight`:
 * a part that is items of a list). Markers indented (a part inside a list item) keep their indentation.
 * @throws when the markers are missing
 */
export function withPart(page: string, part: Part, body: string, path: string, tight = false): string {
  const { begin, end } = markers(part);
  const a = page.indexOf(begin);
  const b = page.indexOf(end);
  const what =
    part === "examples" || part === "rules"
      ? part
      : part === "typescript"
        ? "TypeScript example"
        : part === "resource-links"
          ? "links to the resource pages"
          : `${part} table`;
  if (a < 0 || b < a)
    return fail(`${path} lacks the markers of its generated ${what}: add the lines\n${begin}\n${end}`);
  const indent = /^[ \t]*$/.exec(page.slice(page.lastIndexOf("\n", a) + 1, a))?.[0] ?? "";
  const gap = tight ? "\n" : "\n\n";
  return `${page.slice(0, a + begin.length)}${gap}${body}${gap}${indent}${page.slice(b)}`;
}

/** When the policy pack judges a rule (rules.ts `judgedOn`), as the rules table says it. */
const JUDGED: Record<(typeof RULES)[number]["judgedOn"], string> = {
  resource: "before the resource's write",
  run: "before the resource's write (with what the run registered before it)",
  stack: "after `up` applied the resources",
};

/**
 * The rules table of docs/governance.md, from RULES (provider/apps/governance/rules.ts): each rule's id, description, when
 * the policy pack judges it (its `judgedOn`), and configuration keys with their JSON types and defaults (the defaults
 * its zod schema gives an empty object).
 */
export function rulesTable(): string {
  const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");
  const rows = RULES.map((r) => {
    const defaults = r.config.parse({}) as Record<string, unknown>;
    const keys = Object.entries(r.configSchema).map(([k, schema]) => {
      const type = schema.type === "array" ? "list" : typeof schema.type === "string" ? schema.type : "value";
      const d = defaults[k];
      return `\`${k}\` (${type}, default ${d === undefined ? "unset" : `\`${JSON.stringify(d)}\``})`;
    });
    return `| \`${r.id}\` | ${cell(r.description)} | ${JUDGED[r.judgedOn]} | ${keys.length > 0 ? keys.join("; ") : "none"} |`;
  });
  return [
    "| Rule | What it protects | When the pack judges it | Configuration keys |",
    "| --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}

/** A new page for a resource without one: title, markers, and the prose sections to write (a line asking for each). */
function skeleton(r: ResourceInfo): string {
  return [
    `# ${r.name}`,
    "",
    "(Describe the resource here: what it manages, its id, the API it calls, the key scopes it needs.)",
    "",
    "## Example",
    "",
    markers("typescript").begin,
    markers("typescript").end,
    "",
    markers("examples").begin,
    markers("examples").end,
    "",
    "## Inputs",
    "",
    markers("inputs").begin,
    markers("inputs").end,
    "",
    "## Outputs",
    "",
    markers("outputs").begin,
    markers("outputs").end,
    "",
    // The sections every page has in prose (test/docs/codegen.test.ts).
    ...["Replacement", "Delete", "Adoption"].flatMap((h) => [`## ${h}`, "", `(${h}: write it here.)`, ""]),
  ].join("\n");
}

/**
 * The package schema (schema.json, written by tools/schema.ts from the same zod schemas), for the examples' types.
 * @throws when it is missing: run `npm run schema`
 */
export function readSchema(root = ROOT): PackageSchema {
  const file = join(root, "schema.json");
  if (!existsSync(file)) return fail(`${file} is missing: run \`npm run schema\` first`);
  return JSON.parse(readFileSync(file, "utf8")) as PackageSchema;
}

/**
 * Every generated file with its expected content: sdk/args.ts, sdk/lookup-types.ts, sdk/output-keys.ts, each SDK
 * class (sdk/<kebab>.ts) and sdk/resources.ts, provider/resources/modules.ts, provider/providers.ts, each resource page's TypeScript
 * example, tables and examples (tools/examples.ts), each lookup page's examples, the lists of resources of
 * docs/_index.md and the README (tools/list-parts.ts), the governance rules' table.
 */
export function generate(root = ROOT, resources = readResources(root)): Generated[] {
  const schema = readSchema(root);
  const modules = [
    { path: "sdk/args.ts", text: argsModule(resources) },
    { path: "sdk/lookup-types.ts", text: lookupTypesModule(root) },
    { path: "sdk/output-keys.ts", text: outputKeysModule(resources) },
    ...resources.map((r) => ({ path: `sdk/${r.kebab}.ts`, text: classModule(r, root) })),
    { path: "sdk/resources.ts", text: sdkResourcesModule(resources.map((r) => r.kebab)) },
    { path: "provider/resources/modules.ts", text: resourceModulesModule(listedCards(root)) },
    { path: "provider/providers.ts", text: dynamicProvidersModule(listedCards(root)) },
  ];
  const formatted = formatTs(modules);
  const out: Generated[] = modules.map((m, i) => ({ path: m.path, content: formatted[i] ?? "" }));
  for (const r of resources) {
    const path = `docs/resources/${r.kebab}.md`;
    const file = join(root, path);
    let page = existsSync(file) ? readFileSync(file, "utf8") : skeleton(r);
    page = withPart(page, "typescript", typescriptPart(r), path);
    page = withPart(page, "inputs", inputsTable(r), path);
    page = withPart(page, "outputs", outputsTable(r), path);
    page = withPart(page, "examples", examplesPart(schema, exampleOf(r.name)), path);
    out.push({ path, content: page });
  }
  for (const ex of EXAMPLES.filter((e) => e.page.startsWith("docs/lookups/"))) {
    const file = join(root, ex.page);
    if (!existsSync(file)) fail(`${ex.page} (the page of ${ex.subject} in tools/examples.ts) is missing`);
    const page = withPart(readFileSync(file, "utf8"), "examples", examplesPart(schema, ex), ex.page);
    out.push({ path: ex.page, content: page });
  }
  out.push(...listPages(root));
  const governance = "docs/governance.md";
  out.push({
    path: governance,
    content: withPart(readFileSync(join(root, governance), "utf8"), "rules", rulesTable(), governance),
  });
  return out;
}

/** The pages listing the resources: docs/_index.md's table, the README's links to their pages and its import ids. */
function listPages(root: string): Generated[] {
  const index = "docs/_index.md";
  const readme = "README.md";
  let text = readFileSync(join(root, readme), "utf8");
  text = withPart(text, "resource-links", resourceLinks(), readme, true);
  text = withPart(text, "import-ids", importIdsTable(), readme);
  return [
    {
      path: index,
      content: withPart(readFileSync(join(root, index), "utf8"), "resources", resourcesTable(), index),
    },
    { path: readme, content: text },
  ];
}

/**
 * A readable diff of two texts: the changed lines (`-` on disk, `+` generated) with 2 lines of context, in hunks
 * headed by their line numbers (a longest-common-subsequence diff of the lines).
 */
export function diff(path: string, was: string, now: string): string {
  const a = was.split("\n");
  const b = now.split("\n");
  // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..]
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    const row = lcs[i] as number[];
    const below = lcs[i + 1] as number[];
    for (let j = b.length - 1; j >= 0; j--)
      row[j] = a[i] === b[j] ? (below[j + 1] ?? 0) + 1 : Math.max(below[j] ?? 0, row[j + 1] ?? 0);
  }
  type Op = { kind: " " | "-" | "+"; text: string; lineA: number; lineB: number };
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      ops.push({ kind: " ", text: a[i] ?? "", lineA: i++, lineB: j++ });
    } else if (i < a.length && (j >= b.length || (lcs[i + 1]?.[j] ?? 0) >= (lcs[i]?.[j + 1] ?? 0))) {
      ops.push({ kind: "-", text: a[i] ?? "", lineA: i++, lineB: j });
    } else {
      ops.push({ kind: "+", text: b[j] ?? "", lineA: i, lineB: j++ });
    }
  }
  const out = [`--- ${path} (on disk)`, `+++ ${path} (generated)`];
  const context = 2;
  let k = 0;
  while (k < ops.length) {
    if (ops[k]?.kind === " ") {
      k++;
      continue;
    }
    let start = Math.max(0, k - context);
    let end = k;
    // extend the hunk while changes follow within 2·context lines
    for (let m = k; m < ops.length; m++) {
      if (ops[m]?.kind !== " ") end = m;
      else if (m - end > 2 * context) break;
    }
    end = Math.min(ops.length - 1, end + context);
    while (start > 0 && ops[start - 1]?.kind !== " ") start--;
    const first = ops[start];
    out.push(`@@ on disk line ${(first?.lineA ?? 0) + 1}, generated line ${(first?.lineB ?? 0) + 1} @@`);
    for (let m = start; m <= end; m++) out.push(`${ops[m]?.kind}${ops[m]?.text}`);
    k = end + 1;
  }
  return out.join("\n");
}

/** The files whose content differs from what the schemas give, each with its diff ("" when missing). */
export function stale(root = ROOT, files = generate(root)): { path: string; diff: string }[] {
  return files.flatMap((g) => {
    const file = join(root, g.path);
    const was = existsSync(file) ? readFileSync(file, "utf8") : undefined;
    if (was === g.content) return [];
    return [
      { path: g.path, diff: was === undefined ? `${g.path} is missing` : diff(g.path, was, g.content) },
    ];
  });
}

function main(argv: string[]): number {
  const check = argv.includes("--check");
  try {
    const files = generate(ROOT);
    const old = stale(ROOT, files);
    if (check) {
      if (old.length === 0) return 0;
      process.stderr.write(
        `${old.map((o) => o.diff).join("\n\n")}\n\ncodegen: ${old.map((o) => o.path).join(", ")} ` +
          "stale: run `npm run codegen` and commit the result\n",
      );
      return 1;
    }
    for (const o of old) {
      const g = files.find((f) => f.path === o.path);
      if (g) writeFileSync(join(ROOT, g.path), g.content);
      process.stdout.write(`codegen: wrote ${o.path}\n`);
    }
    return 0;
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
