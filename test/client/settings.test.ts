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

const KEY = "phx_settingsTestSecretKey0123456789";
const config = (values: Record<string, string>) => ({ get: (k: string) => values[k] });

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
      /posthog:findCacheMs.*milliseconds/,
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
});
