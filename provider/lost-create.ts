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

import {
  completeCreate,
  forgetCreate,
  type JournalEntry,
  type JournalKey,
  madeByOthers,
  pendingCreate,
  recordCreate,
  settled,
} from "./create-journal";
import { engineReachable } from "./engine-watch";

/** Clock difference allowed between this host and PostHog's `created_at`, in ms, on each side of the window. */
export const CLOCK_SKEW_MS = 60_000;

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
  /** The Pulumi resource name, when the SDK passed it. */
  resource: string | undefined;
  /**
   * Every object this create could have made has a greater (integer) id: set by {@link CreateOperation.journal}
   * (see {@link idWatermark}); undefined when unknown or when ids are not integers.
   */
  after: number | undefined;
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
   * After an AmbiguousWriteError: the one object among `items` this create provably made, or throws.
   * `items` are the objects of the scope (e.g. the list of the project's dashboards); each needs `created_at`.
   * @throws Error naming the candidates and `adoptHint` when more than one object (or a concurrent create of
   *   the same name) could be it; `lost` itself, annotated, when none could be (the create did not apply).
   */
  adopt<T extends Candidate>(items: readonly T[], lost: Error, adoptHint: string): T;
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
   * Before this create writes: {@link fromPrevious}, else {@link recoverEarlier}, on the same `items`; the object
   * an earlier create of this resource made (adopted now), or undefined.
   * @throws Error as they do, when which object it made cannot be proved.
   */
  recover<T extends Candidate>(items: readonly T[], adoptHint: string): T | undefined;
  /**
   * Before this create writes: the one object among `items` (untaken, of this name, created since the earliest
   * such earlier create started) that the earlier create made, adopted now (marked made); undefined when none was
   * made (the earlier creates are then known to have made nothing).
   * @throws Error naming the candidates and `adoptHint` when it cannot be proved (several candidates, several
   *   earlier creates, or another create of the same name running).
   */
  recoverEarlier<T extends Candidate>(items: readonly T[], adoptHint: string): T | undefined;
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
    recover(items, adoptHint) {
      return (
        (op.previous ? op.fromPrevious(items, adoptHint) : undefined) ??
        (op.hasEarlier ? op.recoverEarlier(items, adoptHint) : undefined)
      );
    },
    recoverEarlier(items, adoptHint) {
      const before = earlier();
      if (before.length === 0) return undefined;
      const since = Math.min(...before.map((r) => r.started));
      const bounds = before.map((r) => r.after);
      const after = bounds.every((b) => b !== undefined) ? Math.min(...(bounds as number[])) : undefined;
      const candidates = op.untaken(items).filter((x) => createdWithin(x, since) && above(x, after));
      if (candidates.length === 0) {
        for (const r of before) r.madeNothing = true; // their creates did not apply
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
    adopt(items, lost, adoptHint) {
      const now = Date.now();
      const candidates = op
        .untaken(items)
        .filter((x) => createdWithin(x, rec.started, now) && above(x, rec.after));
      // Other creates of the same object name that may have made one of the candidates: not resolved to an id,
      // not failed definitely, and running at some point of this create's window.
      const rivals = records.filter(
        (r) =>
          r !== rec &&
          r.key === key &&
          r.id === undefined &&
          !r.madeNothing &&
          r.started <= now + CLOCK_SKEW_MS &&
          (r.ended ?? now) >= rec.started - CLOCK_SKEW_MS,
      );
      const [only] = candidates;
      if (candidates.length === 1 && only && rivals.length === 0) {
        op.made(String(only.id));
        return only;
      }
      rec.ended = now;
      if (candidates.length === 0) {
        rec.madeNothing = true;
        forget(); // nothing of it was made in its window: the next create starts afresh
        const outside = op.untaken(items);
        throw new Error(
          outside.length === 0
            ? `${lost.message}. No ${type} named "${name}" exists that no other resource holds: the create did not apply, and nothing was adopted; run up again`
            : `${lost.message}. No ${type} named "${name}" that no other resource holds was created within this create's window ` +
                `(this machine's clock, ±${CLOCK_SKEW_MS / 1000} s), so nothing was adopted; other ${type}s of that name: ` +
                `${outside.map((c) => `${c.id} (created ${c.created_at ?? "at an unknown time"})`).join(", ")}. If PostHog's ` +
                `clock is that far from this machine's, one of them may be the one this create made: adopt it explicitly with ${adoptHint}; otherwise run up again`,
          { cause: lost },
        );
      }
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
    },
  };
  return op;
}
