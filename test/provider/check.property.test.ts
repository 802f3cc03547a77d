/**
 * Property test of every resource's `check` (the compiled provider code the host runs, called in-process):
 * it never throws, makes no HTTP request even with a reachable API configured, names a property in every
 * failure, and its accepted inputs are a fixed point (checking them again changes nothing).
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Provider } from "../../provider/adapters/dynamic";
import { repoRoot, startTestEmulator, type TestEmulator } from "./harness";

const nativeRequire = createRequire(__filename);
const providers = nativeRequire(join(repoRoot, "dist", "provider", "index.js")) as Record<
  string,
  Provider
> & {
  resourceNames: readonly string[];
  inputKeys?: unknown;
};
const { inputKeys } = nativeRequire(join(repoRoot, "dist", "provider", "framework", "values.js")) as {
  inputKeys(schema: unknown): string[];
};
const schemas = nativeRequire(join(repoRoot, "dist", "provider", "index.js")) as Record<string, unknown>;

let emu: TestEmulator;
beforeAll(async () => {
  emu = await startTestEmulator();
  // A reachable API with a valid key: if check made a request, the emulator would log it.
  const config = {
    "posthog:apiKey": emu.apiKey,
    "posthog:host": emu.url,
    "posthog:organizationId": emu.organizationId,
  } as Record<string, string>;
  const req = { config: { get: (k: string) => config[k], require: (k: string) => config[k] ?? "" } };
  for (const name of providers.resourceNames) await providers[name]?.configure(req);
  await emu.control("DELETE", "/requests");
});
afterAll(async () => {
  await emu?.close();
});

/** Values a user might put in a property, valid or not. */
const value = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom("example.com", "jane@example.com", "admin", "owner", "DEFAULT_APP", "@current", "{}", "12"),
  fc.uuid(),
  fc.integer({ min: -5, max: 5000 }),
  fc.constantFrom(1, 8, 15, 21, 37, 0, -1),
  fc.boolean(),
  fc.constant(null),
  fc.constant("04da6b54-80e4-46f7-96ec-b56ff0331ba9"), // Pulumi's marker for a value unknown during preview
  fc.array(fc.oneof(fc.string({ maxLength: 5 }), fc.integer()), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(fc.string({ maxLength: 5 }), fc.integer()), {
    maxKeys: 3,
  }),
);

describe("check of every resource (property)", () => {
  for (const name of providers.resourceNames) {
    it(`${name}: never throws, no HTTP, failures name a property, accepted inputs are a fixed point`, async () => {
      const provider = providers[name] as Provider;
      const schema = schemas[`${name}InputsSchema`];
      const keys = inputKeys(schema);
      expect(keys.length).toBeGreaterThan(0);
      const nearlyValid = fc.dictionary(fc.constantFrom(...keys, "typo", "Name"), value, {
        maxKeys: keys.length + 1,
      });
      await fc.assert(
        fc.asyncProperty(fc.oneof(nearlyValid, fc.anything()), async (news) => {
          const result = await provider.check({}, news as never);
          for (const f of result.failures ?? []) {
            expect(f.property.length).toBeGreaterThan(0);
            const given = news && typeof news === "object" ? Object.keys(news).map((k) => k || '""') : [];
            const named = [...keys, ...given].some((k) => f.property === k || f.property.startsWith(`${k}.`));
            expect(named, `${f.property} names no property of ${JSON.stringify(news)}`).toBe(true);
            expect(f.reason.length).toBeGreaterThan(0);
          }
          if (!result.failures?.length) {
            const again = await provider.check({}, result.inputs);
            expect(again.failures ?? []).toEqual([]);
            expect(again.inputs).toEqual(result.inputs);
          }
        }),
        { numRuns: 150 },
      );
      expect(await emu.requests()).toEqual([]);
    });
  }
});
