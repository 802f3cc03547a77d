/**
 * Provider calls that three CLI tests show through the engine once, proved here for the other operations that make
 * the same calls, through the REAL dynamic-provider host over gRPC against the emulator (each run a new host
 * process, as the engine starts one per run):
 * - a wrong API key (issue 28, item 2; issue 34, point 4): a preview's Check of a new resource fails as that of a
 *   resource with nothing to change, and an `up`'s Check passes with no request, then its Create and its Update fail
 *   with the preview's message, writing nothing. test/stack/preview-promise.test.ts shows through the real CLI a
 *   preview with nothing to change and the nightly gate failing with that message (test/provider/
 *   preview-settings-reach.test.ts proves the same calls for a wrong organization and a wrong project).
 * - an invite another stack replaced (issue 34, point 5): the Read of a refresh fails naming the e-mail and the
 *   invite that replaced it. test/stack/invite-two-stacks.test.ts shows the nightly gate's refresh failing so.
 * - a dashboard declared at restrictionLevel 37 in an organization without the advanced permissions (issue 13): its
 *   Update, like its Create, reports the level in effect (21) beside the declared one, the outputs from which the
 *   SDK warns on every run. test/stack/restriction-warning.test.ts shows that warning through the real CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderHost } from "../../tools/provider-host";
import {
  create,
  failure,
  type Managed,
  refresh,
  serializeProvider,
  startConfiguredHost,
  startEnvHost,
  startTestEmulator,
  type TestEmulator,
  update,
  urnOf,
} from "./harness";

describe("a wrong API key: a preview that creates fails as one with nothing to change, and an up with that message, after one GET, no write", () => {
  let emu: TestEmulator;
  let good: ProviderHost;
  let board: Managed;
  beforeAll(async () => {
    emu = await startTestEmulator();
    good = await startConfiguredHost(emu);
    board = await create(good, "Dashboard", "board", { name: "Board" });
  }, 60_000);
  afterAll(async () => {
    await good?.close();
    await emu?.close();
  });

  const key = "phx_this_key_is_not_known_to_posthog_0000000000000";

  /** The requests the emulator received since the last call (method and path), then clears its log. */
  async function requestsSince(): Promise<string[]> {
    const log = (await emu.requests()).map((r) => `${r.method} ${r.path}`);
    await emu.control("DELETE", "/requests");
    return log;
  }

  /** A fresh host (a new process) with the connection in POSTHOG_* variables and the wrong key, configured. */
  async function withWrongKey(run: (host: ProviderHost) => Promise<void>): Promise<void> {
    const host = await startEnvHost(emu, { POSTHOG_API_KEY: key });
    try {
      await host.configure({});
      await run(host);
    } finally {
      await host.close();
    }
  }

  /** The SDK's `__resource` of a Dashboard named `name`: in a preview with `preview: true`. */
  const resource = (name: string, preview: boolean) => ({
    __resource: { name, stack: "organization/wrong-key", ...(preview ? { preview: true } : {}) },
  });

  /** A Check's failure text: thrown (its gRPC details), or the failures' reasons; "" when it passes. */
  const checkFailure = (p: Promise<{ failures: { property: string; reason: string }[] }>) =>
    p.then(
      (r) => r.failures.map((f) => `${f.property}: ${f.reason}`).join("\n"),
      () => failure(p),
    );

  it("the preview's Checks (nothing to change, a create) fail with one message after one GET; up's Check makes no request, its Create and Update fail with that message; the key is never shown", async () => {
    const provider = await serializeProvider("Dashboard");
    await requestsSince();
    let unchanged = "";
    await withWrongKey(async (host) => {
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
    await withWrongKey(async (host) => {
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

describe("an invite another stack replaced: the refresh's Read fails naming the e-mail and the invite that replaced it", () => {
  let emu: TestEmulator;
  let host: ProviderHost;
  beforeAll(async () => {
    emu = await startTestEmulator();
    host = await startConfiguredHost(emu);
  }, 60_000);
  afterAll(async () => {
    await host?.close();
    await emu?.close();
  });

  it("Read throws the replacement's message (the resource is not dropped); nothing is sent", async () => {
    const email = "replaced.invitee@example.com";
    const mine = await create(host, "Invite", "shared", { targetEmail: email, sendEmail: false });
    // Another stack's invite for the same address: PostHog keeps the newer.
    const other = await emu.api("POST", `/api/organizations/${emu.organizationId}/invites/`, {
      target_email: email,
      level: 1,
      send_email: false,
    });
    expect(other.status).toBe(201);
    const otherId = (other.body as { id: string }).id;
    expect(otherId).not.toBe(mine.id);
    await emu.control("DELETE", "/requests");
    const message = await failure(host.read(mine.id, mine.urn, mine.outs, mine.inputs));
    expect(message).toContain(
      `The invite ${mine.id} for ${email} that this resource manages was replaced by invite ${otherId}`,
    );
    expect(message).toContain("Two stacks must not declare an invite for the same address");
    expect((await emu.requests()).filter((r) => r.method !== "GET")).toEqual([]);
  }, 60_000);
});

describe("a dashboard at restrictionLevel 37 without the advanced permissions: its Update, like its Create, reports 21 in effect", () => {
  let emu: TestEmulator;
  let host: ProviderHost;
  beforeAll(async () => {
    emu = await startTestEmulator({ paidFeatures: false });
    host = await startConfiguredHost(emu);
  }, 60_000);
  afterAll(async () => {
    await host?.close();
    await emu?.close();
  });

  it("create and update (and the refresh between) keep restrictionLevel 37 and effectiveRestrictionLevel 21", async () => {
    const board = await create(host, "Dashboard", "board", { name: "Board", restrictionLevel: 37 });
    expect(board.outs).toMatchObject({ restrictionLevel: 37, effectiveRestrictionLevel: 21 });
    const read = await refresh(host, board);
    expect(read.outs).toMatchObject({ restrictionLevel: 37, effectiveRestrictionLevel: 21 });
    const renamed = await update(host, read, { name: "Board 2", restrictionLevel: 37 });
    expect(renamed.outs).toMatchObject({
      name: "Board 2",
      restrictionLevel: 37,
      effectiveRestrictionLevel: 21,
    });
  }, 60_000);
});
