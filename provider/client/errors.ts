/**
 * Error classes of the PostHog client. Every HTTP failure is turned into exactly one of these by
 * {@link fromResponse} (an answer from the server) or {@link fromConnectionFailure} (no usable answer).
 *
 * Messages name the method, path, status, code, detail and attr of the failure, e.g.
 * `POST /api/organizations/@current/domains/ → 400 invalid_input: Please enter a valid domain (attr: domain)`.
 * They never contain the API key: the key only travels in the `Authorization` header, which no error
 * records, and any text the server echoes back goes through {@link redactSecrets} (the configured key, anything
 * shaped like a personal API key, `Bearer` credentials) BEFORE it is cut to length, so no part of a key survives.
 *
 * When the failure points at a setting (an unknown key, organization or project, a host that is not PostHog's
 * API, a closed port, TLS spoken to a plain-HTTP server…), the message ends with a hint naming the setting,
 * where its value came from (stack config or environment variable) and the host: see `diagnosis.ts`. Every message
 * then ends with the pointer to the docs section that says how to fix it, ` (see docs/<page>#<anchor>)` (docs-link.ts),
 * chosen by the class and its kind (what a 404 says is missing, the kind of connection failure…).
 */
import { docsLink, withoutDocsLink } from "./docs-link";

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
  /**
   * What to check or fix, when the failure points at a setting: e.g. "check the organization id, set by the
   * environment variable POSTHOG_ORGANIZATION_ID". Appended to the message after " — ".
   */
  hint?: string | undefined;
}

function describe(d: ErrorDetails): string {
  const head = `${d.method} ${d.path}`;
  const status = d.status === undefined ? "no response" : String(d.status);
  const code = d.code ? ` ${d.code}` : "";
  const detail = d.detail ? `: ${d.detail}` : "";
  const attr = d.attr ? ` (attr: ${d.attr})` : "";
  const hint = d.hint ? ` — ${d.hint}` : "";
  return `${head} → ${status}${code}${detail}${attr}${hint}`;
}

/**
 * Base class of every error the client throws. Carries the request and the server's error fields. The message is
 * `message` (else the request and answer, see {@link ErrorDetails}) followed by `options.docs`, the pointer of
 * {@link docsLink} (a PostHogError itself, an answer of a status no subclass takes, points at how to read one).
 */
export class PostHogError extends Error {
  readonly method: string;
  readonly path: string;
  readonly status: number | undefined;
  readonly type: string | undefined;
  readonly code: string | undefined;
  readonly detail: string | undefined;
  readonly attr: string | undefined;
  /** What to check or fix (a setting, its source, the host), when the failure points at one; else undefined. */
  readonly hint: string | undefined;

  constructor(details: ErrorDetails, message?: string, options?: { cause?: unknown; docs?: string }) {
    const docs =
      options?.docs ??
      (new.target === PostHogError ? docsLink("troubleshooting/errors.md", "reading-an-error") : "");
    super(
      `${message ?? describe(details)}${docs}`,
      options && "cause" in options ? { cause: options.cause } : {},
    );
    this.name = new.target.name;
    this.method = details.method;
    this.path = details.path;
    this.status = details.status;
    this.type = details.type;
    this.code = details.code;
    this.detail = details.detail;
    this.attr = details.attr;
    this.hint = details.hint;
  }
}

/** 400: the server rejected the request body; `attr` names the first failing field (or is undefined). */
export class ValidationError extends PostHogError {
  constructor(details: ErrorDetails) {
    super(details, undefined, { docs: docsLink("troubleshooting/errors.md", "reading-an-error") });
  }
}

/** 401: the API key is missing, unknown or revoked. */
export class UnauthenticatedError extends PostHogError {
  constructor(details: ErrorDetails) {
    super(details, undefined, {
      docs: docsLink("troubleshooting/settings-and-keys.md", "401-the-key-is-not-accepted"),
    });
  }
}

/**
 * 403: the key or its user may not do this. `missingScope` is the scope parsed from
 * "API key missing required scope 'dashboard:write'", when that is the reason.
 */
export class ForbiddenError extends PostHogError {
  readonly missingScope: string | undefined;
  constructor(details: ErrorDetails) {
    super(details, undefined, {
      docs: docsLink(
        "troubleshooting/settings-and-keys.md",
        "403-a-scope-is-missing-or-the-key-is-restricted",
      ),
    });
    this.missingScope = /missing required scope '([^']+)'/.exec(details.detail ?? "")?.[1];
  }
}

/**
 * What a 404 says is missing, from PostHog's answer:
 * - `object`: the addressed object (PostHog's error body, e.g. "Not found.", "Dashboard not found.");
 * - `organization` / `project`: the organization or project of the path ("Organization not found.",
 *   "Project not found."), i.e. a wrong `organizationId`/`projectId` or one the key cannot reach;
 * - `endpoint`: no such API route ("Endpoint not found."), e.g. a wrong path prefix in the host;
 * - `unrecognized`: a 404 without PostHog's error body (`{"type","code","detail","attr"}`): the host is
 *   probably not PostHog's API (a proxy, another server);
 * - `list`: the 404 answered a list read (members, invites, dashboards, a dashboard's collaborators, …): it says
 *   nothing of any one object in the list (set by the client's list reads, {@link asListRead}).
 * Only `object` means the object is gone; the others are configuration errors, or (`list`) a failed read.
 */
export type NotFoundTarget = "object" | "organization" | "project" | "endpoint" | "unrecognized" | "list";

/**
 * 404. `missing` says what is missing (see {@link NotFoundTarget}): only `"object"` means the addressed object
 * does not exist (or no longer does) in an organization and project the key reaches.
 */
export class NotFoundError extends PostHogError {
  readonly missing: NotFoundTarget;
  constructor(details: ErrorDetails, missing: NotFoundTarget = "object") {
    super(details, undefined, { docs: NOT_FOUND_DOCS[missing] });
    this.missing = missing;
  }
}

/** The section of each kind of 404: the settings (reaching PostHog), or objects gone. */
const NOT_FOUND_DOCS: Readonly<Record<NotFoundTarget, string>> = {
  object: docsLink("troubleshooting/gone-and-interrupted.md", "objects-gone-and-objects-not-found"),
  list: docsLink("troubleshooting/gone-and-interrupted.md", "objects-gone-and-objects-not-found"),
  organization: docsLink(
    "troubleshooting/reaching-posthog.md",
    "404-organization-not-found-project-not-found",
  ),
  project: docsLink("troubleshooting/reaching-posthog.md", "404-organization-not-found-project-not-found"),
  endpoint: docsLink(
    "troubleshooting/reaching-posthog.md",
    "404-no-such-api-endpoint-or-an-answer-that-is-not-posthogs",
  ),
  unrecognized: docsLink(
    "troubleshooting/reaching-posthog.md",
    "404-no-such-api-endpoint-or-an-answer-that-is-not-posthogs",
  ),
};

/** True for a 404 in which PostHog says that the addressed object itself does not exist (see {@link NotFoundTarget}). */
export function isObjectGone(e: unknown): e is NotFoundError {
  return e instanceof NotFoundError && e.missing === "object";
}

/** The request and answer fields of an error (no hint), to build another error about the same request. */
export function errorFields(e: PostHogError): ErrorDetails {
  return {
    method: e.method,
    path: e.path,
    status: e.status,
    type: e.type,
    code: e.code,
    detail: e.detail,
    attr: e.attr,
  };
}

/**
 * The outcome of a list read (GET of a collection: `…/members/`, `…/dashboards/`, `…/collaborators/`), with a
 * 404 that PostHog's body would call "not found" re-classed as `missing: "list"`: an object is gone only when a
 * read of that object says so (a 404 on its own URL, or a list answered with 200 that lacks it), never because
 * the list it is in could not be read. Other errors pass unchanged.
 * @throws NotFoundError with `missing: "list"` (its message names the request and what to check), or the
 *   read's own error.
 */
export async function asListRead<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (e) {
    if (!isObjectGone(e)) throw e;
    throw new NotFoundError(
      {
        ...errorFields(e),
        hint:
          e.hint ??
          "the list could not be read, which says nothing of the objects in it: nothing was marked gone and the " +
            "state was kept; check that what the list belongs to (the organization, the project, the dashboard) still " +
            "exists and that the host serves PostHog's API, then run again",
      },
      "list",
    );
  }
}

/** 405: the method is refused, e.g. DELETE of a dashboard (soft delete with PATCH `deleted: true`). */
export class MethodNotAllowedError extends PostHogError {
  constructor(details: ErrorDetails) {
    super(details, undefined, {
      docs: docsLink("troubleshooting/gone-and-interrupted.md", "objects-gone-and-objects-not-found"),
    });
  }
}

/**
 * 429: throttled. `retryAfterSeconds` comes from the `Retry-After` header, else from the body's
 * "Expected available in N seconds", else is undefined. Thrown only once retries gave up.
 */
export class RateLimitedError extends PostHogError {
  readonly retryAfterSeconds: number | undefined;
  /**
   * True when no request was sent: the client's own rate limit refused to wait that long (status undefined), or
   * PostHog throttled the same request earlier for longer than `maxRateLimitWaitMs` and that wait is not over
   * (status 429, PostHog's standing answer).
   */
  readonly clientSide: boolean;
  constructor(details: ErrorDetails, retryAfterSeconds: number | undefined, clientSide = false) {
    super(details, undefined, {
      docs: !clientSide
        ? docsLink("troubleshooting/rate-limits.md", "429-request-was-throttled")
        : details.status === undefined
          ? docsLink("troubleshooting/rate-limits.md", "client-side-rate-limit")
          : docsLink(
              "troubleshooting/rate-limits.md",
              "429-longer-than-posthogmaxratelimitwait-the-invite-budget",
            ),
    });
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
    super(details, undefined, { docs: docsLink("troubleshooting/rate-limits.md", "5xx-server-errors") });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * What kind of connection failure a {@link ConnectionError} is:
 * - `refused`, `dns`, `unreachable`, `connect-timeout`: the connection was never made (nothing was sent). Retried
 *   only while the time spent since the first attempt stays within `timeouts.connectMs`.
 * - `no-answer`: the server closed a new connection without sending a single byte (e.g. `http://` spoken to a TLS
 *   port, or a service that drops what it does not understand). Retried like the connect failures, within
 *   `timeouts.connectMs`; a POST stays ambiguous (its bytes were sent).
 * - `not-tls`: `https://` spoken to a server that does not speak TLS (e.g. `ERR_SSL_PACKET_LENGTH_TOO_LONG`).
 * - `certificate`: the server's TLS certificate is not trusted (self-signed, expired, wrong name…).
 * - `not-http`: the server answered bytes that are not HTTP (another protocol on that port).
 * - `other`: anything else (reset, closed connection, headers/body timeout): may be transient.
 * `not-tls`, `certificate` and `not-http` come from the settings, not from chance: never retried.
 */
export type ConnectionFailure =
  | "refused"
  | "dns"
  | "unreachable"
  | "connect-timeout"
  | "no-answer"
  | "not-tls"
  | "certificate"
  | "not-http"
  | "other";

/**
 * No usable response: connection refused/reset, DNS failure, a connect/headers/body timeout (`timeout` is true
 * then), TLS or HTTP not spoken by the server. `errorCode` is the Node/undici code, e.g. `ECONNREFUSED`,
 * `UND_ERR_HEADERS_TIMEOUT`, `ERR_SSL_PACKET_LENGTH_TOO_LONG` (`HTTP_PARSER_ERROR` for a non-HTTP answer).
 */
export class ConnectionError extends PostHogError {
  readonly errorCode: string | undefined;
  readonly timeout: boolean;
  /** True when the request provably never reached the server (connect phase or TLS handshake failed). */
  readonly notSent: boolean;
  /** The kind of failure (see {@link ConnectionFailure}). */
  readonly failure: ConnectionFailure;
  constructor(
    details: ErrorDetails,
    errorCode: string | undefined,
    notSent: boolean,
    cause: unknown,
    failure: ConnectionFailure = "other",
  ) {
    super(details, undefined, { cause, docs: CONNECTION_DOCS[failure] });
    this.errorCode = errorCode;
    this.timeout = TIMEOUT_CODES.has(errorCode ?? "");
    this.notSent = notSent;
    this.failure = failure;
  }
}

const CONNECTED_NOT_SPOKEN = docsLink(
  "troubleshooting/reaching-posthog.md",
  "https-against-plain-http-tls-certificates-other-protocols",
);
const NOT_CONNECTED = docsLink(
  "troubleshooting/reaching-posthog.md",
  "connection-refused-dns-unreachable-timeout",
);
/** The section of each kind of connection failure: no connection (or none that lasted), or a wrong protocol. */
const CONNECTION_DOCS: Readonly<Record<ConnectionFailure, string>> = {
  refused: NOT_CONNECTED,
  dns: NOT_CONNECTED,
  unreachable: NOT_CONNECTED,
  "connect-timeout": NOT_CONNECTED,
  "no-answer": NOT_CONNECTED,
  other: NOT_CONNECTED,
  "not-tls": CONNECTED_NOT_SPOKEN,
  certificate: CONNECTED_NOT_SPOKEN,
  "not-http": CONNECTED_NOT_SPOKEN,
};

/** Failures that come from the settings (scheme, port, certificate): retrying cannot help. */
export function isMisconfiguredConnection(e: unknown): e is ConnectionError {
  return (
    e instanceof ConnectionError &&
    (e.failure === "not-tls" || e.failure === "certificate" || e.failure === "not-http")
  );
}

/**
 * Failures where no connection ever answered: the connect phase failed (refused, DNS, unreachable, connect
 * timeout; nothing was sent) or the server closed a new connection without a byte (`no-answer`). Retried only
 * within `timeouts.connectMs`.
 */
export function isConnectFailure(e: unknown): e is ConnectionError {
  return (
    e instanceof ConnectionError &&
    (e.failure === "refused" ||
      e.failure === "dns" ||
      e.failure === "unreachable" ||
      e.failure === "connect-timeout" ||
      e.failure === "no-answer")
  );
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
      `${withoutDocsLink(cause.message)} (write outcome unknown: the request may have been applied; read the current state before retrying)`,
      { cause, docs: docsLink("troubleshooting/rate-limits.md", "write-outcome-unknown") },
    );
  }
}

/** No API key was found in the explicit options, the Pulumi config or the environment. */
export class MissingApiKeyError extends Error {
  constructor() {
    super(
      "No PostHog API key: set the Pulumi config `posthog:apiKey` (pulumi config set --secret posthog:apiKey phx_…) " +
        "or the environment variable POSTHOG_API_KEY (or pass `apiKey` to createClient)." +
        docsLink("troubleshooting/settings-and-keys.md", "no-posthog-api-key"),
    );
    this.name = "MissingApiKeyError";
  }
}

/**
 * Bad input to a client operation or to the client options, detected before any HTTP request.
 * `property` names the offending property (dot path), the message lists what is accepted, then points at the docs:
 * `docs` when given (a {@link docsLink}), else the settings' section for a setting (`posthog:<name>`,
 * `POSTHOG_<NAME>`, {@link SETTING_PROPERTIES}), the client's options and parameters' section for anything else.
 */
export class InvalidInputError extends Error {
  readonly property: string;
  constructor(property: string, message: string, docs?: string) {
    super(
      `${message}${
        docs ??
        (/^(posthog:|POSTHOG_)/.test(property) || SETTING_PROPERTIES.has(property)
          ? docsLink("troubleshooting/settings-and-keys.md", "invalid-posthoghost-and-the-other-settings")
          : docsLink("troubleshooting/input-validation.md", "invalid-options-and-parameters-of-the-client"))
      }`,
    );
    this.name = "InvalidInputError";
    this.property = property;
  }
}

/** The client options that are settings (also set by `posthog:<name>`): their errors point at the settings. */
const SETTING_PROPERTIES: ReadonlySet<string> = new Set(["host", "apiKey", "organizationId", "projectId"]);

/** The response did not match the expected wire schema (the message names the field and what was expected). */
export class UnexpectedResponseError extends PostHogError {
  constructor(details: ErrorDetails, message?: string) {
    super(details, message, {
      docs: docsLink("troubleshooting/rate-limits.md", "unexpected-response-shape"),
    });
  }
}

/**
 * A paginated list whose pages disagree with each other, twice in a row (the client reads the list again once
 * before it throws): a page loop (a `next` that points back to a page already read), a `count` that changed
 * between pages or that the pages do not add up to, a page shorter than its `next` says, an item on two pages.
 * Every page was answered 200; `detail` says what disagreed. Nothing of the read is used: a list read is whole or
 * fails (common.ts `readList`). `code` is `inconsistent_list`, `status` undefined.
 */
export class InconsistentListError extends PostHogError {
  constructor(details: ErrorDetails) {
    super(
      { ...details, code: "inconsistent_list" },
      `${details.method} ${details.path}: the pages of the list disagree, read twice: ${details.detail ?? ""} — ` +
        "objects were created or deleted while it was read, or something between the client and PostHog (a proxy " +
        "at posthog:host / POSTHOG_HOST) rewrites its pages; nothing of this read was used: run again, and check " +
        "that host if it persists",
      { docs: docsLink("troubleshooting/rate-limits.md", "the-pages-of-the-list-disagree") },
    );
  }
}

/** undici's timeout codes. */
const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);
/** Connect-phase failures by code: the request bytes were never written. */
const CONNECT_FAILURES: Readonly<Record<string, ConnectionFailure>> = {
  ECONNREFUSED: "refused",
  ENOTFOUND: "dns",
  EAI_AGAIN: "dns",
  EHOSTUNREACH: "unreachable",
  ENETUNREACH: "unreachable",
  UND_ERR_CONNECT_TIMEOUT: "connect-timeout",
};
/** OpenSSL's answers when what came back to a TLS ClientHello is not TLS (e.g. a plain-HTTP response). */
const NOT_TLS_CODES: ReadonlySet<string> = new Set([
  "ERR_SSL_PACKET_LENGTH_TOO_LONG",
  "ERR_SSL_WRONG_VERSION_NUMBER",
  "ERR_SSL_RECORD_LAYER_FAILURE",
  "ERR_SSL_UNEXPECTED_EOF_WHILE_READING",
  "ERR_SSL_HTTP_REQUEST",
]);
/** Node's codes for a certificate it does not trust. */
const CERTIFICATE_CODES: ReadonlySet<string> = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** The kind of a connection failure, from the error undici/Node gave (see {@link ConnectionFailure}). */
function connectionFailureOf(err: unknown, errorCode: string | undefined): ConnectionFailure {
  if (errorCode !== undefined) {
    const connect = CONNECT_FAILURES[errorCode];
    if (connect) return connect;
    if (NOT_TLS_CODES.has(errorCode)) return "not-tls";
    if (CERTIFICATE_CODES.has(errorCode)) return "certificate";
  }
  if ((err as { name?: unknown } | undefined)?.name === "HTTPParserError") return "not-http";
  // undici's SocketError tells what the socket carried: a connection closed before its first byte never answered.
  const socket = (err as { socket?: { bytesRead?: unknown } } | undefined)?.socket;
  if (errorCode === "UND_ERR_SOCKET" && socket?.bytesRead === 0) return "no-answer";
  return "other";
}

/** Anything shaped like a PostHog personal API key (`phx_` and URL-safe characters). */
const PERSONAL_API_KEY = /phx_[A-Za-z0-9_-]+/g;
/** The credentials of an `Authorization: Bearer …` header echoed back (up to a quote, comma, space…). */
const BEARER_CREDENTIALS = /(Bearer\s+)[^\s"'`,;\\]+/gi;
/** The mark left where a secret was. */
export const REDACTED = "[redacted]";

/**
 * `text` with every secret replaced by `[redacted]`: the configured key's value wherever it appears, anything
 * shaped like a personal API key (`phx_…`), and the credentials of an echoed `Bearer` header. Run it on the
 * WHOLE text before cutting it to length: a cut made first can split a key so that no pattern finds it.
 */
export function redactSecrets(text: string, secret?: string): string {
  let out = secret ? text.split(secret).join(REDACTED) : text;
  out = out.replace(PERSONAL_API_KEY, REDACTED);
  return out.replace(BEARER_CREDENTIALS, (_m, bearer: string) => `${bearer}${REDACTED}`);
}

/** At most `max` characters of `text` (an ellipsis marks a cut). Only for text already redacted. */
function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** Server text for a message: redacted first, then cut to `max` characters. */
function serverText(text: string | undefined, secret: string | undefined, max: number): string | undefined {
  return text === undefined ? undefined : clip(redactSecrets(text, secret), max);
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
  /** Redacted (with anything else shaped like a key) from every text taken from the body. */
  secret?: string | undefined;
  /** Returns the hint for this failure (see {@link ErrorDetails.hint}), given its fields. */
  diagnose?: ((d: ErrorDetails & { missing?: NotFoundTarget }) => string | undefined) | undefined;
}

/** PostHog's error body (drf-exceptions-hog): `{"type", "code", "detail", "attr"}`, all strings but `attr`. */
function isPostHogErrorBody(body: unknown): boolean {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return false;
  const b = body as Record<string, unknown>;
  return (
    typeof b.type === "string" && typeof b.code === "string" && typeof b.detail === "string" && "attr" in b
  );
}

/** What a 404 answer says is missing (see {@link NotFoundTarget}). */
function notFoundTarget(body: unknown): NotFoundTarget {
  if (!isPostHogErrorBody(body)) return "unrecognized";
  switch ((body as { detail: string }).detail) {
    case "Organization not found.":
      return "organization";
    case "Project not found.":
      return "project";
    case "Endpoint not found.":
      return "endpoint";
    default:
      return "object";
  }
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
  const secret = r.secret;
  // Every text taken from the body is redacted whole, then cut (never the other way round).
  if (body !== null && typeof body === "object" && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    type = serverText(str(b.type), secret, 100);
    code = serverText(str(b.code), secret, 100);
    detail = serverText(str(b.detail) ?? str(b.error) ?? (str(b.message) || undefined), secret, 1000);
    attr = serverText(str(b.attr), secret, 200);
    if (detail === undefined && Object.keys(b).length > 0)
      detail = serverText(JSON.stringify(b), secret, 500);
  } else if (typeof body === "string" && body.length > 0) {
    detail = serverText(body, secret, 500);
  } else if (Array.isArray(body)) {
    detail = serverText(JSON.stringify(body), secret, 500);
  }
  const missing = r.status === 404 ? notFoundTarget(body) : undefined;
  const fields: ErrorDetails = { method: r.method, path: r.path, status: r.status, type, code, detail, attr };
  const hint = r.diagnose?.({ ...fields, ...(missing ? { missing } : {}) });
  const details: ErrorDetails = hint ? { ...fields, hint: redactSecrets(hint, secret) } : fields;
  switch (r.status) {
    case 400:
      return new ValidationError(details);
    case 401:
      return new UnauthenticatedError(details);
    case 403:
      return new ForbiddenError(details);
    case 404:
      return new NotFoundError(details, missing);
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

/**
 * Builds the {@link ConnectionError} for a failure without a usable response (`err` from undici/Node). The
 * detail is the error's code and message, redacted; `diagnose` may add the hint (the setting to check).
 */
export function fromConnectionFailure(
  method: string,
  path: string,
  err: unknown,
  secret?: string,
  diagnose?: (d: ErrorDetails & { failure: ConnectionFailure }) => string | undefined,
): ConnectionError {
  const e = err as { code?: unknown; message?: unknown; name?: unknown } | undefined;
  const parserError = e?.name === "HTTPParserError";
  const errorCode = typeof e?.code === "string" ? e.code : parserError ? "HTTP_PARSER_ERROR" : undefined;
  const text = typeof e?.message === "string" ? e.message : String(err);
  const failure = connectionFailureOf(err, errorCode);
  const detail = serverText(`${errorCode ? `${errorCode} ` : ""}${text}`, secret, 500);
  const fields: ErrorDetails = { method, path, detail };
  const hint = diagnose?.({ ...fields, failure });
  const notSent = failure in NOT_SENT_FAILURES;
  return new ConnectionError(
    hint ? { ...fields, hint: redactSecrets(hint, secret) } : fields,
    errorCode,
    notSent,
    redactedCause(err, text, errorCode, secret),
    failure,
  );
}

/**
 * The cause kept on a ConnectionError: the original error when it carries nothing but its message, else a copy
 * with its name, code and redacted message only. undici's HTTPParserError keeps the raw bytes the server sent in
 * `data` (a server echoing the request would hand back the Authorization header), which `util.inspect` prints.
 */
function redactedCause(err: unknown, text: string, errorCode: string | undefined, secret?: string): unknown {
  if (!(err instanceof Error)) return err;
  const extra = Object.keys(err).filter(
    (k) => k !== "code" && k !== "name" && k !== "errno" && k !== "syscall",
  );
  const message = redactSecrets(text, secret);
  if (extra.length === 0 && message === text) return err;
  const copy = new Error(message);
  copy.name = err.name;
  if (errorCode !== undefined) Object.assign(copy, { code: errorCode });
  return copy;
}

/** Failures in which the request was provably never sent (the connection or its TLS handshake failed). */
const NOT_SENT_FAILURES: Readonly<Partial<Record<ConnectionFailure, true>>> = {
  refused: true,
  dns: true,
  unreachable: true,
  "connect-timeout": true,
  "not-tls": true,
  certificate: true,
};
