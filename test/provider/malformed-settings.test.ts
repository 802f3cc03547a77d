/**
 * Issue 28, item 2, at the provider level: malformed settings refused by the provider's Check, naming the setting
 * and where it came from, before any request, through the REAL dynamic-provider host over gRPC against the
 * emulator. A preview and an `up` both start with that Check (an `up` calls Create only after it passes), so a
 * failing Check is what both show. That the engine shows it in `pulumi preview`, for a setting from an environment
 * variable and one from the stack config, is proved through the real CLI in test/stack/preview-promise.test.ts
 * (POSTHOG_HOST, posthog:organizationId); that an `up` fails on the same Check, here; the cases here cover the
 * other settings and sources the same way, without a CLI run each.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SETTINGS } from "../../provider/framework/settings";
import type { ProviderHost } from "../../tools/provider-host";
import {
  repoRoot,
  serializeProvider,
  startEnvHost,
  startTestEmulator,
  type TestEmulator,
  urnOf,
} from "./harness";

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

/**
 * Issue 49, item 4: every `POSTHOG_*` variable and `posthog:*` setting the package reads is checked by a preview's
 * Check before any request. A malformed value of each (`MALFORMED`, one per setting of provider/framework/settings.ts
 * `SETTINGS`, which must name every setting the code reads) fails the Check of a preview that plans a create,
 * naming the setting as its source spells it, where its value came from and the accepted forms, and the emulator
 * sees no request; from the stack config one at a time (one host, configured again for each), from the environment
 * all at once (one host: one error names them all). Before, a malformed `posthog:rateLimit` or
 * `posthog:maxRateLimitWait` named neither its value nor its source, a key with a line break or a project key
 * (`phc_…`) passed every Check and failed at the first request, and a relative `POSTHOG_CREATE_JOURNAL_DIR` (`false`)
 * was taken as a directory inside the program.
 */
describe("every setting the package reads is checked by a preview's Check, before any request", () => {
  /** A value each setting refuses, by environment variable, and a piece of the accepted forms its message gives. */
  const MALFORMED: Record<string, { value: string; forms: string }> = {
    POSTHOG_API_KEY: { value: "phc_0123456789abcdefghijklmnop", forms: "personal API key, phx_" },
    POSTHOG_HOST: { value: "posthog.example.com", forms: "expected an http(s) URL" },
    POSTHOG_ORGANIZATION_ID: { value: "acme", forms: "a UUID such as" },
    POSTHOG_PROJECT_ID: { value: "web", forms: "a positive integer such as 12345" },
    POSTHOG_RATE_LIMIT: { value: "480 per minute", forms: '"<perMinute>/<perHour>"' },
    POSTHOG_MAX_RATE_LIMIT_WAIT: { value: "2 minutes", forms: 'with a unit s, m or h ("90s"' },
    POSTHOG_RETRY_BASE_DELAY_MS: { value: "1.5", forms: "a whole number of milliseconds" },
    POSTHOG_HEADERS_TIMEOUT_MS: { value: "0", forms: "a positive whole number of milliseconds" },
    POSTHOG_FIND_CACHE_MS: { value: "soon", forms: "a whole number of milliseconds" },
    POSTHOG_CREATE_JOURNAL_DIR: { value: "false", forms: "expected an absolute path" },
    POSTHOG_LOST_CREATE_WAIT: { value: "soon", forms: 'with a unit s, m or h ("90s"' },
    POSTHOG_LOST_CREATE_WINDOW: { value: "10 minutes", forms: 'with a unit s, m or h ("90s"' },
  };

  /** The preview's Check of a new Dashboard on `host`: its failure's text (thrown or the failures'), or "". */
  async function previewCheck(host: ProviderHost): Promise<string> {
    const provider = await serializeProvider("Dashboard");
    return host
      .check(
        urnOf("Dashboard", "board"),
        {},
        { name: "Board", __provider: provider, __resource: { name: "board", stack: "p/s", preview: true } },
      )
      .then(
        (r) => r.failures.map((f) => `${f.property}: ${f.reason}`).join("\n"),
        (e: unknown) => String((e as { details?: string }).details ?? e),
      );
  }

  it("the list names every POSTHOG_* variable and posthog:* setting the code reads, and docs/installation-configuration.md lists each", () => {
    expect(Object.keys(MALFORMED).sort()).toEqual(SETTINGS.map((s) => s.env).sort());
    const read = { env: new Set<string>(), config: new Set<string>() };
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (/\.(ts|js|cjs|mjs)$/.test(name)) {
          const text = readFileSync(path, "utf8");
          for (const m of text.matchAll(/POSTHOG_[A-Z][A-Z0-9_]*/g)) read.env.add(m[0]);
          for (const m of text.matchAll(/posthog:([a-z][A-Za-z]*)/g))
            if (m[1] !== "index" && m[1] !== "config") read.config.add(m[0]);
        }
      }
    };
    for (const dir of ["provider", "sdk", "plugin", "policy"]) walk(join(repoRoot, dir));
    expect([...read.env].sort()).toEqual(SETTINGS.map((s) => s.env).sort());
    expect([...read.config].sort()).toEqual(SETTINGS.flatMap((s) => (s.config ? [s.config] : [])).sort());
    const docs = readFileSync(join(repoRoot, "docs", "installation-configuration.md"), "utf8");
    for (const s of SETTINGS) {
      const row = docs.split("\n").find((l) => l.startsWith("|") && l.includes(`\`${s.env}\``));
      expect(row, s.env).toBeDefined();
      expect(row).toContain(s.config ? `\`${s.config}\`` : "| — |");
    }
  });

  it("from the stack config, all at once with a host that answers: one Check names every posthog:* setting, its source and the accepted forms (never the key), with no request", async () => {
    // posthog:host stays unset (POSTHOG_HOST reaches the emulator), so that a request could be made; a malformed
    // posthog:host is the first describe's.
    const config = Object.fromEntries(
      SETTINGS.flatMap((s) =>
        s.config && s.config !== "posthog:host" ? [[s.config, MALFORMED[s.env]?.value ?? ""]] : [],
      ),
    );
    const host = await startEnvHost(emu);
    try {
      await host.configure(config);
      await emu.control("DELETE", "/requests");
      const message = await previewCheck(host);
      expect(message).toContain(`${Object.keys(config).length} settings are malformed`);
      for (const s of SETTINGS) {
        if (!s.config || s.config === "posthog:host") continue;
        expect(message, s.config).toContain(`set by the stack config ${s.config}`);
        expect(message, s.config).toContain(MALFORMED[s.env]?.forms);
      }
      expect(message).not.toContain(MALFORMED.POSTHOG_API_KEY?.value);
      expect(await emu.requests()).toEqual([]);
    } finally {
      await host.close();
    }
  }, 60_000);

  it("from the environment, all at once: one Check names every variable, its value's source and the accepted forms (never the key), with no request", async () => {
    const env = Object.fromEntries(Object.entries(MALFORMED).map(([k, v]) => [k, v.value]));
    const host = await startEnvHost(emu, env);
    try {
      await host.configure({});
      await emu.control("DELETE", "/requests");
      const message = await previewCheck(host);
      // The host's own check stops the client's at the host (it cannot say where the others would reach).
      expect(message).toContain(`${SETTINGS.length} settings are malformed`);
      for (const s of SETTINGS) {
        const bad = MALFORMED[s.env] as { value: string; forms: string };
        expect(message, s.env).toContain(bad.forms);
        expect(message, s.env).toMatch(new RegExp(`${s.env}\\b`));
      }
      for (const s of SETTINGS.filter(
        (x) => !["POSTHOG_HOST", "POSTHOG_LOST_CREATE_WAIT", "POSTHOG_LOST_CREATE_WINDOW"].includes(x.env),
      ))
        expect(message, s.env).toContain(`set by the environment variable ${s.env}`);
      expect(message).not.toContain(MALFORMED.POSTHOG_API_KEY?.value);
      expect(await emu.requests()).toEqual([]);
    } finally {
      await host.close();
    }
  }, 60_000);

  it("the variables only the environment sets, with a working connection: the Check names each, with no request", async () => {
    const env = Object.fromEntries(
      SETTINGS.filter((s) => s.config === undefined).map((s) => [s.env, MALFORMED[s.env]?.value ?? ""]),
    );
    const host = await startEnvHost(emu, env);
    try {
      await host.configure({});
      await emu.control("DELETE", "/requests");
      const message = await previewCheck(host);
      for (const name of Object.keys(env)) expect(message, name).toContain(`Invalid ${name} `);
      expect(await emu.requests()).toEqual([]);
    } finally {
      await host.close();
    }
  }, 60_000);
});
