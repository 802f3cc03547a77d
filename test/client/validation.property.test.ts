/**
 * `acceptsUnchanged`, the predicate that lets `parseResponse` and `parseBody` return a body without running
 * zod: for every response and request-body schema of the client (and its page wrapper), on generated bodies
 * that are mostly well-formed with random defects at any depth, it says yes only when zod accepts the body
 * and gives it back unchanged, and says no to a body zod accepts only when zod changes it (drops a
 * `__proto__` key). Bodies go through a JSON round trip first, as responses do.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as client from "../../provider/client";
import { acceptsUnchanged, pageSchema, zodDef } from "../../provider/client/common";

/** Values that trip validators: unsafe integers, -0, empty and long strings, a `__proto__` key. */
const oddValue = fc.constantFrom<unknown>(2 ** 60, -0, 1.5, -1, 0, "", "x".repeat(500), [], {}, null, true);
const double = fc.double({ noDefaultInfinity: true, noNaN: true });
const defect = fc.oneof(fc.jsonValue({ maxDepth: 2 }), oddValue, double);

/** Bodies shaped by `schema`, with a defect (a random JSON value) in place of a node now and then. */
function bodyOf(schema: z.ZodType): fc.Arbitrary<unknown> {
  const def = zodDef(schema);
  let shaped: fc.Arbitrary<unknown>;
  switch (def.type) {
    case "string":
      shaped = fc.string({ maxLength: 6 });
      break;
    case "number":
      shaped = fc.integer({ min: -3, max: 1000 }); // fractions, huge and negative numbers come as defects
      break;
    case "boolean":
      shaped = fc.boolean();
      break;
    case "null":
      shaped = fc.constant(null);
      break;
    case "literal":
      shaped = fc.constantFrom(...(def.values ?? [null]));
      break;
    case "enum":
      shaped = fc.constantFrom(...Object.values(def.entries ?? { a: "a" }));
      break;
    case "optional":
    case "nullable":
      shaped = fc.option(bodyOf(def.innerType as z.ZodType), {
        nil: def.type === "optional" ? undefined : null,
      });
      break;
    case "array":
      shaped = fc.array(bodyOf(def.element as z.ZodType), { maxLength: 3 });
      break;
    case "record":
      shaped = fc.dictionary(fc.string({ maxLength: 4 }), bodyOf(def.valueType as z.ZodType), { maxKeys: 3 });
      break;
    case "object": {
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, prop] of Object.entries(def.shape ?? {})) model[k] = bodyOf(prop);
      const extras = fc.dictionary(fc.constantFrom("extra", "__proto__", "id", "name", "x"), defect, {
        maxKeys: 2,
      });
      shaped = fc
        .tuple(fc.record(model), extras, fc.subarray(Object.keys(model), { maxLength: 1 }))
        .map(([known, extra, dropped]) => {
          const out: Record<string, unknown> = { ...known };
          for (const k of dropped) delete out[k];
          for (const [k, v] of Object.entries(extra))
            Object.defineProperty(out, k, { value: v, enumerable: true });
          return out;
        });
      break;
    }
    case "union":
      shaped = fc.oneof(...(def.options ?? []).map(bodyOf));
      break;
    case "pipe":
      shaped = bodyOf(def.in as z.ZodType);
      break;
    default:
      shaped = defect;
  }
  return fc.oneof({ weight: 40, arbitrary: shaped }, { weight: 1, arbitrary: defect });
}

/** Whether an object anywhere in `v` has an own `__proto__` key. */
function hasProtoKey(v: unknown): boolean {
  if (typeof v !== "object" || v === null) return false;
  if (!Array.isArray(v) && Object.hasOwn(v, "__proto__")) return true;
  return Object.values(v).some(hasProtoKey);
}

/** Every zod schema the client exports for responses and request bodies. */
const responseSchemas: [string, z.ZodType][] = [];
for (const [name, value] of Object.entries(client) as [string, unknown][]) {
  if (value instanceof z.ZodType && !/Options/.test(name)) responseSchemas.push([name, value]);
}

describe("acceptsUnchanged", () => {
  it("covers the hot response schemas (a full dashboard, project, member, invite, domain and their pages)", () => {
    for (const s of [
      client.DashboardSchema,
      client.ProjectSchema,
      client.MemberSchema,
      client.InviteSchema,
      client.DomainSchema,
      client.CollaboratorSchema,
      client.SharingSchema,
    ]) {
      expect(acceptsUnchanged(s)).toBeTypeOf("function");
      expect(acceptsUnchanged(pageSchema(s))).toBeTypeOf("function");
    }
    expect(acceptsUnchanged(client.SharingResponseSchema)).toBeNull(); // a transform: only zod can judge
  });

  it("runs refinements and leaves objects that are not plain to zod", () => {
    const body = acceptsUnchanged(client.DashboardBodySchema);
    expect(body?.({ name: "x", use_template: "DEFAULT_APP" })).toBe(true);
    // the refinement: use_template and use_dashboard cannot be combined (zod says so too)
    expect(body?.({ name: "x", use_template: "DEFAULT_APP", use_dashboard: 3 })).toBe(false);
    expect(client.DashboardBodySchema.safeParse({ use_template: "A", use_dashboard: 3 }).success).toBe(false);
    // zod would turn a Date into {} for a loose object: not "unchanged"
    expect(acceptsUnchanged(client.UserSchema)?.(new Date())).toBe(false);
    const holed: string[] = [];
    holed[1] = "a"; // index 0 is a hole: undefined for zod, which z.string() refuses
    expect(body?.({ name: "x", tags: holed })).toBe(false);
    expect(client.DashboardBodySchema.safeParse({ name: "x", tags: holed }).success).toBe(false);
  });

  for (const [name, schema] of responseSchemas) {
    const variants: [string, z.ZodType][] = [
      [name, schema],
      [`page of ${name}`, pageSchema(schema)],
    ];
    for (const [label, s] of variants) {
      const accepts = acceptsUnchanged(s);
      if (!accepts) continue;
      it(`agrees with zod on ${label}`, () => {
        let accepted = 0;
        fc.assert(
          fc.property(bodyOf(s), (generated) => {
            const body =
              generated === undefined ? undefined : (JSON.parse(JSON.stringify(generated)) as unknown);
            const r = s.safeParse(body);
            if (accepts(body)) {
              accepted++;
              expect(r.success).toBe(true);
              expect(r.data).toStrictEqual(body);
            } else if (r.success) {
              // refused although zod accepts: only a body that zod changes, by dropping a `__proto__` key
              expect(hasProtoKey(body)).toBe(true);
            }
          }),
          { numRuns: 300 },
        );
        // the generator reaches valid bodies, not only defects (about an eighth of them for a full dashboard)
        expect(accepted).toBeGreaterThan(10);
      });
    }
  }
});
