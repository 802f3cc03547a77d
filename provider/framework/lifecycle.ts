/**
 * The one generic lifecycle shared by every resource: {@link defineResource} turns a small definition (inputs
 * schema, create/read/update/delete over the client) into the resource's {@link Operations}, which the two adapters
 * serve (provider/adapters/dynamic.ts, the dynamic SDK's; provider/adapters/plugin/, the provider plugin's). Each
 * operation takes the {@link Call} its adapter decoded (the resource's name and stack, preview or not, prove the
 * settings or not, import or not) and the call's properties without any adapter's in-band keys. What it owns, for all
 * resources alike:
 *
 * - `check`: zod validation of the inputs, failures naming the property and the accepted values (lengths, time
 *   zones, template shape, request body size: whatever the API would refuse for its form), defaults applied;
 *   and one object, one resource (provider/framework/claims.ts): a second resource of the program managing the same
 *   object fails, naming both; NUL characters, lone surrogates and nesting PostHog refuses (provider/framework/text.ts);
 *   the settings' form (a malformed host, organization or project id fails as the first write would). No HTTP
 *   request, except with `call.prove` (every preview of the SDK, every run of the plugin): once the inputs pass, the
 *   run's one access check proves the settings reach PostHog, changes or none; and in a preview a create reads the
 *   object it will adopt, if any, to say which (provider/framework/adoption.ts).
 * - `diff`: compares the old OUTPUTS with the new inputs (an input left unset is not compared, so server
 *   defaults never show as changes); `replaces` and `deleteBeforeReplace`; fails when the old outputs show the
 *   new inputs can never be applied (`unsatisfiable`, e.g. a server without a field). No HTTP request, except
 *   the run's one access check in a preview that updates or replaces (made by check already, as a rule).
 * - `create`/`read`/`update`/`delete` with the run's client (provider/framework/clients.ts), whose settings are
 *   resolved in the host at run time (stack config → environment): nothing secret is captured in the serialized
 *   provider; the run's first operation proves the settings reach PostHog with one request.
 * - `read` returns the live outputs AND the inputs derived from them, so refresh shows drift; `{id: ""}`
 *   only when PostHog says that the object itself is gone (a 404 naming no missing organization, project or
 *   endpoint, in PostHog's error body). `delete` treats the same 404 as done once a read agrees. Any other 404, a
 *   401 or a 403 is an error naming the setting to check: nothing leaves the state.
 *
 * Two keys of its own ride in the properties: `__inputs` in outputs (the input properties `check` returned, which a
 * refresh reports as the live inputs) and `_policy` in checked inputs (provider/framework/policy-facts.ts).
 */
import type * as pulumi from "@pulumi/pulumi";
import type { z } from "zod";
import { isObjectGone, NotFoundError, type PostHogClient } from "../client";
import { docsLink, hasDocsLink } from "../client/docs-link";
import { type AdoptionProbe, announceAdoption } from "./adoption";
import { byId, type Claimant, claim, conflictMessage, declaredId, type Identity } from "./claims";
import { checkSettings, operationClient, sayScopesUnproven } from "./clients";
import { completionsWritten } from "./create-journal";
import { underWayWhile } from "./engine-watch";
import { oversizedBodies } from "./limits";
import { type Creates, managedByState, reportLostObjects } from "./lost-create";
import { noteCreating, notePlanned, type PolicyFacts } from "./policy-facts";
import type { Call } from "./run";
import { refusedText, wellFormed, withProgramText } from "./text";
import { containsUnknown, failuresOf, inputKeys, plain, sameValue, shapeOf, UNKNOWN } from "./values";

/** How a resource's `read` is called (see {@link ResourceDefinition.read}). */
export interface ReadMode {
  /** True for a refresh's read: list reads are shared for `REFRESH_SNAPSHOT_MS` (clients.ts); read from them. */
  fromLists: boolean;
  /**
   * True for `pulumi import`'s read ({@link Call.importing}): no resource of the state holds the object yet, so an
   * object PostHog says is gone is not there to import, never drift to show (a dashboard answering 404 is not
   * recorded as soft-deleted).
   */
  importing: boolean;
}

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

/**
 * What a resource's create is handed besides the client and its checked inputs: what it needs of the call and the
 * run, for the lost-create protocol (provider/framework/lost-create.ts) and the claims.
 */
export interface CreateContext {
  /**
   * Claims objects found on the way (e.g. the person a Member names by e-mail, by user UUID) before anything is
   * changed: throws, naming both resources, when another resource of the program manages one of them.
   */
  claim(identities: Identity[]): void;
  /**
   * The resource's Pulumi name (from the call: the plugin's URN, the dynamic SDK's `__resource`), else undefined
   * (a resource declared without the SDK's classes): it keys the create journal (provider/framework/create-journal.ts).
   */
  resource: string | undefined;
  /** What the run knows of its creates (the queues, watermarks and records of provider/framework/lost-create.ts). */
  creates: Creates;
}

/** What a resource provides to {@link defineResource}. `S` is its inputs schema, `O` its outputs. */
export interface ResourceDefinition<S extends z.ZodType<Record<string, unknown>>, O extends Outputs> {
  /** Resource name as in the type token, e.g. `Domain` (used in messages). */
  name: string;
  /**
   * The anchor of its section on docs/troubleshooting/resources.md (e.g. `dashboard`): an error its operations throw
   * that names no docs page ends with the pointer to it ({@link withResourceDocs}). Absent: no section.
   */
  troubleshooting?: string;
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
   * Creates (or adopts) the object. One request where the API allows it. See {@link CreateContext}.
   */
  create(api: PostHogClient, inputs: z.output<S>, ctx: CreateContext): Promise<{ id: string; outs: O }>;
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
  policyFacts?: (inputs: Record<string, unknown>, facts: PolicyFacts) => unknown;
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

/** Properties as an operation takes them: no adapter's in-band key (`__provider`, `__resource`, `__import`). */
export type Props = Record<string, unknown>;

/**
 * A resource's operations, as {@link defineResource} builds them: what an adapter calls, with the {@link Call} it
 * decoded and the call's properties. Results are the dynamic provider's (`pulumi.dynamic`'s result types), which the
 * plugin adapter turns into its protocol's.
 */
export interface Operations {
  /** The resource's name, as in type tokens (`Dashboard`). */
  readonly name: string;
  check(call: Call, olds: Props, news: Props): Promise<pulumi.dynamic.CheckResult>;
  diff(call: Call, id: string, olds: Props, news: Props): Promise<pulumi.dynamic.DiffResult>;
  create(call: Call, news: Props): Promise<pulumi.dynamic.CreateResult>;
  read(call: Call, id: string, props: Props): Promise<pulumi.dynamic.ReadResult>;
  update(call: Call, id: string, olds: Props, news: Props): Promise<pulumi.dynamic.UpdateResult>;
  delete(call: Call, id: string, props: Props): Promise<void>;
}

/** A definition with what every operation derives from it once: its input keys and the inputs that replace. */
interface Defined<S extends z.ZodType<Record<string, unknown>>, O extends Outputs> {
  def: ResourceDefinition<S, O>;
  keys: string[];
  replaceOn: Set<string>;
}

/** Any definition, whatever its schemas (what the stage functions below take). */
type AnyDefined = Defined<z.ZodType<Record<string, unknown>>, Outputs>;

/**
 * The known identities of some inputs or outputs: what `def.identity` names, and the object's id declared in the
 * resource's adoption-by-id input (`def.idInput`: a Dashboard's `dashboardId`, …).
 */
function identitiesOf(d: AnyDefined, values: Record<string, unknown>): Identity[] {
  const { def } = d;
  return [...(def.identity?.(values) ?? []), ...declaredId(def.name, def.idInput, values, UNKNOWN)].filter(
    (i) => !i.key.includes(UNKNOWN),
  );
}

/** Claims for the call's resource in check: failures naming both resources on conflict (none without a name). */
function claimFailures(d: AnyDefined, call: Call, inputs: Props, established: boolean) {
  const name = call.resource?.name;
  if (name === undefined) return [];
  const claimant: Claimant = { type: d.def.name, name };
  return claim(call.run.claims, claimant, identitiesOf(d, inputs), established, true).map((c) => ({
    property: c.identity.property,
    reason: conflictMessage(claimant, c),
  }));
}

/**
 * Claims `found` for resource `name` (nothing without one) after check (diff, create, an import's read): throws on
 * conflict. `established`, `reportDisplaced` as claims.ts `claim` takes them; `importing` words the message.
 */
function claimOrThrow(
  d: AnyDefined,
  call: Call,
  name: string | undefined,
  found: Identity[],
  how: { established?: boolean; reportDisplaced?: boolean; importing?: boolean } = {},
): void {
  if (name === undefined) return;
  const claimant: Claimant = { type: d.def.name, name };
  const known = found.filter((i) => !i.key.includes(UNKNOWN));
  const conflict = claim(
    call.run.claims,
    claimant,
    known,
    how.established ?? false,
    how.reportDisplaced ?? false,
  )[0];
  if (conflict) throw new Error(conflictMessage(claimant, conflict, how.importing ?? false));
}

/**
 * For checked, valid inputs, with `call.prove`: proves the settings reach PostHog (`checkSettings`, one GET per run),
 * whether or not the plan changes anything, so a preview with nothing to change (the nightly `preview --refresh
 * --expect-no-changes`) fails with a wrong key as `up` would; and, in a preview, for a resource new to the stack (a
 * create), says which existing object the create will adopt, if it adopts one (provider/framework/adoption.ts: one
 * read per object). Only after the inputs passed: a bad input is named first.
 */
async function planned(d: AnyDefined, call: Call, inputs: Props, established: boolean): Promise<void> {
  const api = await checkSettings(call.run, call.preview || call.prove);
  if (api && call.preview && !established) {
    sayScopesUnproven(call.run);
    await announceAdoption(d.def.adoption, d.def.name, call.resource?.name, api, inputs);
  }
}

/**
 * Checked inputs with the policy pack's `_policy` facts ({@link ResourceDefinition.policyFacts}), if any; and, for a
 * resource whose facts others need ({@link ResourceDefinition.factsOf}), whether this run creates its object (new to
 * the stack, or an input that replaces it changes: its id unknown until then), for a preview's policy
 * (provider/framework/policy-facts.ts `noteCreating`).
 */
function withPolicyFacts(d: AnyDefined, call: Call, inputs: Props, olds: Props, established: boolean): Props {
  const { def } = d;
  const name = call.resource?.name;
  if (def.factsOf && name !== undefined) {
    const replacing = def.update ? [...d.replaceOn] : d.keys;
    if (!established || replacing.some((k) => !sameValue(olds[k], inputs[k]))) {
      noteCreating(call.run.facts, def.name, name, def.factsOf(inputs));
    }
  }
  const facts = def.policyFacts?.(inputs, call.run.facts);
  return facts === undefined ? inputs : { ...inputs, _policy: facts };
}

/** Records for this run what the policy pack may need of object `id` ({@link ResourceDefinition.factsOf}). */
function plan(d: AnyDefined, call: Call, id: string, ...values: Record<string, unknown>[]): void {
  if (d.def.factsOf) for (const v of values) notePlanned(call.run.facts, d.def.name, id, d.def.factsOf(v));
}

/**
 * Outputs with `__inputs`: the input properties `check` returned for them (given or defaulted), which `read` then
 * reports as the live inputs, so that a refresh and the plan after it name only what the program declares; and
 * `_policy` (the policy pack's facts from the checked inputs `checked`), which `read` reports back as an input.
 */
function withDeclared(d: AnyDefined, outs: Outputs, inputs: Props, checked: Props): Outputs {
  return {
    ...outs,
    __inputs: d.keys.filter((k) => inputs[k] !== undefined),
    ...(checked._policy !== undefined ? { _policy: checked._policy } : {}),
  };
}

/** The inputs of create/update: what `check` returned, already a fixed point of the schema, without `_policy`. */
function checkedInputs(news: Props): Props {
  const { _policy: _, ...inputs } = news;
  return inputs;
}

/**
 * The inputs as the schema makes them, or the failures that stop them: values unknown during preview cannot be
 * validated, so the rest is validated and the unknowns are kept as they are (with each known property's defaults and
 * transforms applied when only the unknowns stand in the way).
 */
function parsed(
  d: AnyDefined,
  raw: Props,
  refused: unknown,
):
  | { inputs: Props; bodies: readonly (readonly string[])[] }
  | { failures: { property: string; reason: string }[] } {
  const unknownKeys = Object.keys(raw).filter((k) => containsUnknown(raw[k]));
  const known = Object.fromEntries(Object.entries(raw).filter(([k]) => !unknownKeys.includes(k)));
  const r = d.def.inputs.safeParse(known);
  if (r.success) {
    const inputs = plain({ ...r.data, ...Object.fromEntries(unknownKeys.map((k) => [k, raw[k]])) });
    return { inputs, bodies: d.def.requestBodies?.(r.data) ?? [d.keys] };
  }
  const failures = withProgramText(
    failuresOf(r.error, d.keys).filter((f) => !unknownKeys.includes(f.property.split(".")[0] ?? "")),
    refused,
  );
  if (failures.length > 0) return { failures };
  const partial: Props = { ...raw };
  for (const [k, prop] of Object.entries(shapeOf(d.def.inputs))) {
    if (unknownKeys.includes(k)) continue;
    const one = prop.safeParse(raw[k]);
    if (one.success && one.data !== undefined) partial[k] = one.data;
  }
  return { inputs: plain(partial), bodies: [d.keys] };
}

/** `check`: see the module's header. `olds` are the stored inputs (none for a resource new to the stack). */
async function check(
  d: AnyDefined,
  call: Call,
  olds: Props,
  news: Props,
): Promise<pulumi.dynamic.CheckResult> {
  const { _policy: _, ...raw } = news; // an earlier check's facts (stored inputs, a refresh's): recorded anew
  // Old inputs: the resource is in the stack's state, and its claims come first (claims.ts).
  const established = Object.keys(olds).length > 0;
  if (call.resource?.stack !== undefined) call.run.creates.stack = call.resource.stack;
  // The settings' form, with no request: a malformed host, organization id or project id fails here as the first
  // create, update or delete would fail (and a preview with it).
  await checkSettings(call.run, false);
  const p = parsed(d, raw, call.refused);
  if ("failures" in p) return { inputs: wellFormed(raw) as Props, failures: p.failures };
  const failures = [
    ...oversizedBodies(p.inputs, p.bodies),
    ...withProgramText(refusedText(p.inputs), call.refused),
    ...claimFailures(d, call, p.inputs, established),
  ];
  if (failures.length > 0) return { inputs: wellFormed(p.inputs) as Props, failures };
  await planned(d, call, p.inputs, established);
  return { inputs: withPolicyFacts(d, call, p.inputs, olds, established) };
}

/** `diff`: see the module's header. `olds` are the old outputs, `news` the checked inputs. */
async function diff(
  d: AnyDefined,
  call: Call,
  id: string,
  olds: Props,
  news: Props,
): Promise<pulumi.dynamic.DiffResult> {
  const { def } = d;
  // An existing resource of the run holds its object: a lost create never adopts it (lost-create.ts).
  await managedByState(call.run.creates, def.name, id);
  // An object a create of this stack with an unknown outcome made after its resource was made again: named.
  await reportLostObjects(call.run.creates, "diff", call.resource?.stack, () =>
    operationClient(call.run, { type: def.name, id }),
  );
  const impossible = def.unsatisfiable?.(olds, news);
  if (impossible !== undefined) throw new Error(impossible);
  let changed = d.keys.filter((k) => news[k] !== undefined && !sameValue(olds[k], news[k]));
  if (def.changes) changed = def.changes(olds, news, changed);
  const replaces = def.update ? changed.filter((k) => d.replaceOn.has(k)) : changed;
  // A preview that updates or replaces proves the settings reach PostHog (one GET per run), as `up` would (its
  // checks did already, for resources declared with the SDK classes or through the plugin).
  if (changed.length > 0 && call.preview) {
    await checkSettings(call.run, true);
    sayScopesUnproven(call.run);
  }
  // An existing resource that keeps its object claims it (from the outputs, which may name it more fully than the
  // inputs: a Member declared by e-mail holds the person's user UUID too), and by its id (an object imported twice,
  // or adopted by id by another resource: claims.ts `byId`). A claim taken from a resource new to the stack fails
  // this diff too, naming both, so a preview fails whichever of the two is checked first.
  if (replaces.length === 0) {
    const found = [...identitiesOf(d, olds), byId(def.name, id, def.idInput)];
    claimOrThrow(d, call, call.resource?.name, found, { established: true, reportDisplaced: true });
    plan(d, call, id, olds, news);
  }
  return {
    changes: changed.length > 0,
    replaces,
    deleteBeforeReplace: replaces.length > 0 && def.deleteBeforeReplace === true,
  };
}

/** `create`: see the module's header. `news` are the checked inputs. */
async function create(d: AnyDefined, call: Call, news: Props): Promise<pulumi.dynamic.CreateResult> {
  const { def } = d;
  const inputs = checkedInputs(news);
  const name = call.resource?.name;
  // Still this resource's: a resource of the state checked after this one's check may have taken it.
  claimOrThrow(d, call, name, identitiesOf(d, inputs));
  const { id, outs } = await def.create(await operationClient(call.run), inputs, {
    claim: (found) => claimOrThrow(d, call, name, found),
    resource: name,
    creates: call.run.creates,
  });
  // The journal's record of what this create made is on disk before the engine hears of the object.
  await completionsWritten(call.run.creates.completing);
  // The object it made or adopted is this resource's now, by its id and what its outputs name: another resource of
  // the run declaring it later (a Dashboard's `dashboardId: a.id`) fails naming both. A fresh object can conflict
  // with nothing; an adopted one whose id another resource of the state holds fails the create here.
  const made = [byId(def.name, id, def.idInput), ...identitiesOf(d, outs)];
  claimOrThrow(d, call, name, made, { established: true });
  plan(d, call, id, outs);
  return { id, outs: withDeclared(d, plain(outs), inputs, news) };
}

/**
 * The inputs `read` reports for live outputs `outs`: the input-shaped part (or `def.liveInputs`), only the properties
 * the program gave or check defaulted (`declared`, the outputs' `__inputs`), so a value PostHog filled in (a resolved
 * projectId, an empty message) never shows as `-projectId`; and the drift that is no input (`deleted`, `isExpired`).
 */
function liveInputs(d: AnyDefined, outs: Outputs, declared: string[] | undefined): Props {
  const all: Props = {};
  if (d.def.liveInputs) Object.assign(all, plain(d.def.liveInputs(outs)));
  else for (const k of d.keys) if (outs[k] !== undefined && outs[k] !== null) all[k] = outs[k];
  const inputs = declared
    ? Object.fromEntries(Object.entries(all).filter(([k]) => declared.includes(k)))
    : all;
  return { ...inputs, ...d.def.driftShown?.(outs) };
}

/** `read`: see the module's header. `props` are the stored outputs (an import's: what its id gives). */
async function read(d: AnyDefined, call: Call, id: string, props: Props): Promise<pulumi.dynamic.ReadResult> {
  const { def } = d;
  await managedByState(call.run.creates, def.name, id);
  const importing = call.importing !== undefined;
  // outside the try: its errors are never "gone"
  const api = await operationClient(call.run, { type: def.name, id });
  // An object a create of this stack with an unknown outcome made, that no resource holds: named (not on import).
  if (!importing) await reportLostObjects(call.run.creates, "read", call.resource?.stack, async () => api);
  let live: Outputs | undefined;
  try {
    live = await def.read(api, id, props, { fromLists: call.run.clients.refreshClients.has(api), importing });
  } catch (e) {
    if (!isObjectGone(e)) throw e;
  }
  if (live === undefined) return { id: "" };
  const outs = plain(live);
  // `pulumi import`: the imported object is this resource's, by its id and what its outputs name; an entry of the
  // same import (or of the same run) that imports it again fails naming both, and nothing is imported.
  const found = [byId(def.name, id, def.idInput), ...identitiesOf(d, outs)];
  const how = { established: true, reportDisplaced: true, importing: true };
  claimOrThrow(d, call, call.importing?.name, found, how);
  const declared = Array.isArray(props.__inputs) ? (props.__inputs as unknown[]).map(String) : undefined;
  // The policy pack's facts as the last check recorded them (provider/framework/policy-facts.ts), kept so a refresh
  // changes no input of its own: a refresh runs no check, and the next check records them anew.
  const kept = props._policy !== undefined ? { _policy: props._policy } : {};
  return {
    id,
    props: { ...outs, ...(declared ? { __inputs: declared } : {}), ...kept },
    inputs: { ...liveInputs(d, outs, declared), ...kept },
  };
}

/** `update`: see the module's header. `olds` are the old outputs, `news` the checked inputs. */
async function update(
  d: AnyDefined,
  call: Call,
  id: string,
  olds: Props,
  news: Props,
): Promise<pulumi.dynamic.UpdateResult> {
  const { def } = d;
  if (!def.update) throw new Error(`${def.name} cannot be updated in place (every change replaces it)`);
  await managedByState(call.run.creates, def.name, id);
  const inputs = checkedInputs(news);
  const outs = await def.update(await operationClient(call.run), id, olds, inputs);
  plan(d, call, id, outs);
  return { outs: withDeclared(d, plain(outs), inputs, news) };
}

/**
 * After a 404 on the delete of object `id` (`notFound`): one read of it (`def.exists`, else `def.read` outside a
 * refresh: a GET, or its list where PostHog has no GET of one). Resolves when the read says it is gone
 * (`undefined`, PostHog's 404 for it, or soft-deleted: `deleted: true`, a Dashboard).
 * @throws naming the object, the 404'd request and what to do, when the read still finds it; the read's own
 *   error (the object's fate unknown), naming the 404 it could not confirm. Either way it stays in the state.
 */
async function confirmGone(
  d: AnyDefined,
  api: PostHogClient,
  id: string,
  old: Outputs,
  notFound: unknown,
): Promise<void> {
  const { def } = d;
  const request = notFound instanceof NotFoundError ? `${notFound.method} ${notFound.path}` : "its delete";
  let there: boolean;
  try {
    there = def.exists
      ? await def.exists(api, id, old)
      : await def
          .read(api, id, old, { fromLists: false, importing: false })
          .then((live) => live !== undefined && (live as Record<string, unknown>).deleted !== true);
  } catch (e) {
    if (isObjectGone(e)) return;
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
}

/** `delete`: see the module's header. `props` are the stored outputs. */
async function remove(d: AnyDefined, call: Call, id: string, props: Props): Promise<void> {
  await managedByState(call.run.creates, d.def.name, id);
  const api = await operationClient(call.run); // outside the try: its errors are never "done"
  // An object a create of this stack with an unknown outcome made, that no resource holds: named before any write.
  await reportLostObjects(call.run.creates, "delete", call.resource?.stack, async () => api);
  try {
    await d.def.delete(api, id, props);
  } catch (e) {
    if (!isObjectGone(e)) throw e;
    // A 404 is taken at its word only once a read of the object agrees (a proxy, a replica lagging behind, a
    // PostHog bug): an object still there stays in the state, and destroy fails naming it.
    await confirmGone(d, api, id, props, e);
  }
}

/** The troubleshooting page with a section per resource ({@link ResourceDefinition.troubleshooting}). */
export const RESOURCES_PAGE = "troubleshooting/resources.md";

/**
 * `op`'s result; an Error it throws whose message names no docs page (a card's own error: the client's and the
 * framework's name theirs) leaves with `pointer` at its end, the resource's troubleshooting section.
 * @throws what `op` throws
 */
async function withResourceDocs<T>(pointer: string | undefined, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (pointer !== undefined && e instanceof Error && !hasDocsLink(e.message))
      e.message = `${e.message}${pointer}`;
    throw e;
  }
}

/**
 * The {@link Operations} of the resource `def` defines: plain functions over the definition, handed the call and
 * its properties by an adapter. Operations that reach PostHog keep the provider host alive until they settle, even
 * once the engine is gone (provider/framework/engine-watch.ts). No request until an operation is called.
 */
export function defineResource<S extends z.ZodType<Record<string, unknown>>, O extends Outputs>(
  def: ResourceDefinition<S, O>,
): Operations {
  const d = {
    def,
    keys: inputKeys(def.inputs),
    replaceOn: new Set(def.replaceOnChanges ?? []),
  } as unknown as AnyDefined;
  const pointer =
    def.troubleshooting === undefined ? undefined : docsLink(RESOURCES_PAGE, def.troubleshooting);
  const busy = <T>(call: Call, op: () => Promise<T>) =>
    withResourceDocs(pointer, () => underWayWhile(call.run.engine, op));
  return {
    name: def.name,
    check: (call, olds, news) => check(d, call, olds, news),
    diff: (call, id, olds, news) => diff(d, call, id, olds, news),
    create: (call, news) => busy(call, () => create(d, call, news)),
    read: (call, id, props) => busy(call, () => read(d, call, id, props)),
    update: (call, id, olds, news) => busy(call, () => update(d, call, id, olds, news)),
    delete: (call, id, props) => busy(call, () => remove(d, call, id, props)),
  };
}
