import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as resources from "../../provider/index";
import { SECRET_OUTPUTS, typeToken } from "../../provider/plugin/index";
import { ROOT } from "../../tools/codegen";
import { schemaJson } from "../../tools/schema";

// Issue 29: schema.json, the package schema the provider plugin serves, is generated from the zod inputs schemas
// (tools/schema.ts, `npm run schema`). These fail when it and the resources disagree.
const checkedIn = readFileSync(join(ROOT, "schema.json"), "utf8");
const schema = JSON.parse(checkedIn) as {
  name: string;
  config: { variables: Record<string, { secret?: boolean }> };
  resources: Record<
    string,
    {
      description: string;
      inputProperties: Record<string, { description?: string }>;
      requiredInputs: string[];
      properties: Record<string, { secret?: boolean }>;
    }
  >;
};

/** The property schemas of a resource's inputs schema (an object schema, refined or not). */
function shapeOf(name: string): Record<string, z.ZodType> {
  const s = (resources as unknown as Record<string, unknown>)[`${name}InputsSchema`];
  if (!(s instanceof z.ZodObject)) throw new Error(`${name}InputsSchema is not an object schema`);
  return s.shape as Record<string, z.ZodType>;
}

describe("schema.json (the plugin's package schema)", () => {
  it("is what `npm run schema` generates from the resources now", () => {
    expect(checkedIn, "schema.json is stale: run `npm run schema` and commit it").toBe(schemaJson());
  }, 120_000);

  it("has every resource, with exactly its inputs, its required inputs, documented, and its secret outputs", () => {
    expect(schema.name).toBe("posthog");
    expect(Object.keys(schema.resources).sort()).toEqual(resources.resourceNames.map(typeToken).sort());
    for (const name of resources.resourceNames) {
      const r = schema.resources[typeToken(name)];
      if (!r) throw new Error(`no ${typeToken(name)}`);
      const shape = shapeOf(name);
      expect(Object.keys(r.inputProperties).sort(), name).toEqual(Object.keys(shape).sort());
      // Required: what the schema refuses when absent (optional and defaulted inputs accept undefined).
      const required = Object.keys(shape).filter((k) => !shape[k]?.safeParse(undefined).success);
      expect([...r.requiredInputs].sort(), name).toEqual(required.sort());
      for (const [k, p] of Object.entries(r.inputProperties))
        expect(p.description?.length ?? 0, `${name}.${k} has a description`).toBeGreaterThan(0);
      const secret = Object.keys(r.properties).filter((k) => r.properties[k]?.secret === true);
      expect(secret.sort(), name).toEqual([...(SECRET_OUTPUTS[name] ?? [])].sort());
    }
    // The key: a secret setting with no default, and no key (phx_ and its characters) anywhere in the schema.
    expect(schema.config.variables.apiKey).toMatchObject({ type: "string", secret: true });
    expect(Object.keys(schema.config.variables.apiKey ?? {})).not.toContain("default");
    expect(Object.keys(schema.config.variables.apiKey ?? {})).not.toContain("defaultInfo");
    expect(checkedIn).not.toMatch(/phx_[A-Za-z0-9]/);
  });
});
