/**
 * Shared pieces of the resource modules: the embedded user schema, the page wrapper, body and response
 * parsing (a predicate compiled from the schema first, zod when it cannot vouch for a body), pagination
 * (iterate / all), the short-lived shared list reads behind `find()`, and the per-client context every
 * resource module receives.
 */
import { z } from "zod";
import { UnexpectedResponseError } from "./errors";
import { invalidInput, type Settings } from "./settings";
import type { HttpMethod, HttpRequest, HttpResponse, Transport } from "./transport";

/**
 * The embedded user object (`created_by`, `user`). The seed names the free-form settings `mascot_config`,
 * the real service `hedgehog_config`: both are accepted. Nullable fields are nullable as in PostHog.
 */
export const UserSchema = z.looseObject({
  id: z.number().int().optional(),
  uuid: z.string(),
  distinct_id: z.string().nullish(),
  first_name: z.string().nullish(),
  last_name: z.string().nullish(),
  email: z.string(),
  is_email_verified: z.boolean().nullish(),
  mascot_config: z.record(z.string(), z.unknown()).nullish(),
  hedgehog_config: z.record(z.string(), z.unknown()).nullish(),
  role_at_organization: z.string().nullish(),
});
/** A user as returned by the API. */
export type User = z.output<typeof UserSchema>;

const pageSchemas = new WeakMap<z.ZodType, z.ZodType>();

function buildPageSchema<T extends z.ZodType>(item: T) {
  return z.looseObject({
    count: z.number().int().nonnegative(),
    next: z.string().nullish(),
    previous: z.string().nullish(),
    results: z.array(item),
  });
}

/**
 * The page wrapper of paginated lists: `{count, next, previous, results}`. Built once per item schema
 * (zod compiles a schema on first use, so building one per request would cost more than the request).
 */
export function pageSchema<T extends z.ZodType>(item: T): ReturnType<typeof buildPageSchema<T>> {
  let schema = pageSchemas.get(item);
  if (!schema) {
    schema = buildPageSchema(item);
    pageSchemas.set(item, schema);
  }
  return schema as ReturnType<typeof buildPageSchema<T>>;
}

/** One page of a list: `count` is the total, `next`/`previous` are URLs or null. */
export interface Page<T> {
  count: number;
  next?: string | null | undefined;
  previous?: string | null | undefined;
  results: T[];
}

/** Pagination parameters of list operations: `limit` (page size) and `offset` (index of the first result). */
export interface PageParams {
  limit?: number | undefined;
  offset?: number | undefined;
  /** Aborts the request (and any rate-limit or retry wait). */
  signal?: AbortSignal | undefined;
}

/** Organization-scoped operation parameters: `organizationId` defaults to the client's, else `@current`. */
export interface OrgParams {
  organizationId?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** Project-scoped operation parameters: `projectId` defaults to the client's, else `@current`. */
export interface ProjectParams {
  projectId?: string | number | undefined;
  signal?: AbortSignal | undefined;
}

/** Everything a resource module needs from its client. */
export interface ClientContext {
  readonly settings: Settings;
  readonly transport: Transport;
  /** The organization id to use: the param, else the settings', else `@current`. */
  org(p: OrgParams | undefined): string;
  /** The project id to use: the param, else the settings', else `@current`. */
  project(p: ProjectParams | undefined): string;
  /** A list read shared by `find()` calls for `settings.findCacheMs` (dropped on writes under `listPath`). */
  sharedList<T>(listPath: string, load: () => Promise<T[]>): Promise<T[]>;
  /** Drops shared list reads whose path is a prefix of `path` (called after every write). */
  invalidate(path: string): void;
}

/** A list read shared by `find()`: `resolvedAt` is undefined while in flight. */
type SharedLists = Map<string, { promise: Promise<unknown[]>; resolvedAt: number | undefined }>;
const listsByScope = new Map<string, SharedLists>();

/**
 * Creates the context of one client. The shared list reads behind `find()` are kept per scope (key and
 * origin) for the whole process, so clients created per operation (as the provider does) share them too,
 * and a write through any of those clients drops them.
 */
export function createContext(settings: Settings, transport: Transport): ClientContext {
  let lists = listsByScope.get(transport.scope);
  if (!lists) {
    lists = new Map();
    listsByScope.set(transport.scope, lists);
  }
  return {
    settings,
    transport,
    org: (p) => p?.organizationId ?? settings.organizationId ?? "@current",
    project: (p) => (p?.projectId === undefined ? (settings.projectId ?? "@current") : String(p.projectId)),
    sharedList<T>(listPath: string, load: () => Promise<T[]>): Promise<T[]> {
      const hit = lists.get(listPath);
      const now = Date.now();
      if (hit && (hit.resolvedAt === undefined || now - hit.resolvedAt < settings.findCacheMs)) {
        return hit.promise as Promise<T[]>;
      }
      const entry = { promise: load() as Promise<unknown[]>, resolvedAt: undefined as number | undefined };
      lists.set(listPath, entry);
      const forget = () => {
        if (lists.get(listPath) === entry) lists.delete(listPath);
      };
      entry.promise.then(() => {
        entry.resolvedAt = Date.now();
        // drop the data once no client could use it any more (timer does not keep the process alive)
        setTimeout(forget, Math.max(settings.findCacheMs, 1_000)).unref();
      }, forget);
      return entry.promise as Promise<T[]>;
    },
    invalidate(path: string) {
      for (const key of lists.keys()) if (path.startsWith(key)) lists.delete(key);
    },
  };
}

/**
 * Validates a request body before any HTTP request; throws InvalidInputError naming the property. A body the
 * schema accepts unchanged (see {@link acceptsUnchanged}) is returned as it is (the transport serializes it
 * once, before the first attempt); any other goes through zod.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown, what: string): z.output<S> {
  if (acceptsUnchanged(schema)?.(body)) return body as z.output<S>;
  const r = schema.safeParse(body);
  if (!r.success) throw invalidInput(what, r.error);
  return r.data;
}

/** A predicate over a value: true only when the schema it was made from accepts the value unchanged. */
type Accepts = (v: unknown) => boolean;

const acceptors = new WeakMap<z.ZodType, Accepts | null>();

/** The fields of a zod 4 schema definition (`_zod.def`) that {@link acceptsUnchanged} reads. */
export interface ZodDef {
  type: string;
  checks?: { _zod: { def: Record<string, unknown> } }[];
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  values?: unknown[];
  entries?: Record<string, unknown>;
  format?: string;
  /** The input side of a pipe (a transform). */
  in?: z.ZodType;
}

/** The internals of a zod 4 schema: its definition, and `optin` ("optional" when a key may be missing). */
function internalsOf(schema: z.ZodType): { def: ZodDef; optin?: string } {
  return (schema as unknown as { _zod: { def: ZodDef; optin?: string } })._zod;
}

/** The definition of a zod 4 schema (`_zod.def`). */
export function zodDef(schema: z.ZodType): ZodDef {
  return internalsOf(schema).def;
}

/**
 * A plain object (as JSON.parse or an object literal makes), without an own `__proto__` key (zod drops that
 * key). zod takes other objects too (a Date, a class instance) but copies only their own keys: only zod may
 * judge those.
 */
function isRecord(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && !Object.hasOwn(v, "__proto__");
}

/** A length check of a string or array (`min_length`/`max_length`), or null for any other check. */
function lengthCheck(c: Record<string, unknown>): ((n: number) => boolean) | null {
  if (c.check === "min_length") return (n) => n >= (c.minimum as number);
  if (c.check === "max_length") return (n) => n <= (c.maximum as number);
  return null;
}

/** A number check (`.int()`, bounds), or null for any other check. */
function numberCheck(c: Record<string, unknown>): ((n: number) => boolean) | null {
  const bound = c.value as number;
  if (c.check === "number_format" && c.format === "safeint") return Number.isSafeInteger;
  if (c.check === "greater_than") return c.inclusive ? (n) => n >= bound : (n) => n > bound;
  if (c.check === "less_than") return c.inclusive ? (n) => n <= bound : (n) => n < bound;
  return null;
}

/**
 * A `.refine(fn)` check: passes when `fn` returns a truthy value that is not a promise (an async refinement
 * is left to zod). Null for other custom checks (`superRefine`, conditional `when`), which only zod can run.
 */
function refineCheck(c: Record<string, unknown>): ((v: unknown) => boolean) | null {
  if (c.check !== "custom" || typeof c.fn !== "function" || c.when !== undefined) return null;
  const fn = c.fn as (v: unknown) => unknown;
  return (v) => {
    const r = fn(v);
    return Boolean(r) && !(r instanceof Promise);
  };
}

/**
 * Every check of `def`: on the value itself (refinements) or, through `make`, on what `make` reads of it
 * (a length, the number); null when one of them is of a kind neither knows.
 */
function allChecks<T>(
  def: ZodDef,
  make: (c: Record<string, unknown>) => ((x: T) => boolean) | null,
): { on: (x: T) => boolean; refine: (v: unknown) => boolean } | null {
  const on: ((x: T) => boolean)[] = [];
  const refines: ((v: unknown) => boolean)[] = [];
  for (const c of def.checks ?? []) {
    const f = make(c._zod.def);
    const r = f ? undefined : refineCheck(c._zod.def);
    if (f) on.push(f);
    else if (r) refines.push(r);
    else return null;
  }
  return {
    on: on.length === 0 ? () => true : (x) => on.every((f) => f(x)),
    refine: refines.length === 0 ? () => true : (v) => refines.every((f) => f(v)),
  };
}

const noCheck = () => null;

function build(schema: z.ZodType): Accepts | null {
  const def = zodDef(schema);
  switch (def.type) {
    case "unknown":
    case "any":
      return () => true;
    case "null":
      return (v) => v === null;
    case "boolean":
      return def.checks?.length ? null : (v) => typeof v === "boolean";
    case "string": {
      if (def.format !== undefined) return null; // e-mail, uuid, url…: zod's own patterns decide
      const checks = allChecks<number>(def, lengthCheck);
      if (!checks) return null;
      return (v) => typeof v === "string" && checks.on(v.length) && checks.refine(v);
    }
    case "number": {
      const checks = allChecks<number>(def, numberCheck);
      if (!checks) return null;
      return (v) => typeof v === "number" && Number.isFinite(v) && checks.on(v) && checks.refine(v);
    }
    case "literal": {
      const values = new Set(def.values);
      return (v) => values.has(v);
    }
    case "enum": {
      const values = new Set(Object.values(def.entries ?? {}));
      return (v) => values.has(v);
    }
    case "optional":
    case "nullable": {
      const inner = acceptsUnchanged(def.innerType as z.ZodType);
      if (!inner || def.checks?.length) return null;
      return def.type === "optional" ? (v) => v === undefined || inner(v) : (v) => v === null || inner(v);
    }
    case "array": {
      const element = acceptsUnchanged(def.element as z.ZodType);
      const checks = allChecks<number>(def, lengthCheck);
      if (!element || !checks) return null;
      return (v) => {
        if (!Array.isArray(v) || !checks.on(v.length)) return false;
        for (let i = 0; i < v.length; i++) if (!element(v[i])) return false; // holes are undefined, as for zod
        return checks.refine(v);
      };
    }
    case "record": {
      const key = zodDef(def.keyType as z.ZodType);
      const value = acceptsUnchanged(def.valueType as z.ZodType);
      if (key.type !== "string" || key.format !== undefined || key.checks?.length || !value) return null;
      if (def.checks?.length) return null;
      return (v) => {
        if (!isRecord(v)) return false;
        for (const k in v) if (Object.hasOwn(v, k) && !value(v[k])) return false;
        return true;
      };
    }
    case "object": {
      // Only loose objects keep every key, so only they give back the value unchanged.
      const checks = allChecks<never>(def, noCheck);
      if (!def.catchall || zodDef(def.catchall).type !== "unknown" || !checks) return null;
      const props: [string, Accepts, boolean][] = [];
      for (const [k, prop] of Object.entries(def.shape ?? {})) {
        const accepts = acceptsUnchanged(prop);
        if (!accepts) return null;
        // zod lets a key be missing only when its schema is optional (not merely accepting undefined)
        props.push([k, accepts, internalsOf(prop).optin === "optional"]);
      }
      return (v) => {
        if (!isRecord(v)) return false;
        for (const [k, accepts, optional] of props) {
          if (Object.hasOwn(v, k) ? !accepts(v[k]) : !optional) return false;
        }
        return checks.refine(v);
      };
    }
    case "union": {
      const options: Accepts[] = [];
      for (const o of def.options ?? []) {
        const accepts = acceptsUnchanged(o);
        if (!accepts) return null;
        options.push(accepts);
      }
      if (def.checks?.length) return null;
      return (v) => options.some((o) => o(v));
    }
    default:
      return null; // transforms, pipes, defaults, custom checks…: only zod can tell
  }
}

/**
 * A plain predicate compiled once from `schema`: true only for values that `schema` accepts and gives back
 * unchanged (loose objects, records, arrays, optional/nullable, unions, literals, enums, strings with length
 * checks, numbers with `.int()` and bounds, booleans, null, unknown, and `.refine()` on any of them). Null when
 * the schema holds anything else (transforms, defaults, formats, stripping or strict objects, `superRefine`),
 * which only zod can judge.
 * It answers in a fraction of zod's time on a full response; `test/client/accepts.property.test.ts` checks
 * it against zod on generated values.
 */
export function acceptsUnchanged(schema: z.ZodType): Accepts | null {
  let accepts = acceptors.get(schema);
  if (accepts === undefined) {
    accepts = build(schema);
    acceptors.set(schema, accepts);
  }
  return accepts;
}

/**
 * Parses a response body; throws UnexpectedResponseError naming the field and the expectation. A body the
 * schema accepts unchanged (see {@link acceptsUnchanged}) is returned as it is; any other goes through zod,
 * which transforms it or names what is wrong.
 */
export function parseResponse<S extends z.ZodType>(
  schema: S,
  res: HttpResponse,
  method: HttpMethod,
  path: string,
): z.output<S> {
  if (acceptsUnchanged(schema)?.(res.body)) return res.body as z.output<S>;
  const r = schema.safeParse(res.body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where = issue ? `${issue.path.join(".") || "(body)"}: ${issue.message}` : "invalid";
  throw new UnexpectedResponseError(
    { method, path, status: res.status, detail: `unexpected response shape: ${where}` },
    undefined,
  );
}

/** Sends a request and parses the response with `schema`. Writes invalidate shared list reads. */
export function call<S extends z.ZodType>(
  ctx: ClientContext,
  req: HttpRequest,
  schema: S,
): Promise<z.output<S>> {
  if (req.method === "GET") {
    return ctx.transport.send(req).then((res) => parseResponse(schema, res, req.method, req.path));
  }
  return ctx.transport.send(req).then(
    (res) => {
      ctx.invalidate(req.path);
      return parseResponse(schema, res, req.method, req.path);
    },
    (err: unknown) => {
      ctx.invalidate(req.path);
      throw err;
    },
  );
}

/** Fetches one page of a paginated list. */
export function listPage<S extends z.ZodType>(
  ctx: ClientContext,
  listPath: string,
  item: S,
  params: PageParams | undefined,
): Promise<Page<z.output<S>>> {
  return call(
    ctx,
    {
      method: "GET",
      path: listPath,
      query: { limit: params?.limit, offset: params?.offset },
      signal: params?.signal,
    },
    pageSchema(item),
  ) as Promise<Page<z.output<S>>>;
}

/**
 * Iterates every item of a paginated list, following `next` (its `limit`/`offset` are re-requested on
 * the client's own origin and path, so a proxy-rewritten absolute URL cannot redirect the key).
 */
export async function* iteratePages<S extends z.ZodType>(
  ctx: ClientContext,
  listPath: string,
  item: S,
  params: PageParams | undefined,
): AsyncGenerator<z.output<S>, void, undefined> {
  let limit = params?.limit ?? ctx.settings.pageSize;
  let offset = params?.offset ?? 0;
  for (let guard = 0; guard < 100_000; guard++) {
    const page = await listPage(ctx, listPath, item, { limit, offset, signal: params?.signal });
    yield* page.results;
    if (!page.next || page.results.length === 0) return;
    const next = new URL(page.next, "http://placeholder");
    const nextOffset = Number(next.searchParams.get("offset") ?? Number.NaN);
    const nextLimit = Number(next.searchParams.get("limit") ?? Number.NaN);
    // a `next` that does not move forward (a misbehaving proxy) falls back to counting the results seen
    offset = Number.isFinite(nextOffset) && nextOffset > offset ? nextOffset : offset + page.results.length;
    if (Number.isFinite(nextLimit) && nextLimit > 0) limit = nextLimit;
  }
}

/** Collects every item of a paginated list into one array. */
export async function collectAll<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of items) out.push(x);
  return out;
}

/**
 * The three reads of a paginated list endpoint (GET `listPath(p)`, query `limit`/`offset`): `list` → one page
 * `{count, next, previous, results}`; `iterate` → every item, following `next`; `all` → every item in one
 * array. Items are parsed with `item`. @throws the errors of {@link call}.
 */
export function listOperations<P extends PageParams, S extends z.ZodType>(
  ctx: ClientContext,
  listPath: (p: P | undefined) => string,
  item: S,
) {
  return {
    list: (p?: P) => listPage(ctx, listPath(p), item, p),
    iterate: (p?: P) => iteratePages(ctx, listPath(p), item, p),
    all: (p?: P) => collectAll(iteratePages(ctx, listPath(p), item, p)),
  };
}
