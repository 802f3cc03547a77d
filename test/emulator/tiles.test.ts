/**
 * Dashboard tiles as the emulator serves them in dashboard details, shaped as PostHog's
 * `DashboardTileSerializer` / `InsightSerializer` / `TextSerializer` (posthog/api/dashboards/dashboard.py,
 * posthog/api/insight.py), and `create_from_template_json` making them from template JSON
 * (posthog/helpers/dashboard_templates.py `create_from_template`).
 */
import { describe, expect, it } from "vitest";
import { useEmulator } from "../support/emulator";

const emu = useEmulator();

const TILE_FIELDS = [
  "id",
  "insight",
  "text",
  "button_tile",
  "layouts",
  "color",
  "filters_overrides",
  "show_description",
  "transparent_background",
  "order",
  "last_refresh",
  "is_cached",
];

const trends = (event: string) => ({
  kind: "InsightVizNode",
  source: { kind: "TrendsQuery", series: [{ kind: "EventsNode", event, math: "dau" }], interval: "day" },
});

const template = {
  template_name: "Ventes — été 2026",
  dashboard_description: "KPIs de l'équipe 📈",
  dashboard_filters: { date_from: "-30d" },
  tags: ["kpi", "ventes"],
  tiles: [
    {
      type: "TEXT",
      body: "# Überblick\nÇa marche ✓",
      layouts: { sm: { x: 0, y: 5, w: 12, h: 2 }, xs: { x: 0, y: 10, w: 1, h: 2 } },
      color: "green",
    },
    {
      type: "INSIGHT",
      name: "Utilisateurs actifs (DAU)",
      description: "Par jour",
      query: trends("$pageview"),
      layouts: { sm: { x: 6, y: 0, w: 6, h: 5 } },
      color: "blue",
    },
    {
      type: "INSIGHT",
      name: "Inscriptions",
      query: trends("signed_up"),
      layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } },
    },
    { type: "BUTTON", body: "skipped" },
  ],
};

const fromTemplate = async (body: unknown) => {
  const e = emu();
  const res = await e.call("POST", `${e.project}/dashboards/create_from_template_json/`, { body });
  if (res.status !== 200) throw new Error(`create_from_template_json: ${res.status} ${res.text}`);
  return res.body;
};

describe("dashboard tiles", () => {
  it("create_from_template_json makes insights and text cards; the detail serves them in sm layout order", async () => {
    const e = emu();
    const created = await fromTemplate({ template });
    expect(created).toMatchObject({
      name: template.template_name,
      description: template.dashboard_description,
      filters: { date_from: "-30d" },
      tags: ["kpi", "ventes"],
    });
    const detail = (await e.call("GET", `${e.project}/dashboards/${created.id}/`)).body;
    expect(detail.tiles).toEqual(created.tiles);
    // The BUTTON tile is skipped; order: (y 0, x 0), (y 0, x 6), (y 5, x 0).
    expect(detail.tiles).toHaveLength(3);
    for (const tile of detail.tiles) expect(Object.keys(tile)).toEqual(TILE_FIELDS);
    const [signups, dau, text] = detail.tiles;
    expect(detail.tiles.map((t: { order: number }) => t.order)).toEqual([0, 1, 2]);
    expect(signups).toMatchObject({
      insight: { name: "Inscriptions", description: null, query: trends("signed_up"), is_sample: true },
      text: null,
      button_tile: null,
      layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } },
      color: null,
      last_refresh: null,
      is_cached: false,
    });
    expect(dau).toMatchObject({
      insight: {
        name: "Utilisateurs actifs (DAU)",
        derived_name: null,
        description: "Par jour",
        query: trends("$pageview"),
        deleted: false,
        dashboards: [created.id],
        dashboard_tiles: [{ id: dau.id, dashboard_id: created.id, deleted: false }],
        created_by: { email: "olivia.owner@example.com" },
        timezone: "UTC",
      },
      text: null,
      color: "blue",
    });
    expect(dau.insight.short_id).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect(text).toMatchObject({
      insight: null,
      text: { body: "# Überblick\nÇa marche ✓", created_by: { email: "olivia.owner@example.com" } },
      layouts: template.tiles[0]?.layouts,
      color: "green",
    });
    expect(Object.keys(text.text).sort()).toEqual(
      ["body", "created_by", "dashboard_tiles", "id", "last_modified_at", "last_modified_by", "team"].sort(),
    );
  });

  it("leaves out soft-deleted tiles and tiles of soft-deleted insights; a tile without layout sorts last", async () => {
    const e = emu();
    const created = await fromTemplate({ template });
    const path = `${e.project}/dashboards/${created.id}/`;
    const [first, second] = created.tiles;
    const patched = await e.call("PATCH", path, {
      body: { tiles: [{ id: first.id, deleted: true }, { text: { body: "no layout" } }] },
    });
    expect(patched.status).toBe(200);
    const ids = patched.body.tiles.map((t: { id: number }) => t.id);
    expect(ids).not.toContain(first.id);
    expect(ids[0]).toBe(second.id);
    expect(patched.body.tiles.at(-1).text.body).toBe("no layout");
    expect((await e.call("GET", path)).body.tiles.map((t: { id: number }) => t.id)).toEqual(ids);
  });

  it("leaves out a live tile whose insight is soft-deleted", async () => {
    const e = emu();
    const a = await fromTemplate({
      template: { ...template, tiles: [{ type: "INSIGHT", name: "Seul", query: trends("x") }] },
    });
    // B shares A's insight (use_dashboard reuses insights).
    const b = (await e.call("POST", `${e.project}/dashboards/`, { body: { name: "B", use_dashboard: a.id } }))
      .body;
    const insightId = a.tiles[0].insight.id;
    expect(b.tiles[0].insight.id).toBe(insightId);
    const bPath = `${e.project}/dashboards/${b.id}/`;
    // B's tile goes, then A goes with its now single-use insight, then B's tile comes back: its insight stays deleted.
    await e.call("PATCH", bPath, { body: { tiles: [{ id: b.tiles[0].id, deleted: true }] } });
    await e.call("PATCH", `${e.project}/dashboards/${a.id}/`, {
      body: { deleted: true, delete_insights: true },
    });
    const back = await e.call("PATCH", bPath, { body: { tiles: [{ id: b.tiles[0].id, deleted: false }] } });
    expect(back.status).toBe(200);
    expect(back.body.tiles).toEqual([]);
  });

  it("accepts lowercase tile types (older templates), null names and bodies", async () => {
    const created = await fromTemplate({
      template: {
        template_name: "Old",
        dashboard_description: "",
        dashboard_filters: {},
        tiles: [
          { type: "insight", name: null, query: null, layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } } },
          { type: "text", body: null, layouts: { sm: { x: 6, y: 0, w: 6, h: 5 } } },
        ],
      },
    });
    expect(created.tiles).toHaveLength(2);
    expect(created.tiles[0].insight).toMatchObject({ name: null, description: null, query: null });
    expect(created.tiles[1].text.body).toBeNull();
  });
});
