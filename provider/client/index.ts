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
 */
import "./node-version"; // first: fails early, in one line, on a Node.js too old for undici
import { inspect } from "node:util";
import { type AccessProof, type CheckAccessParams, checkAccess } from "./access";
import { batchExports } from "./batch-exports";
import { collaborators } from "./collaborators";
import { createContext } from "./common";
import { dashboards } from "./dashboards";
import { domains } from "./domains";
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
export * from "./sharing";
export {
  closeAllConnections,
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
   * (`project:read`); `once: true` reuses this process's earlier outcome for the same settings. See `access.ts`.
   * @throws the client's errors, each naming the setting to check and where it came from
   */
  checkAccess(params?: CheckAccessParams): Promise<AccessProof>;
  /** Counters: HTTP attempts made (retries included) and requests waiting for the client-side rate limit. */
  stats(): { attempts: number; queued: number };
}

/**
 * Creates a client from resolved {@link Settings} or from {@link ClientOptions} (resolved with
 * {@link resolveSettings}: options → `config` → environment).
 * @throws MissingApiKeyError, InvalidInputError (bad options; no request is made)
 */
export function createClient(
  settingsOrOptions: Settings | ClientOptions = {},
  config?: ConfigGetter,
): PostHogClient {
  const settings = isSettings(settingsOrOptions)
    ? settingsOrOptions
    : resolveSettings(settingsOrOptions, config);
  const transport = createTransport(settings);
  const ctx = createContext(settings, transport);
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
