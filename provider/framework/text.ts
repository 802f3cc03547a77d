/**
 * Text PostHog refuses, found with no request and without zod (the SDK runs it in the program, where a lone
 * surrogate is still visible: Pulumi's gRPC encoding drops a lone high surrogate followed by another character
 * before the provider sees it), and the provider's `check` (for everything else, e.g. the text of template JSON
 * given as a string, parsed there).
 */
import { docsLink } from "../client/docs-link";

/**
 * Pulumi's marker for a value not known during preview (not checked: it is no text of the user's). values.ts `UNKNOWN`
 * is the same marker; this module keeps its own copy because the SDK loads it in the program, without zod.
 */
const UNKNOWN_VALUE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/**
 * The deepest nesting of objects and arrays an input value may have: 511 levels (the value itself is level 1).
 * PostHog parses request bodies with Python's `json`, which fails past its recursion limit (1,000 frames, the
 * request's own included) with an error that is no 400; the emulator refuses bodies nested deeper than 512
 * levels (`MAX_JSON_DEPTH`, a 400 `parse_error`), and every input travels one level down in its body
 * (`{"template": <templateJson>}`, `{"name": …}`).
 */
export const MAX_INPUT_DEPTH = 511;

/** Why PostHog refuses `text` (a NUL character or a lone UTF-16 surrogate), else undefined. */
function textProblem(text: string): string | undefined {
  const nul = text.indexOf("\u0000");
  if (nul >= 0) {
    return (
      `contains a NUL character (U+0000) at position ${nul}, which PostHog refuses ("Null characters are not ` +
      `allowed."): remove it`
    );
  }
  // With the `u` flag a surrogate pair is one code point: only a lone surrogate is of category Cs.
  const lone = /\p{Cs}/u.exec(text);
  if (lone) {
    const code = (lone[0].codePointAt(0) ?? 0).toString(16).toUpperCase();
    return (
      `contains a lone surrogate U+${code} at position ${lone.index} (half of a UTF-16 pair, not a character), ` +
      `which PostHog refuses ("Surrogate characters are not allowed."): remove it or complete the pair`
    );
  }
  return undefined;
}

/**
 * Check failures for text PostHog refuses anywhere in the inputs: NUL characters and lone UTF-16 surrogates in
 * any string (names, descriptions, tags, e-mail addresses, the text and the keys inside template JSON), and
 * values nested deeper than {@link MAX_INPUT_DEPTH} levels. Each failure names the property by its path
 * (`templateJson.tiles.0.name`; a refused key: the path to it) and says what to change; at most one per top-level
 * property. Values unknown during a preview are skipped. No HTTP request; iterative, so any depth is safe.
 */
export function refusedText(inputs: Record<string, unknown>): { property: string; reason: string }[] {
  return textFailures(inputs).map((f) => ({
    property: f.property,
    reason: `${f.reason}${docsLink("troubleshooting/input-validation.md", "nul-characters-lone-surrogates-nesting-too-deep")}`,
  }));
}

/** {@link refusedText} without the pointer to the docs. */
function textFailures(inputs: Record<string, unknown>): { property: string; reason: string }[] {
  const out: { property: string; reason: string }[] = [];
  for (const [key, value] of Object.entries(inputs)) {
    const stack: [unknown, string, number][] = [[value, key, 1]];
    for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
      const [v, path, depth] = item;
      if (typeof v === "string") {
        const problem = v === UNKNOWN_VALUE ? undefined : textProblem(v);
        if (problem) {
          out.push({ property: path, reason: problem });
          break;
        }
        continue;
      }
      if (v === null || typeof v !== "object") continue;
      if (depth > MAX_INPUT_DEPTH) {
        out.push({
          property: key,
          reason:
            `nested deeper than PostHog accepts: ${path} is at level ${depth}, and a value may nest at most ` +
            `${MAX_INPUT_DEPTH} levels of objects and arrays (PostHog's JSON parser fails past its recursion ` +
            `limit): flatten it`,
        });
        break;
      }
      const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
      let keyProblem: { property: string; reason: string } | undefined;
      for (const [k, child] of entries) {
        const problem = Array.isArray(v) ? undefined : textProblem(k);
        if (problem) {
          keyProblem = { property: `${path}.${JSON.stringify(k)}`, reason: `the key ${problem}` };
          break;
        }
        stack.push([child, `${path}.${k}`, depth + 1]);
      }
      if (keyProblem) {
        out.push(keyProblem);
        break;
      }
    }
  }
  return out;
}

/** A check failure: the property (a dot path) and what to change. */
export interface TextFailure {
  property: string;
  reason: string;
}

/**
 * The failures the SDK found in the program (`__resource.refused`, from {@link refusedText} on the inputs known
 * there) added to `found`, one per property: the provider cannot see a lone high surrogate the gRPC encoding
 * dropped. Anything that is not a list of `{property, reason}` strings counts as nothing.
 */
export function withProgramText(found: TextFailure[], fromProgram: unknown): TextFailure[] {
  if (!Array.isArray(fromProgram)) return found;
  const out = [...found];
  for (const f of fromProgram.slice(0, 100)) {
    const { property, reason } = (f ?? {}) as Partial<TextFailure>;
    if (typeof property !== "string" || typeof reason !== "string") continue;
    if (!out.some((x) => x.property === property)) out.push({ property, reason });
  }
  return out;
}

/**
 * A copy of `v` with every lone UTF-16 surrogate of its strings and keys replaced by U+FFFD, so it can cross
 * Pulumi's gRPC (protobuf refuses a string that is not UTF-8, and the engine then fails naming no property).
 * Objects for which `opaque` is true (e.g. a Pulumi `Output`) are kept as they are. For failed checks only: text
 * that had a lone surrogate is refused anyway.
 */
export function wellFormed(v: unknown, opaque: (o: object) => boolean = () => false): unknown {
  if (typeof v === "string") return v.replace(/\p{Cs}/gu, "\uFFFD");
  if (v === null || typeof v !== "object" || opaque(v)) return v;
  if (Array.isArray(v)) return v.map((x) => wellFormed(x, opaque));
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [k.replace(/\p{Cs}/gu, "\uFFFD"), wellFormed(x, opaque)]),
  );
}
