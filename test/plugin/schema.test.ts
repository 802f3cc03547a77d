import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SECRET_OUTPUTS, typeToken } from "../../provider/adapters/plugin/index";
import { resolveSettings } from "../../provider/client/settings";
import * as resources from "../../provider/index";
import { ROOT, readResources } from "../../tools/codegen";
import { SETTINGS, schemaJson } from "../../tools/schema";

// Issue 29: schema.json, the package schema the provider plugin serves, is generated from the zod inputs schemas
// (tools/schema.ts, `npm run schema`). These fail when it and the resources disagree.
const checkedIn = readFileSync(join(ROOT, "schema.json"), "utf8");
const schema = JSON.parse(checkedIn) as {
  name: string;
  version: string;
  pluginDownloadURL: string;
  config: { variables: Record<string, ConfigVariable> };
  provider: { inputProperties: Record<string, ConfigVariable> };
  resources: Record<
    string,
    {
      description: string;
      inputProperties: Record<string, { description?: string }>;
      requiredInputs: string[];
      properties: Record<string, { secret?: boolean }>;
      required?: string[];
    }
  >;
};

/** A config variable of the schema. */
type ConfigVariable = {
  description?: string;
  type: string;
  default?: string | number;
  defaultInfo?: { environment: string[] };
  secret?: boolean;
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

/** Every `description` in `value` with the path that leads to it (`resources.posthog:index:Dashboard.properties.name`). */
function descriptions(value: unknown, path = ""): { path: string; text: string }[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => descriptions(v, `${path}[${i}]`));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) =>
    k === "description" && typeof v === "string"
      ? [{ path: path || "(package)", text: v }]
      : descriptions(v, path ? `${path}.${k}` : k),
  );
}

/** Every property type of `value` (objects with `type`, `$ref` or `oneOf`) with its path. */
function typeSpecs(value: unknown, path = ""): { path: string; spec: Record<string, unknown> }[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => typeSpecs(v, `${path}[${i}]`));
  if (value === null || typeof value !== "object") return [];
  const spec = value as Record<string, unknown>;
  const here = "type" in spec || "$ref" in spec || "oneOf" in spec ? [{ path, spec }] : [];
  return [...here, ...Object.entries(spec).flatMap(([k, v]) => typeSpecs(v, path ? `${path}.${k}` : k))];
}

/**
 * Words no description of the package schema may carry: it is read by users of every language (Go, Python, C#,
 * YAML docs and IDEs), so no TypeScript types or code, no JSDoc, and nothing of how the package is built and tested.
 */
const NOT_IN_DESCRIPTIONS: readonly [RegExp, string][] = [
  [/\{@link|@param\b|@returns?\b|@throws\b|@see\b|\/\*\*|\*\//, "JSDoc"],
  [
    /\bpulumi\.(Output|Input|output|all|secret)\b|\b(Output|Input|Promise|Record|Partial)</,
    "a TypeScript type",
  ],
  [/\bz\.[a-z]\w*|\bzod\b/i, "zod"],
  [/\|\s*(undefined|null)\b|\b(string|number|boolean)\s*\||\bundefined\b/, "a TypeScript type"],
  [/\breadFileSync\b|\bfs\.|=>|\bnew [A-Z]\w*\(/, "TypeScript code"],
  [/\bmock\b|\bMock token\b|\bsetMocks\b/i, "the TypeScript SDK's mocks"],
  [/\bseed\b|\bemulator\b|real service/i, "the emulator"],
  [/\b[\w-]+\.(ts|mts|js)\b|\b(provider|tools|sdk|test|dist)\/[\w-]/, "a source file of the package"],
  [/`\w+Output`/, "a function of the TypeScript SDK"],
];

describe("schema.json as well-kept providers write it (issue 35)", () => {
  it("carries package.json's version and where releases are published", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    expect(schema.version).toBe(pkg.version);
    expect(schema.pluginDownloadURL).toBe("github://api.github.com/pulumi-posthog/pulumi-posthog");
  });

  it("has descriptions without TypeScript, JSDoc or internal words", () => {
    const all = descriptions(schema);
    expect(all.length).toBeGreaterThan(150);
    const found = all.flatMap(({ path, text }) =>
      NOT_IN_DESCRIPTIONS.flatMap(([pattern, what]) => {
        const m = pattern.exec(text);
        return m ? [`${path}: ${what} ("${m[0]}")`] : [];
      }),
    );
    expect(found, "descriptions to rewrite (in the JSDoc they come from)").toEqual([]);
  });

  it("finds each kind of word it looks for (the scan is not blind)", () => {
    const bad = [
      "See {@link Foo}.",
      "A `pulumi.Output<string>`.",
      "Parsed by z.string().",
      "A string | undefined.",
      'e.g. `fs.readFileSync("x")`.',
      "Mock token: `posthog:index:getMember`.",
      "PATCH as the real service has it; the seed shows only GET.",
      "See provider/framework/create-journal.ts.",
      "`getProjectOutput` returns it secret.",
    ];
    for (const text of bad)
      expect(
        NOT_IN_DESCRIPTIONS.some(([p]) => p.test(text)),
        text,
      ).toBe(true);
  });

  it("makes required exactly the outputs each OutputsSchema always has (neither optional nor nullable)", () => {
    for (const r of readResources()) {
      const spec = schema.resources[typeToken(r.name)];
      const shape = (
        (resources as unknown as Record<string, unknown>)[`${r.name}OutputsSchema`] as z.ZodObject
      ).shape as Record<string, z.ZodType>;
      // what the schema refuses as undefined or as null
      const always = Object.keys(shape).filter(
        (k) => !shape[k]?.safeParse(undefined).success && !shape[k]?.safeParse(null).success,
      );
      expect([...(spec?.required ?? [])].sort(), r.name).toEqual(always.sort());
      expect(Object.keys(spec?.properties ?? {}).sort(), r.name).toEqual(Object.keys(shape).sort());
      // every input is an output too
      for (const k of Object.keys(spec?.inputProperties ?? {}))
        expect(Object.keys(spec?.properties ?? {}), `${r.name}.${k}`).toContain(k);
    }
    expect(schema.resources["posthog:index:Dashboard"]?.required).toEqual(
      expect.arrayContaining(["name", "projectId", "deleted", "isShared"]),
    );
  });

  it("has flat unions, and integer ids", () => {
    for (const { path, spec } of typeSpecs(schema)) {
      const oneOf = spec.oneOf as Record<string, unknown>[] | undefined;
      if (!oneOf) continue;
      expect(
        oneOf.filter((o) => "oneOf" in o),
        `${path}: a oneOf in a oneOf`,
      ).toEqual([]);
      const keys = oneOf.map((o) => JSON.stringify(o));
      expect(new Set(keys).size, `${path}: a type twice in one oneOf`).toBe(keys.length);
    }
    const dashboard = schema.resources["posthog:index:Dashboard"] as unknown as {
      inputProperties: Record<string, unknown>;
      properties: Record<string, unknown>;
    };
    expect(dashboard.inputProperties.projectId).toMatchObject({
      oneOf: [{ type: "integer" }, { type: "string" }],
    });
    expect(dashboard.inputProperties.dashboardId).toMatchObject({
      oneOf: [{ type: "integer" }, { type: "string" }],
    });
    expect(dashboard.properties.dashboardId).toMatchObject({ type: "integer" });
    // no id typed as a (possibly fractional) number, nor as Any
    const ids = typeSpecs(schema).filter(({ path }) => /(^|\.)(\w*Id|id|\w*_id)$/.test(path));
    expect(ids.length).toBeGreaterThan(20);
    for (const { path, spec } of ids) {
      expect(JSON.stringify(spec), path).not.toContain('"number"');
      expect(JSON.stringify(spec), path).not.toContain("pulumi.json#/Any");
    }
  });

  it("types each setting as it is accepted, with its default and environment variable", () => {
    expect(schema.provider.inputProperties).toEqual(schema.config.variables);
    expect(Object.keys(schema.config.variables).sort()).toEqual(SETTINGS.map((s) => s.name).sort());
    for (const s of SETTINGS) {
      const v = schema.config.variables[s.name];
      expect(v?.type, s.name).toBe(s.type);
      if (s.secret) expect(v?.defaultInfo, s.name).toBeUndefined();
      else expect(v?.defaultInfo, s.name).toEqual({ environment: [s.env] });
    }
    // The defaults are the ones the provider applies: settings resolved with nothing set equal settings resolved
    // with every default of the schema given as the stack config gives it (text).
    const none = resolveSettings({ apiKey: "phx_schema_defaults" }, undefined, {});
    // (the integer settings say theirs in the description: a generated SDK would turn an environment's 0 into the
    // schema's default, `getEnvNumber(…) || default`)
    const defaults = new Map<string, string>(
      SETTINGS.flatMap((st): [string, string][] => {
        const v = schema.config.variables[st.name];
        if (v?.default !== undefined) return [[`posthog:${st.name}`, String(v.default)]];
        if (st.default === undefined) return [];
        expect(v?.description, st.name).toContain(`Default ${st.default}.`);
        return [[`posthog:${st.name}`, String(st.default)]];
      }),
    );
    expect([...defaults.keys()].sort()).toEqual(
      [
        "posthog:findCacheMs",
        "posthog:headersTimeoutMs",
        "posthog:host",
        "posthog:maxRateLimitWait",
        "posthog:rateLimit",
        "posthog:retryBaseDelayMs",
      ].sort(),
    );
    for (const v of Object.values(schema.config.variables))
      if (v.type === "integer") expect(v.default, "no schema default for an integer setting").toBeUndefined();
    const given = resolveSettings({ apiKey: "phx_schema_defaults" }, { get: (k) => defaults.get(k) }, {});
    const compared = (x: typeof none) => ({
      host: x.host,
      rateLimit: x.rateLimit,
      maxRateLimitWaitMs: x.maxRateLimitWaitMs,
      retryBaseDelayMs: x.retry.baseDelayMs,
      findCacheMs: x.findCacheMs,
      headersTimeoutMs: x.timeouts.headersMs,
    });
    expect(compared(given)).toEqual(compared(none));
  });
});
