import { describe, expect, it } from "vitest";
import { errorsOf, type RunResult } from "../../tools/pulumi";
import { type Declared, useFixtureProgram } from "./fixture-program";

// Issue 34, point 5: two stacks of one organization declaring an invite for the same e-mail both succeeded; PostHog
// keeps one invite per address, so the first stack held an id that no longer existed, silently (and a refresh dropped
// it, so its next up re-sent it and replaced the other stack's invite in turn). Now the first stack's refresh (here
// the nightly gate's) fails naming the address and the invite that replaced it; nothing is re-sent. A program using the
// SDK, through the real Pulumi CLI, two stacks on one emulator. The prod stack is not destroyed (the emulator ends
// with the file): that destroy revokes an invite, test/provider/people.test.ts proves, and test/stack/gitops.test.ts
// through the CLI.
const fx = useFixtureProgram({ prefix: "invite-two-stacks" });
const why = (r: RunResult) => `${JSON.stringify(errorsOf(r), null, 1)}\n${r.output}`;
const EMAIL = "shared.invitee@example.com";

/** The emulator's pending invites for EMAIL: their ids. */
async function invites(): Promise<string[]> {
  const body = (await fx.emu().call("GET", `${fx.emu().org}/invites/?limit=500`)).body as {
    results: { id: string; target_email: string }[];
  };
  return body.results.filter((i) => i.target_email === EMAIL).map((i) => i.id);
}

describe("one invite, two stacks (real Pulumi CLI)", () => {
  it("the stack whose invite another stack replaced says so in the nightly gate's refresh, naming the e-mail and the invite that replaced it; nothing is re-sent; the stack that gives it up leaves the other's", async () => {
    const dev = fx.stack("org-dev");
    const prod = fx.stack("org-prod");
    const program: Declared = [["Invite", "shared", { targetEmail: EMAIL, sendEmail: false }]];
    const first = await dev.run("up", program);
    expect(first.ok, why(first)).toBe(true);
    const [devInvite] = await invites();
    const second = await prod.run("up", program);
    expect(second.ok, why(second)).toBe(true);
    const [prodInvite] = await invites();
    expect(prodInvite).not.toBe(devInvite); // PostHog kept one: the newer

    // The nightly gate's refresh fails so. A `pulumi refresh` makes the same Read, whose message
    // test/provider/invite-restriction.test.ts proves through the real provider host.
    const gate = await dev.run("preview", program, { refresh: true, expectNoChanges: true });
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
    const calm = await prod.run("preview", program, { refresh: true, expectNoChanges: true });
    expect(calm.ok, why(calm)).toBe(true);
  }, 300_000);
});
