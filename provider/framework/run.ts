/**
 * One run of the provider, and one call of it.
 *
 * A {@link Run} holds everything the operations of one run share: the settings and the clients built from them, the
 * claims (one object, one resource), the policy pack's facts, what the run knows of its creates (the lost-create
 * protocol and the create journal's writes) and the engine watch. An adapter makes it and hands it to every operation
 * in a {@link Call}: the provider plugin makes one when it starts (the engine starts one plugin per deployment), the
 * dynamic SDK's adapter one per provider host (the engine starts one dynamic-provider host per deployment, and loads
 * the providers of every resource type into it). Nothing of a run lives in a module's variables
 * (test/tools/module-state.test.ts).
 *
 * A {@link Call} is what an operation knows of the call it serves, decoded once by its adapter: the resource's Pulumi
 * name and stack, whether the run is a preview, whether `check` proves the settings reach PostHog, whether a read is
 * `pulumi import`'s. The dynamic SDK's adapter decodes it from the in-band keys the SDK classes pass
 * (provider/adapters/dynamic.ts); the plugin from the URN and the request (provider/adapters/plugin/index.ts).
 */
import { type ClientShared, type ConfigGetter, clientShared, type PostHogClient } from "../client";
import { type Claims, newClaims } from "./claims";
import { type EngineWatch, newEngineWatch } from "./engine-watch";
import { type Creates, type LostObjectKind, newCreates } from "./lost-create";
import { newPolicyFacts, type PolicyFacts } from "./policy-facts";

/** The settings of a run and the clients built from them (provider/framework/lifecycle.ts `operationClient`). */
export interface RunClients {
  /**
   * What every client of the run shares (connection pools, the rate limiter, GETs in flight, throttles, the access
   * check's outcome, invite batches, `find()` lists): one per run, kept across `configure` calls.
   */
  readonly shared: ClientShared;
  /** The stack config handed to `configure` (else the environment is read). */
  config: ConfigGetter | undefined;
  /** The client of operations: built on first use after each `configure`. */
  current: PostHogClient | undefined;
  /** The client of a refresh's reads (list reads shared for `REFRESH_SNAPSHOT_MS`). */
  refreshing: PostHogClient | undefined;
  /**
   * Every client built as {@link refreshing}: `read` asks this set, because the dynamic host calls `configure` once per
   * resource type it loads, which drops the pair of clients while reads that already got theirs are under way.
   */
  readonly refreshClients: WeakSet<PostHogClient>;
  /** Whether the run has started a create, update or delete (of any resource type). */
  wrote: boolean;
  /** `<type>/<id>` of every object read so far in the run. */
  readonly readBefore: Set<string>;
}

/** What the adapter learnt of the run as a whole (the dynamic SDK says it in every `check`; the plugin never). */
export interface RunMode {
  /** The run is a preview. */
  previewing: boolean;
  /** `check` proves the settings reach PostHog in every run (the plugin: the protocol tells `check` nothing of a preview). */
  proving: boolean;
  /** The preview said that it cannot prove the key's write scopes (said once per run). */
  scopesSaid: boolean;
}

/** Everything the operations of one run share. */
export interface Run {
  readonly clients: RunClients;
  readonly mode: RunMode;
  /** One object, one resource (provider/framework/claims.ts). */
  readonly claims: Claims;
  /** What the policy pack needs of the objects this run plans (provider/framework/policy-facts.ts). */
  readonly facts: PolicyFacts;
  /** What the run knows of its creates (provider/framework/lost-create.ts). */
  readonly creates: Creates;
  /** The watch that ends the provider host once the engine is gone (provider/framework/engine-watch.ts). */
  readonly engine: EngineWatch;
}

/**
 * A new run of the resources `resources` (provider/resources/index.ts `RESOURCES`): no settings yet (the environment
 * is read unless `configure` brings the stack config), nothing claimed, planned or created. The run keeps what its
 * operations need of each resource whose creates name their objects provisionally (each card's `lostObjects`). No
 * request, no file read.
 */
export function newRun(
  resources: readonly { card: { name: string; lostObjects?: LostObjectKind | undefined } }[],
): Run {
  const lostObjects = new Map<string, LostObjectKind>();
  for (const { card } of resources) if (card.lostObjects) lostObjects.set(card.name, card.lostObjects);
  return {
    clients: {
      shared: clientShared(),
      config: undefined,
      current: undefined,
      refreshing: undefined,
      refreshClients: new WeakSet(),
      wrote: false,
      readBefore: new Set(),
    },
    mode: { previewing: false, proving: false, scopesSaid: false },
    claims: newClaims(),
    facts: newPolicyFacts(),
    creates: newCreates(lostObjects),
    engine: newEngineWatch(),
  };
}

/** The resource a call serves: its Pulumi name, and its `<project>/<stack>` when known. */
export interface CallResource {
  name: string;
  stack: string | undefined;
}

/** What an operation knows of the call it serves, decoded once by its adapter. */
export interface Call {
  readonly run: Run;
  /**
   * The resource the call serves: the plugin's from the URN; the dynamic SDK's from `__resource` (undefined for a
   * resource declared without the SDK's classes: it claims nothing and journals nothing).
   */
  readonly resource: CallResource | undefined;
  /** The run is a preview (the dynamic SDK says so; the plugin cannot know: false). */
  readonly preview: boolean;
  /** `check` proves the settings reach PostHog (every preview of the dynamic SDK; every run of the plugin). */
  readonly prove: boolean;
  /** A read that is `pulumi import`'s: no resource of the state holds the object; it is claimed for `name`. */
  readonly importing: { name: string | undefined } | undefined;
  /** `check`: text PostHog refuses that only the program could see (the dynamic SDK's, provider/framework/text.ts). */
  readonly refused: unknown;
}
