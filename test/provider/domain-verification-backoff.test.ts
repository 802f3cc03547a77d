import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientShared, clientShared, createClient, type PostHogClient } from "../../provider/client";
import { VERIFY_MAX_DELAY_MS, verifyWithBackoff } from "../../provider/resources/domain-verification";
import { startTestEmulator, type TestEmulator } from "../support/emulator";

// DomainVerification's waits: once the TXT record is published, the domain is verified at the next attempt,
// at most VERIFY_MAX_DELAY_MS later (before: the waits doubled up to 30 s, so a record published after a minute
// waited up to 30 s more), and each attempt costs one request: verify answers the domain, as PostHog does.

let emu: TestEmulator;
let api: PostHogClient;
let shared: ClientShared;

beforeAll(async () => {
  emu = await startTestEmulator({ rateLimit: false });
  shared = clientShared();
  api = createClient({
    shared,
    apiKey: emu.apiKey,
    host: emu.url,
    organizationId: emu.organizationId,
    rateLimit: false,
  });
});
afterAll(async () => {
  await shared?.close();
  await emu?.close();
});

describe("DomainVerification backoff", () => {
  it("waits 1 s, 2 s, 4 s, then 5 s between attempts, and verifies at the attempt after the record appears", async () => {
    const domain = (
      await emu.call("POST", `${emu.org}/domains/`, { body: { domain: "backoff.example.com" } })
    ).body as { id: string; verification_challenge: string };
    await emu.control("DELETE", "/requests");
    const waits: number[] = [];
    const d = await verifyWithBackoff(api, domain.id, 3600, async (ms) => {
      waits.push(ms);
      // the DNS automation publishes the record during the 6th wait (about 27 s in)
      if (waits.length === 6)
        await emu.control("POST", "/dns", {
          name: "_posthog-challenge.backoff.example.com",
          txt: domain.verification_challenge,
        });
    });
    expect(d.is_verified).toBe(true);
    expect(VERIFY_MAX_DELAY_MS).toBe(5_000);
    expect(waits).toEqual([1000, 2000, 4000, 5000, 5000, 5000]);
    const log = await emu.requests();
    const one = `${emu.org}/domains/${domain.id}/`;
    // one GET first, then 7 attempts of verify, each answering the domain (no GET after it)
    expect(log.map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET ${one}`,
      ...Array.from({ length: 7 }, () => `POST ${one}verify/`),
    ]);
  });

  it("sends one GET and no verify for a domain verified already", async () => {
    const domain = (await emu.call("POST", `${emu.org}/domains/`, { body: { domain: "done.example.com" } }))
      .body as { id: string; verification_challenge: string };
    await emu.control("POST", "/dns", {
      name: "_posthog-challenge.done.example.com",
      txt: domain.verification_challenge,
    });
    await emu.call("POST", `${emu.org}/domains/${domain.id}/verify/`);
    await emu.control("DELETE", "/requests");
    const waits: number[] = [];
    expect((await verifyWithBackoff(api, domain.id, 60, async (ms) => void waits.push(ms))).is_verified).toBe(
      true,
    );
    expect(waits).toEqual([]);
    expect((await emu.requests()).length).toBe(1);
  });
});
