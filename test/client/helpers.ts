// Shared by the client tests: the emulator (test/support) over real HTTP, its control plane, and a client for it.
import {
  type ClientOptions,
  type ClientShared,
  createClient,
  type PostHogClient,
} from "../../provider/client";
import { startTestEmulator, type TestEmulator } from "../support/emulator";

export type Emulator = TestEmulator;
export { startTestEmulator };

/** Calls the control plane (`path` starts with /_emulator); throws on a non-2xx answer; returns the JSON body. */
export async function control(emu: Emulator, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await emu.control(method, path.replace(/^\/_emulator/, ""), body);
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${res.text}`);
  return res.body;
}

export const clearLog = (emu: Emulator) => control(emu, "DELETE", "/_emulator/requests");

/** Injects a fault (see the emulator's POST /_emulator/faults). */
export const fault = (emu: Emulator, spec: Record<string, unknown>) =>
  control(emu, "POST", "/_emulator/faults", spec);
export const clearFaults = (emu: Emulator) => control(emu, "DELETE", "/_emulator/faults");

/**
 * A client for the emulator: tiny retry waits, client-side rate limit off unless overridden; `shared` makes it one
 * of a run's clients (without it, it shares nothing with any other).
 */
export function clientFor(
  emu: Emulator,
  options: ClientOptions & { shared?: ClientShared | undefined } = {},
): PostHogClient {
  return createClient({
    apiKey: emu.apiKey,
    host: emu.url,
    organizationId: emu.organizationId,
    projectId: emu.projectId,
    rateLimit: false,
    retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5, maxTotalWaitMs: 10_000 },
    ...options,
  });
}
