/**
 * The one generic lifecycle helper shared by every resource: {@link defineResource} turns a small
 * definition (inputs schema, create/read/update/delete over the client) into a Pulumi dynamic
 * `ResourceProvider`. What it owns, for all resources alike:
 *
 * - `configure`: keeps the stack config (`posthog:apiKey`, `posthog:host`, …) in memory; the next operation
 *   builds its client from it (else from the environment), and later ones reuse that client. It also starts the
 *   watch that ends the provider host once the engine is gone (provider/framework/engine-watch.ts).
 * - `check`: zod validation of the inputs, failures naming the property and the accepted values (lengths, time
 *   zones, template shape, request body size: whatever the API would refuse for its form), defaults applied;
 *   and one object, one resource (provider/framework/claims.ts): a second resource of the program managing the same
 *   object fails, naming both; NUL characters, lone surrogates and nesting PostHog refuses (provider/framework/text.ts);
 *   the settings' form (a malformed host, organization or project id fails as the first write would). No HTTP
 *   request, except in a preview (the SDK's `__resource.preview`) or through the plugin (`__resource.prove`): once
 *   the inputs pass, the run's one access check proves the settings reach PostHog, changes or none; and in a
 *   preview a create reads the object it will adopt, if any, to say which (provider/framework/adoption.ts).
 * - `diff`: compares the old OUTPUTS with the new inputs (an input left unset is not compared, so server
 *   defaults never show as changes); `replaces` and `deleteBeforeReplace`; fails when the old outputs show the
 *   new inputs can never be applied (`unsatisfiable`, e.g. a server without a field). No HTTP request, except
 *   the run's one access check in a preview that updates or replaces (made by check already, as a rule).
 * - `create`/`read`/`update`/`delete` with a client whose settings are resolved in the host at run time (stack
 *   config → environment): nothing secret is captured in the serialized provider.
 * - the first create/read/update/delete of the process proves the settings reach PostHog (host, key,
 *   organization, and the project when one is set) with one request, so a wrong id fails before any write.
 * - `read` returns the live outputs AND the inputs derived from them, so refresh shows drift; `{id: ""}`
 *   only when PostHog says that the object itself is gone (a 404 naming no missing organization, project or
 *   endpoint, in PostHog's error body). `delete` treats the same 404 as done. Any other 404, a 401 or a 403 is
 *   an error naming the setting to check: nothing leaves the state.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import {
  type ConfigGetter,
  createClient,
  isObjectGone,
  MissingApiKeyError,
  NotFoundError,
  type PostHogClient,
} from "../client";
import { type AdoptionProbe, announceAdoption } from "./adoption";
import {
  byId,
  type Claimant,
  claim,
  conflictMessage,
  declaredId,
  type Identity,
  nameOf,
  rememberName,
} from "./claims";
import { completionsWritten } from "./create-journal";
import { underWayWhile, watchEngine } from "./engine-watch";
import { integerIdInput, shown } from "./inputs";
import { oversizedBodies } from "./limits";
import { managedByState, noteStack, reportLostObjects } from "./lost-create";
import { noteCreating, notePlanned } from "./policy-facts";
import { checkProviderSettings } from "./settings";
import { refusedText, wellFormed, withProgramText } from "./text";

/** Pulumi's marker for a value not known during preview (an output of a resource not yet created). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** The stack config handed to `configure()` (one stack per provider host process). */
let stackConfig: ConfigGetter | undefined;

/** The client of {@link operationClient}: built on first use after each `configure()`. */
let current: PostHogClient | undefined;
/** The client of {@link operationClient} for a refresh's reads (`findCacheMs`: {@link REFRESH_SNAPSHOT_MS}). */
let refreshing: PostHogClient | undefined;
/**
 * Every client built as {@link refreshing}: `read` asks this set, not `api === refreshing`, because the host calls
 * `configure()` once per resource type it loads (each type's provider is its own serialized shim), which drops the
 * pair of clients while reads that already got theirs are under way.
 */
const refreshClients = new WeakSet<PostHogClient>();
/** Whether this process has started a create, update or delete (of any resource type). */
let wrote = false;
/** `<type>/<id>` of every object read so far in this process. */
const readBefore = new Set<string>();

/**
 * How long a list read made during a refresh serves the refresh's later reads (ms): 60 s. The engine reads at
 * most 4 × CPUs resources at once, so the reads of 60 members arrive in waves; sharing only lists in flight
 * would send one list per wave (8 waves, on 2 CPUs), sharing the first one sends ⌈N/500⌉ pages.
 */
export const REFRESH_SNAPSHOT_MS = 60_000;

/**
 * How long one provider request may wait in all for rate limits (ms): an hour. The client sends at PostHog's pace
 * (480 a minute, 4,800 an hour): once a key's hour is used up (several stacks on one key, a 3,000-resource `up`
 * after a busy hour) the next slot may be most of an hour away, more than the client's default of 5 minutes. One
 * wait PostHog names in a 429 is still capped by `posthog:maxRateLimitWait`.
 */
export const PACING_MAX_WAIT_MS = 3_600_000;

/**
 * Items per page of the provider's list reads (members, invites, dashboards, domains, batch exports, projects):
 * 500. Every list read of the provider reads the whole list, and PostHog's LimitOffsetPagination sets no maximum
 * `limit` (api-behaviour §0.3: `max_limit` None): an organization of 600 members is 2 requests instead of 7, in
 * every wave of the engine's workers that finds members.
 */
export const LIST_PAGE_SIZE = 500;

/**
 * The client for a provider operation. Its settings are resolved once per `configure()` (the host calls it
 * when it loads a provider), on the first operation after it: the stack config, else the environment
 * (`POSTHOG_API_KEY`, `POSTHOG_HOST`, `POSTHOG_ORGANIZATION_ID`, `POSTHOG_PROJECT_ID`, …), as a native
 * provider reads its environment at Configure. Without `configure()` (in-process use), the environment is read
 * on the first operation. Nothing is captured in the serialized provider.
 *
 * `find()` list reads (members, invites, a dashboard's collaborators: PostHog has no GET of one) are shared:
 * - by a refresh's reads (`read` is `{type, id}` of an object not read before in this process, and the process
 *   has made no create, update or delete: a `pulumi refresh` or the refresh of `--refresh`, one provider host
 *   per run): a list read is reused for {@link REFRESH_SNAPSHOT_MS} after it completed, so a refresh reads each
 *   list once (a snapshot, as `pulumi refresh` reports the organization at one moment), whatever the engine's
 *   parallelism;
 * - otherwise only while in flight (`findCacheMs: 0`): concurrent operations share one list request, and no
 *   later operation (a create, an update, a second read of the same object) sees a list read from before a
 *   change made outside Pulumi.
 * A write through the provider drops the shared lists of its path either way (the client's coalescing).
 * Connection pools and the rate limiter are shared process-wide by the client module.
 *
 * Before handing the client out, it proves the settings reach PostHog: `checkAccess({once: true})`, one GET of
 * the organization's projects (or of the configured project) the first time in this process for these
 * settings, none later (the host is one process per run, and `configure()` runs once per serialized provider:
 * the outcome is shared by key, host, organization and project). A wrong key, host, organization or project
 * therefore fails the run's first operation, before any write, and every later one with the same error.
 * @throws MissingApiKeyError when neither source has a key (nothing is kept: the next operation tries again).
 * @throws InvalidInputError when a setting is malformed (provider/framework/settings.ts `checkProviderSettings`),
 *   before any request.
 * @throws the access check's errors (UnauthenticatedError, NotFoundError, ForbiddenError, ConnectionError…),
 *   naming the setting to check and where it came from.
 */
export async function operationClient(read?: { type: string; id: string }): Promise<PostHogClient> {
  let client = clients();
  const key = read && `${read.type}/${read.id}`;
  if (key === undefined) wrote = true;
  else if (!wrote && !readBefore.has(key)) client = refreshing ?? client;
  if (key !== undefined) readBefore.add(key);
  await client.checkAccess({ once: true });
  return client;
}

/**
 * The client of operations that write ({@link operationClient} without `read`), after building the pair of
 * clients from the settings if this `configure()` has not yet: one pair per `configure()`, from the same
 * settings (building one costs ~45 µs, and re-reading the seven settings from config and environment before
 * every operation ~6 µs more: bench/run.ts, section a). No request.
 * @throws MissingApiKeyError, InvalidInputError (a malformed host, organization id or project id, naming the
 *   setting and where it came from: `checkProviderSettings`); nothing is kept, the next call resolves them again.
 */
function clients(): PostHogClient {
  if (!current || !refreshing) {
    const retry = { maxTotalWaitMs: PACING_MAX_WAIT_MS };
    const pageSize = LIST_PAGE_SIZE;
    // Every setting the provider reads (provider/framework/settings.ts), whether the key is set or not: a malformed one fails
    // here, before any request (check calls this in every run, a preview's included).
    checkProviderSettings(stackConfig);
    const made = createClient({ coalescing: { findCacheMs: 0 }, retry, pageSize }, stackConfig);
    current = made;
    refreshing = createClient(
      { coalescing: { findCacheMs: REFRESH_SNAPSHOT_MS }, retry, pageSize },
      stackConfig,
    );
    refreshClients.add(refreshing);
  }
  return current;
}

/**
 * Whether this provider host serves a preview: as the last `check` with a `__resource` (passed by the SDK
 * classes, read in the program from `pulumi.runtime.isDryRun()`) said. The engine starts one provider host per
 * operation (`pulumi up` runs its preview and its update in two), and checks every resource before its diff, so
 * `diff` knows it too.
 */
let previewing = false;

/**
 * Whether the adapter asked `check` to prove the settings reach PostHog in every run (the provider plugin's `check`
 * passes `__resource.prove`: the provider protocol tells `check` nothing of a preview), as the last `check` with a
 * `__resource` said.
 */
let proving = false;

/**
 * What `check` and `diff` prove of the settings before the engine plans anything: their form always (no request:
 * a malformed host, organization id or project id fails as `up` would fail, naming the setting and where it came
 * from); and, with `prove` (every preview, changes or none, and every run through the plugin), that they reach
 * PostHog: the access check of {@link operationClient} (`checkAccess({once: true})`, one GET per provider host),
 * which fails with the very error `up` would meet (a wrong key, host, organization or project, or a missing key).
 * Never writes.
 * @throws InvalidInputError; MissingApiKeyError and the access check's errors (with `prove`)
 */
async function checkSettings(prove: boolean): Promise<PostHogClient | undefined> {
  let client: PostHogClient;
  try {
    client = clients();
  } catch (e) {
    if (e instanceof MissingApiKeyError && !prove) return undefined;
    throw e;
  }
  if (!prove) return undefined;
  await client.checkAccess({ once: true });
  return client;
}

/** Whether this provider host said that a preview cannot prove the key's write scopes ({@link sayScopesUnproven}). */
let scopesSaid = false;

/**
 * Says once per provider host, in a preview whose plan writes (a create, an update or a replacement), what its
 * access check could not prove: that the key may make those writes. PostHog shows a personal API key's scopes to no
 * read made with that key (api-behaviour §5: the key list needs `personal_api_key:read`, which a scoped key seldom
 * has), so a key without, say, `dashboard:write` passes the preview, and `up` fails at the first write that needs
 * it. One line on stdout, shown by the engine as the resource's info. No request.
 */
function sayScopesUnproven(): void {
  if (scopesSaid || !previewing) return;
  scopesSaid = true;
  console.log(
    "info: this preview proved that the settings reach PostHog, not that the API key may make the writes it plans: " +
      "PostHog shows a personal API key's scopes to no read made with it. If the key lacks a scope one of them needs " +
      '(e.g. dashboard:write), `pulumi up` fails at that write with 403 "API key missing required scope …"',
  );
}

/** How a resource's `read` is called (see {@link ResourceDefinition.read}). */
export interface ReadMode {
  /** True for a refresh's read: list reads are shared for {@link REFRESH_SNAPSHOT_MS}; read from them. */
  fromLists: boolean;
  /**
   * True for `pulumi import`'s read (the provider plugin passes {@link IMPORT_READ} in the props): no resource of
   * the state holds the object yet, so an object PostHog says is gone is not there to import, never drift to show
   * (a dashboard answering 404 is not recorded as soft-deleted).
   */
  importing: boolean;
}

/**
 * The property the provider plugin adds to the props of `pulumi import`'s read (`{[IMPORT_READ]: {name}}`, the
 * resource's Pulumi name from the URN; `true` names none), so that `read` knows no resource of the state holds the
 * object ({@link ReadMode.importing}) and claims it for that resource (two entries of one import naming one object
 * fail, naming both: provider/framework/claims.ts). Never in outputs or inputs.
 */
export const IMPORT_READ = "__import";

/**
 * The live object for a `read`: in a refresh (`how.fromLists`), as its list shows it (`find`, a shared list
 * read), and only when the list does not show it (soft-deleted; a list whose pages disagree because an object
 * moved between two page reads is read again by the client) or could not be read (any error of the list read: a 404, a 5xx, a timeout) by one GET of the
 * object itself (`retrieve`), whose 404 alone says the object is gone; outside a refresh, one GET. A failed list
 * read therefore never marks an object gone. Only for a resource whose list items carry every field its outputs
 * come from.
 * @throws what `retrieve` throws
 */
export async function listedOrRetrieved<T>(
  how: ReadMode,
  find: () => Promise<T | undefined>,
  retrieve: () => Promise<T>,
): Promise<T> {
  if (how.fromLists) {
    const listed = await find().catch(() => undefined); // the object's own GET decides
    if (listed !== undefined) return listed;
  }
  return retrieve();
}

/** A record of outputs: input-shaped fields plus the server's fields, camelCase. */
export type Outputs = Record<string, unknown>;

/** What a resource provides to {@link defineResource}. `I` is the parsed (defaulted) inputs type. */
export interface ResourceDefinition<S extends z.ZodType<Record<string, unknown>>, O extends Outputs> {
  /** Resource name as in the type token, e.g. `Domain` (used in messages). */
  name: string;
  /** Inputs schema: defaults, transforms and messages naming the accepted values. */
  inputs: S;
  /** Input properties whose change replaces the object (all of them when `update` is absent). */
  replaceOnChanges?: readonly string[];
  /** Delete the old object before creating its replacement (for names unique on the server). */
  deleteBeforeReplace?: boolean;
  /**
   * Adjusts the changed input properties found by the generic comparison, for special cases (e.g. a
   * soft-deleted dashboard must be restored, an expired invite re-sent). Returns the final list.
   */
  changes?: (olds: O, news: z.output<S>, changed: string[]) => string[];
  /**
   * Why the new inputs can never be applied to the object, judged from its old outputs alone (facts the server
   * reported at the last create, read or update, recorded there), else undefined. `diff` then fails with this
   * message, so a preview fails before any write, with no request. Values unknown during preview arrive as
   * {@link UNKNOWN}.
   */
  unsatisfiable?: (olds: O, news: z.output<S>) => string | undefined;
  /**
   * The inputs `read` reports for live outputs, when picking the input-shaped fields is not enough (they
   * must pass `check` again, e.g. exactly one of two identifying inputs).
   */
  liveInputs?: (outs: O) => Record<string, unknown>;
  /**
   * The objects a resource manages, from its checked inputs (in `check`) or its outputs (in `diff`): two
   * resources of one program may not manage the same one (provider/framework/claims.ts). Identities whose key holds a
   * value unknown during preview are skipped.
   */
  identity?: (values: Record<string, unknown>) => Identity[];
  /**
   * The input properties of each request body the resource sends, for the body size limit (default: all of
   * them in one body).
   */
  requestBodies?: (inputs: z.output<S>) => readonly (readonly string[])[];
  /**
   * Creates (or adopts) the object. One request where the API allows it. `claim` claims objects found on the
   * way (e.g. the person a Member names by e-mail, by user UUID) before anything is changed: it throws, naming
   * both resources, when another resource of the program manages one of them. `resourceName` is the resource's
   * Pulumi name when the SDK passed it (`__resourceName`), else undefined: it keys the create journal
   * (provider/framework/create-journal.ts).
   */
  create(
    api: PostHogClient,
    inputs: z.output<S>,
    claim: (identities: Identity[]) => void,
    resourceName: string | undefined,
  ): Promise<{ id: string; outs: O }>;
  /**
   * Reads the live object; `undefined` when it is gone. A NotFoundError counts as gone only when PostHog says
   * the object itself is missing (`isObjectGone`); any other error is thrown and the state is kept.
   * `how.fromLists` is true when this read is one of a refresh's (see {@link operationClient}): the client then
   * shares list reads for {@link REFRESH_SNAPSHOT_MS}, so a resource whose list carries every field it reports
   * reads the object from its list page (⌈N/500⌉ requests for N objects) instead of one GET each.
   */
  read(api: PostHogClient, id: string, props: O, how: ReadMode): Promise<O | undefined>;
  /**
   * Drift that no input property carries, as properties `read` adds to the live inputs so the plan names it (the
   * engine shows a dynamic resource's plan as the stored inputs against the program's): e.g. `{deleted: true}`
   * for a dashboard soft-deleted outside Pulumi, shown as `[diff: -deleted]`. Not inputs: `check` never sees them
   * from the program, and the next create or update stores the program's inputs instead.
   */
  driftShown?: (outs: O) => Record<string, unknown> | undefined;
  /** Updates in place; absent means every change replaces. */
  update?(api: PostHogClient, id: string, olds: O, news: z.output<S>): Promise<O>;
  /**
   * The input that names the resource's object by the id the state keeps for it (its adoption by id: a Dashboard's
   * `dashboardId`; a DomainVerification's `domainId`, its own id): claimed in check, so that two resources declaring
   * one id, or one declaring the id another resource holds, fail naming both (provider/framework/claims.ts).
   */
  idInput?: string;
  /** What a preview says the create will adopt (provider/framework/adoption.ts); absent: nothing. */
  adoption?: AdoptionProbe;
  /**
   * What the policy pack may need of this resource's object when another resource refers to it (a Dashboard's name
   * and tags, for a DashboardSharing's allow list), from its inputs or outputs: recorded for this run by `diff` (the
   * plan), `create` and `update` (the result), per object id (provider/framework/policy-facts.ts).
   */
  factsOf?: (values: Record<string, unknown>) => Record<string, unknown>;
  /**
   * What the policy pack needs to judge this resource before its write beyond its own inputs (the name and tags of a
   * DashboardSharing's dashboard, as this run plans them: provider/framework/policy-facts.ts): `check` keeps it in the checked
   * inputs as `_policy`, which create and update never send. No request. Values unknown during preview arrive as
   * {@link UNKNOWN}. Undefined: nothing to add.
   */
  policyFacts?: (inputs: Record<string, unknown>) => unknown;
  /**
   * Deletes the object; a 404 saying the object itself is missing (`isObjectGone`) counts as done once a read of the
   * object agrees ({@link ResourceDefinition.exists}).
   */
  delete(api: PostHogClient, id: string, props: O): Promise<void>;
  /**
   * After a 404 on its delete: whether the object is still there, from one read (no write). Default: `read` finds
   * it (not `undefined`, not PostHog's 404 for it, not soft-deleted `deleted: true`). A resource whose `read` reports
   * more than the object's existence (an Invite's read follows it to the member who accepted it, or to the invite
   * that replaced it) says here what "still there" is.
   * @throws the read's errors (the object's fate unknown: destroy fails, the resource stays in the state)
   */
  exists?(api: PostHogClient, id: string, props: O): Promise<boolean>;
}

/** Every method of a dynamic provider, present (the thin `__provider` shim forwards to all of them). */
export type Provider = Required<pulumi.dynamic.ResourceProvider>;

/** Deep equality of JSON-like values (object key order does not matter). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  }
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return (
    ka.length === kb.length &&
    ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

function containsUnknown(v: unknown): boolean {
  if (v === UNKNOWN) return true;
  if (v && typeof v === "object") return Object.values(v).some(containsUnknown);
  return false;
}

/**
 * A copy of a JSON-like value without `undefined` (protobuf Structs reject it) and without anything JSON
 * would not keep (functions, symbols; `toJSON` is honoured, so a Date becomes its ISO string): what a JSON
 * round trip gives, at a fraction of its cost on the small objects of outputs (bench/run.ts, section a).
 */
export function plain<T>(v: T): T {
  return (jsonValue(v) ?? {}) as T;
}

function jsonValue(v: unknown): unknown {
  if (v === null) return null;
  if (typeof v !== "object") {
    if (typeof v === "number") return Number.isFinite(v) ? v + 0 : null; // + 0 turns -0 into 0, as JSON does
    return typeof v === "string" || typeof v === "boolean" ? v : undefined;
  }
  if (typeof (v as { toJSON?: unknown }).toJSON === "function") {
    return jsonValue((v as { toJSON(): unknown }).toJSON());
  }
  if (Array.isArray(v)) return v.map((x) => jsonValue(x) ?? null);
  const out: Record<string, unknown> = {};
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    const x = jsonValue((v as Record<string, unknown>)[k]);
    if (x !== undefined) out[k] = x;
  }
  return out;
}

/**
 * The property schemas of an object schema (through pipes: a refined or transformed object), or {} when it is
 * not an object schema. Uses zod's public classes (`ZodObject.shape`, `ZodPipe.in`).
 */
function shapeOf(schema: z.ZodType): Record<string, z.ZodType> {
  let s: z.ZodType = schema;
  for (let i = 0; i < 10; i++) {
    if (s instanceof z.ZodObject) return s.shape as Record<string, z.ZodType>;
    if (s instanceof z.ZodPipe) s = s.in as z.ZodType;
    else break;
  }
  return {};
}

/** The property names of an object schema (for messages and for picking inputs out of outputs). */
export function inputKeys(schema: z.ZodType): string[] {
  return Object.keys(shapeOf(schema));
}

/**
 * Turns zod issues into Pulumi check failures, each naming a property. Unknown properties get one failure
 * each, listing the accepted ones; root-level issues are attributed to the first property they mention.
 */
export function failuresOf(
  error: z.ZodError,
  accepted: readonly string[],
): { property: string; reason: string }[] {
  const out: { property: string; reason: string }[] = [];
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        out.push({
          property: key === "" ? '""' : key,
          reason: `unknown property; accepted properties: ${accepted.join(", ")}`,
        });
      }
      continue;
    }
    const property = issue.path.map(String).join(".") || accepted[0] || "(inputs)";
    out.push({ property, reason: issue.message });
  }
  return out;
}

/** The resource name `check` kept in the inputs (`__resource.name`), if any. */
function resourceNameOf(inputs: Record<string, unknown>): string | undefined {
  const r = inputs.__resource as { name?: unknown } | undefined;
  return typeof r?.name === "string" ? r.name : undefined;
}

/**
 * The inputs of create/update: the engine passes what `check` returned for this run, already validated, with
 * defaults and transforms applied, and a fixed point of the schema (test/provider/check.property.test.ts), so
 * they are not parsed again (that cost ~5 µs per operation, bench/run.ts section a, and could change nothing).
 */
function checkedInputs<S extends z.ZodType>(news: unknown): z.output<S> {
  return withoutInternal(news) as z.output<S>;
}

/** The inputs of a create or update as the resource's code takes them: no `__provider`, no `__resource`. */
function withoutInternal(v: unknown): Record<string, unknown> {
  const out = withoutProvider(v);
  delete out.__resource;
  delete out._policy;
  return out;
}

function withoutProvider(v: unknown): Record<string, unknown> {
  if (!v || typeof v !== "object" || Array.isArray(v)) return {};
  const out: Record<string, unknown> = {};
  for (const k in v) {
    const val = (v as Record<string, unknown>)[k];
    if (k !== "__provider" && val !== undefined && Object.hasOwn(v, k)) out[k] = val;
  }
  return out;
}

/**
 * The Pulumi name of the resource a `pulumi import` read imports, from the props' {@link IMPORT_READ} marker
 * (`{name}`), else undefined (a refresh; or `true`, a marker naming no resource).
 */
function importedName(marker: unknown): string | undefined {
  const name = (marker as { name?: unknown } | null | undefined)?.name;
  return typeof name === "string" ? name : undefined;
}

/**
 * True only when PostHog said the addressed object is missing: not for "Organization not found.", "Project not
 * found.", "Endpoint not found." or a 404 without PostHog's error body (a wrong id or host: an error to show).
 */
function isNotFound(e: unknown): boolean {
  return isObjectGone(e);
}

/**
 * Checked inputs with the policy pack's `_policy` facts ({@link ResourceDefinition.policyFacts}), if any; and, for a
 * resource whose facts others need ({@link ResourceDefinition.factsOf}), whether this run creates its object (new to
 * the stack, or an input that replaces it changes: its id unknown until then), for a preview's policy
 * (provider/framework/policy-facts.ts `noteCreating`). `keys` are the resource's input keys.
 */
function withPolicyFacts<S extends z.ZodType<Record<string, unknown>>, O extends Outputs>(
  def: ResourceDefinition<S, O>,
  keys: string[],
  change: {
    inputs: Record<string, unknown>;
    olds: Record<string, unknown> | undefined;
    established: boolean;
  },
  name: string | undefined,
): Record<string, unknown> {
  const { inputs, established } = change;
  const olds = withoutProvider(change.olds ?? {});
  if (def.factsOf && name !== undefined) {
    const replacing = def.update ? (def.replaceOnChanges ?? []) : keys;
    if (!established || replacing.some((k) => !sameValue(olds[k], inputs[k]))) {
      noteCreating(def.name, name, def.factsOf(inputs));
    }
  }
  const facts = def.policyFacts?.(inputs);
  return facts === undefined ? inputs : { ...inputs, _policy: facts };
}

/**
 * Builds a Pulumi dynamic provider from a {@link ResourceDefinition}. The result is a plain object with all
 * seven methods; it is never serialized itself (the SDK serializes a thin shim that `require`s it).
 */
export function defineResource<S extends z.ZodType<Record<string, unknown>>, O extends Outputs>(
  def: ResourceDefinition<S, O>,
): Provider {
  const keys = inputKeys(def.inputs);
  const replaceOn = new Set(def.replaceOnChanges ?? []);
  /** The input-shaped part of some outputs (what `read` reports as the live inputs). */
  const inputsOf = (outs: Record<string, unknown>): Record<string, unknown> => {
    const inputs: Record<string, unknown> = {};
    for (const k of keys) if (outs[k] !== undefined && outs[k] !== null) inputs[k] = outs[k];
    return inputs;
  };
  /**
   * The known identities of some inputs or outputs: what `def.identity` names, and the object's id declared in the
   * resource's adoption-by-id input (`def.idInput`: a Dashboard's `dashboardId`, …).
   */
  const identities = (values: Record<string, unknown>): Identity[] =>
    [...(def.identity?.(values) ?? []), ...declaredId(def.name, def.idInput, values, UNKNOWN)].filter(
      (i) => !i.key.includes(UNKNOWN),
    );
  /** Claims for the resource `name` (the SDK's `__resource.name`); check failures naming both resources on conflict. */
  const claimFailures = (name: string | undefined, inputs: Record<string, unknown>, established: boolean) => {
    if (name === undefined) return [];
    const claimant: Claimant = { type: def.name, name };
    rememberName(def.name, inputs, name);
    return claim(claimant, identities(inputs), established, true).map((c) => ({
      property: c.identity.property,
      reason: conflictMessage(claimant, c),
    }));
  };
  /**
   * Claims made after check (diff, create), for the resource whose check returned `inputs`: throws on conflict.
   * `established` and `reportDisplaced` as claims.ts `claim` takes them.
   */
  const claimOrThrow = (
    inputs: Record<string, unknown>,
    found: Identity[],
    established = false,
    reportDisplaced = false,
  ) => {
    const name = nameOf(def.name, inputs);
    if (name === undefined) return;
    const claimant: Claimant = { type: def.name, name };
    const conflict = claim(
      claimant,
      found.filter((i) => !i.key.includes(UNKNOWN)),
      established,
      reportDisplaced,
    )[0];
    if (conflict) throw new Error(conflictMessage(claimant, conflict));
  };

  /**
   * For checked, valid inputs: in a preview (or through the plugin), proves the settings reach PostHog
   * (`checkSettings`, one GET per run), whether or not the plan changes anything, so a preview with nothing to change
   * (the nightly `preview --refresh --expect-no-changes`) fails with a wrong key as `up` would; and, in a preview, for
   * a resource new to the stack (a create), says which existing object the create will adopt, if it adopts one
   * (provider/framework/adoption.ts: one read per object). Only after the inputs passed: a bad input is named first.
   */
  const planned = async (inputs: Record<string, unknown>, established: boolean): Promise<void> => {
    const api = await checkSettings(previewing || proving);
    if (api && previewing && !established) {
      sayScopesUnproven();
      await announceAdoption(def.adoption, def.name, nameOf(def.name, inputs), api, inputs);
    }
  };

  /** Records for this run what the policy pack may need of object `id` ({@link ResourceDefinition.factsOf}). */
  const plan = (id: string, ...values: Record<string, unknown>[]) => {
    if (def.factsOf) for (const v of values) notePlanned(def.name, id, def.factsOf(v));
  };

  /**
   * Outputs with `__inputs`: the input properties `check` returned for them (given or defaulted), which `read` then
   * reports as the live inputs, so that a refresh and the plan after it name only what the program declares; and
   * `__resource` (the SDK's {name, stack} from the checked inputs `checked`) and `_policy` (the policy pack's facts,
   * provider/framework/policy-facts.ts), which `read` reports back as inputs. The engine hides `__` properties from plans (not
   * `_policy`, which the policy pack must see) and the SDK exposes none.
   */
  const withDeclared = (outs: Outputs, inputs: Record<string, unknown>, checked: unknown): Outputs => {
    const { __resource: resource, _policy: policy } = (checked ?? {}) as Record<string, unknown>;
    return {
      ...outs,
      __inputs: keys.filter((k) => inputs[k] !== undefined),
      ...(resource !== undefined ? { __resource: resource } : {}),
      ...(policy !== undefined ? { _policy: policy } : {}),
    };
  };

  /**
   * After a 404 on the delete of object `id` (`notFound`): one read of it (`def.exists`, else `def.read` outside a
   * refresh: a GET, or its list where PostHog has no GET of one). Resolves when the read says it is gone
   * (`undefined`, PostHog's 404 for it, or soft-deleted: `deleted: true`, a Dashboard).
   * @throws naming the object, the 404'd request and what to do, when the read still finds it; the read's own
   *   error (the object's fate unknown), naming the 404 it could not confirm. Either way it stays in the state.
   */
  const confirmGone = async (api: PostHogClient, id: string, old: O, notFound: unknown): Promise<void> => {
    const request = notFound instanceof NotFoundError ? `${notFound.method} ${notFound.path}` : "its delete";
    let there: boolean;
    try {
      there = def.exists
        ? await def.exists(api, id, old)
        : await def
            .read(api, id, old, { fromLists: false, importing: false })
            .then((live) => live !== undefined && (live as Record<string, unknown>).deleted !== true);
    } catch (e) {
      if (isNotFound(e)) return;
      throw new Error(
        `${def.name} ${id}: PostHog answered 404 to ${request}, and the read that would confirm the object is gone ` +
          `failed (${e instanceof Error ? e.message : String(e)}): it stays in the state. Run the destroy again`,
        { cause: e },
      );
    }
    if (!there) return;
    throw new Error(
      `${def.name} ${id} still exists: PostHog answered 404 to ${request}, but a read right after finds the ` +
        "object, so it was not deleted and it stays in the state. Run the destroy again; if it keeps failing, " +
        "delete it in PostHog, or stop managing it with `pulumi state delete <urn>` (it then stays in PostHog)",
    );
  };

  const provider: Provider = {
    async configure(req) {
      watchEngine();
      stackConfig = req.config;
      current = undefined;
      refreshing = undefined;
    },

    async check(olds, news) {
      const raw = withoutProvider(news);
      // Old inputs: the resource is in the stack's state, and its claims come first (claims.ts).
      const established = Object.keys(withoutProvider(olds ?? {})).length > 0;
      // The resource's Pulumi name and stack (`<project>/<stack>`), passed by the SDK classes as `__resource`
      // ({name, stack}; `__resourceName` and `__stack` in earlier versions): the name is used for claims, both key
      // the create journal (lost-create.ts); never part of the inputs.
      // In a preview the SDK adds `preview: true`, and `refused`: the text PostHog refuses that only the program
      // could see (provider/framework/text.ts).
      const passed = (raw.__resource ?? {}) as {
        name?: unknown;
        stack?: unknown;
        preview?: unknown;
        prove?: unknown;
        refused?: unknown;
      };
      // Every check of a run says the same; resources declared without the SDK classes say nothing.
      if (raw.__resource !== undefined) {
        previewing = passed.preview === true;
        proving = passed.prove === true;
      }
      const rawName = passed.name ?? raw.__resourceName;
      const rawStack = passed.stack ?? raw.__stack;
      const name = typeof rawName === "string" ? rawName : undefined;
      if (typeof rawStack === "string") noteStack(rawStack);
      delete raw.__resource;
      delete raw.__resourceName;
      delete raw.__stack;
      // The policy pack's facts of an earlier check (stored inputs, a refresh's inputs): recorded anew below.
      delete raw._policy;
      // Kept in the checked inputs as `__resource` ({name, stack}; the engine hides `__` properties from plans), so
      // that create knows which resource it serves even when several have the very same inputs (twelve dashboards
      // of one name): the create journal is keyed by it. Never sent to PostHog.
      const named = (inputs: Record<string, unknown>): Record<string, unknown> =>
        name === undefined
          ? inputs
          : { ...inputs, __resource: typeof rawStack === "string" ? { name, stack: rawStack } : { name } };
      // The settings' form, with no request: a malformed host, organization id or project id fails here as the
      // first create, update or delete would fail (and a preview with it).
      await checkSettings(false);
      // Values unknown during preview cannot be validated: validate the rest, keep the unknowns as they are.
      const unknownKeys = Object.keys(raw).filter((k) => containsUnknown(raw[k]));
      const known = Object.fromEntries(Object.entries(raw).filter(([k]) => !unknownKeys.includes(k)));
      const r = def.inputs.safeParse(known);
      if (r.success) {
        const inputs = named(
          plain({ ...r.data, ...Object.fromEntries(unknownKeys.map((k) => [k, raw[k]])) }),
        );
        const failures = [
          ...oversizedBodies(inputs, def.requestBodies?.(r.data) ?? [keys]),
          ...withProgramText(refusedText(inputs), passed.refused),
          ...claimFailures(name, inputs, established),
        ];
        if (failures.length > 0) return { inputs: wellFormed(inputs) as typeof inputs, failures };
        await planned(inputs, established);
        return { inputs: withPolicyFacts(def, keys, { inputs, olds, established }, name) };
      }
      const failures = withProgramText(
        failuresOf(r.error, keys).filter((f) => !unknownKeys.includes(f.property.split(".")[0] ?? "")),
        passed.refused,
      );
      if (failures.length > 0) return { inputs: wellFormed(raw) as typeof raw, failures };
      // Only the unknown values stand in the way: apply each known property's defaults and transforms.
      const shape = shapeOf(def.inputs);
      const partial: Record<string, unknown> = { ...raw };
      for (const [k, prop] of Object.entries(shape)) {
        if (unknownKeys.includes(k)) continue;
        const one = prop.safeParse(raw[k]);
        if (one.success && one.data !== undefined) partial[k] = one.data;
      }
      const inputs = named(plain(partial));
      const more = [
        ...oversizedBodies(inputs, [keys]),
        ...withProgramText(refusedText(inputs), passed.refused),
        ...claimFailures(name, inputs, established),
      ];
      if (more.length > 0) return { inputs: wellFormed(inputs) as typeof inputs, failures: more };
      await planned(inputs, established);
      return { inputs: withPolicyFacts(def, keys, { inputs, olds, established }, name) };
    },

    async diff(id, olds, news) {
      // An existing resource of the run holds its object: a lost create never adopts it (lost-create.ts).
      await managedByState(def.name, id);
      // An object a create of this stack with an unknown outcome made after its resource was made again: named.
      await reportLostObjects("diff", olds ?? {}, () => operationClient({ type: def.name, id }));
      const n = withoutProvider(news);
      const o = (olds ?? {}) as O;
      const impossible = def.unsatisfiable?.(o, n as z.output<S>);
      if (impossible !== undefined) throw new Error(impossible);
      let changed = keys.filter((k) => n[k] !== undefined && !sameValue(o[k], n[k]));
      if (def.changes) changed = def.changes(o, n as z.output<S>, changed);
      const replaces = def.update ? changed.filter((k) => replaceOn.has(k)) : changed;
      // A preview that updates or replaces proves the settings reach PostHog (one GET per run), as `up` would (its
      // checks did already, for resources declared with the SDK classes or through the plugin).
      if (changed.length > 0 && previewing) {
        await checkSettings(true);
        sayScopesUnproven();
      }
      // An existing resource that keeps its object claims it (from the outputs, which may name it more fully
      // than the inputs: a Member declared by e-mail holds the person's user UUID too), and by its id (an object
      // imported twice, or adopted by id by another resource: claims.ts `byId`). A claim taken from a resource new
      // to the stack fails this diff too, naming both, so a preview fails whichever of the two is checked first.
      if (replaces.length === 0) {
        claimOrThrow(n, [...identities(o), byId(def.name, id, def.idInput)], true, true);
        plan(id, o, n);
      }
      return {
        changes: changed.length > 0,
        replaces,
        deleteBeforeReplace: replaces.length > 0 && def.deleteBeforeReplace === true,
      };
    },

    async create(news) {
      const inputs = checkedInputs<S>(news);
      const checked = withoutProvider(news); // with `__resource`, as check returned it: claims are keyed by it
      // Still this resource's: a resource of the state checked after this one's check may have taken it.
      claimOrThrow(checked, identities(inputs));
      const { id, outs } = await def.create(
        await operationClient(),
        inputs,
        (found) => claimOrThrow(checked, found),
        resourceNameOf(checked) ?? nameOf(def.name, checked),
      );
      // The journal's record of what this create made is on disk before the engine hears of the object.
      await completionsWritten();
      // The object it made or adopted is this resource's now, by its id and what its outputs name: another resource
      // of the run declaring it later (a Dashboard's `dashboardId: a.id`) fails naming both. A fresh object can
      // conflict with nothing; an adopted one whose id another resource of the state holds fails the create here.
      claimOrThrow(
        checked,
        [byId(def.name, id, def.idInput), ...identities(outs as Record<string, unknown>)],
        true,
      );
      plan(id, outs);
      return { id, outs: withDeclared(plain(outs), inputs, news) };
    },

    async read(id, props) {
      await managedByState(def.name, id);
      const old = withoutProvider(props) as O;
      const importing = old[IMPORT_READ] !== undefined && old[IMPORT_READ] !== false;
      const importedAs = importedName(old[IMPORT_READ]);
      delete old[IMPORT_READ];
      let live: O | undefined;
      // outside the try: its errors are never "gone"
      const api = await operationClient({ type: def.name, id });
      // An object a create of this stack with an unknown outcome made, that no resource holds: named (not on import).
      if (!importing) await reportLostObjects("read", old, async () => api);
      try {
        live = await def.read(api, id, old, { fromLists: refreshClients.has(api), importing });
      } catch (e) {
        if (!isNotFound(e)) throw e;
        live = undefined;
      }
      if (live === undefined) return { id: "" };
      const outs = plain(live);
      // `pulumi import`: the imported object is this resource's, by its id and what its outputs name; an entry of the
      // same import (or of the same run) that imports it again fails naming both, and nothing is imported.
      if (importedAs !== undefined) {
        const claimant: Claimant = { type: def.name, name: importedAs };
        const conflict = claim(
          claimant,
          [byId(def.name, id, def.idInput), ...identities(outs)],
          true,
          true,
        )[0];
        if (conflict) throw new Error(conflictMessage(claimant, conflict, true));
      }
      // inputsOf picks from outs, which plain() already made JSON-safe: no second pass needed.
      const all = def.liveInputs ? plain(def.liveInputs(outs as O)) : inputsOf(outs);
      // The engine shows a plan's properties by comparing the stored inputs with the program's: report only the
      // properties the program gave (or check defaulted), so a value PostHog filled in (a resolved projectId, an
      // empty message) never shows as `-projectId`; and name the drift that is no input (`deleted`, `isExpired`).
      const declared = Array.isArray(old.__inputs) ? (old.__inputs as unknown[]).map(String) : undefined;
      const inputs = declared
        ? Object.fromEntries(Object.entries(all).filter(([k]) => declared.includes(k)))
        : all;
      // The SDK's {name, stack} and the policy pack's facts as the last check recorded them (provider/framework/policy-facts.ts),
      // kept so a refresh changes no input of its own: a refresh runs no check, and the next check records them anew.
      const kept = {
        ...(old.__resource !== undefined ? { __resource: old.__resource } : {}),
        ...(old._policy !== undefined ? { _policy: old._policy } : {}),
      };
      const result = { ...outs, ...(declared ? { __inputs: declared } : {}), ...kept };
      return {
        id,
        props: result,
        inputs: { ...inputs, ...kept, ...def.driftShown?.(outs as O) },
      };
    },

    async update(id, olds, news) {
      if (!def.update) throw new Error(`${def.name} cannot be updated in place (every change replaces it)`);
      await managedByState(def.name, id);
      const inputs = checkedInputs<S>(news);
      const outs = await def.update(await operationClient(), id, withoutProvider(olds) as O, inputs);
      plan(id, outs);
      return { outs: withDeclared(plain(outs), inputs, news) };
    },

    async delete(id, props) {
      await managedByState(def.name, id);
      const api = await operationClient(); // outside the try: its errors are never "done"
      const old = withoutProvider(props) as O;
      // An object a create of this stack with an unknown outcome made, that no resource holds: named before any write.
      await reportLostObjects("delete", old, async () => api);
      try {
        await def.delete(api, id, old);
      } catch (e) {
        if (!isNotFound(e)) throw e;
        // A 404 is taken at its word only once a read of the object agrees (a proxy, a replica lagging behind, a
        // PostHog bug): an object still there stays in the state, and destroy fails naming it.
        await confirmGone(api, id, old, e);
      }
    },
  };
  // Operations that reach PostHog keep the host alive until they settle, even once the engine is gone.
  return {
    ...provider,
    create: (news) => underWayWhile(() => provider.create(news)),
    read: (id, props) => underWayWhile(() => provider.read(id, props)),
    update: (id, olds, news) => underWayWhile(() => provider.update(id, olds, news)),
    delete: (id, props) => underWayWhile(() => provider.delete(id, props)),
  };
}

/** Accepted spellings of an organization level: 1/8/15 or member/admin/owner; parsed to the number. */
export const OrganizationLevelInput = z
  .union([z.literal([1, 8, 15]), z.enum(["member", "admin", "owner"])], {
    error: 'expected one of 1, 8, 15, "member", "admin", "owner"',
  })
  .transform((v): 1 | 8 | 15 =>
    typeof v === "number" ? v : ({ member: 1, admin: 8, owner: 15 } as const)[v],
  );

/** An e-mail address (at most 254 characters); the domain part is lowercased as the server does. */
export const EmailInput = z
  .email({ error: "expected an e-mail address such as jane@example.com" })
  .max(254, { error: "expected an e-mail address of at most 254 characters" })
  .transform((v) => {
    const at = v.lastIndexOf("@");
    return `${v.slice(0, at)}@${v.slice(at + 1).toLowerCase()}`;
  });

/** The message of a refused project id: what it accepts (and an example), and what it got. */
const projectIdExpected = (got: string) =>
  `expected a project id (a positive integer, or a string of its digits such as a Project's id: ` +
  `\`projectId: web.id\`; or "@current"), got ${got}`;

/**
 * A project id: a positive integer or the string of its digits (a Project's `id` output as it is), or
 * `"@current"`; parsed to the decimal string (`7`, `"7"` and `"007"` all give `"7"`).
 */
export const ProjectIdInput = z
  .union([z.literal("@current"), integerIdInput(projectIdExpected)], {
    error: (iss) => projectIdExpected(shown(iss.input)),
  })
  .transform(String);

/**
 * The project a project-scoped resource (Dashboard, DashboardCollaborator, DashboardSharing) lives in: the
 * declared `projectId`, else the provider's `posthog:projectId`, else the key's current project, resolved to
 * its id with GET `/api/organizations/:organization_id/projects/@current/`, so the state never depends on
 * what "current" means later.
 */
export async function resolveProjectId(api: PostHogClient, declared?: string): Promise<string> {
  const id = declared ?? api.settings.projectId;
  if (id !== undefined && id !== "@current") return id;
  return String((await api.projects.retrieve({ id: "@current" })).id);
}
