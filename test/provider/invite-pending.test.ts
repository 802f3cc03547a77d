/**
 * Issue 49, item 8 (invites): PostHog keeps one invite per address, and a new invite replaces the older one. A create
 * of an Invite whose address already has a pending invite that no resource of the stack holds (a person's, another
 * stack's) used to replace it silently, sending a second e-mail; now it fails naming that invite and `adopt: true`,
 * sending nothing. The invite a resource replaces (a level change) is its own, held by the run. Two stacks applying
 * the same address at the same instant both pass that check; the refresh of the one whose invite was replaced names
 * the other. Real HTTP against the emulator, each stack's run a provider host of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderHost } from "../../tools/provider-host";
import {
  failure,
  serializeProvider,
  startConfiguredHost,
  startTestEmulator,
  type TestEmulator,
  urnOf,
} from "./harness";

let emu: TestEmulator;
beforeAll(async () => {
  emu = await startTestEmulator();
});
afterAll(async () => {
  await emu?.close();
});

const invitesPath = () => `/api/organizations/${emu.organizationId}/invites/`;
type Invite = { id: string; target_email: string; level: number };
/** The pending invites of `email`. */
const invitesOf = async (email: string) =>
  ((await emu.api("GET", `${invitesPath()}?limit=500`)).body as { results: Invite[] }).results.filter(
    (i) => i.target_email === email,
  );
const posts = async () =>
  (await emu.requests()).filter((r) => r.method === "POST" && /\/invites\/(bulk\/)?$/.test(r.path)).length;

/** Check then Create of Invite `name` in `host`, as the engine of stack `stack` calls them. */
async function createIn(
  host: ProviderHost,
  name: string,
  inputs: Record<string, unknown>,
  stack = "app/dev",
) {
  const urn = urnOf("Invite", name);
  const provider = await serializeProvider("Invite");
  const checked = await host.check(urn, {}, { ...inputs, __provider: provider, __resource: { name, stack } });
  expect(checked.failures).toEqual([]);
  return { urn, provider, checked: checked.inputs, ...(await host.create(urn, checked.inputs)) };
}

/** A run of a stack: a provider host of its own (its output to `onOutput`). */
const run = (onOutput?: (text: string) => void) => startConfiguredHost(emu, onOutput);

describe("an Invite whose address already has a pending invite", () => {
  it("a person's pending invite: the preview warns; the create fails naming it and adopt: true, sends nothing, and leaves it as it is; adopt: true takes it over", async () => {
    const email = "someone@example.com";
    const theirs = (await emu.api("POST", invitesPath(), { target_email: email, level: 1 })).body as Invite;
    const before = await posts();
    // The preview says it first: its check reads the invites (a create it counts under "create").
    let output = "";
    const preview = await run((text) => {
      output += text;
    });
    try {
      const urn = urnOf("Invite", "someone");
      const provider = await serializeProvider("Invite");
      const resource = { name: "someone", stack: "app/dev", preview: true };
      const checked = await preview.check(
        urn,
        {},
        { targetEmail: email, __provider: provider, __resource: resource },
      );
      expect(checked.failures).toEqual([]);
    } finally {
      await preview.close();
    }
    expect(output).toContain(
      `warning: Invite "someone": PostHog already has a pending invite for ${email}, ${theirs.id} (level 1, created `,
    );
    expect(output).toContain(
      "pulumi up will fail on it, sending nothing, unless the Invite declares adopt: true",
    );
    const host = await run();
    try {
      const message = await failure(createIn(host, "someone", { targetEmail: email, sendEmail: false }));
      expect(message).toContain(
        `Invite for ${email}: PostHog already has a pending invite for this address, ${theirs.id} (level 1, created `,
      );
      expect(message).toContain("nothing was sent");
      expect(message).toContain("declare it with adopt: true");
      expect(await posts()).toBe(before);
      expect((await invitesOf(email)).map((i) => i.id)).toEqual([theirs.id]);
      const adopted = await createIn(host, "someone", { targetEmail: email, sendEmail: false, adopt: true });
      expect(adopted.id).toBe(theirs.id);
      expect(adopted.outs).toMatchObject({ adopted: true });
      expect(await posts()).toBe(before);
    } finally {
      await host.close();
    }
  });

  it("another stack's invite: the second stack's create fails naming it; the first stack's level change (a replacement) is its own and goes through", async () => {
    const email = "shared@example.com";
    const first = await run();
    try {
      const made = await createIn(first, "shared", { targetEmail: email, sendEmail: false }, "org/prod");
      const second = await run();
      try {
        expect(
          await failure(createIn(second, "shared", { targetEmail: email, sendEmail: false }, "app/dev")),
        ).toContain(`PostHog already has a pending invite for this address, ${made.id}`);
      } finally {
        await second.close();
      }
      // The first stack's next run replaces it: the engine diffs the resource (its invite is held), then creates.
      const next = await run();
      try {
        const news = { targetEmail: email, sendEmail: false, level: "admin", __provider: made.provider };
        const checked = await next.check(made.urn, made.checked, {
          ...news,
          __resource: { name: "shared", stack: "org/prod" },
        });
        const diff = await next.diff(made.id, made.urn, made.outs, checked.inputs);
        expect(diff.replaces).toContain("level");
        const replacement = await next.create(made.urn, checked.inputs);
        expect((await invitesOf(email)).map((i) => [i.id, i.level])).toEqual([[replacement.id, 8]]);
      } finally {
        await next.close();
      }
    } finally {
      await first.close();
    }
  });

  it("two stacks applying one address at the same instant both pass the check (neither sees the other's invite yet); PostHog keeps the later, and the refresh of the other stack names it", async () => {
    const email = "race@example.com";
    const hold = (await emu.control("POST", "/holds", { method: "POST", path: "/invites/$", times: 2 })) as {
      id: string;
    };
    const [a, b] = await Promise.all([run(), run()]);
    try {
      const creates = [
        createIn(a, "race", { targetEmail: email, sendEmail: false }, "one/dev"),
        createIn(b, "race", { targetEmail: email, sendEmail: false }, "two/dev"),
      ];
      for (const c of creates) c.catch(() => undefined); // awaited below (a failed poll ends the test first)
      await expect
        .poll(
          async () => ((await emu.control("GET", `/holds/${hold.id}`)) as { held: unknown[] }).held.length,
          { timeout: 30_000 },
        )
        .toBe(2);
      await emu.control("POST", `/holds/${hold.id}/release`, {});
      const [one, two] = await Promise.all(creates);
      const [kept] = await invitesOf(email);
      const replaced = kept?.id === one?.id ? two : one;
      const host = replaced === one ? a : b;
      if (!replaced) throw new Error("no invite was created");
      const message = await failure(host.read(replaced.id, replaced.urn, replaced.outs, replaced.checked));
      expect(message).toContain(
        `The invite ${replaced.id} for ${email} that this resource manages was replaced by invite ${kept?.id}`,
      );
    } finally {
      await emu.control("DELETE", "/holds");
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("an expired invite of the address is no one's pending invite: the create replaces it", async () => {
    const email = "expired@example.com";
    await emu.api("POST", invitesPath(), { target_email: email, level: 1 });
    await emu.control("POST", "/clock", { advanceSeconds: 4 * 24 * 3600 });
    const host = await run();
    try {
      const made = await createIn(host, "expired", { targetEmail: email, sendEmail: false });
      expect((await invitesOf(email)).map((i) => i.id)).toEqual([made.id]);
    } finally {
      await host.close();
    }
  });
});
