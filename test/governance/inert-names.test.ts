/**
 * Issue 49, item 3: names are printed inertly. The audit's escaping (provider/apps/governance/audit.ts `inertText`,
 * `markdownCode`) and the drift summary's (examples/ci/drift-summary.cjs, plain Node.js users copy) are the same,
 * character for character, on hostile names; and the drift summary's job summary, fed a preview whose resource
 * names and diagnostics are hostile (a newline forging a row, ANSI colours, a carriage return, a live markdown link,
 * an image, HTML), keeps its table to one row per resource and its four cells, each name inside a code span that
 * renders nothing. The audit's own formats are tested end to end in audit.test.ts. No emulator, no CLI.
 */
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { inertText, markdownCode } from "../../provider/apps/governance/audit";
import { ACTIVE, cellsOf, codeSpanText, HOSTILE_NAMES, unescapeShown } from "../support/inert";

const summary = require("../../examples/ci/drift-summary.cjs") as {
  judge(
    stack: string,
    json: string,
    stderr: string,
    status: string | undefined,
  ): { markdown: string; clean: boolean };
  code(text: string): string;
  inert(text: string): string;
};

describe("the audit's and the drift summary's escaping are the same", () => {
  it.each(HOSTILE_NAMES)("%j", (name) => {
    expect(summary.inert(name)).toBe(inertText(name));
    expect(summary.code(name)).toBe(markdownCode(name));
    expect(inertText(name)).not.toMatch(ACTIVE);
    // one code span, whose shown text gives back the name exactly
    const span = markdownCode(name);
    expect(cellsOf(`| ${span} |`)).toEqual([span]);
    expect(unescapeShown(codeSpanText(span) ?? "(not a code span)")).toBe(name);
  });

  it("inertText escapes what a terminal acts on and nothing else", () => {
    expect(inertText("a\nb\rc\td\u001be\u007ff\u009bg\u2028h\u202ei")).toBe(
      "a\\nb\\rc\\td\\u001be\\u007ff\\u009bg\\u2028h\\u202ei",
    );
    expect(inertText("Plain name: 12 [x] <b> | é ✨ \\d")).toBe("Plain name: 12 [x] <b> | é ✨ \\d");
  });
});

describe("the drift summary of a preview with hostile names and diagnostics", () => {
  const urn = (name: string) =>
    `urn:pulumi:prod::posthog-org::pulumi-nodejs:dynamic/posthog:Dashboard::${name}`;
  const preview = {
    steps: HOSTILE_NAMES.map((name) => ({
      op: "update",
      urn: urn(name),
      oldState: { inputs: { name: `${name} (from the UI)` } },
      newState: { inputs: { name } },
    })),
    diagnostics: HOSTILE_NAMES.map((name) => ({
      severity: "error",
      urn: urn(name),
      message: `error: Preview failed: dashboard "${name}"\nsecond line`,
    })),
    changeSummary: { update: HOSTILE_NAMES.length },
  };
  const { markdown, clean } = summary.judge("prod", JSON.stringify(preview), "", "7");

  it("fails the gate, and no raw control character reaches the summary", () => {
    expect(clean).toBe(false);
    expect(markdown.split("\n").filter((l) => ACTIVE.test(l))).toEqual([]);
  });

  it("one table row per drifted resource, four cells each, the name one code span that gives it back exactly", () => {
    const lines = markdown.split("\n");
    const head = lines.indexOf("| Change | Type | Name | Properties |");
    expect(head).toBeGreaterThan(0);
    const rows = lines.slice(head + 2, lines.indexOf("", head));
    expect(rows).toHaveLength(HOSTILE_NAMES.length);
    for (const [i, row] of rows.entries()) {
      const cells = cellsOf(row);
      expect(cells, row).toHaveLength(4);
      expect(cells[0]).toBe("`update`");
      expect(cells[1]).toBe("`posthog:Dashboard`");
      expect(unescapeShown(codeSpanText(cells[2] as string) ?? "(not a code span)")).toBe(HOSTILE_NAMES[i]);
      expect(cells[3]).toBe("`name`");
    }
  });

  it("each error one list item: the name and the message code spans, the message's lines kept apart by \\n", () => {
    const items = markdown.split("\n").filter((l) => l.startsWith("- **error**"));
    expect(items).toHaveLength(HOSTILE_NAMES.length);
    for (const [i, item] of items.entries()) {
      const m = /^- \*\*error\*\* \((`+.*?`+)\): (`+.*`+)$/.exec(item);
      expect(m, item).not.toBeNull();
      expect(unescapeShown(codeSpanText(m?.[1] ?? "") ?? "")).toBe(HOSTILE_NAMES[i]);
      // ANSI sequences in a diagnostic are the CLI's colours: dropped (stripVTControlCharacters), the rest exact
      expect(unescapeShown(codeSpanText(m?.[2] ?? "") ?? "")).toBe(
        stripVTControlCharacters(`Preview failed: dashboard "${HOSTILE_NAMES[i]}"\nsecond line`),
      );
    }
  });

  it("quoted stderr keeps its lines, with every other control character escaped", () => {
    const failed = summary.judge("prod", "", "error: \u001b[31mboom\u001b[0m\r\nsecond line\n", "1");
    expect(failed.markdown).toContain("```text\nerror: \\u001b[31mboom\\u001b[0m\nsecond line\n```");
  });
});
