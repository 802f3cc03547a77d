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
import type { ControlFault, ControlHold, RequestLogEntrySchema } from "./schemas";
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

/** An API request waiting at a hold: what it asked, and how to let it go on. */
export type HeldRequest = { method: string; path: string; body: unknown; release: () => void };

/**
 * An armed hold (see `POST /_emulator/holds`): `hits` counts the requests it matched (held or released),
 * `held` those still waiting, oldest first.
 */
export type HoldRecord = ControlHold & { id: string; pattern: RegExp; hits: number; held: HeldRequest[] };

/** The running emulator's mutable state besides the world itself. */
export type Emulator = {
  world: World;
  paidFeatures: boolean;
  /** Domains carry `saml_*` fields (the reference); false: as current PostHog, SAML in `identity_provider_config`. */
  samlOnDomain: boolean;
  rateLimit: { perMinute: number; perHour: number } | false;
  latencyMs: number;
  /** Jitter of the added latency (± ms, uniform). */
  latencyJitterMs: number;
  throttles: Map<string, ThrottleHistory>;
  /**
   * The organization's invite budget (PostHog: 50 invites an hour, 200 a day, counted per invite), or false
   * for none; `inviteHistory` holds one emulator-clock time per invite it let through, oldest first.
   */
  inviteBudget: { perHour: number; perDay: number } | false;
  inviteHistory: number[];
  faults: FaultRecord[];
  holds: HoldRecord[];
  requestLog: RequestLogEntry[];
  /** sha256 of the printed seed key, which authorizes the control plane. */
  controlKeyHash: string;
  /** The world as JSON text as of the last committed write (what the state file holds, if any). */
  committed: string;
  /** Writes `text` (the world as JSON) to the state file, if one is configured; throws if that fails. */
  persist(text: string): void;
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
  /**
   * What the path hangs from: `organization`, `/api/organizations/:organization_id/…` (the id or `@current`
   * checked); `project`, `/api/projects/:project_id/…`; `user`, the key's user (no parent); `organizations`, the
   * organization endpoints themselves (`/api/organizations/[:organization_id/]`), whose handler resolves the id and
   * applies the key's organizations.
   */
  parent: "organization" | "project" | "user" | "organizations";
  /**
   * The answer for a key whose user belongs to no organization, where PostHog answers rather than refusing (the
   * organization list: an empty page; its retrieve: 404); without it such a key gets 403.
   */
  withoutMembership?: (request: FastifyRequest) => Result;
  /** For the operations that send invites: how many the request body sends (counted by the invite budget). */
  invites?: (body: unknown) => number;
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
  checkText(result.data, attrPrefix);
  return result.data;
}

/**
 * Refuses text the real service cannot store, in every accepted field (keys of JSON fields included):
 * NUL characters (Django's ProhibitNullCharactersValidator on every CharField; PostgreSQL refuses
 * `\u0000` in text and jsonb) and lone UTF-16 surrogates (DRF's ProhibitSurrogateCharactersValidator;
 * not encodable as UTF-8). Throws a 400 `validation_error` whose `attr` is the path joined with `__`.
 */
export function checkText(value: unknown, attrPrefix = ""): void {
  const stack: [unknown, string[]][] = [[value, attrPrefix === "" ? [] : [attrPrefix]]];
  const check = (text: string, path: string[]): void => {
    const attr = path.length === 0 ? null : path.join("__");
    if (text.includes("\u0000"))
      throw invalid("Null characters are not allowed.", attr, "null_characters_not_allowed");
    // With the `u` flag a surrogate pair is one code point; only lone surrogates are category Cs.
    const surrogate = /\p{Cs}/u.exec(text);
    if (surrogate) {
      const codePoint = (surrogate[0].codePointAt(0) ?? 0).toString(16).toUpperCase();
      throw invalid(
        `Surrogate characters are not allowed: U+${codePoint}.`,
        attr,
        "surrogate_characters_not_allowed",
      );
    }
  };
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [current, path] = item;
    if (typeof current === "string") check(current, path);
    else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], [...path, String(i)]]);
    } else if (typeof current === "object" && current !== null) {
      const entries = Object.entries(current);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i] as [string, unknown];
        check(key, [...path, key]);
        stack.push([child, [...path, key]]);
      }
    }
  }
}

/** Keys refused at any depth of a request body: JavaScript's prototype names (see `refuseReservedKeys`). */
export const RESERVED_KEYS: readonly string[] = ["__proto__", "constructor", "prototype"];

/** A value's place in a body: its key (or array index) and its parent's place (null at the top). */
type BodyPath = { key: string; index: boolean; parent: BodyPath | null };

const attrOf = (path: BodyPath): string => {
  const keys: string[] = [];
  for (let p: BodyPath | null = path; p !== null; p = p.parent) keys.push(p.key);
  return keys.reverse().join("__");
};

/**
 * Refuses a parsed JSON body that has a key named `__proto__`, `constructor` or `prototype` (own keys: JSON.parse
 * makes `"__proto__"` an own property) at any depth, objects inside arrays included: throws a 400
 * `validation_error` `invalid_input` whose `attr` is the first such key's path in document order, joined with `__`
 * (an array index is its position: `0__constructor`). PostHog, in Python, takes these as plain names; the emulator,
 * in JavaScript, refuses them before any handler reads the body, so none reaches a stored object or a prototype.
 * Iterative and linear in the body's size (any depth).
 */
export function refuseReservedKeys(body: unknown): void {
  const stack: [unknown, BodyPath | null][] = [[body, null]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [current, path] = item;
    if (path !== null && !path.index && RESERVED_KEYS.includes(path.key)) {
      throw invalid(
        `The key "${path.key}" is not accepted: keys named __proto__, constructor and prototype are refused at any depth of a request body (remove or rename it).`,
        attrOf(path),
      );
    }
    if (typeof current !== "object" || current === null) continue;
    const index = Array.isArray(current);
    const entries = Object.entries(current);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i] as [string, unknown];
      stack.push([child, { key, index, parent: path }]);
    }
  }
}

/** Whether `body` is a JSON object carrying `key`. */
export const hasKey = (body: unknown, key: string): boolean =>
  typeof body === "object" && body !== null && !Array.isArray(body) && key in body;

/** A non-negative decimal integer query value, exactly (any size), or undefined; `strict` refuses 0. */
const positiveInt = (raw: unknown, strict: boolean): bigint | undefined => {
  if (typeof raw !== "string" || !/^\d+$/.test(raw.trim())) return undefined;
  const n = BigInt(raw.trim());
  return strict && n === 0n ? undefined : n;
};

/**
 * LimitOffsetPagination as the real service has it: default limit 100, no maximum, invalid values
 * fall back; `next`/`previous` are absolute URLs of the request with `limit`/`offset` replaced.
 * Limit and offset are exact integers of any size (Python's int), so the links of a huge or
 * past-the-end offset carry exactly `offset ± limit` in plain decimal.
 */
export function paginate<T>(request: FastifyRequest, items: T[]) {
  const query = request.query as Record<string, unknown>;
  const limit = positiveInt(query.limit, true) ?? 100n;
  const offset = positiveInt(query.offset, false) ?? 0n;
  const base = new URL(request.url, `${request.protocol}://${request.host}`);
  const link = (params: Record<string, bigint | undefined>): string => {
    const url = new URL(base);
    for (const [k, v] of Object.entries(params)) {
      if (v === undefined) url.searchParams.delete(k);
      else url.searchParams.set(k, v.toString());
    }
    url.searchParams.sort();
    return url.toString();
  };
  const count = BigInt(items.length);
  const next = offset + limit < count ? link({ limit, offset: offset + limit }) : null;
  let previous: string | null = null;
  if (offset > 0n) previous = link({ limit, offset: offset - limit <= 0n ? undefined : offset - limit });
  const start = offset < count ? Number(offset) : items.length;
  const end = offset + limit < count ? Number(offset + limit) : items.length;
  return { count: items.length, next, previous, results: items.slice(start, end) };
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

/**
 * The organization's invite budget (PostHog's OrganizationInviteBurstThrottle, 50/hour, and
 * OrganizationInviteSustainedThrottle, 200/day: keyed per organization, counting invites, not requests; PR
 * PostHog/posthog#74302): a request sending `count` invites passes only when both windows have room for all of
 * them, and is then counted; otherwise 429 throttled naming the wait until they fit (a request that can never
 * fit waits a whole window).
 */
export function throttleInvites(emu: Emulator, count: number): void {
  if (emu.inviteBudget === false || count < 1) return;
  const now = nowMs(emu.world);
  const history = emu.inviteHistory;
  while (history.length > 0 && (history[0] ?? 0) <= now - 86_400_000) history.shift();
  const waits: number[] = [];
  for (const [limit, duration] of [
    [emu.inviteBudget.perHour, 3_600_000],
    [emu.inviteBudget.perDay, 86_400_000],
  ] as const) {
    const inWindow = history.filter((t) => t > now - duration);
    const over = inWindow.length + count - limit;
    if (over <= 0) continue;
    // the `over` oldest invites of the window must leave it first
    const leaving = inWindow[over - 1];
    waits.push(leaving === undefined ? duration / 1000 : (leaving + duration - now) / 1000);
  }
  if (waits.length > 0) throw throttled(Math.max(...waits));
  for (let i = 0; i < count; i++) history.push(now);
}

const currentProject = (world: World, user: UserRecord): ProjectRecord | undefined =>
  world.projects.find((p) => p.id === user.current_team_id) ?? world.projects[0];

/** Membership of `user` in the organization, if any. */
export const membershipOf = (world: World, user: UserRecord): MembershipRecord | undefined =>
  world.memberships.find((m) => m.user_id === user.id);

const SCOPED_PROJECTS_ONLY = "API keys with scoped projects are only supported on project-based endpoints.";

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
    if (key.projects !== null) throw forbidden(SCOPED_PROJECTS_ONLY);
  } else if (op.parent === "organizations") {
    if (key.projects !== null) throw forbidden(SCOPED_PROJECTS_ONLY);
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
    (op.parent === "organization" || op.parent === "project") &&
    key.organizations !== null &&
    !key.organizations.includes(world.organization.id)
  ) {
    throw forbidden(
      `API key does not have access to the requested organization: ID ${world.organization.id}.`,
    );
  }
  if (!membership) {
    if (op.withoutMembership) {
      throttle(emu, key);
      return op.withoutMembership(request);
    }
    throw forbidden(op.parent === "project" ? "You don't have access to the project." : undefined);
  }
  throttle(emu, key);
  if (op.invites) throttleInvites(emu, op.invites(request.body));
  // Where PostHog validates a body: after authentication, permissions and the throttles (the invite budget
  // included, which counts invalid invites too).
  if (op.method !== "GET") refuseReservedKeys(request.body);
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

/** A result with its body already serialized (`undefined`: an empty body). */
export type Rendered = { status: number; payload: string | undefined };

/** Serializes a result's body (throws if it cannot be serialized). */
export const render = (result: Result): Rendered => ({
  status: result.status,
  payload: result.body === undefined ? undefined : JSON.stringify(result.body),
});

/** Sends a result rendered by `render` (JSON, as Fastify would serialize it). */
export const sendRendered = (reply: FastifyReply, rendered: Rendered): FastifyReply => {
  reply.code(rendered.status);
  if (rendered.payload === undefined) return reply.send();
  return reply.type("application/json; charset=utf-8").send(rendered.payload);
};

/**
 * Runs one write all-or-nothing: `write` changes the world and returns its result; the answer and
 * the world are serialized, the world is persisted and becomes `emu.committed`. If any step throws
 * (the handler, serializing, writing the state file), the world is rebuilt from `emu.committed`, the
 * world as it was before, so the write is applied in memory and in the state file, or in neither,
 * and the next write starts from the saved world. Returns the rendered result; the caller sends it
 * after the commit. (One JSON.stringify of the world per write, which the state file needs anyway.)
 */
export function transact(emu: Emulator, write: () => Result): Rendered {
  try {
    const rendered = render(write());
    const text = JSON.stringify(emu.world);
    emu.persist(text);
    emu.committed = text;
    return rendered;
  } catch (error) {
    emu.world = JSON.parse(emu.committed) as World;
    throw error;
  }
}

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

/** Registers the API operations (see `runOperation`); writes run through `transact`. */
export function registerOperations(app: FastifyInstance, emu: Emulator, operations: Operation[]): void {
  registerRoutes(
    app,
    operations.map((op) => ({
      method: op.method,
      url: op.url,
      handler: async (request, reply) => {
        const rendered =
          op.method === "GET"
            ? render(runOperation(emu, op, request))
            : transact(emu, () => runOperation(emu, op, request));
        return sendRendered(reply, rendered);
      },
    })),
    (request) => authenticate(emu.world, request),
  );
}
