/**
 * What the clients of one run share: {@link ClientShared}, made by {@link clientShared} and handed to
 * `createClient({ shared })`. The client modules keep no state of their own between clients: whatever one client
 * must see of another (a connection, a request in flight, a limit reached) lives here.
 */
import type { Pool } from "undici";
import type { AccessProof } from "./access";
import type { SharedLists } from "./common";
import type { InviteBatch } from "./invites";
import type { RateLimiter } from "./rate-limit";
import type { InflightGet, Throttle } from "./transport";

/**
 * The state the clients of one run share (a provider host, one `pulumi-posthog export` or `audit`, one program's
 * lookups), so that N clients of one key cost what one would. Every map but `pools` is keyed by the client's scope
 * (`sha256(key)|origin`, see `scopeOf`), so clients of different keys or hosts given one object still share nothing
 * but connections to the same origin. What is shared, and why:
 * - `pools`: the keep-alive connection pools, one per origin and timeouts: no new TCP/TLS connection per client;
 * - `inflightGets`: the GETs in flight, so concurrent identical GETs of any of the clients cost one request;
 * - `throttles`: the requests PostHog refused (429) for longer than `maxRateLimitWaitMs`, until when: the same
 *   request from another client fails at once instead of being sent (e.g. invites beyond the organization's budget);
 * - `findLists`: the list reads behind `find()` (members, invites, collaborators: PostHog has no GET of one), shared
 *   by concurrent and recent finds for `findCacheMs`, dropped by a write through any of the clients;
 * - `accessChecks`: the outcomes of `checkAccess({ once: true })`, so the settings are proved once per run, per key,
 *   host, organization and project, not once per client;
 * - `inviteBatches`: the invites `createCoalesced` is collecting, so the invites the engine creates together through
 *   different clients go in one bulk request;
 * - `rateLimiters`: the client-side rate limiters, one per scope and limits, so the clients of one key keep PostHog's
 *   limits together instead of each on its own.
 *
 * The client modules read and write these maps; nothing else should.
 */
export interface ClientShared {
  readonly kind: "posthog-client-shared";
  /** Keep-alive connection pools, by `<origin>|<connectMs>|<headersMs>|<bodyMs>`. */
  readonly pools: Map<string, Pool>;
  /** GETs in flight, by scope, then by path with its query string. */
  readonly inflightGets: Map<string, Map<string, InflightGet>>;
  /** Requests PostHog throttled beyond `maxRateLimitWaitMs`, by `<scope> <method> <path>`. */
  readonly throttles: Map<string, Throttle>;
  /** List reads shared by `find()`, by scope, then by list path. */
  readonly findLists: Map<string, SharedLists>;
  /** Outcomes of `checkAccess({ once: true })`, by scope, organization and project (JSON). */
  readonly accessChecks: Map<string, Promise<AccessProof>>;
  /** Invites being collected by `createCoalesced`, by `<scope> <organization>`. */
  readonly inviteBatches: Map<string, InviteBatch>;
  /** Client-side rate limiters, by `<scope>|<perMinute>|<perHour>`. */
  readonly rateLimiters: Map<string, RateLimiter>;
  /**
   * Closes the connection pools (e.g. at the end of a script or test run); a client that sends again opens new
   * ones. Nothing else is dropped.
   */
  close(): Promise<void>;
}

/**
 * A new {@link ClientShared}, empty: hand it to every client of one run (`createClient({ shared })`). A client made
 * without one makes its own, so two clients made without one share nothing. No request, no connection.
 */
export function clientShared(): ClientShared {
  const pools = new Map<string, Pool>();
  return {
    kind: "posthog-client-shared",
    pools,
    inflightGets: new Map(),
    throttles: new Map(),
    findLists: new Map(),
    accessChecks: new Map(),
    inviteBatches: new Map(),
    rateLimiters: new Map(),
    async close() {
      const all = [...pools.values()];
      pools.clear();
      await Promise.all(all.map((p) => p.close()));
    },
  };
}

/** True for an object made by {@link clientShared}. */
export function isClientShared(v: unknown): v is ClientShared {
  return typeof v === "object" && v !== null && (v as { kind?: unknown }).kind === "posthog-client-shared";
}
