/** Helpers shared by the SDK resource classes. */
import * as pulumi from "@pulumi/pulumi";

/**
 * Each input of `T` (a `z.input` of a provider's inputs schema) as a `pulumi.Input`. The SDK's Args types are
 * generated (sdk/args.ts, with each property's documentation); test/docs/args-match.test.ts proves each one
 * mutually assignable with `Args<z.input<typeof Schema>>`, so the two cannot drift.
 */
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

/**
 * `{__resource: {name, stack}}`: the resource's Pulumi name and `<project>/<stack>`, for the provider's `check`,
 * which takes it out of the inputs it returns (it never reaches the state). The dynamic-provider interface passes
 * no URN: the name lets two resources of one program that manage the same object fail naming both
 * (provider/claims.ts), and with the stack it keys the create journal (provider/create-journal.ts), so one stack
 * never adopts what a create of another stack made. One property, not two: Pulumi's runtime spends ~0.6 ms of
 * the program's CPU per declared property of every resource (four promises, each with a stack trace).
 */
export function named(name: string): { __resource: { name: string; stack: string } } {
  return { __resource: { name, stack: `${pulumi.getProject()}/${pulumi.getStack()}` } };
}
