/**
 * The tuning settings the benchmarks and the soak rely on, read from the Pulumi config or the environment:
 * `posthog:rateLimit` / `POSTHOG_RATE_LIMIT` and `posthog:retryBaseDelayMs` / `POSTHOG_RETRY_BASE_DELAY_MS`.
 */
import { describe, expect, it } from "vitest";
import { InvalidInputError, resolveSettings } from "../../provider/client";

const config = (values: Record<string, string>) => ({ get: (k: string) => values[k] });

describe("rate limit and retry settings from config or environment", () => {
  it("reads posthog:rateLimit before POSTHOG_RATE_LIMIT, and 'off'", () => {
    const env = { POSTHOG_API_KEY: "phx_x", POSTHOG_RATE_LIMIT: "6000/60000" };
    expect(resolveSettings({}, undefined, env).rateLimit).toEqual({ perMinute: 6000, perHour: 60000 });
    expect(resolveSettings({}, config({ "posthog:rateLimit": "off" }), env).rateLimit).toBe(false);
    expect(resolveSettings({}, undefined, { POSTHOG_API_KEY: "phx_x" }).rateLimit).toEqual({
      perMinute: 480,
      perHour: 4800,
    });
  });

  it("rejects a malformed rate limit naming the setting and the accepted forms", () => {
    for (const bad of ["fast", "10", "0/10", "10/x"]) {
      const run = () => resolveSettings({}, config({ "posthog:rateLimit": bad }), { POSTHOG_API_KEY: "k" });
      expect(run).toThrow(InvalidInputError);
      expect(run).toThrow(/posthog:rateLimit.*<perMinute>\/<perHour>.*off/);
    }
  });

  it("reads the retry base delay in milliseconds", () => {
    const env = { POSTHOG_API_KEY: "phx_x", POSTHOG_RETRY_BASE_DELAY_MS: "20" };
    expect(resolveSettings({}, undefined, env).retry.baseDelayMs).toBe(20);
    expect(resolveSettings({}, config({ "posthog:retryBaseDelayMs": "5" }), env).retry.baseDelayMs).toBe(5);
    expect(() => resolveSettings({}, config({ "posthog:retryBaseDelayMs": "-1" }), env)).toThrow(
      'Invalid retry base delay "-1", set by the stack config posthog:retryBaseDelayMs: expected a whole number of milliseconds (0 retries without back-off, at most 2147483647)',
    );
    expect(() => resolveSettings({}, undefined, { ...env, POSTHOG_RETRY_BASE_DELAY_MS: "1.5" })).toThrow(
      "set by the environment variable POSTHOG_RETRY_BASE_DELAY_MS",
    );
    expect(resolveSettings({}, config({ "posthog:retryBaseDelayMs": "0" }), env).retry.baseDelayMs).toBe(0);
  });
});
