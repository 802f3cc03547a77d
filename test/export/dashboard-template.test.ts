/**
 * provider/apps/dashboard-template.ts: template JSON of a live dashboard. Over real HTTP against the emulator
 * through the client: create_from_template_json → retrieve → template → create_from_template_json in another
 * project → template again gives an equal template (insights with queries, text cards, layouts, colours).
 */
import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  dashboardTemplate,
  dashboardTemplateText,
} from "../../provider/apps/dashboard-template";
import { type Dashboard, DashboardTileSchema, type PostHogClient } from "../../provider/client";
import { DashboardTemplateJsonSchema } from "../../provider/resources/dashboard";
import { clientFor } from "../client/helpers";
import { useEmulator } from "../support/emulator";

const emu = useEmulator();

// Keys deliberately out of order: the template sorts them.
const funnel = {
  source: {
    series: [
      { event: "$pageview", kind: "EventsNode", name: "Vue de page" },
      { kind: "EventsNode", event: "achat_effectué", custom_name: "Achat ✓" },
    ],
    kind: "FunnelsQuery",
    funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: "day" },
  },
  kind: "InsightVizNode",
};
const trends = {
  kind: "InsightVizNode",
  source: {
    kind: "TrendsQuery",
    interval: "week",
    series: [{ kind: "EventsNode", event: "signup", math: "dau" }],
  },
};

/** A template with its tiles out of layout order, non-ASCII everywhere, an insight without description. */
const source = {
  template_name: "Tableau de bord — équipe 日本",
  dashboard_description: "Suivi hebdomadaire 📊",
  dashboard_filters: { properties: [], date_from: "-14d" },
  tags: ["ventes", "kpi"],
  tiles: [
    {
      type: "TEXT",
      body: "## Notes\nÀ lire d'abord — ✓",
      layouts: { xs: { y: 10, x: 0, w: 1, h: 2 }, sm: { y: 5, x: 0, w: 12, h: 2 } },
      color: "purple",
    },
    {
      type: "INSIGHT",
      name: "Entonnoir d'achat",
      description: "Du premier regard à l'achat",
      query: funnel,
      layouts: { sm: { x: 6, y: 0, w: 6, h: 5 }, xs: { x: 0, y: 5, w: 1, h: 5 } },
      color: "blue",
    },
    {
      type: "INSIGHT",
      name: "Inscriptions (semaine)",
      query: trends,
      layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } },
      color: null,
    },
  ],
};

const createAndRead = async (
  client: PostHogClient,
  projectId: number,
  template: unknown,
): Promise<Dashboard> => {
  const made = await client.dashboards.createFromTemplateJson({
    projectId,
    body: { template: template as Record<string, unknown> },
  });
  if (!made) throw new Error("create_from_template_json answered without a body");
  return client.dashboards.retrieve({ projectId, id: made.id });
};

describe("dashboardTemplate", () => {
  it("export → create in another project → export gives an equal template", async () => {
    const e = emu();
    const client = clientFor(e);
    const first = await createAndRead(client, e.projectId, source);
    const { template, omitted } = dashboardTemplate(first);
    expect(omitted).toEqual([]);
    expect(template).toEqual({
      template_name: "Tableau de bord — équipe 日本",
      dashboard_description: "Suivi hebdomadaire 📊",
      dashboard_filters: { date_from: "-14d", properties: [] },
      tags: ["kpi", "ventes"],
      tiles: [
        {
          type: "INSIGHT",
          name: "Inscriptions (semaine)",
          description: "",
          query: trends,
          layouts: { sm: { h: 5, w: 6, x: 0, y: 0 } },
          color: null,
        },
        {
          type: "INSIGHT",
          name: "Entonnoir d'achat",
          description: "Du premier regard à l'achat",
          query: funnel,
          layouts: source.tiles[1]?.layouts,
          color: "blue",
        },
        {
          type: "TEXT",
          body: "## Notes\nÀ lire d'abord — ✓",
          layouts: source.tiles[0]?.layouts,
          color: "purple",
        },
      ],
    });
    // A fixed key order at the top and in each tile, sorted keys inside the JSON values (toEqual ignores order).
    const text = dashboardTemplateText(template);
    const sorted = (v: unknown) => JSON.stringify(v) === JSON.stringify(canonicalJson(v));
    expect(sorted(funnel)).toBe(false);
    expect(sorted(template.dashboard_filters)).toBe(true);
    for (const tile of template.tiles) {
      expect(sorted(tile.layouts)).toBe(true);
      if (tile.type === "INSIGHT") expect(sorted(tile.query)).toBe(true);
    }
    expect(Object.keys(template)).toEqual([
      "template_name",
      "dashboard_description",
      "dashboard_filters",
      "tags",
      "tiles",
    ]);
    expect(Object.keys(template.tiles[0] ?? {})).toEqual([
      "type",
      "name",
      "description",
      "query",
      "layouts",
      "color",
    ]);
    expect(text).toContain('"kind": "EventsNode",\n');
    // What Dashboard.templateJson accepts.
    expect(DashboardTemplateJsonSchema.safeParse(template).success).toBe(true);

    // Promotion: the template in another project makes the same tiles.
    const other = await client.projects.create({ body: { name: "Prod — 本番" } });
    const second = await createAndRead(client, other.id, JSON.parse(text));
    expect(second.id).not.toBe(first.id);
    const again = dashboardTemplate(second);
    expect(again.omitted).toEqual([]);
    expect(again.template).toEqual(template);
    expect(dashboardTemplateText(again.template)).toBe(text);
    const insightIds = (d: Dashboard) =>
      (d.tiles ?? []).map((t) => DashboardTileSchema.parse(t).insight?.id).filter((id) => id !== undefined);
    expect(insightIds(second)).toHaveLength(2);
    for (const id of insightIds(second)) expect(insightIds(first)).not.toContain(id);
  });

  it("skips a soft-deleted tile: the server leaves it out, and a detail that still carries it is filtered", async () => {
    const e = emu();
    const client = clientFor(e);
    const d = await createAndRead(client, e.projectId, source);
    const textTile = d.tiles?.find((t) => t.text);
    if (!textTile) throw new Error("no text tile");
    const res = await e.call("PATCH", `${e.project}/dashboards/${d.id}/`, {
      body: { tiles: [{ id: textTile.id, deleted: true }] },
    });
    expect(res.status).toBe(200);
    const after = dashboardTemplate(await client.dashboards.retrieve({ id: d.id }));
    expect(after.template.tiles.map((t) => t.type)).toEqual(["INSIGHT", "INSIGHT"]);

    // A detail carrying the tile with deleted: true (and a button tile, an error tile, a tile of a deleted insight).
    const { template, omitted } = dashboardTemplate({
      ...d,
      variables: { "0190f0e2-aaaa-7000-8000-000000000001": { code_name: "pays", value: "FR" } },
      tiles: [
        ...(d.tiles ?? []).map((t) => (t.id === textTile.id ? { ...t, deleted: true } : t)),
        { id: 9001, button_tile: { url: "/x", text: "Go" }, layouts: {}, color: null },
        { id: 9002, insight: { id: 1, name: "broken" }, error: { type: "ValidationError" }, layouts: {} },
        { id: 9003, insight: { id: 2, name: "gone", deleted: true }, layouts: {} },
        { id: 9004, layouts: {} },
      ],
    });
    expect(template.tiles.map((t) => t.type)).toEqual(["INSIGHT", "INSIGHT"]);
    expect(omitted.map((o) => o.what)).toEqual([
      `tile ${textTile.id}`,
      "tile 9001",
      "tile 9002",
      "tile 9003",
      "tile 9004",
      "dashboard variables",
    ]);
    expect(omitted[0]?.why).toBe("soft-deleted");
  });

  it("uses derived_name when an insight has no name, keeps a text card without body, refuses a list item", () => {
    const base = { id: 7, name: null, description: null, filters: null, tags: null };
    const { template } = dashboardTemplate({
      ...base,
      tiles: [
        {
          id: 1,
          insight: { id: 11, name: null, derived_name: "Pageview count" },
          layouts: null,
          color: null,
        },
        { id: 2, text: { id: 3, body: null }, layouts: { sm: { x: 0, y: 9 } }, color: "white" },
      ],
    });
    expect(template).toEqual({
      template_name: "",
      dashboard_description: "",
      dashboard_filters: {},
      tags: [],
      tiles: [
        { type: "TEXT", layouts: { sm: { x: 0, y: 9 } }, color: "white" },
        { type: "INSIGHT", name: "Pageview count", description: "", query: null, layouts: {}, color: null },
      ],
    });
    expect(() => dashboardTemplate(base)).toThrow(/client\.dashboards\.retrieve/);
  });
});
