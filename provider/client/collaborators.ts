/**
 * Dashboard collaborators. Endpoints: `/api/projects/:project_id/dashboards/:dashboard_id/collaborators/`
 * (+ `:user__uuid/`). Not paginated. There is no retrieve: {@link collaborators}.find reads the shared list.
 */
import { z } from "zod";
import { type ClientContext, call, type ProjectParams, parseBody, UserSchema } from "./common";
import { asListRead } from "./errors";
import { encodeSegment, path } from "./transport";

/** A collaborator: `level` 37 = can edit (21 = can view). */
export const CollaboratorSchema = z.looseObject({
  id: z.string().nullish(),
  dashboard_id: z.number().int().nullish(),
  user: UserSchema,
  level: z.number().int(),
  added_at: z.string().nullish(),
  updated_at: z.string().nullish(),
});
export type Collaborator = z.output<typeof CollaboratorSchema>;

/**
 * The list answer: one object in the seed, a JSON array in the real service (a page wrapper is also
 * accepted). Always normalized to an array.
 */
export const CollaboratorListSchema = z
  .union([
    z.array(CollaboratorSchema),
    z.looseObject({ results: z.array(CollaboratorSchema) }),
    CollaboratorSchema,
  ])
  .transform((v) =>
    Array.isArray(v) ? v : "results" in v && Array.isArray(v.results) ? v.results : [v as Collaborator],
  );

/** Add body: `user_uuid` and `level` (the real service only accepts 37 = can edit). */
export const CollaboratorAddBodySchema = z.looseObject({
  user_uuid: z.string().min(1),
  level: z.literal([21, 37]),
});
export type CollaboratorAddBody = z.input<typeof CollaboratorAddBodySchema>;

export interface DashboardScopedParams extends ProjectParams {
  /** Dashboard id (integer). */
  dashboardId: number;
}

const listPath = (ctx: ClientContext, p: DashboardScopedParams) =>
  path`/api/projects/${ctx.project(p)}/dashboards/${p.dashboardId}/collaborators/`;

/** Operations on dashboard collaborators. */
export function collaborators(ctx: ClientContext) {
  const list = async (p: DashboardScopedParams): Promise<Collaborator[]> =>
    (await asListRead(
      call(ctx, { method: "GET", path: listPath(ctx, p), signal: p.signal }, CollaboratorListSchema),
    )) as Collaborator[];
  return {
    /** GET `…/collaborators/` (dashboard:read) → every collaborator (the dashboard's creator is not listed). */
    list,
    /**
     * POST `…/collaborators/` (dashboard:write) → 201 collaborator.
     * @throws ValidationError e.g. "User already is a collaborator.", lowest restriction level
     */
    add: async (p: DashboardScopedParams & { body: CollaboratorAddBody }) =>
      call(
        ctx,
        {
          method: "POST",
          path: listPath(ctx, p),
          body: parseBody(CollaboratorAddBodySchema, p.body, "body"),
          signal: p.signal,
        },
        CollaboratorSchema,
      ),
    /** DELETE `…/collaborators/:user__uuid/` (dashboard:write) → 204. */
    remove: async (p: DashboardScopedParams & { userUuid: string }): Promise<void> => {
      await call(
        ctx,
        {
          method: "DELETE",
          path: `${listPath(ctx, p)}${encodeSegment(p.userUuid, "userUuid")}/`,
          signal: p.signal,
        },
        z.unknown(),
      );
    },
    /** The collaborator with this user UUID, or undefined; served from a shared short-lived list read. */
    find: async (p: DashboardScopedParams & { userUuid: string }): Promise<Collaborator | undefined> => {
      const lp = listPath(ctx, p);
      const items = await ctx.sharedList(lp, () =>
        list({ dashboardId: p.dashboardId, projectId: ctx.project(p) }),
      );
      return items.find((c) => c.user.uuid === p.userUuid);
    },
  };
}
