/**
 * The provider plugin's adapter: every resource of the one list (provider/resources/index.ts `RESOURCES`) served over
 * Pulumi's provider protocol (type tokens `posthog:index:<Name>`), by the very operations the dynamic SDK's adapter
 * serves (provider/adapters/dynamic.ts; both built by `defineResource`). One implementation per resource; the two
 * adapters each decode their calls into one typed `Call` (provider/framework/run.ts).
 *
 * What this adapter does around the operations:
 * - the call comes from the URN: the resource's type and name, and its `<project>/<stack>`, so claims (two resources,
 *   one object) and the create journal work as they do for the SDK; nothing is encoded into the properties (state of
 *   earlier versions, whose properties hold `__resource`, still reads: it is dropped going in, kept coming back);
 * - secrets: the engine sends secret values wrapped (`{"4dabf1…": "1b47…", value}`, the plugin accepts secrets);
 *   they are unwrapped before the resource's code sees them, and the properties that were secret, and the outputs
 *   that are always secret ({@link SECRET_OUTPUTS}), are wrapped again in what goes back to the engine;
 * - configuration: `posthog:host`, `posthog:apiKey`, `posthog:organizationId`, `posthog:projectId` and the tuning
 *   settings reach the run as the stack config does under the dynamic host ({@link configFromRequest}); unset ones
 *   fall back to the same environment variables (`POSTHOG_API_KEY`, …);
 * - the lookups of provider/lookups as functions `posthog:index:get<Name>` (its `LOOKUPS`), with the run's clients;
 * - `pulumi import`: a read with no outputs takes the resource's import id ({@link IMPORT_IDS}), and claims the object
 *   for the resource the URN names (two entries of one import naming one object fail, naming both).
 *
 * The protocol tells `check` nothing of a preview: the plugin's call is never a preview, and every `check` proves
 * the settings reach PostHog (one GET per run, which `up` makes anyway), so a preview through the plugin fails on a
 * wrong key as `up` would; it announces no adoption.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type * as provider from "@pulumi/pulumi/provider";
import { createClient, type PostHogClient } from "../../client";
import { InvalidInputError, NotFoundError } from "../../client/errors";
import { packageRoot, packageVersion } from "../../client/version";
import { configureRun } from "../../framework/clients";
import type { Operations } from "../../framework/lifecycle";
import { type Call, newRun, type Run } from "../../framework/run";
import { LOOKUPS, type Lookup } from "../../lookups";
import { RESOURCES, type ResourceName, resourceNames } from "../../resources/index";

/** The Pulumi package name of the plugin and its schema. */
export const PACKAGE = "posthog";

/** The engine's mark of a secret value in a property map, and the value of that mark. */
export const SECRET_SIG = "4dabf18193072939515e22adb298388d";
const SECRET_VALUE = "1b47061264138c4ac30d75fd1eb44270";

/** The type token of resource `name`: `posthog:index:<name>`. */
export const typeToken = (name: string): string => `${PACKAGE}:index:${name}`;

/** Whether `v` is the engine's secret envelope. */
function isSecret(v: unknown): v is { value?: unknown } {
  return (
    v !== null &&
    typeof v === "object" &&
    !Array.isArray(v) &&
    (v as Record<string, unknown>)[SECRET_SIG] === SECRET_VALUE
  );
}

/** `v` without secret envelopes, at any depth. */
export function reveal(v: unknown): unknown {
  if (isSecret(v)) return reveal(v.value);
  if (Array.isArray(v)) return v.map(reveal);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, reveal(x)]));
}

/** The top-level properties of `props` holding a secret (anywhere in their value). */
function secretKeys(props: unknown): Set<string> {
  const holds = (v: unknown): boolean =>
    isSecret(v) || (v !== null && typeof v === "object" && Object.values(v).some(holds));
  const keys = new Set<string>();
  if (props && typeof props === "object")
    for (const [k, v] of Object.entries(props)) if (holds(v)) keys.add(k);
  return keys;
}

/** `props` with each property named in `keys` wrapped as a secret (once). */
function conceal(
  props: Record<string, unknown> | undefined,
  keys: Iterable<string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(props ?? {}) };
  for (const k of keys) {
    if (out[k] === undefined || isSecret(out[k])) continue;
    out[k] = { [SECRET_SIG]: SECRET_VALUE, value: out[k] };
  }
  return out;
}

/** `{project, stack, type, name}` of a URN `urn:pulumi:<stack>::<project>::<parent types$>type::<name>`. */
export function parseUrn(urn: string): { stack: string; project: string; type: string; name: string } {
  const parts = urn.split("::");
  if (parts.length < 4 || !parts[0]?.startsWith("urn:pulumi:")) throw new Error(`not a Pulumi URN: ${urn}`);
  const qualified = parts[2] ?? "";
  return {
    stack: (parts[0] ?? "").slice("urn:pulumi:".length),
    project: parts[1] ?? "",
    type: qualified.split("$").at(-1) ?? qualified,
    name: parts.slice(3).join("::"),
  };
}

/** The resource serving type token `type`, or an error naming the tokens this plugin serves. */
export function providerOf(type: string): { name: ResourceName; operations: Operations; card: Card } {
  const r = RESOURCES.find((x) => typeToken(x.card.name) === type);
  if (r === undefined) {
    throw new Error(
      `the posthog plugin has no resource type ${type}; it serves ${resourceNames.map(typeToken).join(", ")}`,
    );
  }
  return { name: r.card.name, operations: r.operations, card: r.card as Card };
}

/** A card as the plugin reads it (every resource's, whatever its schemas). */
type Card = (typeof RESOURCES)[number]["card"];

/** The card of resource `name` (one of {@link resourceNames}). */
function cardOf(name: ResourceName): Card {
  return providerOf(typeToken(name)).card;
}

/** Outputs that are secret whatever the inputs, by resource (each card's `secretOutputs`). */
export const SECRET_OUTPUTS: Readonly<Partial<Record<ResourceName, readonly string[]>>> = Object.fromEntries(
  RESOURCES.map((r) => [r.card.name, r.card.secretOutputs]),
);

/** The import id of each resource (each card's `importId`: form, pattern, parse, the object it names). */
export const IMPORT_IDS: Readonly<Record<ResourceName, Card["importId"]>> = Object.fromEntries(
  RESOURCES.map((r) => [r.card.name, r.card.importId]),
) as Record<ResourceName, Card["importId"]>;

/**
 * What `pulumi import` records of an object: the read's outputs and inputs, plus each input the resource's `check`
 * would default that the read does not report (a Dashboard's `deleteInsights: false`), so that a program declaring
 * the generated code plans no change (`diff` compares the outputs with the program's checked inputs); and
 * `adopted: true` where the resource records it: an imported object was not created by Pulumi, so destroy leaves it
 * as it was found unless `deleteAdoptedOnDestroy` (as for an object adopted by its id); and the state found
 * (its card's `records.found`: a Member's level, a batch export's pause, a dashboard's sharing), which destroy sets
 * back.
 */
function withImportDefaults(
  name: ResourceName,
  outs: Record<string, unknown>,
  inputs: Record<string, unknown>,
): { outs: Record<string, unknown>; inputs: Record<string, unknown> } {
  const card = cardOf(name);
  const found = card.records.found;
  const marked = {
    ...outs,
    ...(card.records.adopted ? { adopted: true } : {}),
    ...(found && outs[found.from] !== undefined ? { [found.found]: outs[found.from] } : {}),
  };
  const parsed = card.inputs.safeParse(inputs);
  if (!parsed.success || !parsed.data || typeof parsed.data !== "object") return { outs: marked, inputs };
  const added = Object.entries(parsed.data).filter(([k, v]) => v !== undefined && outs[k] === undefined);
  return {
    outs: { ...marked, ...Object.fromEntries(added) },
    inputs: { ...inputs, ...Object.fromEntries(added) },
  };
}

/**
 * The id and starting outputs of `pulumi import`'s read of resource `name` by import id `importId`.
 * @throws naming the form the resource's import id takes, when `importId` is not of it
 */
export function importTarget(name: ResourceName, importId: string): { id: string; props: object } {
  const form = IMPORT_IDS[name];
  const m = form.pattern.exec(importId);
  if (!m) {
    throw new Error(
      `cannot import ${typeToken(name)} "${importId}": its import id is ${form.form}, e.g. ` +
        `\`pulumi import ${typeToken(name)} <name> ${form.form.split(" ")[0]}\``,
    );
  }
  return form.parse(m);
}

/**
 * The one-line error of `pulumi import` of resource `name` by the well-formed import id `importId` when PostHog
 * says there is no such object (its read found it gone: a 404 of the object itself, or a list without it), or
 * (`missingProject`) no such project of the organization the key reaches: it names the kind, the object and the
 * import id, and what to check. No request.
 */
export function missingOnImport(name: ResourceName, importId: string, missingProject?: string): Error {
  const form = IMPORT_IDS[name];
  const m = form.pattern.exec(importId);
  const object = m ? form.object(m) : `${name} ${importId}`;
  const why =
    missingProject !== undefined
      ? `Project ${missingProject} does not exist in the organization, or the API key cannot reach it`
      : m && form.why
        ? form.why(m)
        : undefined;
  return new Error(
    `${object} does not exist: check the import id "${importId}" (${typeToken(name)} takes ${form.form}); ` +
      `nothing is imported.${why ? ` ${why}.` : ""}`,
  );
}

/** The provider settings that are secret whatever the user typed (schema.json marks them `secret`). */
export const SECRET_CONFIG: readonly string[] = ["apiKey"];

/**
 * CheckConfig: the provider's settings as the engine records them (the stack config `posthog:*` of the default
 * provider, or an explicit `pulumi:providers:posthog`'s properties, keyed by name without `posthog:`), with the
 * settings of {@link SECRET_CONFIG} made secrets, so that the state stores the key encrypted even when it was set in
 * plain text (`pulumi config set posthog:apiKey …` without `--secret`, or a plain string given to a Provider). No
 * request. It cannot warn about a plain key as the dynamic SDK does: the engine sends CheckConfig the settings
 * without their secret marks (a key set with `--secret` arrives as plain text too; checked with the CLI v3.274.1),
 * so a plain key cannot be told from a secret one here.
 * @param news the request's `news`
 * @returns `inputs` for the response
 */
export function checkConfig(news: Record<string, unknown>): { inputs: Record<string, unknown> } {
  return { inputs: conceal(news, SECRET_CONFIG) };
}

/** A settings getter as `configure` takes it: `get("posthog:<name>")`. */
export type ConfigGetter = { get(key: string): string | undefined };

/**
 * The provider's settings from a Configure request: its `args` (the provider resource's inputs: the stack config
 * `posthog:*` for the default provider, the properties of an explicit `pulumi:providers:posthog`), else its
 * `variables` (`posthog:config:<name>`). Secrets are unwrapped; numbers and booleans become their text, objects
 * their JSON. Never logs or keeps anything else.
 */
export function configFromRequest(
  args: unknown,
  variables: ReadonlyMap<string, string> | undefined,
): ConfigGetter {
  const values = new Map<string, string>();
  for (const [k, v] of variables ?? []) {
    const m = /^posthog:(?:config:)?(.+)$/.exec(k);
    if (m?.[1]) values.set(m[1], v);
  }
  const plainArgs = reveal(args ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(plainArgs)) {
    if (v === undefined || v === null || k.startsWith("__")) continue;
    values.set(k, typeof v === "string" ? v : typeof v === "object" ? JSON.stringify(v) : String(v));
  }
  return {
    get: (key) => {
      const v = values.get(key.replace(/^posthog:/, ""));
      return v === "" ? undefined : v;
    },
  };
}

/**
 * The package schema as the plugin serves it (GetSchema), as text: schema.json at the package root, its `version`
 * the package's own (package.json's, which GetPluginInfo reports), so that the two never differ; the file's text as
 * it is when it already says so.
 * @throws when the package root is unknown or schema.json cannot be read or is not JSON.
 */
export function schemaText(): string {
  if (packageRoot === undefined) throw new Error("schema.json not found: the package's root is unknown");
  const text = readFileSync(join(packageRoot, "schema.json"), "utf8");
  const schema = JSON.parse(text) as { version?: unknown };
  if (schema.version === packageVersion) return text;
  return `${JSON.stringify({ ...schema, version: packageVersion }, null, 2)}\n`;
}

/**
 * A client for a lookup of `run`: the connection settings of the provider (its Configure: `apiKey`, `host`,
 * `organizationId`, `projectId`), else the environment, as the SDK's lookups take them.
 */
function lookupClient(run: Run): PostHogClient {
  const options: Record<string, string> = {};
  for (const k of ["apiKey", "host", "organizationId", "projectId"] as const) {
    const v = run.clients.config?.get(`posthog:${k}`);
    if (v !== undefined) options[k] = v;
  }
  return createClient({ ...options, shared: run.clients.shared });
}

/** Outputs as they go back to the engine: the properties that came in secret, and the always-secret outputs, wrapped. */
function outputsFor(
  name: ResourceName,
  outs: Record<string, unknown> | undefined,
  secret: Set<string>,
): Record<string, unknown> {
  return conceal(outs, [...secret, ...(SECRET_OUTPUTS[name] ?? [])]);
}

/** The plugin's provider: `@pulumi/pulumi/provider`'s `Provider`, and the settings of its Configure. */
export interface PluginProvider extends provider.Provider {
  /**
   * Hands the run the provider's settings (plugin/main.ts calls it with the Configure request's: {@link
   * configFromRequest}). No request.
   */
  configure(config: ConfigGetter): Promise<void>;
}

/**
 * The call of an operation of `run` on the resource of `urn`: its name and `<project>/<stack>` from the URN. The
 * protocol tells a provider nothing of a preview: never a preview, and `check` proves the settings reach PostHog in
 * every run (one GET per run, which `up` makes anyway).
 */
function callOf(run: Run, urn: string, importing?: boolean): Call {
  const { project, stack, name } = parseUrn(urn);
  return {
    run,
    resource: { name, stack: `${project}/${stack}` },
    preview: false,
    prove: true,
    importing: importing ? { name } : undefined,
    refused: undefined,
  };
}

/**
 * Props the plugin hands an operation: `props` without secret envelopes, and without the in-band `__resource` that
 * state written by earlier versions of the plugin holds (it named the resource, which the URN names now).
 */
function propsOf(props: unknown): Record<string, unknown> {
  const { __resource: _, ...rest } = (reveal(props ?? {}) ?? {}) as Record<string, unknown>;
  return rest;
}

/**
 * `result` with the `__resource` of the stored `props` (state of earlier versions), as it is, so that a refresh of
 * such state changes no property of its own.
 */
function keptFrom(
  result: Record<string, unknown> | undefined,
  props: unknown,
): Record<string, unknown> | undefined {
  const kept = (props as Record<string, unknown> | undefined)?.__resource;
  return kept === undefined || result === undefined ? result : { ...result, __resource: kept };
}

/**
 * The read of the resource of `urn`, object `id`: a refresh's of the stored outputs `props`, or (`props` undefined)
 * `pulumi import`'s of import id `id` ({@link importTarget}).
 * @throws naming the import id when `pulumi import`'s project does not exist; the read's errors
 */
async function readOf(
  run: Run,
  urn: string,
  id: string,
  props: unknown,
): Promise<Awaited<ReturnType<Operations["read"]>>> {
  const { name, operations } = providerOf(parseUrn(urn).type);
  const importing = props === undefined;
  const target = importing ? importTarget(name, id) : { id, props: propsOf(props) };
  try {
    return await operations.read(
      callOf(run, urn, importing),
      target.id,
      target.props as Record<string, unknown>,
    );
  } catch (e) {
    const project = (target.props as { projectId?: string }).projectId;
    const noProject =
      importing &&
      project !== undefined &&
      e instanceof NotFoundError &&
      e.missing === "project" &&
      e.path.includes(`/projects/${project}/`);
    if (noProject) throw missingOnImport(name, id, project);
    throw e;
  }
}

/**
 * The plugin's resource provider (`@pulumi/pulumi/provider`'s `Provider`, with `configure`): each method finds the
 * resource's operations from the URN's type token and calls them with the call the URN gives and the secrets
 * unwrapped. One run per provider (the engine starts one plugin per deployment).
 */
export function pluginProvider(): PluginProvider {
  const run = newRun(RESOURCES);
  return {
    version: packageVersion,
    getSchema: async () => schemaText(),
    async configure(config) {
      configureRun(run, config);
    },

    async check(urn, olds, news) {
      const { operations } = providerOf(parseUrn(urn).type);
      const r = await operations.check(callOf(run, urn), propsOf(olds), propsOf(news));
      return { ...r, inputs: conceal(r.inputs as Record<string, unknown>, secretKeys(news)) };
    },

    async diff(id, urn, olds, news) {
      const { operations } = providerOf(parseUrn(urn).type);
      return operations.diff(callOf(run, urn), id, propsOf(olds), propsOf(news));
    },

    async create(urn, inputs) {
      const { name, operations } = providerOf(parseUrn(urn).type);
      const r = await operations.create(callOf(run, urn), propsOf(inputs));
      return { id: r.id, outs: outputsFor(name, r.outs, secretKeys(inputs)) };
    },

    async read(id, urn, props) {
      const { name } = providerOf(parseUrn(urn).type);
      // `pulumi import` reads with no outputs and the import id: an object PostHog says is not there fails the
      // import naming it (the engine would record nothing, or read empty outputs as "provider does not support
      // importing resources"); a resource of the state whose object is gone is dropped by refresh (`id: ""`). The
      // import claims the object for the resource the URN names: two entries importing one object fail naming both.
      const importing = props === undefined || props === null || Object.keys(props).length === 0;
      const read = await readOf(run, urn, id, importing ? undefined : props);
      if (!read.id) {
        if (importing) throw missingOnImport(name, id);
        return { id: "", props: {} };
      }
      const secret = secretKeys(props);
      const live = { outs: keptFrom(read.props, props) ?? {}, inputs: keptFrom(read.inputs, props) };
      const found = importing && live.inputs ? withImportDefaults(name, live.outs, live.inputs) : live;
      return {
        id: read.id,
        props: outputsFor(name, found.outs, secret),
        ...(found.inputs ? { inputs: conceal(found.inputs, secret) } : {}),
      };
    },

    async update(id, urn, olds, news) {
      const { name, operations } = providerOf(parseUrn(urn).type);
      const r = await operations.update(callOf(run, urn), id, propsOf(olds), propsOf(news));
      return { outs: outputsFor(name, r.outs, new Set([...secretKeys(olds), ...secretKeys(news)])) };
    },

    async delete(id, urn, props) {
      const { operations } = providerOf(parseUrn(urn).type);
      await operations.delete(callOf(run, urn), id, propsOf(props));
    },

    async invoke(token, inputs) {
      const name = token.startsWith(`${PACKAGE}:index:`) ? token.slice(`${PACKAGE}:index:`.length) : token;
      const lookup: Lookup<unknown, unknown> | undefined = (
        LOOKUPS as Record<string, Lookup<unknown, unknown>>
      )[name];
      if (!lookup) {
        throw new Error(
          `the posthog plugin has no function ${token}; it serves ${Object.keys(LOOKUPS).map(typeToken).join(", ")}`,
        );
      }
      const secret = secretKeys(inputs);
      let result: Record<string, unknown>;
      try {
        // Checked before any request (a failure names the argument), then read; a list is an object's key (an
        // invoke's result is an object), as under the SDK's mocks.
        const args = lookup.check(reveal(inputs ?? {}));
        const value = await lookup.run(lookupClient(run), args);
        result = (lookup.listKey === undefined ? value : { [lookup.listKey]: value }) as Record<
          string,
          unknown
        >;
      } catch (e) {
        // Arguments refused before any request: check failures naming the argument, as a resource's check.
        if (e instanceof InvalidInputError)
          return { failures: [{ property: e.property, reason: e.message }] };
        throw e;
      }
      const plain = JSON.parse(JSON.stringify(result)) as Record<string, unknown>;
      // A result of secret arguments is secret as a whole (as the SDK's Output form makes it).
      if (secret.size > 0) return { outputs: conceal(plain, Object.keys(plain)) };
      return { outputs: conceal(plain, lookup.secret ?? []) };
    },
  };
}
