/**
 * Issue 28, item 2 and issue 34, point 4, at the provider level: a preview proves the settings reach PostHog, with
 * one GET and no write, and fails with the very message `up` meets, for a wrong organization and a wrong project
 * (each set by its environment variable, as the fixture program's stacks get their connection), through the REAL
 * dynamic-provider host over gRPC against the emulator. Each run below is a new host process, as the engine starts
 * one per run: a preview's Checks (the SDK's `__resource.preview`) of a resource in the state with nothing to change
 * and of a new one; a refresh's Read (the nightly `preview --refresh`); an `up`'s Check (no request) then Create.
 * That the engine shows these failures in `pulumi preview`, with nothing to change and with `--refresh`, is proved
 * through the real CLI in test/stack/preview-promise.test.ts with a wrong API key (the same access check, the same
 * paths through the engine); with changes and in `up`, for that key, here (its own describe below).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderHost } from "../../tools/provider-host";
import {
  create,
  destroy,
  failure,
  type Managed,
  serializeProvider,
  startConfiguredHost,
  startEnvHost,
  startTestEmulator,
  type TestEmulator,
  urnOf,
} from "./harness";

let emu: TestEmulator;
let good: ProviderHost;
let board: Managed;

beforeAll(async () => {
  emu = await startTestEmulator();
  good = await startConfiguredHost(emu);
  board = await create(good, "Dashboard", "board", { name: "Board" });
}, 60_000);

afterAll(async () => {
  if (board) await destroy(good, board).catch(() => {});
  await good?.close();
  await emu?.close();
});

/** A fresh host (a new process, as each CLI run starts one) with the connection in POSTHOG_* variables, `env` over them. */
async function hostWith(
  env: Record<string, string>,
  run: (host: ProviderHost) => Promise<void>,
): Promise<void> {
  const host = await startEnvHost(emu, env);
  try {
    await host.configure({});
    await run(host);
  } finally {
    await host.close();
  }
}

/** A Check's failure text: thrown (its gRPC details, as {@link failure}), or the failures' reasons; "" when it passes. */
const checkFailure = (p: Promise<{ failures: { property: string; reason: string }[] }>) =>
  p.then(
    (r) => r.failures.map((f) => `${f.property}: ${f.reason}`).join("\n"),
    () => failure(p),
  );

/** The requests the emulator received since the last call (method and path), then clears its log. */
async function requestsSince(): Promise<string[]> {
  const log = (await emu.requests()).map((r) => `${r.method} ${r.path}`);
  await emu.control("DELETE", "/requests");
  return log;
}

/** The SDK's `__resource` of a Dashboard named `name`: in a preview with `preview: true`. */
const resource = (name: string, preview: boolean) => ({
  __resource: { name, stack: "organization/preview-settings", ...(preview ? { preview: true } : {}) },
});

describe("a preview proves the organization and the project reach PostHog: up's message, one GET, no write", () => {
  const organization = "0b5e7a9c-0000-4000-8000-00000000dead";
  const cases: [string, Record<string, string>, RegExp][] = [
    [
      "an organization of no one",
      { POSTHOG_ORGANIZATION_ID: organization },
      new RegExp(
        `organization ${organization} \\(set by the environment variable POSTHOG_ORGANIZATION_ID\\) was not found`,
      ),
    ],
    [
      "a project of no one",
      { POSTHOG_PROJECT_ID: "99999" },
      /project 99999 \(set by the environment variable POSTHOG_PROJECT_ID\) is not a project of/,
    ],
  ];
  for (const [what, env, message] of cases) {
    it(`${what}: a preview with nothing to change, one that creates, a refresh and an up all fail with one message`, async () => {
      const provider = await serializeProvider("Dashboard");
      await requestsSince();
      // A preview: the Check of the resource in the state, with nothing to change, proves the settings with one GET;
      // the Check of a new one (a preview that creates) fails the same way, with no second request.
      let unchanged = "";
      await hostWith(env, async (host) => {
        unchanged = await checkFailure(
          host.check(board.urn, board.inputs, {
            ...board.inputs,
            __provider: provider,
            ...resource("board", true),
          }),
        );
        expect(unchanged).toMatch(message);
        expect(await requestsSince()).toEqual([expect.stringMatching(/^GET /)]);
        const created = await checkFailure(
          host.check(
            urnOf("Dashboard", "b"),
            {},
            { name: "B", __provider: provider, ...resource("b", true) },
          ),
        );
        expect(created).toBe(unchanged);
      });
      expect(await requestsSince()).toEqual([]);
      // The refresh of `preview --refresh`: its Read fails with the same message, and the object stays in the state.
      await hostWith(env, async (host) => {
        const read = await failure(host.read(board.id, board.urn, board.outs, board.inputs));
        expect(read).toMatch(message);
      });
      expect((await requestsSince()).filter((r) => !r.startsWith("GET "))).toEqual([]);
      // `up`: its Check makes no request and passes; Create fails with the preview's message, writing nothing.
      await hostWith(env, async (host) => {
        const checked = await host.check(
          urnOf("Dashboard", "b"),
          {},
          { name: "B", __provider: provider, ...resource("b", false) },
        );
        expect(checked.failures).toEqual([]);
        expect(await requestsSince()).toEqual([]);
        const up = await failure(host.create(urnOf("Dashboard", "b"), checked.inputs));
        expect(up).toBe(unchanged);
      });
      expect((await requestsSince()).filter((r) => !r.startsWith("GET "))).toEqual([]);
    }, 120_000);
  }

  it("the same connection unbroken passes the preview's Check with one GET (the checks above can pass)", async () => {
    const provider = await serializeProvider("Dashboard");
    await requestsSince();
    await hostWith({}, async (host) => {
      const r = await host.check(board.urn, board.inputs, {
        ...board.inputs,
        __provider: provider,
        ...resource("board", true),
      });
      expect(r.failures).toEqual([]);
    });
    expect(await requestsSince()).toEqual([expect.stringMatching(/^GET /)]);
  }, 60_000);
});

describe("a wrong API key: a preview that creates fails as one with nothing to change, and an up with that message, after one GET, no write", () => {
  // test/stack/preview-promise.test.ts shows through the real CLI the preview with nothing to change and the nightly
  // gate failing with this message; here the other calls the engine makes with the same key.
  const key = "phx_this_key_is_not_known_to_posthog_0000000000000";

  it("the preview's Checks (nothing to change, a create) fail with one message after one GET; up's Check makes no request, its Create and Update fail with that message; the key is never shown", async () => {
    const provider = await serializeProvider("Dashboard");
    await requestsSince();
    let unchanged = "";
    await hostWith({ POSTHOG_API_KEY: key }, async (host) => {
      unchanged = await checkFailure(
        host.check(board.urn, board.inputs, {
          ...board.inputs,
          __provider: provider,
          ...resource("board", true),
        }),
      );
      expect(unchanged).toMatch(/POSTHOG_API_KEY/);
      expect(await requestsSince()).toEqual([expect.stringMatching(/^GET /)]);
      const created = await checkFailure(
        host.check(urnOf("Dashboard", "b"), {}, { name: "B", __provider: provider, ...resource("b", true) }),
      );
      expect(created).toBe(unchanged);
    });
    expect(await requestsSince()).toEqual([]);
    expect(unchanged.includes(key)).toBe(false);

    // `up` (its own host): Check passes with no request; the Create, and the Update of the dashboard in the state,
    // fail with the preview's message and write nothing.
    await hostWith({ POSTHOG_API_KEY: key }, async (host) => {
      const checked = await host.check(
        urnOf("Dashboard", "b"),
        {},
        { name: "B", __provider: provider, ...resource("b", false) },
      );
      expect(checked.failures).toEqual([]);
      expect(await requestsSince()).toEqual([]);
      expect(await failure(host.create(urnOf("Dashboard", "b"), checked.inputs))).toBe(unchanged);
      const renamed = await host.check(board.urn, board.inputs, {
        ...board.inputs,
        name: "Board renamed",
        __provider: provider,
        ...resource("board", false),
      });
      expect(renamed.failures).toEqual([]);
      expect(await failure(host.update(board.id, board.urn, board.outs, renamed.inputs))).toBe(unchanged);
    });
    expect((await requestsSince()).filter((r) => !r.startsWith("GET "))).toEqual([]);
  }, 120_000);
});
