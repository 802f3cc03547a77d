/**
 * Property values as they travel between the Pulumi Node runtime, this stand-in engine and the
 * dynamic-provider host: the wire sentinels for secrets and unknowns, and small pure helpers on them.
 *
 * The sentinels are those of `@pulumi/pulumi/runtime/rpc` (`specialSigKey`, `specialSecretSig`,
 * `unknownValue`); they are part of Pulumi's wire protocol, so they are spelled out here once.
 */

/** Key that marks a special object on the wire (`rpc.specialSigKey`). */
export const SIG_KEY = "4dabf18193072939515e22adb298388d";
/** Value of {@link SIG_KEY} that marks a secret (`rpc.specialSecretSig`). */
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
/** The string the runtime and engine use for a value not known during preview (`rpc.unknownValue`). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Props = Record<string, Json>;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** True for `{[SIG_KEY]: SECRET_SIG, value}`, the wire form of a secret. */
export function isSecret(v: unknown): v is { value: Json } {
  return isRecord(v) && v[SIG_KEY] === SECRET_SIG;
}

/** Wraps a value in the wire form of a secret (idempotent). */
export function secret(v: Json): Json {
  return isSecret(v) ? v : { [SIG_KEY]: SECRET_SIG, value: v };
}

/**
 * Removes every secret wrapper, deep. Returns the plain value and the top-level property names
 * that held a secret anywhere inside them (the engine re-applies secretness per top-level property,
 * as the real engine does for providers that do not accept secrets).
 */
export function unwrapSecrets(props: Props): { plain: Props; secretKeys: string[] } {
  const secretKeys: string[] = [];
  const plain: Props = {};
  for (const [k, v] of Object.entries(props)) {
    let found = false;
    const strip = (x: Json): Json => {
      if (isSecret(x)) {
        found = true;
        return strip(x.value);
      }
      if (Array.isArray(x)) return x.map(strip);
      if (isRecord(x))
        return Object.fromEntries(Object.entries(x).map(([kk, vv]) => [kk, strip(vv as Json)]));
      return x;
    };
    plain[k] = strip(v);
    if (found) secretKeys.push(k);
  }
  return { plain, secretKeys };
}

/** Wraps the named top-level properties as secrets; others unchanged. */
export function wrapSecrets(props: Props, keys: Iterable<string>): Props {
  const out: Props = { ...props };
  for (const k of keys) {
    const v = out[k];
    if (v !== undefined) out[k] = secret(v);
  }
  return out;
}

/** True when the value holds the unknown sentinel anywhere (only during preview). */
export function containsUnknowns(v: unknown): boolean {
  if (v === UNKNOWN) return true;
  if (Array.isArray(v)) return v.some(containsUnknowns);
  if (isRecord(v)) return Object.values(v).some(containsUnknowns);
  return false;
}

/** Structural equality of JSON values; object key order does not matter. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]))
    );
  }
  if (isRecord(a) && isRecord(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/** Top-level property names whose values differ (ignores `__provider`, the serialized provider code). */
export function changedKeys(olds: Props, news: Props): string[] {
  const keys = new Set([...Object.keys(olds), ...Object.keys(news)]);
  keys.delete("__provider");
  return [...keys].filter((k) => !deepEqual(olds[k], news[k])).sort();
}

/** Drops `undefined` values (protobuf Structs cannot hold them) by a JSON round trip. */
export function toJson(v: unknown): Props {
  return JSON.parse(JSON.stringify(v ?? {})) as Props;
}
