import { describe, expect, it } from "vitest";
import type { ProviderHost } from "../../tools/provider-host";
import {
  destroy,
  type Managed,
  serializeProvider,
  type TestEmulator,
  urnOf,
  useProviderHost,
} from "./harness";

// Invites the engine creates together share one POST …/invites/bulk/ (at most 20 each): N invites cost ⌈N/20⌉
// requests instead of N. Each resource still gets its own invite and its own error; a lost answer, an invalid
// invite and a budget that fits only some behave as they do for invites sent one by one.

let emu: TestEmulator;
let host: ProviderHost;
useProviderHost(
  (e, h) => {
    emu = e;
    host = h;
  },
  { inviteBudget: false },
);

const org = () => `/api/organizations/${emu.organizationId}`;
type Invite = { id: string; target_email: string; level: number };
const invites = async () =>
  ((await emu.api("GET", `${org()}/invites/`)).body as { results: Invite[] }).results;
/** The invite writes since the log was cleared: "bulk <status>" or "one <status>". */
const inviteWrites = async () =>
  (await emu.requests())
    .filter((r) => r.method === "POST" && r.path.startsWith(`${org()}/invites/`))
    .map((r) => `${r.path.endsWith("/bulk/") ? "bulk" : "one"} ${r.status}`);

/** Checks each invite (as the engine does at registration), then creates them all at once, as its workers do. */
async function createTogether(
  prefix: string,
  emails: string[],
): Promise<PromiseSettledResult<Managed & { email: string }>[]> {
  const provider = await serializeProvider("Invite");
  const checked = await Promise.all(
    emails.map(async (email, i) => {
      const urn = urnOf("Invite", `${prefix}-${i}`);
      const c = await host.check(urn, {}, { targetEmail: email, sendEmail: false, __provider: provider });
      expect(c.failures).toEqual([]);
      return { urn, inputs: c.inputs, email };
    }),
  );
  await emu.control("DELETE", "/requests");
  return Promise.allSettled(
    checked.map(async ({ urn, inputs, email }) => {
      const created = await host.create(urn, inputs);
      return { name: "Invite", urn, id: created.id, provider, inputs, outs: created.outs, email };
    }),
  );
}

const made = <T>(results: PromiseSettledResult<T>[]): T[] =>
  results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
const reasons = (results: PromiseSettledResult<unknown>[]): string[] =>
  results.flatMap((r) => (r.status === "rejected" ? [String((r.reason as Error).message)] : []));

describe("Invites created together (real host over gRPC)", () => {
  it("45 invites: 3 bulk requests (20, 20, 5), each resource its own invite", async () => {
    const emails = Array.from({ length: 45 }, (_, i) => `bulk${i}@example.com`);
    const results = await createTogether("bulk", emails);
    expect(reasons(results)).toEqual([]);
    // 3 requests of 20, 20 and 5 when they all arrive within the batching window (a busy machine may split one)
    const writes = await inviteWrites();
    expect(writes.every((w) => w === "bulk 201")).toBe(true);
    expect(writes.length).toBeGreaterThanOrEqual(3);
    expect(writes.length).toBeLessThanOrEqual(5);
    const listed = await invites();
    const created = made(results);
    for (const r of created) {
      const invite = listed.find((i) => i.id === r.id);
      expect(invite?.target_email).toBe(r.email);
      expect(r.outs.targetEmail).toBe(r.email);
    }
    expect(new Set(created.map((r) => r.id)).size).toBe(45);
    await Promise.all(created.map((r) => destroy(host, r)));
    expect(await invites()).toEqual([]);
  });

  it("an invite PostHog refuses (already a member): the bulk is refused whole, each is sent alone", async () => {
    const emails = ["fine.one@example.com", "mia.member@example.com", "fine.two@example.com"];
    const results = await createTogether("refused", emails);
    const errors = reasons(results);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("mia.member@example.com is already a member of the organization");
    expect(made(results).map((r) => r.email)).toEqual(["fine.one@example.com", "fine.two@example.com"]);
    const writes = await inviteWrites();
    expect(writes).toContain("bulk 400");
    expect(writes.filter((w) => w === "one 400")).toHaveLength(1);
    expect((await invites()).map((i) => i.target_email).sort()).toEqual([
      "fine.one@example.com",
      "fine.two@example.com",
    ]);
    await Promise.all(made(results).map((r) => destroy(host, r)));
  });

  it("a bulk request whose answer is lost: each resource adopts the invite it made, none twice", async () => {
    await emu.control("POST", "/faults", {
      method: "POST",
      path: "/invites/bulk/$",
      dropResponse: true,
      times: 1,
    });
    const emails = ["lost.a@example.com", "lost.b@example.com", "lost.c@example.com"];
    const results = await createTogether("lost", emails);
    expect(reasons(results)).toEqual([]);
    // one bulk request (its answer dropped), then one list read shared by the three
    const log = (await emu.requests()).map((r) => `${r.method} ${r.path}`);
    expect(log.filter((l) => l === `POST ${org()}/invites/bulk/`)).toHaveLength(1);
    expect(log.filter((l) => l === `GET ${org()}/invites/`)).toHaveLength(1);
    const listed = await invites();
    expect(listed).toHaveLength(3);
    for (const r of made(results)) expect(listed.find((i) => i.id === r.id)?.target_email).toBe(r.email);
    await Promise.all(made(results).map((r) => destroy(host, r)));
  });

  // last: the host then holds back POST …/invites/ and …/invites/bulk/ until the budget frees (an hour)
  it("a budget that fits some: those are sent one by one, the others fail naming the budget, unsent", async () => {
    await emu.control("POST", "/invite-budget", { perHour: 3, perDay: 10 });
    try {
      const emails = ["a", "b", "c", "d", "e"].map((x) => `budget.${x}@example.com`);
      const results = await createTogether("budget", emails);
      expect(made(results)).toHaveLength(3);
      const errors = reasons(results);
      expect(errors).toHaveLength(2);
      for (const e of errors) {
        expect(e).toMatch(
          /The invite for budget\.[a-e]@example\.com was not sent: POST \S+\/invites\/ → 429/,
        );
        expect(e).toContain("PostHog allows an organization 50 invites an hour and 200 a day");
      }
      // all five in one bulk request, which does not fit; sent one by one, three fit, PostHog refuses the fourth
      // and the fifth is not sent at all (a busy machine may split the five: still one refusal sent)
      const writes = await inviteWrites();
      expect(writes).toContain("bulk 429");
      expect(writes.filter((w) => w === "one 429")).toHaveLength(1);
      expect(await invites()).toHaveLength(3);
      await Promise.all(made(results).map((r) => destroy(host, r)));
    } finally {
      await emu.control("POST", "/invite-budget", { enabled: false });
    }
  });
});
