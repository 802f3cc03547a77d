/**
 * Lost creates: what a create may adopt when its answer was lost (issue 12, points 2 and 3; issue 49, items 6 and 7).
 *
 * A create whose POST got no usable answer (AmbiguousWriteError: 5xx, reset, dropped response) may or may not
 * have made its object. The rule: it adopts only an object that THIS operation provably made; never one another
 * resource of the run made or manages, never one that existed before the operation, never one someone else made
 * meanwhile. When it cannot prove it, it fails and names the candidates and the input that adopts explicitly.
 *
 * The proof (Project, Dashboard): the create names its object provisionally, the declared name followed by a marker
 * with a nonce of its own (` [pulumi create <stack tag>-<resource tag>-<nonce>]`, {@link provisionalName}), written in
 * the create journal before the POST, and renames it to the declared name in one PATCH once it has the answer. The
 * object that carries the nonce is this create's, and nothing else is: a look-alike someone made by hand during the
 * wait carries none, so it is never taken. A create that never saw its answer (a lost answer, a killed run) leaves an
 * object that any later run recognises: by the nonce of the journal's entry, or, without the journal (a fresh CI
 * runner), by the tags of its stack and resource. Invites carry no marker (PostHog's invite has no field to spare:
 * every one reaches the invitation e-mail, and an invite cannot be updated): an invite is provably a create's only by
 * the id its answer gave, so after an unknown outcome a pending invite of the address is never taken for this
 * create's (the create fails naming it and `adopt: true`, sending nothing).
 *
 * What else is known, per provider host process (one per Pulumi run, see provider/framework/claims.ts):
 * - every create of the process is registered with its type, scope (organization or project) and object name,
 *   and the time it started and ended ({@link beginCreate});
 * - every id a resource of the run holds is taken: the ids creates of this process returned (made or adopted),
 *   and the ids existing resources hold (seen by `diff`, `read`, `update`, `delete`: {@link markManaged});
 * - a create whose outcome stays unknown keeps its journal entry; an object such a create made that appears after
 *   the resource was made again, or that no later create of the resource adopts, is reported by the stack's next
 *   operations ({@link reportLostObjects}).
 *
 * Three shapes of create use these primitives ({@link beginCreate}); the protocol itself (one at a time per name,
 * the journal before the write, the watermark, settling an unknown outcome, adopting only what is proved) is written
 * once, here:
 * - an object the create names ({@link provisionalCreate}: Project, Dashboard) is proved by its marker;
 * - a Domain is unique across PostHog and carries no marker: its create reads the organization's domains before
 *   the journal entry (a domain of that name there then is adopted with `adopt: true` or refused), so after a lost
 *   answer the domain of that name is the one it made; it also checks SAML on the answer and deletes a domain made
 *   only for a refusal. Its sequence (resources/domain.ts `create`) calls the primitives in that order;
 * - an Invite carries no marker and is not unique over time (PostHog keeps one pending invite per address, and a
 *   person may send one meanwhile): it is proved only by the id its answer gave, so after a lost answer it never
 *   adopts ({@link CreateOperation.settleLost} fails naming the invite and `adopt: true`); its POST is coalesced
 *   with the invites created together (resources/invite.ts `send`).
 * A fourth option for these two would be one flag per difference; each keeps its sequence beside its card instead,
 * with the same primitives and the same tests (test/provider/lost-create-adoption.test.ts, test/stack/look-alikes).
 *
 * Limits (docs/how-it-works/lost-creates.md): across processes (an engine killed mid-create) the create journal
 * (provider/framework/create-journal.ts) tells the next run what the dead create was; a fresh runner without it recognises an
 * object by its marker only in the list read its first create makes in that scope.
 */

import { createHash, randomBytes } from "node:crypto";
import type { PostHogClient } from "../client";
import { docsLink, withoutDocsLink } from "../client/docs-link";
import { AmbiguousWriteError, InvalidInputError, ServerError } from "../client/errors";
import { parseDurationMs } from "../client/settings";
import {
  abandonCreate,
  type Completions,
  completeCreate,
  dropUnknown,
  forgetCreate,
  type JournalEntry,
  type JournalKey,
  journalDir,
  journalHost,
  pendingCreate,
  recordCreate,
  settled,
  unknownOutcomes,
} from "./create-journal";
import { engineReachable } from "./engine-watch";

/** Where the errors of a create whose answer was lost point: the lost-create section, the unknown outcome's. */
const LOST_CREATES = docsLink("troubleshooting/adoption.md", "lost-creates-and-adoption");
const OUTCOME_UNKNOWN = docsLink("troubleshooting/adoption.md", "the-outcome-of-a-create-is-unknown");

/** Clock difference allowed between this host and PostHog's `created_at`, in ms, on each side of the window. */
export const CLOCK_SKEW_MS = 60_000;

/**
 * Default of `POSTHOG_LOST_CREATE_WAIT` (ms): how long, within the run, a create whose answer was lost while PostHog
 * may still be processing it (a timeout, a reset, a gateway's 502/504) keeps reading the list for the object it
 * made, before it ends with its outcome unknown. Reads at 1, 2, 4 and 8 s: 4 list reads at most.
 */
export const LOST_CREATE_WAIT_MS = 15_000;

/**
 * Default of `POSTHOG_LOST_CREATE_WINDOW` (ms): 10 minutes. A create whose outcome is unknown (its answer lost, or
 * its run killed) is taken as not applied only by a list read that starts at least this long after the create
 * started and shows no object it could have made. PostHog's web server sets no time limit on a request (its
 * unit.json.tpl has none), so a request held by a slow database or a proxy may be applied long after the client
 * gave up: until then, a read that shows nothing proves nothing.
 */
export const LOST_CREATE_WINDOW_MS = 600_000;

/**
 * How long, beyond `POSTHOG_LOST_CREATE_WINDOW`, the journal keeps the entry of a create whose outcome stayed unknown
 * while no object it made appears (ms): 24 hours. Until then every later run of the stack looks for that object
 * (one list read of its scope per run, only while such an entry exists) and reports it if PostHog applied the
 * create late ({@link reportLostObjects}); after it, the entry is dropped.
 */
export const UNKNOWN_OUTCOME_KEPT_MS = 86_400_000;

/**
 * A duration from the environment variable `name`: whole seconds (`"15"`), or with a unit s, m or h (`"90s"`,
 * `"10m"`); `fallback` (ms) when unset or empty.
 * @throws InvalidInputError naming the variable and the accepted forms
 */
export function envDuration(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const ms = parseDurationMs(raw);
  if (ms === undefined) {
    throw new InvalidInputError(
      name,
      `Invalid ${name} ${JSON.stringify(raw)}: expected whole seconds ("15"), or with a unit s, m or h ("90s", "10m", "1h")`,
    );
  }
  return ms;
}

/**
 * The in-run wait and the window of lost creates, from `POSTHOG_LOST_CREATE_WAIT` (default
 * {@link LOST_CREATE_WAIT_MS}) and `POSTHOG_LOST_CREATE_WINDOW` (default {@link LOST_CREATE_WINDOW_MS}), in ms.
 * Read at every use (the provider host's environment is the CLI's); `check` calls it first, so a malformed value
 * fails before any request.
 * @throws InvalidInputError naming the variable and the accepted forms
 */
export function lostCreateTimes(): { waitMs: number; windowMs: number } {
  return {
    waitMs: envDuration("POSTHOG_LOST_CREATE_WAIT", LOST_CREATE_WAIT_MS),
    windowMs: envDuration("POSTHOG_LOST_CREATE_WINDOW", LOST_CREATE_WINDOW_MS),
  };
}

/**
 * Whether PostHog may still be processing the write whose answer `lost` is: true for a connection failure (a
 * timeout, a reset, a dropped answer) and for any 5xx but one PostHog's own error handler rendered after the view
 * ended (500 or 503 with its `server_error` body); a gateway's 502 or 504 says nothing of the request behind it.
 * False when `lost` is undefined (the write answered 2xx, without the object).
 */
export function mayStillApply(lost: Error | undefined): boolean {
  if (lost === undefined) return false;
  const cause = lost.cause instanceof Error ? lost.cause : lost;
  return !(
    cause instanceof ServerError &&
    (cause.status === 500 || cause.status === 503) &&
    cause.type === "server_error"
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/**
 * Whether `x` was created (its server `created_at`) between `from` and `to` (epoch ms of this machine's clock),
 * each side widened by {@link CLOCK_SKEW_MS}; false when `created_at` is missing or not a date.
 */
function createdWithin(x: Candidate, from: number, to = Number.POSITIVE_INFINITY): boolean {
  const at = x.created_at ? Date.parse(x.created_at) : Number.NaN;
  return at >= from - CLOCK_SKEW_MS && at <= to + CLOCK_SKEW_MS;
}

/**
 * Whether `x` may have been made by a create whose objects all have ids above `after` (integer ids grow with each
 * create in PostHog's tables): true when `after` is unknown or either id is not an integer.
 */
function above(x: Candidate, after: number | undefined): boolean {
  const id = Number(x.id);
  return after === undefined || !Number.isInteger(id) || id > after;
}

/**
 * The marker a create that names its object provisionally puts after the name: the tags of its stack and resource
 * (8 hex digits each, {@link tagOf}) and its nonce (12 hex digits, random). See {@link provisionalName}.
 */
export interface Marker {
  stack: string;
  resource: string;
  nonce: string;
}

/** A provisional name's marker, at the end of the name: ` [pulumi create <stack>-<resource>-<nonce>]`. */
const MARKER_PATTERN = / \[pulumi create ([0-9a-f]{8})-([0-9a-f]{8})-([0-9a-f]{12})\]$/;

/** The length of every marker ({@link Marker}): 47 characters. */
export const MARKER_LENGTH = ` [pulumi create ${"0".repeat(8)}-${"0".repeat(8)}-${"0".repeat(12)}]`.length;

/** The marker at the end of an object's name, or undefined when the name carries none (or is not a string). */
export function markerOf(name: unknown): Marker | undefined {
  if (typeof name !== "string") return undefined;
  const m = MARKER_PATTERN.exec(name);
  return m ? { stack: m[1] as string, resource: m[2] as string, nonce: m[3] as string } : undefined;
}

/** 8 hex digits of the SHA-256 of `text`: a stack's or resource's tag in a marker (not secret, not reversible). */
export function tagOf(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 8);
}

/**
 * The provisional name of a create's object: `base` followed by the marker, ` [pulumi create <stack>-<resource>-
 * <nonce>]`, `base` cut so that the whole is at most `limit` UTF-16 code units (the API's limit counts characters,
 * never more than code units: a Dashboard's 400, a Project's 200), never inside a surrogate pair.
 */
export function provisionalName(base: string, limit: number, marker: Marker): string {
  const tail = ` [pulumi create ${marker.stack}-${marker.resource}-${marker.nonce}]`;
  let cut = base.slice(0, Math.max(0, limit - tail.length));
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return `${cut}${tail}`;
}

/**
 * Runs `create` once every earlier create of an object of the same type, scope and name in this process has
 * settled. Look-alike creates (twelve dashboards named "KPIs") thus run one at a time, so that at any moment at
 * most one of them may be on the wire without an answer, and each one's journal entry can name the ids the
 * earlier ones made ({@link CreateOperation.journal}). If the engine is gone by the time a create that waited
 * would start, it is not started: it throws, sending nothing. Creates of other names run concurrently.
 * @returns what `create` returns; @throws what it throws (a failed create does not stop the next one)
 */
export function oneAtATime<T>(
  run: Creates,
  type: string,
  scope: string,
  name: string,
  create: () => Promise<T>,
): Promise<T> {
  const key = `${type}\n${scope}\n${name}`;
  const queued = run.queues.get(key);
  const before = queued ?? Promise.resolve();
  // A create that waited its turn starts only if the engine can still record it: a CLI killed meanwhile leaves the
  // host running what is under way, and a queued create would make an object no engine asked to finish.
  const start = async () => {
    if (queued && !(await engineReachable())) {
      throw new Error(
        `${type} "${name}": not created: the Pulumi engine that asked for it is gone (the run was killed while an ` +
          "earlier create of the same name was under way); nothing was sent. Run pulumi up again" +
          docsLink("troubleshooting/gone-and-interrupted.md", "interrupted-runs-pending-operations-protect"),
      );
    }
    return create();
  };
  const started = before.then(start, start);
  const tail = started.catch(() => undefined);
  run.queues.set(key, tail);
  void tail.then(() => {
    if (run.queues.get(key) === tail) run.queues.delete(key);
  });
  return started;
}

/**
 * The highest integer id among the objects of `type` in `scope` (an organization or project id) that `list`
 * returns, read once per process at the first create there (one list read per run and scope, shared): every
 * object a create of this process makes later has a greater id, so a later run that looks for what a killed create
 * made never takes an object that existed before it (README, "Lost creates"). Undefined when the list fails (the
 * create goes on; its recovery then relies on names, creation times and the ids the run holds).
 * @param list e.g. `() => api.dashboards.all({projectId})` (GET `…/dashboards/`, list pages)
 */
export function idWatermark(
  run: Creates,
  type: string,
  scope: string,
  list: () => Promise<readonly Candidate[]>,
): Promise<number | undefined> {
  return watermarkRead(run, type, scope, list).then((read) => read?.after);
}

/**
 * The objects of `type` in `scope` whose names carry a marker ({@link markerOf}: a create's provisional name), as
 * the list read of {@link idWatermark} showed them (the same read: no request of its own); empty when it failed. A
 * create without the journal (a fresh CI runner) recognises there an object an earlier create of its resource made
 * and never renamed ({@link CreateOperation.leftover}).
 */
export function markedObjects(
  run: Creates,
  type: string,
  scope: string,
  list: () => Promise<readonly Candidate[]>,
): Promise<Candidate[]> {
  return watermarkRead(run, type, scope, list).then((read) => read?.marked ?? []);
}

/** The list read behind {@link idWatermark} and {@link markedObjects}: once per process, type and scope. */
function watermarkRead(
  run: Creates,
  type: string,
  scope: string,
  list: () => Promise<readonly Candidate[]>,
): Promise<{ after: number; marked: Candidate[] } | undefined> {
  const key = `${type}\n${scope}`;
  let known = run.watermarks.get(key);
  if (!known) {
    known = list().then(
      (items) => {
        const ids = items.map((x) => Number(x.id)).filter(Number.isInteger);
        const marked = items
          .filter((x) => markerOf(x.name) !== undefined)
          .map((x) => ({ id: x.id, name: x.name, created_at: x.created_at }));
        return { after: ids.length > 0 ? Math.max(...ids) : 0, marked };
      },
      () => {
        run.watermarks.delete(key); // the next create tries again
        return undefined;
      },
    );
    run.watermarks.set(key, known);
  }
  return known;
}

export interface CreateRecord {
  key: string;
  started: number;
  ended: number | undefined;
  /** The id this create resolved to (made or adopted); undefined while in flight or when it stayed unknown. */
  id: string | undefined;
  /** True when it ended with a definite answer that made nothing (e.g. 400). */
  madeNothing: boolean;
  /** True when its answer was lost and it ended without knowing what it made (see `lost`). */
  lost: boolean;
  /**
   * True when PostHog had finished processing its write when the answer came (its own 5xx): a later read shows
   * all the write made. False while PostHog may still be applying it ({@link mayStillApply}).
   */
  finished: boolean;
  /** The Pulumi resource name, when the SDK passed it. */
  resource: string | undefined;
  /** The nonce of its marker, when it names its object provisionally ({@link provisionalName}). */
  nonce: string | undefined;
  /**
   * Every object this create could have made has a greater (integer) id: set by {@link CreateOperation.journal}
   * (see {@link idWatermark}); undefined when unknown or when ids are not integers.
   */
  after: number | undefined;
}

/**
 * Whether a read that started at `readAt` (epoch ms) shows all that create `r` made: PostHog had finished with its
 * write when it answered ({@link CreateRecord.finished}), or the read started `POSTHOG_LOST_CREATE_WINDOW` after it.
 */
function decided(r: CreateRecord, readAt: number): boolean {
  return r.finished || readAt >= r.started + lostCreateTimes().windowMs;
}

/** A duration for messages: "10 min", "90 s". */
function windowText(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}

/**
 * What one run knows of its creates (a field of provider/framework/run.ts `Run`; the engine starts one provider host
 * per deployment, so a run is one process).
 */
export interface Creates {
  /** The tail of the queue of creates of each `type\nscope\nname` ({@link oneAtATime}). */
  readonly queues: Map<string, Promise<unknown>>;
  /**
   * The list read of each `type\nscope` behind {@link idWatermark}, once read in this run: the highest integer id,
   * and the objects whose names carry a marker ({@link markerOf}).
   */
  readonly watermarks: Map<string, Promise<{ after: number; marked: Candidate[] } | undefined>>;
  /** Every create of the run ({@link beginCreate}). */
  readonly records: CreateRecord[];
  /** `type\nid` of every object a resource of this run holds. */
  readonly taken: Set<string>;
  /**
   * The Pulumi project and stack of the run's deployment (`<project>/<stack>`), or undefined until a call brought it
   * (provider/framework/lifecycle.ts `check` records it from its call).
   */
  stack: string | undefined;
  /** `type\nid` of objects a create of this run made from nothing (its POST answered with the new object). */
  readonly fromScratch: Set<string>;
  /** What {@link reportLostObjects} needs of each type whose creates name their objects provisionally, by type. */
  readonly kinds: ReadonlyMap<string, LostObjectKind>;
  /** The searches of {@link reportLostObjects} (per stack and kind of search), and the nonces it reported. */
  readonly search: { runs: Map<string, Promise<LostObject[]>>; reported: Set<string> };
  /** The journal's completion records being written (provider/framework/create-journal.ts `completeCreate`). */
  readonly completing: Completions;
}

/** What a new run knows of its creates: nothing yet; `kinds` from the resources' cards (`lostObjects`). */
export function newCreates(kinds: ReadonlyMap<string, LostObjectKind>): Creates {
  return {
    queues: new Map(),
    watermarks: new Map(),
    records: [],
    taken: new Set(),
    stack: undefined,
    fromScratch: new Set(),
    kinds,
    search: { runs: new Map(), reported: new Set() },
    completing: new Set(),
  };
}

/**
 * Records that a create of this process made object `id` of `type` itself, from nothing (a plain POST answered
 * with it: not adopted, not recovered, not a copy of another object): what it holds now is only what this run
 * puts there (e.g. a new dashboard has no collaborators but those this run adds).
 */
export function noteMadeFromScratch(run: Creates, type: string, id: string): void {
  run.fromScratch.add(`${type}\n${id}`);
}

/** Whether a create of this process made object `id` of `type` from nothing ({@link noteMadeFromScratch}). */
export function madeFromScratch(run: Creates, type: string, id: string): boolean {
  return run.fromScratch.has(`${type}\n${id}`);
}

/** Records that a resource of this run holds object `id` of `type` (e.g. "Project", "1001"). */
export function markManaged(run: Creates, type: string, id: string): void {
  if (id) run.taken.add(`${type}\n${id}`);
}

/**
 * An operation of the run on an existing resource (diff, refresh, update, delete) holds object `id` of `type`: it
 * is taken, and the engine recorded it, so the create journal's entry for it is removed.
 */
export async function managedByState(run: Creates, type: string, id: string): Promise<void> {
  markManaged(run, type, id);
  await settled(type, id);
}

/** An object seen in a list after a lost create: its id, name and server creation time (ISO 8601). */
export interface Candidate {
  id: number | string;
  name?: string | null | undefined;
  created_at?: string | null | undefined;
}

/** Where a create is journaled across processes: known only when the SDK passed the resource's name. */
export interface JournalContext {
  host: string;
  organization: string;
  /** The Pulumi resource name (from the operation's call); without it (or without the stack) nothing is journaled. */
  resource: string | undefined;
}

/**
 * The journal context of a create made with client settings `settings` for the resource named `resource` (the
 * operation's call; undefined: nothing is journaled).
 */
export function journalContext(
  settings: { host: string; organizationId?: string | undefined },
  resource: string | undefined,
): JournalContext {
  return { host: settings.host, organization: settings.organizationId ?? "", resource };
}

/** What {@link beginCreate} is told of a create beyond its type, scope and name. */
export interface CreateOptions {
  /**
   * The create names its object provisionally ({@link provisionalName}) and renames it once it has the answer:
   * the object that carries its nonce is provably its own (Project, Dashboard).
   */
  provisional?: boolean;
  /** Other names its object, or a look-alike someone made, may carry (a Dashboard from `templateJson`: the declared one). */
  names?: readonly string[];
}

/** One create of this process; see {@link beginCreate}. */
export interface CreateOperation {
  /**
   * The journal entry a previous create of the same resource left (a killed run, or a lost answer), if any; read again
   * before each of {@link recoverPrior}'s list reads (the dead run's provider host may still finish that create).
   */
  readonly previous: JournalEntry | undefined;
  /** This create's marker, when it names its object provisionally ({@link CreateOptions.provisional}). */
  readonly marker: Marker | undefined;
  /**
   * The provisional name of this create's object ({@link provisionalName}): `base` and this create's marker, within
   * `limit` characters (the API's limit for that name).
   * @throws Error when the create does not name its object provisionally (a bug)
   */
  provisionalName(base: string, limit: number): string;
  /**
   * With a {@link previous} entry: the object among `items` the previous create provably made, marked made: the one
   * carrying its nonce, else the one of the id it returned (`madeId`, its engine died before recording it); undefined
   * when none is listed. An entry with neither (an Invite's lost answer, an entry of an earlier version) proves
   * nothing: objects of this name made since it started cannot be told from someone else's.
   * @throws Error naming such objects and `adoptHint`, when the entry proves nothing and there are some.
   */
  fromPrevious<T extends Candidate>(items: readonly T[], adoptHint: string): T | undefined;
  /**
   * Without the journal (a fresh CI runner): the object among `items` (e.g. {@link markedObjects}) whose marker has
   * this create's stack and resource tags and no resource of the run holds: an earlier create of this very resource
   * made it and never saw its answer. Marked made; undefined when there is none, or when the resource's name or
   * stack is unknown.
   * @throws Error naming them and `adoptHint` when there are several.
   */
  leftover<T extends Candidate>(items: readonly T[], adoptHint: string): T | undefined;
  /**
   * Writes this create's journal entry (before its first write: await it); `extra` e.g. `{pausedBefore}`, and
   * `after`, the {@link idWatermark} of the type and scope. The entry's `after` is the greatest of that and the
   * ids the earlier creates of the same object name made in this process ({@link oneAtATime}): the object this
   * create makes, if any, has a greater id. It holds this create's nonce when it names its object provisionally.
   * Resolves once it is on disk (never rejects: a failure to write is reported on stdout).
   */
  journal(
    extra?: Pick<JournalEntry, "pausedBefore" | "levelBefore"> & { after?: number | undefined },
  ): Promise<void>;
  /** The create answered with object `id` (or found the object it made): it is taken from now on. */
  made(id: string): void;
  /**
   * The create made object `id` from nothing (a plain POST answered with it: not adopted, not recovered, not a copy of
   * another object), so it holds only what this run puts there ({@link noteMadeFromScratch}).
   */
  madeFromScratch(id: string): void;
  /** The {@link idWatermark} of this create's type and scope, from `list` (one list read per run and scope). */
  watermark(list: () => Promise<readonly Candidate[]>): Promise<number | undefined>;
  /** The {@link markedObjects} of this create's type and scope (the watermark's list read: no request of its own). */
  marked(list: () => Promise<readonly Candidate[]>): Promise<Candidate[]>;
  /**
   * The resource adopted object `id` explicitly (e.g. an Invite's `adopt: true`) instead of creating: it is taken, and
   * the entry a previous create of the resource left is removed (the user chose what the resource manages).
   */
  adopted(id: string): void;
  /** The create failed with a definite answer (nothing made). */
  failed(): void;
  /**
   * After an AmbiguousWriteError (`lost`; undefined when the write answered 2xx without the object): the object this
   * create provably made, found in `list()` (the objects of the scope, e.g. the project's dashboards): the one
   * carrying its nonce; a create without one (an Invite) proves nothing by a list, and fails when the list shows a
   * candidate (an object of this name made since it started). When PostHog may still be processing the write
   * ({@link mayStillApply}: a timeout, a reset, a gateway's 502/504), a list that shows nothing proves nothing: it
   * reads again at 1, 2, 4 and 8 s, up to `POSTHOG_LOST_CREATE_WAIT` ({@link LOST_CREATE_WAIT_MS}), and then ends
   * with the outcome unknown, its journal entry kept for the next run ({@link recoverPrior}), naming the look-alikes
   * of its name that it did not make and how to adopt one. Only PostHog's own 5xx (the view had ended), or a read
   * started `POSTHOG_LOST_CREATE_WINDOW` after the create, proves that it did not apply (the latter keeps the entry
   * as abandoned: if the object appears later, {@link reportLostObjects} names it).
   * @throws Error naming the candidates and `adoptHint` when the create cannot prove which object it made; `lost`,
   *   annotated, when it provably did not apply; an error saying the outcome is unknown and what the next `up` will
   *   do, when it could not be decided within the wait; the list's error (the outcome stays unknown: the next create
   *   of it in the run looks first).
   */
  settleLost<T extends Candidate>(
    list: () => Promise<readonly T[]>,
    lost: Error | undefined,
    adoptHint: string,
  ): Promise<T>;
  /**
   * Before this create writes, when {@link mayHaveMade}: the object an earlier create of this resource made (a
   * killed run's, from the journal, or one that lost its answer earlier in this run), found in `list()`, adopted now
   * ({@link fromPrevious}, {@link recoverEarlier}); undefined when it provably made none (its write was answered by
   * PostHog's own 5xx, or a read started `POSTHOG_LOST_CREATE_WINDOW` after it shows none: its entry is then kept as
   * abandoned). While it may still be applied, reads again up to `POSTHOG_LOST_CREATE_WAIT`, then throws, having sent
   * nothing.
   * @throws Error naming the candidates and `adoptHint` when which object it made cannot be proved; an error
   *   saying the earlier create's outcome is still unknown, when, and how, the next `up` decides it.
   */
  recoverPrior<T extends Candidate>(
    list: () => Promise<readonly T[]>,
    adoptHint: string,
  ): Promise<T | undefined>;
  /** The objects among `items` of this create's name (or its other names) that no resource of the run holds. */
  untaken<T extends Candidate>(items: readonly T[]): T[];
  /** Whether a resource of this run holds object `id` of this type ({@link markManaged}). */
  isTaken(id: number | string): boolean;
  /**
   * The answer to this create was lost and it ends without knowing what it made (e.g. the list to look for it
   * failed too): a later create of the same object in this process looks for it first ({@link recoverEarlier}).
   */
  lost(): void;
  /** True when an earlier create of the same object (and resource) in this process ended with its answer lost. */
  readonly hasEarlier: boolean;
  /** True when {@link previous} or {@link hasEarlier}: an object this resource made may exist already. */
  readonly mayHaveMade: boolean;
  /**
   * Before this create writes: the object among `items` that the earlier creates of this resource in this process
   * (those that lost their answer) made, adopted now (marked made): the one carrying one of their nonces; undefined
   * when there is none (the earlier creates are known to have made nothing only when the read at `readAt` proves it:
   * see {@link recoverPrior}).
   * @throws Error naming the candidates and `adoptHint` when it cannot be proved (several objects, several earlier
   *   creates of unnamed resources, or creates without a nonce and an object of this name made since).
   */
  recoverEarlier<T extends Candidate>(items: readonly T[], adoptHint: string, readAt?: number): T | undefined;
}

/** An ISO 8601 time of this machine's clock, for messages. */
const iso = (ms: number) => new Date(ms).toISOString();

/** `id (created <time>)` of each candidate, for messages. */
const described = (items: readonly Candidate[]) =>
  items.map((c) => `${c.id} (created ${c.created_at ?? "at an unknown time"})`).join(", ");

/** The record of a create of `key` for `resource` (if named), started now; with a nonce when `provisional`. */
function newRecord(key: string, resource: string | undefined, provisional: boolean): CreateRecord {
  return {
    key,
    started: Date.now(),
    ended: undefined,
    id: undefined,
    madeNothing: false,
    lost: false,
    finished: false,
    resource,
    after: undefined,
    nonce: provisional ? randomBytes(6).toString("hex") : undefined,
  };
}

/** Whether `r` is an earlier create of `rec`'s object (and resource, when both are known) whose answer was lost. */
function lostBefore(r: CreateRecord, rec: CreateRecord): boolean {
  return (
    r.key === rec.key &&
    r.lost &&
    r.id === undefined &&
    !r.madeNothing &&
    (r.resource === undefined || rec.resource === undefined || r.resource === rec.resource)
  );
}

/** The journal key of a create of `what` (undefined, nothing journaled, without a resource name or the stack). */
function journalKeyOf(
  run: Creates,
  what: { type: string; scope: string; name: string },
  where: JournalContext | undefined,
): JournalKey | undefined {
  if (where?.resource === undefined || run.stack === undefined) return undefined;
  const { host, organization, resource } = where;
  return {
    type: what.type,
    host,
    organization,
    scope: what.scope,
    stack: run.stack,
    resource,
    name: what.name,
  };
}

/** The marker of a create of `type` with `nonce`: its stack's and resource's tags ({@link tagOf}) and the nonce. */
function markerFor(run: Creates, type: string, where: JournalContext | undefined, nonce: string): Marker {
  return { stack: tagOf(run.stack ?? ""), resource: tagOf(`${type}\n${where?.resource ?? ""}`), nonce };
}

/**
 * What one create knows, shared by the stages of its {@link CreateOperation} (the functions below, each taking it
 * first): made by {@link beginCreate}, one per create.
 */
interface CreateState {
  readonly run: Creates;
  readonly type: string;
  /** An organization or project id. */
  readonly scope: string;
  /** The object's name, as the create sends it (before any marker). */
  readonly name: string;
  /** `name` and the other names its object, or a look-alike someone made, may carry ({@link CreateOptions.names}). */
  readonly names: readonly string[];
  /** This create's record, one of `run.records`. */
  readonly rec: CreateRecord;
  /** Where it is journaled; undefined: nothing is journaled ({@link journalKeyOf}). */
  readonly journalKey: JournalKey | undefined;
  /** Its marker, when it names its object provisionally. */
  readonly marker: Marker | undefined;
  /** This create's journal entry, once written ({@link journalCreate}). */
  entry: JournalEntry | undefined;
  /** The entry a previous create of this resource left; {@link refreshPrevious} reads it again. */
  previous: JournalEntry | undefined;
}

/** Whether a resource of the run holds object `id` of the create's type ({@link markManaged}). */
function isTaken(s: CreateState, id: number | string): boolean {
  return s.run.taken.has(`${s.type}\n${String(id)}`);
}

/** Earlier creates of the same object (and resource, when both are known) whose answer was lost. */
function earlier(s: CreateState): CreateRecord[] {
  return s.run.records.filter((r) => r !== s.rec && lostBefore(r, s.rec));
}

/** Removes this create's journal entry (if journaled): nothing of it was made, or the user chose the object. */
function forget(s: CreateState): void {
  if (s.journalKey) forgetCreate(s.journalKey);
}

/** Keeps this create's entry as abandoned: taken as not applied, though PostHog may still apply it. */
function abandon(s: CreateState): void {
  if (s.journalKey && s.rec.nonce !== undefined)
    abandonCreate({ ...(s.entry ?? { ...s.journalKey, startedAt: s.rec.started }), nonce: s.rec.nonce });
}

/** The untaken objects among `items` that carry one of `nonces` in their names. */
function carrying<T extends Candidate>(
  s: CreateState,
  items: readonly T[],
  nonces: readonly (string | undefined)[],
): T[] {
  return items.filter((x) => {
    const n = markerOf(x.name)?.nonce;
    return n !== undefined && nonces.includes(n) && !isTaken(s, x.id);
  });
}

/** The objects among `items` of the create's names that no resource of the run holds ({@link CreateOperation.untaken}). */
function untaken<T extends Candidate>(s: CreateState, items: readonly T[]): T[] {
  return items.filter((x) => s.names.includes(String(x.name)) && !isTaken(s, x.id));
}

/**
 * What a message says of the look-alikes among `items`: objects of this create's names, not taken, made since
 * `since` (when the list carries `created_at`), that do not carry the marker of a create of this resource.
 */
function lookAlikes(s: CreateState, items: readonly Candidate[], since: number, adoptHint: string): string {
  const { type, name } = s;
  const seen = untaken(s, items).filter((x) => x.created_at == null || createdWithin(x, since, Date.now()));
  if (s.rec.nonce === undefined || seen.length === 0) return "";
  const one = seen.length === 1;
  return (
    ` ${one ? `One ${type}` : `${seen.length} ${type}s`} named "${name}" that this create did not make (${one ? "it does" : "they do"} ` +
    `not carry its marker) ${one ? "is" : "are"} in PostHog: ${described(seen)}. Someone else made ${one ? "it" : "them"} ` +
    `(a person, or another program), so ${one ? "it was" : "they were"} not adopted; to manage ${one ? "it" : "one of them"} with this resource ` +
    `instead, adopt it explicitly with ${adoptHint}.`
  );
}

/**
 * Reads the previous create's entry again: its process may still run (an engine killed mid-create leaves its
 * provider host finishing what is under way), and record the id its create returned, then rename the object.
 */
function refreshPrevious(s: CreateState): void {
  if (!s.journalKey || !s.previous) return;
  const now = pendingCreate(s.journalKey);
  if (now && now.startedAt === s.previous.startedAt && now.nonce === s.previous.nonce) s.previous = now;
}

/** {@link CreateOperation.provisionalName}. */
function namedProvisionally(s: CreateState, base: string, limit: number): string {
  if (!s.marker) throw new Error(`${s.type} "${s.name}": this create does not name its object provisionally`);
  return provisionalName(base, limit, s.marker);
}

/** {@link CreateOperation.fromPrevious}. */
function fromPrevious<T extends Candidate>(
  s: CreateState,
  items: readonly T[],
  adoptHint: string,
): T | undefined {
  const { type, name } = s;
  const prev = s.previous;
  if (!prev) return undefined;
  const [mine] = carrying(s, items, [prev.nonce]);
  if (mine) {
    createMade(s, String(mine.id));
    return mine;
  }
  if (prev.madeId !== undefined) {
    // The previous create returned this id (its engine died before recording it): adopt it if it still exists.
    const made = items.find((x) => String(x.id) === prev.madeId && !isTaken(s, x.id));
    if (made) {
      createMade(s, prev.madeId);
      return made;
    }
  }
  if (prev.nonce !== undefined || prev.madeId !== undefined) return undefined;
  // No proof: an object of this name made since it started may be anyone's.
  const candidates = untaken(s, items).filter(
    (x) => above(x, prev.after) && createdWithin(x, prev.startedAt, Date.now()),
  );
  if (candidates.length === 0) return undefined;
  throw new Error(
    `${type} "${name}": a previous create of this resource (started ${iso(prev.startedAt)}) has an unknown outcome ` +
      `(its answer was lost, or its run was killed), and ${candidates.length} ${type}(s) of that name were made since: ` +
      `${described(candidates)}. Whether that create made one cannot be proved (someone may have made one meanwhile): ` +
      `nothing was adopted and nothing was sent. Adopt the right one explicitly with ${adoptHint}, or delete it and run up again${LOST_CREATES}`,
  );
}

/** {@link CreateOperation.leftover}. */
function leftover<T extends Candidate>(
  s: CreateState,
  items: readonly T[],
  adoptHint: string,
): T | undefined {
  const { type, name, marker } = s;
  if (!marker || !s.journalKey) return undefined;
  const mine = items
    .filter((x) => {
      const m = markerOf(x.name);
      return m?.stack === marker.stack && m.resource === marker.resource && !isTaken(s, x.id);
    })
    .sort((a, b) => Number(a.id) - Number(b.id));
  const [only] = mine;
  if (!only) return undefined;
  if (mine.length === 1) {
    createMade(s, String(only.id));
    return only;
  }
  throw new Error(
    `${type} "${name}": ${mine.length} ${type}s carry the marker of earlier creates of this resource that never saw ` +
      `their answers: ${described(mine)}. Each was made by this resource, and which one to keep is yours to say: ` +
      `nothing was adopted and nothing was created. Adopt one explicitly with ${adoptHint} and delete the others, then run up again${LOST_CREATES}`,
  );
}

/** {@link CreateOperation.journal}. */
async function journalCreate(
  s: CreateState,
  extra?: Pick<JournalEntry, "pausedBefore" | "levelBefore"> & { after?: number | undefined },
): Promise<void> {
  const { rec, journalKey } = s;
  const bounds = [
    extra?.after,
    ...s.run.records
      .filter((r) => r !== rec && r.key === rec.key && r.id !== undefined)
      .map((r) => Number(r.id)),
  ].filter((n): n is number => n !== undefined && Number.isInteger(n));
  rec.after = bounds.length > 0 ? Math.max(...bounds) : undefined;
  if (journalKey) {
    const { after: _, ...rest } = extra ?? {};
    s.entry = {
      ...journalKey,
      startedAt: rec.started,
      ...rest,
      ...(rec.after !== undefined ? { after: rec.after } : {}),
      ...(rec.nonce !== undefined ? { nonce: rec.nonce } : {}),
    };
    await recordCreate(s.entry);
  }
}

/** {@link CreateOperation.made}. */
function createMade(s: CreateState, id: string): void {
  s.rec.id = id;
  s.rec.ended = Date.now();
  markManaged(s.run, s.type, id);
  if (s.journalKey)
    completeCreate(
      s.run.completing,
      s.entry ?? { ...s.journalKey, ...s.previous, startedAt: s.rec.started },
      id,
    );
}

/** {@link CreateOperation.adopted}. */
function createAdopted(s: CreateState, id: string): void {
  s.rec.id = id;
  s.rec.ended = Date.now();
  markManaged(s.run, s.type, id);
  if (s.previous) forget(s);
}

/** {@link CreateOperation.failed}. */
function createFailed(s: CreateState): void {
  s.rec.madeNothing = true;
  s.rec.ended = Date.now();
  forget(s);
}

/** {@link CreateOperation.lost}. */
function createLost(s: CreateState): void {
  s.rec.lost = true;
  s.rec.ended = Date.now();
}

/** {@link CreateOperation.hasEarlier}. */
function hasEarlier(s: CreateState): boolean {
  return earlier(s).length > 0;
}

/** {@link CreateOperation.mayHaveMade}. */
function mayHaveMade(s: CreateState): boolean {
  return s.previous !== undefined || hasEarlier(s);
}

/** {@link CreateOperation.recoverPrior}. */
async function recoverPrior<T extends Candidate>(
  s: CreateState,
  list: () => Promise<readonly T[]>,
  adoptHint: string,
): Promise<T | undefined> {
  const { type, name } = s;
  if (!mayHaveMade(s)) return undefined;
  const { waitMs, windowMs } = lostCreateTimes();
  const giveUp = Date.now() + waitMs;
  let pause = 1_000;
  let reads = 0;
  for (;;) {
    const readAt = Date.now();
    refreshPrevious(s);
    const items = await list();
    reads++;
    const found =
      (s.previous ? fromPrevious(s, items, adoptHint) : undefined) ??
      (hasEarlier(s) ? recoverEarlier(s, items, adoptHint, readAt) : undefined);
    if (found) return found;
    // Nothing it could have made is listed: proof only for creates PostHog had finished with, or started a
    // window before this read.
    const previous = s.previous;
    const pending = [
      ...(previous && previous.madeId === undefined && readAt < previous.startedAt + windowMs
        ? [previous.startedAt]
        : []),
      ...earlier(s)
        .filter((r) => !decided(r, readAt))
        .map((r) => r.started),
    ];
    if (pending.length === 0) {
      // Taken as not applied; should PostHog apply it later, its object is an orphan: its entry is kept for that.
      if (previous?.nonce !== undefined && previous.madeId === undefined)
        abandonCreate({ ...previous, nonce: previous.nonce });
      return undefined;
    }
    const decidedAt = Math.max(...pending) + windowMs;
    const now = Date.now();
    if (now >= giveUp) {
      const first = Math.min(...pending);
      throw new Error(
        `${type} "${name}": an earlier create of this resource (started ${iso(first)}) has an unknown outcome (its ` +
          `answer was lost, or its run was killed), and PostHog may still be processing it: no ${type} it could have ` +
          `made appeared in ${reads} list read(s) over ${Math.round((now - giveUp + waitMs) / 1000)} s. Nothing was ` +
          `created.${lookAlikes(s, items, first, adoptHint)} Run pulumi up again: the next up adopts the ${type} that create made once PostHog shows it, and ` +
          `creates one only if PostHog still shows none after ${iso(decidedAt)} ` +
          `(POSTHOG_LOST_CREATE_WINDOW, ${windowText(windowMs)} after the create started). If you know it never ` +
          `reached PostHog, run up with POSTHOG_LOST_CREATE_WINDOW=0 to create it now${OUTCOME_UNKNOWN}`,
      );
    }
    await sleep(Math.min(pause, giveUp - now, decidedAt - now + 10));
    pause *= 2;
  }
}

/** {@link CreateOperation.recoverEarlier}. */
function recoverEarlier<T extends Candidate>(
  s: CreateState,
  items: readonly T[],
  adoptHint: string,
  readAt = Date.now(),
): T | undefined {
  const { type, name, rec } = s;
  const before = earlier(s);
  if (before.length === 0) return undefined;
  if (before.every((r) => r.nonce !== undefined)) {
    const mine = carrying(
      s,
      items,
      before.map((r) => r.nonce),
    ).sort((a, b) => Number(a.id) - Number(b.id));
    const [only] = mine;
    if (!only) {
      // Only what a read can prove: creates PostHog had finished with, or started a window before the read.
      for (const r of before) if (decided(r, readAt)) r.madeNothing = true;
      return undefined;
    }
    // Of this resource when the resource is named; unnamed resources of one name cannot be told apart.
    const ours =
      before.length === 1 || (rec.resource !== undefined && before.every((r) => r.resource === rec.resource));
    if (mine.length === 1 && ours) {
      for (const r of before) if (markerOf(only.name)?.nonce === r.nonce) r.id = String(only.id);
      createMade(s, String(only.id));
      return only;
    }
    for (const r of before) r.madeNothing = true; // reported here: not again by the next create
    throw new Error(
      `${type} "${name}": ${before.length} earlier create(s) of it in this run lost their answer, and ${mine.length} ` +
        `of the ${type}s they made ${mine.length === 1 ? "is" : "are"} in PostHog: ${described(mine)}. ${ours ? "Each is this resource's, and which one to keep is yours to say" : "Which resource's each is cannot be told (the resources were declared without the SDK's classes)"}: ` +
        `nothing was adopted. Adopt the right one explicitly with ${adoptHint} and delete the others, then run up again${LOST_CREATES}`,
    );
  }
  // Creates without a nonce (Invite): an object of this name made since they started may be anyone's.
  const since = Math.min(...before.map((r) => r.started));
  const candidates = untaken(s, items).filter((x) => createdWithin(x, since));
  if (candidates.length === 0) {
    for (const r of before) if (decided(r, readAt)) r.madeNothing = true;
    return undefined;
  }
  for (const r of before) r.madeNothing = true; // reported here: not again by the next create
  throw new Error(
    `${type} "${name}": ${before.length} earlier create(s) of it in this run lost their answer, and ` +
      `${candidates.length} ${type}(s) of that name were made since: ${described(candidates)}. Whether one of those ` +
      `creates made it cannot be proved (someone may have made one meanwhile): nothing was adopted and nothing ` +
      `was sent. Adopt the right one explicitly with ${adoptHint}, or delete it and run up again${LOST_CREATES}`,
  );
}

/** {@link CreateOperation.settleLost}. */
async function settleLost<T extends Candidate>(
  s: CreateState,
  list: () => Promise<readonly T[]>,
  lost: Error | undefined,
  adoptHint: string,
): Promise<T> {
  const { type, name, rec } = s;
  rec.finished = !mayStillApply(lost);
  const cause = lost ?? new Error(`the create of ${type} "${name}" answered 2xx without the object`);
  const { waitMs, windowMs } = lostCreateTimes();
  const giveUp = rec.finished ? 0 : Date.now() + waitMs;
  let pause = 1_000;
  let reads = 0;
  for (;;) {
    const readAt = Date.now();
    let items: Awaited<ReturnType<typeof list>>;
    try {
      items = await list();
    } catch (e) {
      createLost(s); // the next create of this object in the run looks for what this one made first
      throw e;
    }
    reads++;
    const made = matchLost(s, items, cause, adoptHint);
    if (made) return made;
    if (decided(rec, readAt)) throw notApplied(s, items, cause, adoptHint, windowMs);
    const now = Date.now();
    if (now >= giveUp) {
      createLost(s); // its journal entry stays: the next run looks for what it made before it creates anything
      throw new Error(
        `${type} "${name}": the outcome of its create is unknown: ${withoutDocsLink(cause.message)}. PostHog may still be processing ` +
          `the request: no ${type} it made appeared in ${reads} list read(s) over ${Math.round(waitMs / 1000)} s, ` +
          `and such a read proves nothing. Nothing was adopted and nothing else was created.` +
          `${lookAlikes(s, items, rec.started, adoptHint)} ${nextUp(s, adoptHint)}${OUTCOME_UNKNOWN}`,
        { cause },
      );
    }
    await sleep(Math.min(pause, giveUp - now));
    pause *= 2;
  }
}

/**
 * {@link settleLost}, once a read proves that the create did not apply ({@link decided}): ends it as having made
 * nothing, forgets its journal entry (PostHog had finished with it) or keeps it as abandoned (taken as not applied),
 * and returns the error that says so, naming the look-alikes among `items` (`windowMs`: `POSTHOG_LOST_CREATE_WINDOW`).
 */
function notApplied(
  s: CreateState,
  items: readonly Candidate[],
  cause: Error,
  adoptHint: string,
  windowMs: number,
): Error {
  const { type, rec } = s;
  rec.ended = Date.now();
  rec.madeNothing = true;
  if (rec.finished) {
    forget(s); // nothing of it was made: the next create starts afresh
    return new Error(
      `${withoutDocsLink(cause.message)}. PostHog had finished with the request and shows no ${type} this create made: the ` +
        `create did not apply, and nothing was adopted.${lookAlikes(s, items, rec.started, adoptHint)} Run up again${LOST_CREATES}`,
      { cause },
    );
  }
  abandon(s); // taken as not applied; should PostHog apply it later, the stack's next operations name its object
  return new Error(
    `${withoutDocsLink(cause.message)}. No ${type} this create made appeared within POSTHOG_LOST_CREATE_WINDOW ` +
      `(${windowText(windowMs)}) of its start, so it is taken as not applied, and nothing was adopted.` +
      `${lookAlikes(s, items, rec.started, adoptHint)} Run up again. ` +
      (s.marker
        ? `Should PostHog apply it later, the next up, refresh or destroy of this stack names the ${type} it made ` +
          `(its name ends with [pulumi create …])`
        : "") +
      LOST_CREATES,
    { cause },
  );
}

/** What the message of an unknown outcome says the next `up` does. */
function nextUp(s: CreateState, adoptHint: string): string {
  const { type, name, rec, journalKey } = s;
  const { windowMs } = lostCreateTimes();
  const decidedAt = iso(rec.started + windowMs);
  if (type === "Invite") {
    return (
      `The next pulumi up sends nothing while PostHog shows a pending invite for ${name}: it fails naming it ` +
      `(whether this create made it cannot be proved), and ${adoptHint} takes it over; it sends one only if PostHog ` +
      `shows none${journalKey ? ` after ${decidedAt} (POSTHOG_LOST_CREATE_WINDOW, ${windowText(windowMs)} after the create started)` : ""}. ` +
      "Run pulumi up again"
    );
  }
  if (journalKey) {
    return (
      `The next pulumi up looks for it first: it adopts the ${type} this create made once PostHog shows it, ` +
      `and creates one only if PostHog still shows none after ${decidedAt} (POSTHOG_LOST_CREATE_WINDOW, ` +
      `${windowText(windowMs)} after the create started). Run pulumi up again`
    );
  }
  return (
    `This create is not journaled (${journalDir() === undefined ? "POSTHOG_CREATE_JOURNAL_DIR=off" : "the resource was declared without the SDK's classes"}), ` +
    `so the next up cannot recognise what it made: check PostHog for a ${type} named "${name}" created after ` +
    `${iso(rec.started)} (its name ends with [pulumi create …]), and adopt it with ${adoptHint}, before you run up again`
  );
}

/**
 * The one object among `items` this create provably made (marked made), or undefined when none is listed.
 * @throws Error naming the candidates and `adoptHint` when the create carries no nonce (an Invite) and an object of
 *   its name was made since it started: whether it made it cannot be proved.
 */
function matchLost<T extends Candidate>(
  s: CreateState,
  items: readonly T[],
  lost: Error,
  adoptHint: string,
): T | undefined {
  const { type, name, rec } = s;
  if (rec.nonce !== undefined) {
    // One POST makes one object at most (the client sends a create again only after a 429 or a refused connection).
    const [mine] = carrying(s, items, [rec.nonce]).sort((a, b) => Number(a.id) - Number(b.id));
    if (mine) createMade(s, String(mine.id));
    return mine;
  }
  const now = Date.now();
  const candidates = untaken(s, items).filter(
    (x) => createdWithin(x, rec.started, now) && above(x, rec.after),
  );
  if (candidates.length === 0) return undefined;
  rec.ended = now;
  rec.lost = true; // its entry stays: the next create of this resource looks for what it made first
  throw new Error(
    `${type} "${name}": the answer to its create was lost (${withoutDocsLink(lost.message)}), and ${candidates.length} ${type}(s) of ` +
      `that name were made since it started: ${described(candidates)}. Whether this create made it cannot be proved ` +
      `(someone may have made one meanwhile): nothing was adopted and nothing else was sent. Check it in PostHog, ` +
      `then adopt it explicitly with ${adoptHint}, or delete it and run up again${LOST_CREATES}`,
    { cause: lost },
  );
}

/**
 * Registers a create of object `name` of `type` in `scope` (an organization or project id), started now.
 * Call before the POST; call `made`/`failed`/`settleLost` on its outcome.
 */
export function beginCreate(
  run: Creates,
  type: string,
  scope: string,
  name: string,
  where?: JournalContext,
  options: CreateOptions = {},
): CreateOperation {
  const rec = newRecord(`${type}\n${scope}\n${name}`, where?.resource, options.provisional === true);
  run.records.push(rec);
  const journalKey = journalKeyOf(run, { type, scope, name }, where);
  const s: CreateState = {
    run,
    type,
    scope,
    name,
    names: [name, ...(options.names ?? [])],
    rec,
    journalKey,
    marker: rec.nonce === undefined ? undefined : markerFor(run, type, where, rec.nonce),
    entry: undefined,
    previous: journalKey ? pendingCreate(journalKey) : undefined,
  };
  return {
    get previous() {
      return s.previous;
    },
    marker: s.marker,
    madeFromScratch: (id) => noteMadeFromScratch(run, type, id),
    watermark: (list) => idWatermark(run, type, scope, list),
    marked: (list) => markedObjects(run, type, scope, list),
    provisionalName: (base, limit) => namedProvisionally(s, base, limit),
    fromPrevious: (items, adoptHint) => fromPrevious(s, items, adoptHint),
    leftover: (items, adoptHint) => leftover(s, items, adoptHint),
    journal: (extra) => journalCreate(s, extra),
    made: (id) => createMade(s, id),
    adopted: (id) => createAdopted(s, id),
    failed: () => createFailed(s),
    untaken: (items) => untaken(s, items),
    isTaken: (id) => isTaken(s, id),
    lost: () => createLost(s),
    get hasEarlier() {
      return hasEarlier(s);
    },
    get mayHaveMade() {
      return mayHaveMade(s);
    },
    recoverPrior: (list, adoptHint) => recoverPrior(s, list, adoptHint),
    recoverEarlier: (items, adoptHint, readAt) => recoverEarlier(s, items, adoptHint, readAt),
    settleLost: (list, lost, adoptHint) => settleLost(s, list, lost, adoptHint),
  };
}

/**
 * A create that names its object provisionally (Project, Dashboard): what the resource gives
 * {@link provisionalCreate}, which runs the lost-create protocol around it.
 */
export interface ProvisionalCreate<T extends Candidate, R> {
  /** The resource type, e.g. `Dashboard`. */
  type: string;
  /** Where its objects live: an organization or project id. */
  scope: string;
  /** The name the create sends before its marker (a Dashboard from a template: the template's name). */
  name: string;
  /** Other names its object, or a look-alike someone made, may carry (a template's dashboard: the declared one). */
  names?: readonly string[];
  /** Where it is journaled (`journalContext`). */
  where: JournalContext;
  /** The input that adopts an object explicitly, for messages, e.g. `the input dashboardId`. */
  adoptHint: string;
  /** The objects of the scope, as a list read shows them (GET of the list's pages). */
  list(): Promise<readonly T[]>;
  /** One object of the scope by id (GET), as `converge` takes it. */
  retrieve(id: string): Promise<T>;
  /** Whether an object found in {@link list} is read again by id before `converge` (its list item lacks fields). */
  reread: boolean;
  /**
   * The POST, naming its object with `op.provisionalName(…)`: the object it made, or undefined when PostHog answered
   * 2xx without it (it applied; the object carrying the marker is looked for).
   */
  post(op: CreateOperation): Promise<T | undefined>;
  /** The object made or recovered given its declared name and settings (one PATCH of what differs, if anything). */
  converge(made: T): Promise<R>;
}

/**
 * A create of an object named provisionally, with the lost-create protocol written once: in turn with the creates of
 * the same name ({@link oneAtATime}); first the object an earlier create of this resource made, if any (a killed
 * run's, from the journal, or a lost answer earlier in the run: {@link CreateOperation.recoverPrior}; without the
 * journal, the one carrying this resource's marker: {@link CreateOperation.leftover}); else the journal entry (with
 * the scope's id watermark), the POST, and after a lost answer the object that carries this create's marker, never a
 * look-alike ({@link CreateOperation.settleLost}); then `converge`.
 * @throws what `post` throws (a definite refusal: nothing was made); the protocol's errors naming look-alikes and
 *   `adoptHint` when which object a lost create made cannot be proved, or its outcome stays unknown
 */
export function provisionalCreate<T extends Candidate, R>(
  run: Creates,
  c: ProvisionalCreate<T, R>,
): Promise<R> {
  const found = async (op: CreateOperation, lost: Error | undefined): Promise<T> => {
    const item = await op.settleLost(() => c.list(), lost, c.adoptHint);
    return c.reread ? c.retrieve(String(item.id)) : item;
  };
  return oneAtATime(run, c.type, c.scope, c.name, async () => {
    const op = beginCreate(run, c.type, c.scope, c.name, c.where, {
      provisional: true,
      names: c.names ?? [],
    });
    const list = () => c.list();
    const prior =
      (await op.recoverPrior(list, c.adoptHint)) ?? op.leftover(await op.marked(list), c.adoptHint);
    if (prior) return c.converge(await c.retrieve(String(prior.id)));
    await op.journal({ after: await op.watermark(list) });
    let made: T | undefined;
    try {
      made = await c.post(op);
    } catch (e) {
      if (!(e instanceof AmbiguousWriteError)) {
        op.failed();
        throw e;
      }
      return c.converge(await found(op, e));
    }
    if (made === undefined) return c.converge(await found(op, undefined));
    op.made(String(made.id));
    return c.converge(made);
  });
}

/**
 * What the stack's operations need to know of a type whose creates name their objects provisionally, to report an
 * object such a create made that no resource holds ({@link reportLostObjects}): the card's `lostObjects`.
 */
export interface LostObjectKind {
  /** The objects of `scope` (a project's dashboards, the organization's projects) as a list read shows them. */
  list(api: PostHogClient, scope: string): Promise<readonly Candidate[]>;
  /** The input that adopts one, e.g. `dashboardId`. */
  adoptInput: string;
  /** The command that deletes object `id` of `scope`, for a message. */
  deleteCommand(host: string, organization: string, scope: string, id: string): string;
}

/** An object a create of the stack with an unknown outcome made, that no resource holds. */
export interface LostObject {
  entry: JournalEntry & { nonce: string };
  id: string;
  name: string;
  /** The create was taken as not applied and its resource went on without it (made again, or destroyed). */
  abandoned: boolean;
  adopt: string;
  remove: string;
}

/**
 * Objects that creates of this stack made with an unknown outcome, found after the create's resource was made again
 * or went on without them, or that no later create adopted: in PostHog and in no resource's state.
 */
export class OrphanedObjectError extends Error {
  constructor(found: readonly LostObject[]) {
    super(
      `${found.length === 1 ? "An object" : `${found.length} objects`} that creates of this stack made, though their ` +
        `outcome was unknown, ${found.length === 1 ? "is" : "are"} in PostHog and in no resource's state:\n${found
          .map(
            (f) =>
              `- ${f.entry.type} ${f.id} ${JSON.stringify(f.name)}: made by the create of ${f.entry.type} ` +
              `"${f.entry.resource}" that started ${iso(f.entry.startedAt)} and never saw its answer (a lost answer, or ` +
              `a killed run); ${f.abandoned ? "PostHog applied it after the resource was made again, or went on without it" : "no later create of that resource has adopted it"}. ` +
              `Adopt it: declare a ${f.entry.type} with ${f.adopt}: ${f.id} and run pulumi up (it takes the declared name)` +
              `${f.abandoned ? "" : `, or, if "${f.entry.resource}" is still in the program, run pulumi up (a plain up, without --refresh): its create adopts it`}. ` +
              `Or delete it: ${f.remove}`,
          )
          .join("\n")}\nThen run the command again` +
        docsLink("troubleshooting/adoption.md", "an-object-a-create-with-an-unknown-outcome-made"),
    );
    this.name = "OrphanedObjectError";
  }
}

/**
 * Reports, once per run, an object that a create of this stack with an unknown outcome made (its journal entry kept)
 * and that no resource holds: it throws {@link OrphanedObjectError} naming each one, the input that adopts it and the
 * command that deletes it. Called by the operations on existing resources: `diff` (`up`, `preview`) looks for the
 * objects of abandoned creates (taken as not applied, the resource made again or gone on); `read` (`refresh`,
 * `preview --refresh`) and `delete` (`destroy`, and the deletes at the end of `up`) also for those of creates no later
 * create adopted (none of them creates), `read` with a `warning:` line only while the create's
 * `POSTHOG_LOST_CREATE_WINDOW` lasts (the resource's next `up` adopts it, if the resource is still declared). Each
 * object is said once per run, but by every `delete` (a destroy writes nothing while one is there). Costs nothing when the journal holds no such entry of the stack (one read of
 * the journal directory per run); otherwise one list read per scope and run (GET `/api/projects/:id/dashboards/`, GET
 * `/api/organizations/:id/projects/`), through `client()`. An entry whose object never appeared is dropped
 * {@link UNKNOWN_OUTCOME_KEPT_MS} after the create's window.
 * @param stack the `<project>/<stack>` of the resource's call (else the run's: {@link Creates.stack})
 * @throws OrphanedObjectError; the list read's errors (nothing is concluded from a failed read)
 */
export async function reportLostObjects(
  run: Creates,
  mode: "diff" | "read" | "delete",
  stack: string | undefined,
  client: () => Promise<PostHogClient>,
): Promise<void> {
  const of = stack ?? run.stack;
  if (of === undefined || journalDir() === undefined) return;
  const pending = mode !== "diff";
  const key = `${of}\n${pending}`;
  let search = run.search.runs.get(key);
  if (!search) {
    search = findLostObjects(run, of, pending, client);
    run.search.runs.set(key, search);
    search.catch(() => run.search.runs.delete(key)); // the next operation reads again
  }
  // Said once per run, so that a refresh's or an up's other operations go on; a destroy's every delete fails with
  // it, so that destroy writes nothing while the stack has an object it would leave behind.
  const found = (await search).filter(
    (f) =>
      !run.taken.has(`${f.entry.type}\n${f.id}`) &&
      (mode === "delete" || !run.search.reported.has(f.entry.nonce)),
  );
  if (found.length === 0) return;
  for (const f of found) run.search.reported.add(f.entry.nonce);
  // A refresh within the create's window: the resource's next `up` still adopts it if the resource is declared.
  const { windowMs } = lostCreateTimes();
  const early = (f: LostObject) =>
    mode === "read" && !f.abandoned && Date.now() < f.entry.startedAt + windowMs;
  for (const f of found.filter(early)) {
    console.log(
      `warning: ${f.entry.type} ${f.id} ${JSON.stringify(f.name)} was made by the create of ${f.entry.type} ` +
        `"${f.entry.resource}" that started ${iso(f.entry.startedAt)} and never saw its answer; no resource holds it yet. ` +
        `The next pulumi up adopts it if "${f.entry.resource}" is still in the program; otherwise delete it: ${f.remove} ` +
        `(from ${iso(f.entry.startedAt + windowMs)}, POSTHOG_LOST_CREATE_WINDOW after the create started, refresh fails naming it)`,
    );
  }
  const late = found.filter((f) => !early(f));
  if (late.length > 0) throw new OrphanedObjectError(late);
}

/** The objects of {@link reportLostObjects}: entries of stack `of` (with `pending`, the unresolved ones too), listed. */
async function findLostObjects(
  run: Creates,
  of: string,
  pending: boolean,
  client: () => Promise<PostHogClient>,
): Promise<LostObject[]> {
  // Not the creates of this run: each one's own error reported its outcome.
  const ours = new Set(run.records.map((r) => r.nonce));
  const entries = unknownOutcomes(of, pending).filter((e) => run.kinds.has(e.type) && !ours.has(e.nonce));
  if (entries.length === 0) return [];
  const api = await client();
  const host = journalHost(api.settings.host);
  const organization = api.settings.organizationId ?? "";
  const { windowMs } = lostCreateTimes();
  const lists = new Map<string, Promise<readonly Candidate[]>>();
  const out: LostObject[] = [];
  for (const e of entries) {
    const kind = run.kinds.get(e.type);
    if (!kind || e.host !== host || e.organization !== organization) continue;
    const readAt = Date.now();
    const where = `${e.type}\n${e.scope}`;
    let items = lists.get(where);
    if (!items) {
      items = kind.list(api, e.scope);
      lists.set(where, items);
    }
    const made = (await items).find((x) => markerOf(x.name)?.nonce === e.nonce);
    if (made) {
      out.push({
        entry: e,
        id: String(made.id),
        name: String(made.name),
        abandoned: "abandonedAt" in e,
        adopt: kind.adoptInput,
        remove: kind.deleteCommand(host, organization, e.scope, String(made.id)),
      });
    } else if (readAt >= e.startedAt + windowMs + UNKNOWN_OUTCOME_KEPT_MS) {
      dropUnknown(e); // it never appeared: PostHog cannot apply it any more
    }
  }
  return out;
}
