import { describe, expect, it } from "vitest";
import { type TestEmulator, useEmulator, withEmulator } from "../support/emulator";

const emu = useEmulator();

const LIST_FIELDS = [
  "id",
  "name",
  "description",
  "pinned",
  "created_at",
  "created_by",
  "is_shared",
  "deleted",
  "creation_mode",
  "tags",
  "restriction_level",
  "effective_restriction_level",
  "effective_privilege_level",
  "user_access_level",
];
const FULL_FIELDS = [...LIST_FIELDS, "filters", "variables", "tiles"];

const userUuid = async (e: TestEmulator, email: string): Promise<string> => {
  const members = (await e.call("GET", `${e.org}/members/`)).body.results as {
    user: { email: string; uuid: string };
  }[];
  const found = members.find((m) => m.user.email === email);
  if (!found) throw new Error(`no member ${email}`);
  return found.user.uuid;
};

const createDashboard = async (e: TestEmulator, body: Record<string, unknown>, key?: string) => {
  const res = await e.call("POST", `${e.project}/dashboards/`, key ? { body, key } : { body });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.body;
};

describe("dashboards", () => {
  it("creates (201, full object), lists the subset, retrieves; nothing is required", async () => {
    const e = emu();
    const empty = await e.call("POST", `${e.project}/dashboards/`);
    expect(empty.status).toBe(201);
    expect(empty.body.creation_mode).toBe("default");
    const created = await createDashboard(e, { name: "Sales", description: "d", pinned: true, tags: ["a"] });
    expect(Object.keys(created).sort()).toEqual([...FULL_FIELDS].sort());
    expect(created).toMatchObject({
      name: "Sales",
      pinned: true,
      tags: ["a"],
      deleted: false,
      is_shared: false,
      restriction_level: 21,
      effective_restriction_level: 21,
      effective_privilege_level: 37,
      user_access_level: "editor",
      tiles: [],
    });
    expect(created.created_by.email).toBe("olivia.owner@example.com");
    const list = await e.call("GET", `${e.project}/dashboards/`);
    const item = list.body.results.find((d: { id: number }) => d.id === created.id);
    expect(Object.keys(item).sort()).toEqual([...LIST_FIELDS].sort());
    // Ordered -pinned, name: the pinned dashboard first.
    expect(list.body.results[0].id).toBe(created.id);
    const got = await e.call("GET", `${e.project}/dashboards/${created.id}/`);
    expect(got.body).toEqual(created);
    const current = await e.call("GET", `/api/projects/@current/dashboards/${created.id}`);
    expect(current.body.id).toBe(created.id);
  });

  it("lists -pinned, name as PostgreSQL orders it: a dashboard without name (null) after every name", async () => {
    await withEmulator(async (e) => {
      for (const body of [
        { name: null, pinned: true },
        { name: "Zeta", pinned: true },
        { name: null },
        { name: "beta" },
        { name: "" },
        { name: "Alpha" },
      ]) {
        await createDashboard(e, body);
      }
      const list = await e.call("GET", `${e.project}/dashboards/`);
      expect(
        list.body.results.map((d: { name: string | null; pinned: boolean }) => [d.pinned, d.name]),
      ).toEqual([
        [true, "Zeta"],
        [true, null],
        [false, ""],
        [false, "Alpha"],
        [false, "beta"],
        [false, null],
      ]);
    });
  });

  it("DELETE is 405 with an empty body; soft delete by PATCH hides it; PATCH deleted:false restores", async () => {
    const e = emu();
    const d = await createDashboard(e, { name: "Soft", use_template: "DEFAULT_APP" });
    const path = `${e.project}/dashboards/${d.id}/`;
    const del = await e.call("DELETE", path);
    expect(del.status).toBe(405);
    expect(del.text).toBe("");
    expect((await e.call("GET", path)).status).toBe(200);
    const soft = await e.call("PATCH", path, { body: { deleted: true } });
    expect(soft.status).toBe(200);
    expect(soft.body.deleted).toBe(true);
    expect((await e.call("GET", path)).status).toBe(404);
    const ids = (await e.call("GET", `${e.project}/dashboards/`)).body.results.map(
      (x: { id: number }) => x.id,
    );
    expect(ids).not.toContain(d.id);
    expect((await e.call("PATCH", path, { body: { name: "x" } })).status).toBe(404);
    const restored = await e.call("PATCH", path, { body: { deleted: false } });
    expect(restored.status).toBe(200);
    expect(restored.body.deleted).toBe(false);
    expect(restored.body.tiles).toHaveLength(d.tiles.length);
    expect((await e.call("GET", path)).status).toBe(200);
  });

  it("delete_insights soft-deletes the insights only on this dashboard, never shared ones; restore brings back its tiles and insights", async () => {
    const e = emu();
    type Tile = { id: number; insight: { id: number; deleted: boolean } | null };
    const insightIds = (d: { tiles: Tile[] }) =>
      d.tiles.flatMap((t) => (t.insight ? [t.insight.id] : [])).sort((a, b) => a - b);
    // The insight as stored (GET /_emulator/insights/:id): a dashboard's tiles leave out soft-deleted insights,
    // so only the insight itself shows whether it was deleted.
    const stored = async (id: number) => {
      const res = await e.control("GET", `/insights/${id}`);
      expect(res.status).toBe(200);
      return res.body as { id: number; deleted: boolean };
    };
    const deletedFlags = async (ids: number[]) =>
      Promise.all(ids.map(async (id) => (await stored(id)).deleted));
    const path = (id: number) => `${e.project}/dashboards/${id}/`;

    const source = await createDashboard(e, { name: "Src", use_template: "WEBSITE_TRAFFIC" });
    expect(source.creation_mode).toBe("template");
    const shared = insightIds(source);
    expect(shared.length).toBeGreaterThan(0);
    const copy = await createDashboard(e, { name: "Copy", use_dashboard: source.id });
    expect(copy.creation_mode).toBe("duplicate");
    expect(insightIds(copy)).toEqual(shared);
    const lone = await createDashboard(e, { name: "Lone", use_template: "DEFAULT_APP" });
    const own = insightIds(lone);
    expect(own.length).toBeGreaterThan(0);
    expect(own.filter((id) => shared.includes(id))).toEqual([]);

    // Deleting the copy with its insights: every insight it shares with the source stays, and the source still
    // shows each of its tiles with its insight.
    const gone = await e.call("PATCH", path(copy.id), { body: { deleted: true, delete_insights: true } });
    expect(gone.status).toBe(200);
    expect(await deletedFlags(shared)).toEqual(shared.map(() => false));
    const src = (await e.call("GET", path(source.id))).body;
    expect(src.tiles.map((t: Tile) => t.id)).toEqual(source.tiles.map((t: Tile) => t.id));
    expect(insightIds(src)).toEqual(shared);

    // Deleting the lone dashboard with its insights deletes each of them.
    await e.call("PATCH", path(lone.id), { body: { deleted: true, delete_insights: true } });
    expect(await deletedFlags(own)).toEqual(own.map(() => true));
    // Restoring it un-deletes its tiles and their insights: the same tiles, each showing its insight.
    const restored = await e.call("PATCH", path(lone.id), { body: { deleted: false } });
    expect(restored.status).toBe(200);
    expect(restored.body.tiles.map((t: Tile) => t.id)).toEqual(lone.tiles.map((t: Tile) => t.id));
    expect(insightIds(restored.body)).toEqual(own);
    expect(restored.body.tiles.every((t: Tile) => t.insight === null || t.insight.deleted === false)).toBe(
      true,
    );
    expect(await deletedFlags(own)).toEqual(own.map(() => false));
    expect((await e.call("GET", path(lone.id))).body.tiles).toHaveLength(lone.tiles.length);
  });

  it("validates use_template, use_dashboard, types and enums", async () => {
    const e = emu();
    const post = (body: unknown) => e.call("POST", `${e.project}/dashboards/`, { body });
    expect((await post({ use_template: "NOPE" })).body).toEqual({
      type: "validation_error",
      code: "invalid_input",
      detail: "Invalid template provided: NOPE",
      attr: "use_template",
    });
    expect((await post({ use_dashboard: 999999 })).body).toMatchObject({
      detail: "Invalid value provided",
      attr: "use_dashboard",
    });
    expect((await post({ use_dashboard: 1, use_template: "DEFAULT_APP" })).body).toMatchObject({
      attr: null,
      detail: "`use_dashboard` and `use_template` cannot be used together",
    });
    expect((await post({ restriction_level: 30 })).body).toMatchObject({
      code: "invalid_choice",
      attr: "restriction_level",
    });
    expect((await post({ pinned: "yes" })).body).toMatchObject({ code: "invalid_input", attr: "pinned" });
    expect((await post({ tags: "x" })).body).toMatchObject({ attr: "tags" });
    expect((await post({ filters: [] })).body).toMatchObject({
      detail: "Filters must be a dictionary",
      attr: "filters",
    });
    expect((await post([{ name: "array" }])).body).toMatchObject({
      type: "validation_error",
      detail: "Invalid data. Expected a dictionary, but got list.",
    });
  });

  it("PATCH edits fields and tiles (upsert by id, new text tiles), all or nothing", async () => {
    const e = emu();
    const d = await createDashboard(e, { name: "Tiles", use_template: "DEFAULT_APP" });
    const path = `${e.project}/dashboards/${d.id}/`;
    const tileId = d.tiles[0].id;
    const res = await e.call("PATCH", path, {
      body: {
        name: "Tiles 2",
        filters: { date_from: "-7d" },
        tiles: [
          // Below everything, the new text tile too: a tile without a layout sorts as if at x 100, y 100.
          { id: tileId, color: "blue", layouts: { sm: { x: 0, y: 1000, w: 6, h: 5 } } },
          { text: { body: "Hello" } },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe("Tiles 2");
    expect(res.body.filters).toEqual({ date_from: "-7d" });
    const moved = res.body.tiles.find((t: { id: number }) => t.id === tileId);
    expect(moved.color).toBe("blue");
    expect(res.body.tiles.at(-1).id).toBe(tileId);
    expect(res.body.tiles.some((t: { text: { body: string } | null }) => t.text?.body === "Hello")).toBe(
      true,
    );
    const bad = await e.call("PATCH", path, { body: { name: "never", tiles: [{ id: 99999 }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.attr).toBe("tiles__0__id");
    expect((await e.call("GET", path)).body.name).toBe("Tiles 2");
  });

  it("move_tile moves a tile to another dashboard: 200 with no body", async () => {
    const e = emu();
    const a = await createDashboard(e, { name: "A", use_template: "DEFAULT_APP" });
    const b = await createDashboard(e, { name: "B" });
    const tile = a.tiles[0].id;
    const res = await e.call("PATCH", `${e.project}/dashboards/${a.id}/move_tile/`, {
      body: { tile: { id: tile }, toDashboard: b.id },
    });
    expect(res.status).toBe(200);
    expect(res.text).toBe("");
    expect(
      (await e.call("GET", `${e.project}/dashboards/${b.id}/`)).body.tiles.map((t: { id: number }) => t.id),
    ).toEqual([tile]);
    expect((await e.call("GET", `${e.project}/dashboards/${a.id}/`)).body.tiles).toHaveLength(
      a.tiles.length - 1,
    );
    const again = await e.call("PATCH", `${e.project}/dashboards/${a.id}/move_tile/`, {
      body: { tile: { id: tile }, toDashboard: b.id },
    });
    expect(again.status).toBe(404);
    const missing = await e.call("PATCH", `${e.project}/dashboards/${a.id}/move_tile/`, {
      body: { tile: {} },
    });
    expect(missing.body).toMatchObject({ code: "required", attr: "tile__id" });
  });

  it("create_from_template_json validates the template schema and returns 200 with the dashboard", async () => {
    const e = emu();
    const url = `${e.project}/dashboards/create_from_template_json/`;
    const template = {
      template_name: "From JSON",
      dashboard_description: "desc",
      dashboard_filters: { date_from: "-30d" },
      tags: ["t"],
      tiles: [
        { type: "INSIGHT", name: "Pageviews", query: { kind: "TrendsQuery" }, layouts: {}, color: null },
        { type: "TEXT", body: "# Notes", layouts: {} },
        { type: "UNKNOWN" },
      ],
    };
    const res = await e.call("POST", url, { body: { template } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: "From JSON",
      description: "desc",
      filters: { date_from: "-30d" },
      creation_mode: "default", // as PostHog: create_from_template never sets it
      tags: ["t"],
    });
    expect(res.body.tiles).toHaveLength(2);
    expect((await e.call("POST", url, { body: {} })).body).toMatchObject({
      code: "required",
      attr: "template",
    });
    const noTiles = await e.call("POST", url, { body: { template: { ...template, tiles: [] } } });
    expect(noTiles.body).toMatchObject({ type: "validation_error", attr: "template__tiles" });
    const { template_name: _, ...noName } = template;
    expect((await e.call("POST", url, { body: { template: noName } })).body).toMatchObject({
      code: "required",
      attr: "template__template_name",
    });
    const badVar = await e.call("POST", url, {
      body: {
        template: {
          ...template,
          variables: [{ id: "1", name: "n", type: "x", default: {}, description: "", required: true }],
        },
      },
    });
    expect(badVar.body).toMatchObject({ code: "invalid_choice", attr: "template__variables__0__type" });
  });

  it("access_controls and global_access_controls answer 200 with the dashboard (seed)", async () => {
    const e = emu();
    const d = await createDashboard(e, { name: "AC" });
    for (const view of ["access_controls", "global_access_controls"]) {
      const res = await e.call("GET", `${e.project}/dashboards/${d.id}/${view}/`);
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(d.id);
      expect(Object.keys(res.body).sort()).toEqual([...FULL_FIELDS].sort());
    }
    expect((await e.call("GET", `${e.project}/dashboards/99999/access_controls/`)).status).toBe(404);
  });

  it("restriction level 37: only owner/admins may set it; others then can only view", async () => {
    await withEmulator(async (e) => {
      const miaKey = await e.createKey({ userEmail: "mia.member@example.com" });
      const d = await createDashboard(e, { name: "Restricted", restriction_level: 37 });
      expect(d.effective_restriction_level).toBe(37);
      const path = `${e.project}/dashboards/${d.id}/`;
      const asMia = await e.call("GET", path, { key: miaKey });
      expect(asMia.body).toMatchObject({ effective_privilege_level: 21, user_access_level: "viewer" });
      const denied = await e.call("PATCH", path, { key: miaKey, body: { name: "mine" } });
      expect(denied.body).toEqual({
        type: "authentication_error",
        code: "permission_denied",
        detail: "You don't have edit permissions for this dashboard.",
        attr: null,
      });
      const own = await createDashboard(e, { name: "Mia's" }, miaKey);
      const restrict = await e.call("PATCH", `${e.project}/dashboards/${own.id}/`, {
        key: miaKey,
        body: { restriction_level: 37 },
      });
      expect(restrict.status).toBe(200);
      const maxKey = await e.createKey({ userEmail: "max.member@example.com" });
      const other = await createDashboard(e, { name: "Max's" }, maxKey);
      const refused = await e.call("PATCH", `${e.project}/dashboards/${other.id}/`, {
        key: miaKey,
        body: { restriction_level: 37 },
      });
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toMatch(/^Only the dashboard owner and project admins/);
      // A member cannot move tiles into a dashboard they cannot edit, nor manage its collaborators or sharing.
      const withTiles = await createDashboard(
        e,
        { name: "Mia's tiles", use_template: "DEFAULT_APP" },
        miaKey,
      );
      const legacyMia = await e.createKey({ userEmail: "mia.member@example.com", scopes: null });
      const move = await e.call("PATCH", `${e.project}/dashboards/${withTiles.id}/move_tile/`, {
        key: legacyMia,
        body: { tile: { id: withTiles.tiles[0].id }, toDashboard: d.id },
      });
      expect(move.status).toBe(403);
      expect(move.body.detail).toBe("You don't have edit permissions for the destination dashboard.");
      const maxUuid = await userUuid(e, "max.member@example.com");
      const addCollab = await e.call("POST", `${e.project}/dashboards/${d.id}/collaborators/`, {
        key: miaKey,
        body: { level: 37, user_uuid: maxUuid },
      });
      expect(addCollab.body.detail).toBe("You don't have edit permissions for this dashboard.");
      const share = await e.call("PATCH", `${e.project}/dashboards/${d.id}/sharing/`, {
        key: miaKey,
        body: { enabled: true },
      });
      expect(share.status).toBe(403);
    });
  });
});

describe("collaborators", () => {
  it("adds (level 37 only, restriction 37 required, no duplicates, no creator/admins), lists an array, removes", async () => {
    await withEmulator(async (e) => {
      const mia = await userUuid(e, "mia.member@example.com");
      const admin = await userUuid(e, "adam.admin@example.com");
      const owner = await userUuid(e, "olivia.owner@example.com");
      const open = await createDashboard(e, { name: "Open" });
      const collab = (id: number) => `${e.project}/dashboards/${id}/collaborators/`;
      const lowest = await e.call("POST", collab(open.id), { body: { level: 37, user_uuid: mia } });
      expect(lowest.body).toEqual({
        type: "validation_error",
        code: "invalid_input",
        detail: "Cannot add collaborators to a dashboard on the lowest restriction level.",
        attr: null,
      });
      const d = await createDashboard(e, { name: "Closed", restriction_level: 37 });
      const add = (body: unknown) => e.call("POST", collab(d.id), { body });
      expect((await add({ level: 21, user_uuid: mia })).body.detail).toBe(
        "Only edit access can be explicitly specified currently.",
      );
      expect((await add({ level: 99, user_uuid: mia })).body).toMatchObject({
        code: "invalid_choice",
        attr: "level",
      });
      expect((await add({ user_uuid: mia })).body).toMatchObject({ code: "required", attr: "level" });
      expect((await add({ level: 37, user_uuid: "not-a-uuid" })).body).toMatchObject({ attr: "user_uuid" });
      expect((await add({ level: 37, user_uuid: "00000000-0000-4000-8000-000000000000" })).body.detail).toBe(
        "User does not exist.",
      );
      for (const uuid of [owner, admin]) {
        expect((await add({ level: 37, user_uuid: uuid })).body.detail).toBe(
          "Cannot add collaborators that already have inherent access (the dashboard owner or a project admins).",
        );
      }
      const outsider = await e.control("POST", "/users", { email: "outsider@example.com" });
      expect((await add({ level: 37, user_uuid: outsider.body.user.uuid })).body.detail).toBe(
        "Cannot add collaborators that have no access to the project.",
      );
      const ok = await add({ level: 37, user_uuid: mia });
      expect(ok.status).toBe(201);
      expect(Object.keys(ok.body).sort()).toEqual([
        "added_at",
        "dashboard_id",
        "id",
        "level",
        "updated_at",
        "user",
      ]);
      expect(ok.body).toMatchObject({ dashboard_id: d.id, level: 37, user: { uuid: mia } });
      expect((await add({ level: 37, user_uuid: mia })).body.detail).toBe("User already is a collaborator.");
      const list = await e.call("GET", collab(d.id));
      expect(Array.isArray(list.body)).toBe(true);
      expect(list.body).toEqual([ok.body]);
      // The collaborator can now edit the restricted dashboard.
      const miaKey = await e.createKey({ userEmail: "mia.member@example.com" });
      const edit = await e.call("PATCH", `${e.project}/dashboards/${d.id}/`, {
        key: miaKey,
        body: { name: "by Mia" },
      });
      expect(edit.status).toBe(200);
      expect(edit.body.effective_privilege_level).toBe(37);
      expect((await e.call("DELETE", `${collab(d.id)}${mia}/`)).status).toBe(204);
      expect((await e.call("DELETE", `${collab(d.id)}${mia}/`)).status).toBe(404);
      expect((await e.call("GET", collab(d.id))).body).toEqual([]);
      expect((await e.call("GET", collab(99999))).body.detail).toBe("Dashboard not found.");
    });
  });

  it("without paid features: effective restriction 21, collaborators refused, no sharing, tags dropped", async () => {
    await withEmulator(
      async (e) => {
        const mia = await userUuid(e, "mia.member@example.com");
        const d = await createDashboard(e, { restriction_level: 37, tags: ["dropped"] });
        expect(d).toMatchObject({ restriction_level: 37, effective_restriction_level: 21, tags: [] });
        const res = await e.call("POST", `${e.project}/dashboards/${d.id}/collaborators/`, {
          body: { level: 37, user_uuid: mia },
        });
        expect(res.status).toBe(400);
        const share = await e.call("PATCH", `${e.project}/dashboards/${d.id}/sharing/`, {
          body: { enabled: true },
        });
        expect(share.status).toBe(403);
      },
      { paidFeatures: false },
    );
  });
});

describe("sharing", () => {
  it("GET builds a config lazily (new token each time until PATCH); PATCH enables; is_shared follows", async () => {
    const e = emu();
    const d = await createDashboard(e, { name: "Share" });
    const path = `${e.project}/dashboards/${d.id}/sharing/`;
    const first = await e.call("GET", path);
    expect(first.status).toBe(200);
    // PostHog's SharingConfigurationSerializer fields (posthog/api/sharing.py), beyond the reference's three
    expect(Object.keys(first.body).sort()).toEqual([
      "access_token",
      "created_at",
      "enabled",
      "password_required",
      "settings",
      "share_passwords",
    ]);
    expect(first.body).toMatchObject({
      created_at: null,
      enabled: false,
      settings: null,
      password_required: false,
      share_passwords: [],
    });
    const second = await e.call("GET", path);
    expect(second.body.access_token).not.toBe(first.body.access_token);
    const enabled = await e.call("PATCH", path, { body: { enabled: true } });
    expect(enabled.status).toBe(200);
    expect(enabled.body.enabled).toBe(true);
    expect(enabled.body.created_at).not.toBeNull();
    const stable = await e.call("GET", path);
    expect(stable.body).toEqual(enabled.body);
    expect((await e.call("GET", `${e.project}/dashboards/${d.id}/`)).body.is_shared).toBe(true);
    expect((await e.call("PATCH", path, { body: { enabled: "maybe" } })).body).toMatchObject({
      attr: "enabled",
    });
    await e.call("PATCH", path, { body: { enabled: false } });
    expect((await e.call("GET", `${e.project}/dashboards/${d.id}/`)).body.is_shared).toBe(false);
    expect((await e.call("GET", `${e.project}/dashboards/99999/sharing/`)).body.detail).toBe(
      "Dashboard not found.",
    );
  });
});
