/**
 * One object, one resource (issue 12, point 5), through the real dynamic-provider host over gRPC: `check`
 * refuses a second resource of the program that manages an object another one manages, naming both (the SDK
 * passes the Pulumi name in `__resourceName`, as the inputs below do); `diff` and `create` claim what the
 * outputs or the API add (the person behind a Member's e-mail). test/stack/preview-promise.test.ts (its describe
 * "one object, one resource") runs the same through a program using the SDK.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resourceNames } from "../../provider/index";
import type { ProviderHost } from "../../tools/provider-host";
import {
  create,
  destroy,
  failure,
  type Managed,
  plan,
  repoRoot,
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
    // Adoption by id (issue 49, item 8): the id as a number or its digits, a UUID in either case.
    ["Dashboard", { name: "Twin", dashboardId: 42 }, { name: "Other", dashboardId: "042" }, "dashboardId"],
    ["Project", { name: "Twin", projectId: "1001" }, { name: "Other", projectId: 1001 }, "projectId"],
    [
      "DomainVerification",
      { domainId: "0190bbbb-0000-4000-8000-000000000001" },
      { domainId: "0190BBBB-0000-4000-8000-000000000001", timeoutSeconds: 0 },
      "domainId",
    ],
  ];
  it('covers every resource kind (the table of docs/how-it-works/one-object.md, "One object, one resource")', () => {
    expect([...new Set(cases.map(([type]) => type))].sort()).toEqual([...resourceNames].sort());
    const page = readFileSync(join(repoRoot, "docs", "how-it-works", "one-object.md"), "utf8");
    const section = page.slice(
      page.indexOf("## One object, one resource"),
      page.indexOf("## Several stacks"),
    );
    const rows = [...section.matchAll(/^\| ([A-Za-z]+) \|/gm)]
      .map((m) => m[1])
      .filter((t) => t !== "Resource");
    expect(rows.sort()).toEqual([...resourceNames].sort());
  });
  for (const [type, given, again, property] of cases) {
    it(`${type} (same ${property})`, async () => {
      // A DashboardSharing's check reads its dashboard (the policy pack's facts: provider/framework/policy-facts.ts), so it
      // names one that exists.
      const sharing = type === "DashboardSharing";
      const board = sharing
        ? (
            (await emu.api("POST", `/api/projects/${emu.projectId}/dashboards/`, { name: "Shared" }))
              .body as {
              id: number;
            }
          ).id
        : undefined;
      const first = board === undefined ? given : { ...given, dashboardId: board };
      const second = board === undefined ? again : { ...again, dashboardId: board };
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
      // No HTTP request for any of it (a DashboardSharing's: no write).
      const sent = await emu.requests();
      expect(sharing ? sent.filter((r) => r.method !== "GET") : sent).toEqual([]);
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
  it("Invite: the new one checked first passes check; the kept one's check then fails naming both (so a preview fails whatever the order), and the new one fails at create; no POST", async () => {
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
    // In the state (old inputs): it keeps its invite, and says that the other one declared it (issue 49, item 8:
    // before, this check passed, and a preview, which creates nothing, passed too).
    expect(again.failures).toEqual([
      {
        property: "targetEmail",
        reason: expect.stringContaining(
          'Invite "kept-invite" and Invite "new-invite" both manage the invite for order@example.com',
        ),
      },
    ]);
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

/**
 * Issue 49, item 8: one owner per object, wherever it came from. Before, nothing claimed a Dashboard's, a Project's
 * or a DomainVerification's object, nor any object by its id: the same dashboard imported as two resources, or
 * adopted by `dashboardId` beside the resource that made it, passed every check, and the two overwrote each other's
 * name on every up.
 */
describe("one owner per object: imported, adopted by id, or created in the same run", () => {
  /** `pulumi import`'s read of resource `name` (the plugin's marker `{name}`), as the engine's import step sends it. */
  async function imported(type: string, name: string, id: string, props: Record<string, unknown>, on = host) {
    const urn = urnOf(type, name);
    const provider = await serializeProvider(type);
    const read = await on.read(id, urn, { ...props, __import: { name }, __provider: provider }, {});
    return {
      name: type,
      urn,
      id: read.id,
      provider,
      inputs: { ...(read.inputs ?? {}), __provider: provider },
      outs: { ...read.props, __provider: provider },
    } satisfies Managed;
  }
  /** A dashboard made outside Pulumi: its id. */
  const made = async (name: string) =>
    String(
      ((await emu.api("POST", `/api/projects/${emu.projectId}/dashboards/`, { name })).body as { id: number })
        .id,
    );

  it("two entries of one import naming one dashboard: the second read fails naming both; a preview of both, once imported (two imports), fails in diff naming both, with no write", async () => {
    const id = await made("Imported twice");
    const a = await imported("Dashboard", "imported-a", id, { projectId: String(emu.projectId) });
    expect(a.id).toBe(id);
    // The same import (one provider process): its second entry.
    const second = await failure(
      imported("Dashboard", "imported-b", id, { projectId: String(emu.projectId) }),
    );
    expect(second).toContain(
      `Dashboard "imported-b" and Dashboard "imported-a" both manage the Dashboard of id ${id}: one object is imported once`,
    );
    expect(second).toContain("Nothing is imported");

    // Two separate imports (each its own process, which sees nothing of the state): both in the state; the next
    // preview (a new process) fails in the second one's diff, naming both, before any write.
    const b = await imported(
      "Dashboard",
      "imported-b",
      id,
      { projectId: String(emu.projectId) },
      await nextRun(),
    );
    const run = await startConfiguredHost(emu);
    try {
      await emu.control("DELETE", "/requests");
      const inputs = (r: Managed, name: string) => ({ name, __resourceName: r.urn.split("::").at(-1) });
      const first = await plan(run, a, inputs(a, "Imported twice"));
      expect(first.checked.failures).toEqual([]);
      const other = await run.check(b.urn, b.inputs, { ...inputs(b, "Renamed"), __provider: b.provider });
      expect(other.failures).toEqual([]);
      const refused = await failure(run.diff(b.id, b.urn, b.outs, other.inputs));
      expect(refused).toMatch(
        new RegExp(
          `Dashboard "imported-[ab]" and Dashboard "imported-[ab]" both manage the Dashboard of id ${id}\\.`,
        ),
      );
      expect((await emu.requests()).filter((r) => r.method !== "GET")).toEqual([]);
    } finally {
      await run.close();
    }
  });

  it("a Dashboard adopting (dashboardId) the id another resource created in the same run fails in check naming both; so does a Project adopting a created project's id", async () => {
    const a = await create(host, "Dashboard", "made-here", {
      name: "Made here",
      __resourceName: "made-here",
    });
    const p = await create(host, "Project", "made-project", {
      name: "Made project",
      __resourceName: "made-project",
    });
    await emu.control("DELETE", "/requests");
    const b = await check("Dashboard", "adopts-it", { name: "Taken over", dashboardId: a.id });
    expect(b.failures).toEqual([
      {
        property: "dashboardId",
        reason: expect.stringContaining(
          `Dashboard "adopts-it" and Dashboard "made-here" both manage the Dashboard of id ${a.id}.`,
        ),
      },
    ]);
    const q = await check("Project", "adopts-project", { name: "Taken over", projectId: p.id });
    expect(q.failures.map((f) => f.reason)).toEqual([
      expect.stringContaining(
        `Project "adopts-project" and Project "made-project" both manage the Project of id ${p.id}.`,
      ),
    ]);
    expect((await emu.requests()).filter((r) => r.method !== "GET")).toEqual([]);
    await destroy(host, p);
  });

  it("the new one checked first: the kept one's diff (its object by id) fails naming both; the new one's create then fails before any write", async () => {
    const kept = await create(host, "Dashboard", "kept-board", {
      name: "Kept",
      __resourceName: "kept-board",
    });
    const run = await startConfiguredHost(emu);
    try {
      const provider = await serializeProvider("Dashboard");
      const newcomer = await run.check(
        urnOf("Dashboard", "new-board"),
        {},
        { name: "Newcomer", dashboardId: kept.id, __resourceName: "new-board", __provider: provider },
      );
      expect(newcomer.failures).toEqual([]); // nothing tells it yet that another resource holds the dashboard
      await emu.control("DELETE", "/requests");
      const again = await run.check(kept.urn, kept.inputs, {
        name: "Kept",
        __resourceName: "kept-board",
        __provider: provider,
      });
      expect(again.failures).toEqual([]); // its inputs name no id: its diff claims it, from its id
      expect(await failure(run.diff(kept.id, kept.urn, kept.outs, again.inputs))).toContain(
        `Dashboard "kept-board" and Dashboard "new-board" both manage the Dashboard of id ${kept.id}.`,
      );
      expect(await failure(run.create(urnOf("Dashboard", "new-board"), newcomer.inputs))).toContain(
        `Dashboard "new-board" and Dashboard "kept-board" both manage the Dashboard of id ${kept.id}.`,
      );
      expect((await emu.requests()).filter((r) => r.method !== "GET")).toEqual([]);
    } finally {
      await run.close();
    }
  });
});
