/**
 * The create journal: what a create whose process died (the engine killed mid-`up`, and the provider host with
 * it) leaves for the next run, so that run adopts the object the dead create made instead of making a second
 * one (README, "Lost creates").
 *
 * - **What.** One small JSON file per create, written and fsync'd (asynchronously, off the event loop) BEFORE the create's first write. When the create
 *   returns with an object, the entry records its id (`madeId`) and stays until a later operation of the run after
 *   it (diff, refresh, update, delete of that id) shows the engine recorded the object: an engine killed between
 *   the create's answer and its checkpoint loses the id, and the next run adopts it from here. A create that
 *   fails with a definite answer removes its entry. It holds the
 *   resource type, PostHog host (origin and path, never credentials), organization, scope (organization or
 *   project id), the Pulumi project and stack, the Pulumi resource name (`__resource`, passed by the SDK classes), the object's name,
 *   `startedAt` (epoch ms of this machine's clock) and, for BatchExportPause, whether the export was paused
 *   before (for Member, the person's level before). Nothing secret: no API key, no tokens, no outputs.
 * - **Where.** `$POSTHOG_CREATE_JOURNAL_DIR`, else `$XDG_STATE_HOME/pulumi-posthog/creates`, else
 *   `~/.local/state/pulumi-posthog/creates`: per user, outside the program's repository. `POSTHOG_CREATE_JOURNAL_DIR=off`
 *   turns it off.
 * - **How it is used.** A create that finds an entry of its own key (a previous create of the same resource whose
 *   object no later run recorded) adopts the object that carries the entry's nonce (a Project or Dashboard create
 *   names its object provisionally until it has the answer: provider/framework/lost-create.ts), else the entry's `madeId` when
 *   that object still exists and no resource of this run holds it. An entry with neither (an Invite's) proves nothing:
 *   an object of that name made since its start may be someone else's, so the create fails naming it and the explicit
 *   adoption input. None: the dead create did not apply once `POSTHOG_LOST_CREATE_WINDOW` has passed since it started;
 *   its entry is then kept as abandoned (`lost-<nonce>.json`, {@link abandonCreate}) and the create goes on. A Domain
 *   (unique by name) found with an entry is the one the dead create made (the create lists the domains before it
 *   writes its entry). A BatchExportPause takes `pausedBefore` from the entry. The stack's later operations look for
 *   the objects of the entries whose outcome stayed unknown ({@link unknownOutcomes}) and name those no resource
 *   holds.
 * - **Limits.** Only where the same user's state directory is seen again: a fresh CI runner has no journal, and
 *   then a create killed with its engine is made again on the next run (Pulumi's own way out:
 *   `pulumi refresh --import-pending-creates`, or adopt with the resource's adoption input). Resources declared
 *   without the SDK classes (no resource name) are not journaled.
 */
import { createHash, randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { mkdir, open, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

/** What identifies one create across processes: same values, same journal entry. */
export interface JournalKey {
  type: string;
  /** The PostHog host as configured (origin and path prefix); credentials in it are dropped. */
  host: string;
  organization: string;
  /** Organization or project id the object lives in. */
  scope: string;
  /** The Pulumi project and stack, `<project>/<stack>`: one stack never adopts what another's create made. */
  stack: string;
  /** The Pulumi resource name. */
  resource: string;
  /** The object's name (project or dashboard name, domain, batch export id). */
  name: string;
}

/** A journal entry: the key, when the create started (epoch ms) and what it saw before writing. */
export interface JournalEntry extends JournalKey {
  startedAt: number;
  /** BatchExportPause: whether the export was paused before this resource took it over. */
  pausedBefore?: boolean;
  /** Member: the person's level before this resource took them over. */
  levelBefore?: number;
  /** The id the create returned, once it returned (the engine may not have recorded it). */
  madeId?: string;
  /**
   * Every object this create could make has a greater integer id (the id watermark of its type and scope, and the
   * ids earlier creates of the same name in its process made): absent when unknown.
   */
  after?: number;
  /**
   * The create's nonce (12 hex digits), for a create that names its object provisionally (Project, Dashboard): the
   * object it made carries it in its name until the create saw its answer and renamed it (provider/framework/lost-create.ts,
   * {@link markerOf}). Absent for the other types, and in entries of earlier versions.
   */
  nonce?: string;
}

/**
 * An entry kept after its create was taken as not applied (a list read started `POSTHOG_LOST_CREATE_WINDOW` after
 * it showed no object with its nonce) and its resource's object was made again, or the resource went on without it:
 * if PostHog applies it later, the object is an orphan, and the next operations of the stack report it
 * (provider/framework/lost-create.ts, {@link reportLostObjects}). Written as `lost-<nonce>.json` beside the entries.
 */
export interface AbandonedEntry extends JournalEntry {
  nonce: string;
  /** When the create was taken as not applied (epoch ms). */
  abandonedAt: number;
}

/** The journal directory, or undefined when turned off. */
export function journalDir(): string | undefined {
  const set = process.env.POSTHOG_CREATE_JOURNAL_DIR;
  if (set === "off") return undefined;
  if (set) return set;
  const state = process.env.XDG_STATE_HOME || join(homedir(), ".local", "state");
  return join(state, "pulumi-posthog", "creates");
}

/** The host as the journal records it: origin and path, without credentials, query or fragment. */
export function journalHost(host: string): string {
  return withoutCredentials(host);
}

function withoutCredentials(host: string): string {
  try {
    const u = new URL(host);
    u.username = "";
    u.password = "";
    u.search = "";
    u.hash = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return host.replace(/\/\/[^/@]*@/, "//");
  }
}

function fileOf(dir: string, key: JournalKey): string {
  const k = { ...key, host: withoutCredentials(key.host) };
  const text = JSON.stringify([k.type, k.host, k.organization, k.scope, k.stack, k.resource, k.name]);
  return join(dir, `${createHash("sha256").update(text).digest("hex").slice(0, 32)}.json`);
}

/**
 * The entry a previous create of this key left (its process died before the create returned), or undefined.
 * An unreadable or foreign entry counts as none. Reads one small file; no HTTP request.
 */
export function pendingCreate(key: JournalKey): JournalEntry | undefined {
  const dir = journalDir();
  if (!dir) return undefined;
  try {
    const e = JSON.parse(readFileSync(fileOf(dir, key), "utf8")) as JournalEntry;
    const same =
      e.type === key.type &&
      e.organization === key.organization &&
      e.scope === key.scope &&
      e.stack === key.stack &&
      e.resource === key.resource &&
      e.name === key.name &&
      typeof e.startedAt === "number";
    return same ? e : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes the entry of a create about to start (write to a temporary file, fsync, rename, fsync the directory),
 * replacing an older one of the same key. Asynchronous: the provider host goes on serving other operations while
 * the disk syncs (synchronous fsyncs cost ~5 ms each of blocked event loop per create, 1.7 s in an up of 300
 * resources; bench/scale.ts). Failing to write is not fatal (the create goes on unjournaled; a line on stdout
 * says so). Resolves once the entry is on disk.
 */
export async function recordCreate(entry: JournalEntry): Promise<void> {
  const dir = journalDir();
  if (!dir) return;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const file = fileOf(dir, entry);
    const tmp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    const fh = await open(tmp, "w", 0o600);
    try {
      await fh.writeFile(JSON.stringify({ ...entry, host: withoutCredentials(entry.host) }));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
    const d = await open(dir, "r");
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch (e) {
    console.log(
      `warning: could not write the create journal in ${dir} (${(e as Error).message}); ` +
        "if this run is killed during this create, the next run cannot recognise what it made",
    );
  }
}

/** The file of the abandoned entry of the create with this nonce (12 hex digits: no path in it). */
function abandonedFile(dir: string, nonce: string): string {
  return join(dir, `lost-${nonce.replace(/[^0-9a-f]/g, "")}.json`);
}

/**
 * Keeps the entry of a create that was taken as not applied while PostHog may still apply it (its nonce is known):
 * writes it as `lost-<nonce>.json` (a temporary file renamed over it), then removes the resource's entry if it is
 * still this one. Failing to write is not fatal (a line on stdout says so). No HTTP request.
 */
export function abandonCreate(entry: JournalEntry & { nonce: string }): void {
  const dir = journalDir();
  if (!dir) return;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = abandonedFile(dir, entry.nonce);
    const tmp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    const kept: AbandonedEntry = { ...entry, host: withoutCredentials(entry.host), abandonedAt: Date.now() };
    writeFileSync(tmp, JSON.stringify(kept), { mode: 0o600 });
    renameSync(tmp, file);
    if (pendingCreate(entry)?.nonce === entry.nonce) unlinkSync(fileOf(dir, entry));
  } catch (e) {
    console.log(
      `warning: could not write the create journal in ${dir} (${(e as Error).message}); ` +
        "if PostHog applies the create it took as not applied, no later run will name the object it made",
    );
  }
}

/**
 * The entries of creates of stack `stack` (`<project>/<stack>`) whose outcome is unknown and whose object carries a
 * nonce: the abandoned ones ({@link abandonCreate}), and with `pending` the entries that no create returned from
 * (no `madeId`: a lost answer, or a killed run). Reads the journal directory, and only the files it needs: the
 * abandoned entries always (usually none), the others with `pending`. No HTTP request.
 */
export function unknownOutcomes(stack: string, pending: boolean): (JournalEntry & { nonce: string })[] {
  const dir = journalDir();
  if (!dir) return [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: (JournalEntry & { nonce: string })[] = [];
  for (const n of names) {
    if (!n.endsWith(".json") || (!pending && !n.startsWith("lost-"))) continue;
    try {
      const e = JSON.parse(readFileSync(join(dir, n), "utf8")) as JournalEntry;
      if (
        e.stack === stack &&
        typeof e.nonce === "string" &&
        typeof e.startedAt === "number" &&
        e.madeId === undefined
      ) {
        out.push(e as JournalEntry & { nonce: string });
      }
    } catch {
      // gone meanwhile, or not an entry
    }
  }
  return out;
}

/**
 * Removes the entry of the create with this nonce: its abandoned entry, and the resource's entry if it is still
 * this create's (the object it made was reported and is gone, or never appeared in the time it is kept).
 */
export function dropUnknown(entry: JournalEntry & { nonce: string }): void {
  const dir = journalDir();
  if (!dir) return;
  try {
    unlinkSync(abandonedFile(dir, entry.nonce));
  } catch {
    // not abandoned
  }
  if (pendingCreate(entry)?.nonce === entry.nonce) forgetCreate(entry);
}

/** Removes the entry of a create that failed with a definite answer (nothing made). */
export function forgetCreate(key: JournalKey): void {
  const dir = journalDir();
  if (!dir) return;
  try {
    unlinkSync(fileOf(dir, key));
  } catch {
    // none: nothing to forget
  }
}

/** The index file naming the entry of the create that made object `id` of `type`. */
function madeFile(dir: string, type: string, id: string): string {
  return join(
    dir,
    `made-${createHash("sha256")
      .update(JSON.stringify([type, id]))
      .digest("hex")
      .slice(0, 32)}`,
  );
}

/** The writes of {@link completeCreate} under way in one run (a field of its `Creates`): {@link completionsWritten} awaits them. */
export type Completions = Set<Promise<void>>;

/**
 * Records that the create of `entry` returned object `id`: the entry keeps it (`madeId`) until {@link settled}
 * sees that id in a later operation. Written in place without fsync (a temporary file renamed over the entry):
 * it survives a killed process; after a machine crash the entry written before the create (fsync'd) is still
 * there, and the next create finds its object by name and time instead of by id. Asynchronous (the provider host
 * goes on serving other operations meanwhile: the synchronous write and rename blocked its event loop for 264 ms
 * in an `up` of 300 resources, bench/RESULTS.md); the create awaits {@link completionsWritten} before it answers
 * the engine, so the record is on disk before the engine can record the object.
 */
export function completeCreate(completing: Completions, entry: JournalEntry, id: string): void {
  const dir = journalDir();
  if (!dir) return;
  const write = (async () => {
    try {
      const file = fileOf(dir, entry);
      const tmp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
      await writeFile(tmp, JSON.stringify({ ...entry, madeId: id, host: withoutCredentials(entry.host) }), {
        mode: 0o600,
      });
      await rename(tmp, file);
      await writeFile(madeFile(dir, entry.type, id), file);
    } catch {
      // without the index the entry stays until the next create of the resource reads and replaces it
    }
  })();
  completing.add(write);
  void write.finally(() => completing.delete(write));
}

/** Resolves once every {@link completeCreate} of the run started so far is on disk (never rejects). */
export async function completionsWritten(completing: Completions): Promise<void> {
  await Promise.all(completing);
}

/**
 * An operation after the create (diff, refresh, update, delete of object `id` of `type`) shows the engine
 * recorded it: the create's entry is removed (asynchronously: other operations go on meanwhile; the operation
 * awaits it, so a host ended right after it leaves none behind). One `stat` when there is none (the usual case).
 */
export async function settled(type: string, id: string): Promise<void> {
  const dir = journalDir();
  if (!dir || !id) return;
  const index = madeFile(dir, type, id);
  if (!existsSync(index)) return; // no entry made this object (or it is gone already)
  try {
    const entry = await readFile(index, "utf8");
    if (entry.startsWith(dir)) await unlink(entry).catch(() => undefined);
    await unlink(index);
  } catch {
    // gone meanwhile
  }
}
