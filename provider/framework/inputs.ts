/**
 * Input building blocks shared by resource schemas: integer ids (dashboards, projects), and groups of mutually
 * exclusive inputs. The groups are data: the schemas enforce them at run time (`check`), and the SDK generator
 * (tools/codegen.ts) turns them into TypeScript unions of the Args types, so both come from one place.
 */
import { z } from "zod";

/** How a refused value reads in a message: `true`, `"77"`, `1.5`, `an object`. */
export function shown(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null || typeof v === "boolean" || typeof v === "number") return String(v);
  if (typeof v === "string") return `the string ${JSON.stringify(v)}`;
  return Array.isArray(v) ? "a list" : typeof v === "object" ? "an object" : `a ${typeof v}`;
}

/**
 * The positive integer `v` stands for: a number, or a string of decimal digits (what a resource's `id` output
 * is, e.g. "12"); undefined for anything else (`true`, "12a", "", 0, 1.5, a number beyond 2^53).
 */
export function positiveIntegerOf(v: unknown): number | undefined {
  const n = typeof v === "number" ? v : typeof v === "string" && /^[0-9]+$/.test(v) ? Number(v) : Number.NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/**
 * An integer id input: a positive integer, or the string of its digits, so a resource's `id` output (a string)
 * connects as it is (`dashboardId: kpis.id`); parsed to the number, so state written with numbers shows no
 * change. Anything else (a boolean, "12a", 0, 1.5, a resource object) is refused, never coerced (`true` once
 * became dashboard 1), with `expected(got)` as the message.
 */
export function integerIdInput(expected: (got: string) => string) {
  return z
    .union([z.number().int(), z.string()], { error: (iss) => expected(shown(iss.input)) })
    .transform((v, ctx) => {
      const n = positiveIntegerOf(v);
      if (n !== undefined) return n;
      ctx.addIssue({ code: "custom", message: expected(shown(v)) });
      return z.NEVER;
    });
}

/**
 * A dashboard id: a positive integer or its decimal string, e.g. a Dashboard's `id` output as it is; parsed to a
 * number. The message names `property` and what it accepts.
 */
export function dashboardIdInput(property: string) {
  return integerIdInput(
    (got) =>
      `expected a dashboard id (a positive integer, or a string of its digits such as a Dashboard's id: ` +
      `\`${property}: kpis.id\`), got ${got}`,
  );
}

/**
 * Mutually exclusive inputs: `exactlyOne` of `keys` must be given, or `atMostOne` of them may be. Declared
 * `as const` next to a schema, so the generator reads the literal keys.
 */
export interface ExclusiveGroup {
  readonly kind: "exactlyOne" | "atMostOne";
  readonly keys: readonly string[];
}

/** "userUuid and email", "useTemplate, useDashboard, templateJson and dashboardId". */
export function listed(keys: readonly string[]): string {
  return keys.length <= 1 ? (keys[0] ?? "") : `${keys.slice(0, -1).join(", ")} and ${keys.at(-1)}`;
}

/** The rule of a group in words: "exactly one of userUuid and email". */
export function ruleOf(group: ExclusiveGroup): string {
  return `${group.kind === "exactlyOne" ? "exactly one" : "at most one"} of ${listed(group.keys)}`;
}

/**
 * A `.superRefine` check enforcing `groups` on the object's given (not undefined) properties. The issue is
 * on the second key given when too many are, on the first key of the group when none is.
 */
export function exclusive(groups: readonly ExclusiveGroup[]) {
  return (v: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    for (const g of groups) {
      const given = g.keys.filter((k) => v[k] !== undefined);
      if (given.length > 1) {
        ctx.addIssue({
          code: "custom",
          path: [given[1] ?? g.keys[0] ?? ""],
          message: `${g.kind === "exactlyOne" ? "expected" : "use"} ${ruleOf(g)} (got ${given.join(", ")})`,
        });
      } else if (given.length === 0 && g.kind === "exactlyOne") {
        ctx.addIssue({ code: "custom", path: [g.keys[0] ?? ""], message: `expected ${ruleOf(g)}` });
      }
    }
  };
}
