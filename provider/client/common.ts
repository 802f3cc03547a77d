/**
 * Shared pieces of the resource modules: the embedded user schema, the page wrapper, body and response
 * parsing (zod's `safeParse`, through its public API only), pagination (readList: whole, checked list reads
 * behind iterate / all), the short-lived shared list reads behind `find()` (kept in the run's `ClientShared`),
 * and the per-client context every resource module receives.
 */
import { z } from "zod";
import { asListRead, InconsistentListError, UnexpectedResponseError } from "./errors";
import { invalidInput, type Settings } from "./settings";
import type { ClientShared } from "./shared";
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

function buildPageSchema<T extends z.ZodType>(item: T) {
  return z.looseObject({
    count: z.number().int().nonnegative(),
    next: z.string().nullish(),
    previous: z.string().nullish(),
    results: z.array(item),
  });
}

/** The page schema of items of schema `S`, as {@link pageSchema} makes it. */
export type PageSchema<S extends z.ZodType> = ReturnType<typeof buildPageSchema<S>>;

/**
 * The page wrapper of paginated lists: `{count, next, previous, results}`, a new schema on each call. Make it once
 * per item schema and keep it (each resource module holds its own as a constant): zod compiles a schema on first
 * use, so building one per request would cost more than the request.
 */
export function pageSchema<T extends z.ZodType>(item: T): PageSchema<T> {
  return buildPageSchema(item);
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
  /** What the client shares with the other clients of its run (`createClient({ shared })`). */
  readonly shared: ClientShared;
  /** The organization id to use: the param, else the settings', else `@current`. */
  org(p: OrgParams | undefined): string;
  /** The project id to use: the param, else the settings', else `@current`. */
  project(p: ProjectParams | undefined): string;
  /** A list read shared by `find()` calls for `settings.findCacheMs` (dropped on writes under `listPath`). */
  sharedList<T>(listPath: string, load: () => Promise<T[]>): Promise<T[]>;
  /** Drops shared list reads whose path is a prefix of `path` (called after every write). */
  invalidate(path: string): void;
}

/** The list reads shared by `find()` in one scope, by list path: `resolvedAt` is undefined while in flight. */
export type SharedLists = Map<string, { promise: Promise<unknown[]>; resolvedAt: number | undefined }>;

/**
 * Creates the context of one client. The shared list reads behind `find()` are kept in `shared` per scope (key
 * and origin), so the clients of one run created per operation (as the provider does) share them too, and a
 * write through any of those clients drops them.
 */
export function createContext(settings: Settings, transport: Transport, shared: ClientShared): ClientContext {
  let lists = shared.findLists.get(transport.scope);
  if (!lists) {
    lists = new Map();
    shared.findLists.set(transport.scope, lists);
  }
  return {
    settings,
    transport,
    shared,
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
 * Validates a request body with `schema` (zod's `safeParse`) before any HTTP request, and returns what zod
 * gives back (defaults applied, loose objects keeping unknown keys); the transport serializes it once,
 * before the first attempt.
 * @throws InvalidInputError naming the property (`what` and zod's path) and what it accepts.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown, what: string): z.output<S> {
  const r = schema.safeParse(body);
  if (!r.success) throw invalidInput(what, r.error);
  return r.data;
}

/**
 * Parses a response body with `schema` (zod's `safeParse`, once per response) and returns zod's output:
 * response schemas are loose objects, so fields the client does not know are kept; transforms apply.
 * @throws UnexpectedResponseError (with `method`, `path`, the status) naming the first wrong field and the
 * expectation, e.g. `unexpected response shape: results.0.level: Invalid input…`.
 */
export function parseResponse<S extends z.ZodType>(
  schema: S,
  res: HttpResponse,
  method: HttpMethod,
  path: string,
): z.output<S> {
  const r = schema.safeParse(res.body);
  if (r.success) return r.data;
  throw new UnexpectedResponseError(
    {
      method,
      path,
      status: res.status,
      detail: `unexpected response shape: ${firstIssue(r.error, "(body)")}`,
    },
    undefined,
  );
}

/**
 * The first problem of a zod error as `path: message` (`whole` names the value itself when the path is empty),
 * e.g. `results.0.level: Invalid input: expected number, received string`; "invalid" when zod gave none.
 */
export function firstIssue(error: z.ZodError, whole: string): string {
  const issue = error.issues[0];
  return issue ? `${issue.path.map(String).join(".") || whole}: ${issue.message}` : "invalid";
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

/**
 * Fetches one page of a paginated list. A 404 is a failed list read (`missing: "list"`, {@link asListRead}), never
 * "the object is gone".
 */
export function listPage<S extends z.ZodType>(
  ctx: ClientContext,
  listPath: string,
  schema: PageSchema<S>,
  params: PageParams | undefined,
): Promise<Page<z.output<S>>> {
  return asListRead(
    call(
      ctx,
      {
        method: "GET",
        path: listPath,
        query: { limit: params?.limit, offset: params?.offset },
        signal: params?.signal,
      },
      schema,
    ),
  ) as Promise<Page<z.output<S>>>;
}

/** Pages of one list read at the same time (after the first, which gives the count and the server's page step). */
export const PAGE_CONCURRENCY = 8;

/** The `offset` and `limit` of a page link (`next`), NaN when absent; only these are taken from it. */
function linkOf(url: string): { offset: number; limit: number } {
  const link = new URL(url, "http://placeholder");
  return {
    offset: Number(link.searchParams.get("offset") ?? Number.NaN),
    limit: Number(link.searchParams.get("limit") ?? Number.NaN),
  };
}

/** An item's identity for the duplicate check: its `id` (every paginated kind has one), else undefined. */
const idOf = (x: unknown): string | undefined => {
  const id = (x as { id?: unknown } | null)?.id;
  return typeof id === "string" || typeof id === "number" ? String(id) : undefined;
};

/**
 * One read of the whole list: the first page (at `params.offset`, default 0), then the pages after it by offset,
 * {@link PAGE_CONCURRENCY} at a time, each checked against the first: the same `count`, as many items as its
 * `next` link steps over (the rest of `count` on the last page), a `next` exactly one page on (null on the last),
 * no item twice. Returns the items in list order, or what disagreed first (then no more pages are asked for).
 */
async function readListOnce<S extends z.ZodType>(
  ctx: ClientContext,
  listPath: string,
  schema: PageSchema<S>,
  params: PageParams | undefined,
): Promise<{ items: z.output<S>[] } | { problem: string }> {
  const start = params?.offset ?? 0;
  let limit = params?.limit ?? ctx.settings.pageSize;
  const signal = params?.signal;
  const head = await listPage(ctx, listPath, schema, { limit, offset: start, signal });
  const count = head.count;
  const pages: { offset: number; results: z.output<S>[] }[] = [{ offset: start, results: head.results }];
  let problem: string | undefined;
  /** What is wrong with the page at `offset`, else undefined; `step` is the server's page size. */
  const check = (offset: number, page: Page<z.output<S>>, step: number): string | undefined => {
    if (page.count !== count)
      return `the count changed from ${count} (page at offset ${start}) to ${page.count} (page at offset ${offset})`;
    const last = offset + step >= count;
    if (!page.next) {
      const due = Math.max(0, count - offset);
      return page.results.length === due
        ? undefined
        : `the page at offset ${offset} is the last (no next) with ${page.results.length} items, but count ${count} leaves ${due} from there`;
    }
    const next = linkOf(page.next);
    if (!(next.offset > offset))
      return `page loop: the page at offset ${offset} links its next page at offset ${Number.isNaN(next.offset) ? "(none)" : next.offset}, not after it`;
    if (last)
      return `the page at offset ${offset} links a next page at offset ${next.offset}, beyond count ${count}`;
    if (next.offset !== offset + step || page.results.length !== step)
      return `the page at offset ${offset} holds ${page.results.length} items and links its next page at offset ${next.offset}; ${step} a page were due`;
    return undefined;
  };
  if (head.next) {
    const next = linkOf(head.next);
    if (!(next.offset > start)) return { problem: check(start, head, 1) ?? "page loop" };
    const step = next.offset - start;
    if (Number.isFinite(next.limit) && next.limit > 0) limit = next.limit;
    problem = check(start, head, step);
    const offsets: number[] = [];
    for (let o = start + step; o < count && offsets.length < 100_000; o += step) offsets.push(o);
    if (problem === undefined && offsets.length === 0)
      problem = `the page at offset ${start} links a next page at offset ${next.offset}, beyond count ${count}`;
    let at = 0;
    let failed = false;
    const worker = async () => {
      while (!failed && problem === undefined && at < offsets.length) {
        const offset = offsets[at++] as number;
        let page: Page<z.output<S>>;
        try {
          page = await listPage(ctx, listPath, schema, { limit, offset, signal });
        } catch (e) {
          failed = true; // the other workers ask for no more pages
          throw e;
        }
        problem ??= check(offset, page, step);
        pages.push({ offset, results: page.results });
      }
    };
    await Promise.all(Array.from({ length: Math.min(PAGE_CONCURRENCY, offsets.length) }, worker));
  } else {
    problem = check(start, head, Math.max(1, count - start));
  }
  if (problem !== undefined) return { problem };
  pages.sort((a, b) => a.offset - b.offset);
  const items: z.output<S>[] = [];
  const seen = new Map<string, number>();
  for (const page of pages) {
    for (const x of page.results) {
      const id = idOf(x);
      if (id !== undefined) {
        const before = seen.get(id);
        if (before !== undefined)
          return { problem: `item ${id} is on two pages (offsets ${before} and ${page.offset})` };
        seen.set(id, page.offset);
      }
      items.push(x);
    }
  }
  return { items };
}

/**
 * Every item of the paginated list at `listPath` (GET, query `limit`/`offset`), read whole and checked, or an
 * error: never part of a list. The first page (`params.offset`, default 0; `params.limit`, default the client's
 * `pageSize`) gives the `count` and the server's page step (from its `next` link: only that link's `offset` and
 * `limit` are taken, re-requested on the client's own origin and path, so a proxy-rewritten absolute URL cannot
 * redirect the key); the other pages are then read by offset, {@link PAGE_CONCURRENCY} at a time (each one request
 * paced by the client's rate limit), so N pages cost N requests and about two round trips, not N.
 *
 * What counts as a disagreement (PostHog's `count` is the list's size when that page was read, and objects may be
 * created or deleted meanwhile): a page loop (a `next` that does not point past its own page), a `count` that
 * differs from the first page's, a page holding more or fewer items than its `next` steps over (or than `count`
 * leaves for the last page), a `next` on the last page, an item (by `id`) on two pages. Any change of the list
 * during the read can hide an object from it (one deleted before the read's position shifts another past it), so
 * the list is read again once, whole; a second disagreement throws. A busy organization therefore fails a list
 * read only when the list changed during two reads in a row.
 * @throws InconsistentListError naming the list and what disagreed; the errors of {@link listPage}.
 */
export async function readList<S extends z.ZodType>(
  ctx: ClientContext,
  listPath: string,
  schema: PageSchema<S>,
  params: PageParams | undefined,
): Promise<z.output<S>[]> {
  const first = await readListOnce(ctx, listPath, schema, params);
  if ("items" in first) return first.items;
  const second = await readListOnce(ctx, listPath, schema, params);
  if ("items" in second) return second.items;
  throw new InconsistentListError({ method: "GET", path: listPath, detail: second.problem });
}

/**
 * Iterates every item of a paginated list: {@link readList} (the whole list is read and checked before the first
 * item is yielded, so a caller never sees part of a list that then fails).
 */
export async function* iteratePages<S extends z.ZodType>(
  ctx: ClientContext,
  listPath: string,
  schema: PageSchema<S>,
  params: PageParams | undefined,
): AsyncGenerator<z.output<S>, void, undefined> {
  yield* await readList(ctx, listPath, schema, params);
}

/** Collects every item of a paginated list into one array. */
export async function collectAll<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of items) out.push(x);
  return out;
}

/**
 * Every item of the paginated list at `listPath`, from a list read shared by the client's concurrent and recent
 * `find()` calls ({@link ClientContext.sharedList}, `coalescing.findCacheMs`): N finds in one list cost
 * ⌈count/pageSize⌉ requests. Pages of the client's `pageSize`, parsed with `schema` (the list's
 * {@link pageSchema}); no caller's signal (the read is shared). @throws the errors of {@link call}.
 */
export function sharedAll<S extends z.ZodType>(
  ctx: ClientContext,
  listPath: string,
  schema: PageSchema<S>,
): Promise<z.output<S>[]> {
  return ctx.sharedList(listPath, () => readList(ctx, listPath, schema, undefined));
}

/**
 * The three reads of a paginated list endpoint (GET `listPath(p)`, query `limit`/`offset`): `list` → one page
 * `{count, next, previous, results}`; `iterate` → every item; `all` → every item in one array (both read the whole
 * list and check its pages: {@link readList}). Pages are parsed with `schema`, the list's {@link pageSchema}.
 * @throws the errors of {@link call}; InconsistentListError from `iterate` and `all`.
 */
export function listOperations<P extends PageParams, S extends z.ZodType>(
  ctx: ClientContext,
  listPath: (p: P | undefined) => string,
  schema: PageSchema<S>,
) {
  return {
    list: (p?: P) => listPage(ctx, listPath(p), schema, p),
    iterate: (p?: P) => iteratePages(ctx, listPath(p), schema, p),
    all: (p?: P) => readList(ctx, listPath(p), schema, p),
  };
}
