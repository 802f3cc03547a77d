/**
 * A create whose provider host dies with it (the engine killed mid-`up`) and the next run (issue 11's last
 * target): the create journal lets the next create of the same resource adopt what the dead one made (Dashboard,
 * Domain) and record what the dead one found (BatchExportPause `pausedBefore`), instead of a duplicate, a
 * blocked re-run or a wrong `pausedBefore`. Real HTTP against the emulator: one run (one provider host) makes two
 * objects whose creates return but which its engine never records, then starts four creates whose writes are
 * applied with their answers dropped and whose recovery reads are held, so its provider host is killed (as an
 * engine kill takes it down) while they are still in flight; the next run (a second host) runs every create again.
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

/** A resource of the killed run: its type, Pulumi name and inputs. */
interface Resource {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
}
/**
 * A create of the killed run in flight when its host dies: its write (`method`, path pattern `write`) is applied
 * and its answer dropped; its recovery reads (GETs of the path pattern `slow`) are held until the host is gone.
 */
interface InFlight extends Resource {
  method: string;
  write: string;
  slow: string;
}

/** Check of `r` in `h` as the engine sends it for the SDK's resources of stack `stack`: the checked inputs. */
async function checkIn(h: ProviderHost, r: Resource, stack = "posthog-test/dev") {
  const provider = await serializeProvider(r.type);
  const checked = await h.check(
    urnOf(r.type, r.name),
    {},
    { ...r.inputs, __provider: provider, __resourceName: r.name, __stack: stack },
  );
  expect(checked.failures).toEqual([]);
  return checked.inputs;
}
/** Check then Create of `r` in `h` (stack `stack`): the checked inputs, the id and the outputs. */
async function createIn(h: ProviderHost, r: Resource, stack?: string) {
  const inputs = await checkIn(h, r, stack);
  return { inputs, ...(await h.create(urnOf(r.type, r.name), inputs)) };
}
type Created = Awaited<ReturnType<typeof createIn>>;

const unrecorded: Resource = { type: "Dashboard", name: "unrecorded", inputs: { name: "Unrecorded board" } };
const perStack: Resource = { type: "Dashboard", name: "per-stack", inputs: { name: "Per-stack board" } };
/** The creates in flight when the host is killed, by case (set once the seed's running export is known). */
let inFlight: Record<"dashboard" | "domain" | "pause" | "member", InFlight>;

/** What the runs returned: the first run's returned creates, and the next run's creates by resource. */
const first: { unrecorded?: Created; dev?: Created } = {};
const next: Partial<Record<keyof typeof inFlight | "unrecorded" | "prod", Created>> = {};
/** The journal's entries (`*.json`) after the next run's creates, then after each of its diffs. */
const journalSizes: number[] = [];
/** The journal's files after the next run's creates. */
let journalAfterCreates: string[] = [];
const entries = () => readdirSync(journal).filter((f) => f.endsWith(".json")).length;

beforeAll(async () => {
  const exports = (await emu.api("GET", `/api/organizations/${emu.organizationId}/batch_exports/`)).body as {
    results: { id: string; paused: boolean }[];
  };
  const target = exports.results.find((b) => !b.paused);
  if (!target) throw new Error("the seed has no running batch export");
  await emu.control("POST", "/users", { email: "journal@example.com", level: 1 });
  inFlight = {
    dashboard: {
      type: "Dashboard",
      name: "killed",
      inputs: { name: "Killed board" },
      method: "POST",
      write: "/dashboards/$",
      slow: "/dashboards/$",
    },
    domain: {
      type: "Domain",
      name: "killed",
      inputs: { domain: "killed.example.com" },
      method: "POST",
      write: "/domains/$",
      slow: "/domains/$",
    },
    pause: {
      type: "BatchExportPause",
      name: "killed",
      inputs: { batchExportId: target.id, paused: true },
      method: "POST",
      write: "/pause/$",
      slow: `/batch_exports/${target.id}/$`,
    },
    member: {
      type: "Member",
      name: "journal",
      inputs: { email: "journal@example.com", level: "admin" },
      method: "PATCH",
      write: "/members/[^/]+/$",
      slow: "/members/$",
    },
  };

  // The killed run. Two creates return (the answers reach the host; the checkpoint never gets them): one of this
  // stack, one of another stack of the program.
  const killed = await host();
  first.unrecorded = await createIn(killed, unrecorded);
  first.dev = await createIn(killed, perStack, "p/dev");
  // Four creates in flight: each write waits until the reads before it are answered; the requests after it (its
  // recovery) then wait until the host is gone: the host dies with its creates in flight, however slow the machine.
  await emu.control("DELETE", "/requests");
  const writes: { r: InFlight; hold: string }[] = [];
  for (const r of Object.values(inFlight)) {
    await emu.control("POST", "/faults", { method: r.method, path: r.write, dropResponse: true, times: 1 });
    const hold = (await emu.control("POST", "/holds", { method: r.method, path: r.write, times: 1 })) as {
      id: string;
    };
    writes.push({ r, hold: hold.id });
  }
  const lost: Promise<unknown>[] = [];
  for (const { r } of writes) {
    const inputs = await checkIn(killed, r);
    lost.push(killed.create(urnOf(r.type, r.name), inputs).catch(() => undefined));
  }
  for (const { r, hold } of writes)
    await until(
      `the ${r.type} write to be held`,
      async () => ((await emu.control("GET", `/holds/${hold}`)) as { held: unknown[] }).held.length > 0,
    );
  // Its recovery waits too: the reads, and the retries of an idempotent write (the Member's PATCH, the pause's POST),
  // which would otherwise finish the create, and its journal writes, at any moment around the kill (a clean-clone
  // run once left a completion's temporary file: the host killed between its write and its rename).
  for (const { r } of writes) {
    await emu.control("POST", "/holds", { method: "GET", path: r.slow });
    await emu.control("POST", "/holds", { method: r.method, path: r.write });
  }
  for (const { hold } of writes) await emu.control("POST", `/holds/${hold}/release`, {});
  for (const { r } of writes) {
    const pattern = new RegExp(r.write);
    await until(`the ${r.type} write to apply`, async () =>
      (await emu.requests()).some((q) => q.method === r.method && pattern.test(q.path)),
    );
  }
  await killed.close(); // the host dies with its creates in flight, as an engine kill takes it down
  await Promise.all(lost);
  await emu.control("DELETE", "/holds"); // the held reads go on, with no one to answer
  await emu.control("DELETE", "/faults");

  // The next run: every create again (the other stack's too, its own resource there), then the next preview's
  // diffs, which show the engine recorded each object.
  const again = await host();
  try {
    for (const [k, r] of Object.entries(inFlight))
      next[k as keyof typeof inFlight] = await createIn(again, r);
    next.unrecorded = await createIn(again, unrecorded);
    next.prod = await createIn(again, perStack, "p/prod");
    journalAfterCreates = readdirSync(journal);
    journalSizes.push(entries());
    const recorded = (r: Resource, made: Created | undefined, inputs = made?.inputs) => {
      if (!made || !inputs) throw new Error(`no create of ${r.type} ${r.name}`);
      return { r, made, inputs };
    };
    const diffs = [
      ...Object.entries(inFlight).map(([k, r]) => recorded(r, next[k as keyof typeof inFlight])),
      recorded(unrecorded, next.unrecorded),
      recorded(perStack, first.dev, next.prod?.inputs), // dev's next run: its entry goes
      recorded(perStack, next.prod),
    ];
    for (const { r, made, inputs } of diffs) {
      await again.diff(made.id, urnOf(r.type, r.name), made.outs, inputs);
      journalSizes.push(entries());
    }
  } finally {
    await again.close();
  }
}, 180_000); // two provider hosts and some 60 requests to the emulator

/** Ids of the objects under `path` whose `field` is `value`. */
const idsWhere = async (path: string, field: "name" | "domain", value: string) =>
  ((await emu.api("GET", path)).body as { results: Record<string, unknown>[] }).results
    .filter((x) => x[field] === value)
    .map((x) => String(x.id));
const dashboards = () => `/api/projects/${emu.projectId}/dashboards/?limit=200`;

describe("a run killed with creates in flight and creates returned but not recorded, then the next run", () => {
  it("Dashboard: the second create adopts the dashboard the dead one made (one dashboard)", async () => {
    const d = next.dashboard as Created;
    expect(await idsWhere(dashboards(), "name", "Killed board")).toEqual([d.id]);
    expect(d.outs.adopted).toBe(false);
  });

  it("Dashboard: a create that returned but whose engine died before recording it is adopted by the next one", async () => {
    const made = first.unrecorded as Created;
    expect(next.unrecorded?.id).toBe(made.id);
    expect(await idsWhere(dashboards(), "name", "Unrecorded board")).toEqual([made.id]);
  });

  it("Domain: the second create adopts the domain the dead one made instead of failing", async () => {
    const d = next.domain as Created;
    expect(
      await idsWhere(`/api/organizations/${emu.organizationId}/domains/`, "domain", "killed.example.com"),
    ).toEqual([d.id]);
    expect(d.outs.adopted).toBe(false);
  });

  it("BatchExportPause: the second create records that the export was running before the dead one paused it", () => {
    expect(next.pause?.outs).toMatchObject({ paused: true, pausedBefore: false });
  });

  it("Member: the second create records the level the person had before the dead one changed it", () => {
    expect(next.member?.outs).toMatchObject({ level: 8, levelBefore: 1 });
  });

  it("another stack of the program never adopts what a create of this stack made", () => {
    expect(next.prod?.id).toBeDefined();
    expect(next.prod?.id).not.toBe(first.dev?.id);
  });

  it("each entry stays until a later operation (the next preview's diff) shows the engine recorded its object, then goes", () => {
    // after the next run's creates: one entry per create not yet recorded (four adopted from the killed run, the
    // unrecorded one, the other stack's two); each diff then removes its own, down to none
    expect(journalSizes, journalAfterCreates.join("\n")).toEqual([7, 6, 5, 4, 3, 2, 1, 0]);
    expect(readdirSync(journal), journalAfterCreates.join("\n")).toEqual([]);
  });
});
