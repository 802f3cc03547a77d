import { request } from "undici";
import { afterAll, beforeAll } from "vitest";
import { z } from "zod";
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "../../emulator/index";
import type { RequestLogEntry } from "../../emulator/runtime";
import { RequestLogEntrySchema } from "../../emulator/schemas";

/** A response as tests see it: status, headers, raw text and parsed JSON (undefined for an empty body). */
export type TestResponse = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests index freely into JSON bodies
  body: any;
};

/** Options of one request: JSON `body`, or `raw` text sent as is; `key` overrides the seed key (null: none). */
export type RequestOptions = {
  body?: unknown;
  raw?: string;
  key?: string | null;
  headers?: Record<string, string>;
};

/** A running emulator plus small HTTP helpers (real HTTP via undici). */
export type TestEmulator = RunningEmulator & {
  /** Any request to the emulator; `path` is absolute ("/api/...") or a full URL. */
  call(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  /** A control-plane request (`/_emulator/...`) with the seed key. */
  control(method: string, path: string, body?: unknown): Promise<TestResponse>;
  /**
   * The API requests since the log was last cleared, oldest first (`GET /_emulator/requests`), parsed with the
   * emulator's schema; throws unless the answer is 200.
   */
  requests(): Promise<RequestLogEntry[]>;
  /** Creates a personal API key through the control plane and returns it. */
  createKey(options?: {
    scopes?: string[] | null;
    organizations?: string[];
    projects?: number[];
    userEmail?: string;
  }): Promise<string>;
  /** "/api/organizations/<id>" of the seeded organization. */
  org: string;
  /** "/api/projects/<id>" of the seeded project. */
  project: string;
};

/**
 * The answer of `GET /_emulator/requests` (status and parsed JSON body) as the emulator's request log: the API
 * requests since the log was last cleared, oldest first.
 * @throws Error unless the status is 200, or when an entry does not match the emulator's RequestLogEntrySchema.
 */
export function requestLogOf(status: number, body: unknown): RequestLogEntry[] {
  if (status !== 200) throw new Error(`GET /_emulator/requests failed: ${status} ${JSON.stringify(body)}`);
  return z.array(RequestLogEntrySchema).parse(body);
}

/** The API requests `emu` received since the last call (`METHOD path`, oldest first), then clears its log. */
export async function requestsSince(emu: TestEmulator): Promise<string[]> {
  const log = await emu.requests();
  await emu.control("DELETE", "/requests");
  return log.map((r) => `${r.method} ${r.path}`);
}

/**
 * Starts a fresh emulator on 127.0.0.1, port 0, with the rate limit off unless `options.rateLimit`
 * says otherwise. The caller closes it (or use `useEmulator`).
 */
export async function startTestEmulator(options: EmulatorOptions = {}): Promise<TestEmulator> {
  const emulator = await startEmulator({ rateLimit: false, ...options, port: 0, host: "127.0.0.1" });
  const call = async (method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse> => {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? emulator.apiKey : opts.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | undefined = opts.raw;
    if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
      headers["content-type"] = "application/json";
    }
    const url = path.startsWith("http") ? path : `${emulator.url}${path}`;
    const response = await request(url, {
      method: method as "GET",
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.body.text();
    let parsed: unknown;
    if (text !== "") {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    return { status: response.statusCode, headers: response.headers, text, body: parsed };
  };
  const control = (method: string, path: string, body?: unknown) =>
    call(method, `/_emulator${path}`, body === undefined ? {} : { body });
  return {
    ...emulator,
    call,
    control,
    requests: async () => {
      const res = await control("GET", "/requests");
      return requestLogOf(res.status, res.body);
    },
    createKey: async (opts = {}) => {
      const res = await call("POST", "/_emulator/api-keys", { body: opts });
      if (res.status !== 201) throw new Error(`creating a key failed: ${res.status} ${res.text}`);
      return res.body.key as string;
    },
    org: `/api/organizations/${emulator.organizationId}`,
    project: `/api/projects/${emulator.projectId}`,
  };
}

/**
 * Vitest helper: starts a fresh emulator before the suite (or file) and closes it after.
 * Returns a getter, e.g. `const emu = useEmulator(); it("...", async () => emu().call(...))`.
 */
export function useEmulator(options: EmulatorOptions = {}): () => TestEmulator {
  let emulator: TestEmulator | undefined;
  beforeAll(async () => {
    emulator = await startTestEmulator(options);
  });
  afterAll(async () => {
    await emulator?.close();
  });
  return () => {
    if (!emulator) throw new Error("useEmulator(): the emulator is not started yet (use it inside tests)");
    return emulator;
  };
}

/**
 * Starts a fresh emulator, runs `fn` with it and closes it afterwards (also on failure).
 */
export async function withEmulator<T>(
  fn: (emulator: TestEmulator) => Promise<T>,
  options: EmulatorOptions = {},
): Promise<T> {
  const emulator = await startTestEmulator(options);
  try {
    return await fn(emulator);
  } finally {
    await emulator.close();
  }
}
