/**
 * When the provider reads its settings (the compiled provider, called in-process; the emulator over HTTP):
 * once per `configure()`, on the first operation after it, so every later operation reuses that client, and
 * a new `configure()` (a new stack config) takes effect at the next operation. Without `configure()`, the
 * environment is read on the first operation.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Provider } from "../../provider/adapters/dynamic";
import { failure, repoRoot, startTestEmulator, type TestEmulator } from "./harness";

const nativeRequire = createRequire(__filename);
const { Project } = nativeRequire(join(repoRoot, "dist", "provider", "index.js")) as { Project: Provider };

let emu: TestEmulator;
beforeAll(async () => {
  emu = await startTestEmulator();
});
afterAll(async () => {
  delete process.env.POSTHOG_API_KEY;
  delete process.env.POSTHOG_HOST;
  await emu?.close();
});

const configure = (values: Record<string, string>) =>
  Project.configure?.({ config: { get: (k: string) => values[k], require: (k: string) => values[k] ?? "" } });

describe("configure()", () => {
  it("reads the environment on the first operation when the host never configured the provider", async () => {
    process.env.POSTHOG_API_KEY = emu.apiKey;
    process.env.POSTHOG_HOST = emu.url;
    const read = await Project.read(String(emu.projectId), {});
    expect(read.id).toBe(String(emu.projectId));
    // read again after the environment changed: the client built from it is kept (as a native provider does)
    process.env.POSTHOG_API_KEY = "phx_changed_after_first_operation";
    expect((await Project.read(String(emu.projectId), {})).id).toBe(String(emu.projectId));
  });

  it("takes a new stack config at the next operation, and keeps it over the environment", async () => {
    await configure({ "posthog:apiKey": "phx_wrong_key_from_stack_config", "posthog:host": emu.url });
    const message = await failure(Project.read(String(emu.projectId), {}));
    expect(message).toMatch(/401|authenticat/i);
    expect(message).not.toContain("phx_wrong_key_from_stack_config");

    await configure({ "posthog:apiKey": emu.apiKey, "posthog:host": emu.url });
    expect((await Project.read(String(emu.projectId), {})).id).toBe(String(emu.projectId));
  });

  it("keeps nothing from a configuration without a key: each operation says so until one is configured", async () => {
    delete process.env.POSTHOG_API_KEY;
    await configure({ "posthog:host": emu.url });
    for (let i = 0; i < 2; i++) {
      expect(await failure(Project.read(String(emu.projectId), {}))).toMatch(/POSTHOG_API_KEY|apiKey/);
    }
    await configure({ "posthog:apiKey": emu.apiKey, "posthog:host": emu.url });
    expect((await Project.read(String(emu.projectId), {})).id).toBe(String(emu.projectId));
  });
});
