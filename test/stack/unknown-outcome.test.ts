import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { errorsOf, exportStack, type RunResult } from "../../tools/pulumi";
import { type Declared, fixtureDir, useFixtureProgram } from "./fixture-program";

// Issue 34, point 1: a create still under way at PostHog when the client's headers timeout fires (30 s by default)
// used to be declared "did not apply" from one list read, and the next `up` made it again (20 dashboards on the
// server for 12 declared). Now its outcome stays unknown: the run fails naming it and what the next `up` will do,
// its journal entry is kept, and the next `up`, once PostHog applied the held creates, adopts each one's object. A
// program using the SDK, through the real Pulumi CLI; the emulator holds every dashboard POST past the client's
// timeout (set to 3 s for the first run, through POSTHOG_HEADERS_TIMEOUT_MS) and applies them only after the run
// ended.
const fx = useFixtureProgram({ prefix: "unknown-outcome" });
const why = (r: RunResult) => `${JSON.stringify(errorsOf(r), null, 1)}\n${r.output}`;

/** The live dashboards of the emulator's project whose name starts with `prefix`. */
async function live(prefix: string): Promise<{ id: number; name: string }[]> {
  const body = (await fx.emu().call("GET", `${fx.emu().project}/dashboards/?limit=1000`)).body as {
    results: { id: number; name: string; deleted?: boolean }[];
  };
  return body.results.filter((d) => d.name.startsWith(prefix) && d.deleted !== true);
}

describe("a create PostHog is still processing when the client's headers timeout fires (real Pulumi CLI)", () => {
  it("distinct and look-alike names: the run fails naming each unknown outcome and nothing is made twice; applied after the run, the next up adopts them: exactly the declared count, all in the state", async () => {
    const s = fx.stack("held-past-timeout");
    const env = {
      ...s.env(),
      POSTHOG_CREATE_JOURNAL_DIR: join(fx.work, "journal-held"),
      POSTHOG_LOST_CREATE_WAIT: "2", // the in-run reads: 2 s instead of 15, to keep the test short
    };
    const program: Declared = [
      ["Dashboard", "kk-1", { name: "Held kk-1" }],
      ["Dashboard", "kk-2", { name: "Held kk-2" }],
      ["Dashboard", "kk-3", { name: "Held kk-3" }],
      ["Dashboard", "twin-a", { name: "Held twin" }],
      ["Dashboard", "twin-b", { name: "Held twin" }],
    ];
    // Every dashboard POST waits at the emulator until released: past the client's headers timeout, 3 s here
    // instead of the default 30 s (the later runs keep the default).
    const hold = (await fx.emu().control("POST", "/holds", { method: "POST", path: "/dashboards/$" }))
      .body as {
      id: string;
    };
    const first = await s.run("up", program, { env: { ...env, POSTHOG_HEADERS_TIMEOUT_MS: "3000" } });
    expect(first.ok).toBe(false);
    const messages = errorsOf(first).join("\n");
    for (const name of ["Held kk-1", "Held kk-2", "Held kk-3", "Held twin"]) {
      expect(messages).toContain(`Dashboard "${name}": the outcome of its create is unknown`);
    }
    expect(messages).toContain("UND_ERR_HEADERS_TIMEOUT");
    expect(messages).toContain("The next pulumi up looks for it first");
    expect(messages).not.toMatch(/did not apply/);
    expect(await live("Held")).toEqual([]);
    // PostHog applies every held create after the run ended.
    const released = (await fx.emu().control("POST", `/holds/${hold.id}/release`, {})).body as {
      released: number;
    };
    await fx.emu().control("DELETE", "/holds");
    await expect.poll(async () => (await live("Held")).length).toBe(released.released);

    const second = await s.run("up", program, { env });
    expect(second.ok, why(second)).toBe(true);
    const after = await live("Held");
    expect(after.map((d) => d.name).sort()).toEqual(
      ["Held kk-1", "Held kk-2", "Held kk-3", "Held twin", "Held twin"].sort(),
    );
    const state = await exportStack({ projectDir: fixtureDir, stack: s.name, stateDir: s.stateDir, env });
    const ids = (state.deployment.resources ?? [])
      .filter((r) => String(r.type).endsWith("posthog:Dashboard"))
      .map((r) => Number(r.id))
      .sort((a, b) => a - b);
    expect(ids).toEqual(after.map((d) => d.id).sort((a, b) => a - b));
    const quiet = await s.run("preview", program, { env, expectNoChanges: true });
    expect(quiet.ok, why(quiet)).toBe(true);
    expect((await s.run("destroy", program, { env })).ok).toBe(true);
    expect(await live("Held")).toEqual([]);
  }, 400_000);
});
