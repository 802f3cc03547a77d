/**
 * What the API refuses for its form alone, checked by `check` before any request: the request body size, and
 * time zone names. (Per-field lengths live in each resource's zod schema, next to the field they limit.)
 */
import { z } from "zod";
import { docsLink } from "../client/docs-link";
import { containsUnknown } from "./values";

/**
 * The largest request body the API accepts: 1 MiB (1,048,576 bytes), the limit the emulator enforces
 * (`BODY_LIMIT_BYTES` of `pulumi-posthog/emulator`, answered with a 413 that names no property). The seed documents
 * no size limit.
 */
export const BODY_LIMIT_BYTES = 1024 * 1024;

const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? "null", "utf8");
const wireName = (property: string) => property.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
/**
 * Check failures for request bodies over {@link BODY_LIMIT_BYTES}. `bodies` lists, for each request the
 * resource sends, the input properties that travel in it; the size counted is that of the JSON object of those
 * properties under their wire names, as the client serializes it. The failure names the largest property of
 * the body (the one to shorten). Values unknown during a preview count as nothing.
 */
export function oversizedBodies(
  inputs: Record<string, unknown>,
  bodies: readonly (readonly string[])[],
): { property: string; reason: string }[] {
  const out: { property: string; reason: string }[] = [];
  for (const body of bodies) {
    const sizes = body
      .filter((k) => inputs[k] !== undefined && !containsUnknown(inputs[k]))
      .map((k) => ({ property: k, size: bytes(wireName(k)) + 1 + bytes(inputs[k]) }));
    const total = 2 + sizes.reduce((n, s) => n + s.size, 0) + Math.max(0, sizes.length - 1);
    if (total <= BODY_LIMIT_BYTES) continue;
    const largest = sizes.reduce((a, b) => (b.size > a.size ? b : a));
    if (out.some((f) => f.property === largest.property)) continue;
    out.push({
      property: largest.property,
      reason:
        `too large: it makes the request body ${total.toLocaleString("en-US")} bytes, over the API's limit of ` +
        `${BODY_LIMIT_BYTES.toLocaleString("en-US")} bytes (1 MiB); this property alone is ` +
        `${largest.size.toLocaleString("en-US")} bytes${docsLink("troubleshooting/input-validation.md", "too-large-it-makes-the-request-body")}`,
    });
  }
  return out;
}

/** The canonical IANA names this Node.js knows (its ICU time zone data). */
const canonicalZones = new Set(Intl.supportedValuesOf("timeZone"));

/**
 * Why `tz` is not a time zone name PostHog accepts, or undefined when it is. PostHog accepts the names of the
 * IANA time zone database (`timezone` is a choice among `pytz.all_timezones`), case-sensitively, canonical
 * names and their aliases alike ("Asia/Kolkata" and "Asia/Calcutta", "UTC", "Etc/GMT+5", "US/Eastern"). This
 * Node.js lists only canonical names (`Intl.supportedValuesOf("timeZone")`, where "UTC" and "Asia/Kolkata" are
 * missing); an alias is accepted when its ICU data resolves it, it is a name (not an offset such as "+01:00"),
 * and it is spelled in the database's case.
 */
export function timeZoneProblem(tz: string): string | undefined {
  if (canonicalZones.has(tz)) return undefined;
  const expected =
    'expected an IANA time zone name such as "Europe/Berlin", "America/New_York", "Asia/Kolkata" or "UTC" ' +
    "(case-sensitive)";
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat("en-US", { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return `"${tz}" is not a time zone; ${expected}`;
  }
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(tz) || tz.startsWith("SystemV/")) {
    return `"${tz}" is not an IANA time zone name; ${expected}`;
  }
  if (tz !== resolved && tz.toLowerCase() === resolved.toLowerCase()) {
    return `"${tz}" is not spelled as the IANA name "${resolved}"; ${expected}`;
  }
  if (tz.split("/").some((part) => !/^[A-Z]/.test(part))) {
    return `"${tz}" is not spelled as an IANA name (each part starts with a capital letter); ${expected}`;
  }
  return undefined;
}

/** A time zone input: an IANA time zone name, as PostHog accepts it (see {@link timeZoneProblem}). */
export const TimeZoneInput = z
  .string({ error: "expected an IANA time zone name such as Europe/Berlin" })
  .superRefine((tz, ctx) => {
    const problem = timeZoneProblem(tz);
    if (problem)
      ctx.addIssue({
        code: "custom",
        message: `${problem}${docsLink("troubleshooting/input-validation.md", "time-zones")}`,
      });
  });
