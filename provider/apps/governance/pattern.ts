/**
 * The regular expressions of the governance configuration (`namePattern` of posthog-project-name-pattern), run on
 * a linear-time engine: RE2 (the `re2js` package, RE2's automata in pure JavaScript), so a pattern such as
 * `^(a+)+$` against a hostile name takes time linear in the name, never the exponential backtracking of
 * JavaScript's RegExp. The audit and the policy pack both run the rule through this module.
 *
 * The syntax is RE2's (Go's `regexp`): JavaScript's but for lookahead (`(?=…)`, `(?!…)`), lookbehind (`(?<=…)`,
 * `(?<!…)`) and backreferences (`\1`, `\k<name>`), which need backtracking, and a few escapes RE2 writes
 * otherwise (`\x{0041}` for `\u0041`). A pattern RE2 cannot parse is refused when the configuration is parsed,
 * naming why; it is never rewritten (re2js's `translateRegExp` would turn `\k<name>` into the text `k<name>`: a
 * pattern that means something else). Matching is a search, as RegExp's `test`: anchor with `^…$` to match a whole
 * name.
 */
import { RE2JS } from "re2js";

/** The RE2 program of `source`, or the parser's reason when RE2 cannot run it. */
function compile(source: string): RE2JS | { reason: string } {
  try {
    return RE2JS.compile(source);
  } catch (e) {
    return { reason: (e as Error).message };
  }
}

/**
 * Why `source` cannot be a pattern of the configuration, in words that end a sentence (without the key's name),
 * or undefined when RE2 runs it: a valid JavaScript pattern RE2 cannot run (lookaround, backreferences), or not a
 * regular expression at all.
 */
export function linearPatternProblem(source: string): string | undefined {
  const re = compile(source);
  if (re instanceof RE2JS) return undefined;
  let javascript = true;
  try {
    new RegExp(source);
  } catch {
    javascript = false;
  }
  return javascript
    ? `${JSON.stringify(source)} cannot run in linear time (${re.reason}): patterns run on RE2, whose syntax has ` +
        "no lookahead, lookbehind or backreference and writes \\u0041 as \\x{0041}; rewrite it in RE2 syntax"
    : `${JSON.stringify(source)} is not a valid regular expression (${re.reason})`;
}

/**
 * The test of `source`, compiled once: whether a text holds a match of it (a search, as RegExp's `test`), in time
 * linear in the text. Compile a pattern once per use (e.g. once per rule check), not once per text.
 * @throws Error with {@link linearPatternProblem}'s reason when RE2 cannot run `source` (the configuration's
 *   parsing refuses such a pattern first).
 */
export function linearMatcher(source: string): (text: string) => boolean {
  const re = compile(source);
  if (!(re instanceof RE2JS)) throw new Error(linearPatternProblem(source));
  return (text) => re.test(text);
}

/**
 * Whether `text` holds a match of `source` (a search, as RegExp's `test`), in time linear in `text`; compiles
 * `source` (see {@link linearMatcher} to test many texts).
 * @throws Error with {@link linearPatternProblem}'s reason when RE2 cannot run `source` (the configuration's
 *   parsing refuses such a pattern first).
 */
export function linearTest(source: string, text: string): boolean {
  return linearMatcher(source)(text);
}
