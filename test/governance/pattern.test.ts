/**
 * Issue 49, item 4: `namePattern` (posthog-project-name-pattern) runs on a linear-time engine, RE2
 * (provider/apps/governance/pattern.ts), in the rule itself, so the audit and the policy pack alike: `^(a+)+$` against a
 * project named 34 a's then `!` (catastrophic backtracking for JavaScript's RegExp: hours) is judged at once, and a
 * pattern RE2 cannot run (lookahead, lookbehind, backreferences) is refused when the configuration is parsed, by
 * parseGovernanceConfig (the audit) and parseRuleKeys (the pack), naming the key and why. The audit through its
 * CLI: audit.test.ts.
 */
import { describe, expect, it } from "vitest";
import { linearMatcher, linearPatternProblem, linearTest } from "../../provider/apps/governance/pattern";
import {
  evaluate,
  GovernanceConfigError,
  type GovModel,
  parseGovernanceConfig,
  parseRuleKeys,
  RULES,
} from "../../provider/apps/governance/rules";

const RULE = "posthog-project-name-pattern";
const rule = RULES.find((r) => r.id === RULE);
const model = (names: string[]): GovModel => ({
  domains: [],
  invites: [],
  members: [],
  dashboards: [],
  sharing: [],
  exportPauses: [],
  projects: names.map((name, i) => ({
    ref: `project/${i + 1}`,
    label: `Project ${i + 1}`,
    name,
    timezone: "UTC",
  })),
});
const findings = (pattern: string, names: string[]) =>
  evaluate(
    model(names),
    parseGovernanceConfig({
      all: "disabled",
      [RULE]: { enforcementLevel: "mandatory", namePattern: pattern },
    }),
  ).map((v) => v.ref);

describe("namePattern on RE2", () => {
  it("^(a+)+$ against 34 a's then '!': no match (a violation), and 34 a's alone match", () => {
    const hostile = `${"a".repeat(34)}!`;
    expect(findings("^(a+)+$", [hostile, "a".repeat(34), "aaa"])).toEqual(["project/1"]);
    // the same through the pack's parse of the rule's keys
    const keys = parseRuleKeys(rule as (typeof RULES)[number], { namePattern: "^(a+)+$" }) as {
      namePattern: string;
    };
    expect(rule?.check(model([hostile]), keys).map((f) => f.ref)).toEqual(["project/1"]);
  });

  it("searches as RegExp's test does; named groups as JavaScript writes them, RE2's \\x{…}", () => {
    expect(findings("^Acme ", ["Acme Web", "Web Acme"])).toEqual(["project/2"]);
    expect(findings("(?<prefix>Acme) \\x{0057}eb", ["Acme Web", "Acme App"])).toEqual(["project/2"]);
    expect(linearTest("\\d{2}$", "Project 42")).toBe(true);
    // compiled once, tested on many texts
    const twoDigits = linearMatcher("\\d{2}$");
    expect(["Project 42", "Project 4", "42"].map(twoDigits)).toEqual([true, false, true]);
    expect(() => linearMatcher("^(?=Acme)")).toThrow(/cannot run in linear time/);
  });

  it.each([
    ["^(?=Acme)", "lookahead"],
    ["(?!test)", "negative lookahead"],
    ["(?<=Acme )Web", "lookbehind"],
    ["(?<!x)y", "negative lookbehind"],
    ["^(a)\\1$", "a backreference"],
    ["^(?<n>a)\\k<n>$", "a named backreference"],
    ["\\u0041", "a JavaScript escape RE2 writes \\x{0041}"],
  ])("%j (%s): refused at parse, by the audit's and the pack's parser, naming the key and why", (pattern) => {
    const quoted = JSON.stringify(pattern);
    const why = `${quoted} cannot run in linear time (error parsing regexp: `;
    const tail =
      "): patterns run on RE2, whose syntax has no lookahead, lookbehind or backreference and writes \\u0041 as " +
      "\\x{0041}; rewrite it in RE2 syntax";
    expect(linearPatternProblem(pattern)?.endsWith(tail)).toBe(true);
    expect(linearPatternProblem(pattern)).toContain(why);
    let error: unknown;
    try {
      parseGovernanceConfig({ [RULE]: { namePattern: pattern } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GovernanceConfigError);
    expect((error as Error).message).toContain(`policy config "${RULE}": namePattern: ${why}`);
    expect(() => parseRuleKeys(rule as (typeof RULES)[number], { namePattern: pattern })).toThrow(
      `policy config "${RULE}": namePattern: ${why}`,
    );
  });

  it("not a regular expression at all: refused naming it", () => {
    expect(() => parseGovernanceConfig({ [RULE]: { namePattern: "([a-z" } })).toThrow(
      `policy config "${RULE}": namePattern: "([a-z" is not a valid regular expression (error parsing regexp: missing closing ]`,
    );
  });
});
