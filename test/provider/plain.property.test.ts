/**
 * Property test of the lifecycle's `plain` (what outputs pass through before they reach the host's protobuf
 * Struct): on any JSON-like value, with `undefined`, non-finite numbers and Dates mixed in, it gives exactly
 * what a JSON round trip gives, which is what it replaced.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./harness";

const { plain } = createRequire(__filename)(join(repoRoot, "dist", "provider", "framework", "values.js")) as {
  plain<T>(v: T): T;
};

const leaf = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.boolean(),
  fc.string(),
  fc.double(),
  fc.integer(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -0),
  fc.date({ noInvalidDate: true }),
);
const value = fc.letrec((tie) => ({
  any: fc.oneof({ depthSize: "small" }, leaf, tie("array"), tie("object")),
  array: fc.array(tie("any"), { maxLength: 5 }),
  object: fc.dictionary(fc.string({ maxLength: 6 }), tie("any"), { maxKeys: 6 }),
})).any;

describe("plain", () => {
  it("equals a JSON round trip on objects holding undefined, NaN, Infinity and Dates", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 6 }), value, { maxKeys: 8 }), (v) => {
        expect(plain(v)).toStrictEqual(JSON.parse(JSON.stringify(v)));
      }),
      { numRuns: 500 },
    );
  });

  it("gives {} for undefined and null, as the lifecycle expects", () => {
    expect(plain(undefined)).toStrictEqual({});
    expect(plain(null)).toStrictEqual({});
  });
});
