/**
 * Hostile names and the checks of what prints them inertly (issue 49, item 3): shared by
 * test/governance/inert-names.test.ts (the escaping, the drift summary) and test/governance/audit.test.ts (the
 * audit's formats end to end).
 */

/** Names a hostile user can give an object in PostHog's UI. */
export const HOSTILE_NAMES = [
  "x\nmandatory posthog-fake-rule project/1 FAKE ROW",
  "\u001b[31mred\u001b[0m and \u001b]8;;https://evil.example\u0007a terminal link\u001b]8;;\u0007",
  "carriage\rreturn",
  "[click](https://evil.example)",
  "![image](https://evil.example/pixel.png)",
  "<b>bold</b> <img src=x onerror=alert(1)>",
  "a | pipe, a \\| escaped pipe, a trailing backslash\\",
  "`ticks` and ``more``",
  "https://evil.example www.evil.example",
  "\u0085next line \u2028line separator \u202eright-to-left override",
  "*emphasis* _too_ ~~struck~~",
];

/** Characters no printed name may carry raw (what `inertText` escapes). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
export const ACTIVE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

/**
 * The cells of a GitHub table row as its table parser splits them: a `|` ends a cell unless escaped (a backslash
 * escapes the ASCII punctuation character after it, a backslash included).
 */
export function cellsOf(row: string): string[] {
  const cells: string[] = [];
  let cell = "";
  for (let i = 0; i < row.length; i++) {
    const c = row[i] as string;
    if (c === "\\" && i + 1 < row.length && /[!-/:-@[-`{-~]/.test(row[i + 1] as string)) {
      cell += c + row[i + 1];
      i++;
    } else if (c === "|") {
      cells.push(cell);
      cell = "";
    } else cell += c;
  }
  cells.push(cell);
  // A row starts and ends with a pipe: no cell before the first or after the last.
  return cells.slice(1, -1).map((x) => x.trim());
}

/**
 * The text a cell shows when it is one code span (a run of backticks, the text, the same run; `\|` shown as `|`),
 * or undefined when it is not exactly one code span.
 */
export function codeSpanText(cell: string): string | undefined {
  const m = /^(`+)([\s\S]*?)\1$/.exec(cell);
  if (!m) return undefined;
  const [, fence, inner] = m as unknown as [string, string, string];
  // No run of the fence's length inside: the span would end there.
  if ((inner.match(/`+/g) ?? []).some((run) => run.length === fence.length)) return undefined;
  const text = /^ .* $/.test(inner) && inner.trim() !== "" ? inner.slice(1, -1) : inner;
  return text.replace(/\\\|/g, "|");
}

/** Undoes `markdownCode`'s escapes of a code span's text: the name as it was. */
export const unescapeShown = (shown: string): string =>
  shown.replace(/\\(\\|n|r|t|u[0-9a-f]{4})/g, (_, e: string) =>
    e === "\\"
      ? "\\"
      : e === "n"
        ? "\n"
        : e === "r"
          ? "\r"
          : e === "t"
            ? "\t"
            : String.fromCharCode(Number.parseInt(e.slice(1), 16)),
  );
