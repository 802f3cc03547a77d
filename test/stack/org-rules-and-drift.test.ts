import { describe, expect, it } from "vitest";
import { type EngineEvent, errorsOf, type RunResult, refreshOf, savedState } from "../../tools/pulumi";
import { type Declared, fixtureDir, useFixtureProgram } from "./fixture-program";

// What a run tells the user when the organization's rules or a change outside Pulumi make PostHog's objects differ
// from what the program declares. A program using the SDK (test/stack/fixtures/posthog), through the real Pulumi
// CLI. The first three cases run on two stacks ("org-prod" and "org-dev") of one emulator with its paid features
// off (which the invites and the dashboards' deletion do not depend on), in order, sharing the stacks: prod's first
// up creates the first case's dashboards and the third case's dashboard and invite; the second case's invite is
// created on both stacks once the third case's changes outside Pulumi are made, so that those changes expire none
// of it.
//
// Issue 13: `restrictionLevel: 37` on an organization without PostHog's advanced permissions silently became 21
// (effectiveRestrictionLevel). The SDK's warning reaches the engine as a diagnostic on the dashboard.
//
// Issue 34, point 5: two stacks of one organization declaring an invite for the same e-mail both succeeded; PostHog
// keeps one invite per address, so the first stack held an id that no longer existed, silently (and a refresh
// dropped it, so its next up re-sent it and replaced the other stack's invite in turn). Now the first stack's
// refresh (here the nightly gate's) fails naming the address and the invite that replaced it; nothing is re-sent.
// Issue 49, item 8: the second stack's up no longer replaces the first stack's invite: it fails naming it and
// `adopt: true`, sending nothing. The first stack's invite is then replaced as two stacks applying at the same instant
// (test/provider/invite-pending.test.ts) or a person inviting again would replace it, and the second stack takes the
// new one over with `adopt: true`.
//
// Issue 27, point 5: the plan names the right property. The real engine shows a dynamic resource's plan as its
// stored inputs against the program's; a refresh used to store every input-shaped field PostHog filled in, so a
// dashboard deleted outside Pulumi showed as `~ update [diff: -projectId]` and an expired invite as
// `replace [diff: -message]`, naming neither the deletion nor the expiry.
//
// Then, on a stack of its own on an emulator of its own (default features): PostHog allows an organization 50 invites
// an hour and 200 a day. A program declaring more than the budget allows: `up` sends those that fit, each other
// fails clearly (the budget, the time it frees), and the next `up` once the budget frees sends the rest: no invite
// twice, none lost. The emulator's budget is set to 3 an hour there.
//
// The stacks are not destroyed (the emulators end with the file): that destroy deletes dashboards and revokes
// invites, test/provider/dashboards.test.ts and test/provider/people.test.ts prove, and the engine's destroy deletes
// what the state holds (test/stack/gitops.test.ts through the CLI).
const fx = useFixtureProgram({ prefix: "org-rules", paidFeatures: false });
const prod = fx.stack("org-prod");
const dev = fx.stack("org-dev");
const why = (r: RunResult) => `${JSON.stringify(errorsOf(r), null, 1)}\n${r.output}`;
const warnings = (r: RunResult) =>
  r.diagnostics.filter((d) => d.severity === "warning").map((d) => d.message);
/** The lines of the CLI's output about resource `name`. */
const linesOf = (r: RunResult, name: string) =>
  r.output.split("\n").filter((l) => new RegExp(`posthog:\\w+ ${name} `).test(l));

/** The first case's dashboards: one declared at 37, not in effect; one at 21, the level in effect. */
const restricted: Declared = [
  ["Dashboard", "board", { name: "Board", restrictionLevel: 37 }],
  ["Dashboard", "open", { name: "Open" }],
];
/** The third case's dashboard and invite, changed outside Pulumi by the second case. */
const named: Declared = [
  ["Dashboard", "kpis", { name: "Named in the plan" }],
  ["Invite", "jane", { targetEmail: "jane.plan@example.com", sendEmail: false }],
];
const EMAIL = "shared.invitee@example.com";
/** The second case's invite, declared by both stacks. */
const shared: Declared = [["Invite", "shared", { targetEmail: EMAIL, sendEmail: false }]];
/** Prod's program from the second case on: it takes over the pending invite of EMAIL (`adopt: true`). */
const prodProgram: Declared = [
  ...restricted,
  ...named,
  ["Invite", "shared", { targetEmail: EMAIL, sendEmail: false, adopt: true }],
];

/** The emulator's pending invites for EMAIL: their ids. */
async function invites(): Promise<string[]> {
  const body = (await fx.emu().call("GET", `${fx.emu().org}/invites/?limit=500`)).body as {
    results: { id: string; target_email: string }[];
  };
  return body.results.filter((i) => i.target_email === EMAIL).map((i) => i.id);
}

/** Prod's invite for EMAIL (set by the second case). */
let prodInvite: string | undefined;

describe("the organization's rules and changes outside Pulumi, on two stacks (real Pulumi CLI)", () => {
  // The SDK warns from the dashboard's outputs (restrictionLevel beside effectiveRestrictionLevel) in every run of
  // the program, so an update of a dashboard that stays at 37 warns again: its Update reports 21 in effect as its
  // Create does, test/provider/dashboards.test.ts proves through the real provider host.
  it("a dashboard whose restriction level is not in effect warns at create, saying why and what to do, on the dashboard; no warning when it is in effect", async () => {
    // Beside it, a dashboard declared at 21, the level in effect, and the third case's dashboard and invite: they
    // get no warning.
    const up = await prod.run("up", [...restricted, ...named]);
    expect(up.ok, why(up)).toBe(true);
    const created = warnings(up).filter((m) => m.includes('Dashboard "board"'));
    expect(created).toHaveLength(1);
    expect(created[0]).toContain("restrictionLevel 37 (only collaborators can edit) is not in effect");
    expect(created[0]).toContain("enforces 21");
    expect(created[0]).toContain("advanced permissions");
    expect(created[0]).toContain("declare restrictionLevel: 21");
    expect(created[0]).toMatch(/until then\. \(see docs\/troubleshooting\/resources\.md#dashboard\)$/);
    const warned = up.diagnostics.find((d) => d.message === created[0]);
    expect(warned?.urn).toMatch(/::pulumi-nodejs:dynamic\/posthog:Dashboard::board$/);
    expect(warnings(up)).toHaveLength(1); // none for "open", "kpis" or "jane"
    expect(up.diagnostics.filter((d) => d.urn?.endsWith("::open"))).toEqual([]);
  }, 300_000);

  it("one invite, two stacks: the second stack's up fails naming the first's pending invite and adopt: true, sending nothing; the stack whose invite was replaced says so in the nightly gate's refresh, naming the e-mail and the invite that replaced it; nothing is re-sent; the stack that gives it up leaves the other's", async () => {
    // The third case's changes outside Pulumi, made now: the dashboard soft-deleted, and the clock moved past the
    // invite's expiry (3 days) before this case's invites are sent.
    const list = (await fx.emu().call("GET", `${fx.emu().project}/dashboards/`)).body as {
      results: { id: number; name: string }[];
    };
    const kpis = list.results.find((d) => d.name === "Named in the plan");
    expect(kpis).toBeDefined();
    await fx.emu().call("PATCH", `${fx.emu().project}/dashboards/${kpis?.id}/`, { body: { deleted: true } });
    await fx.emu().control("POST", "/clock", { advanceSeconds: 4 * 86_400 });

    const first = await dev.run("up", shared);
    expect(first.ok, why(first)).toBe(true);
    const [devInvite] = await invites();
    // Prod declaring the same address: its up fails naming dev's invite and adopt: true, and sends nothing.
    const refused = await prod.run("up", [...restricted, ...named, ...shared]);
    expect(refused.ok).toBe(false);
    const said = errorsOf(refused).join("\n");
    expect(said, why(refused)).toContain(
      `PostHog already has a pending invite for this address, ${devInvite}`,
    );
    expect(said).toContain("declare it with adopt: true");
    expect(await invites()).toEqual([devInvite]);
    // Dev's invite replaced as two stacks applying at the same instant, or a person inviting again, replace it.
    const again = await fx.emu().call("POST", `${fx.emu().org}/invites/`, {
      body: { target_email: EMAIL, level: 1, send_email: false },
    });
    expect(again.status).toBe(201);
    // Prod's up without a refresh: it takes that invite over (adopt: true) and leaves the rest as the state holds it.
    const second = await prod.run("up", prodProgram);
    expect(second.ok, why(second)).toBe(true);
    [prodInvite] = await invites();
    expect(prodInvite).toBe(again.body.id);
    expect(prodInvite).not.toBe(devInvite); // PostHog kept one: the newer

    // The nightly gate's refresh fails so. A `pulumi refresh` makes the same Read, whose message
    // test/provider/people.test.ts proves through the real provider host.
    const gate = await dev.run("preview", shared, { refresh: true, expectNoChanges: true });
    expect(gate.ok).toBe(false);
    const message = errorsOf(gate).join("\n");
    expect(message, why(gate)).toContain(
      `The invite ${devInvite} for ${EMAIL} that this resource manages was replaced by invite ${prodInvite}`,
    );
    expect(message).toContain("Two stacks must not declare an invite for the same address");
    expect(await invites()).toEqual([prodInvite]); // nothing re-sent

    // The fix the message names, in the stack that gives it up: remove it from the program.
    const givenUp = await dev.run("up", []);
    expect(givenUp.ok, why(givenUp)).toBe(true);
    expect(await invites()).toEqual([prodInvite]); // its delete of the dead id removed nothing of prod's
    // That the other stack's refresh then finds its invite as it holds it: the next case's first preview.
  }, 300_000);

  it("the plan names the property that changed: a dashboard soft-deleted outside Pulumi shows as -deleted, an expired invite as -isExpired, nothing PostHog filled in, and the other stack's kept invite no difference; once healed, no difference", async () => {
    expect(prodInvite).toBeDefined();
    const events: EngineEvent[] = [];
    const drift = await prod.run("preview", prodProgram, { refresh: true, onEvent: (e) => events.push(e) });
    expect(drift.ok, why(drift)).toBe(true);
    const board = linesOf(drift, "kpis").join("\n");
    const invite = linesOf(drift, "jane").join("\n");
    expect(board, drift.output).toMatch(/ update \[diff: -deleted\]/);
    expect(invite, drift.output).toMatch(/ replace \[diff: -isExpired\]/);
    const diffs = drift.output.match(/\[diff: [^\]]*\]/g) ?? [];
    expect(diffs.length).toBeGreaterThan(0);
    for (const filled of ["projectId", "message"]) expect(diffs.join(" ")).not.toContain(filled);
    // The invite the other stack gave up (the second case): prod's refresh reads it as its state holds it, and
    // its plan changes nothing (what `pulumi preview --refresh --expect-no-changes` of it alone passes on).
    const refreshed = refreshOf(events);
    expect(
      refreshed.steps.filter((x) => x.name === "shared").map((x) => `${x.op} ${x.diffs.join(",")}`),
      why(drift),
    ).toEqual(["same "]);
    expect(
      drift.steps.filter((x) => x.name === "shared").map((x) => x.op),
      why(drift),
    ).toEqual(["same"]);
    expect(linesOf(drift, "shared").join("\n"), drift.output).not.toMatch(/\[diff:/);
    expect(await invites()).toEqual([prodInvite]);

    // `up --refresh`: its refresh names the drift it stores (+deleted, +isExpired), then it heals.
    const heal = await prod.run("up", prodProgram, { refresh: true });
    expect(heal.ok, why(heal)).toBe(true);
    expect(linesOf(heal, "kpis").join("\n"), heal.output).toMatch(/\[diff: \+deleted\]/);
    expect(linesOf(heal, "jane").join("\n"), heal.output).toMatch(/\[diff: \+isExpired\]/);
    // A refresh with nothing changed outside Pulumi shows no difference at all: here after the heal (an update of
    // the dashboard, a new invite). Without the heal, the invite the other stack gave up shows none above (an
    // invite declared as here, right after its create); test/stack/list-reads.test.ts proves it for a dashboard.
    const quiet = await prod.run("preview", prodProgram, { refresh: true, expectNoChanges: true });
    expect(quiet.ok, why(quiet)).toBe(true);
    expect(quiet.output).not.toMatch(/\[diff:/);
  }, 300_000);
});

describe("more invites than the organization's invite budget (an emulator of its own)", () => {
  /** The budget's emulator (its own: its invite budget is the organization's, and the test counts every invite). */
  const fxBudget = useFixtureProgram({ prefix: "invite-budget" });
  const EMAILS = ["a", "b", "c", "d", "e"].map((x) => `budget.${x}@example.com`);
  const program: Declared = EMAILS.map((email, i) => [
    "Invite",
    `inv-${i}`,
    { targetEmail: email, sendEmail: false },
  ]);

  /** The invite writes since the log was cleared: "bulk <status>" (…/invites/bulk/) or "one <status>". */
  const invitePosts = async () =>
    (await fxBudget.emu().requests())
      .filter((r) => r.method === "POST" && r.path.startsWith(`${fxBudget.emu().org}/invites/`))
      .map((r) => `${r.path.endsWith("/bulk/") ? "bulk" : "one"} ${r.status}`);
  type Held = { method: string; path: string; body: unknown };
  /** The e-mails of one held invite request (a bulk's array, or one invite). */
  const emailsOf = (h: Held): string[] =>
    (Array.isArray(h.body) ? h.body : [h.body]).map((i) => (i as { target_email: string }).target_email);
  const pause = () => new Promise((r) => setTimeout(r, 20));
  const pending = async () =>
    (
      (await fxBudget.emu().call("GET", `${fxBudget.emu().org}/invites/`)).body.results as {
        target_email: string;
      }[]
    )
      .map((i) => i.target_email)
      .sort();
  const errors = (r: RunResult) => r.steps.filter((s) => s.error).map((s) => s.error as string);
  /** Creates that succeeded (a failed create is a step with an error). */
  const created = (r: RunResult) => r.steps.filter((s) => s.op === "create" && s.error === undefined).length;

  it("up sends those that fit and fails the others clearly; the next up, once it frees, sends the rest once", async () => {
    const emu = fxBudget.emu();
    await emu.control("POST", "/invite-budget", { perHour: 3, perDay: 10 });
    await emu.control("DELETE", "/requests");
    // Every invite request of the first up waits at the emulator until the test releases it. How the five are
    // grouped depends on when their creates reach the provider host (the engine registers them one at a time,
    // those more than 20 ms apart go out in separate requests): the test reads the grouping from the held requests
    // and then answers them one at a time, so what the provider does after each answer is its own, never a race.
    const hold = (await emu.control("POST", "/holds", { method: "POST", path: "/invites/(bulk/)?$" })).body
      .id;
    const state = async () => (await emu.control("GET", `/holds/${hold}`)).body as { held: Held[] };
    const s = fxBudget.stack("budget");
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
    await fxBudget.emu().control("POST", "/clock", { advanceSeconds: 3600 });
    await fxBudget.emu().control("DELETE", "/requests");
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
