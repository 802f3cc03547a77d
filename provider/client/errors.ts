/**
 * Error classes of the PostHog client. Every HTTP failure is turned into exactly one of these by
 * {@link fromResponse} (an answer from the server) or {@link fromConnectionFailure} (no usable answer).
 *
 * Messages name the method, path, status, code, detail and attr of the failure, e.g.
 * `POST /api/organizations/@current/domains/ → 400 invalid_input: Please enter a valid domain (attr: domain)`.
 * They never contain the API key: the key only travels in the `Authorization` header, which no error
 * records, and any text the server echoes back is scrubbed of it.
 */

/** The fields of PostHog's error body (`{"type","code","detail","attr"}`, drf-exceptions-hog). */
export interface ErrorDetails {
  /** HTTP method, e.g. `GET`. */
  method: string;
  /** Request path without the query string, e.g. `/api/organizations/@current/members/`. */
  path: string;
  /** HTTP status; `undefined` when no response was received. */
  status?: number | undefined;
  /** PostHog's error `type`, e.g. `validation_error`. */
  type?: string | undefined;
  /** PostHog's error `code`, e.g. `required`, `not_found`, `throttled`. */
  code?: string | undefined;
  /** Human-readable detail from the server (or a description of the connection failure). */
  detail?: string | undefined;
  /** The failing field for validation errors (nested fields joined with `__`), else `undefined`. */
  attr?: string | undefined;
}

function describe(d: ErrorDetails): string {
  const head = `${d.method} ${d.path}`;
  const status = d.status === undefined ? "no response" : String(d.status);
  const code = d.code ? ` ${d.code}` : "";
  const detail = d.detail ? `: ${d.detail}` : "";
  const attr = d.attr ? ` (attr: ${d.attr})` : "";
  return `${head} → ${status}${code}${detail}${attr}`;
}

/** Base class of every error the client throws. Carries the request and the server's error fields. */
export class PostHogError extends Error {
  readonly method: string;
  readonly path: string;
  readonly status: number | undefined;
  readonly type: string | undefined;
  readonly code: string | undefined;
  readonly detail: string | undefined;
  readonly attr: string | undefined;

  constructor(details: ErrorDetails, message?: string, options?: { cause?: unknown }) {
    super(message ?? describe(details), options);
    this.name = new.target.name;
    this.method = details.method;
    this.path = details.path;
    this.status = details.status;
    this.type = details.type;
    this.code = details.code;
    this.detail = details.detail;
    this.attr = details.attr;
  }
}

/** 400: the server rejected the request body; `attr` names the first failing field (or is undefined). */
export class ValidationError extends PostHogError {}

/** 401: the API key is missing, unknown or revoked. */
export class UnauthenticatedError extends PostHogError {}

/**
 * 403: the key or its user may not do this. `missingScope` is the scope parsed from
 * "API key missing required scope 'dashboard:write'", when that is the reason.
 */
export class ForbiddenError extends PostHogError {
  readonly missingScope: string | undefined;
  constructor(details: ErrorDetails) {
    super(details);
    this.missingScope = /missing required scope '([^']+)'/.exec(details.detail ?? "")?.[1];
  }
}

/** 404: the resource (or its organization/project) does not exist or is not visible to the key. */
export class NotFoundError extends PostHogError {}

/** 405: the method is refused, e.g. DELETE of a dashboard (soft delete with PATCH `deleted: true`). */
export class MethodNotAllowedError extends PostHogError {}

/**
 * 429: throttled. `retryAfterSeconds` comes from the `Retry-After` header, else from the body's
 * "Expected available in N seconds", else is undefined. Thrown only once retries gave up.
 */
export class RateLimitedError extends PostHogError {
  readonly retryAfterSeconds: number | undefined;
  /** True when the client's own rate limit refused to wait that long (no request was sent; status undefined). */
  readonly clientSide: boolean;
  constructor(details: ErrorDetails, retryAfterSeconds: number | undefined, clientSide = false) {
    super(details);
    this.retryAfterSeconds = retryAfterSeconds;
    this.clientSide = clientSide;
  }
}

/**
 * 5xx: the server failed. Thrown only once retries gave up (idempotent methods). `retryAfterSeconds` is the
 * `Retry-After` header when sent (PostHog sends 1 with 503 database_unavailable).
 */
export class ServerError extends PostHogError {
  readonly retryAfterSeconds: number | undefined;
  constructor(details: ErrorDetails, retryAfterSeconds?: number) {
    super(details);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * No usable response: connection refused/reset, DNS failure, or a connect/headers/body timeout
 * (`timeout` is true then). `errorCode` is the Node/undici code, e.g. `ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`.
 */
export class ConnectionError extends PostHogError {
  readonly errorCode: string | undefined;
  readonly timeout: boolean;
  /** True when the request provably never reached the server (connect phase failed). */
  readonly notSent: boolean;
  constructor(details: ErrorDetails, errorCode: string | undefined, notSent: boolean, cause: unknown) {
    super(details, undefined, { cause });
    this.errorCode = errorCode;
    this.timeout = TIMEOUT_CODES.has(errorCode ?? "");
    this.notSent = notSent;
  }
}

/**
 * A write (POST) whose outcome is unknown: the request may have been applied (e.g. the connection dropped
 * after sending, or the server answered 5xx). It is never retried automatically; the caller must reconcile
 * by reading the current state. `cause` is the underlying {@link ConnectionError} or {@link ServerError}.
 */
export class AmbiguousWriteError extends PostHogError {
  constructor(cause: PostHogError) {
    super(
      {
        method: cause.method,
        path: cause.path,
        status: cause.status,
        code: cause.code,
        detail: cause.detail,
      },
      `${cause.message} (write outcome unknown: the request may have been applied; read the current state before retrying)`,
      { cause },
    );
  }
}

/** No API key was found in the explicit options, the Pulumi config or the environment. */
export class MissingApiKeyError extends Error {
  constructor() {
    super(
      "No PostHog API key: set the Pulumi config `posthog:apiKey` (pulumi config set --secret posthog:apiKey phx_…) " +
        "or the environment variable POSTHOG_API_KEY (or pass `apiKey` to createClient).",
    );
    this.name = "MissingApiKeyError";
  }
}

/**
 * Bad input to a client operation or to the client options, detected before any HTTP request.
 * `property` names the offending property (dot path), the message lists what is accepted.
 */
export class InvalidInputError extends Error {
  readonly property: string;
  constructor(property: string, message: string) {
    super(message);
    this.name = "InvalidInputError";
    this.property = property;
  }
}

/** The response did not match the expected wire schema (the message names the field and what was expected). */
export class UnexpectedResponseError extends PostHogError {}

const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);
/** Codes of failures in the connect phase: the request bytes were never written. */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

function scrub(text: string | undefined, secret: string | undefined): string | undefined {
  if (text === undefined || !secret) return text;
  return text.split(secret).join("[redacted]");
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** Parses `Retry-After` (delta seconds or HTTP date) into seconds, or undefined. */
export function parseRetryAfter(
  header: string | string[] | undefined,
  nowMs = Date.now(),
): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === "") return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - nowMs) / 1000);
}

/** Parses the "Expected available in N seconds" of PostHog's 429 body detail, or undefined. */
export function parseExpectedAvailable(detail: string | undefined): number | undefined {
  const m = /available in (\d+(?:\.\d+)?) seconds?/i.exec(detail ?? "");
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

/** What {@link fromResponse} needs to know about a non-2xx answer. */
export interface FailedResponse {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body, raw text if not JSON, or undefined when empty. */
  body: unknown;
  /** Scrubbed from every text taken from the body. */
  secret?: string | undefined;
}

/**
 * Builds the error for a non-2xx response: 400 → ValidationError, 401 → UnauthenticatedError,
 * 403 → ForbiddenError, 404 → NotFoundError, 405 → MethodNotAllowedError, 429 → RateLimitedError,
 * ≥500 → ServerError, any other status → PostHogError.
 */
export function fromResponse(r: FailedResponse): PostHogError {
  const body = r.body;
  let type: string | undefined;
  let code: string | undefined;
  let detail: string | undefined;
  let attr: string | undefined;
  if (body !== null && typeof body === "object" && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    type = str(b.type);
    code = str(b.code);
    detail = str(b.detail) ?? str(b.error) ?? (str(b.message) || undefined);
    attr = str(b.attr);
    if (detail === undefined && Object.keys(b).length > 0) detail = JSON.stringify(b).slice(0, 500);
  } else if (typeof body === "string" && body.length > 0) {
    detail = body.slice(0, 500);
  }
  const details: ErrorDetails = {
    method: r.method,
    path: r.path,
    status: r.status,
    type,
    code,
    detail: scrub(detail, r.secret),
    attr,
  };
  switch (r.status) {
    case 400:
      return new ValidationError(details);
    case 401:
      return new UnauthenticatedError(details);
    case 403:
      return new ForbiddenError(details);
    case 404:
      return new NotFoundError(details);
    case 405:
      return new MethodNotAllowedError(details);
    case 429:
      return new RateLimitedError(
        details,
        parseRetryAfter(r.headers["retry-after"]) ?? parseExpectedAvailable(detail),
      );
    default:
      return r.status >= 500
        ? new ServerError(details, parseRetryAfter(r.headers["retry-after"]))
        : new PostHogError(details);
  }
}

/** Builds the {@link ConnectionError} for a failure without a usable response (`err` from undici/Node). */
export function fromConnectionFailure(
  method: string,
  path: string,
  err: unknown,
  secret?: string,
): ConnectionError {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  const errorCode = typeof e?.code === "string" ? e.code : undefined;
  const text = typeof e?.message === "string" ? e.message : String(err);
  const detail = scrub(`${errorCode ? `${errorCode} ` : ""}${text}`, secret);
  return new ConnectionError({ method, path, detail }, errorCode, NOT_SENT_CODES.has(errorCode ?? ""), err);
}
