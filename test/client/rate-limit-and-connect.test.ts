import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import {
  AmbiguousWriteError,
  ConnectionError,
  clientShared,
  createClient,
  RateLimiter,
  type RetryInfo,
} from "../../provider/client";
import { userAgent } from "../../provider/client/version";

/** A local port nobody listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe("RateLimiter (sliding windows, FIFO)", () => {
  it("admits `limit` requests per window and queues the rest until a slot frees; aborting dequeues", async () => {
    const limiter = new RateLimiter([{ limit: 3, windowMs: 60_000 }]);
    const ac = new AbortController();
    const order: number[] = [];
    const results = Array.from({ length: 5 }, (_, i) =>
      limiter.acquire(ac.signal).then(
        () => order.push(i),
        (e: unknown) => e,
      ),
    );
    await flush();
    expect(order).toEqual([0, 1, 2]);
    expect(limiter.queued).toBe(2);
    expect(limiter.admitted).toBe(3);
    // with two queued, the next waiter gets the slot the third send frees: a window (60 s) plus the margin away
    expect(limiter.estimateWaitMs()).toBeGreaterThan(59_000);
    expect(new RateLimiter([{ limit: 3, windowMs: 60_000 }]).estimateWaitMs()).toBe(0);
    ac.abort(new Error("stop"));
    const settled = await Promise.all(results);
    expect((settled[3] as Error).message).toBe("stop");
    expect((settled[4] as Error).message).toBe("stop");
    expect(limiter.queued).toBe(0);
    expect(limiter.admitted).toBe(3);
  });

  it("the tightest window decides, and blockUntil holds every request", async () => {
    const limiter = new RateLimiter([
      { limit: 10, windowMs: 60_000 },
      { limit: 2, windowMs: 3_600_000 },
    ]);
    let admitted = 0;
    const ac = new AbortController();
    const all = Array.from({ length: 4 }, () =>
      limiter.acquire(ac.signal).then(
        () => admitted++,
        () => undefined,
      ),
    );
    await flush();
    expect(admitted).toBe(2);
    ac.abort();
    await Promise.all(all);

    const blocked = new RateLimiter([{ limit: 100, windowMs: 60_000 }]);
    blocked.blockUntil(Date.now() + 60_000);
    const ac2 = new AbortController();
    const p = blocked.acquire(ac2.signal).then(
      () => "admitted",
      () => "aborted",
    );
    await flush();
    expect(blocked.queued).toBe(1);
    ac2.abort();
    expect(await p).toBe("aborted");
  });
});

describe("connection refused (the request provably never left)", () => {
  it("is retried for GET and for POST, then surfaces as ConnectionError with notSent", async () => {
    const port = await closedPort();
    const retries: RetryInfo[] = [];
    const client = createClient({
      apiKey: "phx_refused",
      host: `http://127.0.0.1:${port}`,
      rateLimit: false,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2, onRetry: (i) => retries.push(i) },
    });
    const get = await client.projects.list().catch((e: unknown) => e);
    expect(get).toBeInstanceOf(ConnectionError);
    expect((get as ConnectionError).errorCode).toBe("ECONNREFUSED");
    expect((get as ConnectionError).notSent).toBe(true);
    expect((get as Error).message).toContain("GET /api/organizations/@current/projects/");
    expect(retries.map((r) => r.attempt)).toEqual([1, 2]);

    retries.length = 0;
    const post = await client.domains
      .create({ body: { domain: "refused.example.com" } })
      .catch((e: unknown) => e);
    expect(post).toBeInstanceOf(ConnectionError);
    expect(post).not.toBeInstanceOf(AmbiguousWriteError);
    expect(retries.map((r) => `${r.method} ${r.reason}`)).toEqual(["POST ECONNREFUSED", "POST ECONNREFUSED"]);
    expect(client.stats().attempts).toBe(6);
  });
});

describe("what goes on the wire", () => {
  // The emulator does not log request headers, so a bare node:http listener records them here.
  it("sends Bearer auth, the package User-Agent, JSON bodies, and percent-encoded path parameters", async () => {
    const seen: { method: string | undefined; url: string | undefined; headers: object; body: string }[] = [];
    const server = createHttpServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        seen.push({ method: req.method, url: req.url, headers: req.headers, body });
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "d1", domain: "example.com" }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const shared = clientShared();
    try {
      const port = (server.address() as { port: number }).port;
      const client = createClient({
        shared,
        apiKey: "phx_wire",
        host: `http://127.0.0.1:${port}/`,
        organizationId: "org 1/2",
        rateLimit: false,
      });
      await client.domains.retrieve({ id: "../x?y" });
      await client.domains.update({ id: "d1", body: { saml_entity_id: "urn:e" } });
      const [get, patch] = seen;
      if (!get || !patch) throw new Error(`expected two requests, saw ${seen.length}`);
      const getHeaders = get.headers as Record<string, unknown>;
      expect(get.url).toBe("/api/organizations/org%201%2F2/domains/..%2Fx%3Fy/");
      expect(getHeaders.authorization).toBe("Bearer phx_wire");
      expect(getHeaders["user-agent"]).toBe(userAgent);
      expect(userAgent).toMatch(/^pulumi-posthog\/\d+\.\d+\.\d+/);
      expect(patch.method).toBe("PATCH");
      expect((patch.headers as Record<string, unknown>)["content-type"]).toBe("application/json");
      expect(JSON.parse(patch.body)).toEqual({ saml_entity_id: "urn:e" });
    } finally {
      await shared.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
