/**
 * Docs that agree with the code (issue 52, item 5): README.md, CONTRIBUTING.md, docs/**\/*.md and examples/**\/*.md
 * name no script, command, option, setting or file that does not exist.
 *
 * 1. Every `npm run <script>` names a script of package.json (of the example's own package.json, on a page of an
 *    example that has one).
 * 2. Every `pulumi-posthog <command> [--flag …]` in code (inline spans, fenced blocks) names a command and flags of
 *    that command's usage (provider/cli.ts `USAGE`, provider/apps/export/pending.ts `PENDING_USAGE`), unless it
 *    quotes a message the provider prints (its words are in provider/'s sources); every `posthog-emulator --flag`
 *    one of its help (emulator/cli.ts `USAGE`).
 * 3. Every `posthog:<key>` setting is one of provider/framework/settings.ts `SETTINGS`; every `POSTHOG_*` variable is
 *    one of them or named in the code of provider/, emulator/, sdk/, plugin/, policy/ or examples/ (comments left
 *    out); one named only in test/, tools/, bench/ or the workflows is named only on the contributor pages
 *    (CONTRIBUTING.md, docs/contributing/).
 * 4. Every repository path in an inline code span (`tools/x.mts`, `provider/…`; a `dist/x.js` by its source
 *    `x.ts` or `x.mts`, built or not) exists, from the root or, on an example's page, from its folder. Markdown links are
 *    test/docs/links.test.ts's.
 * Fast: reads files, starts no process (about 0.3 s).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { USAGE as EMULATOR_USAGE } from "../../emulator/cli";
import { PENDING_USAGE } from "../../provider/apps/export/pending";
import { USAGE } from "../../provider/cli";
import { SETTINGS } from "../../provider/framework/settings";
import { pathsUnder } from "../support/files";

const root = join(__dirname, "..", "..");
const read = (path: string) => readFileSync(join(root, path), "utf8");

/** Files under `dir` (relative to the root) whose name ends with one of `exts`, skipping node_modules. */
const walk = (dir: string, exts: readonly string[]) => pathsUnder(root, dir, exts);

const PAGES = ["README.md", "CONTRIBUTING.md", ...walk("docs", [".md"]), ...walk("examples", [".md"])];
const isContributorPage = (page: string) =>
  page === "CONTRIBUTING.md" || page.startsWith("docs/contributing/");

/** A piece of a page: a line of a fenced block, an inline code span, or (`prose`) a whole line outside fences. */
interface Piece {
  page: string;
  line: number;
  kind: "fenced" | "span" | "prose";
  text: string;
}

/** The pieces of a page's text (see {@link Piece}). */
function piecesOf(page: string, text: string): Piece[] {
  const out: Piece[] = [];
  let fence: string | undefined;
  for (const [i, line] of text.split("\n").entries()) {
    const at = { page, line: i + 1 };
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker?.startsWith(fence) && line.trim() === marker) fence = undefined;
      else out.push({ ...at, kind: "fenced", text: line });
      continue;
    }
    if (marker !== undefined) {
      fence = marker;
      continue;
    }
    out.push({ ...at, kind: "prose", text: line });
    for (const m of line.matchAll(/`([^`]+)`/g)) out.push({ ...at, kind: "span", text: m[1] ?? "" });
  }
  return out;
}

const where = (p: Piece) => `${p.page}:${p.line}`;

// ---------------------------------------------------------------------------------------------------------------
// 1. npm run <script>

/** The scripts a page may run: its example's package.json's when it has one, else the root's. */
function scriptsFor(page: string): Set<string> {
  const own = page.startsWith("examples/") ? join(dirname(page), "package.json") : undefined;
  const pkg = own && existsSync(join(root, own)) ? own : "package.json";
  return new Set(Object.keys((JSON.parse(read(pkg)) as { scripts?: object }).scripts ?? {}));
}

/** `where: npm run x: no such script …` for each `npm run <script>` of the pieces that names no script. */
function unknownScripts(pieces: Piece[], scriptsOf: (page: string) => Set<string>): string[] {
  return pieces.flatMap((p) =>
    p.kind === "span"
      ? [] // its text is in its line's prose piece too
      : [...p.text.matchAll(/\bnpm run(?: --?[a-z-]+)* ([a-z][\w:.-]*)/g)].flatMap((m) => {
          const name = (m[1] ?? "").replace(/[.:]+$/, "");
          return scriptsOf(p.page).has(name)
            ? []
            : [`${where(p)}: npm run ${name}: no such script in package.json`];
        }),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// 2. pulumi-posthog <command> [--flag], posthog-emulator --flag

/**
 * `bin` where a shell runs it (the start of the piece, after a prompt `$ `, `npx `, `exec `, `run: `, `&&`, `;`, `|`
 * or `$(`), then its arguments up to the end of that command; not a package name (`npm install pulumi-posthog`) or
 * a word of a sentence.
 */
const AT_COMMAND = (bin: string) =>
  new RegExp(
    `(?:^|[;&|(]\\s*|^\\$\\s+|\\bnpx\\s+(?:(?:--no-install|--yes|-y)\\s+)?|\\bexec\\s+|\\brun:\\s+)${bin}((?: +[^\\s|;&#)"'\`]+)*)`,
    "gm",
  );

/** Each command of pulumi-posthog with its flags, as its usage lines (`  pulumi-posthog <command> …`) list them. */
function commandsOf(usage: string): Map<string, Set<string>> {
  const commands = new Map<string, Set<string>>();
  for (const [, command = "", rest = ""] of usage.matchAll(/^ {2}pulumi-posthog ([a-z-]+)(.*)$/gm)) {
    const flags = commands.get(command) ?? new Set(["--help", "-h"]);
    for (const [flag] of rest.matchAll(/--[a-z][a-z-]*/g)) flags.add(flag);
    commands.set(command, flags);
  }
  return commands;
}

/** The text of the provider's sources, where the messages it prints are. */
const providerText = () => walk("provider", [".ts"]).map(read).join("\n");

/**
 * `where: …` for each `pulumi-posthog <word> …` of the code pieces whose word is no command or whose flags are
 * not that command's, unless `printed` says the text is a message the provider prints.
 */
function unknownCommands(
  pieces: Piece[],
  commands: Map<string, Set<string>>,
  printed: (text: string) => boolean,
): string[] {
  return pieces.flatMap((p) => {
    if (p.kind === "prose") return [];
    return [...p.text.trim().matchAll(AT_COMMAND("pulumi-posthog"))].flatMap((m) => {
      const [word = "", ...args] = (m[1] ?? "").trim().split(/ +/);
      // `pulumi-posthog audit: <message>` is what the command prints.
      const command = word.replace(/:$/, "");
      if (command === "" || command.startsWith("-")) {
        const bad = [command, ...args].filter((a) => a.startsWith("-") && !["--help", "-h"].includes(a));
        return bad.map((f) => `${where(p)}: pulumi-posthog ${f}: no such option (only --help, or a command)`);
      }
      const flags = commands.get(command);
      if (flags === undefined) {
        if (printed(`pulumi-posthog ${command}`)) return [];
        return [
          `${where(p)}: pulumi-posthog ${command}: no such command (${[...commands.keys()].join(", ")})`,
        ];
      }
      return args
        .filter((a) => /^--?[a-z]/.test(a))
        .map((a) => a.replace(/=.*$/, ""))
        .filter((f) => !flags.has(f))
        .map((f) => `${where(p)}: pulumi-posthog ${command} ${f}: no such option of ${command}`);
    });
  });
}

/** The options of posthog-emulator's help (each line `  --<option> …`). */
const emulatorFlags = (usage: string) =>
  new Set([...usage.matchAll(/^ {2}(--[a-z][a-z-]*)/gm)].map((m) => m[1] ?? ""));

/** `where: …` for each flag after `posthog-emulator` in the code pieces that the emulator does not take. */
function unknownEmulatorFlags(pieces: Piece[], flags: Set<string>): string[] {
  return pieces.flatMap((p) => {
    if (p.kind === "prose") return [];
    return [...p.text.trim().matchAll(AT_COMMAND("posthog-emulator"))].flatMap((m) =>
      (m[1] ?? "")
        .trim()
        .split(/ +/)
        .filter((a) => /^--?[a-z]/.test(a))
        .map((a) => a.replace(/=.*$/, ""))
        .filter((f) => !flags.has(f))
        .map((f) => `${where(p)}: posthog-emulator ${f}: no such option (posthog-emulator --help)`),
    );
  });
}

// ---------------------------------------------------------------------------------------------------------------
// 3. posthog:<key>, POSTHOG_*

/** A source's text without its comments (`//`, `/* … *\/`, and `#` lines of shell and YAML). */
const withoutComments = (text: string) =>
  text
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(^|\s)\/\/.*$/gm, "$1")
    .replace(/^\s*#.*$/gm, "");

/** The `POSTHOG_*` names in the code of `files` (comments left out). */
const variablesIn = (files: string[]) =>
  new Set(
    files.flatMap((f) =>
      [...withoutComments(read(f)).matchAll(/\bPOSTHOG_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0]),
    ),
  );

const SELF = "test/docs/facts.test.ts";
const CODE_EXTS = [".ts", ".mts", ".cjs", ".js", ".sh", ".yml", ".yaml"];

/** The variables any page may name, and those only the contributor pages may (read by tests and tools only). */
function knownVariables() {
  const product = variablesIn(
    ["provider", "emulator", "sdk", "plugin", "policy", "examples"].flatMap((d) => walk(d, CODE_EXTS)),
  );
  for (const s of SETTINGS) product.add(s.env);
  const tests = variablesIn([
    // Not this file: its planted names.
    ...["test", "tools", "bench", ".github"].flatMap((d) => walk(d, CODE_EXTS)).filter((f) => f !== SELF),
    "vitest.config.ts",
  ]);
  return { product, testOnly: new Set([...tests].filter((v) => !product.has(v))) };
}

/** `where: …` for each setting or variable of the prose that the code does not read (or not outside its tests). */
function unknownSettings(
  pieces: Piece[],
  known: { settings: Set<string>; product: Set<string>; testOnly: Set<string> },
): string[] {
  return pieces.flatMap((p) => {
    if (p.kind === "span") return [];
    const keys = [...p.text.matchAll(/(?<![\w-])posthog:([a-z]\w*)/g)]
      .map((m) => m[1] ?? "")
      .filter((k) => k !== "index" && !known.settings.has(k))
      .map((k) => `${where(p)}: posthog:${k}: no such setting (provider/framework/settings.ts SETTINGS)`);
    const variables = [...p.text.matchAll(/\bPOSTHOG_[A-Z0-9_]*[A-Z0-9]\b/g)].flatMap(([v]) => {
      if (known.product.has(v)) return [];
      if (known.testOnly.has(v))
        return isContributorPage(p.page)
          ? []
          : [`${where(p)}: ${v} is read by the tests only: name it on a contributor page`];
      return [`${where(p)}: ${v}: no code reads it`];
    });
    return [...keys, ...variables];
  });
}

// ---------------------------------------------------------------------------------------------------------------
// 4. Paths in code spans

/** The repository's folders a path in a code span starts with. */
const TOP_DIRS = readdirSync(root, { withFileTypes: true })
  .filter((e) => e.isDirectory() && !e.name.startsWith(".") && e.name !== "node_modules")
  .map((e) => e.name);

/** Whether `path` (relative to the root, or to the example page's folder) names a file or folder that exists. */
function pathExists(page: string, path: string): boolean {
  const candidates = [path];
  // What the build writes, by its source (dist/ may not be built yet): `dist/tools/x.js` is tools/x.ts or x.mts.
  const built = /^dist(?:\/(.*?))?\/?$/.exec(path);
  if (built) {
    const source = built[1] ?? "";
    candidates.push(source, source.replace(/\.js$/, ".ts"), source.replace(/\.js$/, ".mts"));
  }
  if (page.startsWith("examples/")) candidates.push(join(dirname(page), path));
  return candidates.some((c) => existsSync(join(root, c)));
}

/** `where: …` for each repository path of the code spans that does not exist (placeholders and globs skipped). */
function missingPaths(pieces: Piece[], exists: (page: string, path: string) => boolean): string[] {
  return pieces.flatMap((p) => {
    // The user pages' `.github/…` are the reader's repository's.
    const dirs = isContributorPage(p.page) ? [...TOP_DIRS, "\\.github"] : TOP_DIRS;
    const named = new RegExp(`(?<![\\w./@~-])(?:${dirs.join("|")})/[\\w./@+-]*`, "g");
    if (p.kind !== "span" || /[<>*{}$…]|\.\.\./.test(p.text)) return [];
    return [...p.text.matchAll(named)].flatMap(([path]) => {
      const clean = path.replace(/[.:,]+$/, "");
      // A Go module path (`sdk/v3`, `…/cmd/pulumi-language-nodejs/v3`) is no file of this repository.
      if (/\/v\d+$/.test(clean)) return [];
      return exists(p.page, clean) ? [] : [`${where(p)}: ${clean}: no such file or folder`];
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------

describe("the docs name only scripts, commands, options, settings and files that exist", () => {
  const pieces = PAGES.flatMap((page) => piecesOf(page, read(page)));
  const commands = commandsOf(`${USAGE}\n${PENDING_USAGE}`);
  const source = providerText();
  const printed = (text: string) => source.includes(text);

  it("reads every page and the usage", () => {
    expect(PAGES.length).toBeGreaterThan(40);
    expect([...commands.keys()].sort()).toEqual(["audit", "clear-pending", "export"]);
  });

  it("every npm run <script> is a script of package.json", () => {
    expect(unknownScripts(pieces, scriptsFor)).toEqual([]);
  });

  it("every pulumi-posthog command and flag is one of its usage", () => {
    expect(unknownCommands(pieces, commands, printed)).toEqual([]);
  });

  it("every posthog-emulator flag is one of its help", () => {
    expect(unknownEmulatorFlags(pieces, emulatorFlags(EMULATOR_USAGE))).toEqual([]);
  });

  it("every posthog:<key> is a setting; every POSTHOG_* variable is read by the code (test-only ones on contributor pages)", () => {
    const settings = new Set(SETTINGS.flatMap((s) => (s.config ? [s.config.replace(/^posthog:/, "")] : [])));
    expect(unknownSettings(pieces, { settings, ...knownVariables() })).toEqual([]);
  });

  it("every repository path in a code span exists", () => {
    expect(missingPaths(pieces, pathExists)).toEqual([]);
  });

  it("each check can fail: a planted wrong name of each kind", () => {
    // Planted texts, as if on a user page (docs/emulator.md) or a contributor page (docs/contributing/tests.md).
    const page = (path: string, text: string) => piecesOf(path, text);
    expect(
      unknownScripts(page("docs/emulator.md", "Run `npm run --silent generat` first.\n"), scriptsFor),
    ).toEqual(["docs/emulator.md:1: npm run generat: no such script in package.json"]);
    const shell =
      "```sh\nnpx pulumi-posthog exprot --out x\npulumi-posthog audit --out y\n```\n`pulumi-posthog --verbose`\n";
    expect(unknownCommands(page("docs/emulator.md", shell), commands, printed)).toEqual([
      "docs/emulator.md:2: pulumi-posthog exprot: no such command (export, audit, clear-pending)",
      "docs/emulator.md:3: pulumi-posthog audit --out: no such option of audit",
      "docs/emulator.md:5: pulumi-posthog --verbose: no such option (only --help, or a command)",
    ]);
    // What the provider prints, and the package's name in a sentence or an install, are no commands.
    const quoted = "`pulumi-posthog needs Node.js >= 22.19`; `npm install pulumi-posthog fastify@5`\n";
    expect(unknownCommands(page("docs/emulator.md", quoted), commands, printed)).toEqual([]);
    const emulator = "`npx posthog-emulator --rate-limt off`\n";
    expect(unknownEmulatorFlags(page("docs/emulator.md", emulator), emulatorFlags(EMULATOR_USAGE))).toEqual([
      "docs/emulator.md:1: posthog-emulator --rate-limt: no such option (posthog-emulator --help)",
    ]);
    const settings = new Set(["apiKey"]);
    const known = { settings, ...knownVariables() };
    const named =
      "Set `posthog:apiKeys`, `POSTHOG_API_KEYS` or `POSTHOG_TEST_QUICK`; `posthog:index:Dashboard`.\n";
    expect(unknownSettings(page("docs/emulator.md", named), known)).toEqual([
      "docs/emulator.md:1: posthog:apiKeys: no such setting (provider/framework/settings.ts SETTINGS)",
      "docs/emulator.md:1: POSTHOG_API_KEYS: no code reads it",
      "docs/emulator.md:1: POSTHOG_TEST_QUICK is read by the tests only: name it on a contributor page",
    ]);
    expect(unknownSettings(page("docs/contributing/tests.md", "`POSTHOG_TEST_QUICK=1`\n"), known)).toEqual(
      [],
    );
    const paths =
      "`tools/no-such.mts`, `node dist/tools/codegen.js`, `dist/tools/nope.js`, `dist/`, `provider/<name>.ts`, `.github/x.yml`\n";
    expect(missingPaths(page("docs/emulator.md", paths), pathExists)).toEqual([
      "docs/emulator.md:1: tools/no-such.mts: no such file or folder",
      "docs/emulator.md:1: dist/tools/nope.js: no such file or folder",
    ]);
    expect(
      missingPaths(page("docs/contributing/tests.md", "`.github/workflows/nope.yml`\n"), pathExists),
    ).toEqual(["docs/contributing/tests.md:1: .github/workflows/nope.yml: no such file or folder"]);
  });
});
