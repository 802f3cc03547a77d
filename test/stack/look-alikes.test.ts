import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  errorsOf,
  killTree,
  processesWithMarker,
  pulumi,
  type RunResult,
  savedState,
} from "../../tools/pulumi";
import { type Declared, type FixtureStack, fixtureDir, useFixtureProgram } from "./fixture-program";
import { prepareStack } from "./look-alikes-support";

// Issue 27, point 1: look-alike objects and lost creates. Twelve dashboards of one name, the run killed in the
// middle of `up`, then `up` again, used to leave 19 dashboards on the server and 12 in the state (7 orphans, no
// message); two lost answers among dashboards of one name failed the first `up`, and a plain second `up` quietly
// made two more. The server must never end with more objects than the program declares: creates of one name run
// one at a time, each journaled with the ids that existed before it, so a later run (or the same one) adopts
// exactly the object each interrupted create made. A program using the SDK, through the real Pulumi CLI.
//
// The three cases run in order on one stack: each one's program is the previous one's plus dashboards of a name of
// its own, so the ups of a later case are also later ups of the earlier cases' dashboards (which must make none),
// and one destroy at the end removes them all. The dashboards' delete (a soft delete) is proved by
// test/provider/dashboards.test.ts and, through the real CLI, by test/stack/gitops.test.ts.
const fx = useFixtureProgram({ prefix: "look-alikes" });
const s = fx.stack("twins");
const why = (r: RunResult) => `${JSON.stringify(errorsOf(r), null, 1)}\n${r.output}`;

/** The live (not soft-deleted) dashboards of the emulator's project named `name`, by id. */
async function live(name: string): Promise<number[]> {
  const body = (await fx.emu().call("GET", `${fx.emu().project}/dashboards/?limit=1000`)).body as {
    results: { id: number; name: string; deleted?: boolean }[];
  };
  return body.results
    .filter((d) => d.name === name && d.deleted !== true)
    .map((d) => d.id)
    .sort((a, b) => a - b);
}

/**
 * The ids of the dashboards named `name` that the stack's state holds: read from the local backend's checkpoint
 * (`<stateDir>/.pulumi/stacks/fx/<stack>.json`, what `pulumi stack export` prints), without a CLI run.
 */
function stateIds(stack: FixtureStack, name: string): number[] {
  const resources = (savedState({ projectDir: fixtureDir, stack: stack.name, stateDir: stack.stateDir })
    .deployment.resources ?? []) as { type: string; id?: string; inputs?: { name?: unknown } }[];
  return resources
    .filter((r) => r.type.endsWith("posthog:Dashboard") && r.inputs?.name === name)
    .map((r) => Number(r.id))
    .sort((a, b) => a - b);
}

/** `n` dashboards named `name`, as resources `<key>-0`, `<key>-1`, …. */
const twins = (key: string, name: string, n: number): Declared =>
  Array.from({ length: n }, (_, i) => ["Dashboard", `${key}-${i}`, { name }] as Declared[number]);

const LOST = "Lost twin";
const KILLED = "Answered then killed";
const TWELVE = "Twelve twins";
/** Each case's program: the previous case's plus its own dashboards. */
const lostProgram = twins("lost", LOST, 3);
const killedProgram = [...lostProgram, ...twins("killed", KILLED, 2)];
const twelveProgram = [...killedProgram, ...twins("twelve", TWELVE, 12)];
/** The ids the first and second cases left (the later cases' ups must leave them as they are). */
let lostIds: number[] = [];
let killedIds: number[] = [];

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 120_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Holds every dashboard POST at the emulator until released (`POST /_emulator/holds`): the hold's id, and a reader
 * of its state (`hits`: the POSTs it matched; `held`: those still waiting).
 */
async function holdDashboardPosts() {
  const hold = (await fx.emu().control("POST", "/holds", { method: "POST", path: "/dashboards/$" })).body as {
    id: string;
  };
  const held = async () =>
    (await fx.emu().control("GET", `/holds/${hold.id}`)).body as { hits: number; held: unknown[] };
  return { hold, held };
}

describe("look-alike objects and lost creates (real Pulumi CLI)", () => {
  it("two lost answers among three dashboards of one name: up adopts each one's own dashboard, no duplicate; later ups make none", async () => {
    const journal = join(fx.work, "journal-lost");
    const env = { ...s.env(), POSTHOG_CREATE_JOURNAL_DIR: journal };
    const NAME = LOST;
    const program = lostProgram;
    // The emulator applies the POST, then drops the connection: the create's answer is lost.
    await fx.emu().control("POST", "/faults", {
      method: "POST",
      path: "/dashboards/$",
      dropResponse: true,
      times: 2,
    });
    const up = await s.run("up", program, { env });
    await fx.emu().control("DELETE", "/faults");
    expect(up.ok, why(up)).toBe(true);
    const ids = await live(NAME);
    expect(ids).toHaveLength(3);
    expect(stateIds(s, NAME)).toEqual(ids);
    // A later up makes nothing: the next cases' ups run this program too, and check these three are left as they
    // are.
    lostIds = ids;
  }, 300_000);

  // Issue 34, point 2: dashboards of one name, the first create answered and the CLI killed (kill -9) before the
  // engine records it, while the second is held at PostHog; then `pulumi cancel` and `up`, with PostHog applying the
  // held create only once that `up` has looked for it (2 s after its first list read). Before, the next up took
  // "none listed" for "not applied" and made the second dashboard again (3 on the server for 2 declared; 7 for 6 in
  // the issue); now it reads again until it appears and adopts it, and adopts the answered one from the journal.
  it("two of one name, the CLI killed right after an answer with the next create held, applied only during the next up: exactly two, all in the state; the first case's three untouched", async () => {
    const journal = join(fx.work, "journal-answered-killed");
    const env = { ...s.env(), POSTHOG_CREATE_JOURNAL_DIR: journal, POSTHOG_LOST_CREATE_WAIT: "30" };
    const NAME = KILLED;
    const program = killedProgram;
    // The settings file for `startUp` (the stack exists since the first case).
    await prepareStack(s, program, env);
    const { hold, held } = await holdDashboardPosts();
    const { child, done } = s.startUp(env);
    await until("the first create on the wire", async () => (await held()).held.length > 0);
    // The engine is frozen (SIGSTOP) before the first create is answered, so it can never record that answer; the
    // provider host answers it (journaling the id) and starts the second create, which PostHog holds; then the CLI
    // is killed (its language host and program with it; the provider host runs on).
    process.kill(child.pid as number, "SIGSTOP");
    await fx.emu().control("POST", `/holds/${hold.id}/release`, { count: 1 });
    await until("the second create on the wire", async () => (await held()).hits >= 2, 20_000);
    killTree(child); // SIGKILL ends a stopped process too
    await done;
    expect(await live(NAME)).toHaveLength(1);
    expect(stateIds(s, NAME)).toEqual([]); // the answered create is not in the state
    await pulumi(["cancel", "--yes", "--non-interactive", "--stack", s.name], {
      cwd: fixtureDir,
      stateDir: s.stateDir,
      env,
    });
    // PostHog applies the held create (its client is gone) 2 s after the next up first read the dashboards.
    await fx.emu().control("DELETE", "/requests");
    const running = s.run("up", program, { env });
    await until("the next up's first list read", async () =>
      (await fx.emu().requests()).some((r) => r.method === "GET" && /\/dashboards\/$/.test(r.path)),
    );
    await new Promise((r) => setTimeout(r, 2_000));
    await fx.emu().control("DELETE", "/holds");
    const up = await running;
    expect(up.ok, why(up)).toBe(true);
    const after = await live(NAME);
    expect(after, "the server holds exactly the two dashboards the program declares").toHaveLength(2);
    expect(stateIds(s, NAME)).toEqual(after);
    // The first case's dashboards: these ups (its second and third) made none and lost none.
    expect(lostIds).toHaveLength(3);
    expect(await live(LOST)).toEqual(lostIds);
    expect(stateIds(s, LOST)).toEqual(lostIds);
    killedIds = after;
    for (const { pid } of processesWithMarker(`POSTHOG_CREATE_JOURNAL_DIR=${journal}\0`))
      process.kill(pid, "SIGKILL");
  }, 600_000);

  it("twelve dashboards of one name, the provider host killed while a create is on the wire: the next up leaves exactly twelve, all in the state; destroy removes every case's dashboards", async () => {
    const journal = join(fx.work, "journal-twelve");
    const env = { ...s.env(), POSTHOG_CREATE_JOURNAL_DIR: journal };
    const NAME = TWELVE;
    const program = twelveProgram;
    // Write the settings file, then run `up` by hand so the test holds its process.
    await prepareStack(s, program, env);
    // Every dashboard POST waits at the emulator until the test releases it: three are answered, the fourth is
    // on the wire when the provider host is killed, then applied (as a real server applies a write whose client died).
    const { hold, held } = await holdDashboardPosts();
    const { child, done } = s.startUp(env);
    for (let answered = 0; answered < 3; answered++) {
      await until(`create ${answered + 1} on the wire`, async () => (await held()).held.length > 0);
      await fx.emu().control("POST", `/holds/${hold.id}/release`, { count: 1 });
    }
    await until(
      "the fourth create on the wire",
      async () => (await held()).hits >= 4 && (await held()).held.length > 0,
    );
    const marker = `POSTHOG_CREATE_JOURNAL_DIR=${journal}\0`;
    const hosts = processesWithMarker(marker).filter((p) => p.cmd.includes("dynamic-provider"));
    expect(hosts.length).toBeGreaterThan(0);
    for (const { pid } of hosts) process.kill(pid, "SIGKILL");
    const killed = await done;
    expect(killed.exitCode).not.toBe(0);
    killTree(child);
    for (const { pid } of processesWithMarker(marker)) process.kill(pid, "SIGKILL");
    await fx.emu().control("DELETE", "/holds"); // the fourth POST goes on and is applied; its client is gone
    await until("the held POST to apply", async () => (await live(NAME)).length >= 4, 10_000);
    const made = await live(NAME);
    expect(stateIds(s, NAME).length).toBeLessThan(made.length);
    await pulumi(["cancel", "--yes", "--non-interactive", "--stack", s.name], {
      cwd: fixtureDir,
      stateDir: s.stateDir,
      env,
    });

    const up = await s.run("up", program, { env });
    expect(up.ok, why(up)).toBe(true);
    const after = await live(NAME);
    expect(after, "the server holds exactly the twelve dashboards the program declares").toHaveLength(12);
    // Every dashboard made before the kill is one of them (none orphaned, none made twice).
    for (const id of made) expect(after).toContain(id);
    expect(stateIds(s, NAME)).toEqual(after);
    // The earlier cases' dashboards, again untouched.
    expect(await live(LOST)).toEqual(lostIds);
    expect(killedIds).toHaveLength(2);
    expect(await live(KILLED)).toEqual(killedIds);
    expect(stateIds(s, LOST)).toEqual(lostIds);
    expect(stateIds(s, KILLED)).toEqual(killedIds);
    const quiet = await s.run("preview", program, { env, expectNoChanges: true });
    expect(quiet.ok, why(quiet)).toBe(true);
    expect((await s.run("destroy", program, { env })).ok).toBe(true);
    for (const name of [LOST, KILLED, TWELVE]) expect(await live(name), name).toEqual([]);
  }, 600_000);
});
