import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startEmulator } from "../../emulator/index";
import { RequestLogEntrySchema } from "../../emulator/schemas";
import { startTestEmulator, useEmulator, withEmulator } from "../support/emulator";

const emu = useEmulator();

describe("control plane", () => {
  it("needs the seed key (other keys and none get 401)", async () => {
    const e = emu();
    const other = await e.createKey();
    for (const key of [null, other]) {
      const res = await e.call("POST", "/_emulator/clock", { key, body: { advanceSeconds: 0 } });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ type: "authentication_error", attr: null });
    }
    const bad = await e.control("POST", "/clock", { advanceSeconds: "soon" });
    expect(bad.body).toMatchObject({ type: "validation_error", attr: "advanceSeconds" });
    expect((await e.control("GET", "/clock")).status).toBe(405);
  });

  it("advances the clock used for timestamps", async () => {
    const e = emu();
    const before = Date.parse((await e.control("POST", "/clock", { advanceSeconds: 0 })).body.now);
    const after = Date.parse((await e.control("POST", "/clock", { advanceSeconds: 7200 })).body.now);
    expect(after - before).toBeGreaterThanOrEqual(7200_000);
    const d = await e.call("POST", `${e.project}/dashboards/`, { body: { name: "clock" } });
    expect(Date.parse(d.body.created_at)).toBeGreaterThanOrEqual(after);
  });

  it("freezes the clock: it stands still until advanced (by seconds or milliseconds) or unfrozen", () =>
    withEmulator(async (e) => {
      const frozen = await e.control("POST", "/clock", { frozen: true });
      expect(frozen.body.frozen).toBe(true);
      const at = Date.parse(frozen.body.now);
      // Stands still: every timestamp is the frozen instant, however long the machine takes.
      const d = await e.call("POST", `${e.project}/dashboards/`, { body: { name: "frozen" } });
      expect(Date.parse(d.body.created_at)).toBe(at);
      const same = await e.control("POST", "/clock", { advanceSeconds: 0 });
      expect(same.body).toEqual({ now: frozen.body.now, frozen: true });
      const moved = await e.control("POST", "/clock", { advanceSeconds: 60, advanceMs: 250 });
      expect(Date.parse(moved.body.now) - at).toBe(60_250);
      // Runs again from where it stands.
      const running = await e.control("POST", "/clock", { frozen: false });
      expect(running.body.frozen).toBe(false);
      expect(Date.parse(running.body.now)).toBeGreaterThanOrEqual(at + 60_250);
      const later = Date.parse((await e.control("POST", "/clock", { advanceMs: 0 })).body.now);
      expect(later).toBeGreaterThanOrEqual(Date.parse(running.body.now));
      expect((await e.control("POST", "/clock", {})).body).toMatchObject({ type: "validation_error" });
    }));

  it("reads an insight as stored, soft-deleted ones too (GET /_emulator/insights/:id)", async () => {
    const e = emu();
    const d = await e.call("POST", `${e.project}/dashboards/`, {
      body: { name: "With insights", use_template: "DEFAULT_APP" },
    });
    const id = d.body.tiles[0].insight.id as number;
    const read = await e.control("GET", `/insights/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id, team_id: e.projectId, deleted: false });
    await e.call("PATCH", `${e.project}/dashboards/${d.body.id}/`, {
      body: { deleted: true, delete_insights: true },
    });
    expect((await e.control("GET", `/insights/${id}`)).body.deleted).toBe(true);
    expect((await e.control("GET", "/insights/999999")).status).toBe(404);
  });

  it("holds matching API requests until released, oldest first; `times` limits how many", () =>
    withEmulator(async (e) => {
      const armed = await e.control("POST", "/holds", { method: "POST", path: "/invites/$", times: 2 });
      expect(armed.status).toBe(201);
      const id = armed.body.id as string;
      const held = async () => (await e.control("GET", `/holds/${id}`)).body;
      const invite = (email: string) =>
        e.call("POST", `${e.org}/invites/`, { body: { target_email: email, send_email: false } });
      let answered: string[] = [];
      const first = invite("one@example.com").then((r) => {
        answered = [...answered, `one ${r.status}`];
        return r;
      });
      const second = invite("two@example.com").then((r) => {
        answered = [...answered, `two ${r.status}`];
        return r;
      });
      while ((await held()).held.length < 2) await new Promise((r) => setTimeout(r, 10));
      // A request not matching (another method, path) is not held; `times: 2` holds no third one.
      expect((await e.call("GET", `${e.org}/invites/`)).body.count).toBe(0);
      expect((await invite("three@example.com")).status).toBe(201);
      const state = await held();
      expect(state).toMatchObject({ method: "POST", path: "/invites/$", times: 2, hits: 2 });
      expect(state.held.map((h: { body: { target_email: string } }) => h.body.target_email).sort()).toEqual([
        "one@example.com",
        "two@example.com",
      ]);
      // Held requests have not been handled: nothing of theirs is stored or logged.
      expect((await e.call("GET", `${e.org}/invites/`)).body.count).toBe(1);
      expect(answered).toEqual([]);
      const oldest = state.held[0].body.target_email === "one@example.com" ? "one" : "two";
      expect((await e.control("POST", `/holds/${id}/release`, { count: 1 })).body).toEqual({ released: 1 });
      await (oldest === "one" ? first : second);
      expect(answered).toEqual([`${oldest} 201`]);
      expect((await held()).held).toHaveLength(1);
      expect((await e.control("DELETE", `/holds/${id}`)).status).toBe(204);
      expect((await Promise.all([first, second])).map((r) => r.status)).toEqual([201, 201]);
      expect((await e.control("GET", `/holds/${id}`)).status).toBe(404);
      expect((await e.control("POST", `/holds/${id}/release`)).status).toBe(404);
      expect((await e.control("POST", "/holds", { path: "(" })).body).toMatchObject({ attr: "path" });
      // DELETE /holds releases every request held and disarms every hold.
      await e.control("POST", "/holds", { path: "/members/$" });
      const members = e.call("GET", `${e.org}/members/`);
      expect((await e.control("DELETE", "/holds")).status).toBe(204);
      expect((await members).status).toBe(200);
      expect((await e.call("GET", `${e.org}/members/`)).status).toBe(200);
    }));

  it("creates users (with a level: also members) and accepts invites into memberships", async () => {
    await withEmulator(async (e) => {
      const user = await e.control("POST", "/users", {
        email: "newbie@example.com",
        first_name: "New",
        level: 8,
      });
      expect(user.status).toBe(201);
      expect(user.body.user).toMatchObject({ email: "newbie@example.com", first_name: "New" });
      expect((await e.control("POST", "/users", { email: "newbie@example.com" })).status).toBe(400);
      const members = (await e.call("GET", `${e.org}/members/`)).body;
      expect(
        members.results.find((m: { user: { email: string } }) => m.user.email === "newbie@example.com").level,
      ).toBe(8);
      const invite = (
        await e.call("POST", `${e.org}/invites/`, { body: { target_email: "joiner@example.com", level: 8 } })
      ).body;
      const accepted = await e.control("POST", `/invites/${invite.id}/accept`);
      expect(accepted.status).toBe(201);
      expect(accepted.body.member).toMatchObject({ level: 8, user: { email: "joiner@example.com" } });
      expect((await e.call("GET", `${e.org}/invites/`)).body.count).toBe(0);
      expect((await e.control("POST", `/invites/${invite.id}/accept`)).status).toBe(404);
      const late = (await e.call("POST", `${e.org}/invites/`, { body: { target_email: "late@example.com" } }))
        .body;
      await e.control("POST", "/clock", { advanceSeconds: 4 * 24 * 3600 });
      const expired = await e.control("POST", `/invites/${late.id}/accept`);
      expect(expired.body).toMatchObject({ code: "expired" });
    });
  });

  it("keeps a request log of API requests (not of the control plane) and clears it", async () => {
    await withEmulator(async (e) => {
      await e.control("DELETE", "/requests");
      await e.call("GET", `${e.org}/members/?limit=1`);
      await e.call("POST", `${e.org}/domains/`, { body: { domain: "BAD" } });
      const log = z.array(RequestLogEntrySchema).parse((await e.control("GET", "/requests")).body);
      expect(log).toHaveLength(2);
      expect(log[0]).toMatchObject({
        method: "GET",
        path: `${e.org}/members/`,
        query: { limit: "1" },
        status: 200,
      });
      expect(log[1]).toMatchObject({ method: "POST", path: `${e.org}/domains/`, status: 400 });
      expect(Number.isNaN(Date.parse(log[0]?.at ?? ""))).toBe(false);
      expect((await e.control("DELETE", "/requests")).status).toBe(204);
      expect((await e.control("GET", "/requests")).body).toEqual([]);
    });
  });
});

describe("fault injection", () => {
  it("injects statuses with Retry-After, limited by times and method, removable by id or all", async () => {
    await withEmulator(async (e) => {
      const path = `${e.org}/members/`;
      const fault = await e.control("POST", "/faults", {
        path: "/members/$",
        status: 429,
        retryAfter: 7,
        times: 2,
      });
      expect(fault.status).toBe(201);
      const first = await e.call("GET", path);
      expect(first.status).toBe(429);
      expect(first.headers["retry-after"]).toBe("7");
      expect(first.body).toEqual({
        type: "throttled_error",
        code: "throttled",
        detail: "Request was throttled. Expected available in 7 seconds.",
        attr: null,
      });
      expect((await e.call("GET", path)).status).toBe(429);
      expect((await e.call("GET", path)).status).toBe(200);
      const five = await e.control("POST", "/faults", { method: "POST", path: "/domains/$", status: 503 });
      expect((await e.call("GET", `${e.org}/domains/`)).status).toBe(200);
      const failed = await e.call("POST", `${e.org}/domains/`, { body: { domain: "f.example.com" } });
      expect(failed.status).toBe(503);
      expect(failed.body).toMatchObject({ type: "server_error" });
      expect((await e.call("GET", `${e.org}/domains/`)).body.count).toBe(0);
      expect((await e.control("DELETE", `/faults/${five.body.id}`)).status).toBe(204);
      expect((await e.control("DELETE", `/faults/${five.body.id}`)).status).toBe(404);
      expect((await e.call("POST", `${e.org}/domains/`, { body: { domain: "f.example.com" } })).status).toBe(
        201,
      );
      await e.control("POST", "/faults", { path: ".*", status: 500, probability: 0 });
      expect((await e.call("GET", path)).status).toBe(200);
      await e.control("POST", "/faults", { path: ".*", status: 502 });
      expect((await e.call("GET", path)).status).toBe(502);
      expect((await e.control("DELETE", "/faults")).status).toBe(204);
      expect((await e.call("GET", path)).status).toBe(200);
      expect((await e.control("POST", "/faults", { path: "(" })).body).toMatchObject({ attr: "path" });
    });
  });

  it("reset destroys the connection before the write; dropResponse applies the write, then drops", async () => {
    await withEmulator(async (e) => {
      const url = `${e.url}${e.project}/dashboards/`;
      const post = (name: string) =>
        request(url, {
          method: "POST",
          headers: { authorization: `Bearer ${e.apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ name }),
        });
      await e.control("POST", "/faults", { method: "POST", path: "/dashboards/$", reset: true, times: 1 });
      await expect(post("reset")).rejects.toThrow();
      await e.control("POST", "/faults", {
        method: "POST",
        path: "/dashboards/$",
        dropResponse: true,
        times: 1,
      });
      await expect(post("dropped")).rejects.toThrow();
      const names = (await e.call("GET", `${e.project}/dashboards/`)).body.results.map(
        (d: { name: string }) => d.name,
      );
      expect(names).toEqual(["dropped"]);
      const log = (await e.control("GET", "/requests")).body as { method: string; status: number }[];
      expect(log.filter((r) => r.method === "POST").map((r) => r.status)).toEqual([0, 201]);
      expect((await post("fine")).statusCode).toBe(201);
    });
  });

  it("delays responses (a client timeout shorter than the delay fires)", async () => {
    await withEmulator(async (e) => {
      await e.control("POST", "/faults", { path: "/members/$", delayMs: 1500, times: 1 });
      await expect(
        request(`${e.url}${e.org}/members/`, {
          headers: { authorization: `Bearer ${e.apiKey}` },
          headersTimeout: 100,
        }),
      ).rejects.toThrow(/timeout/i);
      expect((await e.call("GET", `${e.org}/members/`)).status).toBe(200);
    });
  });
});

describe("state file and options", () => {
  it("persists the world to the state file and loads it on the next start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "posthog-emulator-"));
    const stateFile = join(dir, "state.json");
    try {
      const first = await startTestEmulator({ stateFile });
      await first.call("POST", `${first.project}/dashboards/`, { body: { name: "Persisted" } });
      await first.close();
      expect(readFileSync(stateFile, "utf8")).not.toContain(first.apiKey);
      const second = await startTestEmulator({ stateFile });
      const names = (await second.call("GET", `${second.project}/dashboards/`)).body.results.map(
        (d: { name: string }) => d.name,
      );
      expect(names).toEqual(["Persisted"]);
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("validates options and honours a given seed key", async () => {
    await expect(startEmulator({ port: -1 })).rejects.toThrow();
    await expect(startEmulator({ apiKey: "not-a-key" })).rejects.toThrow(/phx_/);
    const apiKey = "phx_fixedTestKey0123456789";
    await withEmulator(
      async (e) => {
        expect(e.apiKey).toBe(apiKey);
        expect((await e.call("GET", `${e.org}/members/`)).status).toBe(200);
      },
      { apiKey },
    );
  });
});
