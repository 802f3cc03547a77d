/**
 * Arrows point down (CONTRIBUTING, "Layout"; issue 50, item 5): every `.ts`/`.mts` file (not `.d.ts`) under
 * provider/, sdk/, emulator/ and tools/ imports only its own room, rooms of lower layers, and, across top folders,
 * the paths its layer names in {@link LAYERS}. Read from the actual import specifiers with the TypeScript compiler API:
 * `import … from`, `import type`, `export … from`, `import x = require(…)`, `import("…")` and `require("…")` with a
 * literal, and `typeof import("…")` types. Relative specifiers and the package's own (`pulumi-posthog`,
 * `pulumi-posthog/provider`, … through package.json's `exports`) are checked; other packages' are not. test/, bench/
 * and examples/ are not read (they may import anything), and nothing read may import them. Apart from the layers,
 * nothing under provider/ imports sdk/, test/, bench/, tools/ or emulator/ ({@link NOT_FROM_PROVIDER}). No import
 * runs up or sideways today, so there is no allow-list: none may be added.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = join(__dirname, "..", "..");

/** One layer: its rooms, and what its files may import outside their own top folder. */
interface Layer {
  /** What the layer is, as error messages name it. */
  name: string;
  /**
   * Its rooms: a folder (ending in `/`) or one file, from the repository root. A file belongs to the room of the
   * longest path that holds it; rooms of one layer do not import each other.
   */
  rooms: string[];
  /** The paths (folders ending in `/`, or files) its files may import outside their own top folder; none if absent. */
  outside?: string[];
}

/**
 * The layers, bottom to top. A file may import its own room and any room of a LOWER layer: never a room of a higher
 * layer (up), nor another room of its own layer (sideways). Across top folders it may import only its layer's
 * `outside`: so nothing in provider/ imports sdk/, tools/, emulator/, test/ or bench/, and the emulator imports
 * nothing of ours. A file in no room fails: place it here.
 */
const LAYERS: readonly Layer[] = [
  // A stand-in for PostHog over HTTP: the provider reaches it through the network, never through an import.
  { name: "emulator", rooms: ["emulator/"] },
  { name: "client", rooms: ["provider/client/"] },
  { name: "framework", rooms: ["provider/framework/"] },
  { name: "resources and lookups", rooms: ["provider/resources/", "provider/lookups/"] },
  { name: "adapters", rooms: ["provider/adapters/"] },
  // The dynamic SDK's entry (`pulumi-posthog/provider`) sits just above the adapters: it may take a dynamic adapter
  // from provider/adapters/, while no adapter (the plugin) leans on it.
  // The named dynamic providers (generated from the one list), which the entry re-exports.
  { name: "dynamic providers", rooms: ["provider/providers.ts"] },
  { name: "dynamic SDK entry", rooms: ["provider/index.ts"] },
  // provider/apps/*.ts: what both applications read (organization.ts, dashboard-template.ts).
  { name: "applications' shared code", rooms: ["provider/apps/"] },
  { name: "applications", rooms: ["provider/apps/export/", "provider/apps/governance/"] },
  { name: "command", rooms: ["provider/cli.ts"] },
  {
    name: "SDK",
    rooms: ["sdk/"],
    // The client and the lookups' plain code it wraps, the text checks it runs in the program, and the provider's
    // entry (its __provider shim loads `pulumi-posthog/provider` by name at run time).
    outside: ["provider/client/", "provider/lookups/", "provider/framework/text.ts", "provider/index.ts"],
  },
  { name: "development tools", rooms: ["tools/"], outside: ["provider/", "sdk/", "emulator/"] },
];

/** One import specifier found in a file. */
interface Specifier {
  /** The specifier as written. */
  text: string;
  /** Its 1-based line. */
  line: number;
}

/** The module specifier of a `require(…)`/`import(…)` call, when its argument is a literal. */
function callSpecifier(node: ts.CallExpression): ts.StringLiteralLike | undefined {
  const isImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
  const isRequire = ts.isIdentifier(node.expression) && node.expression.text === "require";
  const arg = node.arguments[0];
  return (isImport || isRequire) && arg && ts.isStringLiteralLike(arg) ? arg : undefined;
}

/** Every import specifier in `text` (the source of `file`), in source order. */
function importSpecifiers(file: string, text: string): Specifier[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Specifier[] = [];
  const add = (literal: ts.StringLiteralLike) =>
    found.push({
      text: literal.text,
      line: source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1,
    });
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      if (node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) add(node.moduleSpecifier);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      if (ts.isStringLiteral(node.moduleReference.expression)) add(node.moduleReference.expression);
    } else if (ts.isCallExpression(node)) {
      const literal = callSpecifier(node);
      if (literal) add(literal);
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) add(arg.literal);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The package's own specifiers (`pulumi-posthog`, `pulumi-posthog/client`, …) and the source file each names, from
 * package.json's `exports` (`./dist/<path>.js` is `<path>.ts`).
 */
function packageSpecifiers(): Map<string, string> {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    name: string;
    exports: Record<string, string | { default?: string }>;
  };
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(manifest.exports)) {
    const target = typeof value === "string" ? value : value.default;
    if (!target?.startsWith("./dist/") || !target.endsWith(".js")) continue;
    out.set(posix.join(manifest.name, key), `${target.slice("./dist/".length, -".js".length)}.ts`);
  }
  return out;
}

/**
 * The file `specifier`, imported from `file`, names: a path from the repository root, resolved against `known` (an
 * extensionless path, `.js` for `.ts`, a folder's index.ts), else the joined path as written. Undefined for another
 * package's specifier.
 */
function resolve(
  file: string,
  specifier: string,
  known: ReadonlySet<string>,
  ownPackage: ReadonlyMap<string, string>,
): string | undefined {
  const own = ownPackage.get(specifier);
  if (own) return own;
  if (!specifier.startsWith(".")) return undefined;
  const path = posix.join(posix.dirname(file), specifier);
  const swapped = path.replace(/\.js$/, ".ts").replace(/\.mjs$/, ".mts");
  const candidates = [path, swapped, `${path}.ts`, `${path}.mts`, `${path}/index.ts`];
  return candidates.find((c) => known.has(c)) ?? path;
}

/** Whether `path` (a file) lies in `place` (a folder ending in `/`, or a file). */
const within = (path: string, place: string) =>
  place.endsWith("/") ? path.startsWith(place) : path === place;

/** The room holding `path` (the longest that does) and its layer's index in `layers`, if any holds it. */
function roomOf(path: string, layers: readonly Layer[]): { room: string; layer: number } | undefined {
  let best: { room: string; layer: number } | undefined;
  layers.forEach((layer, index) => {
    for (const room of layer.rooms) {
      if (within(path, room) && room.length > (best?.room.length ?? -1)) best = { room, layer: index };
    }
  });
  return best;
}

/** The top folder of a path (`provider/`), or the file itself at the root. */
const topOf = (path: string) => (path.includes("/") ? `${path.slice(0, path.indexOf("/"))}/` : path);

/** The rule one import from `file` (in `from`) to `target` breaks, if any. */
function ruleBroken(file: string, target: string, layers: readonly Layer[]): string | undefined {
  const from = roomOf(file, layers);
  if (!from) return undefined; // reported once per file by the caller
  const fromLayer = layers[from.layer] as Layer;
  if (topOf(target) !== topOf(file)) {
    const outside = fromLayer.outside ?? [];
    if (!outside.some((place) => within(target, place))) {
      const allowed = outside.length ? `only ${outside.join(", ")}` : "nothing";
      return `outside: ${from.room} (${fromLayer.name}) imports ${allowed} outside ${topOf(file)}`;
    }
  }
  const to = roomOf(target, layers);
  if (!to || to.room === from.room) return undefined;
  const toLayer = layers[to.layer] as Layer;
  if (to.layer > from.layer) {
    return `up: ${from.room} (${fromLayer.name}) sits below ${to.room} (${toLayer.name}); arrows point down`;
  }
  if (to.layer === from.layer) {
    return `sideways: ${from.room} and ${to.room} are rooms of one layer (${fromLayer.name}) and do not import each other`;
  }
  return undefined;
}

/**
 * Every import in `files` (path from the repository root → source text) that breaks the layers, and every file that
 * no room holds: one line each, naming the file and line, the import and the rule broken.
 */
function layerViolations(
  files: ReadonlyMap<string, string>,
  layers: readonly Layer[] = LAYERS,
  ownPackage: ReadonlyMap<string, string> = new Map(),
): string[] {
  const known = new Set(files.keys());
  const out: string[] = [];
  for (const [file, text] of files) {
    if (!roomOf(file, layers)) {
      out.push(`${file}: in no room of LAYERS (test/tools/layers.test.ts): place it in its layer`);
      continue;
    }
    for (const specifier of importSpecifiers(file, text)) {
      const target = resolve(file, specifier.text, known, ownPackage);
      const rule = target && ruleBroken(file, target, layers);
      if (rule) out.push(`${file}:${specifier.line} imports "${specifier.text}" (${target}): ${rule}`);
    }
  }
  return out;
}

/** The top folders nothing under provider/ imports, whatever {@link LAYERS} says. */
const NOT_FROM_PROVIDER = ["sdk/", "test/", "bench/", "tools/", "emulator/"];

/**
 * Every import of a file under provider/ in `files` (path from the repository root → source text) that reaches into
 * {@link NOT_FROM_PROVIDER}: one line each, naming the file and line and the import.
 */
function providerReachingOut(
  files: ReadonlyMap<string, string>,
  ownPackage: ReadonlyMap<string, string>,
): string[] {
  const known = new Set(files.keys());
  return [...files].flatMap(([file, text]) => {
    if (!file.startsWith("provider/")) return [];
    return importSpecifiers(file, text).flatMap((specifier) => {
      const target = resolve(file, specifier.text, known, ownPackage);
      if (!target || !NOT_FROM_PROVIDER.includes(topOf(target))) return [];
      return [
        `${file}:${specifier.line} imports "${specifier.text}" (${target}): provider/ imports no ${topOf(target)}`,
      ];
    });
  });
}

/** The folders read, from the repository root. */
const FOLDERS = ["provider", "sdk", "emulator", "tools"];

/** Every `.ts`/`.mts` file (not `.d.ts`) under `dir`, from the repository root; node_modules and Go's folder skipped. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules" && path !== "tools/pulumi-cli") out.push(...sourceFiles(path));
    } else if (/\.m?ts$/.test(entry.name) && !/\.d\.m?ts$/.test(entry.name)) {
      out.push(path);
    }
  }
  return out;
}

/** The files of {@link FOLDERS} (path from the repository root → source text), read once. */
const tree = (() => {
  let files: ReadonlyMap<string, string> | undefined;
  return () =>
    (files ??= new Map(
      FOLDERS.flatMap(sourceFiles).map((file) => [file, readFileSync(join(root, file), "utf8")] as const),
    ));
})();

describe("arrows point down: no import runs from a lower layer to a higher one", () => {
  it("finds every form of import, type-only and lazy ones included", () => {
    const text = [
      'import { a } from "./a";',
      'import type { B } from "../b";',
      'export { c } from "./c";',
      'export * from "./d";',
      'import e = require("./e");',
      'const f = () => import("./f");',
      'const g = require("./g");',
      'type H = typeof import("./h");',
      "const i = require(name);", // not a literal: not read
      'import "node:fs";',
    ].join("\n");
    expect(importSpecifiers("x.ts", text)).toEqual([
      { text: "./a", line: 1 },
      { text: "../b", line: 2 },
      { text: "./c", line: 3 },
      { text: "./d", line: 4 },
      { text: "./e", line: 5 },
      { text: "./f", line: 6 },
      { text: "./g", line: 7 },
      { text: "./h", line: 8 },
      { text: "node:fs", line: 10 },
    ]);
  });

  it("fails on an import that runs up, sideways or out of its top folder, and passes one that runs down", () => {
    const files = new Map([
      ["provider/client/x.ts", 'import { y } from "../framework/y";\nimport { z } from "./z";'],
      ["provider/client/z.ts", ""],
      ["provider/framework/y.ts", 'import type { X } from "../client/x";'],
      ["provider/apps/export/program.ts", 'import { audit } from "../governance/audit";'],
      ["provider/apps/governance/audit.ts", 'import { read } from "../organization";'],
      ["provider/apps/organization.ts", 'const l = () => require("../../sdk/lookups");'],
      ["provider/adapters/plugin/index.ts", 'type P = typeof import("../../index");'],
      // The dynamic SDK's adapter, which provider/index.ts hands out: the entry sits above the adapters.
      ["provider/adapters/dynamic.ts", 'import { defineResource } from "../framework/lifecycle";'],
      [
        "provider/index.ts",
        'export * from "./resources";\nexport { dynamicProvider } from "./adapters/dynamic";',
      ],
      ["provider/resources/index.ts", 'export { e } from "../../emulator";'],
      ["provider/stray.ts", ""],
      [
        "sdk/index.ts",
        'import { run } from "pulumi-posthog/provider/cli";\nimport "../provider/apps/organization";',
      ],
      ["emulator/index.ts", 'import { createClient } from "pulumi-posthog/client";'],
      [
        "tools/codegen.ts",
        'import { RESOURCES } from "../provider/resources";\nimport "../test/support/files";',
      ],
    ]);
    const ownPackage = new Map([
      ["pulumi-posthog/client", "provider/client/index.ts"],
      ["pulumi-posthog/provider/cli", "provider/cli.ts"],
    ]);
    expect(layerViolations(files, LAYERS, ownPackage)).toEqual([
      'provider/client/x.ts:1 imports "../framework/y" (provider/framework/y.ts): up: provider/client/ (client) sits ' +
        "below provider/framework/ (framework); arrows point down",
      'provider/apps/export/program.ts:1 imports "../governance/audit" (provider/apps/governance/audit.ts): ' +
        "sideways: provider/apps/export/ and provider/apps/governance/ are rooms of one layer (applications) and do " +
        "not import each other",
      'provider/apps/organization.ts:1 imports "../../sdk/lookups" (sdk/lookups): outside: provider/apps/ ' +
        "(applications' shared code) imports nothing outside provider/",
      'provider/adapters/plugin/index.ts:1 imports "../../index" (provider/index.ts): up: provider/adapters/ ' +
        "(adapters) sits below provider/index.ts (dynamic SDK entry); arrows point down",
      'provider/resources/index.ts:1 imports "../../emulator" (emulator/index.ts): outside: provider/resources/ (resources ' +
        "and lookups) imports nothing outside provider/",
      "provider/stray.ts: in no room of LAYERS (test/tools/layers.test.ts): place it in its layer",
      'sdk/index.ts:1 imports "pulumi-posthog/provider/cli" (provider/cli.ts): outside: sdk/ (SDK) imports only ' +
        "provider/client/, provider/lookups/, provider/framework/text.ts, provider/index.ts outside sdk/",
      'sdk/index.ts:2 imports "../provider/apps/organization" (provider/apps/organization.ts): outside: sdk/ (SDK) ' +
        "imports only provider/client/, provider/lookups/, provider/framework/text.ts, provider/index.ts outside sdk/",
      'emulator/index.ts:1 imports "pulumi-posthog/client" (provider/client/index.ts): outside: emulator/ ' +
        "(emulator) imports nothing outside emulator/",
      'tools/codegen.ts:2 imports "../test/support/files" (test/support/files): outside: tools/ (development tools) ' +
        "imports only provider/, sdk/, emulator/ outside tools/",
    ]);
  });

  it("fails on a file under provider/ that imports sdk/, test/, bench/, tools/ or emulator/", () => {
    const files = new Map([
      [
        "provider/client/a.ts",
        'import { b } from "../framework/b";\nimport { h } from "../../test/support/h";',
      ],
      [
        "provider/framework/b.ts",
        'import type { S } from "pulumi-posthog";\nconst r = () => require("../../bench/r");',
      ],
      ["provider/cli.ts", 'import { t } from "../tools/t";\nimport { e } from "pulumi-posthog/emulator";'],
      ["provider/index.ts", 'export * from "./client/a";'],
      ["sdk/index.ts", 'import { a } from "../provider/client/a";'],
    ]);
    const ownPackage = new Map([
      ["pulumi-posthog", "sdk/index.ts"],
      ["pulumi-posthog/emulator", "emulator/index.ts"],
    ]);
    expect(providerReachingOut(files, ownPackage)).toEqual([
      'provider/client/a.ts:2 imports "../../test/support/h" (test/support/h): provider/ imports no test/',
      'provider/framework/b.ts:1 imports "pulumi-posthog" (sdk/index.ts): provider/ imports no sdk/',
      'provider/framework/b.ts:2 imports "../../bench/r" (bench/r): provider/ imports no bench/',
      'provider/cli.ts:1 imports "../tools/t" (tools/t): provider/ imports no tools/',
      'provider/cli.ts:2 imports "pulumi-posthog/emulator" (emulator/index.ts): provider/ imports no emulator/',
    ]);
  });

  it("the package's own specifiers name their source files (package.json exports)", () => {
    expect(Object.fromEntries(packageSpecifiers())).toEqual({
      "pulumi-posthog": "sdk/index.ts",
      "pulumi-posthog/client": "provider/client/index.ts",
      "pulumi-posthog/provider": "provider/index.ts",
      "pulumi-posthog/emulator": "emulator/index.ts",
    });
  });

  it("reads the tree: every room has files, the imports are many, and each of ours names a file read", () => {
    const files = tree();
    for (const layer of LAYERS) {
      for (const room of layer.rooms)
        expect(
          [...files.keys()].some((f) => within(f, room)),
          room,
        ).toBe(true);
    }
    const imports = [...files].flatMap(([file, text]) => importSpecifiers(file, text));
    expect(imports.length).toBeGreaterThan(300);
    // An import into a folder read that resolves to no file read would escape the rules.
    const known = new Set(files.keys());
    const tops = FOLDERS.map((folder) => `${folder}/`);
    const ownPackage = packageSpecifiers();
    const unresolved = [...files].flatMap(([file, text]) =>
      importSpecifiers(file, text)
        .filter((s) => {
          const target = resolve(file, s.text, known, ownPackage);
          return target !== undefined && tops.includes(topOf(target)) && !known.has(target);
        })
        .map((s) => `${file}:${s.line} imports "${s.text}": no file read`),
    );
    expect(unresolved).toEqual([]);
  });

  it("in provider/, sdk/, emulator/ and tools/, every import runs down its layers", () => {
    expect(layerViolations(tree(), LAYERS, packageSpecifiers())).toEqual([]);
  });

  it("nothing under provider/ imports sdk/, test/, bench/, tools/ or emulator/", () => {
    expect(providerReachingOut(tree(), packageSpecifiers())).toEqual([]);
  });
});
