/**
 * Dashboard sharing configuration. Endpoint: `/api/projects/:project_id/dashboards/:dashboard_id/sharing/`
 * (GET, and PATCH in the real service). One object per dashboard, not a list.
 */
import { z } from "zod";
import type { DashboardScopedParams } from "./collaborators";
import { type ClientContext, call, parseBody } from "./common";
import { path } from "./transport";

/** Sharing configuration. `access_token` of a never-enabled dashboard may change on every read. */
export const SharingSchema = z.looseObject({
  created_at: z.string().nullish(),
  enabled: z.boolean(),
  access_token: z.string().nullish(),
  settings: z.record(z.string(), z.unknown()).nullish(),
  password_required: z.boolean().nullish(),
});
export type Sharing = z.output<typeof SharingSchema>;

/** The GET answer: one object (an array of one, as the OpenAPI declares, is also accepted). */
export const SharingResponseSchema = z
  .union([SharingSchema, z.array(SharingSchema).min(1)])
  .transform((v) => (Array.isArray(v) ? (v[0] as Sharing) : v));

/** Update body: `enabled`, optional `settings` and `password_required`. */
export const SharingUpdateBodySchema = z.looseObject({
  enabled: z.boolean().optional(),
  settings: z.record(z.string(), z.unknown()).nullish(),
  password_required: z.boolean().optional(),
});
export type SharingUpdateBody = z.input<typeof SharingUpdateBodySchema>;

const sharingPath = (ctx: ClientContext, p: DashboardScopedParams) =>
  path`/api/projects/${ctx.project(p)}/dashboards/${p.dashboardId}/sharing/`;

/** Operations on dashboard sharing. */
export function sharing(ctx: ClientContext) {
  return {
    /** GET `…/sharing/` (sharing_configuration:read) → the sharing configuration. */
    retrieve: async (p: DashboardScopedParams) =>
      call(ctx, { method: "GET", path: sharingPath(ctx, p), signal: p.signal }, SharingResponseSchema),
    /** PATCH `…/sharing/` (sharing_configuration:write) → the sharing configuration. */
    update: async (p: DashboardScopedParams & { body: SharingUpdateBody }) =>
      call(
        ctx,
        {
          method: "PATCH",
          path: sharingPath(ctx, p),
          body: parseBody(SharingUpdateBodySchema, p.body, "body"),
          signal: p.signal,
        },
        SharingResponseSchema,
      ),
  };
}
