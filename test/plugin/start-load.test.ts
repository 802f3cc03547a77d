/**
 * What the provider plugin loads at its start (provider/adapters/plugin/index.ts): not the whole `@pulumi/pulumi`, whose
 * index brings the automation API, arborist and TypeScript (about 0.7 CPU-s of every plugin start, measured in
 * bench/RESULTS.md, 2026-11-29), neither at its start nor for a lookup: it calls the lookups' plain code
 * (provider/lookups), which the SDK's Output forms (sdk/lookups.ts) wrap. In a child Node.js, the built module, as the
 * plugin's main.js loads it.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(__dirname, "..", "..");

/** The files of `@pulumi/pulumi` (relative to its folder) in the require cache after `script` ran in a child. */
function pulumiFilesAfter(script: string): string[] {
  const out = execFileSync(
    process.execPath,
    [
      "-e",
      `${script}; console.log(JSON.stringify(Object.keys(require.cache).filter((f) => f.includes("/@pulumi/pulumi/")).map((f) => f.split("/@pulumi/pulumi/")[1])))`,
    ],
    { cwd: root, encoding: "utf8" },
  );
  return JSON.parse(out) as string[];
}

describe("the provider plugin's start", () => {
  it("loads no @pulumi/pulumi index (automation, TypeScript), a lookup included", async () => {
    const atStart = pulumiFilesAfter(`require("./dist/provider/adapters/plugin/index.js")`);
    expect(atStart).not.toContain("index.js");
    expect(atStart.filter((f) => f.startsWith("automation/"))).toEqual([]);
    expect(atStart).not.toContain("typescript-shim.js");
    // Nor does a lookup: the plugin calls the lookups' plain code (provider/lookups), not the SDK's Output forms.
    const afterLookup = pulumiFilesAfter(
      `const { pluginProvider } = require("./dist/provider/adapters/plugin/index.js"); pluginProvider().invoke("posthog:index:getMember", {}).catch(() => {})`,
    );
    expect(afterLookup).not.toContain("index.js");
  });
});
