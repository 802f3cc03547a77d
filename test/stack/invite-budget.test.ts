import { describe, expect, it } from "vitest";
import { type RunResult, savedState } from "../../tools/pulumi";
import { type Declared, fixtureDir, useFixtureProgram } from "./fixture-program";

// PostHog allows an organization 50 invites an hour and 200 a day. A program declaring more than the budget allows:
// `up` sends those that fit, each other fails clearly (the budget, the time it frees), and the next `up` once the
// budget frees sends the rest: no invite twice, none lost. The emulator's budget is set to 3 an hour here. The stack
// is not destroyed (the emulator ends with the file): that destroy revokes invites, test/provider/people.test.ts
// proves, and the engine's destroy deletes what the state holds (test/stack/gitops.test.ts through the CLI).

const fx = useFixtureProgram({ prefix: "invite-budget" });
const EMAILS = ["a", "b", "c", "d", "e"].map((x) => `budget.${x}@example.com`);
const program: Declared = EMAILS.map((email, i) => [
  "Invite",
  `inv-${i}`,
  { targetEmail: email, sendEmail: false },
]);

/** The invite writes since the log was cleared: "bulk <status>" (…/invites/bulk/) or "one <status>". */
const invitePosts = async () =>
  (await fx.emu().requests())
    .filter((r) => r.method === "POST" && r.path.startsWith(`${fx.emu().org}/invites/`))
    .map((r) => `${r.path.endsWith("/bulk/") ? "bulk" : "one"} ${r.status}`);
type Held = { method: string; path: string; body: unknown };
/** The e-mails of one held invite request (a bulk's array, or one invite). */
const emailsOf = (h: Held): string[] =>
  (Array.isArray(h.body) ? h.body : [h.body]).map((i) => (i as { target_email: string }).target_email);
const pause = () => new Promise((r) => setTimeout(r, 20));
const pending = async () =>
  ((await fx.emu().call("GET", `${fx.emu().org}/invites/`)).body.results as { target_email: string }[])
    .map((i) => i.target_email)
    .sort();
const errors = (r: RunResult) => r.steps.filter((s) => s.error).map((s) => s.error as string);
/** Creates that succeeded (a failed create is a step with an error). */
const created = (r: RunResult) => r.steps.filter((s) => s.op === "create" && s.error === undefined).length;

describe("more invites than the organization's invite budget", () => {
  it("up sends those that fit and fails the others clearly; the next up, once it frees, sends the rest once", async () => {
    const emu = fx.emu();
    await emu.control("POST", "/invite-budget", { perHour: 3, perDay: 10 });
    await emu.control("DELETE", "/requests");
    // Every invite request of the first up waits at the emulator until the test releases it. How the five are
    // grouped depends on when their creates reach the provider host (the engine registers them one at a time,
    // those more than 20 ms apart go out in separate requests): the test reads the grouping from the held requests
    // and then answers them one at a time, so what the provider does after each answer is its own, never a race.
    const hold = (await emu.control("POST", "/holds", { method: "POST", path: "/invites/(bulk/)?$" })).body
      .id;
    const state = async () => (await emu.control("GET", `/holds/${hold}`)).body as { held: Held[] };
    const s = fx.stack("budget");
    let ended = false;
    const running = s.run("up", program).finally(() => {
      ended = true;
    });
    /** Each request answered, in order: its e-mails, whether it was sent before any answer, and its status. */
    const answered: { emails: string[]; initial: boolean; status: number }[] = [];
    let mostResentAtOnce = 0;
    try {
      // 1. Every invite is sent once before any is answered (nothing tells the provider to hold one back).
      let initial: Held[] = [];
      for (;;) {
        initial = (await state()).held;
        if (initial.flatMap(emailsOf).length >= EMAILS.length) break;
        if (ended) throw new Error(`up ended with invites unsent: ${JSON.stringify(initial)}`);
        await pause();
      }
      expect(initial.flatMap(emailsOf).sort()).toEqual([...EMAILS].sort());
      // 2. Answered one at a time, oldest first, until the up ends.
      let left = initial.length;
      for (;;) {
        const held = (await state()).held;
        mostResentAtOnce = Math.max(mostResentAtOnce, held.length - left);
        const [oldest] = held;
        if (!oldest) {
          if (ended) break;
          await pause();
          continue;
        }
        const before = (await invitePosts()).length;
        await emu.control("POST", `/holds/${hold}/release`, { count: 1 });
        let posts = await invitePosts();
        while (posts.length === before) {
          await pause();
          posts = await invitePosts();
        }
        answered.push({
          emails: emailsOf(oldest),
          initial: left > 0,
          status: Number(posts.at(-1)?.split(" ")[1]),
        });
        left = Math.max(0, left - 1);
      }
    } finally {
      await emu.control("DELETE", `/holds/${hold}`);
    }
    const first = await running;
    expect(first.ok).toBe(false);
    expect(created(first), first.output).toBe(3);
    const failed = errors(first);
    expect(failed.length).toBeGreaterThan(0);
    for (const e of failed) {
      expect(e).toMatch(
        /The invite for budget\.[a-e]@example\.com was not sent: POST \S+\/invites\/ → 429 throttled/,
      );
      expect(e).toMatch(/until about \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
      expect(e).toContain("PostHog allows an organization 50 invites an hour and 200 a day");
      expect(e).toContain("posthog:maxRateLimitWait");
    }
    const seen = `invite requests answered in order: ${JSON.stringify(answered)}`;
    // Three invites fit, each sent (and accepted) once.
    const sent = answered.filter((a) => a.status === 201).flatMap((a) => a.emails);
    expect(sent.length, seen).toBe(3);
    expect(new Set(sent).size, seen).toBe(3);
    // A request that does not fit is refused whole; its invites are then sent again one at a time (never two at
    // once), only invites of a refused bulk request and each at most once.
    const resent = answered.filter((a) => !a.initial);
    const refusedBulk = answered
      .filter((a) => a.status === 429 && a.emails.length > 1)
      .flatMap((a) => a.emails);
    expect(mostResentAtOnce, seen).toBeLessThanOrEqual(1);
    for (const r of resent) {
      expect(r.emails, seen).toHaveLength(1);
      expect(refusedBulk, seen).toContain(r.emails[0]);
    }
    expect(new Set(resent.flatMap((r) => r.emails)).size, seen).toBe(resent.length);
    // Once PostHog refused an invite sent alone, the provider sends nothing more: every request answered after
    // that refusal had been sent before any answer.
    const refusedAlone = answered.findIndex((a) => a.status === 429 && a.emails.length === 1);
    expect(refusedAlone, seen).toBeGreaterThanOrEqual(0);
    expect(
      answered.slice(refusedAlone + 1).every((a) => a.initial),
      seen,
    ).toBe(true);
    expect(await invitePosts()).toEqual(
      answered.map((a) => `${a.emails.length > 1 ? "bulk" : "one"} ${a.status}`),
    );
    expect((await pending()).sort()).toEqual([...sent].sort());
    expect(await pending()).toHaveLength(3);

    // an hour later (the emulator's clock) the budget is free: the next up sends the two left, nothing else
    await fx.emu().control("POST", "/clock", { advanceSeconds: 3600 });
    await fx.emu().control("DELETE", "/requests");
    const second = await s.run("up", program);
    expect(errors(second)).toEqual([]);
    expect(second.ok).toBe(true);
    expect(created(second)).toBe(2);
    expect(second.counts.same).toBe(3);
    expect((await invitePosts()).every((p) => p.endsWith(" 201"))).toBe(true);
    expect(await pending()).toEqual([...EMAILS].sort());

    // The state holds each invite once, by the id of the invite PostHog holds for its e-mail.
    const live = (
      (await emu.call("GET", `${emu.org}/invites/`)).body.results as { id: string; target_email: string }[]
    )
      .map((i) => `${i.target_email} ${i.id}`)
      .sort();
    const stored = (
      savedState({ projectDir: fixtureDir, stack: s.name, stateDir: s.stateDir }).deployment.resources ?? []
    )
      .filter((r) => r.type === "pulumi-nodejs:dynamic/posthog:Invite")
      .map((r) => `${(r.outputs as { targetEmail: string }).targetEmail} ${r.id as string}`)
      .sort();
    expect(stored).toEqual(live);
    expect(stored).toHaveLength(EMAILS.length);
  }, 300_000);
});
