/**
 * Dashboards (project scope). Endpoints: `/api/projects/:project_id/dashboards/` (+ `:id/`,
 * `:id/access_controls/`, `:id/global_access_controls/`, `:id/move_tile/`, `create_from_template_json/`).
 * Hard delete is refused (405); soft delete is `update({id, body: {deleted: true}})`.
 */
import { z } from "zod";
import {
  type ClientContext,
  call,
  listOperations,
  type PageParams,
  type ProjectParams,
  pageSchema,
  parseBody,
  sharedAll,
  UserSchema,
} from "./common";
import { path } from "./transport";

/** Restriction levels: 21 everyone in the project can edit, 37 only collaborators can edit. */
export const RestrictionLevelSchema = z.literal([21, 37]);
export type RestrictionLevel = z.output<typeof RestrictionLevelSchema>;

/**
 * The insight of a dashboard tile: PostHog's `InsightSerializer` (posthog/api/insight.py). Typed here: what a
 * template of the dashboard needs (`name`, `derived_name`, `description`, `query`); the other fields (results,
 * caching, permissions…) pass through untyped. `query` is the insight's query node (e.g. `{kind:
 * "InsightVizNode", source: {…}}`), null for legacy insights that only have `filters`. `id` may be absent:
 * nothing the provider does needs it.
 */
export const TileInsightSchema = z.looseObject({
  id: z.number().int().nullish(),
  short_id: z.string().nullish(),
  name: z.string().nullish(),
  /** The name PostHog's UI derives from the query, when `name` is null. */
  derived_name: z.string().nullish(),
  description: z.string().nullish(),
  query: z.unknown().optional(),
  filters: z.record(z.string(), z.unknown()).nullish(),
  deleted: z.boolean().nullish(),
});
export type TileInsight = z.output<typeof TileInsightSchema>;

/**
 * The text card of a dashboard tile: PostHog's `TextSerializer` (`body` at most 4,000 characters, nullable).
 * `id` may be absent.
 */
export const TileTextSchema = z.looseObject({
  id: z.number().int().nullish(),
  body: z.string().nullish(),
});
export type TileText = z.output<typeof TileTextSchema>;

/**
 * The typed view of one tile of a dashboard detail, as PostHog's `DashboardTileSerializer`
 * (products/dashboards/backend/api/dashboard.py, was posthog/api/dashboards/dashboard.py) serves it, in the
 * order of its `sm` layout (y, then x). Exactly one of `insight`, `text`, `button_tile` (or, newest, `widget`)
 * is set. `layouts` maps a breakpoint ("sm", "xs") to `{x, y, w, h, …}` grid units; `color` is a name such as
 * "blue" or null; `order` is the tile's position in the answer. Soft-deleted tiles are not served (a `deleted`
 * key, if a server sends one, is kept). `id` may be absent (the serializer declares it `required=False`).
 *
 * The API reference defines tiles as free-form objects, so a dashboard answer keeps them as such
 * ({@link DashboardSchema}) and never fails on one: read a tile through this view with
 * `DashboardTileSchema.safeParse(tile)`, which fails for a tile of another shape (e.g. a button tile whose
 * `text` is its label).
 */
export const DashboardTileSchema = z.looseObject({
  id: z.number().int().nullish(),
  insight: TileInsightSchema.nullish(),
  text: TileTextSchema.nullish(),
  button_tile: z.record(z.string(), z.unknown()).nullish(),
  layouts: z.record(z.string(), z.unknown()).nullish(),
  color: z.string().nullish(),
  filters_overrides: z.record(z.string(), z.unknown()).nullish(),
  show_description: z.boolean().nullish(),
  transparent_background: z.boolean().nullish(),
  order: z.number().int().nullish(),
  deleted: z.boolean().nullish(),
});
export type DashboardTile = z.output<typeof DashboardTileSchema>;

/**
 * A free-form tile as a dashboard answer carries it (the API reference: "array of objects with free-form
 * keys"): any object passes, unchanged. {@link DashboardTileSchema} gives the typed view of PostHog's tiles.
 */
export const FreeFormTileSchema = z.record(z.string(), z.unknown());
export type FreeFormTile = z.output<typeof FreeFormTileSchema>;

/**
 * A dashboard. List items lack `filters`, `variables` and `tiles`. `tiles` are free-form objects: a tile of any
 * shape (without `id`, a button tile, a kind of tile newer than this client) never fails the answer.
 */
export const DashboardSchema = z.looseObject({
  id: z.number().int(),
  name: z.string().nullish(),
  description: z.string().nullish(),
  pinned: z.boolean().nullish(),
  created_at: z.string().nullish(),
  created_by: UserSchema.nullish(),
  is_shared: z.boolean().nullish(),
  deleted: z.boolean().nullish(),
  creation_mode: z.string().nullish(),
  filters: z.record(z.string(), z.unknown()).nullish(),
  variables: z.record(z.string(), z.unknown()).nullish(),
  tags: z.array(z.unknown()).nullish(),
  tiles: z.array(FreeFormTileSchema).nullish(),
  restriction_level: z.number().int().nullish(),
  effective_restriction_level: z.number().int().nullish(),
  effective_privilege_level: z.number().int().nullish(),
  user_access_level: z.string().nullish(),
});
export type Dashboard = z.output<typeof DashboardSchema>;

/** Create/update body. `use_template` and `use_dashboard` cannot be combined. */
export const DashboardBodySchema = z
  .looseObject({
    name: z.string().max(400).nullish(),
    description: z.string().optional(),
    pinned: z.boolean().optional(),
    deleted: z.boolean().optional(),
    use_template: z.string().optional(),
    use_dashboard: z.number().int().optional(),
    delete_insights: z.boolean().optional(),
    tags: z.array(z.string()).optional(),
    restriction_level: RestrictionLevelSchema.optional(),
  })
  .refine((b) => b.use_template === undefined || b.use_dashboard === undefined, {
    message: "use_dashboard and use_template cannot be used together",
    path: ["use_dashboard"],
  });
export type DashboardBody = z.input<typeof DashboardBodySchema>;

/**
 * Move-tile body. The real service reads `{"tile": {"id"}, "toDashboard"}`; the seed lists the dashboard
 * fields. Both pass through.
 */
export const MoveTileBodySchema = z.looseObject({
  tile: z.looseObject({ id: z.number().int() }).optional(),
  toDashboard: z.number().int().optional(),
});
export type MoveTileBody = z.input<typeof MoveTileBodySchema>;

/** Create-from-template body: the real service wants `{"template": {template_name, dashboard_description, dashboard_filters, tiles}}`. */
export const TemplateJsonBodySchema = z.looseObject({
  template: z.record(z.string(), z.unknown()).optional(),
  creation_context: z.string().optional(),
});
export type TemplateJsonBody = z.input<typeof TemplateJsonBodySchema>;

/**
 * Access-control views: the seed answers with a dashboard, the real service with
 * `{access_controls, available_access_levels, default_access_level, user_access_level, user_can_edit_access_levels}`.
 */
export const AccessControlsSchema = z.looseObject({
  id: z.number().int().optional(),
  access_controls: z.array(z.record(z.string(), z.unknown())).optional(),
  available_access_levels: z.array(z.string()).optional(),
  default_access_level: z.string().nullish(),
  user_access_level: z.string().nullish(),
  user_can_edit_access_levels: z.boolean().nullish(),
});
export type AccessControls = z.output<typeof AccessControlsSchema>;

/** Move-tile answer: "200, no body" in the seed, the source dashboard in the real service. */
export const OptionalDashboardSchema = z.union([z.undefined(), DashboardSchema]);

export interface DashboardIdParams extends ProjectParams {
  /** Dashboard id (integer). */
  id: number;
}

/** The page wrapper of the list (made once: see `pageSchema`). */
const DashboardPageSchema = pageSchema(DashboardSchema);

const listPath = (ctx: ClientContext, p: ProjectParams | undefined) =>
  path`/api/projects/${ctx.project(p)}/dashboards/`;
const itemPath = (ctx: ClientContext, p: DashboardIdParams) =>
  path`/api/projects/${ctx.project(p)}/dashboards/${p.id}/`;

/** Operations on dashboards. */
export function dashboards(ctx: ClientContext) {
  return {
    /** GET `/api/projects/:project_id/dashboards/` (dashboard:read): `list` (one page), `iterate`, `all` (list subset). */
    ...listOperations(ctx, (p?: ProjectParams & PageParams) => listPath(ctx, p), DashboardPageSchema),
    /**
     * The dashboard with this id as the project's list shows it (the list subset: no `tiles`, `filters`,
     * `variables`), or undefined when the list does not show it: soft-deleted, unlisted, or moved between two
     * page reads by a change made meanwhile (GET it to tell). Served from a list read shared by concurrent and
     * recent `find()` calls (see `coalescing.findCacheMs`): N finds in one project cost ⌈count/pageSize⌉ requests.
     */
    find: async (p: DashboardIdParams): Promise<Dashboard | undefined> => {
      const items = await sharedAll(ctx, listPath(ctx, p), DashboardPageSchema);
      return items.find((d) => d.id === p.id);
    },
    /** POST `…/dashboards/` (dashboard:write) → 201 dashboard. */
    create: async (p: ProjectParams & { body: DashboardBody }) =>
      call(
        ctx,
        {
          method: "POST",
          path: listPath(ctx, p),
          body: parseBody(DashboardBodySchema, p.body, "body"),
          signal: p.signal,
        },
        DashboardSchema,
      ),
    /** GET `…/dashboards/:id/` (dashboard:read). Soft-deleted dashboards → NotFoundError. */
    retrieve: async (p: DashboardIdParams) =>
      call(ctx, { method: "GET", path: itemPath(ctx, p), signal: p.signal }, DashboardSchema),
    /** PATCH `…/dashboards/:id/` (dashboard:write) → dashboard. `{deleted: true}` soft-deletes, `false` restores. */
    update: async (p: DashboardIdParams & { body: DashboardBody }) =>
      call(
        ctx,
        {
          method: "PATCH",
          path: itemPath(ctx, p),
          body: parseBody(DashboardBodySchema, p.body, "body"),
          signal: p.signal,
        },
        DashboardSchema,
      ),
    /**
     * DELETE `…/dashboards/:id/`: the API refuses hard deletes.
     * @throws MethodNotAllowedError always (use `update({id, body: {deleted: true}})`).
     */
    delete: async (p: DashboardIdParams): Promise<void> => {
      await call(ctx, { method: "DELETE", path: itemPath(ctx, p), signal: p.signal }, z.unknown());
    },
    /** GET `…/dashboards/:id/access_controls/`. */
    accessControls: async (p: DashboardIdParams) =>
      call(
        ctx,
        { method: "GET", path: `${itemPath(ctx, p)}access_controls/`, signal: p.signal },
        AccessControlsSchema,
      ),
    /** GET `…/dashboards/:id/global_access_controls/`. */
    globalAccessControls: async (p: DashboardIdParams) =>
      call(
        ctx,
        { method: "GET", path: `${itemPath(ctx, p)}global_access_controls/`, signal: p.signal },
        AccessControlsSchema,
      ),
    /** PATCH `…/dashboards/:id/move_tile/` → the source dashboard (real) or undefined (seed). */
    moveTile: async (p: DashboardIdParams & { body: MoveTileBody }) =>
      call(
        ctx,
        {
          method: "PATCH",
          path: `${itemPath(ctx, p)}move_tile/`,
          body: parseBody(MoveTileBodySchema, p.body, "body"),
          signal: p.signal,
        },
        OptionalDashboardSchema,
      ),
    /** POST `…/dashboards/create_from_template_json/` → the new dashboard, or undefined if the server sent none. */
    createFromTemplateJson: async (p: ProjectParams & { body: TemplateJsonBody }) =>
      call(
        ctx,
        {
          method: "POST",
          path: `${listPath(ctx, p)}create_from_template_json/`,
          body: parseBody(TemplateJsonBodySchema, p.body, "body"),
          signal: p.signal,
        },
        OptionalDashboardSchema,
      ),
  };
}
