/**
 * Issue 28, item 2, at the provider level: malformed settings refused by the provider's Check, naming the setting
 * and where it came from, before any request, through the REAL dynamic-provider host over gRPC against the
 * emulator. A preview and an `up` both start with that Check (an `up` calls Create only after it passes), so a
 * failing Check is what both show. That the engine shows it in `pulumi preview`, for a setting from an environment
 * variable and one from the stack config, is proved through the real CLI in test/stack/preview-promise.test.ts
 * (POSTHOG_HOST, posthog:organizationId); that an `up` fails on the same Check, here; the cases here cover the
 * other settings and sources the same way, without a CLI run each.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeProvider, startEnvHost, startTestEmulator, type TestEmulator, urnOf } from "./harness";

let emu: TestEmulator;
beforeAll(async () => {
  emu = await startTestEmulator();
});
afterAll(async () => {
  await emu?.close();
});

/**
 * A fresh host (a new process, as each CLI run starts one) with the connection in POSTHOG_* variables as the
 * fixture program's stacks get it, `env` over them, and `config` as the stack config; then the Check of a
 * Dashboard: its failure's text (thrown or the failures' reasons), or "" when it passes.
 */
async function checkWith(settings: {
  env?: Record<string, string>;
  config?: Record<string, string>;
}): Promise<string> {
  const host = await startEnvHost(emu, settings.env ?? {});
  try {
    await host.configure(settings.config ?? {});
    const provider = await serializeProvider("Dashboard");
    return await host
      .check(
        urnOf("Dashboard", "board"),
        {},
        { name: "Board", __provider: provider, __resourceName: "board" },
      )
      .then(
        (r) => r.failures.map((f) => `${f.property}: ${f.reason}`).join("\n"),
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
  } finally {
    await host.close();
  }
}

describe("Check refuses malformed settings, naming the setting and where it came from (no request)", () => {
  const cases: [string, { config?: Record<string, string>; env?: Record<string, string> }, RegExp][] = [
    [
      "posthog:host with another scheme",
      { config: { "posthog:host": "ftp://posthog.example.com" } },
      /Invalid posthog:host: the scheme must be http or https/,
    ],
    [
      "POSTHOG_PROJECT_ID that is not a positive integer",
      { env: { POSTHOG_PROJECT_ID: "web" } },
      /Invalid project id "web", set by the environment variable POSTHOG_PROJECT_ID: expected the project's id, a positive integer/,
    ],
    // The two the real CLI shows (test/stack/preview-promise.test.ts), here too: the same Check, host by host.
    [
      "POSTHOG_HOST that is not an http(s) URL",
      { env: { POSTHOG_HOST: "posthog.example.com" } },
      /Invalid POSTHOG_HOST: expected an http\(s\) URL/,
    ],
    [
      "posthog:organizationId that is not a UUID",
      { config: { "posthog:organizationId": "acme" } },
      /Invalid organization id "acme", set by the stack config posthog:organizationId: expected the organization's id, a UUID/,
    ],
  ];
  for (const [what, settings, message] of cases) {
    it(what, async () => {
      await emu.control("DELETE", "/requests");
      expect(await checkWith(settings)).toMatch(message);
      expect(await emu.requests()).toEqual([]);
    }, 60_000);
  }

  it("and passes with the same connection unbroken (the checks above can pass)", async () => {
    expect(await checkWith({})).toBe("");
  }, 60_000);
});
