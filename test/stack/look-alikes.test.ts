import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  errorsOf,
  exportStack,
  killTree,
  processesWithMarker,
  pulumi,
  type RunResult,
} from "../../tools/pulumi";
import { type Declared, type FixtureStack, fixtureDir, useFixtureProgram } from "./fixture-program";
import { prepareStack } from "./look-alikes-support";

// Issue 27, point 1: look-alike objects and lost creates. Twelve dashboards of one name, the run killed in the
// middle of `up`, then `up` again, used to leave 19 dashboards on the server and 12 in the state (7 orphans, no
// message); two lost answers among dashboards of one name failed the first `up`, and a plain second `up` quietly
// made two more. The server must never end with more objects than the program declares: creates of one name run
// one at a time, each journaled with the ids that existed before it, so a later run (or the same one) adopts
// exactly the object each interrupted create made. A program using the SDK, through the real Pulumi CLI.
const fx = useFixtureProgram({ prefix: "look-alikes" });
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

/** The ids the stack's state holds, and its pending operations. */
async function stateOf(s: FixtureStack, env: Record<string, string>) {
  const exported = await exportStack({ projectDir: fixtureDir, stack: s.name, stateDir: s.stateDir, env });
  const ids = (exported.deployment.resources ?? [])
    .filter((r) => String(r.type).endsWith("posthog:Dashboard"))
    .map((r) => Number(r.id))
    .sort((a, b) => a - b);
  const pending = (exported.deployment.pending_operations ?? []) as { type: string }[];
  return { ids, pending: pending.map((p) => p.type) };
}

const twins = (name: string, n: number): Declared =>
  Array.from({ length: n }, (_, i) => ["Dashboard", `twin-${i}`, { name }] as Declared[number]);

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
  it("two lost answers among three dashboards of one name: up adopts each one's own dashboard, no duplicate", async () => {
    const s = fx.stack("lost-answers");
    const journal = join(fx.work, "journal-lost");
    const env = { ...s.env(), POSTHOG_CREATE_JOURNAL_DIR: journal };
    const NAME = "Lost twin";
    const program = twins(NAME, 3);
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
    expect((await stateOf(s, env)).ids).toEqual(ids);
    // A second up writes nothing and makes nothing.
    const again = await s.run("up", program, { env });
    expect(again.ok, why(again)).toBe(true);
    expect(await live(NAME)).toEqual(ids);
    expect((await s.run("destroy", program, { env })).ok).toBe(true);
    expect(await live(NAME)).toEqual([]);
  }, 300_000);

  // Issue 34, point 2: dashboards of one name, the first create answered and the CLI killed (kill -9) before the
  // engine records it, while the second is held at PostHog; then `pulumi cancel` and `up`, with PostHog applying the
  // held create only once that `up` has looked for it (2 s after its first list read). Before, the next up took
  // "none listed" for "not applied" and made the second dashboard again (3 on the server for 2 declared; 7 for 6 in
  // the issue); now it reads again until it appears and adopts it, and adopts the answered one from the journal.
  it("two of one name, the CLI killed right after an answer with the next create held, applied only during the next up: exactly two, all in the state", async () => {
    const s = fx.stack("answered-killed");
    const journal = join(fx.work, "journal-answered-killed");
    const env = { ...s.env(), POSTHOG_CREATE_JOURNAL_DIR: journal, POSTHOG_LOST_CREATE_WAIT: "30" };
    const NAME = "Answered then killed";
    const program = twins(NAME, 2);
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
    expect((await stateOf(s, env)).ids).toEqual([]); // the answered create is not in the state
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
    expect((await stateOf(s, env)).ids).toEqual(after);
    for (const { pid } of processesWithMarker(`POSTHOG_CREATE_JOURNAL_DIR=${journal}\0`))
      process.kill(pid, "SIGKILL");
    expect((await s.run("destroy", program, { env })).ok).toBe(true);
    expect(await live(NAME)).toEqual([]);
  }, 600_000);

  it("twelve dashboards of one name, the provider host killed while a create is on the wire: the next up leaves exactly twelve, all in the state", async () => {
    const s = fx.stack("twelve");
    const journal = join(fx.work, "journal-twelve");
    const env = { ...s.env(), POSTHOG_CREATE_JOURNAL_DIR: journal };
    const NAME = "Twelve twins";
    const program = twins(NAME, 12);
    // Write the settings file and create the stack, then run `up` by hand so the test holds its process.
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
    const before = await stateOf(s, env);
    expect(before.ids.length).toBeLessThan(made.length);
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
    const state = await stateOf(s, env);
    expect(state.ids).toEqual(after);
    const quiet = await s.run("preview", program, { env, expectNoChanges: true });
    expect(quiet.ok, why(quiet)).toBe(true);
    expect((await s.run("destroy", program, { env })).ok).toBe(true);
    expect(await live(NAME)).toEqual([]);
  }, 600_000);
});
