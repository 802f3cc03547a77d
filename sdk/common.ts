/** Helpers shared by the SDK resource classes. */
import type * as pulumi from "@pulumi/pulumi";

/** Resource args: each input of `T` (a `z.input` of the provider's inputs schema) may be a `pulumi.Input`. */
export type Args<T> = { [K in keyof T]: pulumi.Input<T[K]> };

/** The Pulumi module of every type token: `pulumi-nodejs:dynamic/posthog:<Name>`. */
export const MODULE = "posthog";

/** Options with `additionalSecretOutputs` extended by `names` (secret outputs are encrypted in state). */
export function withSecretOutputs(
  opts: pulumi.CustomResourceOptions | undefined,
  names: readonly string[],
): pulumi.CustomResourceOptions {
  return { ...opts, additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), ...names] };
}

/** `{key: undefined}` for each output-only key, so they are registered as outputs of the resource. */
export function outputKeys(keys: readonly string[]): Record<string, undefined> {
  return Object.fromEntries(keys.map((k) => [k, undefined]));
}
