/**
 * Every ```ts block of README.md and docs/**\/*.md compiles on its own as a strict CommonJS TypeScript program
 * of a user importing "pulumi-posthog" (the package's self-reference resolves through package.json "exports" to
 * the built dist/ types: `npm run build` first). No top-level await (TS1309 in a CommonJS program), no fragment
 * that relies on another block. Other languages (```sh, ```yaml, ```text, ```json) are not compiled.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../provider/harness";
import { pages } from "./blocks";
import { compile } from "./compile";

/** The ```ts / ```typescript blocks of a Markdown text, with the line of their first code line. */
function tsBlocks(markdown: string): { line: number; code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*(ts|typescript)\s*$/.exec(lines[i] ?? "");
    if (!open) continue;
    const fence = open[2] ?? "```";
    const indent = open[1] ?? "";
    const start = i + 1;
    let end = start;
    while (end < lines.length && !(lines[end] ?? "").trim().startsWith(fence)) end++;
    blocks.push({
      line: start + 1,
      code: lines
        .slice(start, end)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
        .join("\n"),
    });
    i = end;
  }
  return blocks;
}

const files = pages();
/** page → its blocks' diagnostics, as `page:line: message`. */
const failures = new Map<string, string[]>();
let counted = 0;

beforeAll(() => {
  if (!existsSync(join(repoRoot, "dist", "sdk", "index.d.ts")))
    throw new Error(
      "dist/sdk is missing: the blocks compile against the built types; run `npm run build` first",
    );
  const programs: Record<string, string> = {};
  const where = new Map<string, { page: string; line: number }>();
  for (const page of files) {
    tsBlocks(readFileSync(join(repoRoot, page), "utf8")).forEach((b, n) => {
      const name = `blocks/${page.replace(/[^\w]+/g, "_")}_${n + 1}`;
      // `export {}` makes every block a module of its own, so two blocks never share top-level names.
      programs[name] = `${b.code}\nexport {};\n`;
      where.set(name, { page, line: b.line });
      counted++;
    });
  }
  const results = compile(programs);
  for (const [name, diagnostics] of Object.entries(results)) {
    const w = where.get(name);
    if (!w || diagnostics.length === 0) continue;
    const list = failures.get(w.page) ?? [];
    for (const d of diagnostics) {
      const [line, ...rest] = d.message.split(": ");
      list.push(`${w.page}:${w.line + Number(line) - 1}: ${rest.join(": ")}`);
    }
    failures.set(w.page, list);
  }
}, 180_000);

describe("```ts blocks of README.md and docs/ compile as strict CommonJS programs importing pulumi-posthog", () => {
  it("finds blocks to compile", () => {
    expect(counted).toBeGreaterThan(10);
  });

  it.each(files)("%s", (page) => {
    expect(failures.get(page) ?? []).toEqual([]);
  });

  it("the check can fail: a block with top-level await does not compile", () => {
    const r = compile({
      "blocks/negative":
        'import * as posthog from "pulumi-posthog";\nawait posthog.getProject({ name: "Web" });\nexport {};\n',
    });
    expect(r["blocks/negative"]?.map((d) => d.message)).toEqual([expect.stringMatching(/^2: TS1309 /)]);
  });
});
