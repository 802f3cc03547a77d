/**
 * Input building blocks shared by resource schemas: integer ids (dashboards, projects), organization levels,
 * e-mail addresses, project ids (and the project a project-scoped resource lives in), and groups of mutually
 * exclusive inputs. The groups are data: the schemas enforce them at run time (`check`), and the SDK generator
 * (tools/codegen.ts) turns them into TypeScript unions of the Args types, so both come from one place.
 */
import { z } from "zod";
import type { PostHogClient } from "../client";

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

/** Accepted spellings of an organization level: 1/8/15 or member/admin/owner; parsed to the number. */
export const OrganizationLevelInput = z
  .union([z.literal([1, 8, 15]), z.enum(["member", "admin", "owner"])], {
    error: 'expected one of 1, 8, 15, "member", "admin", "owner"',
  })
  .transform((v): 1 | 8 | 15 =>
    typeof v === "number" ? v : ({ member: 1, admin: 8, owner: 15 } as const)[v],
  );

/** An e-mail address (at most 254 characters); the domain part is lowercased as the server does. */
export const EmailInput = z
  .email({ error: "expected an e-mail address such as jane@example.com" })
  .max(254, { error: "expected an e-mail address of at most 254 characters" })
  .transform((v) => {
    const at = v.lastIndexOf("@");
    return `${v.slice(0, at)}@${v.slice(at + 1).toLowerCase()}`;
  });

/** The message of a refused project id: what it accepts (and an example), and what it got. */
const projectIdExpected = (got: string) =>
  `expected a project id (a positive integer, or a string of its digits such as a Project's id: ` +
  `\`projectId: web.id\`; or "@current"), got ${got}`;

/**
 * A project id: a positive integer or the string of its digits (a Project's `id` output as it is), or
 * `"@current"`; parsed to the decimal string (`7`, `"7"` and `"007"` all give `"7"`).
 */
export const ProjectIdInput = z
  .union([z.literal("@current"), integerIdInput(projectIdExpected)], {
    error: (iss) => projectIdExpected(shown(iss.input)),
  })
  .transform(String);

/**
 * The project a project-scoped resource (Dashboard, DashboardCollaborator, DashboardSharing) lives in: the
 * declared `projectId`, else the provider's `posthog:projectId`, else the key's current project, resolved to
 * its id with GET `/api/organizations/:organization_id/projects/@current/`, so the state never depends on
 * what "current" means later.
 */
export async function resolveProjectId(api: PostHogClient, declared?: string): Promise<string> {
  const id = declared ?? api.settings.projectId;
  if (id !== undefined && id !== "@current") return id;
  return String((await api.projects.retrieve({ id: "@current" })).id);
}
