import { describe, expect, it } from "vitest";
import {
  type EngineEvent,
  errorsOf,
  type RunOptions,
  type RunResult,
  runStack,
  savedState,
  writeStackSettings,
} from "../../tools/pulumi";
import { requestsSince as requestsOf } from "../support/emulator";
import { type Declared, type FixtureStack, fixtureDir, useFixtureProgram } from "./fixture-program";

// Issue 28, item 2: a pull request's `pulumi preview` is the promise that `pulumi up` on merge works. A program
// using the SDK (test/stack/fixtures/posthog) runs through the real Pulumi CLI against the emulator. Before the
// fix each refusing preview below exited 0 and only `up` failed (or stored what PostHog refuses). Issue 28, item 5:
// a preview that will adopt an existing object says which one; before the fix it said nothing of it. Every
// preview here writes nothing (the emulator's request log).
//
// Issue 12, point 5 (the last describe, on the same emulator, each case on a stack of its own): two resources of one
// program that manage one object used to fight forever (`up` exited 0, and every later refresh + up re-sent the
// invite or flipped the level back). Each case fails on the code before the fix. That `check` refuses the second
// resource of each pair, naming both, with no request, test/provider/one-object.test.ts proves through the provider
// host; here is what the engine adds: the run fails naming both, and nothing is written, or re-sent by later runs.
// (That after a refresh a level-only change of a Member shows only ~level, test/stack/list-reads.test.ts proves on
// its stack.)
const fx = useFixtureProgram({ prefix: "preview-promise" });
let counter = 0;

/** A stack of the fixture program whose settings file also holds `config` (stack config, e.g. posthog:host). */
function newStack() {
  counter += 1;
  const s = fx.stack(`p${counter}`);
  return {
    ...s,
    run(
      operation: RunOptions["operation"],
      resources: Declared,
      opts: {
        config?: Record<string, string>;
        env?: Record<string, string | undefined>;
        refresh?: boolean;
        expectNoChanges?: boolean;
      } = {},
    ): Promise<RunResult> {
      const config = { "fx:resources": JSON.stringify(resources), ...opts.config };
      writeStackSettings(
        s.configFile,
        `config:\n${Object.entries(config)
          .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}\n`)
          .join("")}`,
      );
      return runStack({
        operation,
        projectDir: fixtureDir,
        stack: s.name,
        stateDir: s.stateDir,
        configFile: s.configFile,
        env: { ...s.env(), ...opts.env } as Record<string, string>,
        ...(opts.refresh ? { refresh: true } : {}),
        ...(opts.expectNoChanges ? { expectNoChanges: true } : {}),
      });
    },
  };
}

let refusing: ReturnType<typeof newStack> | undefined;
/**
 * The one stack of the cases whose preview fails before any request: they leave it empty as they found it (each
 * case writes its own settings), so they share it (each new stack costs a `pulumi stack init`).
 */
const refusingStack = () => {
  refusing ??= newStack();
  return refusing;
};

/** The API requests the emulator received since the last call (method and path), then clears its log. */
const requestsSince = () => requestsOf(fx.emu());

/** The run's diagnostics and printed output, for an assertion's message. */
const why = (r: RunResult) => `${JSON.stringify(r.diagnostics, null, 1)}\n${r.output}`;

/** What the run printed and reported, as one text. */
const said = (r: RunResult) => `${r.output}\n${r.diagnostics.map((d) => d.message).join("\n")}`;

/** A member and a batch export the emulator starts with (adopted by a preview below; Mia is a pair's member too). */
const MIA = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03", email: "mia.member@example.com" };
const EXPORT = { id: "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c01", name: "Events to S3" };

/** The distinct error messages of a run, each with the resource's name prefix taken off. */
const errorTexts = (r: RunResult) => [...new Set(errorsOf(r).map((e) => e.replace(/^[^:]*: /, "")))];

describe("preview refuses malformed settings as up does, naming the setting and where it came from (no request)", () => {
  const program: Declared = [["Dashboard", "board", { name: "Board" }]];
  // One setting from an environment variable and one from the stack config, through the engine. The provider's
  // Check refuses the others the same way (posthog:host with another scheme, POSTHOG_PROJECT_ID that is not a
  // positive integer), and these two as well, as `up` calls it (an `up` calls Create only after its Check passes, and
  // its Check refuses malformed settings as a preview's does): test/provider/malformed-settings.test.ts, through
  // the real provider host.
  const cases: [string, { config?: Record<string, string>; env?: Record<string, string> }, RegExp][] = [
    [
      "POSTHOG_HOST that is not an http(s) URL",
      { env: { POSTHOG_HOST: "posthog.example.com" } },
      /Invalid POSTHOG_HOST: expected an http\(s\) URL/,
    ],
    [
      "posthog:organizationId that is not a UUID",
      { config: { "posthog:organizationId": "acme" } },
      /Invalid organization id "acme", set by the stack config posthog:organizationId: expected the organization's id, a UUID/,
    ],
  ];
  for (const [what, settings, message] of cases) {
    it(what, async () => {
      const s = refusingStack();
      await requestsSince();
      const preview = await s.run("preview", program, settings);
      expect(preview.ok, why(preview)).toBe(false);
      expect(errorsOf(preview).join("\n"), why(preview)).toMatch(message);
      expect(await requestsSince()).toEqual([]);
    }, 300_000);
  }
});

describe("a preview proves the settings reach PostHog (one read, no write), and says what it will adopt", () => {
  // One wrong setting (the key) through the engine, each way a preview meets a resource with nothing to change: a
  // plain preview and the nightly gate's --refresh. A preview that creates fails as one with nothing to change (the
  // same Check), and `up` (its Check passes with no request, then its Create and its Update fail) with the
  // preview's very message; a wrong organization or project fails the same access check, in the same provider
  // calls: test/provider/preview-settings-reach.test.ts, through the real provider host.
  it("a wrong key: a preview with nothing to change and the nightly gate fail naming the key's setting, after one GET, never showing the key; the right settings pass --refresh with no write, say once what a preview cannot prove, say what they will adopt (Member, BatchExportPause, Domain, Dashboard, Project and Invite: kind, id and name, counted as creates, at most one read each), and apply (template JSON at the deepest nesting PostHog accepts too)", async () => {
    const emu = fx.emu();
    const s = newStack();
    const one: Declared = [["Dashboard", "a", { name: "A" }]];
    const first = await s.run("up", one);
    expect(first.ok, why(first)).toBe(true);
    const changed: Declared = [
      ["Dashboard", "a", { name: "A renamed" }],
      ["Dashboard", "b", { name: "B" }],
      // dashboard_filters at level 2 of templateJson: 510 levels of filters reach level 511, the deepest accepted.
      ["Dashboard", "deep", { name: "Deep", templateJson: template("ok", 510) }],
    ];
    const key = "phx_this_key_is_not_known_to_posthog_0000000000000";
    const env = { POSTHOG_API_KEY: key };
    const message = /POSTHOG_API_KEY/;
    await requestsSince();
    // Nothing to change (issue 34, point 4): the preview still proves the settings, with one GET, and fails as
    // tomorrow's up would; the nightly gate (`--refresh --expect-no-changes`) too, whose refresh reads with the
    // settings stored at the last up.
    const same = await s.run("preview", one, { env });
    expect(same.ok, why(same)).toBe(false);
    expect(errorTexts(same).join("\n"), why(same)).toMatch(message);
    expect(await requestsSince()).toEqual([expect.stringMatching(/^GET /)]);
    const gate = await s.run("preview", one, { env, refresh: true, expectNoChanges: true });
    expect(gate.ok, why(gate)).toBe(false);
    expect(errorTexts(gate).join("\n"), why(gate)).toMatch(message);
    expect((await requestsSince()).filter((r) => !r.startsWith("GET "))).toEqual([]);
    for (const text of [
      same.output,
      gate.output,
      JSON.stringify(same.diagnostics),
      JSON.stringify(gate.diagnostics),
    ]) {
      expect(text.includes(key)).toBe(false);
    }

    // Issue 28, item 5: a preview that will adopt an existing object says which one (kind, id and name), where
    // the engine only counts a "create". Objects of the organization and project made outside Pulumi (the member
    // and the batch export are the emulator's own).
    const post = async (path: string, body: unknown) => {
      const r = await emu.call("POST", path, { body });
      expect(r.status, r.text).toBe(201);
      return r.body as { id: string | number };
    };
    const domain = await post(`${emu.org}/domains/`, { domain: "adopted.example.com" });
    const existing = await post(`${emu.project}/dashboards/`, { name: "Existing board" });
    const invite = await post(`${emu.org}/invites/`, {
      target_email: "pending@example.com",
      level: 1,
      send_email: false,
    });
    const adopted: Declared = [
      ["Member", "mia", { email: MIA.email, level: "member" }],
      ["BatchExportPause", "events", { batchExportId: EXPORT.id, paused: true }],
      ["Domain", "adopted", { domain: "adopted.example.com", adopt: true }],
      ["Dashboard", "board", { name: "Existing board", dashboardId: existing.id }],
      ["Project", "main", { name: "Default project", projectId: emu.projectId }],
      ["Invite", "pending", { targetEmail: "pending@example.com", adopt: true, sendEmail: false }],
    ];
    await requestsSince();
    // With the right settings a preview with --refresh passes and writes nothing. A preview that plans writes
    // says, once, what it could not prove: the key's write scopes (issue 34, point 4). Its check passes the
    // template JSON at the deepest nesting PostHog accepts.
    const planned = await s.run("preview", [...changed, ...adopted], { refresh: true });
    expect(planned.ok, why(planned)).toBe(true);
    const log = await requestsSince();
    expect(
      log.filter((r) => !r.startsWith("GET ")),
      why(planned),
    ).toEqual([]);
    // The access check of each provider host (the refresh's and the preview's), the refresh's read of the one
    // dashboard in the state, and at most one read per adopted object.
    expect(log.length, JSON.stringify(log)).toBeLessThanOrEqual(2 + 1 + adopted.length);
    expect(planned.counts).toMatchObject({ create: 2 + adopted.length, update: 1 });
    expect(planned.steps.find((st) => st.name === "deep")?.op, why(planned)).toBe("create");
    const infos = planned.diagnostics.filter((d) =>
      d.message.includes("this preview proved that the settings"),
    );
    expect(infos.map((d) => d.message).join("\n"), why(planned)).toContain(
      "not that the API key may make the writes it plans",
    );
    expect(infos).toHaveLength(1);
    const text = said(planned);
    const expected = [
      `Member "mia" adopts the existing member ${MIA.uuid} "${MIA.email} (Mia Member)"`,
      `BatchExportPause "events" adopts the existing batch export ${EXPORT.id} "${EXPORT.name}"`,
      `Domain "adopted" adopts the existing domain ${domain.id} "adopted.example.com"`,
      `Dashboard "board" adopts the existing dashboard ${existing.id} "Existing board"`,
      `Project "main" adopts the existing project ${emu.projectId} "`,
      `Invite "pending" adopts the existing invite ${invite.id} "pending@example.com"`,
    ];
    for (const line of expected) expect(text, why(planned)).toContain(line);
    expect(text).toContain('the engine counts it under "create"');
    // Nothing to adopt: a plain create says nothing.
    for (const plain of ["b", "deep"]) expect(text).not.toContain(`Dashboard "${plain}" adopts`);
    // With the right settings the change applies (the adoptions are left out), and the API takes the deepest
    // template: the body {"template": …} nests 512 levels, the emulator's limit.
    const applied = await s.run("up", changed);
    expect(applied.ok, why(applied)).toBe(true);
    expect(applied.counts).toMatchObject({ create: 2, update: 1 });
    expect(applied.steps.find((st) => st.name === "deep")?.outputs?.name).toBe("Deep");
  }, 600_000);
});

/** Template JSON of one text tile whose body is `body`, with dashboard filters nested `depth` levels. */
function template(body: string, depth = 1): string {
  let filters: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) filters = { f: filters };
  return JSON.stringify({
    template_name: "T",
    dashboard_description: "",
    dashboard_filters: filters,
    tiles: [{ type: "TEXT", body }],
  });
}

describe("preview refuses the text PostHog refuses, naming the property (no request)", () => {
  // The engine stops a preview at the first resource whose Check fails, and a Check reports one problem per
  // property: so one dashboard, each property refused its own way. The text only the program sees as it is (a
  // lone surrogate, which the gRPC encoding would drop on the way: before the fix up stored "up  down"), and text
  // the provider finds itself (inside template JSON). The provider's Check refuses each kind of text through the
  // real provider host, template JSON's lone surrogates and nesting too: test/provider/check-text.test.ts.
  const cases: [string, string, RegExp][] = [
    ["a NUL in a name", "name", /NUL character \(U\+0000\) at position 2/],
    ["a lone surrogate in a tag", "tags.1", /lone surrogate U\+D800 at position 3/],
    ["a lone high surrogate inside a description", "description", /lone surrogate U\+D83D at position 3/],
    ["a NUL inside template JSON", "templateJson.tiles.0.body", /NUL character/],
  ];
  it(`one dashboard, one preview, every refused property named: ${cases.map(([what]) => what).join("; ")}`, async () => {
    const s = refusingStack();
    await requestsSince();
    const args = {
      name: "Bo\u0000ard",
      tags: ["ok", "bad\ud800"],
      description: "up \ud83d down",
      templateJson: template("a\u0000b"),
    };
    const preview = await s.run("preview", [["Dashboard", "board", args]]);
    expect(preview.ok, why(preview)).toBe(false);
    const errors = errorsOf(preview);
    for (const [what, property, reason] of cases) {
      // The engine reports each failure of the Check on its own: "property <property> value … has a problem: …".
      const mine = errors.filter((e) => e.includes(`property ${property} value`));
      expect(mine, `${what}: ${why(preview)}`).toHaveLength(1);
      expect(mine[0], `${what}: ${why(preview)}`).toMatch(reason);
    }
    expect(await requestsSince()).toEqual([]);
  }, 300_000);
});

/** A member the emulator starts with (the pairs' cases). */
const MAX = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04", email: "max.member@example.com" };

let pairs = 0;

/** A new stack of the fixture program with its own settings file and local backend (for the pairs' cases). */
function pairStack() {
  pairs += 1;
  return fx.stack(`s${pairs}`);
}

/**
 * The stack's resources as the local backend holds them: its checkpoint (`<stateDir>/.pulumi/stacks/fx/<stack>.json`),
 * which `pulumi stack export` prints, read without a CLI run.
 */
function saved(s: FixtureStack): Record<string, unknown>[] {
  return (
    savedState({ projectDir: fixtureDir, stack: s.name, stateDir: s.stateDir }).deployment.resources ?? []
  );
}

/** The writes (not GETs) the emulator received since the last call. */
async function writesSince(): Promise<string[]> {
  const log = await fx.emu().requests();
  await fx.emu().control("DELETE", "/requests");
  return log.filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path}`);
}

/**
 * Whether every error of the run (a failed step, or an error diagnostic on a resource) is a conflict naming two
 * resources of `type` that manage one object: so the refresh of an `up --refresh` failed nothing.
 */
const onlyConflicts = (r: RunResult, type: string) => {
  const conflict = new RegExp(`${type} "[^"]+" and ${type} "[^"]+" both manage`);
  return errorsOf(r).every((e) => conflict.test(e));
};
/**
 * A refresh and an up as one `pulumi up --refresh` of `program` whose two resources of `type` manage one object:
 * asserts that its refresh read every resource of ours the state held before it (its steps of op "refresh" in the
 * event log), that the run failed with errors matching `pattern`, and that every error is such a conflict (the
 * refresh failed nothing).
 */
async function conflictingUpRefresh(s: FixtureStack, program: Declared, type: string, pattern: RegExp) {
  const held = saved(s)
    .filter((r) => String(r.type).includes("posthog:"))
    .map((r) => String(r.urn))
    .sort();
  const events: EngineEvent[] = [];
  const run = await s.run("up", program, { refresh: true, onEvent: (e) => events.push(e) });
  const read = events
    .map((e) => e.resOutputsEvent?.metadata)
    .filter((m) => m?.op === "refresh" && m.type.includes("posthog:"))
    .map((m) => String(m?.urn))
    .sort();
  expect(read, why(run)).toEqual(held);
  expect(run.ok).toBe(false);
  expect(errorsOf(run).join("\n"), why(run)).toMatch(pattern);
  expect(onlyConflicts(run, type), why(run)).toBe(true);
}
const level = async (uuid: string) => {
  const page = (await fx.emu().call("GET", `${fx.emu().org}/members/`)).body as {
    results: { user: { uuid: string }; level: number }[];
  };
  return page.results.find((m) => m.user.uuid === uuid)?.level;
};

describe("one object, one resource (a program using the SDK, through the real Pulumi CLI)", () => {
  it("two Invites for one address (case-insensitive): `pulumi up --yes` fails in its own preview naming both and writes nothing; with --skip-preview at most one is sent, and nothing is re-sent later", async () => {
    const s = pairStack();
    const program: Declared = [
      ["Invite", "dup-lower", { targetEmail: "dup@example.com" }],
      ["Invite", "dup-upper", { targetEmail: "DUP@example.com", level: "admin" }],
    ];
    await writesSince();
    // Issue 27, point 4: a program whose preview failed is not half-applied by the up that follows. A user's
    // `pulumi up --yes` previews first (the engine's preview, as `pulumi preview` runs it) and stops there: the
    // preview fails naming both, nothing is sent, nothing is in the state. (With --skip-preview the engine starts
    // each create as soon as its own check passes, before a later registration's check fails: the first invite may
    // be sent, as follows; docs/how-it-works.md, "A failed preview applies nothing", says so.)
    const previewed = await s.run("up", program, { withPreview: true });
    expect(previewed.ok, why(previewed)).toBe(false);
    expect(errorsOf(previewed).join("\n"), why(previewed)).toMatch(
      /Invite "dup-(upper|lower)" and Invite "dup-(?!\1)(lower|upper)" both manage the invite/,
    );
    expect(await writesSince()).toEqual([]);
    expect(saved(s).filter((r) => String(r.type).endsWith("posthog:Invite"))).toEqual([]);

    const up = await s.run("up", program);
    expect(up.ok).toBe(false);
    expect(errorsOf(up).join("\n"), why(up)).toMatch(
      /Invite "dup-(upper|lower)" and Invite "dup-(?!\1)(lower|upper)"/,
    );
    // At most the first one (its create may start before the second's check fails). Which of the two the engine
    // checks first is not fixed, so each message may name either one first.
    const sent = await writesSince();
    expect(sent.length).toBeLessThanOrEqual(1);
    for (const w of sent) expect(w).toBe(`POST ${fx.emu().org}/invites/`);

    // Before: refresh + up re-sent an invite on every run (each new invite replaces the other's). One `up --refresh`
    // is both: its refresh reads each resource in the state, and fails nothing (every error is the conflict's).
    await conflictingUpRefresh(
      s,
      program,
      "Invite",
      /Invite "dup-(upper|lower)" and Invite "dup-(?!\1)(lower|upper)"/,
    );
    // Whichever of the two the engine checks first (the order registrations reach it is not fixed), the one in
    // the state keeps its invite: the other fails before its request leaves (provider/framework/claims.ts).
    expect(await writesSince()).toEqual([]);
  }, 300_000);

  it("two Members for one person with different levels fail naming both; the level never flips", async () => {
    const s = pairStack();
    const program: Declared = [
      ["Member", "mia-admin", { email: MIA.email, level: "admin", retainOnDelete: true }],
      ["Member", "mia-member", { email: "Mia.Member@example.com", level: "member", retainOnDelete: true }],
    ];
    await writesSince();
    // (That a check failure fails the preview, naming both and writing nothing, the Invites above show; that the
    // Member's check fails with no request, test/provider/one-object.test.ts.)
    const up = await s.run("up", program);
    expect(up.ok).toBe(false);
    expect(errorsOf(up).join("\n"), why(up)).toMatch(
      /Member "mia-(member|admin)" and Member "mia-(?!\1)(admin|member)" both manage the member/,
    );
    // At most one (an update may start before the other's check fails); only mia-admin's changes the level.
    const sent = await writesSince();
    expect(sent.length).toBeLessThanOrEqual(1);
    for (const w of sent) expect(w).toBe(`PATCH ${fx.emu().org}/members/${MIA.uuid}/`);
    const after = await level(MIA.uuid);
    expect(after).toBe(sent.length === 1 ? 8 : 1);
    // A refresh and an up, as one `up --refresh`: its refresh reads each resource in the state, and fails nothing
    // (every error is the conflict's).
    await conflictingUpRefresh(
      s,
      program,
      "Member",
      /Member "mia-(member|admin)" and Member "mia-(?!\1)(admin|member)" both manage the member/,
    );
    const resent = await writesSince();
    const now = await level(MIA.uuid);
    await fx.emu().call("PATCH", `${fx.emu().org}/members/${MIA.uuid}/`, { body: { level: 1 } });
    expect(resent).toEqual([]);
    expect(now).toBe(after);
  }, 300_000);

  it("a Member by e-mail and one by user UUID of the same person fail naming both, and never flip the level", async () => {
    const s = pairStack();
    const program: Declared = [
      ["Member", "max-by-email", { email: MAX.email, level: "admin", retainOnDelete: true }],
      ["Member", "max-by-uuid", { userUuid: MAX.uuid, level: "member", retainOnDelete: true }],
    ];
    await writesSince();
    // Which person an e-mail names is known only from the API: up finds out, before it changes the level twice.
    const up = await s.run("up", program);
    expect(up.ok).toBe(false);
    expect(errorsOf(up).join("\n"), why(up)).toMatch(
      /Member "max-by-(email|uuid)" and Member "max-by-(?!\1)(email|uuid)" both manage/,
    );
    expect((await writesSince()).length).toBeLessThanOrEqual(1);
    const after = await level(MAX.uuid);
    // A refresh and an up, as one `up --refresh`: its refresh reads each resource in the state, and fails nothing
    // (every error is the conflict's).
    await conflictingUpRefresh(
      s,
      program,
      "Member",
      /Member "max-by-(email|uuid)" and Member "max-by-(?!\1)(email|uuid)"/,
    );
    const resent = await writesSince();
    const now = await level(MAX.uuid);
    await fx.emu().call("PATCH", `${fx.emu().org}/members/${MAX.uuid}/`, { body: { level: 1 } });
    expect(resent).toEqual([]);
    expect(now).toBe(after);
  }, 300_000);
});
