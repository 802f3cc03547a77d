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

/**
 * Parses a Pulumi property path (`a`, `a.b`, `a[0]`, `a["b.c"]`) into its keys and indices, as
 * `resource.ParsePropertyPath` (sdk/go/common/resource/properties_path.go) does. The wildcard `*` is not
 * supported by this stand-in.
 * @throws Error naming the path when it is malformed.
 */
export function parsePropertyPath(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  let i = 0;
  const bad = () => new Error(`ignoreChanges: malformed property path ${JSON.stringify(path)}`);
  while (i < path.length) {
    if (path[i] === "[") {
      const close = path.indexOf("]", i);
      if (close < 0) throw bad();
      const inner = path.slice(i + 1, close);
      if (/^\d+$/.test(inner)) out.push(Number(inner));
      else if (/^"(?:[^"\\]|\\.)*"$/.test(inner)) out.push(JSON.parse(inner) as string);
      else throw bad();
      i = close + 1;
      if (path[i] === ".") i += 1;
      continue;
    }
    let j = i;
    while (j < path.length && path[j] !== "." && path[j] !== "[") j += 1;
    const key = path.slice(i, j);
    if (key === "" || key === "*") throw bad();
    out.push(key);
    i = path[j] === "." ? j + 1 : j;
  }
  if (out.length === 0) throw bad();
  return out;
}

function getPath(v: Json | undefined, path: (string | number)[]): { found: boolean; value?: Json } {
  let cur: Json | undefined = v;
  for (const k of path) {
    if (typeof k === "number") {
      if (!Array.isArray(cur) || k >= cur.length) return { found: false };
      cur = cur[k];
    } else {
      if (!isRecord(cur) || !Object.hasOwn(cur, k)) return { found: false };
      cur = (cur as Record<string, Json>)[k];
    }
  }
  return { found: true, ...(cur === undefined ? {} : { value: cur }) };
}

/** A copy of `v` with the value at `path` set (`value` given) or removed (`value` undefined). */
function setPath(v: Json | undefined, path: (string | number)[], value: Json | undefined): Json | undefined {
  const [k, ...rest] = path;
  if (k === undefined) return value;
  if (typeof k === "number") {
    if (!Array.isArray(v) || k > v.length) return v;
    const copy = [...v];
    const inner = setPath(copy[k], rest, value);
    if (inner === undefined && rest.length === 0) copy.splice(k, 1);
    else if (inner !== undefined) copy[k] = inner;
    return copy;
  }
  if (!isRecord(v)) return rest.length === 0 && value !== undefined ? { [k]: value } : v;
  const copy = { ...(v as Record<string, Json>) };
  const inner = setPath(copy[k], rest, value);
  if (inner === undefined) delete copy[k];
  else copy[k] = inner;
  return copy;
}

/**
 * Applies the `ignoreChanges` resource option as the engine does (`processIgnoreChanges`,
 * pkg/resource/deploy/step_generator.go, and `PropertyPath.Reset`, sdk/go/common/resource/properties_path.go):
 * for each path, the new inputs take the old inputs' value there, and a path absent from the old inputs is
 * removed from the new ones.
 * @throws Error for a malformed path.
 */
export function applyIgnoreChanges(oldInputs: Props, news: Props, paths: readonly string[]): Props {
  let out: Json | undefined = news;
  for (const p of paths) {
    const path = parsePropertyPath(p);
    const old = getPath(oldInputs, path);
    out = setPath(out, path, old.found ? old.value : undefined);
  }
  return (out ?? {}) as Props;
}

/**
 * Milliseconds of a Go duration string as `customTimeouts` takes it (`"90s"`, `"5m"`, `"1h30m"`, `"1.5h"`);
 * undefined for "" (no timeout).
 * @throws Error naming the value when it is not a duration.
 */
export function durationMs(text: string): number | undefined {
  if (text === "") return undefined;
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1e3, m: 6e4, h: 3.6e6 };
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let end = 0;
  for (const m of text.matchAll(re)) {
    total += Number(m[1]) * (units[m[2] ?? ""] ?? 0);
    end = (m.index ?? 0) + m[0].length;
  }
  if (end !== text.length || end === 0)
    throw new Error(`customTimeouts: ${JSON.stringify(text)} is not a duration such as "90s" or "5m"`);
  return total;
}
