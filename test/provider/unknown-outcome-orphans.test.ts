/**
 * Issue 49, items 6 and 7, through real provider hosts against the emulator (its holds with `cutAfterMs`: the client's
 * connection is cut, the request stays held and is applied when released): a look-alike a person makes during the
 * lost-create wait is never taken; an object a create with an unknown outcome made and that no resource holds is
 * named by the stack's next operations (applied after the resource was made again; applied and never adopted); a
 * fresh runner adopts the object its resource's earlier create left, by the marker's tags. The cases wait on the
 * provider's timers (POSTHOG_LOST_CREATE_WAIT), so they run concurrently, each with an emulator, a journal and hosts
 * of its own.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import type { ProviderHost } from "../../tools/provider-host";
import { failure, serializeProvider, startConfiguredHost, startTestEmulator, urnOf } from "./harness";

/** Check then Create of resource `name` of `type` in `host`, as the engine of a stack `posthog-test/dev` calls them. */
async function createIn(host: ProviderHost, type: string, name: string, inputs: Record<string, unknown>) {
  const urn = urnOf(type, name);
  const provider = await serializeProvider(type);
  const checked = await host.check(
    urn,
    {},
    { ...inputs, __provider: provider, __resource: { name, stack: "posthog-test/dev" } },
  );
  expect(checked.failures).toEqual([]);
  return host.create(urn, checked.inputs);
}

/**
 * A case's world, removed when it ends (`onTestFinished` of the case's own context: the cases run concurrently): an emulator, a journal directory, and `run` starting one run's provider host
 * (configured for the emulator, journaling there, waiting 1 s for a lost create unless `env` says otherwise).
 */
async function useCase(onTestFinished: TestContext["onTestFinished"]) {
  const emu = await startTestEmulator();
  const journal = mkdtempSync(join(tmpdir(), "posthog-orphans-"));
  onTestFinished(async () => {
    await emu.close();
    rmSync(journal, { recursive: true, force: true });
  });
  const dashboardsPath = () => `/api/projects/${emu.projectId}/dashboards/`;
  const listed = async (path: string) =>
    (
      (await emu.api("GET", `${path}?limit=500`)).body as {
        results: { id: number; name: string; deleted?: boolean }[];
      }
    ).results.filter((x) => x.deleted !== true);
  return {
    emu,
    journal,
    dashboardsPath,
    run: (env: Record<string, string> = {}, onOutput?: (text: string) => void): Promise<ProviderHost> =>
      startConfiguredHost(emu, onOutput, {
        POSTHOG_CREATE_JOURNAL_DIR: journal,
        POSTHOG_LOST_CREATE_WAIT: "1",
        ...env,
      }),
    /** Ids of the live objects named `name` under `path`. */
    named: async (path: string, name: string) =>
      (await listed(path)).filter((x) => x.name === name).map((x) => x.id),
    /** Ids of the live objects named `name` under `path`, or provisionally so (`name` and a create's marker). */
    namedOrMarked: async (path: string, name: string) =>
      (await listed(path))
        .filter((x) => x.name === name || x.name.startsWith(`${name} [pulumi create `))
        .map((x) => x.id),
    posts: async (path: RegExp) =>
      (await emu.requests()).filter((r) => r.method === "POST" && path.test(r.path)).length,
    /** Holds the next POST to `path`, cutting the client's connection after 300 ms; the hold's id. */
    holdAndCut: async (path: string): Promise<string> =>
      (
        (await emu.control("POST", "/holds", { method: "POST", path, times: 1, cutAfterMs: 300 })) as {
          id: string;
        }
      ).id,
  };
}

describe.concurrent("objects that creates with an unknown outcome made", () => {
  // Issue 49, item 6: a person made a dashboard of the same name during the wait. It used to be adopted as the one the
  // create made (one candidate of that name made since the create started), so destroy deleted the person's dashboard
  // and left the stack's, applied later, live and in no state.
  it("Dashboard: a look-alike a person makes during the wait is never taken; the run fails naming it and dashboardId, and the next run adopts the dashboard that carries the create's marker", async ({
    expect,
    onTestFinished,
  }) => {
    const { emu, run, named, namedOrMarked, holdAndCut, dashboardsPath } = await useCase(onTestFinished);
    const hold = await holdAndCut("/dashboards/$");
    const lists = async () =>
      (await emu.requests()).filter((r) => r.method === "GET" && r.path === dashboardsPath()).length;
    const host = await run({ POSTHOG_LOST_CREATE_WAIT: "3" });
    let person = 0;
    try {
      const pending = failure(createIn(host, "Dashboard", "mine", { name: "Mine board" }));
      await expect
        .poll(async () => ((await emu.control("GET", `/holds/${hold}`)) as { held: unknown[] }).held.length, {
          timeout: 30_000,
        })
        .toBe(1);
      // Once the create has read the list after its POST was cut, a person makes a dashboard of that name by hand.
      const listed = await lists();
      await expect.poll(lists, { timeout: 10_000, interval: 25 }).toBeGreaterThan(listed);
      person = ((await emu.api("POST", dashboardsPath(), { name: "Mine board" })).body as { id: number }).id;
      const message = await pending;
      expect(message).toContain('Dashboard "Mine board": the outcome of its create is unknown');
      expect(message).toContain(`One Dashboard named "Mine board" that this create did not make`);
      expect(message).toContain(`${person} (created `);
      expect(message).toContain("adopt it explicitly with the input dashboardId");
    } finally {
      await host.close();
    }
    expect(await named(dashboardsPath(), "Mine board")).toEqual([person]);
    await emu.control("POST", `/holds/${hold}/release`, {});
    await expect
      .poll(() => namedOrMarked(dashboardsPath(), "Mine board"), { timeout: 10_000 })
      .toHaveLength(2);
    const next = await run();
    try {
      const mine = await createIn(next, "Dashboard", "mine", { name: "Mine board" });
      expect(mine.id).not.toBe(String(person));
      expect(mine.outs).toMatchObject({ name: "Mine board", adopted: false });
      // destroy: the stack's dashboard is soft-deleted, the person's stays
      await next.delete(mine.id, urnOf("Dashboard", "mine"), mine.outs);
    } finally {
      await next.close();
    }
    expect(await named(dashboardsPath(), "Mine board")).toEqual([person]);
  }, 120_000);

  // Issue 49, item 7: a create held past POSTHOG_LOST_CREATE_WINDOW, applied after the next run made the object again,
  // used to leave 2 on the server and 1 in the state, and nothing said so.
  it("Dashboard: applied after the next run made it again (past the window), the stack's next diff, read and delete name the orphan, the input that adopts it and the command that deletes it; once deleted, nothing is said", async ({
    expect,
    onTestFinished,
  }) => {
    const { emu, journal, run, namedOrMarked, holdAndCut, dashboardsPath } = await useCase(onTestFinished);
    const hold = await holdAndCut("/dashboards/$");
    const first = await run();
    try {
      expect(await failure(createIn(first, "Dashboard", "again", { name: "Again board" }))).toMatch(
        /outcome of its create is unknown/,
      );
    } finally {
      await first.close();
    }
    // The next run decides the create did not apply (a window of 0) and makes the dashboard again.
    const second = await run({ POSTHOG_LOST_CREATE_WINDOW: "0" });
    let made: Awaited<ReturnType<typeof createIn>>;
    try {
      made = await createIn(second, "Dashboard", "again", { name: "Again board" });
    } finally {
      await second.close();
    }
    expect(readdirSync(journal).filter((f) => f.startsWith("lost-"))).toHaveLength(1);
    await emu.control("POST", `/holds/${hold}/release`, {});
    await expect
      .poll(() => namedOrMarked(dashboardsPath(), "Again board"), { timeout: 10_000 })
      .toHaveLength(2);
    const orphan = (await namedOrMarked(dashboardsPath(), "Again board")).find(
      (id) => String(id) !== made.id,
    );
    const urn = urnOf("Dashboard", "again");
    const provider = await serializeProvider("Dashboard");
    const news = { ...made.outs, __provider: provider };
    // up and preview (diff), refresh and preview --refresh (read), destroy (delete), each a run of its own: each fails
    // naming it, once (the run's other operations go on).
    const remove = (h: ProviderHost) => h.delete(made.id, urn, made.outs);
    for (const operation of [
      (h: ProviderHost) => h.diff(made.id, urn, made.outs, news),
      (h: ProviderHost) => h.read(made.id, urn, made.outs, made.outs),
      remove,
    ]) {
      const host = await run();
      try {
        const message = await failure(operation(host));
        expect(message).toContain(`Dashboard ${orphan} "Again board [pulumi create `);
        expect(message).toContain('made by the create of Dashboard "again"');
        expect(message).toContain("PostHog applied it after the resource was made again");
        expect(message).toContain(`declare a Dashboard with dashboardId: ${orphan}`);
        expect(message).toContain(`/api/projects/${emu.projectId}/dashboards/${orphan}/`);
        if (operation !== remove) await operation(host); // said once per run (a destroy's would now delete)
      } finally {
        await host.close();
      }
    }
    expect(await namedOrMarked(dashboardsPath(), "Again board")).toHaveLength(2);
    await emu.api("PATCH", `${dashboardsPath()}${orphan}/`, { deleted: true });
    const fourth = await run();
    try {
      await fourth.diff(made.id, urn, made.outs, news);
      await fourth.read(made.id, urn, made.outs, made.outs);
    } finally {
      await fourth.close();
    }
  }, 120_000);

  it("Dashboard: applied after its run, the create's resource not made again: destroy's every delete fails naming it (no later create adopted it), and nothing is deleted; refresh warns within the create's window, and fails after it", async ({
    expect,
    onTestFinished,
  }) => {
    const { emu, run, namedOrMarked, holdAndCut, dashboardsPath } = await useCase(onTestFinished);
    const before = await run();
    const kept = await createIn(before, "Dashboard", "kept", { name: "Kept board" });
    const other = await createIn(before, "Dashboard", "other", { name: "Other board" }).finally(() =>
      before.close(),
    );
    const hold = await holdAndCut("/dashboards/$");
    const first = await run();
    try {
      expect(await failure(createIn(first, "Dashboard", "gone", { name: "Gone board" }))).toMatch(
        /outcome of its create is unknown/,
      );
    } finally {
      await first.close();
    }
    await emu.control("POST", `/holds/${hold}/release`, {});
    await expect
      .poll(() => namedOrMarked(dashboardsPath(), "Gone board"), { timeout: 10_000 })
      .toHaveLength(1);
    const [orphan] = await namedOrMarked(dashboardsPath(), "Gone board");
    const urn = urnOf("Dashboard", "kept");
    await emu.control("DELETE", "/requests");
    const destroy = await run();
    try {
      // The engine deletes both at once: each delete fails with it, before any write.
      const [first, second] = await Promise.all([
        failure(destroy.delete(kept.id, urn, kept.outs)),
        failure(destroy.delete(other.id, urnOf("Dashboard", "other"), other.outs)),
      ]);
      for (const message of [first, second]) {
        expect(message).toContain(`Dashboard ${orphan} "Gone board [pulumi create `);
        expect(message).toContain("no later create of that resource has adopted it");
        expect(message).toContain('if "gone" is still in the program, run pulumi up');
      }
    } finally {
      await destroy.close();
    }
    const writes = (await emu.requests()).filter((r) => r.method !== "GET");
    expect(writes).toEqual([]); // neither dashboard was deleted: destroy stopped before any write
    // A refresh within the create's POSTHOG_LOST_CREATE_WINDOW warns (the resource's next up would adopt it), after
    // it fails.
    let output = "";
    const early = await run({}, (text) => {
      output += text;
    });
    try {
      expect((await early.read(kept.id, urn, kept.outs, kept.outs)).id).toBe(kept.id);
    } finally {
      await early.close();
    }
    expect(output).toContain(`warning: Dashboard ${orphan} "Gone board [pulumi create `);
    expect(output).toContain('The next pulumi up adopts it if "gone" is still in the program');
    const late = await run({ POSTHOG_LOST_CREATE_WINDOW: "0" });
    try {
      expect(await failure(late.read(kept.id, urn, kept.outs, kept.outs))).toContain(
        `Dashboard ${orphan} "Gone board [pulumi create `,
      );
    } finally {
      await late.close();
    }
  }, 120_000);

  it("Dashboard: without the journal (a fresh runner), the next create adopts the dashboard that carries its resource's marker, from the list read it makes anyway: no second POST", async ({
    expect,
    onTestFinished,
  }) => {
    const { emu, run, named, namedOrMarked, posts, holdAndCut, dashboardsPath } =
      await useCase(onTestFinished);
    const hold = await holdAndCut("/dashboards/$");
    const first = await run();
    try {
      expect(await failure(createIn(first, "Dashboard", "fresh", { name: "Fresh board" }))).toMatch(
        /outcome of its create is unknown/,
      );
    } finally {
      await first.close();
    }
    await emu.control("POST", `/holds/${hold}/release`, {});
    await expect
      .poll(() => namedOrMarked(dashboardsPath(), "Fresh board"), { timeout: 10_000 })
      .toHaveLength(1);
    const [made] = await namedOrMarked(dashboardsPath(), "Fresh board");
    const before = await posts(/\/dashboards\/$/);
    const fresh = mkdtempSync(join(tmpdir(), "posthog-fresh-"));
    const runner = await run({ POSTHOG_CREATE_JOURNAL_DIR: fresh });
    try {
      const d = await createIn(runner, "Dashboard", "fresh", { name: "Fresh board" });
      expect(d.id).toBe(String(made));
      // another resource of the same name is not this one: it makes its own
      const other = await createIn(runner, "Dashboard", "fresh-twin", { name: "Fresh board" });
      expect(other.id).not.toBe(String(made));
    } finally {
      await runner.close();
      rmSync(fresh, { recursive: true, force: true });
    }
    expect(await posts(/\/dashboards\/$/)).toBe(before + 1);
    expect((await named(dashboardsPath(), "Fresh board")).length).toBe(2);
  }, 120_000);
});
