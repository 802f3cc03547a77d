import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderHost } from "../../tools/provider-host";
import {
  create,
  serializeProvider,
  startConfiguredHost,
  startTestEmulator,
  type TestEmulator,
  urnOf,
} from "./harness";

// A refresh reads its resources in waves (the engine runs at most 4 × CPUs operations at once): PostHog has no
// GET of one member, invite or collaborator, so each read finds it in a list. The reads of a refresh (a provider
// host that has read only, each object once) share one list read; later operations read afresh.

let emu: TestEmulator;
const hosts: ProviderHost[] = [];
const PEOPLE = 20;
let users: { uuid: string; email: string }[] = [];
let provider: string;

beforeAll(async () => {
  emu = await startTestEmulator();
  for (let i = 0; i < PEOPLE; i++) {
    const made = (await emu.control("POST", "/users", { email: `wave${i}@example.com`, level: 1 })) as {
      user: { uuid: string; email: string };
    };
    users.push(made.user);
  }
  users = users.map((u) => ({ uuid: u.uuid, email: u.email }));
  provider = await serializeProvider("Member");
}, 60_000);
afterAll(async () => {
  for (const h of hosts) await h.close();
  await emu?.close();
});

const org = () => `/api/organizations/${emu.organizationId}`;
const newHost = async () => {
  const h = await startConfiguredHost(emu);
  hosts.push(h);
  return h;
};
/** Refresh (Read) of the Member of user `i` as the engine sends it: the stored outputs with `__provider`. */
const readMember = async (host: ProviderHost, i: number) => {
  const u = users[i] as { uuid: string; email: string };
  const outs = { userUuid: u.uuid, email: u.email, level: 1, retainOnDelete: true, __provider: provider };
  return host.read(u.uuid, urnOf("Member", `m${i}`), outs, { email: u.email, level: 1 });
};
const memberLists = async () => {
  const log = (await emu.control("GET", "/requests")) as { method: string; path: string }[];
  return log.filter((r) => r.method === "GET" && r.path === `${org()}/members/`).length;
};
/** Runs `work` on 0..n-1, at most `limit` at a time, as the engine's refresh does. */
async function waves(n: number, limit: number, work: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < n) await work(next++);
    }),
  );
}

describe("the reads of a refresh share one list read", () => {
  it("refreshes 20 Members 4 at a time with one list request; a second read of one reads afresh", async () => {
    const host = await newHost();
    await emu.control("DELETE", "/requests");
    const levels: number[] = [];
    await waves(PEOPLE, 4, async (i) => {
      const r = await readMember(host, i);
      levels[i] = r.props.level as number;
    });
    expect(levels).toEqual(Array(PEOPLE).fill(1));
    expect(await memberLists()).toBe(1); // before: one per wave (5)
    // a later read of the same object is another operation: it sees a change made meanwhile
    await emu.api("PATCH", `${org()}/members/${users[0]?.uuid}/`, { level: 8 });
    await emu.control("DELETE", "/requests");
    expect((await readMember(host, 0)).props.level).toBe(8);
    expect(await memberLists()).toBe(1);
    await emu.api("PATCH", `${org()}/members/${users[0]?.uuid}/`, { level: 1 });
  });

  it("is a snapshot: within a refresh, an object read first after an outside change may show the list from before", async () => {
    const host = await newHost();
    expect((await readMember(host, 1)).props.level).toBe(1);
    await emu.api("PATCH", `${org()}/members/${users[2]?.uuid}/`, { level: 8 });
    expect((await readMember(host, 2)).props.level).toBe(1); // the refresh's list, read before the change
    await emu.api("PATCH", `${org()}/members/${users[2]?.uuid}/`, { level: 1 });
  });

  it("once the process has written, reads share only lists in flight (an up's reads, tests sharing a host)", async () => {
    const host = await newHost();
    expect((await readMember(host, 3)).props.level).toBe(1);
    await create(host, "Invite", "written", { targetEmail: "written@example.com", sendEmail: false });
    await emu.api("PATCH", `${org()}/members/${users[4]?.uuid}/`, { level: 8 });
    expect((await readMember(host, 4)).props.level).toBe(8);
    await emu.api("PATCH", `${org()}/members/${users[4]?.uuid}/`, { level: 1 });
  });
});
