import { describe, expect, it } from "vitest";
import { type TestEmulator, withEmulator } from "../support/emulator";

// PostHog's organization invite throttles (OrganizationInviteBurstThrottle 50/hour, OrganizationInviteSustainedThrottle
// 200/day; PostHog/posthog#74302): keyed per organization, counting invites, not requests. The emulator's budget is
// on by default and settable (option `inviteBudget`, `--invite-budget`, `POST /_emulator/invite-budget`).

const invite = (emu: TestEmulator, email: string) =>
  emu.call("POST", `${emu.org}/invites/`, { body: { target_email: email, send_email: false } });
const bulk = (emu: TestEmulator, prefix: string, n: number) =>
  emu.call("POST", `${emu.org}/invites/bulk/`, {
    body: Array.from({ length: n }, (_, i) => ({ target_email: `${prefix}${i}@example.com` })),
  });
const waitOf = (detail: string) => Number(/Expected available in (\d+) seconds?/.exec(detail)?.[1]);
const invites = async (emu: TestEmulator) =>
  (await emu.call("GET", `${emu.org}/invites/?limit=1000`)).body.count as number;

describe("the organization's invite budget", () => {
  it("is 50 invites an hour by default: the 51st is refused with 429 naming the wait, and nothing is stored", () =>
    withEmulator(async (emu) => {
      // The emulator's clock stands still: the wait is exact, however long the 51 requests take.
      await emu.control("POST", "/clock", { frozen: true });
      for (let i = 0; i < 50; i++) expect((await invite(emu, `p${i}@example.com`)).status).toBe(201);
      const refused = await invite(emu, "p50@example.com");
      expect(refused.status).toBe(429);
      expect(refused.body.type).toBe("throttled_error");
      expect(waitOf(refused.body.detail)).toBe(3600);
      expect(await invites(emu)).toBe(50);
      // one second before the hour, still refused (the wait that is left); at the hour, free again
      await emu.control("POST", "/clock", { advanceSeconds: 3599 });
      const almost = await invite(emu, "p50@example.com");
      expect(almost.status).toBe(429);
      expect(waitOf(almost.body.detail)).toBe(1);
      await emu.control("POST", "/clock", { advanceSeconds: 1 });
      expect((await invite(emu, "p50@example.com")).status).toBe(201);
    }));

  it("counts every invite of a bulk request: 20 do not fit in the 10 left, 10 do", () =>
    withEmulator(async (emu) => {
      expect((await bulk(emu, "a", 20)).status).toBe(201);
      expect((await bulk(emu, "b", 20)).status).toBe(201);
      const refused = await bulk(emu, "c", 20);
      expect(refused.status).toBe(429);
      expect(await invites(emu)).toBe(40);
      expect((await bulk(emu, "d", 10)).status).toBe(201);
      expect((await invite(emu, "e@example.com")).status).toBe(429);
    }));

  it("also allows 200 a day: after four hours of 50, the next waits until the day's first invites age out", () =>
    withEmulator(async (emu) => {
      await emu.control("POST", "/clock", { frozen: true });
      for (let h = 0; h < 4; h++) {
        expect((await bulk(emu, `h${h}a`, 20)).status).toBe(201);
        expect((await bulk(emu, `h${h}b`, 20)).status).toBe(201);
        expect((await bulk(emu, `h${h}c`, 10)).status).toBe(201);
        await emu.control("POST", "/clock", { advanceSeconds: 3600 });
      }
      const refused = await invite(emu, "late@example.com");
      expect(refused.status).toBe(429);
      // the first 50 were sent 4 hours ago: they leave the day's window in 20 hours
      expect(waitOf(refused.body.detail)).toBe(20 * 3600);
    }));

  it("is settable through the control plane and the option; off sends any number", async () => {
    await withEmulator(
      async (emu) => {
        for (let i = 0; i < 3; i++) expect((await invite(emu, `q${i}@example.com`)).status).toBe(201);
        expect((await invite(emu, "q3@example.com")).status).toBe(429);
        const off = await emu.control("POST", "/invite-budget", { enabled: false });
        expect(off.body).toEqual({ inviteBudget: false });
        for (let i = 3; i < 60; i++) expect((await invite(emu, `q${i}@example.com`)).status).toBe(201);
        const set = await emu.control("POST", "/invite-budget", { perHour: 1, perDay: 1 });
        expect(set.body).toEqual({ inviteBudget: { perHour: 1, perDay: 1 } });
        expect((await invite(emu, "r0@example.com")).status).toBe(201);
        expect((await invite(emu, "r1@example.com")).status).toBe(429);
        expect((await emu.control("POST", "/invite-budget", { perHour: 0, perDay: 1 })).status).toBe(400);
      },
      { inviteBudget: { perHour: 3, perDay: 10 } },
    );
  });
});
