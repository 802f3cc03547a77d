// Retries against the emulator's fault injection. Assertions are on the emulator's request log and on the
// client's retry reports, never on elapsed time. Waits are kept tiny through the retry options.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  AmbiguousWriteError,
  ConnectionError,
  type PostHogClient,
  RateLimitedError,
  type RetryInfo,
  ServerError,
} from "../../provider/client";
import { clearFaults, clearLog, clientFor, type Emulator, fault, startTestEmulator } from "./helpers";

let emu: Emulator;
let retries: RetryInfo[];
let client: PostHogClient;

beforeAll(async () => {
  emu = await startTestEmulator();
});
afterAll(async () => {
  await emu?.close();
});
afterEach(async () => {
  await clearFaults(emu);
});

function freshClient(options: Parameters<typeof clientFor>[1] = {}): PostHogClient {
  retries = [];
  return clientFor(emu, {
    retry: {
      maxAttempts: 4,
      baseDelayMs: 1,
      maxDelayMs: 5,
      maxTotalWaitMs: 10_000,
      onRetry: (i) => retries.push(i),
    },
    ...options,
  });
}

const statuses = async (pathPart: string, method = "GET") =>
  (await emu.requests()).filter((r) => r.method === method && r.path.includes(pathPart)).map((r) => r.status);

describe("idempotent methods", () => {
  it("retry 5xx with backoff until success", async () => {
    client = freshClient();
    await clearLog(emu);
    await fault(emu, { method: "GET", path: "/dashboards/$", status: 503, times: 2 });
    const page = await client.dashboards.list();
    expect(page).toHaveProperty("results");
    expect(await statuses("/dashboards/")).toEqual([503, 503, 200]);
    expect(retries.map((r) => [r.attempt, r.reason, r.serverAdvised])).toEqual([
      [1, "503", false],
      [2, "503", false],
    ]);
    for (const r of retries) expect(r.delayMs).toBeLessThanOrEqual(5);
  });

  it("stop after maxAttempts and throw the last ServerError", async () => {
    client = freshClient();
    await clearLog(emu);
    await fault(emu, { method: "GET", path: "/members/$", status: 500 });
    const err = await client.members.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).status).toBe(500);
    expect(await statuses("/members/")).toEqual([500, 500, 500, 500]);
  });

  it("honour Retry-After on 429", async () => {
    client = freshClient();
    await clearLog(emu);
    await fault(emu, { method: "GET", path: "/projects/$", status: 429, retryAfter: 1, times: 1 });
    await client.projects.list();
    expect(await statuses("/projects/")).toEqual([429, 200]);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ reason: "429", delayMs: 1000, serverAdvised: true });
  });

  it("without Retry-After, wait the 'Expected available in N seconds' of the body; give up when over the cap", async () => {
    client = freshClient({ retry: { maxAttempts: 4, baseDelayMs: 1, maxTotalWaitMs: 100 } });
    await clearLog(emu);
    await fault(emu, { method: "GET", path: "/invites/$", status: 429, times: 1 });
    const err = await client.invites.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    const seconds = (err as RateLimitedError).retryAfterSeconds;
    expect(seconds).toBeGreaterThan(0);
    expect((err as Error).message).toMatch(/Expected available in \d+ seconds?/);
    // the advised wait exceeds maxTotalWaitMs: no second request was sent
    expect(await statuses("/invites/")).toEqual([429]);

    // within the budget, the body's advice is the wait (the emulator's fault says 1 second)
    client = freshClient();
    await clearLog(emu);
    await fault(emu, { method: "GET", path: "/invites/$", status: 429, times: 1 });
    await client.invites.list();
    expect(await statuses("/invites/")).toEqual([429, 200]);
    expect(retries).toEqual([
      expect.objectContaining({ reason: "429", delayMs: seconds ? seconds * 1000 : -1, serverAdvised: true }),
    ]);
  });

  it("retry a connection reset and a dropped response (PATCH is applied once either way)", async () => {
    client = freshClient();
    const d = await client.dashboards.create({ body: { name: "retry me" } });
    await clearLog(emu);
    await fault(emu, { method: "GET", path: `/dashboards/${d.id}/$`, reset: true, times: 1 });
    expect((await client.dashboards.retrieve({ id: d.id })).id).toBe(d.id);
    expect(retries.map((r) => r.method)).toEqual(["GET"]);
    expect(await statuses(`/dashboards/${d.id}/`)).toEqual([0, 200]); // 0 = connection reset, no answer

    await fault(emu, { method: "PATCH", path: `/dashboards/${d.id}/$`, dropResponse: true, times: 1 });
    const updated = await client.dashboards.update({ id: d.id, body: { description: "after drop" } });
    expect(updated.description).toBe("after drop");
    expect(retries.map((r) => r.method)).toEqual(["GET", "PATCH"]);
    expect(await statuses(`/dashboards/${d.id}/`, "PATCH")).toHaveLength(2); // applied, answer lost, repeated
  });

  // undici checks timeouts on a coarse timer (~0.5-1 s), so the emulator delays well beyond that
  it("a headers timeout is a retryable ConnectionError", async () => {
    client = freshClient({ timeouts: { headersMs: 100 } });
    await fault(emu, { method: "GET", path: "/domains/$", delayMs: 2_000, times: 1 });
    await client.domains.list();
    expect(retries.map((r) => r.reason)).toEqual(["UND_ERR_HEADERS_TIMEOUT"]);

    const once = freshClient({ timeouts: { headersMs: 100 }, retry: { maxAttempts: 1 } });
    await fault(emu, { method: "GET", path: "/domains/$", delayMs: 2_000, times: 1 });
    const err = await once.domains.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as ConnectionError).timeout).toBe(true);
  });
});

describe("POST", () => {
  it("is retried after a 429 (provably not processed) and creates exactly one object", async () => {
    client = freshClient();
    await clearLog(emu);
    await fault(emu, { method: "POST", path: "/domains/$", status: 429, retryAfter: 0, times: 1 });
    const created = await client.domains.create({ body: { domain: "after429.example.com" } });
    expect(created.domain).toBe("after429.example.com");
    expect(await statuses("/domains/", "POST")).toEqual([429, 201]);
    expect((await client.domains.all()).filter((d) => d.domain === "after429.example.com")).toHaveLength(1);
  });

  it("is NOT retried after a 5xx: AmbiguousWriteError carrying the ServerError", async () => {
    client = freshClient();
    await clearLog(emu);
    await fault(emu, { method: "POST", path: "/dashboards/$", status: 502, times: 1 });
    const err = await client.dashboards.create({ body: { name: "ambiguous 5xx" } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AmbiguousWriteError);
    expect((err as Error).cause).toBeInstanceOf(ServerError);
    expect((err as Error).message).toContain("502");
    expect(await statuses("/dashboards/", "POST")).toEqual([502]);
    expect(retries).toEqual([]);
  });

  it("a reset is ambiguous (the write was not applied, but the client cannot know)", async () => {
    client = freshClient();
    await fault(emu, { method: "POST", path: "/invites/$", reset: true, times: 1 });
    const err = await client.invites
      .create({ body: { target_email: "reset@example.com" } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AmbiguousWriteError);
    expect((err as Error).cause).toBeInstanceOf(ConnectionError);
    expect(await client.invites.find({ email: "reset@example.com" })).toBeUndefined();
  });

  it("a dropped response is ambiguous, and the write WAS applied: the caller must reconcile", async () => {
    client = freshClient();
    await fault(emu, { method: "POST", path: "/invites/$", dropResponse: true, times: 1 });
    const err = await client.invites
      .create({ body: { target_email: "dropped@example.com" } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AmbiguousWriteError);
    expect(retries).toEqual([]);
    expect(await client.invites.find({ email: "dropped@example.com" })).toBeDefined();
  });

  it("pause/unpause are idempotent POSTs and are retried on 5xx", async () => {
    client = freshClient();
    const [b] = await client.batchExports.all();
    if (!b) throw new Error("no batch export");
    await fault(emu, { method: "POST", path: "/pause/$", status: 500, times: 1 });
    expect(await client.batchExports.pause({ id: b.id })).toEqual({ paused: true });
    expect(retries.map((r) => r.reason)).toEqual(["500"]);
    await client.batchExports.unpause({ id: b.id });
  });
});
