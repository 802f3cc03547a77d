/**
 * The HTTP transport: one keep-alive undici Pool per origin (shared by the clients of one run: `shared.ts`),
 * Bearer auth, `User-Agent: pulumi-posthog/<version>`, JSON bodies, timeouts, retries with exponential backoff
 * and full jitter, the client-side rate limiter and coalescing of concurrent identical GETs.
 *
 * Retry rules:
 * - GET, PATCH, PUT, DELETE: retried on 429, 5xx and connection errors (including timeouts).
 * - POST: retried only when provably not processed: a 429, or a connection failure before sending
 *   (ECONNREFUSED, DNS, connect timeout). A POST that fails in any other way without a definite 4xx
 *   answer (5xx, reset, dropped response, headers/body timeout) throws {@link AmbiguousWriteError}.
 * - Connect-phase failures (refused, DNS, unreachable, connect timeout) and a new connection closed without a
 *   byte of answer are retried only while the time since the first attempt, plus the next wait, stays within
 *   `timeouts.connectMs`: a closed port fails within the connect timeout, a server restarting meanwhile is still
 *   reached.
 * - Never retried (they come from the settings): TLS spoken to a plain-HTTP server, an untrusted certificate,
 *   a server that does not answer HTTP. A POST failing so is not ambiguous (nothing PostHog could apply).
 * - The wait is the server's (`Retry-After`, else "Expected available in N seconds" of a 429 body), else
 *   `random(0, min(maxDelayMs, baseDelayMs·2^(attempt-1)))`. Retries stop after `maxAttempts` tries or
 *   when the next wait would take the total beyond `maxTotalWaitMs`; the last error is thrown.
 *
 * The host may carry a path prefix (`https://tools.example.com/posthog`): requests go to the prefix plus the
 * API path, on one pool per origin. Errors name the API path (without the prefix) and, when the failure points
 * at a setting, end with a hint naming it (see `diagnosis.ts`).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";
import { diagnoseConnection, diagnoseResponse } from "./diagnosis";
import {
  AmbiguousWriteError,
  ConnectionError,
  fromConnectionFailure,
  fromResponse,
  InvalidInputError,
  isConnectFailure,
  isMisconfiguredConnection,
  PostHogError,
  RateLimitedError,
  ServerError,
} from "./errors";
import { type RateLimiter, rateLimiterFor, scopeOf } from "./rate-limit";
import { revealApiKey, type Settings } from "./settings";
import type { ClientShared } from "./shared";
import { userAgent } from "./version";

/** HTTP methods the API uses. */
export type HttpMethod = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

/** One request: `path` is already encoded (see {@link path}); `query` values are encoded here. */
export interface HttpRequest {
  method: HttpMethod;
  path: string;
  query?: Record<string, string | number | boolean | undefined> | undefined;
  body?: unknown;
  signal?: AbortSignal | undefined;
  /** A POST that is safe to repeat (e.g. pause/unpause): retried like an idempotent method. */
  idempotent?: boolean | undefined;
}

/** A successful (2xx) response: parsed JSON body, or undefined when the body is empty. */
export interface HttpResponse {
  status: number;
  body: unknown;
}

/** The transport of one client. */
export interface Transport {
  /** Sends with retries, rate limiting and GET coalescing. Throws a {@link PostHogError} subclass. */
  send(req: HttpRequest): Promise<HttpResponse>;
  /** Requests waiting for the client-side rate limiter. */
  readonly queued: number;
  /** Total HTTP attempts made (including retries) by this transport. */
  readonly attempts: number;
  /** `sha256(key)|origin`: clients of one run with the same scope share the rate limiter and coalesced reads. */
  readonly scope: string;
}

/** The keep-alive pool of `shared` for an origin and timeouts, made on first use. */
function poolFor(shared: ClientShared, origin: string, t: Settings["timeouts"]): Pool {
  const { pools } = shared;
  const id = `${origin}|${t.connectMs}|${t.headersMs}|${t.bodyMs}`;
  let pool = pools.get(id);
  if (!pool) {
    pool = new Pool(origin, {
      connect: { timeout: t.connectMs },
      headersTimeout: t.headersMs,
      bodyTimeout: t.bodyMs,
      keepAliveTimeout: 4_000,
      pipelining: 1,
    });
    pools.set(id, pool);
  }
  return pool;
}

/** An in-flight GET: its path (without query) and its response. */
export interface InflightGet {
  path: string;
  promise: Promise<HttpResponse>;
}

/** In-flight GETs of one scope, shared by every client given `shared` with that key and origin. */
function sharedInflight(shared: ClientShared, scope: string): Map<string, InflightGet> {
  let m = shared.inflightGets.get(scope);
  if (!m) {
    m = new Map();
    shared.inflightGets.set(scope, m);
  }
  return m;
}

/**
 * A request PostHog throttled for longer than `maxRateLimitWaitMs` (kept in {@link ClientShared.throttles} per
 * `<scope> <method> <path>`): until `until` (epoch ms) the same request fails at once with these words, without
 * being sent (PostHog said it would be refused until then: the invites of a program beyond the organization's
 * invite budget cost no request each).
 */
export interface Throttle {
  until: number;
  detail: string;
  hint: string;
}

/** What PostHog allows, named in the error of a 429 whose wait is too long. */
function budgetOf(req: HttpRequest): string {
  return req.method === "POST" && /\/invites\/(bulk\/)?$/.test(req.path)
    ? "PostHog allows an organization 50 invites an hour and 200 a day, counted per invite: the invites not sent " +
        "now are sent by the next `pulumi up` once that time has passed, none twice"
    : "PostHog allows a personal API key 480 requests a minute and 4,800 an hour";
}

/**
 * The error for a 429 whose wait (`waitSeconds`, as PostHog named it) is longer than the client waits out:
 * the wait, the time it frees (UTC), what PostHog allows and the setting to raise. Nothing was applied.
 */
function tooLongThrottle(
  req: HttpRequest,
  error: RateLimitedError,
  waitSeconds: number,
  settings: Settings,
): RateLimitedError {
  const at = new Date(Date.now() + waitSeconds * 1000);
  const when = `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  const detail =
    `PostHog throttled this request for ${formatWait(waitSeconds)} (until about ${when}), longer than ` +
    `posthog:maxRateLimitWait (${formatWait(settings.maxRateLimitWaitMs / 1000)}): not waiting; nothing was applied`;
  const hint = `${budgetOf(req)}. Run again after ${when}, or raise posthog:maxRateLimitWait (POSTHOG_MAX_RATE_LIMIT_WAIT)`;
  return new RateLimitedError(
    { method: req.method, path: req.path, status: 429, type: error.type, code: error.code, detail, hint },
    waitSeconds,
  );
}

/** `90 s`, `12 min`, `2 h 5 min`. */
function formatWait(seconds: number): string {
  const s = Math.ceil(seconds);
  if (s <= 120) return `${s} s`;
  const minutes = Math.ceil(s / 60);
  return minutes < 120 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/**
 * Encodes one path segment: percent-encodes everything but `@` (so `@current` stays readable), and
 * rejects empty, `.` and `..` segments.
 */
export function encodeSegment(value: string | number, name = "path parameter"): string {
  const s = typeof value === "number" || typeof value === "string" ? String(value) : "";
  if (s === "" || s === "." || s === ".." || s === "NaN") {
    throw new InvalidInputError(name, `Invalid ${name}: expected a non-empty id (string or number)`);
  }
  return encodeURIComponent(s).replace(/%40/g, "@");
}

/**
 * Tagged template that encodes every interpolated value as a path segment: path`/a/${id}/`.
 * @throws InvalidInputError for an empty, `.`/`..` or non-string/number value (before any request).
 */
export function path(strings: TemplateStringsArray, ...values: (string | number)[]): string {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as string | number;
    const plain = typeof v === "number" ? Number.isFinite(v) : typeof v === "string" && SAFE_SEGMENT.test(v);
    out +=
      (plain ? String(v) : encodeSegment(v, `path parameter ${i + 1} of ${strings.join("{}")}`)) +
      strings[i + 1];
  }
  return out;
}

/** Segments made only of unreserved characters (and `@`) need no encoding; `.`/`..` are excluded. */
const SAFE_SEGMENT = /^(?!\.{1,2}$)[A-Za-z0-9_.~@-]+$/;

function buildUrl(p: string, query: HttpRequest["query"]): string {
  if (!query) return p;
  let qs = "";
  for (const k in query) {
    const v = query[k];
    if (v !== undefined) qs += `${qs ? "&" : ""}${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`;
  }
  return qs ? `${p}${p.includes("?") ? "&" : "?"}${qs}` : p;
}

/** A response with a deep copy of its body (JSON values only, as parsed from the wire). */
function copyOf(res: HttpResponse): HttpResponse {
  return { status: res.status, body: res.body === undefined ? undefined : structuredClone(res.body) };
}

/** True when a write to `write` may change what a GET of `read` answers (same object, or its list). */
function pathsOverlap(write: string, read: string): boolean {
  return write.startsWith(read) || read.startsWith(write);
}

function isIdempotent(req: HttpRequest): boolean {
  return req.method !== "POST" || req.idempotent === true;
}

/**
 * What one transport sends with, made once by {@link createTransport} and handed to each stage: the settings, the
 * API key in clear (the Bearer token, and what errors are scrubbed of), the scope, the origin and path prefix, the
 * shared rate limiter and in-flight GETs, the headers, and the count of attempts.
 */
interface Sender {
  settings: Settings;
  /** What this client shares with the other clients of its run (its pools and throttles are kept there). */
  shared: ClientShared;
  /** The API key in clear: sent as the Bearer token, and scrubbed from every error. */
  key: string;
  /** `sha256(key)|origin` (see {@link Transport.scope}). */
  scope: string;
  /** The path prefix of a self-hosted PostHog served under one (e.g. `/posthog`), else "". */
  prefix: string;
  /** The origin requests go to: its pool in `shared` is looked up per attempt (`shared.close()` may drop it). */
  origin: string;
  /** The client-side rate limiter of the scope; undefined when `rateLimit` is false. */
  limiter: RateLimiter | undefined;
  /** Headers of a request without a body, and of one with a JSON body. */
  baseHeaders: Record<string, string>;
  jsonHeaders: Record<string, string>;
  /** In-flight GETs of the scope (see {@link sharedInflight}). */
  inflight: Map<string, InflightGet>;
  /** HTTP attempts made so far (retries included). */
  attempts: number;
}

/** The {@link Sender} of `settings`: its pools, rate limiter and in-flight GETs are those of its scope in `shared`. */
function senderFor(settings: Settings, shared: ClientShared): Sender {
  const key = revealApiKey(settings.apiKey);
  const scope = scopeOf(key, settings.host);
  const base = new URL(settings.host);
  const baseHeaders = {
    authorization: `Bearer ${key}`,
    "user-agent": userAgent,
    accept: "application/json",
  };
  return {
    settings,
    shared,
    key,
    scope,
    prefix: base.pathname.replace(/\/+$/, ""),
    origin: base.origin,
    limiter: settings.rateLimit === false ? undefined : rateLimiterFor(shared, scope, settings.rateLimit),
    baseHeaders,
    jsonHeaders: { ...baseHeaders, "content-type": "application/json" },
    inflight: sharedInflight(shared, scope),
    attempts: 0,
  };
}

/** The retries of one request: what every attempt sends, and the time spent so far. */
interface RetryRun {
  req: HttpRequest;
  /** The path with its query string. */
  url: string;
  /** The JSON body, serialized once (every attempt sends the same bytes), or null. */
  payload: string | null;
  /** When the first attempt started (epoch ms). */
  started: number;
  /** Milliseconds slept between attempts. */
  slept: number;
  /** Milliseconds spent waiting for the client-side rate limiter (added to by {@link waitForSlot}). */
  limiterWait: { ms: number };
  /** `<scope> <method> <path>`: the key of {@link ClientShared.throttles}. */
  throttleKey: string;
}

/**
 * Waits for the next slot of the client-side rate limiter when it comes within `budgetMs` (milliseconds), adding the
 * time spent to `waited.ms`.
 * @throws RateLimitedError (client side: no request was sent) when the next slot is beyond `budgetMs`
 */
async function waitForSlot(
  s: Sender,
  limiter: RateLimiter,
  req: HttpRequest,
  budgetMs: number,
  waited: { ms: number },
): Promise<void> {
  const now = Date.now();
  const estimate = limiter.estimateWaitMs(now);
  if (estimate > budgetMs) {
    const limits = s.settings.rateLimit as { perMinute: number; perHour: number };
    const seconds = Math.ceil(estimate / 1000);
    throw new RateLimitedError(
      {
        method: req.method,
        path: req.path,
        code: "client_rate_limit",
        detail:
          `client-side rate limit of ${limits.perMinute}/minute and ${limits.perHour}/hour for this key: ` +
          `next slot in about ${seconds} s, beyond retry.maxTotalWaitMs (no request was sent)`,
      },
      seconds,
      true,
    );
  }
  await limiter.acquire(req.signal);
  waited.ms += Date.now() - now;
}

/**
 * One attempt of `run`. It may wait for the client-side rate limit as long as the retries' time left
 * (`retry.maxTotalWaitMs` less the time slept and waited), else throws a client-side RateLimitedError without
 * sending.
 * @returns the 2xx answer; @throws the PostHogError of any other answer or of the connection
 */
async function once(s: Sender, run: RetryRun): Promise<HttpResponse> {
  const { req, url, payload } = run;
  const budgetMs = s.settings.retry.maxTotalWaitMs - run.slept - run.limiterWait.ms;
  if (s.limiter && !s.limiter.tryAcquire()) await waitForSlot(s, s.limiter, req, budgetMs, run.limiterWait);
  s.attempts++;
  let res: Awaited<ReturnType<Pool["request"]>>;
  let text: string;
  try {
    res = await poolFor(s.shared, s.origin, s.settings.timeouts).request({
      method: req.method,
      path: s.prefix + url,
      headers: payload === null ? s.baseHeaders : s.jsonHeaders,
      body: payload,
      signal: req.signal ?? null,
    });
    text = await res.body.text();
  } catch (err) {
    if (req.signal?.aborted) throw err;
    throw fromConnectionFailure(req.method, req.path, err, s.key, (f) => diagnoseConnection(s.settings, f));
  }
  return answerOf(s, req, res, text);
}

/**
 * The answer of `req` from its status, headers and body text (JSON when it parses, else the text; undefined when
 * empty).
 * @returns the 2xx answer; @throws the PostHogError of any other status (see `fromResponse`)
 */
function answerOf(
  s: Sender,
  req: HttpRequest,
  res: Awaited<ReturnType<Pool["request"]>>,
  text: string,
): HttpResponse {
  let body: unknown;
  if (text.length > 0) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (res.statusCode >= 200 && res.statusCode < 300) return { status: res.statusCode, body };
  throw fromResponse({
    method: req.method,
    path: req.path,
    status: res.statusCode,
    headers: res.headers,
    body,
    secret: s.key,
    diagnose: (f) => {
      const location = res.headers.location;
      return diagnoseResponse(s.settings, {
        ...f,
        location: Array.isArray(location) ? location[0] : location,
      });
    },
  });
}

/**
 * The retries of `req`, before its first attempt.
 * @throws RateLimitedError (client side: not sent) when PostHog said earlier that this request is refused until a
 *   time not yet reached (see {@link Throttle})
 */
function startRetries(s: Sender, req: HttpRequest): RetryRun {
  const url = buildUrl(req.path, req.query);
  // Serialized once: every attempt sends the same bytes, whatever the caller does with its object meanwhile.
  const payload = req.body === undefined ? null : JSON.stringify(req.body);
  const started = Date.now();
  const throttleKey = `${s.scope} ${req.method} ${req.path}`;
  const throttled = s.shared.throttles.get(throttleKey);
  if (throttled && throttled.until > started) {
    // PostHog said this request is refused until then: fail without sending it.
    throw new RateLimitedError(
      {
        method: req.method,
        path: req.path,
        // the answer PostHog gave this request earlier, standing until `until` (clientSide: not sent now)
        status: 429,
        code: "throttled",
        detail: `not sent: ${throttled.detail}`,
        hint: throttled.hint,
      },
      Math.ceil((throttled.until - started) / 1000),
      true,
    );
  }
  return { req, url, payload, started, slept: 0, limiterWait: { ms: 0 }, throttleKey };
}

/** The wait PostHog advised for a retry, in seconds (`Retry-After` or a 429's body), if any. */
function advisedSecondsOf(error: PostHogError): number | undefined {
  return error instanceof RateLimitedError || error instanceof ServerError
    ? error.retryAfterSeconds
    : undefined;
}

/**
 * Throws `error` when no retry may follow it: a connection misconfigured by the settings, or an error the request's
 * method may not retry (a write that may have been applied becomes an AmbiguousWriteError).
 */
function throwUnlessRetryable(req: HttpRequest, error: PostHogError): void {
  if (isMisconfiguredConnection(error)) throw error; // from the settings: neither retried nor ambiguous
  const retryable =
    error instanceof RateLimitedError ||
    (error instanceof ConnectionError && (isIdempotent(req) || error.notSent)) ||
    (error instanceof ServerError && isIdempotent(req));
  if (!retryable) {
    if (!isIdempotent(req) && (error instanceof ServerError || error instanceof ConnectionError)) {
      throw new AmbiguousWriteError(error);
    }
    throw error;
  }
}

/**
 * The wait before the attempt after `attempt`, which failed with `error`, in milliseconds: PostHog's, else a full
 * jitter backoff.
 * @throws `error` (or AmbiguousWriteError) when it is not retried, when `maxAttempts` or `maxTotalWaitMs` is
 *   reached, or when a connection is still refused at the connect timeout; a RateLimitedError naming the budget
 *   (remembered in {@link ClientShared.throttles}) when PostHog's wait is beyond `maxRateLimitWaitMs`
 */
function retryDelayMs(s: Sender, run: RetryRun, error: PostHogError, attempt: number): number {
  const { maxAttempts, maxTotalWaitMs, baseDelayMs, maxDelayMs } = s.settings.retry;
  const waited = run.slept + run.limiterWait.ms;
  throwUnlessRetryable(run.req, error);
  const advisedSeconds = advisedSecondsOf(error);
  const delayMs =
    advisedSeconds !== undefined
      ? Math.ceil(advisedSeconds * 1000)
      : Math.floor(Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1)));
  if (
    error instanceof RateLimitedError &&
    advisedSeconds !== undefined &&
    delayMs > s.settings.maxRateLimitWaitMs
  ) {
    const tooLong = tooLongThrottle(run.req, error, advisedSeconds, s.settings);
    s.shared.throttles.set(run.throttleKey, {
      until: Date.now() + delayMs,
      detail: tooLong.detail ?? "",
      hint: tooLong.hint ?? "",
    });
    throw tooLong;
  }
  if (attempt >= maxAttempts || waited + delayMs > maxTotalWaitMs) throw error;
  // No connection at all: keep trying only within the connect timeout (a closed port fails within it).
  if (isConnectFailure(error) && Date.now() - run.started + delayMs > s.settings.timeouts.connectMs)
    throw error;
  return delayMs;
}

/**
 * Before waiting `delayMs` to retry after `attempt` failed with `error`: a 429 blocks the scope's rate limiter for
 * that long, `retry.onRetry` is told, and the wait counts in `run.slept`.
 */
function announceRetry(
  s: Sender,
  run: RetryRun,
  error: PostHogError,
  attempt: number,
  delayMs: number,
): void {
  const { req } = run;
  if (s.limiter && error instanceof RateLimitedError) s.limiter.blockUntil(Date.now() + delayMs);
  s.settings.retry.onRetry?.({
    method: req.method,
    path: req.path,
    attempt,
    delayMs,
    reason:
      error.status !== undefined
        ? String(error.status)
        : ((error as ConnectionError).errorCode ?? "connection"),
    serverAdvised: advisedSecondsOf(error) !== undefined,
  });
  run.slept += delayMs;
}

/**
 * Sends `req`, retrying by the rules of this module (see its docstring).
 * @returns the 2xx answer; @throws the last PostHogError, AmbiguousWriteError, a client-side RateLimitedError, or
 *   the abort of `req.signal`
 */
async function withRetries(s: Sender, req: HttpRequest): Promise<HttpResponse> {
  const run = startRetries(s, req);
  for (let attempt = 1; ; attempt++) {
    let error: PostHogError;
    try {
      return await once(s, run);
    } catch (err) {
      if (!(err instanceof PostHogError)) throw err; // aborted, or a programming error
      if (err instanceof RateLimitedError && err.clientSide) throw err;
      error = err;
    }
    const delayMs = retryDelayMs(s, run, error, attempt);
    announceRetry(s, run, error, attempt, delayMs);
    if (delayMs > 0) await sleep(delayMs, undefined, req.signal ? { signal: req.signal } : undefined);
  }
}

/**
 * Sends `req` with {@link withRetries}, sharing a GET (without a signal) with an identical one in flight in the
 * scope: a joiner gets its own copy of the answer. A write, once settled, stops the in-flight GETs of its path or
 * its list from being shared.
 */
function sendShared(s: Sender, req: HttpRequest): Promise<HttpResponse> {
  const { inflight } = s;
  if (req.method !== "GET") {
    // A GET sent after this write settles must not join a GET that started before it (it could miss
    // the write): once the write settles, in-flight GETs of the same path or its list stop being shared.
    const forget = () => {
      for (const [id, entry] of inflight) if (pathsOverlap(req.path, entry.path)) inflight.delete(id);
    };
    return withRetries(s, req).finally(forget);
  }
  if (req.signal) return withRetries(s, req);
  const id = buildUrl(req.path, req.query);
  const pending = inflight.get(id);
  // A joiner gets its own copy of the body: zod's output (parseResponse) shares the values it does not
  // check (a loose object's unknown keys, `z.unknown()` fields) with the body it was given.
  if (pending) return pending.promise.then(copyOf);
  const entry = { path: req.path, promise: withRetries(s, req) };
  entry.promise
    .finally(() => {
      if (inflight.get(id) === entry) inflight.delete(id);
    })
    .catch(() => {});
  inflight.set(id, entry);
  return entry.promise;
}

/**
 * Creates the transport for `settings`: its pool, rate limiter, in-flight GETs and throttles are those of `shared`
 * (the clients of one run share them).
 */
export function createTransport(settings: Settings, shared: ClientShared): Transport {
  const s = senderFor(settings, shared);
  return {
    send: (req) => sendShared(s, req),
    get queued() {
      return s.limiter?.queued ?? 0;
    },
    scope: s.scope,
    get attempts() {
      return s.attempts;
    },
  };
}
