// What the clients of one run share through one ClientShared (createClient({ shared })), and what two clients
// made without one do not: counted on the emulator's request log, over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ClientShared,
  clientShared,
  createClient,
  InvalidInputError,
  isClientShared,
  isSettings,
  type PostHogClient,
  RateLimitedError,
  resolveSettings,
} from "../../provider/client";
import { clearFaults, clearLog, clientFor, type Emulator, fault, startTestEmulator } from "./helpers";

let emu: Emulator;
/** The ClientShared of this file's pairs of run clients, closed at the end. */
let shared: ClientShared;

beforeAll(async () => {
  emu = await startTestEmulator();
  shared = clientShared();
});
afterAll(async () => {
  await shared?.close();
  await emu?.close();
});

/** Two clients: both given `run` (one run), or each made without one (`undefined`). */
const pair = (run: ClientShared | undefined, options: Parameters<typeof clientFor>[1] = {}) =>
  [clientFor(emu, { ...options, shared: run }), clientFor(emu, { ...options, shared: run })] as const;

/** The requests of the log with this method and a path ending in `suffix`. */
const logged = async (method: string, suffix: string) =>
  (await emu.requests()).filter((r) => r.method === method && r.path.endsWith(suffix));

describe("clients given one ClientShared share; clients without one do not", () => {
  it("a GET both ask for at once: one request for the run's clients, two for clients without one", async () => {
    const d = await clientFor(emu).dashboards.create({ body: { name: "read by two clients" } });
    /** Both clients read the dashboard while the first read is held 200 ms by the emulator. */
    const readTogether = async ([a, b]: readonly [PostHogClient, PostHogClient]) => {
      await fault(emu, { method: "GET", path: `/dashboards/${d.id}/$`, delayMs: 200, times: 1 });
      await clearLog(emu);
      const read = await Promise.all([
        a.dashboards.retrieve({ id: d.id }),
        b.dashboards.retrieve({ id: d.id }),
      ]);
      await clearFaults(emu);
      expect(read.map((x) => x.id)).toEqual([d.id, d.id]);
      return (await logged("GET", `/dashboards/${d.id}/`)).length;
    };
    expect(await readTogether(pair(shared))).toBe(1);
    expect(await readTogether(pair(undefined))).toBe(2);
  });

  it("the client-side rate limit: the run's clients keep one (the third request waits), clients without one each their own", async () => {
    /** Two requests through one client, then one through the other, on a fresh key (a limiter of its own). */
    const sendThree = async (run: ClientShared | undefined) => {
      const apiKey = await emu.createKey();
      // 2 a minute, and at most 10 s of waiting (clientFor): a third request within the minute fails at once, unsent
      const [a, b] = pair(run, { apiKey, rateLimit: { perMinute: 2, perHour: 100 } });
      await clearLog(emu);
      await a.projects.list();
      await a.projects.list();
      const third = await b.projects.list().then(
        () => "sent",
        (e: unknown) => e,
      );
      return { third, sent: (await emu.requests()).length };
    };
    const together = await sendThree(shared);
    expect(together.third).toBeInstanceOf(RateLimitedError);
    expect((together.third as RateLimitedError).clientSide).toBe(true);
    expect((together.third as Error).message).toContain("no request was sent");
    expect(together.sent).toBe(2);

    const apart = await sendThree(undefined);
    expect(apart.third).toBe("sent");
    expect(apart.sent).toBe(3);
  });

  it("checkAccess({ once: true }): proved once for the run's clients, once by each client without one", async () => {
    const proofs = async ([a, b]: readonly [PostHogClient, PostHogClient]) => {
      await clearLog(emu);
      await a.checkAccess({ once: true });
      await b.checkAccess({ once: true });
      await a.checkAccess({ once: true });
      return (await emu.requests()).length;
    };
    expect(await proofs(pair(clientShared()))).toBe(1);
    expect(await proofs(pair(undefined))).toBe(2);
  });

  it("createCoalesced: the invites of the run's clients go in one bulk request; clients without one send each alone", async () => {
    const invite = async ([a, b]: readonly [PostHogClient, PostHogClient], tag: string) => {
      await clearLog(emu);
      const made = await Promise.all([
        a.invites.createCoalesced({ body: { target_email: `${tag}.a@example.com`, send_email: false } }),
        b.invites.createCoalesced({ body: { target_email: `${tag}.b@example.com`, send_email: false } }),
      ]);
      expect(made.map((i) => i.target_email)).toEqual([`${tag}.a@example.com`, `${tag}.b@example.com`]);
      return (await emu.requests())
        .filter((r) => r.method === "POST")
        .map((r) => r.path.split("/invites/")[1]);
    };
    expect(await invite(pair(shared), "together")).toEqual(["bulk/"]);
    expect(await invite(pair(undefined), "apart")).toEqual(["", ""]);
  });

  it("find(): a list read of one of the run's clients serves the other; a client without one reads again", async () => {
    const withCache = { coalescing: { findCacheMs: 60_000 } };
    const [a, b] = pair(clientShared(), withCache);
    const email = (await a.members.all())[0]?.user.email;
    if (!email) throw new Error("the seed has no member");
    await clearLog(emu);
    await a.members.find({ email });
    await b.members.find({ email });
    expect(await logged("GET", "/members/")).toHaveLength(1);
    await clientFor(emu, withCache).members.find({ email });
    expect(await logged("GET", "/members/")).toHaveLength(2);
  });
});

describe("createClient's shared option", () => {
  it("refuses what clientShared() did not make, before any request", async () => {
    await clearLog(emu);
    const fake = { kind: "something else" } as unknown as ClientShared;
    let error: unknown;
    try {
      clientFor(emu, { shared: fake });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).property).toBe("options.shared");
    expect(isClientShared(fake)).toBe(false);
    expect(isClientShared(shared)).toBe(true);
    expect(await emu.requests()).toHaveLength(0);
  });

  it("takes resolved settings with `shared`; the client's settings never hold it", async () => {
    const settings = resolveSettings({ apiKey: emu.apiKey, host: emu.url, rateLimit: false }, undefined, {});
    const client = createClient({ ...settings, shared });
    expect(isSettings(client.settings)).toBe(true);
    expect(Object.isFrozen(client.settings)).toBe(true);
    expect("shared" in client.settings).toBe(false);
    expect(client.settings).toEqual(settings);
    expect(createClient(settings).settings).toBe(settings);
    expect((await client.projects.list()).count).toBeGreaterThan(0);
  });

  it("close() closes the run's connections; a client that sends again opens new ones", async () => {
    const run = clientShared();
    const client = clientFor(emu, { shared: run });
    await client.projects.list();
    expect(run.pools.size).toBe(1);
    await run.close();
    expect(run.pools.size).toBe(0);
    expect((await client.projects.list()).count).toBeGreaterThan(0);
    expect(run.pools.size).toBe(1);
    await run.close();
  });
});
