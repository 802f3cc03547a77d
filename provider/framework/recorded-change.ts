/**
 * The journaled create of a resource that takes over an object which already exists and changes one of its
 * settings (a BatchExportPause pauses a batch export, a Member sets a person's level), written once: what the create
 * found before it changed anything is journaled first, so that destroy can set it back even when the create's run was
 * killed after the change (the next create takes what the dead one found, not what it left).
 */
import { AmbiguousWriteError } from "../client/errors";
import type { JournalEntry } from "./create-journal";
import { beginCreate, type Creates, type JournalContext } from "./lost-create";

/** What a create changing an existing object found first: the journal's field for it. */
type Found = Pick<JournalEntry, "pausedBefore" | "levelBefore">;

/** What a resource gives {@link recordedChange}. */
export interface RecordedChange<K extends keyof Found, T> {
  /** The resource type, e.g. `Member`. */
  type: string;
  /** Where the object lives (the organization id). */
  scope: string;
  /** The object's id as declared (a batch export's id, a person's user UUID): the create's name. */
  id: string;
  /** Where it is journaled (`journalContext`). */
  where: JournalContext;
  /** The journal's field for what was found (`pausedBefore`, `levelBefore`), and its value as read now. */
  field: K;
  found: NonNullable<Found[K]>;
  /** The change (one write); its result as the resource reports it. */
  change(): Promise<T>;
  /** The id of the object the change's result shows (the resource's id; PostHog's spelling of `id`). */
  idOf(result: T): string;
}

/**
 * Runs `c.change()` as a journaled create: what was found before is the previous create's record of it (a run
 * killed after its change), else `c.found`; it is journaled before the write; a definite refusal ends the create (its
 * entry removed), a lost answer keeps the entry so the next create still knows what was found.
 * @returns the change's result and what was found before it
 * @throws what `change` throws
 */
export async function recordedChange<K extends keyof Found, T>(
  run: Creates,
  c: RecordedChange<K, T>,
): Promise<{ result: T; before: NonNullable<Found[K]> }> {
  const op = beginCreate(run, c.type, c.scope, c.id, c.where);
  const before = (op.previous?.[c.field] ?? c.found) as NonNullable<Found[K]>;
  await op.journal({ [c.field]: before } as Found);
  let result: T;
  try {
    result = await c.change();
  } catch (e) {
    // A lost answer keeps the entry: the next create still knows what was found before.
    if (!(e instanceof AmbiguousWriteError)) op.failed();
    throw e;
  }
  op.made(c.idOf(result));
  return { result, before };
}
