/**
 * The SDK classes, loaded from the compiled dist/ together with the same @pulumi/pulumi instance, in a
 * Pulumi program run under `pulumi.runtime.setMocks`: type tokens, the registered inputs (thin
 * `__provider`, output-only keys), typed outputs, and secret outputs requested for tokens.
 */
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import type * as Pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { resourceNames } from "../../provider/resources/index";
import type * as Sdk from "../../sdk";
import { repoRoot } from "./harness";

const nativeRequire = createRequire(__filename);
const pulumi = nativeRequire("@pulumi/pulumi") as typeof Pulumi;
const sdk = nativeRequire(join(repoRoot, "dist", "sdk", "index.js")) as typeof Sdk;

type Registered = { type: string; name: string; inputs: Record<string, unknown> };
const registered: Registered[] = [];
const optsSeen = new Map<string, Pulumi.CustomResourceOptions>();

beforeAll(() => {
  pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        registered.push({ type: args.type, name: args.name, inputs: args.inputs as Record<string, unknown> });
        return { id: `${args.name}-id`, state: { ...args.inputs, isVerified: false, apiToken: "phc_test" } };
      },
      call: () => ({}),
    },
    "posthog-test",
    "test",
    false,
  );
});

const settled = <T>(o: Pulumi.Output<T>) => new Promise<T>((resolve) => o.apply(resolve));
const recordOpts: Pulumi.ResourceTransformation = (a) => {
  optsSeen.set(a.name, a.opts);
  return undefined;
};

describe("SDK resource classes", () => {
  it("register every resource of the list with its type token, a thin __provider and output-only keys", async () => {
    const opts = { transformations: [recordOpts] };
    const classes = sdk as unknown as Record<
      string,
      new (
        name: string,
        args: object,
        opts?: Pulumi.CustomResourceOptions,
      ) => Pulumi.CustomResource
    >;
    // The names and inputs the cases below read; every other class with no input (the mocks take any).
    const given: Record<string, [string, object]> = {
      Domain: ["corp", { domain: "example.com" }],
      Project: ["web", { name: "Web" }],
      DashboardSharing: ["kpis", { dashboardId: 1 }],
    };
    const made = resourceNames.map((n) => {
      const [name, args] = given[n] ?? [n.toLowerCase(), {}];
      return new (classes[n] ?? expect.unreachable(`dist/sdk exports no class ${n}`))(name, args, opts);
    });
    await Promise.all(made.map((r) => settled(r.urn)));
    expect(registered.map((r) => r.type).sort()).toEqual(
      resourceNames.map((n) => `pulumi-nodejs:dynamic/posthog:${n}`).sort(),
    );
    for (const r of registered) {
      const provider = String(r.inputs.__provider);
      expect(provider.length).toBeLessThanOrEqual(2150);
      expect(provider).toContain(`n: "${r.type.split(":").pop()}"`);
    }
    const domain = made[resourceNames.indexOf("Domain")] as Sdk.Domain;
    expect(await settled(domain.domain)).toBe("example.com");
    expect(await settled(domain.isVerified)).toBe(false); // an output-only key, registered as output
  });

  it("marks project tokens and the sharing access token as secret outputs", async () => {
    expect(optsSeen.get("web")?.additionalSecretOutputs).toEqual(["apiToken", "liveEventsToken"]);
    expect(optsSeen.get("kpis")?.additionalSecretOutputs).toEqual(["accessToken"]);
    expect(optsSeen.get("corp")?.additionalSecretOutputs).toBeUndefined();
  });

  it("keeps the caller's own additionalSecretOutputs", async () => {
    const p = new sdk.Project(
      "mine",
      { name: "Mine" },
      { additionalSecretOutputs: ["uuid"], transformations: [recordOpts] },
    );
    await settled(p.urn);
    expect(optsSeen.get("mine")?.additionalSecretOutputs).toEqual(["uuid", "apiToken", "liveEventsToken"]);
  });
});

// A program's start pays for every module the SDK loads: zod and undici (~200 files, ~0.2 s of a 300-resource
// `up`, bench/profile.ts) load with the first lookup, not with the SDK.
describe("SDK module loading", () => {
  it("loads neither zod nor undici until a lookup needs them", () => {
    const script = `
      const loaded = () => [...new Set(Object.keys(require.cache).flatMap((f) => {
        const m = /node_modules[\\\\/](zod|undici)[\\\\/]/.exec(f);
        return m ? [m[1]] : [];
      }))].sort().join(",");
      const sdk = require(${JSON.stringify(join(repoRoot, "dist", "sdk", "index.js"))});
      const atLoad = loaded();
      sdk.getDashboard({ id: "x" }).catch((e) => {
        console.log(JSON.stringify({ atLoad, afterCheck: loaded(), error: e.name }));
      });`;
    const out = execFileSync(process.execPath, ["-e", script], { encoding: "utf8" });
    expect(JSON.parse(out)).toEqual({ atLoad: "", afterCheck: "zod", error: "InvalidInputError" });
  });
});
