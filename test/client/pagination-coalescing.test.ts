// Pagination, coalescing of identical GETs, shared list reads for find(), and the client-side rate limit,
// all counted from the emulator's request log.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostHogClient, RateLimitedError } from "../../provider/client";
import { clearLog, clientFor, control, type Emulator, fault, startTestEmulator } from "./helpers";

let emu: Emulator;
let client: PostHogClient;

beforeAll(async () => {
  emu = await startTestEmulator();
  client = clientFor(emu);
});
afterAll(async () => {
  await emu?.close();
});

const offsets = (log: { query: unknown }[]) =>
  log.map((r) => {
    const q = r.query;
    const params =
      typeof q === "string" ? new URLSearchParams(q) : new URLSearchParams(q as Record<string, string>);
    return `${params.get("limit")}@${params.get("offset") ?? 0}`;
  });

describe("pagination", () => {
  it("iterate() and all() follow next across pages", async () => {
    for (let i = 0; i < 7; i++) await client.dashboards.create({ body: { name: `page-${i}` } });
    const total = (await client.dashboards.list()).count;
    expect(total).toBeGreaterThanOrEqual(7);

    await clearLog(emu);
    const seen: number[] = [];
    for await (const d of client.dashboards.iterate({ limit: 3 })) seen.push(d.id);
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
    const log = (await emu.requests()).filter((r) => r.path.endsWith("/dashboards/"));
    expect(log).toHaveLength(Math.ceil(total / 3));
    expect(offsets(log).slice(0, 3)).toEqual(["3@0", "3@3", "3@6"]);

    const all = await client.dashboards.all({ limit: 3 });
    expect(all.map((d) => d.id)).toEqual(seen);
    const page2 = await client.dashboards.list({ limit: 3, offset: 3 });
    expect(page2.results.map((d) => d.id)).toEqual(seen.slice(3, 6));
    expect(page2.previous).toEqual(expect.any(String));
  });
});

describe("coalescing", () => {
  it("concurrent identical GETs share one request", async () => {
    const d = await client.dashboards.create({ body: { name: "shared read" } });
    await clearLog(emu);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => client.dashboards.retrieve({ id: d.id })),
    );
    expect(results.every((r) => r.id === d.id)).toBe(true);
    // each caller gets its own object, nested ones included: changing one result changes no other
    expect(results[0]).not.toBe(results[1]);
    expect(results[0]?.created_by).not.toBe(results[1]?.created_by);
    (results[0] as { name: string }).name = "changed by one caller";
    expect(results[1]?.name).toBe("shared read");
    expect((await emu.requests()).filter((r) => r.method === "GET")).toHaveLength(1);
  });

  it("a GET sent after a write never joins a GET that started before it (no stale read after a create)", async () => {
    // The first list read is held by the emulator for a while; a create completes meanwhile.
    await fault(emu, { method: "GET", path: "/dashboards/$", delayMs: 400, times: 1 });
    await clearLog(emu);
    const early = client.dashboards.all();
    await new Promise((r) => setTimeout(r, 100)); // the delayed list read is in flight
    const made = await client.dashboards.create({ body: { name: "created during a slow list read" } });
    const after = await client.dashboards.all();
    expect(after.map((d) => d.id)).toContain(made.id);
    await early;
    const lists = (await emu.requests()).filter((r) => r.method === "GET" && r.path.endsWith("/dashboards/"));
    expect(lists).toHaveLength(2); // the read after the create was sent on its own
  });

  it("find() on N members costs about N/100 list requests, concurrent or sequential, across clients", async () => {
    for (let i = 0; i < 120; i++) {
      await control(emu, "POST", "/_emulator/users", { email: `bulk${i}@example.com`, level: 1 });
    }
    const fresh = clientFor(emu);
    const members = await fresh.members.all();
    expect(members.length).toBeGreaterThanOrEqual(120);
    const pages = Math.ceil(members.length / 100);

    await clearLog(emu);
    const concurrent = await Promise.all(members.map((m) => fresh.members.find({ userUuid: m.user.uuid })));
    expect(concurrent.map((m) => m?.id)).toEqual(members.map((m) => m.id));
    // sequential finds, each through a new client (the provider creates one per operation): same shared read
    for (const m of members.slice(0, 30)) {
      expect((await clientFor(emu).members.find({ email: m.user.email }))?.id).toBe(m.id);
    }
    const listReads = (await emu.requests()).filter((r) => r.path.endsWith("/members/"));
    expect(listReads).toHaveLength(pages);

    // a write through the client drops the shared read: the next find sees the change
    const target = members.find((m) => m.level === 1);
    if (!target) throw new Error("no plain member");
    await fresh.members.update({ userUuid: target.user.uuid, body: { level: 8 } });
    expect((await fresh.members.find({ userUuid: target.user.uuid }))?.level).toBe(8);
    expect((await emu.requests()).filter((r) => r.path.endsWith("/members/"))).toHaveLength(2 * pages);
  });

  it("find() on invites and collaborators is served from one shared list read too", async () => {
    const fresh = clientFor(emu);
    for (let i = 0; i < 5; i++)
      await fresh.invites.create({ body: { target_email: `shared${i}@example.com` } });
    await clearLog(emu);
    const found = await Promise.all(
      Array.from({ length: 5 }, (_, i) => fresh.invites.find({ email: `shared${i}@example.com` })),
    );
    expect(found.every(Boolean)).toBe(true);
    expect((await emu.requests()).filter((r) => r.path.endsWith("/invites/"))).toHaveLength(1);

    const d = await fresh.dashboards.create({ body: { name: "collab", restriction_level: 37 } });
    const plain = (await fresh.members.all()).filter((m) => m.level === 1).slice(0, 3);
    for (const m of plain)
      await fresh.collaborators.add({ dashboardId: d.id, body: { user_uuid: m.user.uuid, level: 37 } });
    await clearLog(emu);
    const collabs = await Promise.all(
      plain.map((m) => fresh.collaborators.find({ dashboardId: d.id, userUuid: m.user.uuid })),
    );
    expect(collabs.map((c) => c?.user.uuid)).toEqual(plain.map((m) => m.user.uuid));
    expect((await emu.requests()).filter((r) => r.path.endsWith("/collaborators/"))).toHaveLength(1);
  });
});

describe("client-side rate limit", () => {
  it("a burst larger than the limit never earns a 429; the excess waits (control: without it, 429s)", async () => {
    await control(emu, "POST", "/_emulator/rate-limit", { perMinute: 5, perHour: 1000 });
    try {
      // control: a key without the client-side limit gets throttled by the server
      const k1 = (await control(emu, "POST", "/_emulator/api-keys", {})) as { key: string };
      const unlimited = clientFor(emu, { apiKey: k1.key, retry: { maxAttempts: 1 } });
      await clearLog(emu);
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          unlimited.dashboards.list({ offset: i }).catch((e: unknown) => e),
        ),
      );
      expect(outcomes.filter((o) => o instanceof RateLimitedError)).toHaveLength(3);
      expect((await emu.requests()).filter((r) => r.status === 429)).toHaveLength(3);

      // with the client-side limit at the server's rate: 5 go out, 3 wait (aborted here), none is throttled
      const k2 = (await control(emu, "POST", "/_emulator/api-keys", {})) as { key: string };
      const limited = clientFor(emu, {
        apiKey: k2.key,
        rateLimit: { perMinute: 5, perHour: 1000 },
        retry: { maxTotalWaitMs: 120_000 },
      });
      await clearLog(emu);
      const ac = new AbortController();
      const burst = Array.from({ length: 8 }, (_, i) =>
        limited.dashboards.list({ offset: i, signal: ac.signal }).then(
          () => "ok",
          (e: unknown) => (e instanceof Error ? e.name : "error"),
        ),
      );
      const firstFive = await Promise.all(burst.slice(0, 5));
      expect(firstFive).toEqual(["ok", "ok", "ok", "ok", "ok"]);
      expect(limited.stats().queued).toBe(3);
      const log = await emu.requests();
      expect(log).toHaveLength(5);
      expect(log.every((r) => r.status === 200)).toBe(true);
      ac.abort();
      expect(await Promise.all(burst.slice(5))).toEqual(["AbortError", "AbortError", "AbortError"]);
      expect(await emu.requests()).toHaveLength(5);

      // a client whose wait budget is shorter than the next free slot fails fast, sending nothing
      const impatient = clientFor(emu, { apiKey: k2.key, rateLimit: { perMinute: 5, perHour: 1000 } });
      const err = await impatient.dashboards.list().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RateLimitedError);
      expect((err as RateLimitedError).clientSide).toBe(true);
      expect((err as RateLimitedError).retryAfterSeconds).toBeGreaterThan(10);
      expect((err as Error).message).toContain("no request was sent");
      expect(await emu.requests()).toHaveLength(5);
    } finally {
      await control(emu, "POST", "/_emulator/rate-limit", { enabled: false });
    }
  });
});
