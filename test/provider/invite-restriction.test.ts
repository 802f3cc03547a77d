/**
 * Provider calls that two CLI tests show through the engine once, proved here for the other operations that make
 * the same calls, through the REAL dynamic-provider host over gRPC against the emulator:
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
  refresh,
  startConfiguredHost,
  startTestEmulator,
  type TestEmulator,
  update,
} from "./harness";

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
