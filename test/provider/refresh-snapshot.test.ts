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
/** The host of the case "once the process has written": it makes the dashboards below, as `up` makes them. */
let written: ProviderHost | undefined;
/** Refresh (Read) of the Member of user `i` as the engine sends it: the stored outputs with `__provider`. */
const readMember = async (host: ProviderHost, i: number) => {
  const u = users[i] as { uuid: string; email: string };
  const outs = { userUuid: u.uuid, email: u.email, level: 1, retainOnDelete: true, __provider: provider };
  return host.read(u.uuid, urnOf("Member", `m${i}`), outs, { email: u.email, level: 1 });
};
const memberLists = async () => {
  const log = await emu.requests();
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
    written = host;
    expect((await readMember(host, 3)).props.level).toBe(1);
    await create(host, "Invite", "written", { targetEmail: "written@example.com", sendEmail: false });
    await emu.api("PATCH", `${org()}/members/${users[4]?.uuid}/`, { level: 8 });
    expect((await readMember(host, 4)).props.level).toBe(8);
    await emu.api("PATCH", `${org()}/members/${users[4]?.uuid}/`, { level: 1 });
  });
});

// Dashboards have a GET of one, but a refresh reads them from their project's list: it carries every field a
// Dashboard reports, so N dashboards cost ⌈N/500⌉ list requests instead of N GETs. A dashboard the list does
// not show is soft-deleted, unlisted, or was moved between two page reads by a change made meanwhile: one GET
// tells which.
describe("a refresh reads dashboards from their project's list", () => {
  const MANAGED = 6;
  const FILLER = 540; // with the managed ones: two list pages of 500 (the provider's page size)
  let dashProvider: string;
  const managed: { id: string; name: string }[] = [];
  const dashPath = () => `/api/projects/${emu.projectId}/dashboards/`;

  beforeAll(async () => {
    for (let i = 0; i < FILLER; i++)
      await emu.api("POST", dashPath(), { name: `Filler ${String(i).padStart(3, "0")}` });
    // made through the provider, as `up` makes them (by a host that has written already: its reads are no
    // refresh's), their names sort after the filler: the second page
    const writer = written ?? (await newHost());
    for (let i = 0; i < MANAGED; i++) {
      const d = await create(writer, "Dashboard", `zeta-${i}`, { name: `Zeta ${i}` });
      managed.push({ id: d.id, name: `Zeta ${i}` });
    }
    dashProvider = await serializeProvider("Dashboard");
  }, 60_000);

  /** Refresh (Read) of managed dashboard `i` with the outputs its create stored. */
  const readDashboard = (host: ProviderHost, i: number) => {
    const d = managed[i] as { id: string; name: string };
    const outs = {
      name: d.name,
      description: "",
      pinned: false,
      tags: [],
      restrictionLevel: 21,
      projectId: String(emu.projectId),
      deleteInsights: false,
      deleted: false,
      __provider: dashProvider,
    };
    return host.read(d.id, urnOf("Dashboard", `zeta-${i}`), outs, { name: d.name });
  };
  const requests = async () =>
    (await emu.requests()).filter((r) => r.method === "GET" && r.path.startsWith(dashPath()));
  const lists = (log: { path: string }[]) => log.filter((r) => r.path === dashPath()).length;
  const gets = (log: { path: string }[], id: string) =>
    log.filter((r) => r.path === `${dashPath()}${id}/`).length;

  it("reads 6 dashboards 4 at a time with the 2 pages of the list, no GET of one; a name changed outside shows", async () => {
    const first = managed[0] as { id: string };
    await emu.api("PATCH", `${dashPath()}${first.id}/`, { name: "Zeta 0 renamed" });
    const host = await newHost();
    await emu.control("DELETE", "/requests");
    const names: string[] = [];
    await waves(MANAGED, 4, async (i) => {
      const r = await readDashboard(host, i);
      expect(r.id).toBe(managed[i]?.id);
      names[i] = r.props.name as string;
      if (i === 0) expect(r.inputs?.name).toBe("Zeta 0 renamed"); // drift: the refreshed inputs
    });
    expect(names).toEqual(["Zeta 0 renamed", ...managed.slice(1).map((d) => d.name)]);
    const log = await requests();
    expect(lists(log)).toBe(2); // before: none, and one GET per dashboard
    expect(log.length).toBe(2);
    await emu.api("PATCH", `${dashPath()}${first.id}/`, { name: "Zeta 0" });
  });

  it("a soft-deleted dashboard (not in the list) is confirmed by one GET: 404, so deleted, id kept", async () => {
    const gone = managed[1] as { id: string };
    await emu.api("PATCH", `${dashPath()}${gone.id}/`, { deleted: true });
    const host = await newHost();
    await emu.control("DELETE", "/requests");
    const r = await readDashboard(host, 1);
    expect(r.id).toBe(gone.id);
    expect(r.props.deleted).toBe(true);
    const other = await readDashboard(host, 2);
    expect(other.props.deleted).toBe(false);
    const log = await requests();
    expect(gets(log, gone.id)).toBe(1);
    expect(gets(log, String(managed[2]?.id))).toBe(0);
    expect(lists(log)).toBe(2);
    await emu.api("PATCH", `${dashPath()}${gone.id}/`, { deleted: false });
  });

  it("a dashboard moved between two page reads (renamed meanwhile) is found with its new name: the pages disagree (an item on two pages), so the list is read again, whole", async () => {
    const moved = managed[3] as { id: string };
    // the first list request (page 1) is answered; the second (page 2) is held while the dashboard is renamed so
    // that it sorts onto page 1, which was already read
    const hold = (await emu.control("POST", "/holds", {
      method: "GET",
      path: `^${dashPath()}$`,
      times: 2,
    })) as {
      id: string;
    };
    const held = async () =>
      (await emu.control("GET", `/holds/${hold.id}`)) as { held: unknown[]; hits: number };
    const host = await newHost();
    await emu.control("DELETE", "/requests");
    const reading = readDashboard(host, 3);
    void reading.catch(() => undefined); // reported below, by the await
    await expect.poll(async () => (await held()).held.length, { timeout: 20_000, interval: 20 }).toBe(1);
    await emu.control("POST", `/holds/${hold.id}/release`, {}); // page 1
    await expect.poll(async () => (await held()).hits, { timeout: 20_000, interval: 20 }).toBe(2);
    await expect.poll(async () => (await held()).held.length, { timeout: 20_000, interval: 20 }).toBe(1);
    expect(lists(await requests())).toBe(1); // page 1 answered, page 2 not yet
    await emu.api("PATCH", `${dashPath()}${moved.id}/`, { name: "Aardvark (moved)" });
    await emu.control("POST", `/holds/${hold.id}/release`, {}); // page 2
    const r = await reading;
    await emu.control("DELETE", "/holds");
    expect(r.id).toBe(moved.id);
    expect(r.props.deleted).toBe(false);
    expect(r.props.name).toBe("Aardvark (moved)");
    // The client's list read checks its pages (provider/client: a page loop, an item on two pages, a count they do not
    // add up to): the two pages, then the two pages again, which agree; the dashboard is in them, so no GET.
    const log = await requests();
    expect(lists(log)).toBe(4);
    expect(gets(log, moved.id)).toBe(0);
    await emu.api("PATCH", `${dashPath()}${moved.id}/`, { name: "Zeta 3" });
  });
});
