// Shared by the client tests: an emulator over real HTTP plus its control plane.
import { request } from "undici";
import { startEmulator } from "../../emulator";
import { type ClientOptions, createClient, type PostHogClient } from "../../provider/client";

export type Emulator = Awaited<ReturnType<typeof startEmulator>>;

/** One entry of GET /_emulator/requests. */
export interface LoggedRequest {
  method: string;
  path: string;
  query: string | Record<string, unknown>;
  status: number;
}

/** Calls the emulator's control plane (Bearer = the seed key). Returns the parsed JSON body (or undefined). */
export async function control(emu: Emulator, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await request(`${emu.url}${path}`, {
    method: method as "GET",
    headers: {
      authorization: `Bearer ${emu.apiKey}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path} → ${res.statusCode} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** The emulator's API request log (oldest first). */
export const requestLog = async (emu: Emulator) =>
  (await control(emu, "GET", "/_emulator/requests")) as LoggedRequest[];
export const clearLog = (emu: Emulator) => control(emu, "DELETE", "/_emulator/requests");

/** Injects a fault (see the emulator's POST /_emulator/faults). */
export const fault = (emu: Emulator, spec: Record<string, unknown>) =>
  control(emu, "POST", "/_emulator/faults", spec);
export const clearFaults = (emu: Emulator) => control(emu, "DELETE", "/_emulator/faults");

/** A fresh emulator with its own rate limit off unless asked. */
export function startTestEmulator(options: Parameters<typeof startEmulator>[0] = { rateLimit: false }) {
  return startEmulator(options);
}

/** A client for the emulator: tiny retry waits, client-side rate limit off unless overridden. */
export function clientFor(emu: Emulator, options: ClientOptions = {}): PostHogClient {
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
