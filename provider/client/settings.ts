/**
 * Client options and their resolution into {@link Settings}: explicit options, then the Pulumi config
 * (`posthog:apiKey`, `posthog:host`, `posthog:organizationId`, `posthog:projectId`), then the environment
 * (`POSTHOG_API_KEY`, `POSTHOG_HOST`, `POSTHOG_ORGANIZATION_ID`, `POSTHOG_PROJECT_ID`; and the tuning knob
 * knobs `posthog:findCacheMs` / `POSTHOG_FIND_CACHE_MS`, `posthog:rateLimit` / `POSTHOG_RATE_LIMIT`,
 * `posthog:maxRateLimitWait` / `POSTHOG_MAX_RATE_LIMIT_WAIT`, `posthog:retryBaseDelayMs` /
 * `POSTHOG_RETRY_BASE_DELAY_MS` and `posthog:headersTimeoutMs` / `POSTHOG_HEADERS_TIMEOUT_MS`).
 *
 * The API key is held in an {@link ApiKey} wrapper whose string, JSON and `util.inspect` forms are
 * `[secret]`; only the transport unwraps it, for the `Authorization` header.
 */
import { z } from "zod";
import { InvalidInputError, MissingApiKeyError } from "./errors";
import { ApiKey, type RetryInfo } from "./option-types";

export { ApiKey, type RetryInfo, revealApiKey } from "./option-types";

/** The default API host (PostHog Cloud US). EU users set `https://eu.posthog.com`. */
export const DEFAULT_HOST = "https://us.posthog.com";

const positiveInt = z.number().int().positive();

/** Options of {@link createClient}; every field is optional (see {@link resolveSettings} for the sources). */
export const ClientOptionsSchema = z.strictObject({
  /** Personal API key (`phx_…`). */
  apiKey: z.union([z.string().min(1), z.instanceof(ApiKey)]).optional(),
  /**
   * API base URL, default `https://us.posthog.com`: an origin, optionally with the path prefix a self-hosted
   * PostHog is served under (`https://tools.example.com/posthog`). A trailing slash is ignored.
   */
  host: z.url({ protocol: /^https?$/ }).optional(),
  /** Default organization id (UUID) for organization-scoped operations; else `@current`. */
  organizationId: z.string().min(1).optional(),
  /** Default project id for project-scoped operations; else `@current`. */
  projectId: z.union([z.string().min(1), z.number().int().nonnegative()]).optional(),
  /**
   * Timeouts in milliseconds: TCP/TLS connect (default 10,000), time to the response's headers (default 30,000),
   * idle time between body chunks (default 30,000). The headers timeout is also settable as Pulumi config
   * `posthog:headersTimeoutMs` or env `POSTHOG_HEADERS_TIMEOUT_MS`; a create whose answer it cuts off has an unknown
   * outcome (PostHog may still apply it).
   */
  timeouts: z
    .strictObject({ connectMs: positiveInt, headersMs: positiveInt, bodyMs: positiveInt })
    .partial()
    .optional(),
  /**
   * Retries: at most `maxAttempts` tries per operation (first one included) and at most `maxTotalWaitMs`
   * spent waiting between them; backoff is `random(0, min(maxDelayMs, baseDelayMs·2^(n-1)))` (full jitter)
   * unless the server names a wait (Retry-After / "Expected available in N seconds").
   */
  retry: z
    .strictObject({
      maxAttempts: positiveInt,
      maxTotalWaitMs: z.number().int().nonnegative(),
      baseDelayMs: z.number().int().nonnegative(),
      maxDelayMs: z.number().int().nonnegative(),
      /** Called before each retry wait (for logging); never receives the key. */
      onRetry: z.custom<(info: RetryInfo) => void>((v) => typeof v === "function").optional(),
    })
    .partial()
    .optional(),
  /**
   * Client-side rate limit per API key, shared by the clients of one run (those given one `ClientShared`: a
   * program's lookups, a provider run, a script's clients) using the same key and limits: at most `perMinute`
   * requests in any 60 s and `perHour` in any hour (PostHog: 480 and 4,800). `false` turns it off. Also settable
   * as Pulumi config `posthog:rateLimit` or env `POSTHOG_RATE_LIMIT` (`"480/4800"` or `"off"`).
   */
  rateLimit: z
    .union([z.literal(false), z.strictObject({ perMinute: positiveInt, perHour: positiveInt })])
    .optional(),
  /**
   * Coalescing: `findCacheMs` is how long a completed list read made for `find()` (members, invites,
   * collaborators) is reused by later `find()` calls of the clients of one run (those given one `ClientShared`)
   * with the same key and host (writes through any of them drop it at once). Default 2000; 0 keeps only the
   * sharing of in-flight reads. Also settable as Pulumi config `posthog:findCacheMs` or env
   * `POSTHOG_FIND_CACHE_MS`.
   */
  coalescing: z.strictObject({ findCacheMs: z.number().int().nonnegative() }).partial().optional(),
  /** Page size used by `all()`/`iterate()`/`find()` when no `limit` is given. Default 100. */
  pageSize: positiveInt.optional(),
  /**
   * The longest wait named by a 429 ("Expected available in N seconds") that the client waits out, in
   * milliseconds; a longer one fails at once, naming the wait and the time it frees (e.g. PostHog's invite
   * budget of 50 invites an hour, or a key's 4,800 requests an hour, used up). Default 120,000 (2 minutes:
   * PostHog's per-minute throttle never asks more than 60 s). Also settable as Pulumi config
   * `posthog:maxRateLimitWait` or env `POSTHOG_MAX_RATE_LIMIT_WAIT` (seconds, or with a unit: `90s`, `10m`, `1h`).
   */
  maxRateLimitWaitMs: z.number().int().nonnegative().optional(),
});

/** Options accepted by {@link createClient} and {@link resolveSettings}. */
export type ClientOptions = z.input<typeof ClientOptionsSchema>;

/**
 * Where a setting's value came from: the explicit client option, the Pulumi stack config
 * (`posthog:<name>`), the environment variable, or the default (none of them set).
 */
export type SettingSource = "option" | "config" | "env" | "default";

/** The settings whose source is recorded (for messages that name the setting to fix). */
export type SourcedName = "apiKey" | "host" | "organizationId" | "projectId";

/** Fully resolved client settings. Safe to log: the key is an {@link ApiKey}. */
export interface Settings {
  readonly kind: "posthog-settings";
  readonly apiKey: ApiKey;
  /**
   * Base URL without trailing slash: the origin, plus the path prefix when the API is served under one, e.g.
   * `https://us.posthog.com` or `https://tools.example.com/posthog`. Requests go to `<host>/api/…`.
   */
  readonly host: string;
  /** Where apiKey, host, organizationId and projectId came from (named in errors that point at them). */
  readonly sources: Readonly<Record<SourcedName, SettingSource>>;
  readonly organizationId: string | undefined;
  readonly projectId: string | undefined;
  readonly timeouts: { connectMs: number; headersMs: number; bodyMs: number };
  readonly retry: {
    maxAttempts: number;
    maxTotalWaitMs: number;
    baseDelayMs: number;
    maxDelayMs: number;
    onRetry: ((info: RetryInfo) => void) | undefined;
  };
  readonly rateLimit: { perMinute: number; perHour: number } | false;
  readonly findCacheMs: number;
  readonly pageSize: number;
  /** The longest 429 wait the client waits out (ms); see {@link ClientOptions} `maxRateLimitWaitMs`. */
  readonly maxRateLimitWaitMs: number;
}

/** Reads Pulumi-style config (`get("posthog:apiKey")`); `pulumi.dynamic` Config objects fit. */
export interface ConfigGetter {
  get(key: string): string | undefined;
}

function firstDefined(...values: (string | undefined)[]): string | undefined {
  return values.find((v) => v !== undefined && v !== "");
}

/** Turns a zod error into an {@link InvalidInputError} naming the property (never its value). */
export function invalidInput(prefix: string, error: z.ZodError): InvalidInputError {
  const issue = error.issues[0];
  const property = [prefix, ...(issue?.path ?? []).map(String)].filter(Boolean).join(".");
  const lines = error.issues.map((i) => {
    const p = [prefix, ...i.path.map(String)].filter(Boolean).join(".");
    return `${p || "(root)"}: ${i.message}`;
  });
  return new InvalidInputError(property, `Invalid ${lines.join("; ")}`);
}

/** Every setting read from Pulumi config (`posthog:<name>`) or else the environment variable named here. */
const SOURCED_SETTINGS = {
  apiKey: "POSTHOG_API_KEY",
  host: "POSTHOG_HOST",
  organizationId: "POSTHOG_ORGANIZATION_ID",
  projectId: "POSTHOG_PROJECT_ID",
  retryBaseDelayMs: "POSTHOG_RETRY_BASE_DELAY_MS",
  rateLimit: "POSTHOG_RATE_LIMIT",
  findCacheMs: "POSTHOG_FIND_CACHE_MS",
  maxRateLimitWait: "POSTHOG_MAX_RATE_LIMIT_WAIT",
  headersTimeoutMs: "POSTHOG_HEADERS_TIMEOUT_MS",
} as const;
type SourcedSetting = keyof typeof SOURCED_SETTINGS;

/** The raw value of a setting: Pulumi config `posthog:<name>`, else its environment variable (empty = unset). */
function sourced(name: SourcedSetting, config: ConfigGetter | undefined, env: NodeJS.ProcessEnv) {
  return firstDefined(config?.get(`posthog:${name}`), env[SOURCED_SETTINGS[name]]);
}

/** Where the value {@link sourced} returns for `name` comes from, given the explicit option. */
function sourceOf(
  name: SourcedSetting,
  explicit: unknown,
  config: ConfigGetter | undefined,
  env: NodeJS.ProcessEnv,
): SettingSource {
  if (explicit !== undefined) return "option";
  if (firstDefined(config?.get(`posthog:${name}`)) !== undefined) return "config";
  if (firstDefined(env[SOURCED_SETTINGS[name]]) !== undefined) return "env";
  return "default";
}

/**
 * How a setting is named in messages, with where its value came from: e.g. "the environment variable
 * POSTHOG_ORGANIZATION_ID", "the stack config posthog:apiKey", "the client option `host`"; for a default,
 * both names (neither is set).
 */
export function settingOrigin(settings: Pick<Settings, "sources">, name: SourcedName): string {
  return originText(settings.sources?.[name] ?? "default", name);
}

/** {@link settingOrigin}'s text for setting `name` whose value came from `source`. */
function originText(source: SettingSource, name: SourcedSetting): string {
  switch (source) {
    case "option":
      return `the client option \`${name}\``;
    case "config":
      return `the stack config posthog:${name}`;
    case "env":
      return `the environment variable ${SOURCED_SETTINGS[name]}`;
    default:
      return `the default (neither the stack config posthog:${name} nor the environment variable ${SOURCED_SETTINGS[name]} is set)`;
  }
}

/**
 * Parses the host setting into the base URL (origin plus path prefix, no trailing slash).
 * @throws InvalidInputError naming `name`: not an http(s) URL, or with credentials, a query or a fragment.
 */
function baseUrlOf(raw: string, name: string): string {
  const expected = `expected an http(s) URL such as ${DEFAULT_HOST}, or with the path prefix of a self-hosted PostHog such as https://tools.example.com/posthog`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidInputError(name, `Invalid ${name}: ${expected}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new InvalidInputError(name, `Invalid ${name}: the scheme must be http or https; ${expected}`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new InvalidInputError(
      name,
      `Invalid ${name}: it must not carry credentials (user:password@); the API key goes in posthog:apiKey / POSTHOG_API_KEY`,
    );
  }
  if (url.search !== "" || url.hash !== "" || raw.includes("?") || raw.includes("#")) {
    throw new InvalidInputError(
      name,
      `Invalid ${name}: it must not carry a query (?…) or a fragment (#…); ${expected}`,
    );
  }
  const prefix = url.pathname.replace(/\/+$/, "");
  if (/\/api$/.test(prefix)) {
    throw new InvalidInputError(
      name,
      `Invalid ${name}: give the address PostHog is served at, without /api (the client adds /api/…): e.g. ${url.origin}${prefix.replace(/\/api$/, "")}`,
    );
  }
  return `${url.origin}${prefix}`;
}

/**
 * Resolves settings: each of apiKey/host/organizationId/projectId comes from `explicit`, else
 * `config.get("posthog:<name>")`, else the environment (`POSTHOG_API_KEY`, `POSTHOG_HOST`,
 * `POSTHOG_ORGANIZATION_ID`, `POSTHOG_PROJECT_ID`). Host defaults to https://us.posthog.com.
 *
 * @throws MissingApiKeyError when no key is found anywhere.
 * @throws InvalidInputError when an option is malformed (names the property; never echoes the key).
 */
export function resolveSettings(
  explicit: ClientOptions = {},
  config?: ConfigGetter,
  env: NodeJS.ProcessEnv = process.env,
): Settings {
  const parsed = ClientOptionsSchema.safeParse(explicit);
  if (!parsed.success) throw invalidInput("options", parsed.error);
  const o = parsed.data;
  const fromSources = (name: SourcedSetting) => sourced(name, config, env);
  // Every setting from the stack config and the environment is checked before anything is built (a missing key
  // comes after a malformed setting): the first malformed one is thrown, naming it.
  const problem = settingProblems(config, env, o)[0];
  if (problem) throw problem;

  const rawKey = o.apiKey ?? apiKeyOf(config, env);
  if (rawKey === undefined) throw new MissingApiKeyError();
  const apiKey = rawKey instanceof ApiKey ? rawKey : new ApiKey(rawKey);

  const sources: Record<SourcedName, SettingSource> = {
    apiKey: sourceOf("apiKey", o.apiKey, config, env),
    host: sourceOf("host", o.host, config, env),
    organizationId: sourceOf("organizationId", o.organizationId, config, env),
    projectId: sourceOf("projectId", o.projectId, config, env),
  };
  const host = o.host !== undefined ? baseUrlOf(o.host, "host") : (hostOf(config, env) ?? DEFAULT_HOST);
  const projectId = o.projectId ?? fromSources("projectId");
  const settings: Settings = {
    kind: "posthog-settings",
    apiKey,
    host,
    sources: Object.freeze(sources),
    organizationId: o.organizationId ?? fromSources("organizationId"),
    projectId: projectId === undefined ? undefined : String(projectId),
    timeouts: {
      connectMs: o.timeouts?.connectMs ?? 10_000,
      headersMs:
        o.timeouts?.headersMs ??
        millisSetting("headersTimeoutMs", config, env, HEADERS_TIMEOUT) ??
        DEFAULT_HEADERS_TIMEOUT_MS,
      bodyMs: o.timeouts?.bodyMs ?? 30_000,
    },
    retry: {
      maxAttempts: o.retry?.maxAttempts ?? 8,
      maxTotalWaitMs: o.retry?.maxTotalWaitMs ?? 300_000,
      baseDelayMs:
        o.retry?.baseDelayMs ?? millisSetting("retryBaseDelayMs", config, env, RETRY_BASE_DELAY) ?? 500,
      maxDelayMs: o.retry?.maxDelayMs ?? 30_000,
      onRetry: o.retry?.onRetry,
    },
    rateLimit: o.rateLimit ??
      rateLimitOf(config, env) ?? {
        perMinute: 480,
        perHour: 4800,
      },
    findCacheMs:
      o.coalescing?.findCacheMs ??
      millisSetting("findCacheMs", config, env, FIND_CACHE) ??
      DEFAULT_FIND_CACHE_MS,
    pageSize: o.pageSize ?? 100,
    maxRateLimitWaitMs: o.maxRateLimitWaitMs ?? durationMs("maxRateLimitWait", config, env) ?? 120_000,
  };
  return Object.freeze(settings);
}

/** The name of the host setting as its source spells it (for {@link InvalidInputError}s). */
function hostSettingName(source: SettingSource): string {
  if (source === "config") return "posthog:host";
  if (source === "env") return "POSTHOG_HOST";
  return "host";
}

/** Default time the client waits for a response's headers, in milliseconds. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 30_000;

/** The longest timeout Node.js timers keep (2^31 - 1 ms, about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** What {@link millisSetting} says of each millisecond setting. */
const HEADERS_TIMEOUT = { label: "headers timeout", min: 1 } as const;
const RETRY_BASE_DELAY = { label: "retry base delay", min: 0, zero: "0 retries without back-off" } as const;
const FIND_CACHE = { label: "find cache window", min: 0, zero: "0 turns it off" } as const;

/**
 * Reads a sourced setting of whole milliseconds (`posthog:headersTimeoutMs`, `posthog:retryBaseDelayMs`,
 * `posthog:findCacheMs`), surrounding white space ignored; undefined when neither the config nor the environment
 * sets it. `label` names it in messages; `min` is 1 for a timeout (0 would fire at once), 0 where 0 has a meaning,
 * which `zero` says (e.g. "0 turns it off").
 * @throws InvalidInputError naming the setting and where its value came from, when it is not a whole number from
 *   `min` to 2147483647 (the longest timer Node.js keeps).
 */
function millisSetting(
  name: SourcedSetting,
  config: ConfigGetter | undefined,
  env: NodeJS.ProcessEnv,
  spec: { label: string; min: 0 | 1; zero?: string },
): number | undefined {
  const raw = sourced(name, config, env);
  if (raw === undefined) return undefined;
  const ms = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!(ms >= spec.min && ms <= MAX_TIMER_MS)) {
    const origin = originText(sourceOf(name, undefined, config, env), name);
    const range = spec.min === 1 ? "a positive whole number" : "a whole number";
    const zero = spec.zero ? `${spec.zero}, ` : "";
    throw new InvalidInputError(
      `posthog:${name}`,
      `Invalid ${spec.label} ${shownSetting(raw)}, set by ${origin}: expected ${range} of milliseconds (${zero}at most ${MAX_TIMER_MS})`,
    );
  }
  return ms;
}

/** Default reuse window of `find()` list reads, in milliseconds. */
export const DEFAULT_FIND_CACHE_MS = 2_000;

/**
 * A duration as the settings write it: whole seconds (`"90"`), or a whole number with a unit `s`, `m` or `h`
 * (`"90s"`, `"10m"`, `"1h"`), surrounding white space ignored; in milliseconds, or undefined when `raw` has no
 * such form. No error: the caller names its setting.
 */
export function parseDurationMs(raw: string): number | undefined {
  const m = /^(\d+)\s*(s|m|h)?$/.exec(raw.trim());
  return m
    ? Number(m[1]) * { s: 1_000, m: 60_000, h: 3_600_000 }[(m[2] ?? "s") as "s" | "m" | "h"]
    : undefined;
}

/**
 * Reads a sourced duration setting (`posthog:maxRateLimitWait`, {@link parseDurationMs}); in milliseconds, or
 * undefined when neither the config nor the environment sets it.
 * @throws InvalidInputError naming the setting, its value and where it came from, and the accepted forms.
 */
function durationMs(
  name: SourcedSetting,
  config: ConfigGetter | undefined,
  env: NodeJS.ProcessEnv,
): number | undefined {
  const raw = sourced(name, config, env);
  if (raw === undefined) return undefined;
  const ms = parseDurationMs(raw);
  if (ms === undefined) {
    throw new InvalidInputError(
      `posthog:${name}`,
      `Invalid posthog:${name} ${shownSetting(raw)}, set by ${originText(sourceOf(name, undefined, config, env), name)}: ` +
        'expected whole seconds ("120"), or with a unit s, m or h ("90s", "10m", "1h")',
    );
  }
  return ms;
}

/**
 * Reads the `posthog:rateLimit` / `POSTHOG_RATE_LIMIT` setting: `"<perMinute>/<perHour>"` (e.g. `"480/4800"`,
 * PostHog's limits; raise both for a self-hosted instance or a scaled emulator) or `"off"`; undefined when unset.
 * @throws InvalidInputError naming `posthog:rateLimit`, its value and where it came from, and the accepted forms.
 */
function rateLimitOf(
  config: ConfigGetter | undefined,
  env: NodeJS.ProcessEnv,
): { perMinute: number; perHour: number } | false | undefined {
  const raw = sourced("rateLimit", config, env);
  if (raw === undefined) return undefined;
  const v = raw.trim();
  if (v === "off") return false;
  const m = /^(\d+)\/(\d+)$/.exec(v);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) {
    throw new InvalidInputError(
      "posthog:rateLimit",
      `Invalid posthog:rateLimit ${shownSetting(raw)}, set by ${originText(sourceOf("rateLimit", undefined, config, env), "rateLimit")}: ` +
        'expected "<perMinute>/<perHour>" with positive whole numbers (e.g. "480/4800") or "off"',
    );
  }
  return { perMinute: Number(m[1]), perHour: Number(m[2]) };
}

/**
 * Reads the API key from the stack config or the environment, surrounding white space dropped (a key pasted with
 * its line break); undefined when neither sets it. No request.
 * @throws InvalidInputError naming the setting and where it came from, never the key: a key with white space or a
 *   control character inside (no HTTP header can carry it), or a project API key (`phc_…`, the token that sends
 *   events, which the API refuses) instead of a personal API key (`phx_…`).
 */
function apiKeyOf(config: ConfigGetter | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const key = sourced("apiKey", config, env)?.trim();
  if (key === undefined || key === "") return undefined;
  const origin = originText(sourceOf("apiKey", undefined, config, env), "apiKey");
  const personal =
    "PostHog's API takes a personal API key, phx_… (PostHog: Settings → User → Personal API keys)";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  const bad = /[\s\u0000-\u001f\u007f-\u009f]/.exec(key);
  if (bad) {
    throw new InvalidInputError(
      "posthog:apiKey",
      `Invalid API key (not shown), set by ${origin}: it holds white space or a control character at position ` +
        `${bad.index + 1}, which no request can carry; set the key again as PostHog shows it. ${personal}`,
    );
  }
  if (/^phc_/i.test(key)) {
    throw new InvalidInputError(
      "posthog:apiKey",
      `Invalid API key (not shown), set by ${origin}: it starts with phc_, a project API key (the token that sends ` +
        `events), which the API refuses. ${personal}`,
    );
  }
  return key;
}

/**
 * Every malformed setting among those the client reads from the stack config (`config`, `posthog:<name>`) and the
 * environment (`env`, `POSTHOG_<NAME>`), each as the {@link InvalidInputError} {@link resolveSettings} throws for
 * it (naming the setting, where its value came from and the accepted forms; never a key): the API key's form, the
 * host, the headers timeout, the retry base delay, the find cache window, the rate limit, the longest 429 wait. A
 * setting the explicit options `explicit` give is not read, so not checked. Empty when all are well-formed or unset.
 * No request; the key need not be set.
 */
export function settingProblems(
  config: ConfigGetter | undefined,
  env: NodeJS.ProcessEnv = process.env,
  explicit: Partial<z.output<typeof ClientOptionsSchema>> = {},
): InvalidInputError[] {
  const o = explicit;
  const checks: [given: unknown, read: () => unknown][] = [
    [o.apiKey, () => apiKeyOf(config, env)],
    [o.host, () => hostOf(config, env)],
    [o.timeouts?.headersMs, () => millisSetting("headersTimeoutMs", config, env, HEADERS_TIMEOUT)],
    [o.retry?.baseDelayMs, () => millisSetting("retryBaseDelayMs", config, env, RETRY_BASE_DELAY)],
    [o.coalescing?.findCacheMs, () => millisSetting("findCacheMs", config, env, FIND_CACHE)],
    [o.rateLimit, () => rateLimitOf(config, env)],
    [o.maxRateLimitWaitMs, () => durationMs("maxRateLimitWait", config, env)],
  ];
  const problems: InvalidInputError[] = [];
  for (const [given, read] of checks) {
    if (given !== undefined) continue;
    try {
      read();
    } catch (e) {
      if (!(e instanceof InvalidInputError)) throw e;
      problems.push(e);
    }
  }
  return problems;
}

/** The host from the stack config or the environment as {@link baseUrlOf} parses it; undefined when unset. */
function hostOf(config: ConfigGetter | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const raw = sourced("host", config, env);
  return raw === undefined
    ? undefined
    : baseUrlOf(raw, hostSettingName(sourceOf("host", undefined, config, env)));
}

/** True for a {@link Settings} object (as opposed to raw {@link ClientOptions}). */
export function isSettings(v: unknown): v is Settings {
  return typeof v === "object" && v !== null && (v as { kind?: unknown }).kind === "posthog-settings";
}

/** PostHog's organization ids: UUIDs as PostHog shows them (8-4-4-4-12 hexadecimal digits). */
const ORGANIZATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** How a refused setting's value reads in a message: quoted, cut at 40 characters, never a key-like value. */
function shownSetting(raw: string): string {
  if (/^ph[a-z]_/i.test(raw)) return "a value that looks like an API key";
  return JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw);
}

/**
 * The form check of the settings that name what the provider manages, the one the provider runs in `check` (so a
 * preview refuses them, with no request) and before its first request: the organization id must be a UUID (or
 * `@current`, the key owner's current organization), the project id a positive integer (or `@current`). PostHog
 * answers any other value with a 404 that names no setting. The host's form is checked by
 * {@link resolveSettings} already. No HTTP request.
 * @throws InvalidInputError naming the setting (`posthog:organizationId`, `posthog:projectId`) and where its value
 *   came from ({@link settingOrigin}); a value that looks like an API key is not shown.
 */
export function checkSettingsForm(settings: Settings): void {
  const [first] = idFormProblems(settings.organizationId, settings.projectId, settings);
  if (first) throw first;
}

/**
 * The problems {@link checkSettingsForm} finds in the organization and project ids the stack config (`config`) or
 * the environment (`env`) set, both checked, before any client is built (the key need not be set). No request.
 * @returns InvalidInputErrors as {@link checkSettingsForm} throws them; empty when both are well-formed or unset
 */
export function idSettingProblems(
  config: ConfigGetter | undefined,
  env: NodeJS.ProcessEnv = process.env,
): InvalidInputError[] {
  return idFormProblems(sourced("organizationId", config, env), sourced("projectId", config, env), {
    sources: {
      apiKey: "default",
      host: "default",
      organizationId: sourceOf("organizationId", undefined, config, env),
      projectId: sourceOf("projectId", undefined, config, env),
    },
  });
}

/** The form check of {@link checkSettingsForm}: an organization id and a project id with their sources. */
function idFormProblems(
  org: string | undefined,
  project: string | undefined,
  settings: Pick<Settings, "sources">,
): InvalidInputError[] {
  const problems: InvalidInputError[] = [];
  if (org !== undefined && org !== "@current" && !ORGANIZATION_ID.test(org)) {
    problems.push(
      new InvalidInputError(
        "posthog:organizationId",
        `Invalid organization id ${shownSetting(org)}, set by ${settingOrigin(settings, "organizationId")}: ` +
          `expected the organization's id, a UUID such as 0190a3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d (PostHog: ` +
          `Settings → Organization → General), or "@current" for the API key owner's current organization`,
      ),
    );
  }
  if (project !== undefined && project !== "@current" && !/^[1-9][0-9]{0,15}$/.test(project)) {
    problems.push(
      new InvalidInputError(
        "posthog:projectId",
        `Invalid project id ${shownSetting(project)}, set by ${settingOrigin(settings, "projectId")}: ` +
          `expected the project's id, a positive integer such as 12345 (PostHog: Settings → Project → General), ` +
          `or "@current" for the API key owner's current project`,
      ),
    );
  }
  return problems;
}
