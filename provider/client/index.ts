/**
 * `pulumi-posthog/client`: a typed client for PostHog's organization and dashboard administration API.
 *
 * ```ts
 * import { createClient } from "pulumi-posthog/client";
 * const client = createClient({ apiKey: process.env.POSTHOG_API_KEY });  // or createClient({}) to use env
 * for await (const m of client.members.iterate()) console.log(m.user.email, m.level);
 * ```
 *
 * Every operation takes one params object; `organizationId`/`projectId` default to the client's settings,
 * else `@current`; write bodies are `body`. Results are the parsed (zod) wire objects.
 *
 * The clients of one run (a script, a command) share their connections, rate limiter and coalesced reads
 * through one {@link ClientShared}: `const shared = clientShared()`, then `createClient({ ..., shared })` for
 * each, and `await shared.close()` at the end. A client made without one has its own.
 */
import "./node-version"; // first: fails early, in one line, on a Node.js too old for undici
import { inspect } from "node:util";
import { type AccessProof, type CheckAccessParams, checkAccess } from "./access";
import { batchExports } from "./batch-exports";
import { collaborators } from "./collaborators";
import { createContext } from "./common";
import { dashboards } from "./dashboards";
import { domains } from "./domains";
import { InvalidInputError } from "./errors";
import { invites } from "./invites";
import { members } from "./members";
import { projects } from "./projects";
import {
  type ClientOptions,
  type ConfigGetter,
  isSettings,
  resolveSettings,
  type Settings,
} from "./settings";
import { type ClientShared, clientShared, isClientShared } from "./shared";
import { sharing } from "./sharing";
import { createTransport } from "./transport";

export type { AccessProof, CheckAccessParams } from "./access";
export * from "./batch-exports";
export * from "./collaborators";
export {
  type ClientContext,
  type OrgParams,
  type Page,
  type PageParams,
  type PageSchema,
  type ProjectParams,
  pageSchema,
  type User,
  UserSchema,
} from "./common";
export * from "./dashboards";
export * from "./domains";
export * from "./errors";
export * from "./invites";
export * from "./members";
export * from "./projects";
export { RateLimiter, type WindowSpec } from "./rate-limit";
export {
  ApiKey,
  type ClientOptions,
  ClientOptionsSchema,
  type ConfigGetter,
  DEFAULT_FIND_CACHE_MS,
  DEFAULT_HOST,
  isSettings,
  type RetryInfo,
  resolveSettings,
  type SettingSource,
  type Settings,
  type SourcedName,
  settingOrigin,
} from "./settings";
export { type ClientShared, clientShared, isClientShared } from "./shared";
export * from "./sharing";
export {
  encodeSegment,
  type HttpMethod,
  type HttpRequest,
  type HttpResponse,
} from "./transport";

/** A client bound to one API key and host. Safe to log: inspecting it shows host and ids, never the key. */
export interface PostHogClient {
  readonly settings: Settings;
  readonly batchExports: ReturnType<typeof batchExports>;
  readonly domains: ReturnType<typeof domains>;
  readonly invites: ReturnType<typeof invites>;
  readonly members: ReturnType<typeof members>;
  readonly projects: ReturnType<typeof projects>;
  readonly dashboards: ReturnType<typeof dashboards>;
  readonly collaborators: ReturnType<typeof collaborators>;
  readonly sharing: ReturnType<typeof sharing>;
  /**
   * Proves the settings reach PostHog (host, key, organization, and the project when one is set) with one GET
   * (`project:read`); `once: true` reuses the earlier outcome of this client, or of one sharing its
   * {@link ClientShared}, for the same settings. See `access.ts`.
   * @throws the client's errors, each naming the setting to check and where it came from
   */
  checkAccess(params?: CheckAccessParams): Promise<AccessProof>;
  /** Counters: HTTP attempts made (retries included) and requests waiting for the client-side rate limit. */
  stats(): { attempts: number; queued: number };
}

/**
 * What {@link createClient} takes: resolved {@link Settings} or {@link ClientOptions}, either with `shared`, the
 * {@link ClientShared} of the run the client belongs to (default: a new one, so the client shares nothing).
 */
export type CreateClientOptions = (Settings | ClientOptions) & { shared?: ClientShared | undefined };

/**
 * Creates a client from resolved {@link Settings} or from {@link ClientOptions} (resolved with
 * {@link resolveSettings}: options → `config` → environment). Its connections, rate limiter, coalesced GETs,
 * throttles, access checks, invite batches and `find()` lists are those of `shared` (see {@link ClientShared}):
 * pass one object to every client of a run. No request.
 * @throws MissingApiKeyError, InvalidInputError (bad options, or a `shared` not made by {@link clientShared}; no
 *   request is made)
 */
export function createClient(
  settingsOrOptions: CreateClientOptions = {},
  config?: ConfigGetter,
): PostHogClient {
  const { shared: given, ...rest } = settingsOrOptions;
  if (given !== undefined && !isClientShared(given)) {
    throw new InvalidInputError(
      "options.shared",
      "Invalid options.shared: expected an object made by clientShared()",
    );
  }
  const shared = given ?? clientShared();
  let settings: Settings;
  if (!isSettings(settingsOrOptions)) settings = resolveSettings(rest as ClientOptions, config);
  // settings handed with `shared`: the settings without it (`client.settings` never holds the shared state)
  else settings = "shared" in settingsOrOptions ? Object.freeze(rest as Settings) : settingsOrOptions;
  const transport = createTransport(settings, shared);
  const ctx = createContext(settings, transport, shared);
  const client: PostHogClient = {
    settings,
    batchExports: batchExports(ctx),
    domains: domains(ctx),
    invites: invites(ctx),
    members: members(ctx),
    projects: projects(ctx),
    dashboards: dashboards(ctx),
    collaborators: collaborators(ctx),
    sharing: sharing(ctx),
    checkAccess: (params) => checkAccess(ctx, params),
    stats: () => ({ attempts: transport.attempts, queued: transport.queued }),
  };
  const summary = `PostHogClient { host: ${settings.host}, organizationId: ${settings.organizationId ?? "@current"}, projectId: ${settings.projectId ?? "@current"}, apiKey: [secret] }`;
  Object.defineProperty(client, inspect.custom, { value: () => summary, enumerable: false });
  Object.defineProperty(client, "toJSON", {
    value: () => ({
      host: settings.host,
      organizationId: settings.organizationId,
      projectId: settings.projectId,
    }),
    enumerable: false,
  });
  return client;
}
