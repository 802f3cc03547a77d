/**
 * Projects (organization scope). Endpoints: `/api/organizations/:organization_id/projects/` (+ `:id/`).
 * The list carries a subset of fields; create/retrieve/update return every field.
 */
import { z } from "zod";
import {
  type ClientContext,
  call,
  listOperations,
  type OrgParams,
  type PageParams,
  pageSchema,
  parseBody,
} from "./common";
import { path } from "./transport";

/**
 * A project. The fields named here are typed; the many structured settings (filters, configs, modifiers…)
 * pass through untyped. List items carry only id, uuid, organization, api_token, name,
 * completed_snippet_onboarding, has_completed_onboarding_for, ingested_event, is_demo, timezone, access_control.
 */
export const ProjectSchema = z.looseObject({
  id: z.number().int(),
  uuid: z.string().nullish(),
  organization: z.string().nullish(),
  api_token: z.string().nullish(),
  name: z.string(),
  product_description: z.string().nullish(),
  created_at: z.string().nullish(),
  updated_at: z.string().nullish(),
  effective_membership_level: z.number().int().nullish(),
  completed_snippet_onboarding: z.boolean().nullish(),
  has_completed_onboarding_for: z.unknown().optional(),
  ingested_event: z.boolean().nullish(),
  is_demo: z.boolean().nullish(),
  timezone: z.string().nullish(),
  access_control: z.boolean().nullish(),
  app_urls: z.array(z.string().nullable()).nullish(),
  anonymize_ips: z.boolean().nullish(),
  week_start_day: z.number().int().nullish(),
  primary_dashboard: z.number().int().nullish(),
});
export type Project = z.output<typeof ProjectSchema>;

/**
 * Create body: the fields PostHog accepts on create; structured settings pass through untouched.
 * `name` ≤ 200 chars and not blank; `week_start_day` 0 (Sunday) or 1 (Monday).
 */
export const ProjectCreateBodySchema = z.looseObject({
  name: z
    .string()
    .max(200)
    .refine((n) => n.trim().length > 0, "expected a non-blank name")
    .optional(),
  product_description: z.string().nullish(),
  app_urls: z.array(z.string().nullable()).optional(),
  slack_incoming_webhook: z.string().nullish(),
  anonymize_ips: z.boolean().optional(),
  completed_snippet_onboarding: z.boolean().optional(),
  test_account_filters_default_checked: z.boolean().nullish(),
  is_demo: z.boolean().optional(),
  timezone: z.string().min(1).optional(),
  person_display_name_properties: z.array(z.string()).nullish(),
  autocapture_opt_out: z.boolean().nullish(),
  autocapture_exceptions_opt_in: z.boolean().nullish(),
  autocapture_web_vitals_opt_in: z.boolean().nullish(),
  capture_console_log_opt_in: z.boolean().nullish(),
  capture_performance_opt_in: z.boolean().nullish(),
  session_recording_opt_in: z.boolean().optional(),
  session_recording_sample_rate: z.string().nullish(),
  session_recording_minimum_duration_milliseconds: z.number().int().nonnegative().nullish(),
  access_control: z.boolean().optional(),
  week_start_day: z.literal([0, 1]).nullish(),
  primary_dashboard: z.number().int().nullish(),
  live_events_columns: z.array(z.string()).nullish(),
  recording_domains: z.array(z.string().nullable()).nullish(),
  inject_web_apps: z.boolean().nullish(),
  surveys_opt_in: z.boolean().nullish(),
  heatmaps_opt_in: z.boolean().nullish(),
});
export type ProjectCreateBody = z.input<typeof ProjectCreateBodySchema>;
export const ProjectUpdateBodySchema = ProjectCreateBodySchema;
export type ProjectUpdateBody = z.input<typeof ProjectUpdateBodySchema>;

export interface ProjectIdParams extends OrgParams {
  /** Project id (integer, or `@current`). */
  id: number | string;
}

/** The page wrapper of the list (made once: see `pageSchema`). */
const ProjectPageSchema = pageSchema(ProjectSchema);

const listPath = (ctx: ClientContext, p: OrgParams | undefined) =>
  path`/api/organizations/${ctx.org(p)}/projects/`;
const itemPath = (ctx: ClientContext, p: ProjectIdParams) =>
  path`/api/organizations/${ctx.org(p)}/projects/${p.id}/`;

/** Operations on projects. */
export function projects(ctx: ClientContext) {
  return {
    /** GET `/api/organizations/:organization_id/projects/` (project:read): `list` (one page), `iterate`, `all` (list subset). */
    ...listOperations(ctx, (p?: OrgParams & PageParams) => listPath(ctx, p), ProjectPageSchema),
    /**
     * GET `/api/projects/` (project:read): the projects the key's user can see, in every organization (each item's
     * `organization` names its own): `visible.list` (one page), `visible.iterate`, `visible.all`. It also answers a
     * key scoped to projects, which the organization's list refuses (403).
     */
    visible: listOperations(ctx, (_p?: PageParams) => "/api/projects/", ProjectPageSchema),
    /** POST `…/projects/` (project:write) → 201 project. @throws ForbiddenError (plan limit, admin needed) */
    create: async (p: OrgParams & { body: ProjectCreateBody }) =>
      call(
        ctx,
        {
          method: "POST",
          path: listPath(ctx, p),
          body: parseBody(ProjectCreateBodySchema, p.body, "body"),
          signal: p.signal,
        },
        ProjectSchema,
      ),
    /** GET `…/projects/:id/` (project:read) → project (all fields). @throws NotFoundError */
    retrieve: async (p: ProjectIdParams) =>
      call(ctx, { method: "GET", path: itemPath(ctx, p), signal: p.signal }, ProjectSchema),
    /** PATCH `…/projects/:id/` (project:write; real service, not in the seed) → project. */
    update: async (p: ProjectIdParams & { body: ProjectUpdateBody }) =>
      call(
        ctx,
        {
          method: "PATCH",
          path: itemPath(ctx, p),
          body: parseBody(ProjectUpdateBodySchema, p.body, "body"),
          signal: p.signal,
        },
        ProjectSchema,
      ),
    /** DELETE `…/projects/:id/` (project:write; real service, not in the seed) → 204. */
    delete: async (p: ProjectIdParams): Promise<void> => {
      await call(ctx, { method: "DELETE", path: itemPath(ctx, p), signal: p.signal }, z.unknown());
    },
  };
}
