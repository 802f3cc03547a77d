import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { errorsOf, type RunResult, savedState } from "../../tools/pulumi";
import { type Declared, fixtureDir, useFixtureProgram } from "./fixture-program";

// Issue 49, items 6 and 7, through the real Pulumi CLI (a program using the SDK), as the hostile tester ran them:
// - a Dashboard create whose answer is lost (PostHog holds the request and the client's connection is cut after 1 s);
//   during the lost-create wait a person makes a dashboard of the same name by hand. The run ended 0, "created",
//   with the person's dashboard in the state as made by the stack; the held create then applied, so the stack's own
//   dashboard was an orphan and `pulumi destroy` deleted the person's. Now the run fails naming the look-alike and
//   dashboardId, the next `up` adopts the dashboard that carries the create's marker, and destroy leaves the
//   person's.
// - a create cut and held, applied after the run, then `pulumi destroy` (not `up`): the object stayed and nothing
//   named it. Now destroy fails naming it, before any write, until it is deleted.
// One stack, one emulator: the second case's stack is the first one's.
const fx = useFixtureProgram({ prefix: "look-alikes-stranger" });
const s = fx.stack("stranger");
const why = (r: RunResult) => `${JSON.stringify(errorsOf(r), null, 1)}\n${r.output}`;
const env = () => ({
  ...s.env(),
  POSTHOG_CREATE_JOURNAL_DIR: join(fx.work, "journal"),
  POSTHOG_LOST_CREATE_WAIT: "4",
});
const NAME = "Team board";
const LATE = "Late board";
const mine: Declared = [["Dashboard", "team", { name: NAME }]];
const both: Declared = [...mine, ["Dashboard", "late", { name: LATE }]];

type Listed = { id: number; name: string; deleted?: boolean };
/** The live dashboards of the emulator's project. */
async function dashboards(): Promise<Listed[]> {
  const body = (await fx.emu().call("GET", `${fx.emu().project}/dashboards/?limit=1000`)).body as {
    results: Listed[];
  };
  return body.results.filter((d) => d.deleted !== true);
}
/** Ids of the live dashboards named `name`, or provisionally so (`name` and a create's marker). */
const live = async (name: string, marked = false) =>
  (await dashboards())
    .filter((d) => d.name === name || (marked && d.name.startsWith(`${name} [pulumi create `)))
    .map((d) => d.id)
    .sort((a, b) => a - b);
/** Ids of the Dashboards the stack's state holds (the backend's checkpoint). */
function stateIds(): number[] {
  const resources = (savedState({ projectDir: fixtureDir, stack: s.name, stateDir: s.stateDir }).deployment
    .resources ?? []) as { type: string; id?: string }[];
  return resources
    .filter((r) => r.type.endsWith("posthog:Dashboard"))
    .map((r) => Number(r.id))
    .sort((a, b) => a - b);
}
/** Holds the next dashboard POST; the client's connection is cut after `cutAfterMs`. */
async function holdPost(cutAfterMs: number) {
  const hold = (
    await fx.emu().control("POST", "/holds", { method: "POST", path: "/dashboards/$", times: 1, cutAfterMs })
  ).body as { id: string };
  const held = async () =>
    ((await fx.emu().control("GET", `/holds/${hold.id}`)).body as { held: unknown[] }).held.length;
  const release = () => fx.emu().control("POST", `/holds/${hold.id}/release`, {});
  return { held, release };
}
const gets = async () =>
  (await fx.emu().requests()).filter(
    (r) => r.method === "GET" && r.path === `${fx.emu().project}/dashboards/`,
  ).length;

describe("lost creates and a stranger's look-alike (real Pulumi CLI)", () => {
  let person = 0;

  it("a person makes a dashboard of the same name during the wait: the run fails naming it and dashboardId; the next up adopts the stack's own, by its marker", async () => {
    const hold = await holdPost(1_000);
    await fx.emu().control("DELETE", "/requests");
    const running = s.run("up", mine, { env: env() });
    await expect.poll(hold.held, { timeout: 60_000 }).toBe(1);
    // The create's first list read after its connection was cut: the lost-create wait has begun.
    await expect.poll(gets, { timeout: 60_000, interval: 50 }).toBeGreaterThan(1);
    person = (await fx.emu().call("POST", `${fx.emu().project}/dashboards/`, { body: { name: NAME } })).body
      .id;
    const up = await running;
    expect(up.ok, why(up)).toBe(false);
    const message = errorsOf(up).join("\n");
    expect(message).toContain(`Dashboard "${NAME}": the outcome of its create is unknown`);
    expect(message).toContain(`${person} (created `);
    expect(message).toContain("adopt it explicitly with the input dashboardId");
    expect(stateIds()).toEqual([]); // the person's dashboard is not the stack's
    // PostHog applies the held create: the stack's own dashboard, with its provisional name.
    await hold.release();
    await expect.poll(() => live(NAME, true), { timeout: 10_000 }).toHaveLength(2);
    const again = await s.run("up", mine, { env: env() });
    expect(again.ok, why(again)).toBe(true);
    const ids = await live(NAME);
    expect(ids).toHaveLength(2); // the person's, and the stack's under its declared name
    const [ours] = stateIds();
    expect(ids).toContain(person);
    expect(ours).not.toBe(person);
    expect(ids).toContain(ours);
  }, 300_000);

  it("a create cut and held, applied after the run, then destroy: destroy fails naming it before any write; once it is deleted, destroy removes the stack's dashboard and leaves the person's", async () => {
    const hold = await holdPost(300);
    const up = await s.run("up", both, { env: { ...env(), POSTHOG_LOST_CREATE_WAIT: "1" } });
    expect(up.ok).toBe(false);
    expect(errorsOf(up).join("\n")).toContain(`Dashboard "${LATE}": the outcome of its create is unknown`);
    await hold.release();
    await expect.poll(() => live(LATE, true), { timeout: 10_000 }).toHaveLength(1);
    const [orphan] = await live(LATE, true);
    await fx.emu().control("DELETE", "/requests");
    const destroy = await s.run("destroy", both, { env: env() });
    expect(destroy.ok, why(destroy)).toBe(false);
    const message = errorsOf(destroy).join("\n");
    expect(message).toContain(`Dashboard ${orphan} "${LATE} [pulumi create `);
    expect(message).toContain('made by the create of Dashboard "late"');
    expect(message).toContain(`/dashboards/${orphan}/`);
    expect((await fx.emu().requests()).filter((r) => r.method !== "GET")).toEqual([]);
    expect(stateIds()).toHaveLength(1);
    // The user deletes it as the message says, and runs destroy again.
    await fx.emu().call("PATCH", `${fx.emu().project}/dashboards/${orphan}/`, { body: { deleted: true } });
    const again = await s.run("destroy", both, { env: env() });
    expect(again.ok, why(again)).toBe(true);
    expect(await live(NAME)).toEqual([person]);
    expect(await live(LATE, true)).toEqual([]);
  }, 300_000);
});
