import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  type EngineEvent,
  ensureStack,
  errorsOf,
  exportStack,
  pulumi,
  type RunOptions,
  type RunResult,
  refreshOf,
  runStack,
  savedState,
  writeStackSettings,
} from "../../tools/pulumi";
import { filesUnder } from "../support/files";
import { type Declared, fixtureDir, useFixtureProgram } from "./fixture-program";

// Three cases on one stack of a program using the SDK, run through the real Pulumi CLI against the emulator, in
// order: each later case's runs are also later runs of the earlier cases' resources, and the last case searches
// the output of every run of the stack. Then, on a stack of its own on the same emulator, an API key set as plain
// stack config (issue 28, item 4, below).
//
// Issue 27, point 2: a failed list read is not an empty list. One 404 (with PostHog's error body) on a list read
// during `refresh` used to mark every dashboard of the project `deleted`, drop the Invites, Members and
// Collaborators from the state and exit 0; the next `up` sent the invited person a second invitation. An object
// is gone only when a read of that object says so (a 404 on its own URL, or a list answered with 200 that lacks
// it). That the provider's Reads, for a 404 on each list a refresh reads (dashboards, invites, members,
// collaborators), either fail naming the request or answer as without the fault, and write nothing,
// test/provider/list-reads.test.ts proves through the real provider host. Here is what the engine adds, for the
// dashboards list (every Read answers) and the invites list (a Read fails, so the refresh fails): the state is kept
// exactly as it was, and the next `up` writes nothing but what the program changed.
//
// Issue 12, point 5: after a refresh, a level-only change of a Member (declared by e-mail or by user UUID) shows
// only ~level; before, the refreshed inputs named the member by user UUID, so it showed ~email, ~level, ~userUuid.
//
// Issue 34, point 3 (b): `pulumi up --json` printed a Project's apiToken and a sharing's accessToken in clear, in
// `debug:` diagnostic events. Every output stream of every run of the stack (`up`, the refreshes, `preview --refresh`
// and `destroy`, each with --json, and `up --debug`) and every file of the backend is searched for the API
// key and each secret output's value. The provider returns them as secrets (the SDK classes'
// additionalSecretOutputs; the state holds them encrypted): the one place they are in clear is Pulumi's own Node.js
// runtime, which logs every RegisterResource answer at debug level (`RegisterResource RPC finished: … resp: …`,
// @pulumi/pulumi runtime/resource.js), the secret envelope's value included, and which `--json` and `--debug` print.
// The test proves that this is the only place (docs/troubleshooting/settings-and-keys.md says how to keep it out of CI logs).
//
// Issue 28, item 4: `pulumi config set posthog:apiKey phx_…` without `--secret` leaves the key readable in the stack
// settings file. A preview warns, naming the fix, and the key reaches no state, log or error. Before the fix there
// was no warning at all. The plain key is written into the settings file as `pulumi config set posthog:apiKey …`
// writes it (tools/pulumi.ts writeStackSettings, no CLI run); only the secret one needs the CLI (it encrypts).
const MIA = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03", email: "mia.member@example.com" };
const MAX = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04" };

const fx = useFixtureProgram({ prefix: "list-reads" });
const s = fx.stack("lists");
const why = (r: RunResult) => `${JSON.stringify(r.diagnostics, null, 1)}\n${r.output}`;
/** Every run of the stack, in order: the last case searches their output. */
const runs: RunResult[] = [];
/** Runs `operation` of `program` on the stack and keeps the result in {@link runs}. */
async function run(
  operation: "up" | "preview" | "refresh" | "destroy",
  program: Declared,
  more: Parameters<typeof s.run>[2] = {},
): Promise<RunResult> {
  const r = await s.run(operation, program, more);
  runs.push(r);
  return r;
}
/** The program of the first case (set by it), and the same with both Members' level changed (the second case). */
let program: Declared = [];
let raised: Declared = [];

/** The custom resources of the stack's state (secrets shown): name → {id, inputs, outputs}; its pending operations. */
async function stateOf() {
  const exported = await exportStack({
    projectDir: fixtureDir,
    stack: s.name,
    stateDir: s.stateDir,
    env: s.env(),
    extra: ["--show-secrets"], // the plain values: the ciphertext of a secret changes at every save
  });
  const resources = Object.fromEntries<{ id: unknown; inputs: unknown; outputs: unknown }>(
    (exported.deployment.resources ?? [])
      .filter((r) => r.custom === true && !String(r.type).startsWith("pulumi:providers:"))
      .map((r) => [
        String(String(r.urn).split("::").pop()),
        { id: r.id, inputs: r.inputs, outputs: r.outputs },
      ]),
  );
  return { resources, pending: exported.deployment.pending_operations ?? [] };
}

/** The Node.js runtime's own debug line of a RegisterResource answer, as a --json event or a --debug line. */
const RUNTIME_LOG = /RegisterResource RPC finished: resource:/;

describe("one stack: failed list reads, a Member's level-only change, secrets in the output (real Pulumi CLI)", () => {
  it("a 404 on the dashboards list or the invites list during a refresh keeps every resource in the state", async () => {
    // A dashboard made outside the program, whose collaborator and sharing the program manages.
    const emu = fx.emu();
    const made = await emu.call("POST", `${emu.project}/dashboards/`, {
      body: { name: "Shared by Pulumi", restriction_level: 37 }, // collaborators need restrictionLevel 37
    });
    const sharedId = (made.body as { id: number }).id;
    program = [
      ["Dashboard", "kpis", { name: "List reads", restrictionLevel: 37 }],
      ["Invite", "jane", { targetEmail: "jane.lists@example.com", sendEmail: false }],
      ["Member", "mia", { email: MIA.email, level: "member", retainOnDelete: true }],
      ["Member", "max", { userUuid: MAX.uuid, level: "member", retainOnDelete: true }],
      ["DashboardCollaborator", "max-shared", { dashboardId: sharedId, userUuid: MAX.uuid }],
      ["DashboardSharing", "shared", { dashboardId: sharedId, enabled: true }],
      ["Project", "web", { name: "Secret outputs web" }],
    ];
    const first = await run("up", program, { args: ["--json"] });
    expect(first.ok, why(first)).toBe(true);
    // The dashboard's id, from PostHog (the one dashboard of that name): the state's is compared with it below.
    const boards = (await emu.call("GET", `${emu.project}/dashboards/?limit=1000`)).body as {
      results: { id: number; name: string }[];
    };
    const named = boards.results.filter((d) => d.name === "List reads");
    expect(named).toHaveLength(1);
    const dashboardId = Number(named[0]?.id);
    expect(dashboardId).toBeGreaterThan(0);
    // The state the up left: each refresh with a failed list read must leave it exactly as it is.
    const beforeState = await stateOf();
    const before = beforeState.resources;
    expect(Object.keys(before).sort()).toEqual(["jane", "kpis", "max", "max-shared", "mia", "shared", "web"]);
    expect(Number(before.kpis?.id)).toBe(dashboardId);

    const lists = [
      { list: "dashboards", path: "/projects/\\d+/dashboards/$" },
      { list: "invites", path: "/invites/$" },
    ];
    for (const { list, path } of lists) {
      const armed = await emu.control("POST", "/faults", { method: "GET", path, status: 404 });
      expect(armed.status).toBe(201);
      await emu.control("DELETE", "/requests");
      const refresh = await run("refresh", program, { args: ["--json"] });
      await emu.control("DELETE", "/faults");
      const seen = await emu.requests();
      const failedLists = seen.filter((r) => r.status === 404);
      expect(
        failedLists.length,
        `${list}: the fault was hit: ${seen.map((r) => `${r.method} ${r.path} ${r.status}`).join(", ")}\n${why(refresh)}`,
      ).toBeGreaterThan(0);
      if (!refresh.ok) {
        // The refresh fails naming the request that failed, and what to check.
        expect(errorsOf(refresh).join("\n"), why(refresh)).toMatch(/GET \/api\/\S+\/ .*404/);
        expect(errorsOf(refresh).join("\n")).toContain("nothing was marked gone");
      }
      // The refresh wrote nothing to PostHog.
      expect(
        seen.filter((r) => r.method !== "GET").map((w) => `${w.method} ${w.path}`),
        `${list}: the refresh`,
      ).toEqual([]);
      // Nothing left the state, nothing is marked deleted, no id changed.
      const afterState = await stateOf();
      const after = afterState.resources;
      expect(Object.keys(after).sort(), `${list}: ${why(refresh)}`).toEqual(Object.keys(before).sort());
      for (const [name, r] of Object.entries(after)) {
        expect(r.id, `${list}: ${name}`).toBe(before[name]?.id);
        expect((r.outputs as { deleted?: boolean }).deleted, `${list}: ${name}`).not.toBe(true);
      }
      // More: the state is exactly what it was before the refresh (every input and output, no pending
      // operation), and PostHog is unchanged, so an `up` now acts exactly as the one after the loop, which
      // proves it writes nothing.
      expect(afterState, `${list}: the state after the refresh`).toEqual(beforeState);
    }
    // The dashboards list's refresh succeeded (every Read answers): the next case's change comes after a refresh
    // that saved every Read's answer.
    expect(runs[1]?.ok, runs[1] && why(runs[1])).toBe(true);
  }, 900_000);

  it("the next up writes nothing but the declared change: after a refresh, a level-only change of a Member shows only ~level (declared by e-mail or by user UUID); a refresh and a preview then find nothing to change", async () => {
    expect(program.length).toBeGreaterThan(0);
    const emu = fx.emu();
    raised = program.map(([type, name, args]) =>
      type === "Member" ? [type, name, { ...args, level: "admin" }] : [type, name, args],
    );
    // The next up, after the refreshes with a failed list read (the first of which saved every Read's answer),
    // with both Members' level raised. Before: the refreshed inputs named the member by user UUID, so this showed
    // ~email, ~level, ~userUuid.
    await emu.control("DELETE", "/requests");
    const up = await run("up", raised, { args: ["--debug"] });
    expect(up.ok, why(up)).toBe(true);
    const changes = (r: RunResult) =>
      r.steps
        .filter((x) => x.op !== "same")
        .map((x) => [x.op, x.name, x.diffs])
        .sort((a, b) => String(a[1]).localeCompare(String(b[1])));
    expect(changes(up)).toEqual([
      ["update", "max", ["level"]],
      ["update", "mia", ["level"]],
    ]);
    expect(up.counts.same).toBe(program.length - 2);
    // It writes nothing else: no second invitation, no restored dashboard; just the two levels.
    const writes = (await emu.requests()).filter((r) => r.method !== "GET");
    expect(writes.map((w) => `${w.method} ${w.path}`).sort(), "the up after the refreshes").toEqual(
      [`PATCH ${emu.org}/members/${MAX.uuid}/`, `PATCH ${emu.org}/members/${MIA.uuid}/`].sort(),
    );
    // A refresh then a preview, as one `preview --refresh`: its refresh steps (op "refresh" in its event log) find
    // every resource as the state holds it (no drift: the diff, made against the outputs, is a plain preview's),
    // and it plans no change.
    const events: EngineEvent[] = [];
    const preview = await run("preview", raised, {
      refresh: true,
      expectNoChanges: true,
      args: ["--json"],
      onEvent: (e) => events.push(e),
    });
    expect(preview.ok, why(preview)).toBe(true);
    const refresh = refreshOf(events);
    // (steps are listed as they finish: they run in parallel, in any order)
    expect(refresh.steps.map((x) => `${x.op} ${x.name}`).sort(), why(preview)).toEqual(
      program.map(([, name]) => `same ${name}`).sort(),
    );
    expect(preview.counts).toMatchObject({ update: 0, replace: 0, same: program.length });
    // The resource name the SDK passes for these checks never reaches the state.
    const state = await stateOf();
    expect(Object.keys(state.resources).length).toBe(program.length);
    expect(JSON.stringify(state)).not.toContain("__resourceName");
  }, 900_000);

  it("secret outputs and the API key appear in clear only in the Node.js runtime's own RegisterResource debug lines of every run; never in the backend", async () => {
    expect(raised.length).toBeGreaterThan(0);
    const emu = fx.emu();
    const projects = (await emu.call("GET", `/api/organizations/${emu.organizationId}/projects/?limit=100`))
      .body as { results: { id: number; name: string }[] };
    const web = projects.results.find((p) => p.name === "Secret outputs web");
    const project = (await emu.call("GET", `/api/organizations/${emu.organizationId}/projects/${web?.id}/`))
      .body as { api_token: string; live_events_token?: string | null };
    const boards = (await emu.call("GET", `${emu.project}/dashboards/?limit=1000`)).body as {
      results: { id: number; name: string }[];
    };
    const sharedId = boards.results.find((d) => d.name === "Shared by Pulumi")?.id;
    const sharing = (await emu.call("GET", `${emu.project}/dashboards/${sharedId}/sharing/`)).body as {
      access_token: string;
    };
    const secrets: Record<string, string> = {
      apiKey: emu.apiKey,
      apiToken: project.api_token,
      accessToken: sharing.access_token,
    };
    for (const v of Object.values(secrets)) expect(v.length).toBeGreaterThan(8);
    const backend = filesUnder(s.stateDir);
    const destroy = await run("destroy", raised, { args: ["--json"] });
    expect(destroy.ok, why(destroy)).toBe(true);
    // The runs searched: up (--json, and --debug), the refreshes, preview --refresh and destroy (--json).
    expect(runs.map((r) => r.operation)).toEqual(["up", "refresh", "refresh", "up", "preview", "destroy"]);

    for (const [what, value] of Object.entries(secrets)) {
      // The backend: checkpoints, backups, history, event logs.
      const files = [...backend, ...filesUnder(s.stateDir)].filter((f) => f.text.includes(value));
      expect(
        files.map((f) => f.path),
        `${what} in the backend`,
      ).toEqual([]);
      // The output streams: with --json, each line (an event) that holds the value is the runtime's debug event;
      // in text (--debug), the value appears no more often than in the runtime's debug messages the run logged.
      const count = (text: string) => text.split(value).length - 1;
      for (const r of runs) {
        expect(JSON.stringify(r.diagnostics.filter((d) => !RUNTIME_LOG.test(d.message)))).not.toContain(
          value,
        );
        const runtime = r.diagnostics.filter((d) => RUNTIME_LOG.test(d.message)).map((d) => d.message);
        if (r.output.startsWith("{")) {
          const lines = r.output.split("\n").filter((l) => l.includes(value));
          for (const line of lines) expect(line, `${what} in ${r.operation} --json`).toMatch(RUNTIME_LOG);
        } else {
          expect(count(r.output), `${what} in ${r.operation} --debug`).toBeLessThanOrEqual(
            count(runtime.join("\n")),
          );
        }
      }
    }
    // The key never, not even there.
    for (const r of runs) expect(r.output).not.toContain(emu.apiKey);
  }, 900_000);
});

const warnings = (r: RunResult) =>
  r.diagnostics.filter((d) => d.severity === "warning").map((d) => d.message);
const FIX = "pulumi config set --secret posthog:apiKey";

describe("posthog:apiKey set as plain stack config", () => {
  it("warns at preview and up naming the fix; only the engine's record of the stack config holds it; once a secret, no warning and no key in the state", async () => {
    const program: Declared = [["Dashboard", "board", { name: "Plain key" }]];
    const key = await fx.emu().createKey();
    const keyed = fx.stack("plain");
    const env: Record<string, string | undefined> = { ...keyed.env(), POSTHOG_API_KEY: undefined };
    await ensureStack({
      projectDir: fixtureDir,
      stack: keyed.name,
      stateDir: keyed.stateDir,
      configFile: keyed.configFile,
    });
    const config = async (...args: string[]) => {
      const r = await pulumi(
        ["config", "set", ...args, "--stack", keyed.name, "--config-file", keyed.configFile],
        {
          cwd: fixtureDir,
          stateDir: keyed.stateDir,
        },
      );
      expect(r.exitCode, r.stderr).toBe(0);
      return r;
    };
    // What `pulumi config set posthog:apiKey <key>` and `pulumi config set fx:resources <json>` write.
    writeStackSettings(
      keyed.configFile,
      `config:\n  posthog:apiKey: ${key}\n  fx:resources: ${JSON.stringify(JSON.stringify(program))}\n`,
    );
    expect(readFileSync(keyed.configFile, "utf8")).toContain(`posthog:apiKey: ${key}`);
    const events: EngineEvent[] = [];
    const runKeyed = (operation: RunOptions["operation"]) =>
      runStack({
        operation,
        projectDir: fixtureDir,
        stack: keyed.name,
        stateDir: keyed.stateDir,
        configFile: keyed.configFile,
        env: env as Record<string, string>,
        onEvent: (e) => events.push(e),
      });

    const preview = await runKeyed("preview");
    expect(preview.ok, why(preview)).toBe(true);
    const warned = warnings(preview).filter((m) => m.includes("posthog:apiKey"));
    expect(warned, why(preview)).toHaveLength(1);
    expect(warned[0]).toContain("plain text");
    expect(warned[0]).toContain(FIX);
    expect(preview.output).toContain(FIX);

    const up = await runKeyed("up");
    expect(up.ok, why(up)).toBe(true);
    expect(warnings(up).filter((m) => m.includes(FIX))).toHaveLength(1);
    // The state as the local backend holds it (the checkpoint `pulumi stack export` prints, read without a CLI run).
    const savedOf = () => savedState({ projectDir: fixtureDir, stack: keyed.name, stateDir: keyed.stateDir });
    // What the engine does with plain stack config: it records the whole config as the inputs of the default
    // provider (`pulumi:providers:pulumi-nodejs`), in clear. No resource of ours holds the key.
    const exported = savedOf();
    const holders = (exported.deployment.resources ?? [])
      .filter((r) => JSON.stringify(r).includes(key))
      .map((r) => String(r.type));
    expect(holders).toEqual(["pulumi:providers:pulumi-nodejs"]);
    // The engine's events carry it where they carry the stack config: the prelude (the config of the run) and
    // that provider's step; no other event, and no output or error.
    expect(events.length).toBeGreaterThan(10);
    const withKey = events.filter((e) => JSON.stringify(e).includes(key));
    expect(withKey.length).toBeGreaterThan(0);
    for (const e of withKey) {
      const where = e.preludeEvent ? "prelude" : (e.resourcePreEvent ?? e.resOutputsEvent)?.metadata.type;
      expect(["prelude", "pulumi:providers:pulumi-nodejs"], JSON.stringify(Object.keys(e))).toContain(where);
    }
    const printed = [preview, up].map((r) => r.output + JSON.stringify(r.diagnostics)).join("\n");
    expect(printed.includes(key), "the key is in the CLI's output or diagnostics").toBe(false);

    // Made a secret as the warning says: no warning, and after the next up the state holds it only encrypted. (The
    // warning comes from the program, which a preview and an up run alike: the up shows there is none.)
    await config("--secret", "posthog:apiKey", key);
    expect(readFileSync(keyed.configFile, "utf8")).toMatch(/posthog:apiKey:\n {4}secure: v1:/);
    const secured = await runKeyed("up");
    expect(secured.ok, why(secured)).toBe(true);
    expect(warnings(secured).filter((m) => m.includes("posthog:apiKey"))).toEqual([]);
    expect(JSON.stringify(savedOf()).includes(key)).toBe(false);
    expect(secured.output.includes(key)).toBe(false);
    writeFileSync(keyed.configFile, ""); // the key out of the test's temporary files before they are removed
  }, 300_000);
});
