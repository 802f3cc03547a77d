/**
 * Test harness for the provider tests: a fresh emulator, the REAL dynamic-provider host over gRPC, and the
 * providers serialized from the compiled `dist/` exactly as `pulumi.dynamic.Resource` does it
 * (`serializeFunction(() => provider, {allowSecrets: true})`). Nothing here mocks what we own.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { type EmulatorOptions, emulatorEnv, startEmulator } from "../../emulator";
import type { RequestLogEntry } from "../../emulator/runtime";
import { type ProviderHost, startProviderHost } from "../../tools/provider-host";
import { requestLogOf } from "../support/emulator";

export const repoRoot = resolve(__dirname, "..", "..");
const nativeRequire = createRequire(__filename);

/** The closure serializer of @pulumi/pulumi, loaded natively (vite-transformed code does not serialize). */
const serializer = nativeRequire("@pulumi/pulumi/runtime/closure/serializeClosure") as {
  serializeFunction(
    f: () => unknown,
    opts: { allowSecrets: boolean },
  ): Promise<{ text: string; containsSecrets: boolean }>;
};

type Shim = typeof import("../../sdk/provider-shim");

/** The compiled shim module of `dist/` (or of another installed copy, given its sdk directory). */
export function loadShim(sdkDir = join(repoRoot, "dist", "sdk")): Shim {
  const file = join(sdkDir, "provider-shim.js");
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first`);
  return nativeRequire(file) as Shim;
}

/** Serializes the provider of resource `name` as pulumi.dynamic.Resource does; returns the `__provider` text. */
export async function serializeProvider(name: string, shim: Shim = loadShim()): Promise<string> {
  const provider = shim.providerShim(name);
  const sf = await serializer.serializeFunction(() => provider, { allowSecrets: true });
  return sf.text;
}

/** A running emulator plus a tiny control-plane client. */
export interface TestEmulator {
  url: string;
  apiKey: string;
  organizationId: string;
  projectId: number;
  close(): Promise<void>;
  /** Calls the control plane (`/_emulator/...`) with the seed key; returns the parsed JSON (or undefined). */
  control(method: string, path: string, body?: unknown): Promise<unknown>;
  /**
   * The API requests since the log was last cleared, oldest first (`GET /_emulator/requests`), parsed with the
   * emulator's schema; throws unless the answer is 200.
   */
  requests(): Promise<RequestLogEntry[]>;
  /** Calls the public API with the seed key (to make changes "outside Pulumi"). */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
}

/** Starts a fresh emulator (rate limit off) with `options` (e.g. `{samlOnDomain: false}`). */
export async function startTestEmulator(options: EmulatorOptions = {}): Promise<TestEmulator> {
  const emu = await startEmulator({ rateLimit: false, ...options });
  const send = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${emu.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${emu.apiKey}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  };
  return {
    ...emu,
    async control(method, path, body) {
      const r = await send(method, `/_emulator${path}`, body);
      if (r.status >= 400)
        throw new Error(`control ${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async requests() {
      const r = await send("GET", "/_emulator/requests");
      return requestLogOf(r.status, r.body);
    },
    api: send,
  };
}

/** The type token of a resource, as the SDK registers it. */
export const typeOf = (name: string) => `pulumi-nodejs:dynamic/posthog:${name}`;
export const urnOf = (name: string, resourceName: string) =>
  `urn:pulumi:test::posthog-test::${typeOf(name)}::${resourceName}`;

/**
 * A started host configured for `emu` (stack config, API key sent as a secret the way the engine does), with `env`
 * over this process's environment (e.g. `POSTHOG_CREATE_JOURNAL_DIR`: one host per run of a test's "stack").
 */
export async function startConfiguredHost(
  emu: TestEmulator,
  onOutput?: (text: string) => void,
  env?: Record<string, string>,
): Promise<ProviderHost> {
  const host = await startProviderHost({
    cwd: repoRoot,
    project: "posthog-test",
    deadlineMs: 30_000,
    ...(onOutput ? { onOutput } : {}),
    ...(env ? { env } : {}),
  });
  await host.configure(stackConfigOf(emu), ["posthog:apiKey"]);
  return host;
}

/**
 * The stack config that points a provider at `emu`: `posthog:apiKey`, `posthog:host`, `posthog:organizationId` and
 * `posthog:projectId` (the config twin of the emulator's `emulatorEnv`); the key is to be sent as a secret.
 */
export function stackConfigOf(
  emu: Pick<TestEmulator, "url" | "apiKey" | "organizationId" | "projectId">,
): Record<string, string> {
  return {
    "posthog:apiKey": emu.apiKey,
    "posthog:host": emu.url,
    "posthog:organizationId": emu.organizationId,
    "posthog:projectId": String(emu.projectId),
  };
}

/**
 * A started, not yet configured host (a new process, as each CLI run starts one) with the connection to `emu` in
 * POSTHOG_* variables, as the fixture program's stacks get it, and `env` over them.
 */
export function startEnvHost(emu: TestEmulator, env: Record<string, string> = {}): Promise<ProviderHost> {
  return startProviderHost({
    cwd: repoRoot,
    project: "posthog-test",
    deadlineMs: 30_000,
    env: {
      ...emulatorEnv(emu),
      ...env,
    },
  });
}

/**
 * Registers `beforeAll`/`afterAll` hooks of the calling test file (or `describe`): a fresh emulator (with
 * `options`) and a provider host configured for it ({@link startConfiguredHost}), handed to `use` once started,
 * both closed afterwards.
 */
export function useProviderHost(
  use: (emu: TestEmulator, host: ProviderHost) => void,
  options: EmulatorOptions = {},
): void {
  let emu: TestEmulator | undefined;
  let host: ProviderHost | undefined;
  beforeAll(async () => {
    emu = await startTestEmulator(options);
    host = await startConfiguredHost(emu);
    use(emu, host);
  });
  afterAll(async () => {
    await host?.close();
    await emu?.close();
  });
}

/** A resource under test: what the engine keeps in state. */
export interface Managed {
  name: string;
  urn: string;
  id: string;
  provider: string;
  inputs: Record<string, unknown>;
  outs: Record<string, unknown>;
}

/**
 * A resource as the state holds it after an earlier `up` (for a server that cannot create it, or state written by
 * an earlier version): its `id`, `inputs` and `outs`, with this checkout's `__provider`.
 */
export async function inState(
  name: string,
  resourceName: string,
  id: string,
  inputs: Record<string, unknown>,
  outs: Record<string, unknown>,
): Promise<Managed> {
  const provider = await serializeProvider(name);
  return {
    name,
    urn: urnOf(name, resourceName),
    id,
    provider,
    inputs: { ...inputs, __provider: provider },
    outs: { ...outs, __provider: provider },
  };
}

/** `up` of a new resource: Check then Create, like the engine. Fails the test on check failures. */
export async function create(
  host: ProviderHost,
  name: string,
  resourceName: string,
  inputs: Record<string, unknown>,
): Promise<Managed> {
  const provider = await serializeProvider(name);
  const urn = urnOf(name, resourceName);
  const checked = await host.check(urn, {}, { ...inputs, __provider: provider });
  expect(checked.failures).toEqual([]);
  const created = await host.create(urn, checked.inputs);
  expect(created.outs.__provider).toBe(provider);
  return { name, urn, id: created.id, provider, inputs: checked.inputs, outs: created.outs };
}

/**
 * `up` of a new resource expected to fail in Create: Check (which must pass; the SDK's `__resourceName` is sent)
 * then Create; the failure's message.
 */
export async function createFails(
  host: ProviderHost,
  type: string,
  name: string,
  inputs: Record<string, unknown>,
): Promise<string> {
  const urn = urnOf(type, name);
  const provider = await serializeProvider(type);
  const checked = await host.check(urn, {}, { ...inputs, __provider: provider, __resourceName: name });
  expect(checked.failures).toEqual([]);
  return failure(host.create(urn, checked.inputs));
}

/**
 * Update of `r` to `inputs` expected to fail, called as the engine calls it after Check (which must pass), with no
 * Diff before it (a Diff that fails is {@link plan}'s): the failure's message.
 */
export async function updateFails(
  host: ProviderHost,
  r: Managed,
  inputs: Record<string, unknown>,
): Promise<string> {
  const checked = await host.check(r.urn, r.inputs, { ...inputs, __provider: r.provider });
  expect(checked.failures).toEqual([]);
  return failure(host.update(r.id, r.urn, r.outs, checked.inputs));
}

/** `preview`: Check then Diff of the stored outputs against new inputs. */
export async function plan(host: ProviderHost, r: Managed, inputs: Record<string, unknown>) {
  const checked = await host.check(r.urn, r.inputs, { ...inputs, __provider: r.provider });
  const diff = await host.diff(r.id, r.urn, r.outs, checked.inputs);
  return { checked, diff };
}

/** `up` of an existing resource: Check, Diff, then Update when it changes in place. Returns the new state. */
export async function update(
  host: ProviderHost,
  r: Managed,
  inputs: Record<string, unknown>,
): Promise<Managed> {
  const { checked, diff } = await plan(host, r, inputs);
  expect(checked.failures).toEqual([]);
  expect(diff.changes).toBe(true);
  expect(diff.replaces).toEqual([]);
  const updated = await host.update(r.id, r.urn, r.outs, checked.inputs);
  return { ...r, inputs: checked.inputs, outs: updated.outs };
}

/** `refresh`: Read with the stored outputs and inputs; the new state (id "" when gone). */
export async function refresh(host: ProviderHost, r: Managed): Promise<Managed> {
  const read = await host.read(r.id, r.urn, r.outs, r.inputs);
  if (read.id !== "") {
    // the refreshed inputs become the state's inputs: they must pass check as they are, but for the drift a
    // resource names in them for the plan's sake (driftShown: `deleted`, `isExpired`), which is no input
    expect(read.inputs).toBeDefined();
    const { deleted: _d, isExpired: _e, ...inputs } = read.inputs ?? {};
    expect((await host.check(r.urn, {}, inputs)).failures).toEqual([]);
  }
  return { ...r, id: read.id, outs: read.props, inputs: read.inputs ?? r.inputs };
}

/** `destroy`: Delete with the stored outputs. */
export async function destroy(host: ProviderHost, r: Managed): Promise<void> {
  await host.delete(r.id, r.urn, r.outs);
}

/** The message of a rejected gRPC call (its `details`). */
export async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return String((e as { details?: string }).details ?? (e as Error).message);
  }
  throw new Error("expected the call to fail");
}
