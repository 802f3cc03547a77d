/**
 * The provider plugin's adapter: the nine resources of `provider/resources` served over Pulumi's provider protocol
 * (type tokens `posthog:index:<Name>`), by the very providers the dynamic SDK's `__provider` shims call
 * (`provider/index.ts`, built by `defineResource`). One implementation per resource; this module and the SDK's
 * shim are the two thin adapters in front of it.
 *
 * What the adapter adds to the dynamic providers' methods:
 * - the resource's type and name come from the URN (the dynamic SDK passes them as `__resource`): `check` adds
 *   `__resource: {name, stack: "<project>/<stack>"}`, so claims (two resources, one object) and the create journal
 *   work as they do for the SDK;
 * - secrets: the engine sends secret values wrapped (`{"4dabf1…": "1b47…", value}`, the plugin accepts secrets);
 *   they are unwrapped before the resource's code sees them, and the properties that were secret, and the outputs
 *   that are always secret ({@link SECRET_OUTPUTS}), are wrapped again in what goes back to the engine;
 * - configuration: `posthog:host`, `posthog:apiKey`, `posthog:organizationId`, `posthog:projectId` and the tuning
 *   settings reach the providers' `configure` as the stack config does under the dynamic host
 *   ({@link configFromRequest}); unset ones fall back to the same environment variables (`POSTHOG_API_KEY`, …).
 *
 * In a preview the protocol tells `check` nothing of the preview (the SDK passes `__resource.preview`): a preview
 * through the plugin proves the settings' form, not that they reach PostHog, and announces no adoption.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import type * as provider from "@pulumi/pulumi/provider";
import type { LookupOptions } from "../../sdk/lookup-types";
import {
  getBatchExports,
  getDashboard,
  getDashboardAccessControls,
  getDashboardSharing,
  getMember,
  getProject,
} from "../../sdk/lookups";
import { InvalidInputError } from "../client/errors";
import {
  BatchExportPause,
  Dashboard,
  DashboardCollaborator,
  DashboardSharing,
  Domain,
  DomainVerification,
  Invite,
  Member,
  Project,
  type ResourceName,
  resourceNames,
} from "../index";
import type { Provider as DynamicProvider } from "../lifecycle";
import { packageRoot, packageVersion } from "../version";

/** The Pulumi package name of the plugin and its schema. */
export const PACKAGE = "posthog";

/** The engine's mark of a secret value in a property map, and the value of that mark. */
export const SECRET_SIG = "4dabf18193072939515e22adb298388d";
const SECRET_VALUE = "1b47061264138c4ac30d75fd1eb44270";

/** Outputs that are secret whatever the inputs (as the SDK classes' `additionalSecretOutputs`). */
export const SECRET_OUTPUTS: Readonly<Partial<Record<ResourceName, readonly string[]>>> = {
  Project: ["apiToken", "liveEventsToken"],
  DashboardSharing: ["accessToken"],
};

/** The provider of each resource (exports of provider/index.ts, what the SDK's `__provider` shims call). */
const PROVIDERS: Readonly<Record<ResourceName, DynamicProvider>> = {
  BatchExportPause,
  Dashboard,
  DashboardCollaborator,
  DashboardSharing,
  Domain,
  DomainVerification,
  Invite,
  Member,
  Project,
};

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

/** The dynamic provider serving type token `type`, or an error naming the tokens this plugin serves. */
export function providerOf(type: string): { name: ResourceName; provider: DynamicProvider } {
  const name = resourceNames.find((n) => typeToken(n) === type);
  if (name === undefined) {
    throw new Error(
      `the posthog plugin has no resource type ${type}; it serves ${resourceNames.map(typeToken).join(", ")}`,
    );
  }
  return { name, provider: PROVIDERS[name] };
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

/** The settings the last Configure gave (the lookups' connection options come from them). */
let configured: ConfigGetter | undefined;

/**
 * Hands the provider settings to the resources' providers: the settings and clients are the process's, shared by
 * every provider `defineResource` built (provider/lifecycle.ts), so one `configure` serves all nine.
 */
export async function configure(config: ConfigGetter): Promise<void> {
  configured = config;
  await Project.configure({ config } as unknown as pulumi.dynamic.ConfigureRequest);
}

/** The package schema (schema.json at the package root), as text. */
export function schemaText(): string {
  if (packageRoot === undefined) throw new Error("schema.json not found: the package's root is unknown");
  return readFileSync(join(packageRoot, "schema.json"), "utf8");
}

/**
 * The lookups the plugin serves as functions (`posthog:index:<name>`), each the SDK's own (sdk/lookups.ts: its
 * argument checks, its requests), and the result fields that carry tokens (returned as secrets). Results are
 * objects: `getBatchExports` returns `{batchExports: [...]}` (as its mock invoke does).
 */
export const LOOKUPS: Readonly<
  Record<string, { run: (args: never, options: LookupOptions) => Promise<unknown>; secret?: string[] }>
> = {
  getMember: { run: getMember },
  getProject: { run: getProject, secret: ["api_token"] },
  getDashboard: { run: getDashboard },
  getDashboardSharing: { run: getDashboardSharing, secret: ["access_token"] },
  getDashboardAccessControls: { run: getDashboardAccessControls },
  getBatchExports: { run: async (a: never, o) => ({ batchExports: await getBatchExports(a, o) }) },
};

/** The connection options of a lookup: the provider's settings ({@link configure}); the environment otherwise. */
function lookupOptions(): LookupOptions {
  const options: Record<string, string> = {};
  for (const k of ["apiKey", "host", "organizationId", "projectId"] as const) {
    const v = configured?.get(`posthog:${k}`);
    if (v !== undefined) options[k] = v;
  }
  return options as LookupOptions;
}

/** Outputs as they go back to the engine: the properties that came in secret, and the always-secret outputs, wrapped. */
function outputsFor(
  name: ResourceName,
  outs: Record<string, unknown> | undefined,
  secret: Set<string>,
): Record<string, unknown> {
  return conceal(outs, [...secret, ...(SECRET_OUTPUTS[name] ?? [])]);
}

/**
 * The plugin's resource provider (`@pulumi/pulumi/provider`'s `Provider`): each method finds the resource's dynamic
 * provider from the URN's type token and calls it with the secrets unwrapped.
 */
export function pluginProvider(): provider.Provider {
  return {
    version: packageVersion,
    getSchema: async () => schemaText(),

    async check(urn, olds, news) {
      const { project, stack, type, name } = parseUrn(urn);
      const p = providerOf(type).provider;
      const secret = secretKeys(news);
      const given = reveal(news) as Record<string, unknown>;
      const r = await p.check(reveal(olds ?? {}), {
        ...given,
        __resource: { name, stack: `${project}/${stack}` },
      });
      return { ...r, inputs: conceal(r.inputs as Record<string, unknown>, secret) };
    },

    async diff(id, urn, olds, news) {
      const { provider: p } = providerOf(parseUrn(urn).type);
      return p.diff(id, reveal(olds), reveal(news));
    },

    async create(urn, inputs) {
      const { name, provider: p } = providerOf(parseUrn(urn).type);
      const r = await p.create(reveal(inputs));
      return { id: r.id, outs: outputsFor(name, r.outs, secretKeys(inputs)) };
    },

    async read(id, urn, props) {
      const { name, provider: p } = providerOf(parseUrn(urn).type);
      const secret = secretKeys(props);
      const r = await p.read(id, reveal(props ?? {}));
      if (!r.id) return { id: "", props: {} };
      return {
        id: r.id,
        props: outputsFor(name, r.props, secret),
        ...(r.inputs ? { inputs: conceal(r.inputs, secret) } : {}),
      };
    },

    async update(id, urn, olds, news) {
      const { name, provider: p } = providerOf(parseUrn(urn).type);
      const r = await p.update(id, reveal(olds), reveal(news));
      return { outs: outputsFor(name, r.outs, new Set([...secretKeys(olds), ...secretKeys(news)])) };
    },

    async delete(id, urn, props) {
      const { provider: p } = providerOf(parseUrn(urn).type);
      await p.delete(id, reveal(props));
    },

    async invoke(token, inputs) {
      const name = token.startsWith(`${PACKAGE}:index:`) ? token.slice(`${PACKAGE}:index:`.length) : token;
      const lookup = LOOKUPS[name];
      if (!lookup) {
        throw new Error(
          `the posthog plugin has no function ${token}; it serves ${Object.keys(LOOKUPS).map(typeToken).join(", ")}`,
        );
      }
      const secret = secretKeys(inputs);
      let result: Record<string, unknown>;
      try {
        result = (await lookup.run(reveal(inputs ?? {}) as never, lookupOptions())) as Record<
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
