/**
 * Issue 49, items 8, 9 and 4 through the real Pulumi CLI, against one emulator.
 *
 * Item 8, one owner per object, wherever it came from. Through the provider plugin (a YAML program, `pulumi import`,
 * as test/plugin/import-file.test.ts): the import of a verified domain's DomainVerification previews no change, an
 * unverified one's is refused (it planned `~ update` with no diff before); two entries of one import file naming one
 * dashboard fail at the import, naming both, and nothing is imported; `pulumi import <type> a <id>` run twice is
 * refused by the engine, and the same dashboard imported again as `b` (an import reads only what it imports) makes
 * the program holding both fail its preview and its `up`, naming both, with no write (before, both previews passed
 * and every `up` renamed the dashboard back and forth); a Dashboard adopting (`dashboardId: ${made.id}`) the
 * dashboard another resource created in the same run fails at `up` once that one is created, and the next preview
 * fails too. Through the dynamic SDK (test/stack/fixtures/posthog): two Dashboards adopting one `dashboardId` and two
 * Projects adopting one `projectId` fail the preview, naming both, with no write.
 *
 * Item 9: `pulumi destroy` of an Invite whose DELETE is answered 404 (the emulator's status fault) while it is still
 * pending fails naming it, after one list read; the Invite stays in the state and in PostHog; the next destroy
 * revokes it. Before, destroy exited 0 and left the invite in PostHog, unmanaged.
 *
 * Item 4: a malformed POSTHOG_LOST_CREATE_WINDOW fails a preview that plans a create, naming it, with no request.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { errorsOf, pulumi, type RunResult, runStack, savedState } from "../../tools/pulumi";
import { NO_POSTHOG_ENV, requireBuilt, root, stackWithSettings } from "../plugin/support";
import { requestsSince } from "../support/emulator";
import { fixtureDir, useFixtureProgram } from "./fixture-program";

const fx = useFixtureProgram({ prefix: "one-owner" });

/** A run's diagnostics and output, for an assertion's message. */
const why = (r: RunResult) => `${JSON.stringify(r.diagnostics, null, 1)}\n${r.output}`;
/** The writes (not GETs) the emulator received since the last call; clears its log. */
const writesSince = async () => (await requestsSince(fx.emu())).filter((r) => !r.startsWith("GET "));

describe("one owner per object through the provider plugin: pulumi import, preview, up (a YAML program)", () => {
  const header = {
    name: "posthog-one-owner",
    runtime: "yaml",
    plugins: { providers: [{ name: "posthog", path: join(root, "plugin") }] },
  };
  const stack = "dev";
  let dirs: { projectDir: string; stateDir: string; common: string[] } | undefined;
  /** The plugin program's stack, made once (its program names `resources`); the CLI's common flags. */
  async function pluginStack(resources: Record<string, unknown> = {}) {
    if (!dirs) {
      requireBuilt([]);
      const projectDir = join(fx.work, "plugin-program");
      const stateDir = join(fx.work, "plugin-state");
      mkdirSync(projectDir, { recursive: true });
      writeFileSync(join(projectDir, "Pulumi.yaml"), stringifyYaml(header));
      const configFile = await stackWithSettings({
        projectDir,
        stack,
        stateDir,
        emu: fx.emu(),
        env: NO_POSTHOG_ENV,
      });
      const common = ["--stack", stack, "--config-file", configFile, "--non-interactive", "--color", "never"];
      dirs = { projectDir, stateDir, common };
    }
    writeFileSync(join(dirs.projectDir, "Pulumi.yaml"), stringifyYaml({ ...header, resources }));
    return dirs;
  }
  /** `pulumi import <args> --yes` on the plugin stack: exit code and output. */
  async function imported(args: string[]) {
    const d = await pluginStack(program);
    const r = await pulumi(["import", ...args, "--yes", ...d.common], {
      cwd: d.projectDir,
      stateDir: d.stateDir,
      env: NO_POSTHOG_ENV,
    });
    return { code: r.exitCode, output: `${r.stdout}\n${r.stderr}` };
  }
  /** The generated code's resources of an import's `--out` file. */
  const generated = (file: string) =>
    (parseYaml(readFileSync(file, "utf8")) as { resources: Record<string, Record<string, unknown>> })
      .resources;
  /** Pulumi names of our resources in the plugin stack's state, sorted. */
  const inState = () => {
    const d = dirs as { projectDir: string; stateDir: string };
    return (savedState({ projectDir: d.projectDir, stack, stateDir: d.stateDir }).deployment.resources ?? [])
      .filter((r) => String(r.type).startsWith("posthog:index:"))
      .map((r) => String(r.urn).split("::").at(-1))
      .sort();
  };
  /** The resources the stack's program declares: what the imports so far generated (so plans delete nothing). */
  let program: Record<string, unknown> = {};
  const run = async (
    operation: "preview" | "up",
    more: { withPreview?: boolean; expectNoChanges?: boolean } = {},
  ) => {
    const d = await pluginStack(program);
    return runStack({
      operation,
      projectDir: d.projectDir,
      stack,
      stateDir: d.stateDir,
      env: NO_POSTHOG_ENV,
      ...more,
    });
  };

  it("DomainVerification: the import of a verified domain's previews no change; an unverified domain's is refused, naming why, and nothing is imported or written", async () => {
    const emu = fx.emu();
    const verified = (
      await emu.call("POST", `${emu.org}/domains/`, { body: { domain: "owner-verified.example.com" } })
    ).body as { id: string; verification_challenge: string };
    await emu.control("POST", "/dns", {
      name: "_posthog-challenge.owner-verified.example.com",
      txt: verified.verification_challenge,
    });
    expect((await emu.call("POST", `${emu.org}/domains/${verified.id}/verify/`)).status).toBeLessThan(300);
    const pending = (
      await emu.call("POST", `${emu.org}/domains/`, { body: { domain: "owner-pending.example.com" } })
    ).body as { id: string };
    await writesSince();

    const out = join(fx.work, "verification.yaml");
    const ok = await imported(["posthog:index:DomainVerification", "verified", verified.id, "--out", out]);
    expect(ok.code, ok.output).toBe(0);
    program = { ...program, ...generated(out) };
    const preview = await run("preview", { expectNoChanges: true });
    expect(preview.ok, why(preview)).toBe(true);
    expect(preview.counts).toMatchObject({ create: 0, update: 0, replace: 0, delete: 0 });

    const refused = await imported(["posthog:index:DomainVerification", "pending", pending.id]);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain(
      `Domain owner-pending.example.com (${pending.id}) is not verified, so it has no verification to import: nothing is imported`,
    );
    expect(inState()).toEqual(["verified"]);
    expect(await writesSince()).toEqual([]);
  }, 300_000);

  it("an import file with two entries of one dashboard fails at the import naming both; nothing is imported", async () => {
    const emu = fx.emu();
    const id = (await emu.call("POST", `${emu.project}/dashboards/`, { body: { name: "Listed twice" } })).body
      .id;
    const list = join(fx.work, "twice.json");
    const entry = (name: string) => ({ type: "posthog:index:Dashboard", name, id: `${emu.projectId}/${id}` });
    writeFileSync(list, JSON.stringify({ resources: [entry("twice-a"), entry("twice-b")] }));
    await writesSince();
    const r = await imported(["--file", list]);
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(
      new RegExp(
        `Dashboard "twice-(a|b)" and Dashboard "twice-(?!\\1)(a|b)" both manage the Dashboard of id ${id}: one object is imported once, as one resource. Nothing is imported`,
      ),
    );
    expect(inState()).toEqual(["verified"]);
    expect(await writesSince()).toEqual([]);
  }, 300_000);

  it("a Dashboard adopting (dashboardId: made.id) the dashboard another resource creates in the same run: up fails naming both once that one is made, and so does the next preview", async () => {
    program = {
      ...program,
      made: { type: "posthog:index:Dashboard", properties: { name: "Made here" } },
      taker: {
        type: "posthog:index:Dashboard",
        // Pulumi YAML's interpolation of the other resource's id.
        properties: { name: "Taken over", dashboardId: ["$", "{made.id}"].join("") },
      },
    };
    await writesSince();
    const up = await run("up");
    expect(up.ok, why(up)).toBe(false);
    const pair =
      /Dashboard "(made|taker)" and Dashboard "(?!\1)(made|taker)" both manage the Dashboard of id \d+/;
    expect(errorsOf(up).join("\n"), why(up)).toMatch(pair);
    // The created one is made (its own writes only), and the taker never renamed it.
    expect(inState()).toEqual(["made", "verified"]);
    const d = dirs as { projectDir: string; stateDir: string };
    const made = (
      savedState({ projectDir: d.projectDir, stack, stateDir: d.stateDir }).deployment.resources ?? []
    ).find((r) => String(r.urn).endsWith("::made"))?.id;
    const writes = await writesSince();
    expect(writes.length).toBeGreaterThan(0);
    for (const w of writes)
      expect([
        `POST ${fx.emu().project}/dashboards/`,
        `PATCH ${fx.emu().project}/dashboards/${made}/`,
      ]).toContain(w);
    expect((await fx.emu().call("GET", `${fx.emu().project}/dashboards/${made}/`)).body.name).toBe(
      "Made here",
    );
    const preview = await run("preview");
    expect(preview.ok, why(preview)).toBe(false);
    expect(errorsOf(preview).join("\n"), why(preview)).toMatch(pair);
    const { taker: _, ...kept } = program;
    program = kept;
  }, 300_000);

  it("`pulumi import <type> a <id>` twice is refused by the engine; the same dashboard imported again as b fails the program's preview and up naming both, with no write", async () => {
    const emu = fx.emu();
    const id = (await emu.call("POST", `${emu.project}/dashboards/`, { body: { name: "Imported twice" } }))
      .body.id;
    const importId = `${emu.projectId}/${id}`;
    const outA = join(fx.work, "a.yaml");
    const first = await imported(["posthog:index:Dashboard", "board-a", importId, "--out", outA]);
    expect(first.code, first.output).toBe(0);
    const again = await imported(["posthog:index:Dashboard", "board-a", importId]);
    expect(again.code).not.toBe(0);
    expect(again.output).toContain("already exists");
    program = { ...program, ...generated(outA) };
    // Another `pulumi import` reads only the object it imports, never the stack's state: it succeeds.
    const outB = join(fx.work, "b.yaml");
    const second = await imported(["posthog:index:Dashboard", "board-b", importId, "--out", outB]);
    expect(second.code, second.output).toBe(0);
    const b = generated(outB)["board-b"] as { properties: Record<string, unknown> };
    // Each keeps its own name for the dashboard: before, every up renamed it back and forth.
    program = { ...program, "board-b": { ...b, properties: { ...b.properties, name: "Renamed by b" } } };
    await writesSince();
    const pair = new RegExp(
      `Dashboard "board-(a|b)" and Dashboard "board-(?!\\1)(a|b)" both manage the Dashboard of id ${id}\\.`,
    );
    const preview = await run("preview");
    expect(preview.ok, why(preview)).toBe(false);
    expect(errorsOf(preview).join("\n"), why(preview)).toMatch(pair);
    const up = await run("up", { withPreview: true });
    expect(up.ok, why(up)).toBe(false);
    expect(errorsOf(up).join("\n"), why(up)).toMatch(pair);
    expect(await writesSince()).toEqual([]);
    expect((await emu.call("GET", `${emu.project}/dashboards/${id}/`)).body.name).toBe("Imported twice");
  }, 300_000);
});

describe("through the dynamic SDK (the fixture program)", () => {
  it("two Dashboards adopting one dashboardId and two Projects adopting one projectId fail the preview naming both, with no write", async () => {
    const emu = fx.emu();
    const id = (await emu.call("POST", `${emu.project}/dashboards/`, { body: { name: "Adopted twice" } }))
      .body.id;
    const s = fx.stack("adopt-twice");
    await writesSince();
    // One preview per pair: the engine stops a preview at its first failed check.
    const dashboards = await s.run("preview", [
      ["Dashboard", "dash-1", { name: "One", dashboardId: id }],
      ["Dashboard", "dash-2", { name: "Two", dashboardId: String(id) }],
    ]);
    expect(dashboards.ok, why(dashboards)).toBe(false);
    expect(errorsOf(dashboards).join("\n"), why(dashboards)).toMatch(
      new RegExp(
        `Dashboard "dash-(1|2)" and Dashboard "dash-(?!\\1)(1|2)" both manage the Dashboard of id ${id}\\.`,
      ),
    );
    const projects = await s.run("preview", [
      ["Project", "proj-1", { name: "One", projectId: emu.projectId }],
      ["Project", "proj-2", { name: "Two", projectId: String(emu.projectId) }],
    ]);
    expect(projects.ok, why(projects)).toBe(false);
    expect(errorsOf(projects).join("\n"), why(projects)).toMatch(
      new RegExp(
        `Project "proj-(1|2)" and Project "proj-(?!\\1)(1|2)" both manage the Project of id ${emu.projectId}\\.`,
      ),
    );
    expect(await writesSince()).toEqual([]);
  }, 300_000);

  it("destroy of an Invite whose DELETE answers 404 while it is pending fails naming it, keeps it in the state and in PostHog (one DELETE, one list read); the next destroy revokes it", async () => {
    const emu = fx.emu();
    const s = fx.stack("invite-404");
    const program: [string, string, Record<string, unknown>][] = [
      ["Invite", "kept", { targetEmail: "kept@example.com" }],
    ];
    const up = await s.run("up", program);
    expect(up.ok, why(up)).toBe(true);
    const state = () =>
      (
        savedState({ projectDir: fixtureDir, stack: s.name, stateDir: s.stateDir }).deployment.resources ?? []
      ).filter((r) => String(r.type).endsWith("posthog:Invite"));
    const invite = String(state()[0]?.id);
    const path = `${emu.org}/invites/${invite}/`;
    await emu.control("POST", "/faults", { method: "DELETE", path: `^${path}$`, status: 404, times: 1 });
    await requestsSince(emu);
    const destroyed = await s.run("destroy", program);
    expect(destroyed.ok, why(destroyed)).toBe(false);
    expect(errorsOf(destroyed).join("\n"), why(destroyed)).toContain(
      `Invite ${invite} still exists: PostHog answered 404 to DELETE ${path}, but a read right after finds the object`,
    );
    const sent = await requestsSince(emu);
    expect(sent.filter((r) => r.includes("/invites/"))).toEqual([
      `DELETE ${path}`,
      `GET ${emu.org}/invites/`,
    ]);
    expect(state().map((r) => r.id)).toEqual([invite]);
    const pending = async () =>
      ((await emu.call("GET", `${emu.org}/invites/`)).body.results as { id: string }[]).some(
        (i) => i.id === invite,
      );
    expect(await pending()).toBe(true);

    const again = await s.run("destroy", program);
    expect(again.ok, why(again)).toBe(true);
    expect(state()).toEqual([]);
    expect(await pending()).toBe(false);
  }, 300_000);

  it("a malformed POSTHOG_LOST_CREATE_WINDOW fails a preview that plans a create, naming it, with no request", async () => {
    const s = fx.stack("bad-window");
    await requestsSince(fx.emu());
    const preview = await s.run("preview", [["Dashboard", "board", { name: "Board" }]], {
      env: { ...s.env(), POSTHOG_LOST_CREATE_WINDOW: "10 minutes" },
    });
    expect(preview.ok, why(preview)).toBe(false);
    expect(errorsOf(preview).join("\n"), why(preview)).toContain(
      'Invalid POSTHOG_LOST_CREATE_WINDOW "10 minutes": expected whole seconds',
    );
    expect(await requestsSince(fx.emu())).toEqual([]);
  }, 300_000);
});
