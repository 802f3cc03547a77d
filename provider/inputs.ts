/**
 * Input building blocks shared by resource schemas: dashboard ids, and groups of mutually exclusive inputs.
 * The groups are data: the schemas enforce them at run time (`check`), and the SDK generator
 * (tools/codegen.ts) turns them into TypeScript unions of the Args types, so both come from one place.
 */
import { z } from "zod";

/** How a refused value reads in a message: `true`, `"77"`, `1.5`, `an object`. */
function shown(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null || typeof v === "boolean" || typeof v === "number") return String(v);
  if (typeof v === "string") return `the string ${JSON.stringify(v)}`;
  return Array.isArray(v) ? "a list" : `a ${typeof v}`;
}

/**
 * A dashboard id: a positive integer, nothing else (a boolean, a string or a resource object is refused, never
 * coerced: `true` once became dashboard 1). The message names the fix: a Dashboard's `id` is a string output,
 * so pass `kpis.id.apply(Number)`.
 */
export function dashboardIdInput(property: string) {
  const error = (iss: { input?: unknown }) =>
    `expected a dashboard id (a positive integer), got ${shown(iss.input)}: pass the Dashboard's id as a ` +
    `number, e.g. \`${property}: kpis.id.apply(Number)\``;
  return z.number({ error }).int({ error }).positive({ error });
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
