/**
 * The docs as a doorway (issue 52, item 2): every page short enough to read, and every way in resolves.
 *
 * 1. Every relative Markdown link of README.md, CHANGELOG.md, CONTRIBUTING.md, docs/**\/*.md and examples/**\/*.md
 *    (and every link to this repository's own `blob/main/` on GitHub) names a file or folder that exists, and its
 *    `#anchor`, on a Markdown page, is the GitHub slug of a heading of that page.
 * 2. Every `docs/….md` path (with its `#anchor`, or followed by `, "<heading>"`), and every `CONTRIBUTING.md,
 *    "<heading>"`, written in the sources of provider/, sdk/, emulator/, tools/, test/, bench/ and examples/ (error
 *    messages and comments), in the release workflow and in the prose of the Markdown pages names a page that
 *    exists, and that anchor or heading.
 * 3. No page of docs/ and no CONTRIBUTING.md is over {@link MAX_WORDS} words (`wc -w`); README.md is not over
 *    {@link MAX_DOORWAY_WORDS}, nor is CHANGELOG.md's newest section, whose only headings are Keep a Changelog's
 *    Added, Changed, Fixed and Removed (issue 52, items 1 and 4). Older sections of the changelog stay as released.
 * Fast: reads files, no process, no network (about 0.1 s).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(__dirname, "..", "..");
const MAX_WORDS = 3000;
/** The README and the changelog's newest section: read first, so shorter. */
const MAX_DOORWAY_WORDS = 1500;
/** The headings of a changelog section (Keep a Changelog's, those this project uses). */
const CHANGELOG_HEADINGS = ["Added", "Changed", "Fixed", "Removed"];
/** This repository's files on GitHub: a link there is checked against the working tree. */
const GITHUB_BLOB = "https://github.com/pulumi-posthog/pulumi-posthog/blob/main/";

/** Files under `dir` (relative to the root) whose name ends with one of `exts`, skipping node_modules. */
function walk(dir: string, exts: readonly string[]): string[] {
  if (!existsSync(join(root, dir))) return [];
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === "node_modules" ? [] : walk(path, exts);
    return exts.some((x) => e.name.endsWith(x)) ? [path] : [];
  });
}

const read = (path: string) => readFileSync(join(root, path), "utf8");

/** A heading's GitHub anchor: lower case, punctuation dropped (`_` and `-` kept), spaces to hyphens. */
const slugOf = (heading: string): string =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");

const withoutFences = (text: string) =>
  text.replace(/^([ \t]*)(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1\2[ \t]*$/gm, "");

/** The anchors of a Markdown text's headings (outside code blocks), repeats numbered as GitHub does. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of withoutFences(text).matchAll(/^#{1,6} (.+?)\s*#*$/gm)) {
    const slug = slugOf(heading ?? "");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** The link targets of a Markdown text (inline links and reference definitions), outside code. */
function linksOf(text: string): string[] {
  const prose = withoutFences(text).replace(/`[^`\n]*`/g, "");
  return [
    ...[...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? ""),
    ...[...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/gm)].map((m) => m[1] ?? ""),
  ];
}

const anchorCache = new Map<string, Set<string>>();
const anchorsOfFile = (path: string) => {
  const a = anchorCache.get(path) ?? anchorsOf(read(path));
  anchorCache.set(path, a);
  return a;
};

/**
 * What is wrong with `target` linked from `from` (both relative to the root), or undefined when it resolves:
 * the file or folder is missing, or the anchor is no heading of that Markdown page.
 */
function brokenLink(from: string, target: string): string | undefined {
  let path: string;
  let anchor: string | undefined;
  if (target.startsWith(GITHUB_BLOB)) {
    const [p = "", a] = target.slice(GITHUB_BLOB.length).split("#");
    path = normalize(decodeURIComponent(p)).replace(/\/$/, "");
    anchor = a;
  } else if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(target)) {
    return undefined; // another site: not checked here
  } else {
    const [p = "", a] = target.split("#");
    path = p === "" ? from : normalize(join(dirname(from), decodeURIComponent(p.replace(/\?.*$/, ""))));
    path = path.replace(/\/$/, "");
    anchor = a;
  }
  if (relative(".", path).startsWith("..") || !existsSync(join(root, path)))
    return `${from}: ${target}: no such file`;
  if (anchor && path.endsWith(".md") && !anchorsOfFile(path).has(decodeURIComponent(anchor)))
    return `${from}: ${target}: no heading with the anchor #${anchor} on ${path}`;
  return undefined;
}

const markdown = [
  "README.md",
  "CHANGELOG.md",
  "CONTRIBUTING.md",
  ...walk("docs", [".md"]),
  ...walk("examples", [".md"]),
];

describe("links and anchors of the Markdown pages", () => {
  it("every relative link (and link to this repository on GitHub) names a file that exists and a heading of it", () => {
    let checked = 0;
    const broken = markdown.flatMap((page) =>
      linksOf(read(page)).flatMap((target) => {
        checked++;
        return brokenLink(page, target) ?? [];
      }),
    );
    expect(checked).toBeGreaterThan(200);
    expect(broken).toEqual([]);
  });

  it("the check can fail: a missing page, a missing anchor, a renamed heading", () => {
    expect(brokenLink("docs/_index.md", "no-such-page.md")).toContain("no such file");
    expect(brokenLink("docs/_index.md", "troubleshooting.md#no-such-section")).toContain("no heading");
    expect(brokenLink("README.md", "#no-such-section")).toContain("no heading");
    expect(brokenLink("README.md", `${GITHUB_BLOB}docs/nowhere.md`)).toContain("no such file");
    expect(brokenLink("README.md", "https://example.com/x.md#y")).toBeUndefined();
    expect([...anchorsOf("# A\n## The thin `__provider`\n```\n# not a heading\n```\n## A\n")]).toEqual([
      "a",
      "the-thin-__provider",
      "a-1",
    ]);
  });
});

/** `docs/….md` paths written in a source text, with the anchor or the quoted heading that follows, if any. */
function docPathsOf(text: string): { path: string; anchor?: string; heading?: string }[] {
  const named = /\b(docs\/[\w./-]*?\.md|CONTRIBUTING(?:\.md)?(?=, "))(?:#([\w-]+))?(?:, "([^"]+)")?/g;
  return [...text.matchAll(named)].map((m) => ({
    path: (m[1] ?? "").replace(/^CONTRIBUTING$/, "CONTRIBUTING.md"),
    ...(m[2] ? { anchor: m[2] } : {}),
    ...(m[3] ? { heading: m[3] } : {}),
  }));
}

describe("docs/ paths named in the sources and the prose (error messages, comments, text)", () => {
  const sources = [
    ...["provider", "sdk", "emulator", "tools", "test", "bench", "examples"]
      .flatMap((d) => walk(d, [".ts", ".mts"]))
      // This file's own counter-examples, and the page add-resource.test.ts writes for a resource it adds.
      .filter((f) => !["test/docs/links.test.ts", "test/tools/add-resource.test.ts"].includes(f)),
    ".github/workflows/release.yml",
    // Paths in the prose of the Markdown pages (not links: those are checked above).
    ...markdown,
  ];

  /** What is wrong with one named path, or undefined. */
  const problem = (where: string, ref: ReturnType<typeof docPathsOf>[number]) => {
    if (!existsSync(join(root, ref.path))) return `${where}: ${ref.path}: no such page`;
    const anchors = anchorsOfFile(ref.path);
    if (ref.anchor && !anchors.has(ref.anchor)) return `${where}: ${ref.path}#${ref.anchor}: no such heading`;
    if (ref.heading && !anchors.has(slugOf(ref.heading)))
      return `${where}: ${ref.path}, "${ref.heading}": no such heading`;
    return undefined;
  };

  it("every docs/….md path names a page that exists, and its anchor or quoted heading one of that page", () => {
    const refs = sources.flatMap((file) => docPathsOf(read(file)).map((ref) => ({ file, ref })));
    expect(refs.length).toBeGreaterThan(10);
    expect(refs.flatMap(({ file, ref }) => problem(file, ref) ?? [])).toEqual([]);
  });

  it("the check can fail: a moved page, a renamed heading", () => {
    const [moved, renamed, section] = docPathsOf(
      'see docs/no-such-page.md; (docs/how-it-works/one-object.md, "No such heading"); (CONTRIBUTING, "Releasing")',
    );
    expect(moved && problem("x.ts", moved)).toContain("no such page");
    expect(renamed && problem("x.ts", renamed)).toContain("no such heading");
    expect(section && problem("x.ts", section)).toContain("no such heading");
  });
});

/** The newest section of a changelog: from its first `## ` heading up to the next (or the end). */
function newestSection(changelog: string): string {
  const start = changelog.search(/^## /m);
  if (start === -1) return "";
  const next = changelog.slice(start + 3).search(/^## /m);
  return next === -1 ? changelog.slice(start) : changelog.slice(start, start + 3 + next);
}

/** The headings of a changelog section below its title that are not `### ` one of {@link CHANGELOG_HEADINGS}. */
const strayHeadings = (section: string): string[] =>
  [...withoutFences(section).matchAll(/^(#{3,6}) (.+?)\s*$/gm)]
    .filter(([, level, name]) => level !== "###" || !CHANGELOG_HEADINGS.includes(name ?? ""))
    .map(([heading]) => heading.trim());

describe("page length", () => {
  const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
  /** `page: N words` for each page over the limit. */
  const overLimit = (texts: [string, string][], limit = MAX_WORDS) =>
    texts.filter(([, text]) => words(text) > limit).map(([page, text]) => `${page}: ${words(text)} words`);

  it(`no page of docs/ and no CONTRIBUTING.md is over ${MAX_WORDS} words`, () => {
    const limited = ["CONTRIBUTING.md", ...walk("docs", [".md"])];
    expect(limited.length).toBeGreaterThan(20);
    expect(overLimit(limited.map((p) => [p, read(p)]))).toEqual([]);
  });

  it(`README.md is not over ${MAX_DOORWAY_WORDS} words`, () => {
    expect(overLimit([["README.md", read("README.md")]], MAX_DOORWAY_WORDS)).toEqual([]);
  });

  it(`CHANGELOG.md's newest section is not over ${MAX_DOORWAY_WORDS} words, under ${CHANGELOG_HEADINGS.join(", ")} only`, () => {
    const section = newestSection(read("CHANGELOG.md"));
    expect(section).toMatch(/^## \[/);
    expect(overLimit([["CHANGELOG.md, newest section", section]], MAX_DOORWAY_WORDS)).toEqual([]);
    expect(strayHeadings(section)).toEqual([]);
  });

  it("the changelog checks can fail: a heading outside the four, a section of 1,501 words", () => {
    const text =
      "# Changelog\n\n## [Unreleased]\n\n### Added\n\n- a\n\n### Security\n\n- b\n\n## [0.1.0]\n\n### Other\n";
    expect(newestSection(text)).not.toContain("[0.1.0]");
    expect(strayHeadings(newestSection(text))).toEqual(["### Security"]);
    const long = `## [Unreleased]\n\n### Added\n\n${"word ".repeat(MAX_DOORWAY_WORDS - 4)}\n`;
    expect(overLimit([["c", long]], MAX_DOORWAY_WORDS)).toEqual([]);
    expect(overLimit([["c", `${long}more\n`]], MAX_DOORWAY_WORDS)).toEqual([
      `c: ${MAX_DOORWAY_WORDS + 1} words`,
    ]);
  });

  it("the check can fail: a page of 3,001 words is over, one of 3,000 is not", () => {
    const page = `# Title\n\n${"word ".repeat(MAX_WORDS - 2)}\n`;
    expect(overLimit([["docs/x.md", page]])).toEqual([]);
    expect(overLimit([["docs/x.md", `${page}more\n`]])).toEqual(["docs/x.md: 3001 words"]);
  });
});
