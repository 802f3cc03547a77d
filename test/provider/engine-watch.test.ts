/**
 * The provider host ends once the engine is gone (provider/framework/engine-watch.ts): the CLI starts plugins in process
 * groups of their own, so a SIGKILLed `pulumi` left Pulumi's dynamic-provider host running forever (measured on
 * the real CLI, issue 26). Through the real host: it stays while the engine's address accepts connections, exits
 * within seconds once it does not, and an operation under way finishes first (its create made and answered).
 * The provider plugin (`pulumi-resource-posthog`) is watched the same way (issue 29).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as provrpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { describe, expect, it } from "vitest";
import { ENGINE_WATCH_INTERVAL_MS, engineArgument } from "../../provider/framework/engine-watch";
import { PARENT_WATCH } from "../../tools/provider-host";
import { repoRoot, serializeProvider, startConfiguredHost, startTestEmulator, urnOf } from "./harness";

/** Resolves true when `p` settles within `ms`, false otherwise. */
const within = (p: Promise<unknown>, ms: number) =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

// The cases wait on the watch's 2-second interval, not on the CPU: they run concurrently, each with its own
// emulator and host (or plugin), so the file holds a test worker for the longest case, not for their sum.
describe.concurrent("the provider host and the engine", () => {
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

  it("a create under way when the engine goes finishes first (made and answered, the host staying meanwhile); one queued behind it of the same name is not sent (issue 27)", async () => {
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
      // The first POST stays held for 3 watch intervals: the engine is gone meanwhile, the host stays for it.
      expect(await within(host.exited(), 3 * ENGINE_WATCH_INTERVAL_MS)).toBe(false);
      await emu.control("DELETE", "/holds"); // the first POST goes on: it was under way, it finishes
      const answer = await first;
      expect(answer.id).toMatch(/^\d+$/);
      const made = (await emu.api("GET", `/api/projects/${emu.projectId}/dashboards/${answer.id}/`)).body;
      expect(made).toMatchObject({ name: "Queued twin" });
      expect(await second).toMatch(/not created: the Pulumi engine that asked for it is gone/);
      const posts = (await emu.requests()).filter(
        (r) => r.method === "POST" && /\/dashboards\/$/.test(r.path),
      );
      expect(posts).toHaveLength(1);
      expect(await within(host.exited(), 5 * ENGINE_WATCH_INTERVAL_MS)).toBe(true);
    } finally {
      await host.close();
      await emu.close();
    }
  }, 60_000);

  it("the provider plugin (dist/provider/adapters/plugin/main.js) exits too once its engine is gone, flags before the address", async () => {
    const main = join(repoRoot, "dist", "provider", "adapters", "plugin", "main.js");
    if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
    // The engine's address, as the engine gives it, after the logging flags it adds at -v (plugin.go,
    // buildPluginArguments): a listener of this test, closed as a dead engine's is.
    const engine = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => engine.listen(0, "127.0.0.1", resolve));
    const address = `127.0.0.1:${(engine.address() as AddressInfo).port}`;
    const args = ["--logtostderr", "-v=3", address];
    expect(engineArgument(args)).toBe(address);
    expect(engineArgument(["--tracing", "127.0.0.1:1", address])).toBe(address);
    const child = spawn(process.execPath, ["--import", PARENT_WATCH, main, ...args], {
      cwd: repoRoot,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    let client: InstanceType<typeof provrpc.ResourceProviderClient> | undefined;
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const line = out.split("\n")[0];
          if (out.includes("\n")) resolve(Number(line));
        });
        child.once("exit", (code) =>
          reject(new Error(`the plugin exited (${code}) before printing its port`)),
        );
      });
      // The watch starts with the provider's configure, as in a run (the engine configures the provider first).
      client = new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      const req = new provproto.ConfigureRequest();
      req.setArgs(Struct.fromJavaScript({ host: "http://127.0.0.1:9", apiKey: "phx_engine_watch" }));
      await new Promise<void>((resolve, reject) =>
        client?.configure(req, (err) => (err ? reject(err) : resolve())),
      );
      expect(await within(exited, 3 * ENGINE_WATCH_INTERVAL_MS)).toBe(false);
      await new Promise<void>((resolve) => engine.close(() => resolve()));
      expect(await within(exited, 5 * ENGINE_WATCH_INTERVAL_MS)).toBe(true);
    } finally {
      client?.close();
      child.kill();
      engine.close();
    }
  }, 60_000);
});
