/**
 * The dynamic SDK's adapter: each resource's {@link Operations} served as a Pulumi dynamic provider, whose methods the
 * SDK's serialized `__provider` shims call (`require("pulumi-posthog/provider")[<Name>].check(…)`, sdk/provider-shim.ts).
 *
 * The dynamic provider protocol tells a provider nothing of the call but its properties, so the SDK classes pass what
 * the lifecycle needs in band, and this adapter decodes it once per call into the typed {@link Call}:
 * - `__resource: {name, stack, preview, refused}` in the inputs `check` gets (the resource's Pulumi name, its
 *   `<project>/<stack>`, whether the program runs a preview, and text PostHog refuses that only the program could
 *   see: provider/framework/text.ts); state written by earlier versions carries `__resourceName` and `__stack`
 *   instead, read the same way. `check` keeps `{name, stack}` in the checked inputs as `__resource`, and create and
 *   update keep it in the outputs, so that diff, create, read, update and delete know the resource too (the engine
 *   hides `__` properties from plans);
 * - `__import: {name}` in the props of a read that is `pulumi import`'s ({@link IMPORT_READ});
 * - `__provider` (the serialized shim) in every call, which no operation sees.
 * A `check` with `__resource` also says whether the run is a preview (`preview`) and whether every check proves the
 * settings reach PostHog (`prove`): the dynamic host calls no other method with it, so the run keeps the last one
 * said ({@link Run.mode}).
 *
 * One run per provider host: the engine starts one dynamic-provider host per deployment and loads every resource
 * type's shim into it, each calling `configure` once; the providers of {@link dynamicProviders} share one
 * {@link Run}, so claims, the create journal's state and the policy facts span every resource type of the deployment.
 */
import type * as pulumi from "@pulumi/pulumi";
import { configureRun } from "../framework/clients";
import type { Operations, Props } from "../framework/lifecycle";
import { type Call, type CallResource, newRun, type Run } from "../framework/run";

/** Every method of a dynamic provider, present (the thin `__provider` shim forwards to all of them). */
export type Provider = Required<pulumi.dynamic.ResourceProvider>;

/**
 * The property of the props of `pulumi import`'s read (`{[IMPORT_READ]: {name}}`, the resource's Pulumi name; `true`
 * names none): no resource of the state holds the object ({@link Call.importing}), and it is claimed for that
 * resource (two entries of one import naming one object fail, naming both). Never in outputs or inputs.
 */
export const IMPORT_READ = "__import";

/** The in-band keys of the dynamic SDK, which no operation sees. */
const IN_BAND = new Set(["__provider", "__resource", "__resourceName", "__stack", IMPORT_READ]);

/** `v`'s own properties but the in-band keys and `undefined` values ({} for anything but an object). */
function withoutInBand(v: unknown): Props {
  if (!v || typeof v !== "object" || Array.isArray(v)) return {};
  const out: Props = {};
  for (const [k, val] of Object.entries(v)) if (!IN_BAND.has(k) && val !== undefined) out[k] = val;
  return out;
}

/** What `__resource` (or, from earlier versions, `__resourceName` and `__stack`) of `props` says, if anything. */
function passedIn(props: unknown): {
  resource: CallResource | undefined;
  said: Record<string, unknown> | undefined;
} {
  const p = (props ?? {}) as Record<string, unknown>;
  const said =
    p.__resource !== null && typeof p.__resource === "object" ? (p.__resource as Props) : undefined;
  const name = said?.name ?? p.__resourceName;
  const stack = said?.stack ?? p.__stack;
  if (typeof name !== "string") return { resource: undefined, said };
  return { resource: { name, stack: typeof stack === "string" ? stack : undefined }, said };
}

/** The call of `run` serving `resource` (preview and prove as the run's last `check` said). */
function callOf(run: Run, resource: CallResource | undefined, extra: Partial<Call> = {}): Call {
  return {
    run,
    resource,
    preview: run.mode.previewing,
    prove: run.mode.proving,
    importing: undefined,
    refused: undefined,
    ...extra,
  };
}

/** `props` with `__resource` ({name, stack}) of the call's resource, when it has one (what `check` keeps). */
function withResource(props: Props | undefined, resource: CallResource | undefined): Props {
  if (resource === undefined) return { ...props };
  const kept = resource.stack === undefined ? { name: resource.name } : resource;
  return { ...props, __resource: kept };
}

/** `props` with the `__resource` that `from` holds (the checked inputs', the stored outputs'), as it is, if any. */
function keptFrom(props: Props | undefined, from: unknown): Props {
  const kept = (from as Record<string, unknown> | undefined)?.__resource;
  return kept === undefined ? { ...props } : { ...props, __resource: kept };
}

/** The `pulumi import` marker of a read's props ({@link IMPORT_READ}), as {@link Call.importing} takes it. */
function importingOf(props: unknown): Call["importing"] {
  const marker = (props as Record<string, unknown> | undefined)?.[IMPORT_READ];
  if (marker === undefined || marker === false) return undefined;
  const name = (marker as { name?: unknown } | null)?.name;
  return { name: typeof name === "string" ? name : undefined };
}

/**
 * The dynamic provider serving `ops` in `run`: decodes each call's in-band keys into a {@link Call}, hands the
 * operation the properties without them, and puts `__resource` back where the next call needs it. No request.
 */
export function dynamicProvider(ops: Operations, run: Run): Provider {
  return {
    async configure(req) {
      configureRun(run, req.config);
    },
    async check(olds, news) {
      const { resource, said } = passedIn(news);
      // Every check of a run says the same; resources declared without the SDK classes say nothing.
      if (said !== undefined) {
        run.mode.previewing = said.preview === true;
        run.mode.proving = said.prove === true;
      }
      const call = callOf(run, resource, { refused: said?.refused });
      const r = await ops.check(call, withoutInBand(olds), withoutInBand(news));
      return { ...r, inputs: withResource(r.inputs, resource) };
    },
    async diff(id, olds, news) {
      const call = callOf(run, passedIn(news).resource ?? passedIn(olds).resource);
      return ops.diff(call, id, withoutInBand(olds), withoutInBand(news));
    },
    async create(news) {
      const { resource } = passedIn(news);
      const r = await ops.create(callOf(run, resource), withoutInBand(news));
      return { ...r, outs: keptFrom(r.outs, news) };
    },
    async read(id, props) {
      const { resource } = passedIn(props);
      const call = callOf(run, resource, { importing: importingOf(props) });
      const r = await ops.read(call, id, withoutInBand(props));
      if (!r.id) return r;
      // Kept as the last check recorded it, so a refresh changes no input of its own (a refresh runs no check).
      return {
        ...r,
        props: keptFrom(r.props, props),
        ...(r.inputs ? { inputs: keptFrom(r.inputs, props) } : {}),
      };
    },
    async update(id, olds, news) {
      const { resource } = passedIn(news);
      const r = await ops.update(callOf(run, resource), id, withoutInBand(olds), withoutInBand(news));
      return { ...r, outs: keptFrom(r.outs, news) };
    },
    async delete(id, props) {
      await ops.delete(callOf(run, passedIn(props).resource), id, withoutInBand(props));
    },
  };
}

/**
 * The dynamic providers of `resources` (provider/resources/index.ts `RESOURCES`), by resource name, sharing one new
 * {@link Run} (one per provider host: see the module's header). No request.
 */
export function dynamicProviders<
  const R extends readonly { card: { name: string }; operations: Operations }[],
>(resources: R): Record<R[number]["card"]["name"], Provider> {
  const run = newRun(resources);
  return Object.fromEntries(
    resources.map((r) => [r.card.name, dynamicProvider(r.operations, run)]),
  ) as Record<R[number]["card"]["name"], Provider>;
}
