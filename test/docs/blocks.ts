/**
 * The fenced code blocks of README.md and docs/**\/*.md, for the tests that compile and run them as printed, and
 * the marker that says, in the doc source, why a block is deliberately not run:
 *
 *     <!-- docs-test: not run: <reason> -->
 *
 * on the line(s) right before the block's opening fence (blank lines between are allowed).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { repoRoot } from "../provider/harness";

/** One fenced block of a page. */
export interface Block {
  /** The page, relative to the repository root (README.md, docs/…). */
  page: string;
  /** The 1-based line of its first code line. */
  line: number;
  /** The language after the fence (`ts`, `sh`, …), lower case; "" for none. */
  lang: string;
  /** Its text, as printed (the fence's indentation removed), ending with a newline. */
  code: string;
  /** The reason of a `<!-- docs-test: not run: … -->` marker right before it, if any. */
  notRun?: string;
}

/** Languages of blocks that are programs, tests, config files or shell sequences (the rest is output or prose). */
export const CODE_LANGS = new Set([
  "ts",
  "typescript",
  "js",
  "javascript",
  "sh",
  "bash",
  "shell",
  "json",
  "yaml",
  "yml",
  // The examples of the generated SDKs (tools/examples.ts): each is marked not run until its SDK is generated here.
  "python",
  "go",
  "csharp",
]);

/** README.md and every Markdown file under docs/, relative to the root, sorted. */
export function pages(): string[] {
  const out = ["README.md"];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".md")) out.push(relative(repoRoot, p));
    }
  };
  if (existsSync(join(repoRoot, "docs"))) walk(join(repoRoot, "docs"));
  return out.sort();
}

const MARKER = /^<!--\s*docs-test:\s*(.*?)\s*-->$/;

/**
 * The fenced blocks of one page. A `docs-test` comment that is not `not run: <reason>` followed by a block, and a
 * fence never closed, are errors.
 * @throws Error naming the page and line.
 */
export function blocksOf(page: string, text = readFileSync(join(repoRoot, page), "utf8")): Block[] {
  const blocks: Block[] = [];
  const lines = text.split("\n");
  let pending: { reason: string; line: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? "";
    const marker = MARKER.exec(raw.trim());
    if (marker) {
      const reason = /^not run:\s*(\S.*)$/.exec(marker[1] ?? "")?.[1];
      if (reason === undefined)
        throw new Error(`${page}:${i + 1}: a docs-test marker reads "<!-- docs-test: not run: <reason> -->"`);
      pending = { reason, line: i + 1 };
      continue;
    }
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)\s*$/.exec(raw);
    if (!open) {
      if (pending && raw.trim() !== "")
        throw new Error(`${page}:${pending.line}: a docs-test marker must come right before a code block`);
      continue;
    }
    const [, indent = "", fence = "```", lang = ""] = open;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !(lines[end] ?? "").trim().startsWith(fence)) end++;
    if (end >= lines.length) throw new Error(`${page}:${i + 1}: the code block is never closed`);
    const code = lines
      .slice(start, end)
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
      .join("\n");
    blocks.push({
      page,
      line: start + 1,
      lang: lang.toLowerCase(),
      code: `${code}\n`,
      ...(pending ? { notRun: pending.reason } : {}),
    });
    pending = undefined;
    i = end;
  }
  if (pending)
    throw new Error(`${page}:${pending.line}: a docs-test marker must come right before a code block`);
  return blocks;
}

/** Every block of README.md and docs/. */
export const allBlocks = (): Block[] => pages().flatMap((page) => blocksOf(page));

/** Whether a TypeScript block is a complete test file (it imports the test runner and declares a test). */
export const isTestFile = (b: Block): boolean =>
  (b.lang === "ts" || b.lang === "typescript") && /from "vitest"/.test(b.code) && /\bit\(/.test(b.code);
