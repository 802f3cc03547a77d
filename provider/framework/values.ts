/**
 * Values as the engine hands them to a provider and takes them back: the marker of a value unknown during preview,
 * deep equality, the JSON-safe copy of outputs, and the property names and check failures of an inputs schema.
 * Plain functions, no state.
 */
import { z } from "zod";
import { docsLink } from "../client/docs-link";

/** Where an unknown property's check failure points. */
const UNKNOWN_PROPERTY_DOCS = docsLink("troubleshooting/input-validation.md", "unknown-property");

/** Pulumi's marker for a value not known during preview (an output of a resource not yet created). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** Deep equality of JSON-like values (object key order does not matter). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  }
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return (
    ka.length === kb.length &&
    ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

/** Whether `v` holds {@link UNKNOWN} at any depth. */
export function containsUnknown(v: unknown): boolean {
  if (v === UNKNOWN) return true;
  if (v && typeof v === "object") return Object.values(v).some(containsUnknown);
  return false;
}

/**
 * A copy of a JSON-like value without `undefined` (protobuf Structs reject it) and without anything JSON
 * would not keep (functions, symbols; `toJSON` is honoured, so a Date becomes its ISO string): what a JSON
 * round trip gives, at a fraction of its cost on the small objects of outputs (bench/run.ts, section a).
 */
export function plain<T>(v: T): T {
  return (jsonValue(v) ?? {}) as T;
}

function jsonValue(v: unknown): unknown {
  if (v === null) return null;
  if (typeof v !== "object") {
    if (typeof v === "number") return Number.isFinite(v) ? v + 0 : null; // + 0 turns -0 into 0, as JSON does
    return typeof v === "string" || typeof v === "boolean" ? v : undefined;
  }
  if (typeof (v as { toJSON?: unknown }).toJSON === "function") {
    return jsonValue((v as { toJSON(): unknown }).toJSON());
  }
  if (Array.isArray(v)) return v.map((x) => jsonValue(x) ?? null);
  const out: Record<string, unknown> = {};
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    const x = jsonValue((v as Record<string, unknown>)[k]);
    if (x !== undefined) out[k] = x;
  }
  return out;
}

/**
 * The property schemas of an object schema (through pipes: a refined or transformed object), or {} when it is
 * not an object schema. Uses zod's public classes (`ZodObject.shape`, `ZodPipe.in`).
 */
export function shapeOf(schema: z.ZodType): Record<string, z.ZodType> {
  let s: z.ZodType = schema;
  for (let i = 0; i < 10; i++) {
    if (s instanceof z.ZodObject) return s.shape as Record<string, z.ZodType>;
    if (s instanceof z.ZodPipe) s = s.in as z.ZodType;
    else break;
  }
  return {};
}

/** The property names of an object schema (for messages and for picking inputs out of outputs). */
export function inputKeys(schema: z.ZodType): string[] {
  return Object.keys(shapeOf(schema));
}

/**
 * Turns zod issues into Pulumi check failures, each naming a property. Unknown properties get one failure
 * each, listing the accepted ones; root-level issues are attributed to the first property they mention.
 */
export function failuresOf(
  error: z.ZodError,
  accepted: readonly string[],
): { property: string; reason: string }[] {
  const out: { property: string; reason: string }[] = [];
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        out.push({
          property: key === "" ? '""' : key,
          reason: `unknown property; accepted properties: ${accepted.join(", ")}${UNKNOWN_PROPERTY_DOCS}`,
        });
      }
      continue;
    }
    const property = issue.path.map(String).join(".") || accepted[0] || "(inputs)";
    out.push({ property, reason: issue.message });
  }
  return out;
}
