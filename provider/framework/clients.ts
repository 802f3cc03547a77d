/**
 * The clients of a run's operations (provider/framework/run.ts `RunClients`): built from the settings `configure`
 * brought (the stack config, else the environment) on the first operation after it, shared by every operation of
 * the run, and proved to reach PostHog once per run before the first one is handed out.
 */
import { type ConfigGetter, createClient, MissingApiKeyError, type PostHogClient } from "../client";
import { watchEngine } from "./engine-watch";
import type { Run } from "./run";
import { checkProviderSettings } from "./settings";

/**
 * Hands the run the settings of a `configure` (the stack config; undefined: the environment is read): the next
 * operation builds its clients from them. Starts the watch that ends the provider host once the engine is gone
 * (provider/framework/engine-watch.ts). No request.
 */
export function configureRun(run: Run, config: ConfigGetter | undefined): void {
  watchEngine(run.engine);
  run.clients.config = config;
  run.clients.current = undefined;
  run.clients.refreshing = undefined;
}

/**
 * How long a list read made during a refresh serves the refresh's later reads (ms): 60 s. The engine reads at
 * most 4 × CPUs resources at once, so the reads of 60 members arrive in waves; sharing only lists in flight
 * would send one list per wave (8 waves, on 2 CPUs), sharing the first one sends ⌈N/500⌉ pages.
 */
export const REFRESH_SNAPSHOT_MS = 60_000;

/**
 * How long one provider request may wait in all for rate limits (ms): an hour. The client sends at PostHog's pace
 * (480 a minute, 4,800 an hour): once a key's hour is used up (several stacks on one key, a 3,000-resource `up`
 * after a busy hour) the next slot may be most of an hour away, more than the client's default of 5 minutes. One
 * wait PostHog names in a 429 is still capped by `posthog:maxRateLimitWait`.
 */
export const PACING_MAX_WAIT_MS = 3_600_000;

/**
 * Items per page of the provider's list reads (members, invites, dashboards, domains, batch exports, projects):
 * 500. Every list read of the provider reads the whole list, and PostHog's LimitOffsetPagination sets no maximum
 * `limit` (api-behaviour §0.3: `max_limit` None): an organization of 600 members is 2 requests instead of 7, in
 * every wave of the engine's workers that finds members.
 */
export const LIST_PAGE_SIZE = 500;

/**
 * The client for an operation of `run`. Its settings are resolved once per `configure()` (the host calls it
 * when it loads a provider), on the first operation after it: the stack config, else the environment
 * (`POSTHOG_API_KEY`, `POSTHOG_HOST`, `POSTHOG_ORGANIZATION_ID`, `POSTHOG_PROJECT_ID`, …), as a native
 * provider reads its environment at Configure. Without `configure()` (in-process use), the environment is read
 * on the first operation. Nothing is captured in the serialized provider.
 *
 * `find()` list reads (members, invites, a dashboard's collaborators: PostHog has no GET of one) are shared:
 * - by a refresh's reads (`read` is `{type, id}` of an object not read before in this run, and the run
 *   has made no create, update or delete: a `pulumi refresh` or the refresh of `--refresh`, one provider host
 *   per run): a list read is reused for {@link REFRESH_SNAPSHOT_MS} after it completed, so a refresh reads each
 *   list once (a snapshot, as `pulumi refresh` reports the organization at one moment), whatever the engine's
 *   parallelism;
 * - otherwise only while in flight (`findCacheMs: 0`): concurrent operations share one list request, and no
 *   later operation (a create, an update, a second read of the same object) sees a list read from before a
 *   change made outside Pulumi.
 * A write through the provider drops the shared lists of its path either way (the client's coalescing).
 * Connection pools and the rate limiter are shared by the clients of the run.
 *
 * Before handing the client out, it proves the settings reach PostHog: `checkAccess({once: true})`, one GET of
 * the organization's projects (or of the configured project) the first time in this run for these
 * settings, none later (`configure()` runs once per serialized provider: the outcome is shared by key, host,
 * organization and project). A wrong key, host, organization or project
 * therefore fails the run's first operation, before any write, and every later one with the same error.
 * @throws MissingApiKeyError when neither source has a key (nothing is kept: the next operation tries again).
 * @throws InvalidInputError when a setting is malformed (provider/framework/settings.ts `checkProviderSettings`),
 *   before any request.
 * @throws the access check's errors (UnauthenticatedError, NotFoundError, ForbiddenError, ConnectionError…),
 *   naming the setting to check and where it came from.
 */
export async function operationClient(run: Run, read?: { type: string; id: string }): Promise<PostHogClient> {
  const c = run.clients;
  let client = clients(run);
  const key = read && `${read.type}/${read.id}`;
  if (key === undefined) c.wrote = true;
  else if (!c.wrote && !c.readBefore.has(key)) client = c.refreshing ?? client;
  if (key !== undefined) c.readBefore.add(key);
  await client.checkAccess({ once: true });
  return client;
}

/**
 * The client of operations that write ({@link operationClient} without `read`), after building the pair of
 * clients from the settings if this `configure()` has not yet: one pair per `configure()`, from the same
 * settings (building one costs ~45 µs, and re-reading the seven settings from config and environment before
 * every operation ~6 µs more: bench/run.ts, section a). No request.
 * @throws MissingApiKeyError, InvalidInputError (a malformed host, organization id or project id, naming the
 *   setting and where it came from: `checkProviderSettings`); nothing is kept, the next call resolves them again.
 */
function clients(run: Run): PostHogClient {
  const c = run.clients;
  if (!c.current || !c.refreshing) {
    const retry = { maxTotalWaitMs: PACING_MAX_WAIT_MS };
    const pageSize = LIST_PAGE_SIZE;
    // Every setting the provider reads (provider/framework/settings.ts), whether the key is set or not: a malformed one fails
    // here, before any request (check calls this in every run, a preview's included).
    checkProviderSettings(c.config);
    const { shared } = c;
    const made = createClient({ coalescing: { findCacheMs: 0 }, retry, pageSize, shared }, c.config);
    const refreshing = createClient(
      { coalescing: { findCacheMs: REFRESH_SNAPSHOT_MS }, retry, pageSize, shared },
      c.config,
    );
    c.current = made;
    c.refreshing = refreshing;
    c.refreshClients.add(refreshing);
    return made;
  }
  return c.current;
}

/**
 * What `check` and `diff` prove of the settings before the engine plans anything: their form always (no request:
 * a malformed host, organization id or project id fails as `up` would fail, naming the setting and where it came
 * from); and, with `prove` (every preview, changes or none, and every run through the plugin), that they reach
 * PostHog: the access check of {@link operationClient} (`checkAccess({once: true})`, one GET per run),
 * which fails with the very error `up` would meet (a wrong key, host, organization or project, or a missing key).
 * Never writes.
 * @throws InvalidInputError; MissingApiKeyError and the access check's errors (with `prove`)
 */
export async function checkSettings(run: Run, prove: boolean): Promise<PostHogClient | undefined> {
  let client: PostHogClient;
  try {
    client = clients(run);
  } catch (e) {
    if (e instanceof MissingApiKeyError && !prove) return undefined;
    throw e;
  }
  if (!prove) return undefined;
  await client.checkAccess({ once: true });
  return client;
}

/**
 * Says once per run (call it in a preview only), in a preview whose plan writes (a create, an update or a replacement), what its
 * access check could not prove: that the key may make those writes. PostHog shows a personal API key's scopes to no
 * read made with that key (api-behaviour §5: the key list needs `personal_api_key:read`, which a scoped key seldom
 * has), so a key without, say, `dashboard:write` passes the preview, and `up` fails at the first write that needs
 * it. One line on stdout, shown by the engine as the resource's info. No request.
 */
export function sayScopesUnproven(run: Run): void {
  if (run.mode.scopesSaid) return;
  run.mode.scopesSaid = true;
  console.log(
    "info: this preview proved that the settings reach PostHog, not that the API key may make the writes it plans: " +
      "PostHog shows a personal API key's scopes to no read made with it. If the key lacks a scope one of them needs " +
      '(e.g. dashboard:write), `pulumi up` fails at that write with 403 "API key missing required scope …"',
  );
}
