import { randomUUID } from "node:crypto";
import { forbidden, invalid, notFound } from "../errors";
import { type Ctx, hasKey, type Operation, paginate, parseBody } from "../runtime";
import {
  CollaboratorCreateSchema,
  CreateFromTemplateSchema,
  DashboardWriteSchema,
  MoveTileSchema,
  SharingUpdateSchema,
} from "../schemas";
import {
  collaboratorJson,
  type DashboardRecord,
  type InsightRecord,
  type SharingRecord,
  type TextRecord,
  type TileRecord,
  tokenUrlsafe,
  userJson,
  type World,
} from "../world";
import {
  ADMIN,
  created,
  DASH,
  EVERYONE_CAN_EDIT,
  intParam,
  noContent,
  ONLY_COLLABORATORS,
  ok,
} from "./common";

/** Project-scope operations: dashboards, tiles, collaborators, sharing. */

// ---------------------------------------------------------------------------------------------
// Dashboards

const TEMPLATES: Record<string, string[]> = {
  DEFAULT_APP: [
    "Daily active users (DAUs)",
    "Weekly active users (WAUs)",
    "Retention",
    "Growth accounting",
    "Referring domain (last 14 days)",
    "Pageview funnel, by browser",
  ],
  WEBSITE_TRAFFIC: [
    "Website unique users (last 14 days)",
    "Page views (last 14 days)",
    "Top pages",
    "Top referrers",
    "Device types",
  ],
};

const isProjectAdmin = (ctx: Ctx): boolean => ctx.membership.level >= ADMIN;
const effectiveRestriction = (ctx: Ctx, d: DashboardRecord): number =>
  ctx.emu.paidFeatures ? d.restriction_level : EVERYONE_CAN_EDIT;
const canRestrict = (ctx: Ctx, d: DashboardRecord): boolean =>
  d.created_by_id === ctx.user.id || isProjectAdmin(ctx);
const privilege = (ctx: Ctx, d: DashboardRecord): number => {
  if (effectiveRestriction(ctx, d) === EVERYONE_CAN_EDIT || canRestrict(ctx, d)) return ONLY_COLLABORATORS;
  return (
    ctx.world.collaborators.find((c) => c.dashboard_id === d.id && c.user_id === ctx.user.id)?.level ??
    EVERYONE_CAN_EDIT
  );
};
const canEdit = (ctx: Ctx, d: DashboardRecord): boolean =>
  effectiveRestriction(ctx, d) < ONLY_COLLABORATORS || privilege(ctx, d) >= ONLY_COLLABORATORS;

const isShared = (world: World, d: DashboardRecord): boolean =>
  world.sharing.find((s) => s.dashboard_id === d.id)?.enabled ?? false;

/**
 * Tile order of the dashboard detail: by the `sm` layout's y, then x, a missing coordinate counting as 100
 * (PostHog: posthog/models/dashboard_tile.py `DashboardTile.sort_tiles_by_layout`, called from
 * posthog/api/dashboards/dashboard.py `DashboardSerializer.get_tiles`); ties by tile id.
 */
const layoutKey = (t: TileRecord): [number, number] => {
  const sm = t.layouts.sm as { x?: unknown; y?: unknown } | undefined;
  return [typeof sm?.y === "number" ? sm.y : 100, typeof sm?.x === "number" ? sm.x : 100];
};

/** `DashboardTileBasicSerializer` (posthog/api/insight.py): the tiles an insight or a text card sits on. */
const tileRefsJson = (tiles: TileRecord[]) =>
  tiles.map((t) => ({ id: t.id, dashboard_id: t.dashboard_id, deleted: t.deleted }));

const userById = (world: World, id: number | null) => {
  const user = id === null ? undefined : world.users.find((u) => u.id === id);
  return user ? userJson(user) : null;
};

/**
 * An insight as `InsightSerializer` (posthog/api/insight.py, `Meta.fields`) serves it inside a tile, without
 * results: the emulator computes none, so `result`, `hasMore`, `columns`, `last_refresh`, `hogql`, `types` and
 * the like are null and `is_cached` false.
 */
const insightJson = (world: World, insight: InsightRecord) => {
  const tiles = world.tiles.filter((t) => t.insight_id === insight.id);
  const project = world.projects.find((p) => p.id === insight.team_id);
  return {
    id: insight.id,
    short_id: insight.short_id,
    name: insight.name,
    derived_name: insight.derived_name,
    filters: insight.filters,
    query: insight.query,
    order: null,
    deleted: insight.deleted,
    dashboards: [...new Set(tiles.filter((t) => !t.deleted).map((t) => t.dashboard_id))],
    dashboard_tiles: tileRefsJson(tiles),
    last_refresh: null,
    cache_target_age: null,
    next_allowed_client_refresh: null,
    result: null,
    hasMore: null,
    columns: null,
    created_at: insight.created_at,
    created_by: userById(world, insight.created_by_id),
    description: insight.description,
    updated_at: insight.last_modified_at ?? insight.created_at,
    tags: [],
    favorited: false,
    saved: false,
    last_modified_at: insight.last_modified_at,
    last_modified_by: userById(world, insight.created_by_id),
    is_sample: insight.is_sample,
    effective_restriction_level: EVERYONE_CAN_EDIT,
    effective_privilege_level: ONLY_COLLABORATORS,
    user_access_level: "editor",
    timezone: typeof project?.settings.timezone === "string" ? project.settings.timezone : "UTC",
    is_cached: false,
    query_status: null,
    hogql: null,
    types: null,
    resolved_date_range: null,
    alerts: [],
    last_viewed_at: null,
  };
};

/** A text card as `TextSerializer` (posthog/api/dashboards/dashboard.py, `fields = "__all__"`) serves it. */
const textJson = (world: World, tile: TileRecord, text: TextRecord, teamId: number) => ({
  id: text.id,
  body: text.body,
  created_by: userById(world, text.created_by_id),
  last_modified_by: userById(world, text.last_modified_by_id),
  last_modified_at: text.last_modified_at,
  team: teamId,
  dashboard_tiles: tileRefsJson([tile]),
});

/**
 * The tiles of a dashboard detail as `DashboardSerializer.get_tiles` serves them (posthog/api/dashboards/dashboard.py
 * `DashboardTileSerializer`, ordered as {@link layoutKey}): soft-deleted tiles and tiles whose insight is
 * soft-deleted are left out (posthog/models/dashboard_tile.py `DashboardTileManager` and
 * `DashboardTile.dashboard_queryset`). Each tile: `id, insight|null, text|null, button_tile (null here),
 * layouts, color, filters_overrides, show_description, transparent_background, order, last_refresh, is_cached`.
 */
const tilesJson = (world: World, d: DashboardRecord) =>
  world.tiles
    .filter((t) => t.dashboard_id === d.id && !t.deleted)
    .map((t) => ({
      tile: t,
      insight: t.insight_id === null ? undefined : world.insights.find((i) => i.id === t.insight_id),
    }))
    .filter(({ insight }) => !insight?.deleted)
    .sort((a, b) => {
      const [ay, ax] = layoutKey(a.tile);
      const [by, bx] = layoutKey(b.tile);
      return ay - by || ax - bx || a.tile.id - b.tile.id;
    })
    .map(({ tile: t, insight }, order) => ({
      id: t.id,
      insight: insight ? insightJson(world, insight) : null,
      text: t.text ? textJson(world, t, t.text, d.team_id) : null,
      button_tile: null,
      layouts: t.layouts,
      color: t.color,
      filters_overrides: t.filters_overrides,
      show_description: t.show_description,
      transparent_background: t.transparent_background,
      order,
      last_refresh: null,
      is_cached: false,
    }));

/** The dashboard list subset of seed §2.7. */
const dashboardBasicJson = (ctx: Ctx, d: DashboardRecord) => {
  const creator = ctx.world.users.find((u) => u.id === d.created_by_id);
  const editable = canEdit(ctx, d);
  return {
    id: d.id,
    name: d.name,
    description: d.description,
    pinned: d.pinned,
    created_at: d.created_at,
    created_by: creator ? userJson(creator) : null,
    is_shared: isShared(ctx.world, d),
    deleted: d.deleted,
    creation_mode: d.creation_mode,
    tags: d.tags,
    restriction_level: d.restriction_level,
    effective_restriction_level: effectiveRestriction(ctx, d),
    effective_privilege_level: privilege(ctx, d),
    user_access_level: editable ? "editor" : "viewer",
  };
};

/** The full dashboard of seed §2.7 (write-only fields omitted). */
const dashboardJson = (ctx: Ctx, d: DashboardRecord) => {
  const basic = dashboardBasicJson(ctx, d);
  return {
    id: basic.id,
    name: basic.name,
    description: basic.description,
    pinned: basic.pinned,
    created_at: basic.created_at,
    created_by: basic.created_by,
    is_shared: basic.is_shared,
    deleted: basic.deleted,
    creation_mode: basic.creation_mode,
    filters: d.filters,
    variables: d.variables,
    tags: basic.tags,
    tiles: tilesJson(ctx.world, d),
    restriction_level: basic.restriction_level,
    effective_restriction_level: basic.effective_restriction_level,
    effective_privilege_level: basic.effective_privilege_level,
    user_access_level: basic.user_access_level,
  };
};

/** A non-deleted dashboard of the route's project (`includeDeleted` for an undelete PATCH). */
const findDashboard = (ctx: Ctx, raw: string | undefined, includeDeleted = false, detail = "Not found.") => {
  const id = intParam(raw);
  const project = ctx.project;
  const found = ctx.world.dashboards.find(
    (d) => d.id === id && d.team_id === project?.id && (includeDeleted || !d.deleted),
  );
  if (!found) throw notFound(detail);
  return found;
};

const requireEdit = (
  ctx: Ctx,
  d: DashboardRecord,
  detail = "You don't have edit permissions for this dashboard.",
) => {
  if (!canEdit(ctx, d)) throw forbidden(detail);
};

/** A new insight of the route's project, as a template tile makes it (`is_sample`, by the acting user). */
const newInsight = (
  ctx: Ctx,
  name: string | null,
  description: string | null = "",
  query: unknown = null,
  isSample = false,
): InsightRecord => {
  const insight: InsightRecord = {
    id: ctx.world.nextIds.insight++,
    short_id: tokenUrlsafe(6).slice(0, 8),
    team_id: ctx.project?.id ?? 0,
    name,
    description,
    query,
    deleted: false,
    derived_name: null,
    filters: {},
    created_at: ctx.now,
    created_by_id: ctx.user.id,
    last_modified_at: ctx.now,
    is_sample: isSample,
  };
  ctx.world.insights.push(insight);
  return insight;
};

/** A new text card by the acting user. */
const newText = (ctx: Ctx, body: string | null): TextRecord => ({
  id: ctx.world.nextIds.text++,
  body,
  created_by_id: ctx.user.id,
  last_modified_by_id: null,
  last_modified_at: ctx.now,
});

type NewTile = Pick<TileRecord, "dashboard_id" | "insight_id" | "text" | "layouts" | "color"> &
  Partial<Pick<TileRecord, "filters_overrides" | "show_description" | "transparent_background">>;

const addTile = (ctx: Ctx, tile: NewTile): TileRecord => {
  const record: TileRecord = {
    filters_overrides: {},
    show_description: null,
    transparent_background: null,
    ...tile,
    id: ctx.world.nextIds.tile++,
    deleted: false,
  };
  ctx.world.tiles.push(record);
  return record;
};

const gridLayout = (index: number) => ({
  sm: { x: (index % 2) * 6, y: Math.floor(index / 2) * 5, w: 6, h: 5 },
});

const newDashboard = (ctx: Ctx, fields: Partial<DashboardRecord>): DashboardRecord => {
  const dashboard: DashboardRecord = {
    id: ctx.world.nextIds.dashboard++,
    team_id: ctx.project?.id ?? 0,
    name: "",
    description: "",
    pinned: false,
    created_at: ctx.now,
    created_by_id: ctx.user.id,
    deleted: false,
    creation_mode: "default",
    filters: {},
    variables: {},
    tags: [],
    restriction_level: EVERYONE_CAN_EDIT,
    ...fields,
  };
  ctx.world.dashboards.push(dashboard);
  return dashboard;
};

/** Soft delete (with optional `delete_insights`) or restore, as the real service does it. */
function setDeleted(ctx: Ctx, d: DashboardRecord, deleted: boolean, deleteInsights: boolean): void {
  const tiles = ctx.world.tiles.filter((t) => t.dashboard_id === d.id);
  if (deleted && !d.deleted) {
    if (deleteInsights) {
      for (const tile of tiles) {
        if (tile.deleted || tile.insight_id === null) continue;
        const uses = ctx.world.tiles.filter((t) => t.insight_id === tile.insight_id && !t.deleted).length;
        const insight = ctx.world.insights.find((i) => i.id === tile.insight_id);
        if (insight && uses === 1) insight.deleted = true;
      }
    }
    for (const tile of tiles) tile.deleted = true;
    for (const project of ctx.world.projects) {
      if (project.settings.primary_dashboard === d.id) project.settings.primary_dashboard = null;
    }
  } else if (!deleted && d.deleted) {
    for (const tile of tiles) {
      tile.deleted = false;
      const insight = ctx.world.insights.find((i) => i.id === tile.insight_id);
      if (insight) insight.deleted = false;
    }
  }
  d.deleted = deleted;
}

/**
 * PostHog's list order within pinned and unpinned dashboards: `order_by("-pinned", "name")`
 * (products/dashboards/backend/api/dashboard.py), in PostgreSQL, where NULL sorts after every name in ascending
 * order; names compare as strings.
 */
const byNameNullsLast = (a: string | null, b: string | null): number =>
  a === null || b === null ? Number(a === null) - Number(b === null) : a.localeCompare(b);

const dashboardOps: Operation[] = [
  {
    method: "GET",
    url: `${DASH}/`,
    scope: "dashboard:read",
    parent: "project",
    handle: (ctx) => {
      const items = ctx.world.dashboards
        .filter((d) => d.team_id === ctx.project?.id && !d.deleted && d.creation_mode !== "unlisted")
        .sort((a, b) => Number(b.pinned) - Number(a.pinned) || byNameNullsLast(a.name, b.name))
        .map((d) => dashboardBasicJson(ctx, d));
      return ok(paginate(ctx.request, items));
    },
  },
  {
    method: "POST",
    url: `${DASH}/`,
    scope: "dashboard:write",
    parent: "project",
    handle: (ctx) => {
      const body = parseBody(DashboardWriteSchema, ctx.body);
      if (body.use_template !== undefined && body.use_dashboard !== undefined) {
        throw invalid("`use_dashboard` and `use_template` cannot be used together");
      }
      const template = body.use_template === undefined ? undefined : TEMPLATES[body.use_template];
      if (body.use_template !== undefined && body.use_template !== "" && !template) {
        throw invalid(`Invalid template provided: ${body.use_template}`, "use_template");
      }
      const source =
        body.use_dashboard === undefined
          ? undefined
          : ctx.world.dashboards.find(
              (d) => d.id === body.use_dashboard && d.team_id === ctx.project?.id && !d.deleted,
            );
      if (body.use_dashboard !== undefined && !source)
        throw invalid("Invalid value provided", "use_dashboard");
      const dashboard = newDashboard(ctx, {
        name: body.name === undefined ? "" : body.name,
        description: body.description ?? "",
        pinned: body.pinned ?? false,
        // Tags need the tagging feature; without it they are silently dropped, as in the real service.
        tags: ctx.emu.paidFeatures ? (body.tags ?? []) : [],
        restriction_level: body.restriction_level ?? EVERYONE_CAN_EDIT,
        filters: body.filters ?? source?.filters ?? {},
        variables: body.variables ?? source?.variables ?? {},
        creation_mode: template ? "template" : source ? "duplicate" : "default",
      });
      template?.forEach((name, index) => {
        const insight = newInsight(ctx, name, "", null, true);
        addTile(ctx, {
          dashboard_id: dashboard.id,
          insight_id: insight.id,
          text: null,
          layouts: gridLayout(index),
          color: null,
        });
      });
      if (source) {
        for (const tile of ctx.world.tiles.filter((t) => t.dashboard_id === source.id && !t.deleted)) {
          addTile(ctx, {
            dashboard_id: dashboard.id,
            insight_id: tile.insight_id,
            text: tile.text ? newText(ctx, tile.text.body) : null,
            layouts: structuredClone(tile.layouts),
            color: tile.color,
            filters_overrides: structuredClone(tile.filters_overrides),
            show_description: tile.show_description,
            transparent_background: tile.transparent_background,
          });
        }
      }
      if (body.deleted) setDeleted(ctx, dashboard, true, body.delete_insights ?? false);
      return created(dashboardJson(ctx, dashboard));
    },
  },
  {
    method: "GET",
    url: `${DASH}/:id/`,
    scope: "dashboard:read",
    parent: "project",
    handle: (ctx) => ok(dashboardJson(ctx, findDashboard(ctx, ctx.params.id))),
  },
  {
    method: "PATCH",
    url: `${DASH}/:id/`,
    scope: "dashboard:write",
    parent: "project",
    handle: (ctx) => {
      const raw = ctx.body as Record<string, unknown> | undefined;
      const undelete = hasKey(raw, "deleted") && !raw?.deleted;
      const dashboard = findDashboard(ctx, ctx.params.id, undelete);
      requireEdit(ctx, dashboard);
      const body = parseBody(DashboardWriteSchema, ctx.body);
      if (body.restriction_level !== undefined && body.restriction_level !== dashboard.restriction_level) {
        if (!canRestrict(ctx, dashboard)) {
          throw forbidden(
            "Only the dashboard owner and project admins have the restriction rights required to change the dashboard's restriction level.",
          );
        }
      }
      const tiles = ctx.world.tiles.filter((t) => t.dashboard_id === dashboard.id);
      for (const [index, patch] of (body.tiles ?? []).entries()) {
        if (patch.id !== undefined && !tiles.some((t) => t.id === patch.id)) {
          throw invalid(`Tile ${patch.id} is not on this dashboard.`, `tiles__${index}__id`);
        }
        if (patch.id === undefined && !patch.text) {
          throw invalid("A new tile needs a text.", `tiles__${index}__text`);
        }
      }
      // Everything is valid: apply.
      if (body.name !== undefined) dashboard.name = body.name;
      if (body.description !== undefined) dashboard.description = body.description;
      if (body.pinned !== undefined) dashboard.pinned = body.pinned;
      if (body.tags !== undefined && ctx.emu.paidFeatures) dashboard.tags = body.tags;
      if (body.filters !== undefined) dashboard.filters = body.filters;
      if (body.variables !== undefined) dashboard.variables = body.variables;
      if (body.restriction_level !== undefined) dashboard.restriction_level = body.restriction_level;
      for (const patch of body.tiles ?? []) {
        const tile = tiles.find((t) => t.id === patch.id);
        if (!tile) {
          addTile(ctx, {
            dashboard_id: dashboard.id,
            insight_id: null,
            text: newText(ctx, patch.text?.body ?? ""),
            layouts: patch.layouts ?? {},
            color: patch.color ?? null,
          });
          continue;
        }
        if (patch.layouts !== undefined) tile.layouts = patch.layouts;
        if (patch.color !== undefined) tile.color = patch.color;
        if (patch.deleted !== undefined) tile.deleted = patch.deleted;
        if (patch.text && tile.text) {
          tile.text.body = patch.text.body;
          tile.text.last_modified_by_id = ctx.user.id;
          tile.text.last_modified_at = ctx.now;
        }
      }
      if (body.deleted !== undefined) setDeleted(ctx, dashboard, body.deleted, body.delete_insights ?? false);
      return ok(dashboardJson(ctx, dashboard));
    },
  },
  {
    method: "DELETE",
    url: `${DASH}/:id/`,
    scope: "dashboard:write",
    parent: "project",
    // Hard delete is refused with an empty 405 (soft delete is PATCH {"deleted": true}).
    handle: () => ({ status: 405 }),
  },
  {
    method: "GET",
    url: `${DASH}/:id/access_controls/`,
    scope: "access_control:read",
    parent: "project",
    handle: (ctx) => ok(dashboardJson(ctx, findDashboard(ctx, ctx.params.id))),
  },
  {
    method: "GET",
    url: `${DASH}/:id/global_access_controls/`,
    scope: "access_control:read",
    parent: "project",
    handle: (ctx) => ok(dashboardJson(ctx, findDashboard(ctx, ctx.params.id))),
  },
  {
    method: "PATCH",
    url: `${DASH}/:id/move_tile/`,
    scope: null,
    parent: "project",
    handle: (ctx) => {
      const source = findDashboard(ctx, ctx.params.id);
      requireEdit(ctx, source);
      const body = parseBody(MoveTileSchema, ctx.body);
      const tile = ctx.world.tiles.find(
        (t) => t.id === body.tile.id && t.dashboard_id === source.id && !t.deleted,
      );
      if (!tile) throw notFound();
      const target = findDashboard(ctx, String(body.toDashboard));
      requireEdit(ctx, target, "You don't have edit permissions for the destination dashboard.");
      tile.dashboard_id = target.id;
      // The seed: 200 with no body.
      return ok();
    },
  },
  {
    method: "POST",
    url: `${DASH}/create_from_template_json/`,
    scope: null,
    parent: "project",
    handle: (ctx) => {
      const { template } = parseBody(CreateFromTemplateSchema, ctx.body);
      // PostHog (posthog/api/dashboards/dashboard.py `create_from_template_json`, then
      // posthog/helpers/dashboard_templates.py `create_from_template`): the dashboard takes the template's name,
      // description and filters, tags only with the tagging feature; template `variables` are not applied.
      // `creation_mode` stays at the model default, "default": neither function sets it.
      const dashboard = newDashboard(ctx, {
        name: template.template_name,
        description: template.dashboard_description,
        filters: template.dashboard_filters,
        tags: ctx.emu.paidFeatures ? (template.tags ?? []) : [],
        creation_mode: "default",
      });
      // Each INSIGHT tile makes a new sample insight (name, description and query as given, null when absent),
      // each TEXT tile a new text card; both keep the tile's layouts and colour. Older versions spelled the type
      // in lowercase, so the comparison ignores case; other types are skipped (PostHog logs them).
      template.tiles.forEach((tile, index) => {
        const type = tile.type.toUpperCase();
        const layouts = tile.layouts ?? gridLayout(index);
        if (type === "INSIGHT") {
          const insight = newInsight(
            ctx,
            tile.name ?? null,
            tile.description ?? null,
            tile.query ?? null,
            true,
          );
          addTile(ctx, {
            dashboard_id: dashboard.id,
            insight_id: insight.id,
            text: null,
            layouts,
            color: tile.color ?? null,
          });
        } else if (type === "TEXT") {
          addTile(ctx, {
            dashboard_id: dashboard.id,
            insight_id: null,
            text: newText(ctx, tile.body ?? null),
            layouts,
            color: tile.color ?? null,
          });
        }
      });
      return ok(dashboardJson(ctx, dashboard));
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Collaborators and sharing

const COLLAB = `${DASH}/:id/collaborators`;
const dashboardOf = (ctx: Ctx) => findDashboard(ctx, ctx.params.id, false, "Dashboard not found.");

const collaboratorOps: Operation[] = [
  {
    method: "GET",
    url: `${COLLAB}/`,
    scope: "dashboard:read",
    parent: "project",
    handle: (ctx) => {
      const dashboard = dashboardOf(ctx);
      // Not paginated: a plain JSON array, without the creator.
      const items = ctx.world.collaborators
        .filter((c) => c.dashboard_id === dashboard.id && c.user_id !== dashboard.created_by_id)
        .map((c) => collaboratorJson(ctx.world, c));
      return ok(items);
    },
  },
  {
    method: "POST",
    url: `${COLLAB}/`,
    scope: "dashboard:write",
    parent: "project",
    handle: (ctx) => {
      const dashboard = dashboardOf(ctx);
      requireEdit(ctx, dashboard);
      const body = parseBody(CollaboratorCreateSchema, ctx.body);
      if (effectiveRestriction(ctx, dashboard) <= EVERYONE_CAN_EDIT) {
        throw invalid("Cannot add collaborators to a dashboard on the lowest restriction level.");
      }
      if (body.level !== ONLY_COLLABORATORS)
        throw invalid("Only edit access can be explicitly specified currently.");
      const user = ctx.world.users.find((u) => u.uuid === body.user_uuid.toLowerCase());
      if (!user) throw invalid("User does not exist.");
      const membership = ctx.world.memberships.find((m) => m.user_id === user.id);
      if (!membership) throw invalid("Cannot add collaborators that have no access to the project.");
      if (user.id === dashboard.created_by_id || membership.level >= ADMIN) {
        throw invalid(
          "Cannot add collaborators that already have inherent access (the dashboard owner or a project admins).",
        );
      }
      if (ctx.world.collaborators.some((c) => c.dashboard_id === dashboard.id && c.user_id === user.id)) {
        throw invalid("User already is a collaborator.");
      }
      const collaborator = {
        id: randomUUID(),
        dashboard_id: dashboard.id,
        user_id: user.id,
        level: body.level,
        added_at: ctx.now,
        updated_at: ctx.now,
      };
      ctx.world.collaborators.push(collaborator);
      return created(collaboratorJson(ctx.world, collaborator));
    },
  },
  {
    method: "DELETE",
    url: `${COLLAB}/:user__uuid/`,
    scope: "dashboard:write",
    parent: "project",
    handle: (ctx) => {
      const dashboard = dashboardOf(ctx);
      requireEdit(ctx, dashboard);
      const uuid = ctx.params.user__uuid?.toLowerCase();
      const user = ctx.world.users.find((u) => u.uuid === uuid);
      const collaborator =
        user && ctx.world.collaborators.find((c) => c.dashboard_id === dashboard.id && c.user_id === user.id);
      if (!collaborator) throw notFound();
      if (effectiveRestriction(ctx, dashboard) <= EVERYONE_CAN_EDIT) {
        throw invalid("Cannot remove collaborators from a dashboard on the lowest restriction level.");
      }
      ctx.world.collaborators = ctx.world.collaborators.filter((c) => c !== collaborator);
      return noContent;
    },
  },
];

/**
 * A sharing configuration as PostHog's `SharingConfigurationSerializer` (posthog/api/sharing.py) serves it:
 * `settings` (none stored here), `password_required` (false: passwords need the advanced-permissions feature) and
 * `share_passwords` (none) beside the reference's `created_at`, `enabled`, `access_token`.
 */
const sharingJson = (c: Pick<SharingRecord, "enabled" | "access_token"> & { created_at: string | null }) => ({
  created_at: c.created_at,
  enabled: c.enabled,
  access_token: c.access_token,
  settings: null,
  password_required: false,
  share_passwords: [],
});

const sharingOps: Operation[] = [
  {
    method: "GET",
    url: `${DASH}/:id/sharing/`,
    scope: "sharing_configuration:read",
    parent: "project",
    handle: (ctx) => {
      const dashboard = dashboardOf(ctx);
      const config = ctx.world.sharing.find((s) => s.dashboard_id === dashboard.id);
      // Get-or-build: nothing is stored before the first PATCH, so each GET builds a fresh token.
      return ok(sharingJson(config ?? { created_at: null, enabled: false, access_token: tokenUrlsafe(22) }));
    },
  },
  {
    method: "PATCH",
    url: `${DASH}/:id/sharing/`,
    scope: "sharing_configuration:write",
    parent: "project",
    handle: (ctx) => {
      const dashboard = dashboardOf(ctx);
      requireEdit(ctx, dashboard);
      const body = parseBody(SharingUpdateSchema, ctx.body);
      if (body.enabled && !ctx.emu.paidFeatures)
        throw forbidden("Public sharing is disabled for this organization.");
      let config = ctx.world.sharing.find((s) => s.dashboard_id === dashboard.id);
      if (!config) {
        config = {
          dashboard_id: dashboard.id,
          created_at: ctx.now,
          enabled: false,
          access_token: tokenUrlsafe(22),
        };
        ctx.world.sharing.push(config);
      }
      if (body.enabled !== undefined) config.enabled = body.enabled;
      return ok(sharingJson(config));
    },
  },
];

export const dashboardOperations: Operation[] = [...dashboardOps, ...collaboratorOps, ...sharingOps];
