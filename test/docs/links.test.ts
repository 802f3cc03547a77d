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
 * 3. Every error points at its fix (issue 52, item 3): each `docsLink("<page>", "<anchor>")` of provider/, sdk/ and
 *    emulator/ names a page under docs/ and a heading of it; each error class of provider/client/errors.ts, in each of
 *    its kinds, ends its message with one such pointer, one that its row of the table of error classes links.
 * 4. No page of docs/ and no CONTRIBUTING.md is over {@link MAX_WORDS} words (`wc -w`); README.md is not over
 *    {@link MAX_DOORWAY_WORDS}, nor is CHANGELOG.md's newest section, whose only headings are Keep a Changelog's
 *    Added, Changed, Fixed and Removed (issue 52, items 1 and 4). Older sections of the changelog stay as released.
 * Fast: reads files, no process, no network (about 0.1 s).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";
import * as errors from "../../provider/client/errors";
import { RESOURCES_PAGE } from "../../provider/framework/lifecycle";
import { RESOURCES } from "../../provider/resources";
import { pathsUnder } from "../support/files";

const root = join(__dirname, "..", "..");
const MAX_WORDS = 3000;
/** The README and the changelog's newest section: read first, so shorter. */
const MAX_DOORWAY_WORDS = 1500;
/** The headings of a changelog section (Keep a Changelog's, those this project uses). */
const CHANGELOG_HEADINGS = ["Added", "Changed", "Fixed", "Removed"];
/** This repository's files on GitHub: a link there is checked against the working tree. */
const GITHUB_BLOB = "https://github.com/pulumi-posthog/pulumi-posthog/blob/main/";

/** Files under `dir` (relative to the root) whose name ends with one of `exts`, skipping node_modules. */
const walk = (dir: string, exts: readonly string[]) => pathsUnder(root, dir, exts);

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

/** Every `docsLink(…)` call of a source text: `{ page, anchor }` when both are written out as strings, else its text. */
function docsLinksOf(text: string): ({ page: string; anchor: string } | { call: string })[] {
  return [...text.matchAll(/\bdocsLink\(([^)]*)\)/g)].map((m) => {
    const args = /^\s*"([^"]+)",\s*"([^"]+)",?\s*$/.exec(m[1] ?? "");
    return args ? { page: args[1] ?? "", anchor: args[2] ?? "" } : { call: m[0] };
  });
}

/** What is wrong with a pointer to `docs/<page>#<anchor>` written in `where`, or undefined when the page has that heading. */
const brokenPointer = (where: string, page: string, anchor: string) =>
  brokenLink(where, `${GITHUB_BLOB}docs/${page.replace(/^docs\//, "")}#${anchor}`);

/** The pointer an error message ends with, `docs/<page>#<anchor>` (docs-link.ts), or undefined. */
const pointerOf = (message: string) => / \(see (docs\/[\w./-]+\.md)#([\w-]+)\)$/.exec(message)?.slice(1, 3);

describe("every error points at its fix: docsLink(…) pointers", () => {
  const sources = ["provider", "sdk", "emulator"]
    .flatMap((d) => walk(d, [".ts", ".mts"]))
    .filter((f) => f !== "provider/client/docs-link.ts"); // the definition

  it("every docsLink(page, anchor) of provider/, sdk/ and emulator/ names a docs page and a heading of it", () => {
    // The lifecycle's one computed pointer, a card's section of RESOURCES_PAGE, is checked by the next test.
    const lifecycle = {
      file: "provider/framework/lifecycle.ts",
      call: "docsLink(RESOURCES_PAGE, def.troubleshooting)",
    };
    const calls = sources
      .flatMap((file) => docsLinksOf(read(file)).map((link) => ({ file, link })))
      .filter(
        ({ file, link }) => !(file === lifecycle.file && "call" in link && link.call === lifecycle.call),
      );
    expect(calls.length).toBeGreaterThan(20);
    const problems = calls.flatMap(({ file, link }) =>
      "call" in link
        ? [`${file}: ${link.call}: write the page and the anchor as strings`]
        : (brokenPointer(file, link.page, link.anchor) ?? []),
    );
    expect(problems).toEqual([]);
  });

  it("each card's troubleshooting section (the pointer its operations' own errors end with) is a heading of the page", () => {
    const named = RESOURCES.filter((r) => r.card.troubleshooting !== undefined);
    expect(named.length).toBeGreaterThanOrEqual(8);
    const problems = named.flatMap(
      (r) => brokenPointer(`${r.card.name}'s card`, RESOURCES_PAGE, r.card.troubleshooting ?? "") ?? [],
    );
    expect(problems).toEqual([]);
    expect(brokenPointer("x", RESOURCES_PAGE, "dashboards")).toContain("no heading");
  });

  it("the check can fail: a wrong anchor, a wrong page, arguments not written out", () => {
    const [wrongAnchor, wrongPage, computed] = docsLinksOf(
      'docsLink("troubleshooting/rate-limits.md", "5xx-server-error"); docsLink("troubleshooting/rate.md", "a"); docsLink(page, "a")',
    );
    expect(
      wrongAnchor && "page" in wrongAnchor && brokenPointer("x.ts", wrongAnchor.page, wrongAnchor.anchor),
    ).toContain("no heading");
    expect(
      wrongPage && "page" in wrongPage && brokenPointer("x.ts", wrongPage.page, wrongPage.anchor),
    ).toContain("no such file");
    expect(computed).toEqual({ call: 'docsLink(page, "a")' });
    expect(brokenPointer("x.ts", "troubleshooting/rate-limits.md", "5xx-server-errors")).toBeUndefined();
  });
});

describe("every error points at its fix: the error classes of provider/client/errors.ts", () => {
  const at = (status: number | undefined) => ({
    method: "POST",
    path: "/api/organizations/@current/x/",
    status,
  });
  const failures: errors.ConnectionFailure[] = [
    "refused",
    "dns",
    "unreachable",
    "connect-timeout",
    "no-answer",
    "not-tls",
    "certificate",
    "not-http",
    "other",
  ];
  const targets: errors.NotFoundTarget[] = [
    "object",
    "organization",
    "project",
    "endpoint",
    "unrecognized",
    "list",
  ];
  /** One instance of each class in each of its kinds. A new class must be added here, with the pointer it gives. */
  const samples: Record<string, () => Error[]> = {
    PostHogError: () => [new errors.PostHogError(at(418))],
    ValidationError: () => [new errors.ValidationError({ ...at(400), attr: "name" })],
    UnauthenticatedError: () => [new errors.UnauthenticatedError(at(401))],
    ForbiddenError: () => [new errors.ForbiddenError(at(403))],
    NotFoundError: () => targets.map((t) => new errors.NotFoundError(at(404), t)),
    MethodNotAllowedError: () => [new errors.MethodNotAllowedError(at(405))],
    RateLimitedError: () => [
      new errors.RateLimitedError(at(429), 1),
      new errors.RateLimitedError(at(undefined), 60, true),
      new errors.RateLimitedError(at(429), 3600, true),
    ],
    ServerError: () => [new errors.ServerError(at(502))],
    ConnectionError: () =>
      failures.map((f) => new errors.ConnectionError(at(undefined), "E", false, undefined, f)),
    AmbiguousWriteError: () => [
      new errors.AmbiguousWriteError(new errors.ServerError(at(502))),
      new errors.AmbiguousWriteError(
        new errors.ConnectionError(at(undefined), "E", false, undefined, "other"),
      ),
    ],
    UnexpectedResponseError: () => [new errors.UnexpectedResponseError({ ...at(200), detail: "x" })],
    InconsistentListError: () => [new errors.InconsistentListError({ ...at(undefined), detail: "x" })],
    MissingApiKeyError: () => [new errors.MissingApiKeyError()],
    InvalidInputError: () => [
      new errors.InvalidInputError("posthog:host", "Invalid posthog:host"),
      new errors.InvalidInputError("host", "Invalid host"),
      new errors.InvalidInputError("options.retry.maxAttempts", "Invalid options.retry.maxAttempts"),
    ],
  };
  const exported = Object.entries(errors)
    .filter(([, v]) => typeof v === "function" && v.prototype instanceof Error)
    .map(([name]) => name);
  /** The pointers (`docs/<page>#<anchor>`) each row of the table of error classes links, by class. */
  const table = new Map(
    read("docs/troubleshooting/errors.md")
      .split("\n")
      .flatMap((line) => {
        const row = /^\| `(\w+)` \|.*\|([^|]*)\|$/.exec(line);
        if (!row) return [];
        const links = [...(row[2] ?? "").matchAll(/\]\(([\w.-]*)#([\w-]+)\)/g)].map(
          (m) => `${normalize(join("docs/troubleshooting", m[1] || "errors.md"))}#${m[2]}`,
        );
        return [[row[1] ?? "", links] as const];
      }),
  );

  it("each exported class, in each kind, ends its one-line message with a pointer its row of the table links", () => {
    expect(Object.keys(samples).sort()).toEqual([...exported].sort());
    const wrong = Object.entries(samples).flatMap(([name, make]) =>
      make().flatMap((e) => {
        const pointer = pointerOf(e.message);
        if (!pointer) return [`${name}: no pointer at the end of: ${e.message}`];
        const [page = "", anchor = ""] = pointer;
        const problems = [
          brokenPointer(name, page, anchor),
          e.message.split(" (see docs/").length === 2
            ? undefined
            : `${name}: more than one pointer: ${e.message}`,
          e.message.includes("\n") ? `${name}: more than one line: ${e.message}` : undefined,
          table.get(name)?.includes(`${page}#${anchor}`)
            ? undefined
            : `${name}: ${page}#${anchor} is not linked by its row of docs/troubleshooting/errors.md`,
        ];
        return problems.filter((p) => p !== undefined);
      }),
    );
    expect(wrong).toEqual([]);
  });

  it("the check can fail: a message without a pointer, a pointer mid-message", () => {
    expect(pointerOf("GET /x → 418")).toBeUndefined();
    expect(pointerOf("a (see docs/x.md#y) b")).toBeUndefined();
    expect(pointerOf("a (see docs/troubleshooting/x.md#y-z)")).toEqual(["docs/troubleshooting/x.md", "y-z"]);
    expect(table.get("UnauthenticatedError")).toEqual([
      "docs/troubleshooting/settings-and-keys.md#401-the-key-is-not-accepted",
    ]);
  });
});

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
