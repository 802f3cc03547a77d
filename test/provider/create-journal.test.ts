/**
 * A create whose provider host dies with it (the engine killed mid-`up`) and the next run (issue 11's last
 * target): the create journal lets the next create of the same resource adopt what the dead one made (Dashboard,
 * Domain) and record what the dead one found (BatchExportPause `pausedBefore`), instead of a duplicate, a
 * blocked re-run or a wrong `pausedBefore`. Real HTTP against the emulator: the first create's POST is applied
 * and its answer dropped, and the reads it would recover with are held, so its provider host is killed (as an
 * engine kill takes it down) while the create is still in flight; a second host runs the create again.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderHost } from "../../tools/provider-host";
import {
  serializeProvider,
  startConfiguredHost,
  startTestEmulator,
  type TestEmulator,
  urnOf,
} from "./harness";

let emu: TestEmulator;
let journal: string;
beforeAll(async () => {
  emu = await startTestEmulator();
  journal = mkdtempSync(join(tmpdir(), "posthog-journal-"));
});
afterAll(async () => {
  await emu?.close();
  rmSync(journal, { recursive: true, force: true });
});

/** A provider host configured for the emulator, journaling in this test's directory. */
const host = (): Promise<ProviderHost> =>
  startConfiguredHost(emu, undefined, { POSTHOG_CREATE_JOURNAL_DIR: journal });

const until = async (what: string, done: () => Promise<boolean>) => {
  for (let i = 0; i < 200; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
};

/**
 * Check then Create of resource `name` of `type` in a host that is killed once the emulator applied its POST to
 * `post` (a path pattern; the answer is dropped, and the GETs of `slow` after it are held until the host is gone);
 * then the same in a fresh host: that second create's outputs.
 */
async function killedThenAgain(
  type: string,
  name: string,
  inputs: Record<string, unknown>,
  post: string,
  slow: string,
  method = "POST",
): Promise<{ id: string; outs: Record<string, unknown> }> {
  const provider = await serializeProvider(type);
  const urn = urnOf(type, name);
  await emu.control("DELETE", "/requests");
  await emu.control("POST", "/faults", { method, path: post, dropResponse: true, times: 1 });
  // The POST waits until the reads before it are answered; the reads after it (its recovery) then wait until the
  // host is gone: the host dies with its create in flight, however slow the machine.
  const held = (await emu.control("POST", "/holds", { method, path: post, times: 1 })) as { id: string };
  const first = await host();
  const checked = await first.check(
    urn,
    {},
    { ...inputs, __provider: provider, __resourceName: name, __stack: "posthog-test/dev" },
  );
  expect(checked.failures).toEqual([]);
  const lost = first.create(urn, checked.inputs).catch(() => undefined);
  await until(
    "the POST to be held",
    async () => ((await emu.control("GET", `/holds/${held.id}`)) as { held: unknown[] }).held.length > 0,
  );
  await emu.control("POST", "/holds", { method: "GET", path: slow });
  await emu.control("POST", `/holds/${held.id}/release`, {});
  const pattern = new RegExp(post);
  await until("the POST to apply", async () =>
    (await emu.requests()).some((r) => r.method === method && pattern.test(r.path)),
  );
  await first.close(); // the host dies with its create in flight, as an engine kill takes it down
  await lost;
  await emu.control("DELETE", "/holds"); // the held reads go on, with no one to answer
  await emu.control("DELETE", "/faults");

  const second = await host();
  try {
    const again = await second.check(
      urn,
      {},
      { ...inputs, __provider: provider, __resourceName: name, __stack: "posthog-test/dev" },
    );
    expect(again.failures).toEqual([]);
    const created = await second.create(urn, again.inputs);
    // the entry stays until a later operation shows the engine recorded the object (here: the next preview's diff)
    expect(readdirSync(journal).length).toBeGreaterThan(0);
    await second.diff(created.id, urn, created.outs, again.inputs);
    expect(readdirSync(journal)).toEqual([]);
    return created;
  } finally {
    await second.close();
  }
}

describe("a create killed with its provider host, then run again", () => {
  it("Dashboard: the second create adopts the dashboard the dead one made (one dashboard)", async () => {
    const list = `/api/projects/${emu.projectId}/dashboards/?limit=200`;
    const d = await killedThenAgain(
      "Dashboard",
      "killed",
      { name: "Killed board" },
      "/dashboards/$",
      "/dashboards/$",
    );
    const named = (
      (await emu.api("GET", list)).body as { results: { id: number; name: string }[] }
    ).results.filter((x) => x.name === "Killed board");
    expect(named.map((x) => String(x.id))).toEqual([d.id]);
    expect(d.outs.adopted).toBe(false);
  }, 90_000); // two hosts

  it("Dashboard: a create that returned but whose engine died before recording it is adopted by the next one", async () => {
    const provider = await serializeProvider("Dashboard");
    const urn = urnOf("Dashboard", "unrecorded");
    const inputs = {
      name: "Unrecorded board",
      __provider: provider,
      __resourceName: "unrecorded",
      __stack: "posthog-test/dev",
    };
    const first = await host();
    const made = await first.create(urn, (await first.check(urn, {}, inputs)).inputs);
    await first.close(); // the answer reached the host, the checkpoint never got it
    const second = await host();
    try {
      const again = await second.create(urn, (await second.check(urn, {}, inputs)).inputs);
      expect(again.id).toBe(made.id);
      await second.diff(again.id, urn, again.outs, (await second.check(urn, {}, inputs)).inputs);
    } finally {
      await second.close();
    }
    const list = `/api/projects/${emu.projectId}/dashboards/?limit=200`;
    const named = ((await emu.api("GET", list)).body as { results: { name: string }[] }).results.filter(
      (x) => x.name === "Unrecorded board",
    );
    expect(named).toHaveLength(1);
    expect(readdirSync(journal)).toEqual([]);
  });

  it("Domain: the second create adopts the domain the dead one made instead of failing", async () => {
    const d = await killedThenAgain(
      "Domain",
      "killed",
      { domain: "killed.example.com" },
      "/domains/$",
      "/domains/$",
    );
    const all = (await emu.api("GET", `/api/organizations/${emu.organizationId}/domains/`)).body as {
      results: { id: string; domain: string }[];
    };
    expect(all.results.filter((x) => x.domain === "killed.example.com").map((x) => x.id)).toEqual([d.id]);
    expect(d.outs.adopted).toBe(false);
  });

  it("BatchExportPause: the second create records that the export was running before the dead one paused it", async () => {
    const exports = `/api/organizations/${emu.organizationId}/batch_exports/`;
    const all = (await emu.api("GET", exports)).body as { results: { id: string; paused: boolean }[] };
    const target = all.results.find((b) => !b.paused);
    if (!target) throw new Error("the seed has no running batch export");
    const b = await killedThenAgain(
      "BatchExportPause",
      "killed",
      { batchExportId: target.id, paused: true },
      "/pause/$",
      `/batch_exports/${target.id}/$`,
    );
    expect(b.outs).toMatchObject({ paused: true, pausedBefore: false });
  });

  it("Member: the second create records the level the person had before the dead one changed it", async () => {
    await emu.control("POST", "/users", { email: "journal@example.com", level: 1 });
    const m = await killedThenAgain(
      "Member",
      "journal",
      { email: "journal@example.com", level: "admin" },
      "/members/[^/]+/$",
      "/members/$",
      "PATCH",
    );
    expect(m.outs).toMatchObject({ level: 8, levelBefore: 1 });
  });

  it("another stack of the program never adopts what a create of this stack made", async () => {
    const provider = await serializeProvider("Dashboard");
    const urn = urnOf("Dashboard", "per-stack");
    const inputs = { name: "Per-stack board", __provider: provider, __resourceName: "per-stack" };
    const first = await host();
    const dev = await first.create(urn, (await first.check(urn, {}, { ...inputs, __stack: "p/dev" })).inputs);
    await first.close(); // dev's entry stays (no later run of dev yet)
    const second = await host();
    try {
      const checked = await second.check(urn, {}, { ...inputs, __stack: "p/prod" });
      const prod = await second.create(urn, checked.inputs);
      expect(prod.id).not.toBe(dev.id);
      await second.diff(dev.id, urn, dev.outs, checked.inputs); // dev's next run: its entry goes
      await second.diff(prod.id, urn, prod.outs, checked.inputs);
    } finally {
      await second.close();
    }
    expect(readdirSync(journal)).toEqual([]);
  });
});
