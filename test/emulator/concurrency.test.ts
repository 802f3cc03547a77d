import { describe, expect, it } from "vitest";
import { withEmulator } from "../support/emulator";

describe("concurrency", () => {
  it("many parallel creates: every write lands, ids are unique", async () => {
    await withEmulator(async (e) => {
      const n = 60;
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          e.call("POST", `${e.project}/dashboards/`, { body: { name: `P${i}` } }),
        ),
      );
      expect(results.every((r) => r.status === 201)).toBe(true);
      const ids = new Set(results.map((r) => r.body.id));
      expect(ids.size).toBe(n);
      const list = await e.call("GET", `${e.project}/dashboards/?limit=1000`);
      expect(list.body.count).toBe(n);
      const domains = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          e.call("POST", `${e.org}/domains/`, { body: { domain: `d${i}.example.com` } }),
        ),
      );
      expect(new Set(domains.map((r) => r.body.id)).size).toBe(30);
    });
  });

  it("parallel PATCHes of different fields of one dashboard lose no update", async () => {
    await withEmulator(async (e) => {
      const d = (await e.call("POST", `${e.project}/dashboards/`, { body: { name: "Shared" } })).body;
      const path = `${e.project}/dashboards/${d.id}/`;
      await Promise.all([
        e.call("PATCH", path, { body: { description: "desc" } }),
        e.call("PATCH", path, { body: { pinned: true } }),
        e.call("PATCH", path, { body: { tags: ["x"] } }),
        e.call("PATCH", path, { body: { filters: { a: 1 } } }),
        ...Array.from({ length: 10 }, (_, i) =>
          e.call("PATCH", path, { body: { tiles: [{ text: { body: `t${i}` } }] } }),
        ),
      ]);
      const after = (await e.call("GET", path)).body;
      expect(after).toMatchObject({ description: "desc", pinned: true, tags: ["x"], filters: { a: 1 } });
      expect(after.tiles).toHaveLength(10);
      expect(new Set(after.tiles.map((t: { id: number }) => t.id)).size).toBe(10);
    });
  });

  it("racing creates of the same domain: exactly one wins, the rest get 400 unique", async () => {
    await withEmulator(async (e) => {
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          e.call("POST", `${e.org}/domains/`, { body: { domain: "race.example.com" } }),
        ),
      );
      expect(results.filter((r) => r.status === 201)).toHaveLength(1);
      expect(results.filter((r) => r.status === 400 && r.body.code === "unique")).toHaveLength(19);
    });
  });
});
