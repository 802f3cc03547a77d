import { describe, expect, it } from "vitest";
import { createClient, InvalidInputError, RateLimitedError, resolveSettings } from "../../provider/client";
import { type TestEmulator, withEmulator } from "../support/emulator";

// A 429 whose wait is longer than posthog:maxRateLimitWait fails at once, clearly, instead of hanging: e.g. the
// organization's invite budget (50 invites an hour, 200 a day) used up. Against the emulator's invite budget.

const clientOf = (emu: TestEmulator, extra: { maxRateLimitWaitMs?: number } = {}) =>
  createClient({
    apiKey: emu.apiKey,
    host: emu.url,
    organizationId: emu.organizationId,
    rateLimit: false,
    ...extra,
  });
const posts = async (emu: TestEmulator) =>
  (await emu.requests()).filter((r) => r.method === "POST" && r.path === `${emu.org}/invites/`);
const send = (client: ReturnType<typeof createClient>, email: string) =>
  client.invites.create({ body: { target_email: email, send_email: false } });

describe("posthog:maxRateLimitWait", () => {
  it("an invite beyond the budget fails at once naming the wait, the time, the budget and the setting; later ones are not sent", () =>
    withEmulator(
      async (emu) => {
        const client = clientOf(emu);
        await send(client, "one@example.com");
        await send(client, "two@example.com");
        const t0 = Date.now();
        const error = await send(client, "three@example.com").catch((e: unknown) => e);
        expect(Date.now() - t0).toBeLessThan(5_000); // no waiting out the hour
        expect(error).toBeInstanceOf(RateLimitedError);
        const message = (error as Error).message;
        expect(message).toMatch(
          /→ 429 throttled: PostHog throttled this request for (59|60) min \(until about \d{4}-\d\d-\d\d \d\d:\d\d UTC\)/,
        );
        expect(message).toContain(
          "longer than posthog:maxRateLimitWait (120 s): not waiting; nothing was applied",
        );
        expect(message).toContain("PostHog allows an organization 50 invites an hour and 200 a day");
        expect(message).toContain("raise posthog:maxRateLimitWait (POSTHOG_MAX_RATE_LIMIT_WAIT)");
        expect((await posts(emu)).map((r) => r.status)).toEqual([201, 201, 429]);
        // the next invite is refused until then: it fails the same way without a request
        const again = await send(client, "four@example.com").catch((e: unknown) => e);
        expect((again as Error).message).toContain(
          "→ 429 throttled: not sent: PostHog throttled this request",
        );
        expect((await posts(emu)).length).toBe(3);
        // other requests are not held
        expect((await client.invites.list()).count).toBe(2);
      },
      { inviteBudget: { perHour: 2, perDay: 10 } },
    ));

  it("a wait within the setting is waited out (the invite is sent once the budget frees)", () =>
    withEmulator(
      async (emu) => {
        await emu.control("POST", "/faults", {
          method: "POST",
          path: "/invites/$",
          status: 429,
          retryAfter: 1,
          times: 1,
        });
        const client = clientOf(emu, { maxRateLimitWaitMs: 5_000 });
        const made = await send(client, "waited@example.com");
        expect(made.target_email).toBe("waited@example.com");
        expect((await posts(emu)).map((r) => r.status)).toEqual([429, 201]);
        // a wait longer than 5 s is not
        await emu.control("POST", "/faults", {
          method: "POST",
          path: "/invites/$",
          status: 429,
          retryAfter: 6,
          times: 1,
        });
        const error = await send(client, "late@example.com").catch((e: unknown) => e);
        expect((error as Error).message).toContain("PostHog throttled this request for 6 s");
        expect((error as Error).message).toContain("posthog:maxRateLimitWait (5 s)");
      },
      { inviteBudget: false },
    ));

  it("is read from the stack config or the environment, in seconds or with a unit; anything else names the setting", () => {
    const base = { apiKey: "phx_0123456789abcdef0123" };
    const config = (v: string) => ({
      get: (k: string) => (k === "posthog:maxRateLimitWait" ? v : undefined),
    });
    expect(resolveSettings(base, undefined, {}).maxRateLimitWaitMs).toBe(120_000);
    expect(resolveSettings(base, config("90"), {}).maxRateLimitWaitMs).toBe(90_000);
    expect(resolveSettings(base, config("10m"), {}).maxRateLimitWaitMs).toBe(600_000);
    expect(resolveSettings(base, undefined, { POSTHOG_MAX_RATE_LIMIT_WAIT: "1h" }).maxRateLimitWaitMs).toBe(
      3_600_000,
    );
    expect(resolveSettings({ ...base, maxRateLimitWaitMs: 0 }, config("5m"), {}).maxRateLimitWaitMs).toBe(0);
    const bad = (() => {
      try {
        resolveSettings(base, config("soon"), {});
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(bad).toBeInstanceOf(InvalidInputError);
    expect((bad as Error).message).toBe(
      'Invalid posthog:maxRateLimitWait "soon", set by the stack config posthog:maxRateLimitWait: expected whole seconds ("120"), or with a unit s, m or h ("90s", "10m", "1h")' +
        " (see docs/troubleshooting/settings-and-keys.md#invalid-posthoghost-and-the-other-settings)",
    );
  });
});
