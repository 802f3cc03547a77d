import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { userAgent } from "../provider/client/version";

const pkg = JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8")) as {
  version: string;
  engines: { node: string };
};

describe("runtime", () => {
  it("runs tests on the Node version the package requires (>= 22), not the machine's Node 20", () => {
    const major = Number(process.versions.node.split(".")[0]);
    const required = Number(/>=\s*(\d+)/.exec(pkg.engines.node)?.[1]);
    expect(required).toBe(22);
    expect(major).toBeGreaterThanOrEqual(required);
  });

  it("names the package version in the User-Agent", () => {
    expect(userAgent).toBe(`pulumi-posthog/${pkg.version}`);
  });
});
