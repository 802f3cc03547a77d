/**
 * The provider host ends once the engine is gone (provider/engine-watch.ts): the CLI starts plugins in process
 * groups of their own, so a SIGKILLed `pulumi` left Pulumi's dynamic-provider host running forever (measured on
 * the real CLI, issue 26). Through the real host: it stays while the engine's address accepts connections, exits
 * within seconds once it does not, and an operation under way finishes first (its create made and answered).
 */
import { describe, expect, it } from "vitest";
import { ENGINE_WATCH_INTERVAL_MS } from "../../provider/engine-watch";
import { serializeProvider, startConfiguredHost, startTestEmulator, urnOf } from "./harness";

/** Resolves true when `p` settles within `ms`, false otherwise. */
const within = (p: Promise<unknown>, ms: number) =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

describe("the provider host and the engine", () => {
  it("stays while the engine is there, and exits once it is gone", async () => {
    const emu = await startTestEmulator();
    const host = await startConfiguredHost(emu);
    try {
      // The host loads our providers (and so the watch) with the first call naming one, as in a run.
      const provider = await serializeProvider("Dashboard");
      await host.check(urnOf("Dashboard", "loaded"), {}, { name: "Loaded", __provider: provider });
      expect(await within(host.exited(), 3 * ENGINE_WATCH_INTERVAL_MS)).toBe(false);
      await host.engineGone();
      expect(await within(host.exited(), 5 * ENGINE_WATCH_INTERVAL_MS)).toBe(true);
    } finally {
      await host.close();
      await emu.close();
    }
  }, 60_000);

  it("a create under way when the engine goes finishes first: the object is made and answered", async () => {
    const emu = await startTestEmulator();
    const host = await startConfiguredHost(emu);
    try {
      const provider = await serializeProvider("Dashboard");
      const urn = urnOf("Dashboard", "slow");
      const checked = await host.check(urn, {}, { name: "Made while the engine went", __provider: provider });
      // The emulator holds the POST for 3 watch intervals: the engine goes meanwhile.
      await emu.control("POST", "/faults", {
        method: "POST",
        path: "/dashboards/$",
        delayMs: 3 * ENGINE_WATCH_INTERVAL_MS,
        times: 1,
      });
      const created = host.create(urn, checked.inputs);
      await new Promise((r) => setTimeout(r, 200));
      await host.engineGone();
      const answer = await created;
      expect(answer.id).toMatch(/^\d+$/);
      const made = (await emu.api("GET", `/api/projects/${emu.projectId}/dashboards/${answer.id}/`)).body;
      expect(made).toMatchObject({ name: "Made while the engine went" });
      expect(await within(host.exited(), 5 * ENGINE_WATCH_INTERVAL_MS)).toBe(true);
    } finally {
      await host.close();
      await emu.close();
    }
  }, 60_000);

  it("a create queued behind one of the same name is not sent once the engine is gone (issue 27)", async () => {
    const emu = await startTestEmulator();
    const host = await startConfiguredHost(emu);
    try {
      const provider = await serializeProvider("Dashboard");
      const inputs = (name: string) => ({
        name: "Queued twin",
        __provider: provider,
        __resource: { name, stack: "engine-watch/dev" },
      });
      const a = await host.check(urnOf("Dashboard", "twin-a"), {}, inputs("twin-a"));
      const b = await host.check(urnOf("Dashboard", "twin-b"), {}, inputs("twin-b"));
      // The emulator holds the first POST: the second create of that name waits its turn behind it.
      const hold = (await emu.control("POST", "/holds", { method: "POST", path: "/dashboards/$" })) as {
        id: string;
      };
      const first = host.create(urnOf("Dashboard", "twin-a"), a.inputs);
      const second = host.create(urnOf("Dashboard", "twin-b"), b.inputs).then(
        () => "created",
        (e: unknown) => String((e as { details?: string }).details ?? e),
      );
      for (let i = 0; i < 400; i++) {
        const h = (await emu.control("GET", `/holds/${hold.id}`)) as { held: unknown[] };
        if (h.held.length > 0) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      await host.engineGone();
      await emu.control("DELETE", "/holds"); // the first POST goes on: it was under way, it finishes
      expect((await first).id).toMatch(/^\d+$/);
      expect(await second).toMatch(/not created: the Pulumi engine that asked for it is gone/);
      const posts = (await emu.requests()).filter(
        (r) => r.method === "POST" && /\/dashboards\/$/.test(r.path),
      );
      expect(posts).toHaveLength(1);
    } finally {
      await host.close();
      await emu.close();
    }
  }, 60_000);
});
