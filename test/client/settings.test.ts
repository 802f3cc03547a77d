import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import {
  ApiKey,
  createClient,
  DEFAULT_FIND_CACHE_MS,
  DEFAULT_HOST,
  InvalidInputError,
  MissingApiKeyError,
  resolveSettings,
} from "../../provider/client";
import { DEFAULT_HEADERS_TIMEOUT_MS, revealApiKey } from "../../provider/client/settings";

const KEY = "phx_settingsTestSecretKey0123456789";
const config = (values: Record<string, string>) => ({ get: (k: string) => values[k] });
/** The pointer the errors of a malformed setting end with (provider/client/docs-link.ts). */
const SETTINGS_DOCS =
  " (see docs/troubleshooting/settings-and-keys.md#invalid-posthoghost-and-the-other-settings)";

describe("resolveSettings", () => {
  it("takes explicit options first, then the Pulumi config, then the environment", () => {
    const env = {
      POSTHOG_API_KEY: "phx_env",
      POSTHOG_HOST: "https://env.example.com",
      POSTHOG_ORGANIZATION_ID: "org-env",
      POSTHOG_PROJECT_ID: "3",
    };
    const cfg = config({
      "posthog:host": "https://config.example.com/",
      "posthog:organizationId": "org-config",
    });

    const fromAll = resolveSettings({ organizationId: "org-explicit" }, cfg, env);
    expect(fromAll.organizationId).toBe("org-explicit");
    expect(fromAll.host).toBe("https://config.example.com");
    expect(fromAll.projectId).toBe("3");

    const fromEnv = resolveSettings({}, undefined, env);
    expect(fromEnv.host).toBe("https://env.example.com");
    expect(fromEnv.organizationId).toBe("org-env");
    // which key wins is observable only through requests: see "uses the key from ..." in operations.test.ts
  });

  it("defaults the host to PostHog Cloud US and ids to undefined (operations use @current)", () => {
    const s = resolveSettings({ apiKey: KEY }, undefined, {});
    expect(s.host).toBe(DEFAULT_HOST);
    expect(DEFAULT_HOST).toBe("https://us.posthog.com");
    expect(s.organizationId).toBeUndefined();
    expect(s.projectId).toBeUndefined();
    expect(resolveSettings({ apiKey: KEY, projectId: 7 }, undefined, {}).projectId).toBe("7");
  });

  it("reads the find() reuse window from options, config posthog:findCacheMs or POSTHOG_FIND_CACHE_MS", () => {
    expect(resolveSettings({ apiKey: KEY }, undefined, {}).findCacheMs).toBe(DEFAULT_FIND_CACHE_MS);
    expect(resolveSettings({ apiKey: KEY }, config({ "posthog:findCacheMs": "0" }), {}).findCacheMs).toBe(0);
    expect(resolveSettings({ apiKey: KEY }, undefined, { POSTHOG_FIND_CACHE_MS: "750" }).findCacheMs).toBe(
      750,
    );
    expect(
      resolveSettings(
        { apiKey: KEY, coalescing: { findCacheMs: 5 } },
        config({ "posthog:findCacheMs": "0" }),
        {},
      ).findCacheMs,
    ).toBe(5);
    expect(() => resolveSettings({ apiKey: KEY }, config({ "posthog:findCacheMs": "soon" }), {})).toThrow(
      'Invalid find cache window "soon", set by the stack config posthog:findCacheMs: expected a whole number of milliseconds (0 turns it off, at most 2147483647)',
    );
    // From the environment, the message names the variable; past the longest timer Node.js keeps, it is refused.
    expect(() =>
      resolveSettings({ apiKey: KEY }, undefined, { POSTHOG_FIND_CACHE_MS: "2147483648" }),
    ).toThrow(
      'Invalid find cache window "2147483648", set by the environment variable POSTHOG_FIND_CACHE_MS:',
    );
    expect(
      resolveSettings({ apiKey: KEY }, undefined, { POSTHOG_FIND_CACHE_MS: " 2147483647 " }).findCacheMs,
    ).toBe(2147483647);
  });

  it("reads the headers timeout from options, config posthog:headersTimeoutMs or POSTHOG_HEADERS_TIMEOUT_MS", () => {
    const headersMs = (options: object, cfg?: Record<string, string>, env: NodeJS.ProcessEnv = {}) =>
      resolveSettings({ apiKey: KEY, ...options }, cfg && config(cfg), env).timeouts.headersMs;
    expect(DEFAULT_HEADERS_TIMEOUT_MS).toBe(30_000);
    expect(headersMs({})).toBe(DEFAULT_HEADERS_TIMEOUT_MS);
    expect(headersMs({}, { "posthog:headersTimeoutMs": "3000" })).toBe(3_000);
    expect(headersMs({}, undefined, { POSTHOG_HEADERS_TIMEOUT_MS: " 2500 " })).toBe(2_500);
    // The config wins over the environment, the client option over both; the other timeouts keep their defaults.
    const env = { POSTHOG_HEADERS_TIMEOUT_MS: "2500" };
    expect(headersMs({}, { "posthog:headersTimeoutMs": "4000" }, env)).toBe(4_000);
    expect(headersMs({ timeouts: { headersMs: 7 } }, { "posthog:headersTimeoutMs": "4000" }, env)).toBe(7);
    expect(resolveSettings({ apiKey: KEY }, undefined, env).timeouts).toEqual({
      connectMs: 10_000,
      headersMs: 2_500,
      bodyMs: 30_000,
    });
  });

  it.each([
    ["0", "not positive"],
    ["-5", "negative"],
    ["1.5", "not whole"],
    ["3s", "with a unit"],
    ["soon", "not a number"],
    ["2147483648", "past what a timer keeps"],
  ])("refuses posthog:headersTimeoutMs %s (%s), naming the setting and where its value came from", (raw) => {
    const refused = (cfg: Record<string, string> | undefined, env: NodeJS.ProcessEnv) => {
      try {
        resolveSettings({ apiKey: KEY }, cfg && config(cfg), env);
      } catch (e) {
        return e;
      }
      return undefined;
    };
    const fromConfig = refused({ "posthog:headersTimeoutMs": raw }, {});
    expect(fromConfig).toBeInstanceOf(InvalidInputError);
    expect((fromConfig as InvalidInputError).property).toBe("posthog:headersTimeoutMs");
    expect((fromConfig as Error).message).toBe(
      `Invalid headers timeout ${JSON.stringify(raw)}, set by the stack config posthog:headersTimeoutMs: expected a positive whole number of milliseconds (at most 2147483647)${SETTINGS_DOCS}`,
    );
    const fromEnv = refused(undefined, { POSTHOG_HEADERS_TIMEOUT_MS: raw });
    expect(fromEnv).toBeInstanceOf(InvalidInputError);
    expect((fromEnv as InvalidInputError).property).toBe("posthog:headersTimeoutMs");
    expect((fromEnv as Error).message).toBe(
      `Invalid headers timeout ${JSON.stringify(raw)}, set by the environment variable POSTHOG_HEADERS_TIMEOUT_MS: expected a positive whole number of milliseconds (at most 2147483647)${SETTINGS_DOCS}`,
    );
  });

  it("throws MissingApiKeyError naming the Pulumi config key and the environment variable", () => {
    expect(() => resolveSettings({}, config({}), {})).toThrow(MissingApiKeyError);
    try {
      resolveSettings({}, config({}), {});
    } catch (e) {
      expect((e as Error).message).toContain("posthog:apiKey");
      expect((e as Error).message).toContain("POSTHOG_API_KEY");
    }
    // an empty value counts as missing
    expect(() => resolveSettings({}, config({ "posthog:apiKey": "" }), { POSTHOG_API_KEY: "" })).toThrow(
      MissingApiKeyError,
    );
  });

  it("rejects bad options with InvalidInputError naming the property, never the key", () => {
    const bad = [
      [{ apiKey: KEY, host: "ftp://x.example.com" }, "options.host"],
      [{ apiKey: KEY, retry: { maxAttempts: 0 } }, "options.retry.maxAttempts"],
      [{ apiKey: KEY, rateLimit: { perMinute: -1, perHour: 10 } }, "options.rateLimit.perMinute"],
      [{ apiKey: KEY, timeouts: { headersMs: 1.5 } }, "options.timeouts.headersMs"],
      [{ apiKey: KEY, nonsense: true }, "options"],
    ] as const;
    for (const [options, property] of bad) {
      let err: unknown;
      try {
        resolveSettings(options as never, undefined, {});
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).property).toBe(property);
      expect((err as Error).message).not.toContain(KEY);
    }
  });

  it("never reveals the key through inspect, JSON or string conversion of settings or client", () => {
    const settings = resolveSettings({ apiKey: KEY }, undefined, {});
    const client = createClient(settings);
    const views = [
      inspect(settings, { showHidden: true, depth: 10 }),
      JSON.stringify(settings),
      `${settings.apiKey}`,
      inspect(client, { showHidden: true, depth: 10 }),
      JSON.stringify(client),
      inspect(new ApiKey(KEY), { showHidden: true }),
      JSON.stringify({ k: new ApiKey(KEY) }),
    ];
    for (const v of views) expect(v).not.toContain(KEY);
    expect(inspect(client)).toContain(settings.host);
  });

  it("keeps the key where no enumeration, reflection, copy or clone finds it; only revealApiKey reads it", () => {
    const key = new ApiKey(KEY);
    expect(Reflect.ownKeys(key)).toEqual([]);
    expect(Object.getOwnPropertyNames(key)).toEqual([]);
    const copies = [{ ...key }, structuredClone(key), Object.assign(Object.create(ApiKey.prototype), key)];
    for (const copy of copies) {
      expect(inspect(copy, { showHidden: true, depth: 10 })).not.toContain(KEY);
      expect(() => revealApiKey(copy as ApiKey)).toThrow(TypeError);
    }
    expect(inspect(key, { showHidden: true, depth: 10, customInspect: false })).not.toContain(KEY);
    expect(revealApiKey(key)).toBe(KEY);
    expect(revealApiKey(resolveSettings({ apiKey: key }, undefined, {}).apiKey)).toBe(KEY);
    expect(() => revealApiKey(KEY as unknown as ApiKey)).toThrow(TypeError);
  });
});
