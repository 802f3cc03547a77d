/**
 * Facts for the governance policy pack (provider/apps/governance/pack.ts) that a resource's own inputs do not carry: a
 * DashboardSharing's policy is judged by its dashboard's name and tags (posthog-sharing-allow-list), and the engine
 * hands a resource policy only the inputs of the resource it judges. So the provider's `check` adds them to the
 * checked inputs, as `_policy`, which create and update never send: the engine runs the policy on those inputs before
 * it writes the resource, in `pulumi preview` and in `pulumi up --skip-preview` alike. One underscore, not two: the
 * engine hands a policy none of the inputs whose names start with `__` (its internal keys; measured with the CLI
 * v3.274: a sharing's `__resource` and `__policy` did not reach the pack), so, unlike `__resource`, a plan's details
 * (`pulumi preview --diff`) show it.
 *
 * The facts are what this run leaves the object with (a Dashboard's diff, create or update in this provider host: one
 * per deployment, which registers a dashboard before the sharing that takes its id), so that a preview judges the
 * plan, not the object as it is. No request: an object the program does not declare has no facts, and the pack knows
 * it by its id alone.
 */
import { containsUnknown } from "./values";

/** The policy facts of one run (a field of provider/framework/run.ts `Run`). */
export interface PolicyFacts {
  /** `type\nid` → the facts this run plans for that object. */
  readonly planned: Map<string, Record<string, unknown>>;
  /** `type` → resource name → the facts of each object of that type this run creates (its id not known before). */
  readonly creating: Map<string, Map<string, Record<string, unknown>>>;
}

/** The policy facts of a new run: none. */
export function newPolicyFacts(): PolicyFacts {
  return { planned: new Map(), creating: new Map() };
}

/**
 * Records what this run plans for object `id` of `type` (e.g. a Dashboard's `{name, tags}`): values that are
 * undefined or not known yet are left out, and a later record of the same object (its update after its diff)
 * replaces the earlier one's values.
 */
export function notePlanned(
  run: PolicyFacts,
  type: string,
  id: string,
  facts: Record<string, unknown>,
): void {
  if (!id) return;
  const known = Object.fromEntries(
    Object.entries(facts).filter(([, v]) => v !== undefined && !containsUnknown(v)),
  );
  run.planned.set(`${type}\n${id}`, { ...run.planned.get(`${type}\n${id}`), ...known });
}

/** What this run plans for object `id` of `type` ({@link notePlanned}), or undefined when it does not manage it. */
export function plannedFacts(
  run: PolicyFacts,
  type: string,
  id: string,
): Record<string, unknown> | undefined {
  return run.planned.get(`${type}\n${id}`);
}

/**
 * Records that this run creates an object of `type` for the resource `resource` (new to the stack, or replaced: its
 * id is not known until the create answers), with its facts (values not known yet left out); a later record for the
 * same resource (its check again) replaces it. A preview's policy cannot know which of them a reference to an
 * unknown id names: it is one of these ({@link creatingFacts}).
 */
export function noteCreating(
  run: PolicyFacts,
  type: string,
  resource: string,
  facts: Record<string, unknown>,
): void {
  const known = Object.fromEntries(
    Object.entries(facts).filter(([, v]) => v !== undefined && !containsUnknown(v)),
  );
  const of = run.creating.get(type) ?? new Map<string, Record<string, unknown>>();
  of.set(resource, known);
  run.creating.set(type, of);
}

/** The facts of every object of `type` this run creates, checked so far ({@link noteCreating}), by resource name. */
export function creatingFacts(run: PolicyFacts, type: string): Record<string, Record<string, unknown>> {
  return Object.fromEntries(run.creating.get(type) ?? []);
}
