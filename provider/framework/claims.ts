/**
 * One object, one resource. Two resources of one program that manage the same PostHog object (two Invites for
 * one e-mail address, two Members for one person, …) would undo each other on every `up`: each run re-sends
 * an invite or flips a level back, and `up` still exits 0. This registry makes the second of them fail, naming
 * both, instead.
 *
 * - **Who is who.** Each operation knows its resource's Pulumi name from its call (provider/framework/run.ts `Call`):
 *   the plugin reads it from the URN; the dynamic SDK's classes pass it in the input `__resource`, which the dynamic
 *   adapter decodes (provider/adapters/dynamic.ts).
 * - **Where.** The claims live on the run's object ({@link Claims}, a field of provider/framework/run.ts `Run`): the
 *   engine starts one provider host per deployment (a preview, an update), and every resource of the program goes
 *   through it, so they cover exactly one run. A name claiming again what it already holds is no conflict (the same
 *   resource checked in a preview and then in an update of the same process).
 * - **When.** `check` claims the object the declared inputs name (before any request, so a preview shows the
 *   conflict); `diff` claims the object an existing resource manages (from its outputs, e.g. a Member declared by
 *   e-mail also holds the person's user UUID, and by its id: {@link byId}); `create` claims what it resolved before
 *   it changes anything (a Member declared by `userUuid` also holds the person's e-mail) and, once it returns, the
 *   object it made or adopted by its id; `pulumi import` (the provider plugin's read) claims the object it imports
 *   by its id and what its outputs name. Values unknown during a preview are not claimed; they are known when the
 *   same resource is checked during `up`.
 * - **Which objects.** What each resource type's `identity` names (provider/resources/), and for every type the
 *   object's id as the state keeps it ({@link byId}): declared by the input that adopts by id
 *   ({@link ID_INPUTS}: a Dashboard's `dashboardId`, a Project's `projectId`, a DomainVerification's `domainId`),
 *   or the id of an object a resource of the state holds (imported, created or adopted).
 *
 * Resources declared without the SDK classes (no `__resource`) claim nothing.
 */

/** A resource of the program: its type (e.g. "Invite") and its Pulumi name. */
export interface Claimant {
  type: string;
  name: string;
}

/** One object a resource manages: the key it is claimed by, the input property naming it, and how to say it. */
export interface Identity {
  /** Unique across types, e.g. `invite:dup@example.com`. */
  key: string;
  /** The input property that names the object (where a check failure points). */
  property: string;
  /** The object in words, e.g. `the invite for dup@example.com (e-mail addresses compare case-insensitively)`. */
  object: string;
}

/** A claim another resource already holds. */
export interface Conflict {
  identity: Identity;
  holder: Claimant;
}

/** A claim: who holds it, and whether that resource is in the stack's state (it was checked with old inputs). */
export interface Holding {
  claimant: Claimant;
  established: boolean;
}

/** The claims of one run: identity key → who holds it. */
export interface Claims {
  readonly holders: Map<string, Holding>;
}

/** The claims of a new run: none. */
export function newClaims(): Claims {
  return { holders: new Map() };
}

/**
 * Claims every identity for `claimant` in the run's `claims`. Returns the ones another resource holds (and claims the free ones).
 *
 * `established`: the claimant is in the stack's state (it manages the object since an earlier run), or has just
 * made or adopted the object. The engine checks registrations in the order they reach it, which the Node runtime
 * does not fix, so the resource already in the state takes the claim from one that is not (whichever was checked
 * first): the new one then fails when it claims again, before its write (lifecycle.ts re-claims before every
 * create; the Invite's re-claims right before its request leaves), and the object is never created twice nor
 * flipped back and forth.
 *
 * `reportDisplaced`: a claim taken that way from another resource is returned as a conflict too (its holder the
 * resource it was taken from), so that the run fails naming both even when the other one is checked first and a
 * preview, which creates nothing, would never meet the other's failing create. `check`, `diff` and an import pass
 * it; the claims a create makes once its object exists do not (the displaced resource fails at its own create).
 */
export function claim(
  claims: Claims,
  claimant: Claimant,
  identities: readonly Identity[],
  established = false,
  reportDisplaced = false,
): Conflict[] {
  const conflicts: Conflict[] = [];
  for (const identity of identities) {
    const holding = claims.holders.get(identity.key);
    const other =
      holding !== undefined &&
      (holding.claimant.type !== claimant.type || holding.claimant.name !== claimant.name);
    if (!holding || (established && !holding.established)) {
      claims.holders.set(identity.key, { claimant, established });
      if (other && reportDisplaced) conflicts.push({ identity, holder: holding.claimant });
    } else if (other) conflicts.push({ identity, holder: holding.claimant });
  }
  return conflicts;
}

/**
 * The identity of the object of resource type `type` whose id, as the state keeps it, is `id` (a dashboard's
 * `42`, a domain's UUID, a collaborator's `<dashboardId>/<userUuid>`): digits compare as numbers (`007` is `7`),
 * anything else case-insensitively (UUIDs). `property` is the input a failure points at (the resource's adoption-by-id
 * input, its card's `idInput`, else `id`). No request.
 */
export function byId(type: string, id: string, property = "id"): Identity {
  const key = id
    .split("/")
    .map((part) => (/^\d+$/.test(part) ? part.replace(/^0+(?=\d)/, "") : part.toLowerCase()))
    .join("/");
  return { key: `id:${type}:${key}`, property, object: `the ${type} of id ${id}` };
}

/**
 * {@link byId} of the id `values` (checked inputs, or outputs) declare in `property` (the resource's adoption-by-id
 * input: a Dashboard's `dashboardId`; a DomainVerification's domain id is its own), as a list: empty when the
 * resource has none, or the value is missing or unknown during preview (`unknown`). Two resources declaring the same
 * one, or one declaring the id of an object another resource holds, manage one object.
 */
export function declaredId(
  type: string,
  property: string | undefined,
  values: Record<string, unknown>,
  unknown: string,
): Identity[] {
  const v = property === undefined ? undefined : values[property];
  if ((typeof v !== "string" && typeof v !== "number") || v === "" || String(v).includes(unknown)) return [];
  return [byId(type, String(v), property)];
}

/**
 * The message of a conflict: both resources by name, the object, and what to do; `importing`: the claimant is an
 * entry of `pulumi import` (nothing is imported then).
 */
export function conflictMessage(claimant: Claimant, c: Conflict, importing = false): string {
  const both = `${claimant.type} "${claimant.name}" and ${c.holder.type} "${c.holder.name}" both manage ${c.identity.object}`;
  if (importing)
    return (
      `${both}: one object is imported once, as one resource. Nothing is imported: remove one of the two from the ` +
      "import (the import file's entries, or the resource the program already holds it as)"
    );
  return (
    `${both}. Two resources of one program that manage one object undo each other on every up: keep one of them ` +
    "and remove the other from the program"
  );
}
