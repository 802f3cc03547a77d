import { forbidden } from "../errors";
import type { Ctx, Result } from "../runtime";

/** Shared helpers of the API operations. */

export const ORG = "/api/organizations/:organization_id";
export const DASH = "/api/projects/:project_id/dashboards";
export const ADMIN = 8;
export const OWNER = 15;
export const EVERYONE_CAN_EDIT = 21;
export const ONLY_COLLABORATORS = 37;

export const ok = (body?: unknown): Result => ({ status: 200, body });
export const created = (body: unknown): Result => ({ status: 201, body });
export const noContent: Result = { status: 204 };

export const isUuid = (s: string | undefined): s is string =>
  typeof s === "string" && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
export const intParam = (s: string | undefined): number | undefined =>
  s && /^\d+$/.test(s) ? Number(s) : undefined;

export const requireAdmin = (ctx: Ctx): void => {
  if (ctx.membership.level < ADMIN) throw forbidden("Your organization access level is insufficient.");
};
