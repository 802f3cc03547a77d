/**
 * One object, one resource (issue 12, point 5), through the real dynamic-provider host over gRPC: `check`
 * refuses a second resource of the program that manages an object another one manages, naming both (the SDK
 * passes the Pulumi name in `__resourceName`, as the inputs below do); `diff` and `create` claim what the
 * outputs or the API add (the person behind a Member's e-mail). test/stack/preview-promise.test.ts (its describe
 * "one object, one resource") runs the same through a program using the SDK.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { ProviderHost } from "../../tools/provider-host";
import {
  create,
  destroy,
  failure,
  plan,
  serializeProvider,
  startConfiguredHost,
  type TestEmulator,
  urnOf,
  useProviderHost,
} from "./harness";

let emu: TestEmulator;
let host: ProviderHost;

useProviderHost((e, h) => {
  emu = e;
  host = h;
});

/**
 * The provider process of the next run, started once: a second process, which has made none of what the first
 * (`host`) made and checked none of its resources. Each case below that needs a next run uses objects no other
 * case of this process uses (its own person or e-mail), so the cases share it as one program's next run would.
 */
let nextRunHost: Promise<ProviderHost> | undefined;
const nextRun = (): Promise<ProviderHost> => {
  nextRunHost ??= startConfiguredHost(emu);
  return nextRunHost;
};
afterAll(async () => {
  await (await nextRunHost)?.close();
});

const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const MIA = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03", email: "mia.member@example.com" };
const MAX = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04", email: "max.member@example.com" };

/** Check of resource `name` of type `type`, as the engine sends it for a program using the SDK. */
async function check(type: string, name: string, inputs: Record<string, unknown>, on = host) {
  const provider = await serializeProvider(type);
  return on.check(urnOf(type, name), {}, { ...inputs, __resourceName: name, __provider: provider });
}

describe("two resources managing one object fail in check, naming both", () => {
  const cases: [
    type: string,
    first: Record<string, unknown>,
    second: Record<string, unknown>,
    property: string,
  ][] = [
    [
      "Invite",
      { targetEmail: "twin@example.com" },
      { targetEmail: "Twin@Example.com", level: 8 },
      "targetEmail",
    ],
    ["Member", { email: MAX.email, level: 8 }, { email: "MAX.member@example.com", level: 1 }, "email"],
    ["Member", { userUuid: MAX.uuid, level: 8 }, { userUuid: MAX.uuid.toUpperCase(), level: 1 }, "userUuid"],
    ["Domain", { domain: "twin.example.com" }, { domain: "twin.example.com", adopt: true }, "domain"],
    [
      "DashboardCollaborator",
      { dashboardId: 77, userUuid: MIA.uuid },
      { dashboardId: 77, userUuid: MIA.uuid.toUpperCase(), projectId: "1001" },
      "userUuid",
    ],
    ["DashboardSharing", { dashboardId: 78 }, { dashboardId: 78, enabled: false }, "dashboardId"],
    [
      "BatchExportPause",
      { batchExportId: "0190aaaa-0000-4000-8000-000000000001" },
      { batchExportId: "0190AAAA-0000-4000-8000-000000000001", paused: false },
      "batchExportId",
    ],
  ];
  for (const [type, first, second, property] of cases) {
    it(`${type} (same ${property})`, async () => {
      await emu.control("DELETE", "/requests");
      const a = await check(type, `${type}-${property}-a`, first);
      expect(a.failures).toEqual([]);
      expect(a.inputs).not.toHaveProperty("__resourceName"); // never part of the inputs, so never in state
      const b = await check(type, `${type}-${property}-b`, second);
      expect(b.failures).toEqual([
        {
          property,
          reason: expect.stringContaining(
            `${type} "${type}-${property}-b" and ${type} "${type}-${property}-a" both manage `,
          ),
        },
      ]);
      expect(b.failures[0]?.reason).toMatch(/keep one of them and remove the other from the program/);
      // The same resource checked again (a preview, then the update, in one process) is no conflict.
      expect((await check(type, `${type}-${property}-a`, first)).failures).toEqual([]);
      // No HTTP request for any of it.
      expect(await emu.requests()).toEqual([]);
    });
  }

  it("claims nothing for values unknown during preview, nor for resources declared without the SDK", async () => {
    expect((await check("DashboardSharing", "p", { dashboardId: UNKNOWN })).failures).toEqual([]);
    expect((await check("DashboardSharing", "q", { dashboardId: UNKNOWN })).failures).toEqual([]);
    const provider = await serializeProvider("Invite");
    for (const name of ["plain-1", "plain-2"]) {
      const r = await host.check(
        urnOf("Invite", name),
        {},
        { targetEmail: "plain@example.com", __provider: provider },
      );
      expect(r.failures).toEqual([]);
    }
  });
});

describe("claims made after check: the person behind a Member", () => {
  it("create claims the person by user UUID and e-mail: a Member by user UUID of that person fails", async () => {
    const mia = await create(host, "Member", "mia-by-email", {
      email: MIA.email,
      level: "member",
      retainOnDelete: true,
      __resourceName: "mia-by-email",
    });
    expect(mia.outs).toMatchObject({ userUuid: MIA.uuid, identifiedBy: "email" });
    const other = await check("Member", "mia-by-uuid", { userUuid: MIA.uuid, level: "admin" });
    expect(other.failures).toEqual([
      {
        property: "userUuid",
        reason: expect.stringContaining(
          'Member "mia-by-uuid" and Member "mia-by-email" both manage the member',
        ),
      },
    ]);

    // A new provider process (the next run): diff of the existing resource claims the person from its
    // outputs, so the other form is refused before any request there too.
    const next = await nextRun();
    const planned = await plan(next, mia, {
      email: MIA.email,
      level: "member",
      retainOnDelete: true,
      __resourceName: "mia-by-email",
    });
    expect(planned.checked.failures).toEqual([]);
    expect(planned.diff.changes).toBe(false);
    const refused = await check("Member", "mia-by-uuid", { userUuid: MIA.uuid, level: "admin" }, next);
    expect(refused.failures.map((f) => f.reason)).toEqual([
      expect.stringContaining('Member "mia-by-uuid" and Member "mia-by-email" both manage'),
    ]);
    await destroy(host, mia);
  });
});

// Found on the real Pulumi CLI (issue 26): the engine checks registrations in the order they reach it, which the
// Node runtime does not fix. A resource already in the state keeps its object whichever of the pair is checked
// first; the new one fails before its write, and nothing is sent twice.
describe("a resource in the state keeps its object, whatever the order of the checks", () => {
  it("Invite: the new one checked first passes check, then fails at create once the kept one is checked; no POST", async () => {
    const provider = await serializeProvider("Invite");
    // The run that made it: the first process.
    const kept = await create(host, "Invite", "kept-invite", {
      targetEmail: "order@example.com",
      __resourceName: "kept-invite",
    });
    // The next run, in a new provider process: the new Invite's registration arrives first.
    const run = await nextRun();
    await emu.control("DELETE", "/requests");
    const newcomer = await run.check(
      urnOf("Invite", "new-invite"),
      {},
      { targetEmail: "ORDER@example.com", __resourceName: "new-invite", __provider: provider },
    );
    expect(newcomer.failures).toEqual([]); // nothing tells it yet that another resource holds the invite
    const again = await run.check(kept.urn, kept.inputs, {
      targetEmail: "order@example.com",
      __resourceName: "kept-invite",
      __provider: provider,
    });
    expect(again.failures).toEqual([]); // in the state (old inputs): it keeps its invite
    const refused = await failure(run.create(urnOf("Invite", "new-invite"), newcomer.inputs));
    expect(refused).toContain('Invite "new-invite" and Invite "kept-invite" both manage the invite for');
    expect((await emu.requests()).filter((r) => r.method !== "GET")).toEqual([]);
    await destroy(host, kept);
  });

  it("Invite: the kept one checked first; the new one fails in check, naming both", async () => {
    const provider = await serializeProvider("Invite");
    const kept = await create(host, "Invite", "kept-first", {
      targetEmail: "first@example.com",
      __resourceName: "kept-first",
    });
    const run = await nextRun();
    const again = await run.check(kept.urn, kept.inputs, {
      targetEmail: "first@example.com",
      __resourceName: "kept-first",
      __provider: provider,
    });
    expect(again.failures).toEqual([]);
    const newcomer = await run.check(
      urnOf("Invite", "new-second"),
      {},
      { targetEmail: "First@example.com", __resourceName: "new-second", __provider: provider },
    );
    expect(newcomer.failures.map((f) => f.reason)).toEqual([
      expect.stringContaining('Invite "new-second" and Invite "kept-first" both manage the invite for'),
    ]);
    await destroy(host, kept);
  });
});
