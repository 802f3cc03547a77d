/**
 * Template JSON of a live dashboard: what `Dashboard.templateJson` and PostHog's
 * `POST /api/projects/:project_id/dashboards/create_from_template_json/` accept, built from the dashboard's
 * detail answer (`client.dashboards.retrieve`). Pure: no HTTP request, no clock, no randomness.
 *
 * Shapes read in PostHog's source (PostHog/posthog):
 * - posthog/api/dashboards/dashboard.py: `DashboardSerializer.get_tiles` serves the tiles (soft-deleted ones and
 *   those of soft-deleted insights left out, ordered by the `sm` layout: y, then x, a missing one as 100) with
 *   `DashboardTileSerializer` (`insight`, `text`, `button_tile`, `layouts`, `color`, …).
 * - posthog/api/insight.py `InsightSerializer`: the insight's `name`, `derived_name`, `description`, `query`.
 * - posthog/helpers/dashboard_templates.py `create_from_template`: what a template makes: the dashboard takes
 *   `template_name` (when it has no name), `dashboard_description`, `dashboard_filters`, `tags` (tagging feature
 *   only); each `{"type": "INSIGHT"}` tile a new insight from `name`, `description`, `query`, `layouts`, `color`;
 *   each `{"type": "TEXT"}` tile a text card from `body`, `layouts`, `color`; other types are skipped.
 * - posthog/api/dashboards/dashboard_template_schema.json: `template_name`, `dashboard_description`,
 *   `dashboard_filters` and at least one tile are required.
 * - frontend/src/scenes/dashboard/dashboardUtils.ts `dashboardToSaveableTemplate`: PostHog's own "save as
 *   template" export, which this follows (insight description `|| ""`, layouts and colour as served).
 */
import { type Dashboard, type DashboardTile, DashboardTileSchema } from "../client";
import { firstIssue } from "../client/common";

/** An insight tile of template JSON. */
export interface TemplateInsightTile {
  type: "INSIGHT";
  /** The insight's name; its `derived_name` when it has none; absent when it has neither. */
  name?: string;
  /** The insight's description ("" when it has none, as PostHog's own export writes it). */
  description: string;
  /** The insight's query node, e.g. `{kind: "InsightVizNode", source: {…}}`; null for a legacy insight. */
  query: unknown;
  /** Grid position per breakpoint ("sm", "xs"): `{x, y, w, h, …}` in grid units. */
  layouts: Record<string, unknown>;
  /** Colour name ("blue", "green", …) or null. */
  color: string | null;
}

/** A text-card tile of template JSON. */
export interface TemplateTextTile {
  type: "TEXT";
  /** Markdown text (at most 4,000 characters); absent when the card has no body. */
  body?: string;
  layouts: Record<string, unknown>;
  color: string | null;
}

export type TemplateTile = TemplateInsightTile | TemplateTextTile;

/**
 * Template JSON of one dashboard, keys in this order. `variables` (template placeholders of type "event") is
 * never written: a dashboard has none to export (its own `variables` are HogQL variable overrides, which
 * `create_from_template` does not apply).
 */
export interface DashboardTemplateJson {
  template_name: string;
  dashboard_description: string;
  dashboard_filters: Record<string, unknown>;
  /** Sorted (a set: PostHog may answer them in any order). */
  tags: string[];
  /** In layout order (sm y, then x). */
  tiles: TemplateTile[];
}

/** Something of the dashboard the template cannot carry: `what` (e.g. "tile 12"), `why` it was left out. */
export interface TemplateOmission {
  what: string;
  why: string;
}

/** The template and what was left out of it (for the export's summary). */
export interface DashboardTemplateResult {
  template: DashboardTemplateJson;
  omitted: TemplateOmission[];
}

type Json = unknown;

/** `value` with every object's keys in sorted order (code-unit order, not locale), arrays kept in order. */
export function canonicalJson(value: Json): Json {
  if (Array.isArray(value)) return value.map(canonicalJson);
  if (value !== null && typeof value === "object") {
    const out: Record<string, Json> = {};
    for (const key of Object.keys(value).sort()) {
      out[key] = canonicalJson((value as Record<string, Json>)[key]);
    }
    return out;
  }
  return value;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** PostHog's tile order (posthog/models/dashboard_tile.py `sort_tiles_by_layout`): sm y, then x, missing as 100. */
const layoutPosition = (tile: DashboardTile): [number, number] => {
  const sm = isRecord(tile.layouts) && isRecord(tile.layouts.sm) ? tile.layouts.sm : {};
  return [typeof sm.y === "number" ? sm.y : 100, typeof sm.x === "number" ? sm.x : 100];
};

const layoutsOf = (tile: DashboardTile): Record<string, unknown> =>
  isRecord(tile.layouts) ? (canonicalJson(tile.layouts) as Record<string, unknown>) : {};

/**
 * Template JSON of `dashboard`, a dashboard detail as `client.dashboards.retrieve` parses it (it must carry
 * `tiles`; list items do not). Tiles come in layout order; soft-deleted tiles (`deleted: true`), tiles of
 * soft-deleted insights, button tiles, tiles that failed to serialize (`error`), tiles with neither insight nor
 * text and tiles not in the shape PostHog serves (tiles are free-form objects in the API reference: see
 * {@link DashboardTileSchema}) are left out and listed in `omitted`, as are non-empty dashboard `variables`. A tile
 * without `id` is named by its position (`tile #2 (no id)`) and templated like any other. Every object's keys are
 * sorted (nested `query`, `layouts` and `dashboard_filters` included), so the same dashboard always gives the
 * same text (see {@link dashboardTemplateText}), and a template made from the dashboard that
 * `create_from_template_json` made from a template equals that template.
 *
 * A dashboard without any exportable tile gives `tiles: []`, which `create_from_template_json` refuses (it wants
 * at least one tile): create such a dashboard plainly instead.
 * @throws Error when `dashboard.tiles` is missing (a list item instead of a detail).
 */
export function dashboardTemplate(dashboard: Dashboard): DashboardTemplateResult {
  if (!Array.isArray(dashboard.tiles)) {
    throw new Error(
      `Dashboard ${dashboard.id} has no tiles in this answer: pass the dashboard detail ` +
        "(client.dashboards.retrieve), not a list item.",
    );
  }
  const omitted: TemplateOmission[] = [];
  const kept: { tile: DashboardTile; index: number }[] = [];
  dashboard.tiles.forEach((raw, index) => {
    const what = typeof raw.id === "number" ? `tile ${raw.id}` : `tile #${index + 1} (no id)`;
    const view = DashboardTileSchema.safeParse(raw);
    if (raw.deleted === true) omitted.push({ what, why: "soft-deleted" });
    else if (raw.error !== undefined && raw.error !== null)
      omitted.push({ what, why: "PostHog could not serialize it (error)" });
    else if (raw.button_tile !== undefined && raw.button_tile !== null)
      omitted.push({ what, why: "a button tile: template JSON carries only INSIGHT and TEXT tiles" });
    else if (!view.success)
      omitted.push({ what, why: `not a tile in PostHog's shape (${firstIssue(view.error, "(tile)")})` });
    else if (view.data.insight) {
      if (view.data.insight.deleted === true) omitted.push({ what, why: "its insight is soft-deleted" });
      else kept.push({ tile: view.data, index });
    } else if (view.data.text) kept.push({ tile: view.data, index });
    else omitted.push({ what, why: "neither an insight nor a text card" });
  });
  kept.sort((a, b) => {
    const [ay, ax] = layoutPosition(a.tile);
    const [by, bx] = layoutPosition(b.tile);
    return ay - by || ax - bx || a.index - b.index;
  });
  const tiles = kept.map(({ tile }): TemplateTile => {
    const color = typeof tile.color === "string" ? tile.color : null;
    const insight = tile.insight;
    if (insight) {
      const name = insight.name ?? insight.derived_name ?? undefined;
      return {
        type: "INSIGHT",
        ...(name === undefined ? {} : { name }),
        description: insight.description ?? "",
        query: canonicalJson(insight.query ?? null),
        layouts: layoutsOf(tile),
        color,
      };
    }
    const body = tile.text?.body;
    return {
      type: "TEXT",
      ...(typeof body === "string" ? { body } : {}),
      layouts: layoutsOf(tile),
      color,
    };
  });
  if (isRecord(dashboard.variables) && Object.keys(dashboard.variables).length > 0) {
    omitted.push({
      what: "dashboard variables",
      why: "template JSON has no place for a dashboard's HogQL variable overrides (create_from_template ignores them)",
    });
  }
  const tags = (dashboard.tags ?? []).filter((t): t is string => typeof t === "string").sort();
  return {
    template: {
      template_name: dashboard.name ?? "",
      dashboard_description: dashboard.description ?? "",
      dashboard_filters: isRecord(dashboard.filters)
        ? (canonicalJson(dashboard.filters) as Record<string, unknown>)
        : {},
      tags,
      tiles,
    },
    omitted,
  };
}

/** `template` as file text: JSON, two-space indentation, a final newline (UTF-8, non-ASCII kept as is). */
export function dashboardTemplateText(template: DashboardTemplateJson): string {
  return `${JSON.stringify(template, null, 2)}\n`;
}
