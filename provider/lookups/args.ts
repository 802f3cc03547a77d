/**
 * The arguments of each lookup (provider/lookups/index.ts): zod schemas, checked before any request or mock call.
 * Loaded by the first lookup, not with the SDK (a program that makes no lookup loads no zod).
 */
import { z } from "zod";
import { InvalidInputError } from "../client/errors";
import { integerIdInput } from "../framework/inputs";

const text = z
  .string({ error: "must be a non-empty string" })
  .regex(/\S/, { error: "must be a non-empty string" });
/** A dashboard id: a positive integer or a string of its digits (a Dashboard's `id` as it is); parsed to a number. */
const positiveId = integerIdInput(
  (got) =>
    `must be a dashboard id: a positive integer or a string of its digits (a Dashboard's id), got ${got}`,
);
const projectRefError = {
  error: 'must be a positive integer project id (a number or digit string) or "@current"',
};
const projectRef = z.union(
  [
    z.number(projectRefError).int(projectRefError).positive(projectRefError),
    z.string(projectRefError).regex(/^([1-9][0-9]*|@current)$/, projectRefError),
  ],
  projectRefError,
);

/** Parses `args` of lookup `fn`; a failure is an {@link InvalidInputError} naming the property. */
export function checkArgs<S extends z.ZodType>(fn: string, schema: S, args: unknown): z.output<S> {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw new InvalidInputError("args", `${fn}: the arguments must be an object, got ${typeof args}`);
  }
  const parsed = schema.safeParse(args);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const property = issue?.path.map(String).join(".") || "args";
  const message =
    issue?.code === "unrecognized_keys"
      ? `unknown argument(s) ${issue.keys.join(", ")}`
      : `${property} ${issue?.message ?? "is invalid"}`;
  throw new InvalidInputError(property, `${fn}: ${message}`);
}

export const withOrg = z.strictObject({ organizationId: text.optional() });

export const MemberByEmailSchema = withOrg.extend({ email: text });
export const MemberByUuidSchema = withOrg.extend({ userUuid: text });
export const ProjectByIdSchema = withOrg.extend({ id: projectRef });
export const ProjectByNameSchema = withOrg.extend({ name: text });
export const DashboardArgsSchema = z.strictObject({ id: positiveId, projectId: projectRef.optional() });
export const DashboardRefArgsSchema = z.strictObject({
  dashboardId: positiveId,
  projectId: projectRef.optional(),
});

/**
 * Two exclusive keys `a` and `b`: exactly one must be given. Returns whether it is `a` (checked before the
 * schema of that form, for a message naming both).
 */
export function exactlyOne(fn: string, args: unknown, a: string, b: string): boolean {
  if (typeof args !== "object" || args === null) return true; // checkArgs names it
  const has = (k: string) => (args as Record<string, unknown>)[k] !== undefined;
  if (has(a) === has(b)) {
    throw new InvalidInputError(
      a,
      `${fn}: pass exactly one of ${a} or ${b} (got ${has(a) ? "both" : "neither"})`,
    );
  }
  return has(a);
}

/**
 * The zod schemas of each lookup's arguments (`getMember` and `getProject`: one per form), what is checked
 * before any request or mock call. The pages under docs/lookups/ are checked against them.
 */
export const LookupArgsSchemas = {
  getMember: [MemberByEmailSchema, MemberByUuidSchema],
  getProject: [ProjectByIdSchema, ProjectByNameSchema],
  getDashboard: [DashboardArgsSchema],
  getDashboardSharing: [DashboardRefArgsSchema],
  getDashboardAccessControls: [DashboardRefArgsSchema],
  getBatchExports: [withOrg],
} as const;
