/**
 * A function fits on a screen (docs/contributing/conventions.md; issue 50, item 6): no function, method, accessor,
 * constructor, arrow function or function expression in provider/, sdk/, emulator/, tools/ or bench/ (`.ts` and
 * `.mts`, not `.d.ts`; tools/pulumi-cli/ holds Go) runs over {@link MAX_LINES} lines from its first line to its last.
 * A nested function is measured on its own (its lines count toward the function around it too). The source is read
 * with the TypeScript compiler API (the `typescript` dev dependency). A long function is split by named stages:
 * plain functions with docstrings, per-run state passed as one object.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/** The longest a function may be, in lines from its first line to its last (both counted). */
const MAX_LINES = 120;

/** The folders whose TypeScript is measured. */
const FOLDERS = ["provider", "sdk", "emulator", "tools", "bench"];

const root = join(__dirname, "..", "..");

/**
 * Functions in provider/ allowed over {@link MAX_LINES} lines: none (issue 50, item 6 split the last one,
 * provider/framework/lost-create.ts `beginCreate`, into named stages over one `CreateState`). Never add an entry:
 * split the function instead. The checks below still hold for an entry: it matches a function of that name in a
 * provider/ file of that file name, its `lines` a ceiling that may only go down, and it fails once its function is
 * no longer over the limit.
 */
const ALLOWED: ReadonlyArray<{ file: string; name: string; lines: number }> = [];

/** One function found in the source: where it starts, what it is called, and how many lines it spans. */
interface Measured {
  /** The file, relative to the repository root, with `/` separators. */
  file: string;
  /** The 1-based line of the function's first line. */
  line: number;
  /**
   * A readable name, prefixed by the functions around it (`outer/inner`): the declared name, `Class.method`, the
   * variable or property an arrow is assigned to, or `callee(…) callback` for an inline callback.
   */
  name: string;
  /** Lines from the first to the last, both counted. */
  lines: number;
}

/** Every `.ts`/`.mts` file (not `.d.ts`) under `dir`, relative to the repository root; node_modules skipped. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") out.push(...sourceFiles(path));
    } else if (/\.m?ts$/.test(entry.name) && !/\.d\.m?ts$/.test(entry.name)) {
      out.push(path);
    }
  }
  return out;
}

/** The text of a declaration's name (identifier, private name, string literal, else its source), if it has one. */
function nameText(name: ts.Node | undefined, source: ts.SourceFile): string | undefined {
  if (!name) return undefined;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name)) return name.text;
  return name.getText(source);
}

/** The name of a function-like node: from its declaration, or from where it stands (variable, property, argument). */
function ownName(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node))
    return `${nameText(node.parent.name, source) ?? "(class)"}.constructor`;
  const declared = nameText(node.name, source);
  if (declared) {
    const owner = node.parent;
    const ownerName = ts.isClassLike(owner) ? nameText(owner.name, source) : undefined;
    return ownerName && !ts.isFunctionDeclaration(node) ? `${ownerName}.${declared}` : declared;
  }
  let parent = node.parent;
  while (
    ts.isParenthesizedExpression(parent) ||
    ts.isAsExpression(parent) ||
    ts.isSatisfiesExpression(parent)
  ) {
    parent = parent.parent;
  }
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent)
  ) {
    return nameText(parent.name, source) ?? "(anonymous)";
  }
  if (ts.isCallExpression(parent) || ts.isNewExpression(parent)) {
    const callee = parent.expression.getText(source).replace(/\s+/g, "");
    return `${callee.length > 40 ? `${callee.slice(0, 40)}…` : callee}(…) callback`;
  }
  return "(anonymous)";
}

/** Every function-like node with a body in `text` (the source of `file`), with its name and length. */
function measureSource(file: string, text: string): Measured[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Measured[] = [];
  const visit = (node: ts.Node, outer: string | undefined): void => {
    let inside = outer;
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const fn = node as ts.FunctionLikeDeclaration;
      const name = ownName(fn, source);
      inside = outer ? `${outer}/${name}` : name;
      const first = source.getLineAndCharacterOfPosition(fn.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(fn.getEnd()).line;
      found.push({ file, line: first + 1, name: inside, lines: last - first + 1 });
    }
    ts.forEachChild(node, (child) => visit(child, inside));
  };
  visit(source, undefined);
  return found;
}

/** Every function over {@link MAX_LINES} lines in {@link FOLDERS}. */
function offenders(): Measured[] {
  return FOLDERS.flatMap(sourceFiles)
    .flatMap((file) => measureSource(file, readFileSync(join(root, file), "utf8")))
    .filter((fn) => fn.lines > MAX_LINES);
}

/** The file name of a path (its last segment). */
const baseName = (path: string) => path.slice(path.lastIndexOf("/") + 1);

/** The allow-list entry an offender matches: provider/ only, by the file's name and the function's name. */
function allowedEntry(fn: Measured): (typeof ALLOWED)[number] | undefined {
  if (!fn.file.startsWith("provider/")) return undefined;
  return ALLOWED.find((entry) => entry.name === fn.name && baseName(entry.file) === baseName(fn.file));
}

/** `n` lines of statements, for a body of known length. */
const body = (n: number) => Array.from({ length: n }, (_, i) => `  x(${i});`).join("\n");

describe(`functions fit on a screen (at most ${MAX_LINES} lines)`, () => {
  it("measures every kind of function from its first line to its last, nested ones on their own", () => {
    const text = [
      "export function long() {", // lines 1 to 122
      body(120),
      "}",
      "const arrow = async () => {", // lines 123 to 243
      body(119),
      "};",
      "class Host {",
      "  method() {", // lines 245 to 366
      "    const inner = function () {", // lines 246 to 365: exactly the limit
      body(118),
      "    };",
      "  }",
      "}",
      "items.forEach((item) => {", // lines 368 to 369
      "});",
    ].join("\n");
    const measured = measureSource("synthetic.ts", text).map(({ name, line, lines }) => ({
      name,
      line,
      lines,
    }));
    expect(measured).toEqual([
      { name: "long", line: 1, lines: 122 },
      { name: "arrow", line: 123, lines: 121 },
      { name: "Host.method", line: 245, lines: 122 },
      { name: "Host.method/inner", line: 246, lines: 120 },
      { name: "items.forEach(…) callback", line: 368, lines: 2 },
    ]);
  });

  it("no function in provider/, sdk/, emulator/, tools/ or bench/ is over the limit, but the allow-list's", () => {
    const failures = offenders().flatMap((fn) => {
      const entry = allowedEntry(fn);
      const where = `${fn.file}:${fn.line} ${fn.name}: ${fn.lines} lines`;
      if (!entry) return [`${where} (over ${MAX_LINES}: split it by named stages)`];
      if (fn.lines > entry.lines) return [`${where} (allow-listed at ${entry.lines}: it may only shrink)`];
      return [];
    });
    expect(failures).toEqual([]);
  });

  it("the allow-list names only functions still over the limit (remove an entry with its split)", () => {
    const found = offenders();
    const stale = ALLOWED.filter((entry) => !found.some((fn) => allowedEntry(fn) === entry)).map(
      (entry) => `${entry.file} ${entry.name}: no longer over ${MAX_LINES} lines, remove it from ALLOWED`,
    );
    expect(stale).toEqual([]);
  });
});
