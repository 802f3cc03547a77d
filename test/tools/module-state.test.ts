/**
 * No module-level mutable state in provider/ (CONTRIBUTING, "Layout"; issue 50, item 4): per-run state lives on one
 * object made when the provider is configured and handed to the operations, never in a module, where it is right
 * only while a provider host is one process per run (no type says so). Every `.ts` file under provider/ is read with
 * the TypeScript compiler API (the `typescript` dev dependency): one program of provider/'s files alone, their
 * imports of each other resolved (no other package, no library), so a name resolves to the declaration it means: a
 * local that shadows a module binding is told apart, and a binding imported by another file is the same binding.
 * A module-level binding is mutable state when it is:
 * - declared with `let` or `var` at the top level;
 * - a `const` that starts as an empty container filled at run time: `new Map()`, `new Set()`, `new WeakMap()`,
 *   `new WeakSet()` (no entries, or `[]`), `[]` or `{}`, or an object literal holding an empty `new Map()` (…);
 *   a constant empty one is written `Object.freeze([])`;
 * - a `const` that is mutated in any file of provider/: `.set(`, `.add(`, `.delete(`, `.clear(`, `.push(`, `.pop(`,
 *   `.shift(`, `.unshift(`, `.splice(`, `.sort(`, `.reverse(`, `.fill(`, `.copyWithin(` called on it or on a property
 *   of it, a property of it assigned (`x.y = …`, `x[k] ??= …`), incremented (`x.n++`) or deleted, or
 *   `Object.assign(it, …)`; through its own name, an import of it (named, renamed, re-exported, or `ns.x` of
 *   `import * as ns`);
 * - a class's static field, by the same rules: one not `readonly` is a `let`, a `readonly` one a `const`.
 * An instance field is not: it lives on an object, which is where per-run state goes. A constant table
 * (`new Set(["a", "b"])`, `new Map([...])`, an object literal) read and never mutated is fine. Not followed: a const
 * handed to a function that fills it, or mutated through another name (`const c = cache; c.set(…)`).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = join(__dirname, "..", "..");

/**
 * Module-level mutable state allowed in provider/: none (issue 50, item 4 moved the 38 bindings found when this test
 * was written onto the run's objects: provider/framework/run.ts `Run`, provider/client/shared.ts `ClientShared`).
 * Never add an entry: per-run state goes on the run. The checks below still fail on an entry whose binding is gone.
 */
const ALLOWED: ReadonlyArray<{ file: string; binding: string }> = [];

/** Methods that change the container they are called on. */
const MUTATORS = new Set([
  "set",
  "add",
  "delete",
  "clear",
  "push",
  "pop",
  "shift",
  "unshift",
  "splice",
  "sort",
  "reverse",
  "fill",
  "copyWithin",
]);

/** Constructors of containers. */
const CONTAINERS = new Set(["Map", "Set", "WeakMap", "WeakSet"]);

/** One module-level binding holding mutable state. */
interface Found {
  /** The file, from the repository root. */
  file: string;
  /** The binding's name (`Class.field` for a static field). */
  binding: string;
  /** The 1-based line of its declaration. */
  line: number;
  /** Why it is mutable state (the first reason found). */
  why: string;
}

/** A module-level binding that is state, or would be if mutated: where it is declared, and why if it is already. */
interface Candidate {
  /** Where it is declared. */
  site: Omit<Found, "why">;
  /** Why it is state (its declaration, or the first mutation found); undefined while none is known. */
  why?: string | undefined;
}

/** `node` without the parentheses, `as`, `satisfies` and `!` around it. */
function bare(node: ts.Expression): ts.Expression {
  let out = node;
  while (
    ts.isParenthesizedExpression(out) ||
    ts.isAsExpression(out) ||
    ts.isSatisfiesExpression(out) ||
    ts.isNonNullExpression(out) ||
    ts.isTypeAssertionExpression(out)
  ) {
    out = out.expression;
  }
  return out;
}

/** Whether `init` is `new Map()` (or Set, WeakMap, WeakSet) with no entries (no argument, or `[]`). */
function emptyNewContainer(init: ts.Expression): boolean {
  const node = bare(init);
  if (!ts.isNewExpression(node) || !ts.isIdentifier(node.expression)) return false;
  if (!CONTAINERS.has(node.expression.text)) return false;
  const first = node.arguments?.[0];
  if (first === undefined) return true;
  const entries = bare(first);
  return ts.isArrayLiteralExpression(entries) && entries.elements.length === 0;
}

/**
 * Whether `init` is an empty container, or an object literal holding one as a property (`{ runs: new Map() }`):
 * `new Map()` (or Set, WeakMap, WeakSet; no entries), `[]` or `{}`.
 */
function emptyContainer(init: ts.Expression): boolean {
  const node = bare(init);
  if (ts.isArrayLiteralExpression(node)) return node.elements.length === 0;
  if (ts.isObjectLiteralExpression(node)) {
    if (node.properties.length === 0) return true;
    return node.properties.some((p) => ts.isPropertyAssignment(p) && emptyNewContainer(p.initializer));
  }
  return emptyNewContainer(node);
}

/**
 * The names along a chain of property and element accesses, root first: the identifier (or `this`) at its root,
 * then each property name (`a`, `b`, `d` of `a.b[c].d`). Any of them may name the state the chain reaches.
 */
function chainNames(node: ts.Expression): ts.Node[] {
  const names: ts.Node[] = [];
  let out = bare(node);
  while (ts.isPropertyAccessExpression(out) || ts.isElementAccessExpression(out)) {
    if (ts.isPropertyAccessExpression(out)) names.unshift(out.name);
    out = bare(out.expression);
  }
  if (ts.isIdentifier(out) || out.kind === ts.SyntaxKind.ThisKeyword) names.unshift(out);
  return names;
}

/** Whether `kind` is an assignment operator (`=`, `+=`, `??=`, …). */
const isAssignment = (kind: ts.SyntaxKind) =>
  kind >= ts.SyntaxKind.FirstAssignment && kind <= ts.SyntaxKind.LastAssignment;

/** What `node` writes to, if it is an assignment, a `delete`, or a `++`/`--`. */
function writtenOperand(node: ts.Node): ts.Expression | undefined {
  if (ts.isBinaryExpression(node) && isAssignment(node.operatorToken.kind)) return node.left;
  if (ts.isDeleteExpression(node)) return node.expression;
  if (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) {
    const op = node.operator;
    if (op === ts.SyntaxKind.PlusPlusToken || op === ts.SyntaxKind.MinusMinusToken) return node.operand;
  }
  return undefined;
}

/** What `node` mutates and how: the names along the mutated chain (root first) and a description, if it mutates. */
function mutation(node: ts.Node): { names: ts.Node[]; how: string } | undefined {
  if (ts.isCallExpression(node)) {
    const callee = bare(node.expression);
    if (!ts.isPropertyAccessExpression(callee)) return undefined;
    if (MUTATORS.has(callee.name.text)) {
      return { names: chainNames(callee.expression), how: `\`.${callee.name.text}(\` is called on it` };
    }
    const first = node.arguments[0];
    const isObject = ts.isIdentifier(callee.expression) && callee.expression.text === "Object";
    if (isObject && callee.name.text === "assign" && first) {
      return { names: chainNames(first), how: "`Object.assign` writes into it" };
    }
    return undefined;
  }
  const written = writtenOperand(node);
  const inner = written && bare(written);
  if (!inner || !(ts.isPropertyAccessExpression(inner) || ts.isElementAccessExpression(inner)))
    return undefined;
  return { names: chainNames(inner), how: "a property of it is written" };
}

/** The names a binding pattern or identifier declares. */
function boundNames(name: ts.BindingName): ts.Identifier[] {
  if (ts.isIdentifier(name)) return [name];
  return name.elements.flatMap((element) =>
    ts.isOmittedExpression(element) ? [] : boundNames(element.name),
  );
}

/** The symbol `node` names, through imports and re-exports to its declaration. */
function resolved(checker: ts.TypeChecker, node: ts.Node): ts.Symbol | undefined {
  const symbol = checker.getSymbolAtLocation(node);
  return symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

/**
 * Why a binding is state from its declaration alone: `notConstant` when it is not constant, or an empty container
 * (`init`), else undefined.
 */
function declaredState(
  constant: boolean,
  notConstant: string,
  init: ts.Expression | undefined,
  source: ts.SourceFile,
) {
  if (!constant) return notConstant;
  if (init && emptyContainer(init)) {
    return `starts as an empty container (\`${bare(init).getText(source)}\`), filled at run time`;
  }
  return undefined;
}

/** The candidates a top-level `let`/`var`/`const` statement declares. */
function variableCandidates(statement: ts.VariableStatement, source: ts.SourceFile) {
  if (statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.DeclareKeyword)) return [];
  const flags = statement.declarationList.flags;
  const constant = (flags & ts.NodeFlags.Const) !== 0;
  const keyword = flags & ts.NodeFlags.Let ? "let" : "var";
  return statement.declarationList.declarations.flatMap((declaration) => {
    // An empty container only counts when it is the binding itself, not a value destructured out of one.
    const init = ts.isIdentifier(declaration.name) ? declaration.initializer : undefined;
    const why = declaredState(constant, `a module-level \`${keyword}\``, init, source);
    return boundNames(declaration.name).map((name) => ({ node: name, binding: name.text, why }));
  });
}

/** The candidates a top-level class declares: its static fields (a `readonly` one as a `const`, else a `let`). */
function classCandidates(statement: ts.ClassDeclaration, source: ts.SourceFile) {
  const className = statement.name?.text;
  if (!className) return [];
  return statement.members.flatMap((member) => {
    if (!ts.isPropertyDeclaration(member)) return [];
    const has = (kind: ts.SyntaxKind) => member.modifiers?.some((m) => m.kind === kind) ?? false;
    if (!has(ts.SyntaxKind.StaticKeyword)) return [];
    const readonly = has(ts.SyntaxKind.ReadonlyKeyword);
    const why = declaredState(readonly, "a static field not `readonly`", member.initializer, source);
    return [{ node: member.name, binding: `${className}.${member.name.getText(source)}`, why }];
  });
}

/** Every candidate one file declares at its top level, by symbol. */
function candidatesIn(
  file: string,
  source: ts.SourceFile,
  checker: ts.TypeChecker,
): Map<ts.Symbol, Candidate> {
  const out = new Map<ts.Symbol, Candidate>();
  for (const statement of source.statements) {
    const declared = ts.isVariableStatement(statement)
      ? variableCandidates(statement, source)
      : ts.isClassDeclaration(statement)
        ? classCandidates(statement, source)
        : [];
    for (const { node, binding, why } of declared) {
      const symbol = checker.getSymbolAtLocation(node);
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      if (symbol) out.set(symbol, { site: { file, binding, line }, why });
    }
  }
  return out;
}

/** Marks each candidate that a statement of `source` (the file `file`) mutates with the first such mutation. */
function markMutations(
  file: string,
  source: ts.SourceFile,
  checker: ts.TypeChecker,
  all: Map<ts.Symbol, Candidate>,
) {
  const visit = (node: ts.Node): void => {
    const change = mutation(node);
    if (change) {
      const hit = change.names
        .map((name) => resolved(checker, name))
        .find((s) => s !== undefined && all.has(s));
      const candidate = hit && all.get(hit);
      if (candidate && !candidate.why) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        candidate.why = `${change.how} (${candidate.site.file === file ? "line" : `${file}, line`} ${line})`;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

/**
 * One program of `files` (path from the repository root → source text) alone: their imports of each other resolve
 * (extensionless, `.js` for `.ts`, a folder's index.ts), nothing else does, and no library is read. The files sit
 * under a virtual `/`.
 */
function programOf(files: ReadonlyMap<string, string>): ts.Program {
  const options: ts.CompilerOptions = {
    noLib: true,
    types: [],
    target: ts.ScriptTarget.Latest,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
  };
  const text = (name: string) => files.get(name.replace(/^\//, ""));
  const host = ts.createCompilerHost(options);
  host.getCurrentDirectory = () => "/";
  host.getSourceFile = (name, version) => {
    const source = text(name);
    return source === undefined ? undefined : ts.createSourceFile(name, source, version, true);
  };
  host.fileExists = (name) => text(name) !== undefined;
  host.readFile = text;
  host.directoryExists = (dir) =>
    [...files.keys()].some((f) => `/${f}`.startsWith(`${dir.replace(/\/$/, "")}/`));
  host.getDirectories = () => [];
  host.realpath = (path) => path;
  return ts.createProgram({ rootNames: [...files.keys()].map((f) => `/${f}`), options, host });
}

/** The module-level mutable state in `files` (path from the repository root → source text), by file then line. */
function moduleState(files: ReadonlyMap<string, string>): Found[] {
  const program = programOf(files);
  const checker = program.getTypeChecker();
  const sources = [...files.keys()].map((file) => {
    const source = program.getSourceFile(`/${file}`);
    if (!source) throw new Error(`${file}: not in the program`);
    return { file, source };
  });
  const all = new Map<ts.Symbol, Candidate>();
  for (const { file, source } of sources)
    for (const [s, c] of candidatesIn(file, source, checker)) all.set(s, c);
  for (const { file, source } of sources) markMutations(file, source, checker, all);
  return [...all.values()]
    .flatMap(({ site, why }) => (why ? [{ ...site, why }] : []))
    .sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
}

/** Every `.ts` file (not `.d.ts`) under `dir`, from the repository root. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** provider/'s module-level mutable state today (read once, for the two tests that need it). */
const providerState = (() => {
  let found: Found[] | undefined;
  return () =>
    (found ??= moduleState(
      new Map(sourceFiles("provider").map((f) => [f, readFileSync(join(root, f), "utf8")] as const)),
    ));
})();

/** Whether `found` is allow-listed. */
const allowed = (found: Found) => ALLOWED.some((e) => e.file === found.file && e.binding === found.binding);

describe("no module-level mutable state in provider/", () => {
  it("finds lets, empty containers and mutated constants, and leaves constant tables and shadowing locals alone", () => {
    const text = [
      "let counter = 0;", // 1
      "export var legacy: string | undefined;", // 2
      "const cache = new Map<string, number>();", // 3
      "const seen: string[] = [];", // 4
      "const byId = {} as Record<string, number>;", // 5
      "const keys = new WeakMap([]);", // 6
      'const NAMES = new Set(["a", "b"]);', // 7: constant, never mutated
      "const TABLE = { a: 1, b: [2] };", // 8: written below
      "const LIST = [1, 2];", // 9: sorted below
      "const RULES = Object.freeze({ x: 1 });", // 10: constant
      "let [first, { second }] = [1, { second: 2 }];", // 11: two bindings
      "export function f(names: string[]) {",
      "  const cache = new Set<string>();", // a local of the same name: no module state
      "  cache.add(names[0] ?? '');",
      "  const LIST: number[] = [];",
      "  LIST.push(1);", // the local LIST, not the module's
      "  TABLE.b.push(3);", // 17
      "  return NAMES.has('a') && [...LIST].sort();", // sorts a copy
      "}",
      "[...LIST].sort(); LIST.sort();", // 20
      "const runs = { byKey: new Map<string, number>() };", // 21
      "const NONE = Object.freeze([]);", // 22: a constant empty array
    ].join("\n");
    const found = moduleState(new Map([["provider/x.ts", text]])).map(({ binding, line, why }) => [
      binding,
      line,
      why,
    ]);
    expect(found).toEqual([
      ["counter", 1, "a module-level `let`"],
      ["legacy", 2, "a module-level `var`"],
      ["cache", 3, "starts as an empty container (`new Map<string, number>()`), filled at run time"],
      ["seen", 4, "starts as an empty container (`[]`), filled at run time"],
      ["byId", 5, "starts as an empty container (`{}`), filled at run time"],
      ["keys", 6, "starts as an empty container (`new WeakMap([])`), filled at run time"],
      ["TABLE", 8, "`.push(` is called on it (line 17)"],
      ["LIST", 9, "`.sort(` is called on it (line 20)"],
      ["first", 11, "a module-level `let`"],
      ["second", 11, "a module-level `let`"],
      [
        "runs",
        21,
        "starts as an empty container (`{ byKey: new Map<string, number>() }`), filled at run time",
      ],
    ]);
  });

  it("finds a constant written through a property, an index, `+=`, `delete`, `++` or `Object.assign`", () => {
    const text = [
      "const a = { n: 0 };",
      "const b: Record<string, number> = { x: 1 };",
      "const c = { n: 0 };",
      "const d = { n: 0 };",
      "const e: Record<string, number> = { x: 1 };",
      "const g = { n: 0 };",
      "const h = { n: 0 };", // only read
      "export function f(k: string) {",
      "  a.n = 1; delete b.x; c.n++; Object.assign(d, { n: 2 }); e[k] = 2; g.n += h.n;",
      "}",
    ].join("\n");
    expect(moduleState(new Map([["provider/y.ts", text]])).map((f) => `${f.binding}: ${f.why}`)).toEqual([
      "a: a property of it is written (line 9)",
      "b: a property of it is written (line 9)",
      "c: a property of it is written (line 9)",
      "d: `Object.assign` writes into it (line 9)",
      "e: a property of it is written (line 9)",
      "g: a property of it is written (line 9)",
    ]);
  });

  it("finds a constant mutated in another file, through a named, renamed, re-exported or namespace import", () => {
    const files = new Map([
      [
        "provider/a.ts",
        [
          'export const registry = { kinds: ["x"] };',
          'export const table = new Map([["a", 1]]);',
          "export const other = [2, 1];",
          "export const plain = { n: 1 };", // read elsewhere, written only through a local of the same name
          "export const ORDER = [1, 2];", // a copy of it is sorted
        ].join("\n"),
      ],
      ["provider/c.ts", 'export { other } from "./a";'],
      [
        "provider/b.ts",
        [
          'import { registry, plain as p, ORDER } from "./a";',
          'import * as a from "./a.js";',
          'import { other as renamed } from "./c";',
          "export function f() {",
          '  registry.kinds.push("y");', // 5
          '  a.table.set("b", 2);', // 6
          "  renamed.sort();", // 7
          "  const plain = { n: p.n };",
          "  plain.n++;",
          "  return [...ORDER].sort();",
          "}",
        ].join("\n"),
      ],
    ]);
    expect(moduleState(files).map((f) => `${f.file}:${f.line} ${f.binding}: ${f.why}`)).toEqual([
      "provider/a.ts:1 registry: `.push(` is called on it (provider/b.ts, line 5)",
      "provider/a.ts:2 table: `.set(` is called on it (provider/b.ts, line 6)",
      "provider/a.ts:3 other: `.sort(` is called on it (provider/b.ts, line 7)",
    ]);
  });

  it("finds a class's mutable static fields and leaves its instance fields alone", () => {
    const text = [
      "export class Counter {",
      "  static count = 0;", // 2: not readonly, a `let`
      "  static readonly byName = new Map<string, number>();", // 3
      "  static readonly LIMITS = { max: 1 };", // 4: written below
      '  static readonly KINDS = ["a"];', // never mutated: a constant
      "  cache = new Map<string, number>();", // instance fields: state on an object
      "  total = 0;",
      "  private seen: string[] = [];",
      '  bump() { this.cache.set("a", 1); this.total++; this.seen.push("a"); }',
      "  static raise() { this.LIMITS.max = 2; }", // 10
      "}",
    ].join("\n");
    expect(
      moduleState(new Map([["provider/z.ts", text]])).map((f) => `${f.line} ${f.binding}: ${f.why}`),
    ).toEqual([
      "2 Counter.count: a static field not `readonly`",
      "3 Counter.byName: starts as an empty container (`new Map<string, number>()`), filled at run time",
      "4 Counter.LIMITS: a property of it is written (line 10)",
    ]);
  });

  it("the allow-list holds one entry a line, sorted by file then binding, none twice", () => {
    const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    const keys = ALLOWED.map((e) => `${e.file} ${e.binding}`);
    const sorted = [...ALLOWED]
      .sort((a, b) => order(a.file, b.file) || order(a.binding, b.binding))
      .map((e) => `${e.file} ${e.binding}`);
    expect(keys).toEqual([...new Set(sorted)]);
  });

  it("provider/ holds no module-level mutable state but the allow-list's", () => {
    const found = providerState();
    // The scan reads the tree: lets and empty containers are found where the allow-list says they are.
    expect(found.length).toBeGreaterThanOrEqual(ALLOWED.length);
    const failures = found
      .filter((f) => !allowed(f))
      .map(
        (f) =>
          `${f.file}:${f.line} ${f.binding}: ${f.why}; per-run state goes on the object made when the provider ` +
          "is configured, handed to the operations",
      );
    expect(failures).toEqual([]);
  });

  it("the allow-list names only state still there (remove an entry with its state)", () => {
    const found = providerState();
    const stale = ALLOWED.filter((e) => !found.some((f) => f.file === e.file && f.binding === e.binding)).map(
      (e) => `${e.file}: ${e.binding}: no longer module-level mutable state, remove it from ALLOWED`,
    );
    expect(stale).toEqual([]);
  });
});
