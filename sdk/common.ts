/** Helpers shared by the SDK resource classes. */
import * as pulumi from "@pulumi/pulumi";
import { refusedText, type TextFailure, wellFormed } from "../provider/framework/text";
import { OUTPUT_KEYS } from "./output-keys";

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

/** `{key: undefined}` for each of `kind`'s {@link OUTPUT_KEYS}, so they are registered as outputs of the resource. */
export function outputKeys(kind: keyof typeof OUTPUT_KEYS): Record<string, undefined> {
  return Object.fromEntries(OUTPUT_KEYS[kind].map((k) => [k, undefined]));
}

/**
 * `{__resource: {name, stack}}`: the resource's Pulumi name and `<project>/<stack>`, for the provider's `check`,
 * which takes it out of the inputs it returns (it never reaches the state). The dynamic-provider interface passes
 * no URN: the name lets two resources of one program that manage the same object fail naming both
 * (provider/framework/claims.ts), and with the stack it keys the create journal (provider/framework/create-journal.ts), so one stack
 * never adopts what a create of another stack made. One property, not two: Pulumi's runtime spends ~0.6 ms of
 * the program's CPU per declared property of every resource (four promises, each with a stack trace).
 *
 * Also, for the provider's `check`: `preview: true` in a preview (`pulumi.runtime.isDryRun()`), so a preview that
 * changes something proves the settings reach PostHog and says what it will adopt (provider/framework/lifecycle.ts,
 * provider/framework/adoption.ts); and `refused`, the text PostHog refuses found in the inputs (`args`) known now
 * (provider/framework/text.ts: NUL characters, lone UTF-16 surrogates, nesting too deep), which `check` reports as check
 * failures naming the property. The program is the one place a lone high surrogate followed by another character
 * is still visible: Pulumi's gRPC encoding drops it on the way to the provider, which would then store the text
 * without it. Inputs that are outputs of other resources are checked by `check` alone. Warns once when
 * `posthog:apiKey` is plain stack config ({@link warnPlainApiKey}). No request.
 */
export function named(
  name: string,
  args?: object,
): { __resource: { name: string; stack: string; preview?: true; refused?: TextFailure[] } } & Record<
  string,
  unknown
> {
  warnPlainApiKey();
  const resource: { name: string; stack: string; preview?: true; refused?: TextFailure[] } = {
    name,
    stack: `${pulumi.getProject()}/${pulumi.getStack()}`,
  };
  if (pulumi.runtime.isDryRun()) resource.preview = true;
  const refused = args === undefined ? [] : refusedText(knownNow(args) as Record<string, unknown>);
  if (refused.length === 0) return { __resource: resource };
  resource.refused = refused;
  // A lone surrogate would fail the registration itself (the engine refuses a string that is not UTF-8, naming no
  // property) or be dropped on the way: the properties holding one go with U+FFFD instead, and check fails on
  // `refused`, so nothing of them is ever sent to PostHog.
  const replaced: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args ?? {}))
    if (hasLoneSurrogate(knownNow(v))) replaced[k] = wellFormed(v, (o) => knownNow(o) === undefined);
  return { ...replaced, __resource: resource };
}

const LONE_SURROGATE = /\p{Cs}/u;

/** Whether a known value holds a lone UTF-16 surrogate in a string or a key. */
function hasLoneSurrogate(v: unknown): boolean {
  if (typeof v === "string") return LONE_SURROGATE.test(v);
  if (v === null || typeof v !== "object") return false;
  return Object.entries(v).some(([k, x]) => LONE_SURROGATE.test(k) || hasLoneSurrogate(x));
}

/**
 * The value as far as the program knows it now: strings, numbers, lists and objects as they are; an `Output`, a
 * promise or a resource (known later, or not text) as undefined.
 */
function knownNow(v: unknown): unknown {
  if (v === null || typeof v !== "object") return v;
  if (
    pulumi.Output.isInstance(v) ||
    pulumi.Resource.isInstance(v) ||
    typeof (v as { then?: unknown }).then === "function"
  )
    return undefined;
  if (Array.isArray(v)) return v.map(knownNow);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, knownNow(x)]));
}

/** Whether {@link warnPlainApiKey} has looked at this program's config (it warns once per program run). */
let keyLooked = false;

/**
 * Whether the stack config `key` is a secret (`pulumi config set --secret`): the Node runtime's own test
 * (`isConfigSecret`, which reads the secret keys the language host hands the program), else the same list read
 * from `PULUMI_CONFIG_SECRET_KEYS`.
 */
function isSecretConfig(key: string): boolean {
  const own = (pulumi.runtime as unknown as { isConfigSecret?: (k: string) => boolean }).isConfigSecret;
  if (typeof own === "function") return own(key);
  try {
    const keys: unknown = JSON.parse(process.env.PULUMI_CONFIG_SECRET_KEYS ?? "[]");
    return Array.isArray(keys) && keys.includes(key);
  } catch {
    return false;
  }
}

/**
 * Warns once per program run, as a warning of the preview or update (`pulumi.log.warn`), when the stack config
 * `posthog:apiKey` is set in plain text (`pulumi config set posthog:apiKey …` without `--secret`): the key is
 * then readable by anyone who can read the stack's settings file, and the engine records the whole stack config as
 * the inputs of the default provider (`pulumi:providers:pulumi-nodejs`) in the state and in its events, in clear
 * (secret values encrypted). The warning names the fix (`pulumi config set --secret`; the next `up` rewrites that
 * record encrypted). The provider itself never writes the key anywhere: it reads it in the provider host, at
 * `configure`, which gets the same string for a plain or a secret value (the host unwraps secrets). The key's
 * value is never part of the message. No request.
 */
export function warnPlainApiKey(): void {
  if (keyLooked) return;
  keyLooked = true;
  const key = "posthog:apiKey";
  if (pulumi.runtime.getConfig(key) === undefined || isSecretConfig(key)) return;
  void pulumi.log.warn(
    `${key} is set in plain text in the stack settings (Pulumi.${pulumi.getStack()}.yaml): anyone who can read ` +
      "that file can use the key, and the engine also records the stack config in the stack's state (as the " +
      "inputs of its default provider), in clear. Make it a secret: " +
      `\`pulumi config set --secret ${key} <your key>\`; the next \`pulumi up\` then stores it encrypted. ` +
      "Revoke the key in PostHog if the file or the state was shared.",
  );
}
