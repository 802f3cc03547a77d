import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from "fastify";
import type { z } from "zod";
import {
  ApiError,
  drfMessage,
  forbidden,
  fromZodError,
  invalid,
  methodNotAllowed,
  notFound,
  throttled,
} from "./errors";
import type { ControlFault, RequestLogEntrySchema } from "./schemas";
import {
  type ApiKeyRecord,
  hashKey,
  type MembershipRecord,
  nowIso,
  nowMs,
  type ProjectRecord,
  type UserRecord,
  type World,
} from "./world";

/** Per-key request histories of the two throttles (emulator-clock milliseconds, newest last). */
type ThrottleHistory = { minute: number[]; hour: number[] };

/** One entry of the request log served at `GET /_emulator/requests`. */
export type RequestLogEntry = z.output<typeof RequestLogEntrySchema>;

/** An armed fault (see `POST /_emulator/faults`). */
export type FaultRecord = ControlFault & { id: string; pattern: RegExp; hits: number };

/** The running emulator's mutable state besides the world itself. */
export type Emulator = {
  world: World;
  paidFeatures: boolean;
  rateLimit: { perMinute: number; perHour: number } | false;
  latencyMs: number;
  throttles: Map<string, ThrottleHistory>;
  faults: FaultRecord[];
  requestLog: RequestLogEntry[];
  /** sha256 of the printed seed key, which authorizes the control plane. */
  controlKeyHash: string;
  /** Writes the world to the state file, if one is configured. */
  persist(): void;
};

/** The acting request's context, after authentication, scope and parent checks. */
export type Ctx = {
  emu: Emulator;
  world: World;
  request: FastifyRequest;
  params: Record<string, string>;
  body: unknown;
  key: ApiKeyRecord;
  user: UserRecord;
  membership: MembershipRecord;
  /** The project of a project-scoped route (`/api/projects/:project_id/...`). */
  project: ProjectRecord | undefined;
  now: string;
};

/** A handler's result: status and JSON body (`undefined`: an empty body). */
export type Result = { status: number; body?: unknown };

/** One API operation: Fastify route plus the scope it needs (`null`: not available to scoped keys). */
export type Operation = {
  method: HTTPMethods;
  url: string;
  scope: string | null;
  parent: "organization" | "project" | "user";
  handle(ctx: Ctx): Result;
};

export const ALL_METHODS: HTTPMethods[] = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

const pythonType = (value: unknown): string =>
  Array.isArray(value)
    ? "list"
    : typeof value === "string"
      ? "str"
      : typeof value === "number"
        ? "int"
        : "bool";

/**
 * Validates a JSON body against a request schema and returns the parsed value. A missing body counts
 * as `{}`; a non-object body or any schema failure throws a 400 ApiError naming the first failing field.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown, attrPrefix = ""): z.output<S> {
  const data = body === undefined || body === null ? {} : body;
  if (typeof data !== "object" || Array.isArray(data)) {
    throw invalid(`Invalid data. Expected a dictionary, but got ${pythonType(data)}.`, attrPrefix || null);
  }
  const result = schema.safeParse(data, { error: drfMessage, reportInput: true });
  if (!result.success) throw fromZodError(result.error, attrPrefix);
  return result.data;
}

/** Whether `body` is a JSON object carrying `key`. */
export const hasKey = (body: unknown, key: string): boolean =>
  typeof body === "object" && body !== null && !Array.isArray(body) && key in body;

const positiveInt = (raw: unknown, strict: boolean): number | undefined => {
  if (typeof raw !== "string" || !/^\d+$/.test(raw.trim())) return undefined;
  const n = Number.parseInt(raw, 10);
  return strict && n === 0 ? undefined : n;
};

/**
 * LimitOffsetPagination as the real service has it: default limit 100, no maximum, invalid values
 * fall back; `next`/`previous` are absolute URLs of the request with `limit`/`offset` replaced.
 */
export function paginate<T>(request: FastifyRequest, items: T[]) {
  const query = request.query as Record<string, unknown>;
  const limit = positiveInt(query.limit, true) ?? 100;
  const offset = positiveInt(query.offset, false) ?? 0;
  const base = new URL(request.url, `${request.protocol}://${request.host}`);
  const link = (params: Record<string, number | undefined>): string => {
    const url = new URL(base);
    for (const [k, v] of Object.entries(params)) {
      if (v === undefined) url.searchParams.delete(k);
      else url.searchParams.set(k, String(v));
    }
    url.searchParams.sort();
    return url.toString();
  };
  const count = items.length;
  const next = offset + limit < count ? link({ limit, offset: offset + limit }) : null;
  let previous: string | null = null;
  if (offset > 0) previous = link({ limit, offset: offset - limit <= 0 ? undefined : offset - limit });
  return { count, next, previous, results: items.slice(offset, offset + limit) };
}

const unauthenticated = (request: FastifyRequest, code: string, detail: string): ApiError =>
  new ApiError(401, "authentication_error", code, detail, null, {
    "WWW-Authenticate": `Bearer resource_metadata="${request.protocol}://${request.host}/.well-known/oauth-protected-resource"`,
  });

/** Resolves `Authorization: Bearer <key>` to the key and its user; 401 shapes as the real service. */
export function authenticate(world: World, request: FastifyRequest): { key: ApiKeyRecord; user: UserRecord } {
  const header = request.headers.authorization;
  const match = typeof header === "string" ? /^Bearer\s+(\S.+)$/.exec(header) : null;
  if (!match?.[1]) {
    throw unauthenticated(request, "not_authenticated", "Authentication credentials were not provided.");
  }
  const hash = hashKey(match[1].trim());
  const key = world.apiKeys.find((k) => k.hash === hash);
  const user = key && world.users.find((u) => u.id === key.user_id);
  if (!key || !user) {
    throw unauthenticated(
      request,
      "authentication_failed",
      "Personal API key found in request Authorization header is invalid.",
    );
  }
  return { key, user };
}

/** The scope check of the real service: `*` passes, `:write` satisfies `:read`, `null` refuses scoped keys. */
export function checkScope(key: ApiKeyRecord, scope: string | null): void {
  if (key.scopes === null) return;
  if (scope === null) throw forbidden("This action does not support Personal API Key access");
  const scopes = key.scopes;
  if (scopes.includes("*") || scopes.includes(scope)) return;
  if (scope.endsWith(":read") && scopes.includes(scope.replace(/:read$/, ":write"))) return;
  throw forbidden(`API key missing required scope '${scope}'`);
}

/**
 * DRF's burst (per minute) and sustained (per hour) throttles, per key, on the emulator's clock.
 * Both are evaluated; the longest wait is reported in the 429 detail.
 */
export function throttle(emu: Emulator, key: ApiKeyRecord): void {
  if (emu.rateLimit === false) return;
  const now = nowMs(emu.world);
  let history = emu.throttles.get(key.hash);
  if (!history) {
    history = { minute: [], hour: [] };
    emu.throttles.set(key.hash, history);
  }
  const windows: [number[], number, number][] = [
    [history.minute, emu.rateLimit.perMinute, 60_000],
    [history.hour, emu.rateLimit.perHour, 3_600_000],
  ];
  const waits: number[] = [];
  for (const [list, limit, duration] of windows) {
    while (list.length > 0 && (list[0] ?? 0) <= now - duration) list.shift();
    if (list.length >= limit) {
      const oldest = list[0] ?? now;
      const available = limit - list.length + 1;
      waits.push((duration - (now - oldest)) / 1000 / Math.max(available, 1));
    } else {
      list.push(now);
    }
  }
  if (waits.length > 0) throw throttled(Math.max(...waits));
}

const currentProject = (world: World, user: UserRecord): ProjectRecord | undefined =>
  world.projects.find((p) => p.id === user.current_team_id) ?? world.projects[0];

/** Membership of `user` in the organization, if any. */
export const membershipOf = (world: World, user: UserRecord): MembershipRecord | undefined =>
  world.memberships.find((m) => m.user_id === user.id);

/**
 * Runs one API operation: authentication, scope, parent resolution (`@current`, organization and
 * project checks, key restrictions, membership), throttling, then the synchronous handler, so that
 * validation and mutation happen without interleaving other requests.
 */
export function runOperation(emu: Emulator, op: Operation, request: FastifyRequest): Result {
  const world = emu.world;
  const { key, user } = authenticate(world, request);
  checkScope(key, op.scope);
  const params = request.params as Record<string, string>;
  const membership = membershipOf(world, user);
  let project: ProjectRecord | undefined;
  if (op.parent === "organization") {
    const orgId = params.organization_id;
    if (orgId === "@current") {
      if (!membership) throw notFound("Organization not found.");
    } else if (orgId !== world.organization.id) {
      throw notFound("Organization not found.");
    }
    if (key.projects !== null) {
      throw forbidden("API keys with scoped projects are only supported on project-based endpoints.");
    }
  } else if (op.parent === "project") {
    const raw = params.project_id ?? "";
    if (raw === "@current") {
      project = membership ? currentProject(world, user) : undefined;
    } else if (/^\d+$/.test(raw)) {
      const id = Number(raw);
      project = world.projects.find((p) => p.id === id);
    }
    if (!project) throw notFound("Project not found.");
    if (key.projects !== null && !key.projects.includes(project.id)) {
      throw forbidden(`API key does not have access to the requested project: ID ${project.id}.`);
    }
  }
  if (
    op.parent !== "user" &&
    key.organizations !== null &&
    !key.organizations.includes(world.organization.id)
  ) {
    throw forbidden(
      `API key does not have access to the requested organization: ID ${world.organization.id}.`,
    );
  }
  if (!membership) {
    throw forbidden(op.parent === "project" ? "You don't have access to the project." : undefined);
  }
  throttle(emu, key);
  return op.handle({
    emu,
    world,
    request,
    params,
    body: request.body,
    key,
    user,
    membership,
    project,
    now: nowIso(world),
  });
}

const send = (reply: FastifyReply, result: Result): FastifyReply => {
  reply.code(result.status);
  return result.body === undefined ? reply.send() : reply.send(result.body);
};

/** A plain Fastify route definition (method, URL, handler). */
export type RouteDef = {
  method: HTTPMethods;
  url: string;
  handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
};

/**
 * Registers routes with Fastify; every path also gets a catch-all of the remaining methods answering
 * 405 with the error shape (Fastify does the routing; HEAD follows GET). `guard` runs first on those
 * (authentication precedes the method check in the real service, so a missing key is still a 401).
 */
export function registerRoutes(
  app: FastifyInstance,
  routes: RouteDef[],
  guard: (request: FastifyRequest) => void = () => {},
): void {
  const byUrl = new Map<string, RouteDef[]>();
  for (const route of routes) byUrl.set(route.url, [...(byUrl.get(route.url) ?? []), route]);
  for (const [url, defs] of byUrl) {
    for (const def of defs) app.route({ method: def.method, url, handler: def.handler });
    const taken = new Set(defs.map((d) => d.method));
    const rest = ALL_METHODS.filter((m) => !taken.has(m));
    if (rest.length > 0) {
      app.route({
        method: rest,
        url,
        handler: async (request) => {
          guard(request);
          throw methodNotAllowed(request.method);
        },
      });
    }
  }
}

/** Registers the API operations (see `runOperation`); writes persist the world afterwards. */
export function registerOperations(app: FastifyInstance, emu: Emulator, operations: Operation[]): void {
  registerRoutes(
    app,
    operations.map((op) => ({
      method: op.method,
      url: op.url,
      handler: async (request, reply) => {
        const result = runOperation(emu, op, request);
        if (op.method !== "GET") emu.persist();
        return send(reply, result);
      },
    })),
    (request) => authenticate(emu.world, request),
  );
}
