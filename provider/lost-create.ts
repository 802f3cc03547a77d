/**
 * Lost creates: what a create may adopt when its answer was lost (issue 12, points 2 and 3).
 *
 * A create whose POST got no usable answer (AmbiguousWriteError: 5xx, reset, dropped response) may or may not
 * have made its object. The rule: it adopts only an object that THIS operation provably made; never one another
 * resource of the run made or manages, never one that existed before the operation. When it cannot prove it,
 * it fails and names the candidates and the input that adopts explicitly.
 *
 * What "provably" means here, per provider host process (one per Pulumi run, see provider/claims.ts):
 * - every create of the process is registered with its type, scope (organization or project) and object name,
 *   and the time it started and ended ({@link beginCreate});
 * - every id a resource of the run holds is taken: the ids creates of this process returned (made or adopted),
 *   and the ids existing resources hold (seen by `diff`, `read`, `update`, `delete`: {@link markManaged});
 * - a candidate is an object of that name, not taken, created (server `created_at`) within this operation's
 *   window: from its start to now, with {@link CLOCK_SKEW_MS} of clock difference between this host and
 *   PostHog allowed on each side;
 * - it is adopted only when exactly one candidate remains AND no other create of the same type, scope and name
 *   in this process could have made it (one that started before this one ended and has not resolved to an id).
 *
 * Limits (README, "Lost creates"): objects made by someone else (another run, a person in the UI) with the same
 * name within the clock-skew allowance are indistinguishable from this create's object: then there are two
 * candidates and the create fails, or, if this create did not apply, one, which it would adopt. Across processes
 * (an engine killed mid-create) the create journal (provider/create-journal.ts) tells the next run what the dead
 * create was.
 */

import { InvalidInputError, ServerError } from "./client/errors";
import { parseDurationMs } from "./client/settings";
import {
  completeCreate,
  forgetCreate,
  type JournalEntry,
  type JournalKey,
  journalDir,
  madeByOthers,
  pendingCreate,
  recordCreate,
  settled,
  unknownLookAlikes,
} from "./create-journal";
import { engineReachable } from "./engine-watch";

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

/** The tail of the queue of creates of each `type\nscope\nname` in this process ({@link oneAtATime}). */
const queues = new Map<string, Promise<unknown>>();

/**
 * Runs `create` once every earlier create of an object of the same type, scope and name in this process has
 * settled. Look-alike creates (twelve dashboards named "KPIs") thus run one at a time, so that at any moment at
 * most one of them may be on the wire without an answer, and each one's journal entry can name the ids the
 * earlier ones made ({@link CreateOperation.journal}). If the engine is gone by the time a create that waited
 * would start, it is not started: it throws, sending nothing. Creates of other names run concurrently.
 * @returns what `create` returns; @throws what it throws (a failed create does not stop the next one)
 */
export function oneAtATime<T>(
  type: string,
  scope: string,
  name: string,
  create: () => Promise<T>,
): Promise<T> {
  const key = `${type}\n${scope}\n${name}`;
  const queued = queues.get(key);
  const before = queued ?? Promise.resolve();
  // A create that waited its turn starts only if the engine can still record it: a CLI killed meanwhile leaves the
  // host running what is under way, and a queued create would make an object no engine asked to finish.
  const start = async () => {
    if (queued && !(await engineReachable())) {
      throw new Error(
        `${type} "${name}": not created: the Pulumi engine that asked for it is gone (the run was killed while an ` +
          "earlier create of the same name was under way); nothing was sent. Run pulumi up again",
      );
    }
    return create();
  };
  const run = before.then(start, start);
  const tail = run.catch(() => undefined);
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return run;
}

/** The id watermark of each `type\nscope` ({@link idWatermark}), once read in this process. */
const watermarks = new Map<string, Promise<number | undefined>>();

/**
 * The highest integer id among the objects of `type` in `scope` (an organization or project id) that `list`
 * returns, read once per process at the first create there (one list read per run and scope, shared): every
 * object a create of this process makes later has a greater id, so a later run that looks for what a killed create
 * made never takes an object that existed before it (README, "Lost creates"). Undefined when the list fails (the
 * create goes on; its recovery then relies on names, creation times and the ids the run holds).
 * @param list e.g. `() => api.dashboards.all({projectId})` (GET `…/dashboards/`, list pages)
 */
export function idWatermark(
  type: string,
  scope: string,
  list: () => Promise<readonly Candidate[]>,
): Promise<number | undefined> {
  const key = `${type}\n${scope}`;
  let known = watermarks.get(key);
  if (!known) {
    known = list().then(
      (items) => {
        const ids = items.map((x) => Number(x.id)).filter(Number.isInteger);
        return ids.length > 0 ? Math.max(...ids) : 0;
      },
      () => {
        watermarks.delete(key); // the next create tries again
        return undefined;
      },
    );
    watermarks.set(key, known);
  }
  return known;
}

interface CreateRecord {
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

const records: CreateRecord[] = [];
/** `type\nid` of every object a resource of this run holds. */
const taken = new Set<string>();

/**
 * The Pulumi project and stack of this process's deployment (`<project>/<stack>`, from the SDK's `__stack`), or
 * undefined until a `check` brought it: the engine starts one provider host per deployment, so there is one.
 */
let stack: string | undefined;

/** Records the deployment's `<project>/<stack>` (called by `check`). */
export function noteStack(value: string): void {
  stack = value;
}

/** `type\nid` of objects a create of this process made from nothing (its POST answered with the new object). */
const fromScratch = new Set<string>();

/**
 * Records that a create of this process made object `id` of `type` itself, from nothing (a plain POST answered
 * with it: not adopted, not recovered, not a copy of another object): what it holds now is only what this run
 * puts there (e.g. a new dashboard has no collaborators but those this run adds).
 */
export function noteMadeFromScratch(type: string, id: string): void {
  fromScratch.add(`${type}\n${id}`);
}

/** Whether a create of this process made object `id` of `type` from nothing ({@link noteMadeFromScratch}). */
export function madeFromScratch(type: string, id: string): boolean {
  return fromScratch.has(`${type}\n${id}`);
}

/** Records that a resource of this run holds object `id` of `type` (e.g. "Project", "1001"). */
export function markManaged(type: string, id: string): void {
  if (id) taken.add(`${type}\n${id}`);
}

/**
 * An operation of the run on an existing resource (diff, refresh, update, delete) holds object `id` of `type`: it
 * is taken, and the engine recorded it, so the create journal's entry for it is removed.
 */
export async function managedByState(type: string, id: string): Promise<void> {
  markManaged(type, id);
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
  /** The Pulumi resource name (the SDK's `__resource.name`); without it (or without the stack) nothing is journaled. */
  resource: string | undefined;
}

/**
 * The journal context of a create made with client settings `settings` for the resource named `resource` (the
 * SDK's `__resourceName`; undefined: nothing is journaled).
 */
export function journalContext(
  settings: { host: string; organizationId?: string | undefined },
  resource: string | undefined,
): JournalContext {
  return { host: settings.host, organization: settings.organizationId ?? "", resource };
}

/** One create of this process; see {@link beginCreate}. */
export interface CreateOperation {
  /** The journal entry a previous create of the same resource left when its process died, if any. */
  readonly previous: JournalEntry | undefined;
  /**
   * With a {@link previous} entry: the one object among `items` (named as this create's object, or one of
   * `alsoNamed`) not taken and created at or after the entry's start, which the dead create made; undefined when
   * there is none (it did not apply). Marks it made.
   * @throws Error naming the candidates and `adoptHint` when more than one could be it.
   */
  fromPrevious<T extends Candidate>(
    items: readonly T[],
    adoptHint: string,
    alsoNamed?: readonly string[],
  ): T | undefined;
  /**
   * Writes this create's journal entry (before its first write: await it); `extra` e.g. `{pausedBefore}`, and
   * `after`, the {@link idWatermark} of the type and scope. The entry's `after` is the greatest of that and the
   * ids the earlier creates of the same object name made in this process ({@link oneAtATime}): the object this
   * create makes, if any, has a greater id.
   * Resolves once it is on disk (never rejects: a failure to write is reported on stdout).
   */
  journal(
    extra?: Pick<JournalEntry, "pausedBefore" | "levelBefore"> & { after?: number | undefined },
  ): Promise<void>;
  /** The create answered with object `id`: it is taken from now on. */
  made(id: string): void;
  /** The create failed with a definite answer (nothing made). */
  failed(): void;
  /**
   * After an AmbiguousWriteError (`lost`; undefined when the write answered 2xx without the object): the one object
   * this create provably made, found in `list()` (the objects of the scope, e.g. the project's dashboards; each
   * needs `created_at`). When PostHog may still be processing the write ({@link mayStillApply}: a timeout, a reset,
   * a gateway's 502/504), a list that shows nothing proves nothing: it reads again at 1, 2, 4 and 8 s, up to
   * `POSTHOG_LOST_CREATE_WAIT` ({@link LOST_CREATE_WAIT_MS}), and then ends with the outcome unknown, its journal
   * entry kept for the next run ({@link recoverPrior}). Only PostHog's own 5xx (the view had ended), or a read
   * started `POSTHOG_LOST_CREATE_WINDOW` after the create, proves that it did not apply.
   * @throws Error naming the candidates and `adoptHint` when more than one object (or a concurrent create of
   *   the same name) could be it; `lost`, annotated, when it provably did not apply; an error saying the outcome
   *   is unknown and what the next `up` will do, when it could not be decided within the wait; the list's error
   *   (the outcome stays unknown: the next create of it in the run looks first).
   */
  settleLost<T extends Candidate>(
    list: () => Promise<readonly T[]>,
    lost: Error | undefined,
    adoptHint: string,
  ): Promise<T>;
  /**
   * Before this create writes, when {@link mayHaveMade}: the object an earlier create of this resource made (a
   * killed run's, from the journal, or one that lost its answer earlier in this run), found in `list()` (objects
   * named as this create's, or one of `alsoNamed`), adopted now; undefined when it provably made none (its write
   * was answered by PostHog's own 5xx, or a read started `POSTHOG_LOST_CREATE_WINDOW` after it shows none). While
   * it may still be applied, reads again up to `POSTHOG_LOST_CREATE_WAIT`, then throws, having sent nothing.
   * @throws Error naming the candidates and `adoptHint` when which object it made cannot be proved; an error
   *   saying the earlier create's outcome is still unknown, when, and how, the next `up` decides it.
   */
  recoverPrior<T extends Candidate>(
    list: () => Promise<readonly T[]>,
    adoptHint: string,
    alsoNamed?: readonly string[],
  ): Promise<T | undefined>;
  /** Candidates by name that are not taken, before their `created_at` is known (to fetch them one by one). */
  untaken<T extends Candidate>(items: readonly T[]): T[];
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
   * Before this create writes: the one object among `items` (untaken, of this name, created since the earliest
   * such earlier create started) that the earlier create made, adopted now (marked made); undefined when there is
   * none (the earlier creates are known to have made nothing only when the read at `readAt` proves it: see
   * {@link recoverPrior}).
   * @throws Error naming the candidates and `adoptHint` when it cannot be proved (several candidates, several
   *   earlier creates, or another create of the same name running).
   */
  recoverEarlier<T extends Candidate>(items: readonly T[], adoptHint: string, readAt?: number): T | undefined;
}

/**
 * Registers a create of object `name` of `type` in `scope` (an organization or project id), started now.
 * Call before the POST; call `made`/`failed`/`adopt` on its outcome.
 */
export function beginCreate(
  type: string,
  scope: string,
  name: string,
  where?: JournalContext,
): CreateOperation {
  const key = `${type}\n${scope}\n${name}`;
  const rec: CreateRecord = {
    key,
    started: Date.now(),
    ended: undefined,
    id: undefined,
    madeNothing: false,
    lost: false,
    finished: false,
    resource: where?.resource,
    after: undefined,
  };
  /** Earlier creates of the same object (and resource, when both are known) whose answer was lost. */
  const earlier = () =>
    records.filter(
      (r) =>
        r !== rec &&
        r.key === key &&
        r.lost &&
        r.id === undefined &&
        !r.madeNothing &&
        (r.resource === undefined || rec.resource === undefined || r.resource === rec.resource),
    );
  records.push(rec);
  const isTaken = (id: number | string) => taken.has(`${type}\n${String(id)}`);
  const journalKey: JournalKey | undefined =
    where?.resource !== undefined && stack !== undefined
      ? {
          type,
          host: where.host,
          organization: where.organization,
          scope,
          stack,
          resource: where.resource,
          name,
        }
      : undefined;
  const forget = () => {
    if (journalKey) forgetCreate(journalKey);
  };
  /** This create's journal entry, once written. */
  let entry: JournalEntry | undefined;
  const op: CreateOperation = {
    previous: journalKey ? pendingCreate(journalKey) : undefined,
    fromPrevious(items, adoptHint, alsoNamed = []) {
      const since = op.previous?.startedAt;
      if (since === undefined) return undefined;
      const madeId = op.previous?.madeId;
      if (madeId !== undefined) {
        // The dead create returned this id (its engine died before recording it): adopt it if it still exists.
        const made = items.find(
          (x) =>
            String(x.id) === madeId &&
            !isTaken(x.id) &&
            (x.name === name || alsoNamed.includes(String(x.name))),
        );
        if (made) {
          op.made(madeId);
          return made;
        }
      }
      const now = Date.now();
      // Not an object another create of this stack made (its entry still names it), not one older than the dead
      // create's watermark (it existed before the create started).
      const others = journalKey ? madeByOthers(journalKey) : new Set<string>();
      const candidates = items.filter(
        (x) =>
          (x.name === name || alsoNamed.includes(String(x.name))) &&
          !isTaken(x.id) &&
          !others.has(String(x.id)) &&
          above(x, op.previous?.after) &&
          createdWithin(x, since, now),
      );
      const [only] = candidates;
      if (candidates.length === 1 && only) {
        op.made(String(only.id));
        return only;
      }
      if (candidates.length === 0) return undefined;
      // Look-alike resources of this stack whose creates all have unknown outcomes (twelve dashboards of one name,
      // their creates held past the timeout or killed): when there are no more candidates than such creates, each
      // candidate is one of theirs, and any of them is this resource's to adopt (it converges to its own inputs). The
      // lowest id, so that the next look-alike takes the next one; they run one at a time ({@link oneAtATime}).
      if (journalKey && candidates.length <= unknownLookAlikes(journalKey)) {
        const lowest = [...candidates].sort(
          (a, b) => Number(a.id) - Number(b.id),
        )[0] as (typeof candidates)[number];
        op.made(String(lowest.id));
        return lowest;
      }
      throw new Error(
        `${type} "${name}": a previous create of this resource (started ${new Date(since).toISOString()}) never returned ` +
          `(its run was killed), and ${candidates.length} ${type}s of that name were created since: ` +
          `${candidates.map((c) => `${c.id} (created ${c.created_at})`).join(", ")}. Which one it made cannot be proved; ` +
          `nothing was adopted. Adopt the right one explicitly with ${adoptHint} (and delete the others), or delete them all and run up again`,
      );
    },
    async journal(extra) {
      const bounds = [
        extra?.after,
        ...records.filter((r) => r !== rec && r.key === key && r.id !== undefined).map((r) => Number(r.id)),
      ].filter((n): n is number => n !== undefined && Number.isInteger(n));
      rec.after = bounds.length > 0 ? Math.max(...bounds) : undefined;
      if (journalKey) {
        const { after: _, ...rest } = extra ?? {};
        entry = {
          ...journalKey,
          startedAt: rec.started,
          ...rest,
          ...(rec.after !== undefined ? { after: rec.after } : {}),
        };
        await recordCreate(entry);
      }
    },
    made(id) {
      rec.id = id;
      rec.ended = Date.now();
      markManaged(type, id);
      if (journalKey) completeCreate(entry ?? { ...journalKey, ...op.previous, startedAt: rec.started }, id);
    },
    failed() {
      rec.madeNothing = true;
      rec.ended = Date.now();
      forget();
    },
    untaken(items) {
      return items.filter((x) => x.name === name && !isTaken(x.id));
    },
    lost() {
      rec.lost = true;
      rec.ended = Date.now();
    },
    get hasEarlier() {
      return earlier().length > 0;
    },
    get mayHaveMade() {
      return op.previous !== undefined || op.hasEarlier;
    },
    async recoverPrior(list, adoptHint, alsoNamed = []) {
      if (!op.mayHaveMade) return undefined;
      const { waitMs, windowMs } = lostCreateTimes();
      const giveUp = Date.now() + waitMs;
      let pause = 1_000;
      let reads = 0;
      for (;;) {
        const readAt = Date.now();
        const items = await list();
        reads++;
        const found =
          (op.previous ? op.fromPrevious(items, adoptHint, alsoNamed) : undefined) ??
          (op.hasEarlier ? op.recoverEarlier(items, adoptHint, readAt) : undefined);
        if (found) return found;
        // Nothing it could have made is listed: proof only for creates PostHog had finished with, or started a
        // window before this read.
        const previous = op.previous;
        const pending = [
          ...(previous && previous.madeId === undefined && readAt < previous.startedAt + windowMs
            ? [previous.startedAt]
            : []),
          ...earlier()
            .filter((r) => !decided(r, readAt))
            .map((r) => r.started),
        ];
        if (pending.length === 0) return undefined;
        const decidedAt = Math.max(...pending) + windowMs;
        const now = Date.now();
        if (now >= giveUp) {
          const since = new Date(Math.min(...pending)).toISOString();
          throw new Error(
            `${type} "${name}": an earlier create of this resource (started ${since}) has an unknown outcome (its ` +
              `answer was lost, or its run was killed), and PostHog may still be processing it: no ${type} it could have ` +
              `made appeared in ${reads} list read(s) over ${Math.round((now - giveUp + waitMs) / 1000)} s. Nothing was ` +
              `created. Run pulumi up again: the next up adopts the ${type} that create made once PostHog shows it, and ` +
              `creates one only if PostHog still shows none after ${new Date(decidedAt).toISOString()} ` +
              `(POSTHOG_LOST_CREATE_WINDOW, ${windowText(windowMs)} after the create started). If you know it never ` +
              `reached PostHog, run up with POSTHOG_LOST_CREATE_WINDOW=0 to create it now`,
          );
        }
        await sleep(Math.min(pause, giveUp - now, decidedAt - now + 10));
        pause *= 2;
      }
    },
    recoverEarlier(items, adoptHint, readAt = Date.now()) {
      const before = earlier();
      if (before.length === 0) return undefined;
      const since = Math.min(...before.map((r) => r.started));
      const bounds = before.map((r) => r.after);
      const after = bounds.every((b) => b !== undefined) ? Math.min(...(bounds as number[])) : undefined;
      const candidates = op.untaken(items).filter((x) => createdWithin(x, since) && above(x, after));
      if (candidates.length === 0) {
        // Only what a read can prove: creates PostHog had finished with, or started a window before the read.
        for (const r of before) if (decided(r, readAt)) r.madeNothing = true;
        return undefined;
      }
      const running = records.filter(
        (r) =>
          r !== rec &&
          r.key === key &&
          r.id === undefined &&
          !r.madeNothing &&
          !r.lost &&
          r.ended === undefined,
      );
      const [only] = candidates;
      const [one] = before;
      if (candidates.length === 1 && only && before.length === 1 && one && running.length === 0) {
        one.id = String(only.id);
        op.made(String(only.id));
        return only;
      }
      for (const r of before) r.madeNothing = true; // reported here: not again by the next create
      throw new Error(
        `${type} "${name}": ${before.length} earlier create(s) of it in this run lost their answer, and which ` +
          `object they made cannot be proved: ${candidates.map((c) => `${c.id} (created ${c.created_at})`).join(", ")}` +
          `${running.length > 0 ? `, while ${running.length} other create(s) of that name run` : ""}. Nothing was ` +
          `adopted. Adopt the right one explicitly with ${adoptHint} (and delete the others), or delete them and run up again`,
      );
    },
    async settleLost(list, lost, adoptHint) {
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
          op.lost(); // the next create of this object in the run looks for what this one made first
          throw e;
        }
        reads++;
        const made = match(items, cause, adoptHint);
        if (made) return made;
        if (decided(rec, readAt)) {
          rec.ended = Date.now();
          rec.madeNothing = true;
          forget(); // nothing of it was made in its window: the next create starts afresh
          const outside = op.untaken(items);
          throw new Error(
            outside.length === 0
              ? `${cause.message}. No ${type} named "${name}" exists that no other resource holds, and PostHog had ` +
                  `finished with the request: the create did not apply, and nothing was adopted; run up again`
              : `${cause.message}. No ${type} named "${name}" that no other resource holds was created within this create's window ` +
                  `(this machine's clock, ±${CLOCK_SKEW_MS / 1000} s), so nothing was adopted; other ${type}s of that name: ` +
                  `${outside.map((c) => `${c.id} (created ${c.created_at ?? "at an unknown time"})`).join(", ")}. If PostHog's ` +
                  `clock is that far from this machine's, one of them may be the one this create made: adopt it explicitly with ${adoptHint}; otherwise run up again`,
            { cause },
          );
        }
        const now = Date.now();
        if (now >= giveUp) {
          op.lost(); // its journal entry stays: the next run looks for what it made before it creates anything
          const decidedAt = new Date(rec.started + windowMs).toISOString();
          const next = journalKey
            ? `The next pulumi up looks for it first: it adopts the ${type} this create made once PostHog shows it, ` +
              `and creates one only if PostHog still shows none after ${decidedAt} (POSTHOG_LOST_CREATE_WINDOW, ` +
              `${windowText(windowMs)} after the create started). Run pulumi up again`
            : type === "Invite"
              ? "The next pulumi up sends the invite again (invites are not journaled): PostHog keeps one invite per " +
                "address, so no second invite is made, but a second e-mail may be sent; to avoid it, check PostHog's " +
                `pending invites for ${name} first and declare the Invite with ${adoptHint} if it is there`
              : `This create is not journaled (${journalDir() === undefined ? "POSTHOG_CREATE_JOURNAL_DIR=off" : "the resource was declared without the SDK's classes"}), ` +
                `so the next up cannot recognise what it made: check PostHog for a ${type} named "${name}" created after ` +
                `${new Date(rec.started).toISOString()}, and adopt it with ${adoptHint}, before you run up again`;
          throw new Error(
            `${type} "${name}": the outcome of its create is unknown: ${cause.message}. PostHog may still be processing ` +
              `the request: no ${type} of that name made since the create started appeared in ${reads} list read(s) ` +
              `over ${Math.round(waitMs / 1000)} s, and such a read proves nothing. Nothing was adopted and nothing ` +
              `else was created. ${next}`,
            { cause },
          );
        }
        await sleep(Math.min(pause, giveUp - now));
        pause *= 2;
      }
    },
  };
  /**
   * The one object among `items` this create provably made (marked made), or undefined when none could be.
   * @throws Error naming the candidates and `adoptHint` when more than one object, or another create of the same
   *   name that may still apply, could be it.
   */
  function match<T extends Candidate>(items: readonly T[], lost: Error, adoptHint: string): T | undefined {
    const now = Date.now();
    const candidates = op
      .untaken(items)
      .filter((x) => createdWithin(x, rec.started, now) && above(x, rec.after));
    // Other creates of the same object name that may have made one of the candidates: not resolved to an id, not
    // failed definitely, and running at some point of this create's window (one whose outcome stayed unknown may
    // be applied by PostHog still: it runs until a read decides it).
    const rivals = records.filter(
      (r) =>
        r !== rec &&
        r.key === key &&
        r.id === undefined &&
        !r.madeNothing &&
        r.started <= now + CLOCK_SKEW_MS &&
        ((r.lost && !r.finished) || (r.ended ?? now) >= rec.started - CLOCK_SKEW_MS),
    );
    const [only] = candidates;
    if (candidates.length === 1 && only && rivals.length === 0) {
      op.made(String(only.id));
      return only;
    }
    if (candidates.length === 0) return undefined;
    rec.ended = now;
    rec.lost = true; // a later create of this object in the run looks for what it made first
    const ids = candidates.map((c) => `${c.id} (created ${c.created_at})`).join(", ");
    const why =
      candidates.length > 1
        ? `${candidates.length} ${type}s named "${name}" were created since it started: ${ids}`
        : `${type} ${ids} named "${name}" was created since it started, but ${rivals.length} other create(s) of a ${type} named "${name}" ran at the same time in this run and may have made it`;
    throw new Error(
      `${type} "${name}": the answer to its create was lost (${lost.message}), and which object it made cannot be proved: ${why}. ` +
        `Nothing was adopted. Check them in PostHog, then adopt the right one explicitly with ${adoptHint} (and delete the others), or delete them all and run up again`,
      { cause: lost },
    );
  }
  return op;
}
