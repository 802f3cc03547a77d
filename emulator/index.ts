import "./fastify-installed"; // first: a missing fastify (optional peer dependency) fails in one line
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import { z } from "zod";
import { operations } from "./api/index";
import { registerControlPlane } from "./control";
import { ApiError, notFound, serverError, throttled } from "./errors";
import { type Emulator, type FaultRecord, registerOperations } from "./runtime";
import { ControlFaultSchema } from "./schemas";
import {
  hashKey,
  newApiKey,
  nowIso,
  SEED_ORGANIZATION_ID,
  SEED_PROJECT_ID,
  seedWorld,
  type World,
  WorldSchema,
} from "./world";

/** Largest accepted request body (1 MiB); larger bodies get 413 with the error shape. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Deepest accepted nesting of objects and arrays in a JSON body (the top-level value is level 1);
 * deeper bodies get 400 `parse_error` and change nothing. api-behaviour.md names no limit; the real
 * service parses with Python's `json` (DRF's JSONParser), which stops at Python's recursion limit
 * (1,000 frames, the request's own included) with a RecursionError that DRF does not turn into a
 * 400. 512 stays below that, and far below the depth at which serializing the world for an answer
 * or the state file overflows the stack here (JSON.stringify: about 4,400 levels).
 */
export const MAX_JSON_DEPTH = 512;

/** Whether a parsed JSON value nests objects/arrays deeper than `max` levels (iterative: any depth). */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [current, depth] = item;
    if (typeof current !== "object" || current === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

const parseError = (message: string): ApiError =>
  new ApiError(400, "invalid_request", "parse_error", `JSON parse error - ${message}`);

/** 400 for a URL (path or query) with malformed percent-encoding or percent-encoded invalid UTF-8. */
const badUrl = (): ApiError =>
  new ApiError(
    400,
    "invalid_request",
    "bad_request",
    "Malformed percent-encoding or invalid UTF-8 in the URL.",
  );

/** Whether the query string of `url` decodes (percent-encoding well formed, UTF-8 valid). */
const queryDecodes = (url: string): boolean => {
  const start = url.indexOf("?");
  if (start === -1) return true;
  try {
    decodeURIComponent(url.slice(start + 1));
    return true;
  } catch {
    return false;
  }
};

/** Strict UTF-8 (invalid bytes throw); a byte order mark is kept, so JSON.parse refuses it as Python does. */
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Options of `startEmulator` (validated; defaults as documented per field). */
export const EmulatorOptionsSchema = z.object({
  /** TCP port; 0 picks a free one. */
  port: z.number().int().min(0).max(65535).default(0),
  /** Interface to bind; 127.0.0.1 by default. */
  host: z.string().min(1).default("127.0.0.1"),
  /** Per-key limits (the real service: 480/minute, 4800/hour), or false for none. */
  rateLimit: z
    .union([
      z.object({ perMinute: z.number().int().min(1), perHour: z.number().int().min(1) }),
      z.literal(false),
    ])
    .default({ perMinute: 480, perHour: 4800 }),
  /**
   * The organization's invite budget (the real service: 50 invites an hour and 200 a day, counted per invite,
   * a bulk request counting each of its invites), or false for none. A request whose invites do not fit is
   * answered 429 with the wait until they do.
   */
  inviteBudget: z
    .union([
      z.object({ perHour: z.number().int().min(1), perDay: z.number().int().min(1) }),
      z.literal(false),
    ])
    .default({ perHour: 50, perDay: 200 }),
  /**
   * Added latency before every API request, in milliseconds: a network's round trip as the client sees it
   * (e.g. 80 for a client in Europe talking to PostHog's US cloud).
   */
  latencyMs: z.number().int().min(0).max(60_000).default(0),
  /**
   * Jitter of that latency, in milliseconds: each API request waits `latencyMs` plus a uniformly random whole
   * number from −`latencyJitterMs` to +`latencyJitterMs` (never less than 0 in all). With `latencyMs: 80,
   * latencyJitterMs: 20` every request waits 60–100 ms. The request log shows each request's wait.
   */
  latencyJitterMs: z.number().int().min(0).max(60_000).default(0),
  /** JSON file the world is loaded from (if present) and saved to after every write. */
  stateFile: z.string().min(1).optional(),
  /** Paid features (restriction level 37, collaborators, sharing, unlimited projects); default on. */
  paidFeatures: z.boolean().default(true),
  /**
   * Domains carry the reference's `saml_entity_id`, `saml_acs_url`, `saml_x509_cert` (default). False serves them
   * as current PostHog does (posthog/api/organization_domain.py): without `saml_*` fields (writes of them are
   * ignored), SAML living in a linked `identity_provider_config` (null here).
   */
  samlOnDomain: z.boolean().default(true),
  /** The seed key (the owner's full-access key, which also authorizes the control plane). */
  apiKey: z
    .string()
    .regex(/^phx_[A-Za-z0-9_-]{16,}$/, {
      error: "apiKey must look like phx_ followed by 16+ URL-safe characters",
    })
    .optional(),
  /** Faults armed at start (same shape as `POST /_emulator/faults`). */
  faults: z.array(ControlFaultSchema).default([]),
});
export type EmulatorOptions = z.input<typeof EmulatorOptionsSchema>;

/** A running emulator. */
export type RunningEmulator = {
  /** Base URL, e.g. "http://127.0.0.1:PORT" (no trailing slash). */
  url: string;
  /** Full-access personal API key of the seeded owner ("phx_..."); also authorizes /_emulator/. */
  apiKey: string;
  /** The seeded organization's UUID. */
  organizationId: string;
  /** The seeded project's id (== its team id). */
  projectId: number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
};

/**
 * The settings that point the provider, the lookups and the client at an emulator: `POSTHOG_HOST` (its URL),
 * `POSTHOG_API_KEY` (`apiKey`, default the seeded owner's key), `POSTHOG_ORGANIZATION_ID` and `POSTHOG_PROJECT_ID`
 * (the seeded organization and project), as environment variables for a `pulumi` run or a test. The same four that
 * `posthog-emulator --print-env` prints.
 */
export function emulatorEnv(
  emu: Pick<RunningEmulator, "url" | "apiKey" | "organizationId" | "projectId">,
  apiKey: string = emu.apiKey,
): {
  POSTHOG_HOST: string;
  POSTHOG_API_KEY: string;
  POSTHOG_ORGANIZATION_ID: string;
  POSTHOG_PROJECT_ID: string;
} {
  return {
    POSTHOG_HOST: emu.url,
    POSTHOG_API_KEY: apiKey,
    POSTHOG_ORGANIZATION_ID: emu.organizationId,
    POSTHOG_PROJECT_ID: String(emu.projectId),
  };
}

const loadWorld = (stateFile: string | undefined, seedKey: string): World => {
  if (stateFile && existsSync(stateFile)) {
    const world = WorldSchema.parse(JSON.parse(readFileSync(stateFile, "utf8")));
    const owner = world.memberships.find((m) => m.level === 15) ?? world.memberships[0];
    const hash = hashKey(seedKey);
    if (owner && !world.apiKeys.some((k) => k.hash === hash)) {
      world.apiKeys.push({ hash, user_id: owner.user_id, scopes: null, organizations: null, projects: null });
    }
    return world;
  }
  return seedWorld(seedKey, new Date().toISOString());
};

const toApiError = (error: FastifyError | Error): ApiError => {
  if (error instanceof ApiError) return error;
  const code = (error as FastifyError).code;
  const status = (error as FastifyError).statusCode;
  if (code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    return new ApiError(
      413,
      "invalid_request",
      "request_too_large",
      `Request body exceeds the limit of ${BODY_LIMIT_BYTES} bytes.`,
    );
  }
  if (code === "FST_ERR_BAD_URL") return badUrl();
  if (code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
    return new ApiError(
      415,
      "invalid_request",
      "unsupported_media_type",
      "Unsupported media type in request.",
    );
  }
  if (typeof status === "number" && status >= 400 && status < 500) {
    const parse = error instanceof SyntaxError || code === "FST_ERR_CTP_INVALID_JSON_BODY";
    return new ApiError(
      status,
      "invalid_request",
      parse ? "parse_error" : "bad_request",
      parse ? `JSON parse error - ${error.message}` : error.message,
    );
  }
  return serverError();
};

/** Fastify's `frameworkErrors` handler: the router's own errors answered with the error shape. */
function sendFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const apiError = toApiError(error);
  reply.code(apiError.status).headers(apiError.headers).send(apiError.body());
}

const pathname = (request: FastifyRequest): string => request.url.split("?")[0] ?? request.url;
const isControl = (request: FastifyRequest): boolean => pathname(request).startsWith("/_emulator");

/**
 * The latency to add to one API request (ms): `latencyMs` plus a uniform whole number in
 * [−latencyJitterMs, +latencyJitterMs], at least 0.
 */
export function addedLatencyMs(emu: Pick<Emulator, "latencyMs" | "latencyJitterMs">): number {
  const jitter =
    emu.latencyJitterMs > 0
      ? Math.floor(Math.random() * (2 * emu.latencyJitterMs + 1)) - emu.latencyJitterMs
      : 0;
  return Math.max(0, emu.latencyMs + jitter);
}

const pickFault = (emu: Emulator, request: FastifyRequest): FaultRecord | undefined => {
  const path = pathname(request);
  for (const fault of emu.faults) {
    if (fault.method && fault.method !== request.method) continue;
    if (!fault.pattern.test(path)) continue;
    if (fault.times !== undefined && fault.hits >= fault.times) continue;
    if (fault.probability !== undefined && Math.random() >= fault.probability) continue;
    fault.hits++;
    return fault;
  }
  return undefined;
};

/**
 * JSON only (others get 415); an empty body is "no data", as in the real service. Invalid UTF-8, malformed JSON and
 * nesting deeper than MAX_JSON_DEPTH are 400 `parse_error`. Keys named `__proto__`, `constructor` or `prototype` are
 * kept as parsed (own properties) and refused with a 400 `validation_error` before any handler reads the body
 * (`refuseReservedKeys`, after authentication as PostHog validates). Fastify's own
 * `onProtoPoisoning`/`onConstructorPoisoning` would answer a `parse_error` instead, and only for `__proto__` and
 * `constructor.prototype`.
 */
function addJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, raw, done) => {
    let body: string;
    try {
      body = utf8.decode(raw as Buffer);
    } catch {
      done(parseError("Request body is not valid UTF-8."));
      return;
    }
    if (body.trim() === "") {
      done(null, undefined);
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (error) {
      done(parseError((error as Error).message));
      return;
    }
    if (nestedDeeperThan(parsed, MAX_JSON_DEPTH)) {
      done(parseError(`Nesting deeper than ${MAX_JSON_DEPTH} levels.`));
      return;
    }
    done(null, parsed);
  });
}

/** What one app's hooks mark on the API requests under way (made per app by {@link buildEmulatorApp}). */
interface RequestMarks {
  /** Requests whose answer a fault drops (`dropResponse`). */
  dropped: WeakSet<FastifyRequest>;
  /** Requests whose 2xx answer a fault rewrites (`body`, `truncateBody`). */
  rewritten: WeakMap<FastifyRequest, FaultRecord>;
  /** The latency added to each API request (for its log entry). */
  latencies: WeakMap<FastifyRequest, number>;
  /** Requests already in the request log. */
  logged: WeakSet<FastifyRequest>;
}

/** Appends an API request to the emulator's request log (its status, duration and added latency). */
function logRequest(
  emu: Emulator,
  marks: RequestMarks,
  request: FastifyRequest,
  status: number,
  durationMs: number,
): void {
  marks.logged.add(request);
  emu.requestLog.push({
    method: request.method,
    path: pathname(request),
    query: { ...(request.query as Record<string, unknown>) },
    status,
    durationMs: Math.round(durationMs * 100) / 100,
    latencyMs: marks.latencies.get(request) ?? 0,
    at: nowIso(emu.world),
  });
  // Keep the newest 10,000 entries; trimming in batches keeps the cost per request constant.
  if (emu.requestLog.length > 20_000) emu.requestLog.splice(0, emu.requestLog.length - 10_000);
}

/**
 * The `onRequest` hook of API requests (not the control plane's): the added latency, then the fault that matches,
 * if any: a delay, a connection reset, an injected status, or a mark to drop or rewrite the answer later.
 */
function addFaultHook(app: FastifyInstance, emu: Emulator, marks: RequestMarks): void {
  app.addHook("onRequest", async (request, reply) => {
    if (!queryDecodes(request.url)) throw badUrl();
    if (isControl(request)) return;
    const latency = addedLatencyMs(emu);
    marks.latencies.set(request, latency);
    if (latency > 0) await sleep(latency);
    const fault = pickFault(emu, request);
    if (!fault) return;
    if (fault.delayMs) await sleep(fault.delayMs);
    if (fault.reset) {
      logRequest(emu, marks, request, 0, reply.elapsedTime);
      reply.hijack();
      request.raw.socket.destroy();
      return;
    }
    if (fault.status !== undefined) {
      const headers: Record<string, string> =
        fault.retryAfter === undefined ? {} : { "Retry-After": String(fault.retryAfter) };
      throw fault.status === 429
        ? throttled(fault.retryAfter ?? 1, headers)
        : fault.status >= 500
          ? serverError(fault.status, headers)
          : new ApiError(fault.status, "invalid_request", "injected_fault", "Injected fault.", null, headers);
    }
    if (fault.dropResponse) marks.dropped.add(request);
    if (fault.body !== undefined || fault.truncateBody) marks.rewritten.set(request, fault);
  });
}

/**
 * Holds (POST /_emulator/holds): after the latency and faults and once the body is parsed, a matching request
 * waits in this `preHandler` hook until the control plane releases it (or its connection is cut after `cutAfterMs`).
 */
function addHoldHook(app: FastifyInstance, emu: Emulator): void {
  app.addHook("preHandler", async (request) => {
    if (isControl(request)) return;
    const path = pathname(request);
    const hold = emu.holds.find(
      (h) =>
        (!h.method || h.method === request.method) &&
        h.pattern.test(path) &&
        (h.times === undefined || h.hits < h.times),
    );
    if (!hold) return;
    hold.hits++;
    const cut =
      hold.cutAfterMs === undefined
        ? undefined
        : setTimeout(() => request.raw.socket.destroy(), hold.cutAfterMs);
    await new Promise<void>((release) => {
      hold.held.push({ method: request.method, path, body: request.body, release });
    });
    if (cut) clearTimeout(cut);
  });
}

/**
 * The hooks on the way out: a fault's rewrite of a 2xx answer (`body` merged into a JSON object, `truncateBody` to
 * half its bytes), a dropped answer (logged, then the connection destroyed), and the request log of the others.
 */
function addAnswerHooks(app: FastifyInstance, emu: Emulator, marks: RequestMarks): void {
  app.addHook("onSend", async (request, reply, payload) => {
    const rewrite = marks.rewritten.get(request);
    if (rewrite && reply.statusCode < 300 && typeof payload === "string") {
      let text = payload;
      let parsed: unknown;
      try {
        parsed = rewrite.body === undefined ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined; // not JSON: left as it is
      }
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed))
        text = JSON.stringify({ ...parsed, ...rewrite.body });
      if (!rewrite.truncateBody) return text;
      const bytes = Buffer.from(text);
      return bytes.subarray(0, Math.floor(bytes.length / 2));
    }
    if (marks.dropped.has(request)) {
      logRequest(emu, marks, request, reply.statusCode, reply.elapsedTime);
      request.raw.socket.destroy();
    }
    return payload;
  });

  app.addHook("onResponse", async (request, reply) => {
    if (!isControl(request) && !marks.logged.has(request))
      logRequest(emu, marks, request, reply.statusCode, reply.elapsedTime);
  });
}

/**
 * Builds the Fastify app of an emulator (not listening). Exposed for tests and embedding; most
 * callers want `startEmulator`.
 */
export function buildEmulatorApp(emu: Emulator): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT_BYTES,
    // No parameter length limit of the router's own (the URL is bounded by Node's header limit):
    // an over-long id reaches its handler and gets the real 404.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 64 * 1024 },
    forceCloseConnections: true,
    // Errors the router raises before routing (a malformed path) get the error shape too.
    frameworkErrors: sendFrameworkError,
  });
  addJsonParser(app);
  const marks: RequestMarks = {
    dropped: new WeakSet(),
    rewritten: new WeakMap(),
    latencies: new WeakMap(),
    logged: new WeakSet(),
  };
  addFaultHook(app, emu, marks);
  addHoldHook(app, emu);
  addAnswerHooks(app, emu, marks);

  app.setErrorHandler((error: FastifyError | Error, _request, reply) => {
    const apiError = toApiError(error);
    return reply.code(apiError.status).headers(apiError.headers).send(apiError.body());
  });
  // PostHog answers an unknown /api route with NotFound("Endpoint not found.") (posthog/api/__init__.py,
  // api_not_found): distinct from "Not found." for a missing object.
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(notFound("Endpoint not found.").body()));

  registerOperations(app, emu, operations);
  registerControlPlane(app, emu);
  return app;
}

/**
 * Starts an emulator of the PostHog organization/project administration API on `host:port`
 * (default 127.0.0.1, a free port) with the deterministic seeded world (or the world of `stateFile`).
 * Throws a ZodError for invalid options and the listen error if the port is taken.
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const opts = EmulatorOptionsSchema.parse(options);
  const apiKey = opts.apiKey ?? newApiKey();
  const world = loadWorld(opts.stateFile, apiKey);
  const stateFile = opts.stateFile;
  const emu: Emulator = {
    world,
    paidFeatures: opts.paidFeatures,
    samlOnDomain: opts.samlOnDomain,
    rateLimit: opts.rateLimit,
    latencyMs: opts.latencyMs,
    latencyJitterMs: opts.latencyJitterMs,
    throttles: new Map(),
    inviteBudget: opts.inviteBudget,
    inviteHistory: [],
    faults: opts.faults.map((f, i) => ({ ...f, id: `startup-${i}`, pattern: new RegExp(f.path), hits: 0 })),
    holds: [],
    requestLog: [],
    controlKeyHash: hashKey(apiKey),
    committed: JSON.stringify(world),
    persist: (text) => {
      if (!stateFile) return;
      writeFileSync(`${stateFile}.tmp`, text);
      renameSync(`${stateFile}.tmp`, stateFile);
    },
  };
  emu.persist(emu.committed);
  const app = buildEmulatorApp(emu);
  await app.listen({ port: opts.port, host: opts.host });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : opts.port;
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  const project = world.projects.find((p) => p.id === SEED_PROJECT_ID) ?? world.projects[0];
  return {
    url: `http://${host}:${port}`,
    apiKey,
    organizationId: world.organization.id ?? SEED_ORGANIZATION_ID,
    projectId: project?.id ?? SEED_PROJECT_ID,
    close: () => {
      // Requests still held go on (and are answered) so that closing never waits on them.
      for (const hold of emu.holds.splice(0)) for (const r of hold.held.splice(0)) r.release();
      return app.close();
    },
  };
}
