import { describe, expect, it } from "vitest";
import { errorsOf, type RunOptions, type RunResult, runStack, writeStackSettings } from "../../tools/pulumi";
import { requestsSince as requestsOf } from "../support/emulator";
import { type Declared, fixtureDir, useFixtureProgram } from "./fixture-program";

// Issue 28, item 2: a pull request's `pulumi preview` is the promise that `pulumi up` on merge works. A program
// using the SDK (test/stack/fixtures/posthog) runs through the real Pulumi CLI against the emulator. Before the
// fix each refusing preview below exited 0 and only `up` failed (or stored what PostHog refuses). Issue 28, item 5:
// a preview that will adopt an existing object says which one; before the fix it said nothing of it. Every
// preview here writes nothing (the emulator's request log).
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

/** A member and a batch export the emulator starts with (adopted by a preview below). */
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
