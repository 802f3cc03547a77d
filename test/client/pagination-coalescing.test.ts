// Pagination, coalescing of identical GETs, shared list reads for find(), and the client-side rate limit,
// all counted from the emulator's request log.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  clientShared,
  InconsistentListError,
  type PostHogClient,
  RateLimitedError,
  UnexpectedResponseError,
} from "../../provider/client";
import {
  clearFaults,
  clearLog,
  clientFor,
  control,
  type Emulator,
  fault,
  startTestEmulator,
} from "./helpers";

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

/** The `limit@offset` of each page a list read asked for, for `count` items at `limit` a page, sorted. */
const pagesOf = (count: number, limit: number) =>
  Array.from({ length: Math.max(1, Math.ceil(count / limit)) }, (_, i) => `${limit}@${i * limit}`).sort();

describe("pagination", () => {
  it("iterate() and all() read every page once: the first, then the others by offset", async () => {
    for (let i = 0; i < 7; i++) await client.dashboards.create({ body: { name: `page-${i}` } });
    const total = (await client.dashboards.list()).count;
    expect(total).toBeGreaterThanOrEqual(7);

    await clearLog(emu);
    const seen: number[] = [];
    for await (const d of client.dashboards.iterate({ limit: 3 })) seen.push(d.id);
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
    const log = (await emu.requests()).filter((r) => r.path.endsWith("/dashboards/"));
    expect(offsets(log).sort()).toEqual(pagesOf(total, 3));
    // the first page first (it gives the count and the page step), the others after it
    expect(offsets(log)[0]).toBe("3@0");

    const all = await client.dashboards.all({ limit: 3 });
    expect(all.map((d) => d.id)).toEqual(seen);
    const page2 = await client.dashboards.list({ limit: 3, offset: 3 });
    expect(page2.results.map((d) => d.id)).toEqual(seen.slice(3, 6));
    expect(page2.previous).toEqual(expect.any(String));
  });
});

describe("pagination fails closed: pages that disagree are read again once, then InconsistentListError", () => {
  /** The dashboards list read with `limit`, with `faultSpec` armed on it: its outcome and the pages asked. */
  async function readWithFault(faultSpec: Record<string, unknown>, limit = 3) {
    await fault(emu, { method: "GET", path: "/dashboards/$", ...faultSpec });
    await clearLog(emu);
    try {
      const outcome = await client.dashboards.all({ limit }).catch((e: unknown) => e);
      const log = (await emu.requests()).filter((r) => r.path.endsWith("/dashboards/"));
      return { outcome, pages: offsets(log) };
    } finally {
      await clearFaults(emu);
    }
  }
  const listPath = () => `/api/projects/${emu.projectId}/dashboards/`;

  it("a page loop (every page's next points back to the first page): no item, the list and the loop named", async () => {
    const { outcome, pages } = await readWithFault({
      body: { next: `${emu.url}${listPath()}?limit=3&offset=0` },
    });
    expect(outcome).toBeInstanceOf(InconsistentListError);
    const e = outcome as InconsistentListError;
    expect(e.path).toBe(listPath());
    expect(e.code).toBe("inconsistent_list");
    expect(e.message).toMatch(
      new RegExp(
        `^GET ${listPath()}: the pages of the list disagree, read twice: page loop: the page at offset 0 links its next page at offset 0, not after it — `,
      ),
    );
    // the first page of each of the two reads, and nothing after a loop
    expect(pages).toEqual(["3@0", "3@0"]);
  });

  it("a count the pages do not add up to (one more than listed, on every page)", async () => {
    const total = (await client.dashboards.list()).count;
    const { outcome, pages } = await readWithFault({ body: { count: total + 1 } });
    expect(outcome).toBeInstanceOf(InconsistentListError);
    expect((outcome as Error).message).toContain(`count ${total + 1}`);
    expect(pages.sort()).toEqual([...pagesOf(total + 1, 3), ...pagesOf(total + 1, 3)].sort());
  });

  it("a count that disagrees once (the list changed during the read): read again, the whole list returned", async () => {
    const total = (await client.dashboards.list()).count;
    const { outcome, pages } = await readWithFault({ body: { count: total + 1 }, times: 1 });
    expect(Array.isArray(outcome)).toBe(true);
    expect((outcome as unknown[]).length).toBe(total);
    // the first read stopped once a page disagreed with the first page's count; the second read asked every page once
    const whole = pagesOf(total, 3);
    expect(pages.slice(-whole.length).sort()).toEqual(whole);
    expect(pages.length).toBeGreaterThan(whole.length);
  });

  it("truncated JSON on a page: UnexpectedResponseError, no list", async () => {
    const { outcome } = await readWithFault({ truncateBody: true, times: 1 });
    expect(outcome).toBeInstanceOf(UnexpectedResponseError);
    expect((outcome as Error).message).toContain(`GET ${listPath()} → 200: unexpected response shape`);
  });

  it("a dashboard made while a later page is held: the first read disagrees, the second returns every dashboard once", async () => {
    const before = await client.dashboards.all();
    expect(before.length).toBeGreaterThan(6);
    // the first page goes through, the next page asked for waits until the dashboard is made
    const hold = (await control(emu, "POST", "/_emulator/holds", {
      method: "GET",
      path: "/dashboards/$",
      times: 2,
    })) as { id: string };
    await clearLog(emu);
    const read = client.dashboards.all({ limit: 3 });
    const held = async (n: number) => {
      for (;;) {
        const h = (await control(emu, "GET", `/_emulator/holds/${hold.id}`)) as {
          hits: number;
          held: unknown[];
        };
        if (h.hits >= n && h.held.length > 0) return;
        await new Promise((r) => setImmediate(r));
      }
    };
    await held(1);
    await control(emu, "POST", `/_emulator/holds/${hold.id}/release`, {});
    await held(2);
    // a name sorted first: every dashboard after it moves one place on
    const made = await client.dashboards.create({ body: { name: "  first in the list" } });
    await control(emu, "DELETE", `/_emulator/holds/${hold.id}`);
    const all = await read;
    expect(all.map((d) => d.id).sort((a, b) => a - b)).toEqual(
      [...before.map((d) => d.id), made.id].sort((a, b) => a - b),
    );
    // read twice: the second read asked every page of the longer list once, after the first read's pages
    const pages = offsets((await emu.requests()).filter((r) => r.path.endsWith("/dashboards/")));
    const whole = pagesOf(before.length + 1, 3);
    expect(pages.slice(-whole.length).sort()).toEqual(whole);
    expect(pages.length).toBeGreaterThan(whole.length);
    await client.dashboards.update({ id: made.id, body: { deleted: true } });
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

  it("find() on N members costs about N/100 list requests, concurrent or sequential, across the clients of a run", async () => {
    for (let i = 0; i < 120; i++) {
      await control(emu, "POST", "/_emulator/users", { email: `bulk${i}@example.com`, level: 1 });
    }
    // the clients of one run: one ClientShared
    const shared = clientShared();
    const fresh = clientFor(emu, { shared });
    const members = await fresh.members.all();
    expect(members.length).toBeGreaterThanOrEqual(120);
    const pages = Math.ceil(members.length / 100);

    await clearLog(emu);
    const concurrent = await Promise.all(members.map((m) => fresh.members.find({ userUuid: m.user.uuid })));
    expect(concurrent.map((m) => m?.id)).toEqual(members.map((m) => m.id));
    // sequential finds, each through a new client of the run (the provider creates one per operation): same
    // shared read
    for (const m of members.slice(0, 30)) {
      expect((await clientFor(emu, { shared }).members.find({ email: m.user.email }))?.id).toBe(m.id);
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
      const shared = clientShared(); // limited and impatient are clients of one run: one limiter for k2
      const limited = clientFor(emu, {
        shared,
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
      const impatient = clientFor(emu, {
        shared,
        apiKey: k2.key,
        rateLimit: { perMinute: 5, perHour: 1000 },
      });
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
