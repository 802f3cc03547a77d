/**
 * What the README promises a newcomer (issues 21 and 26), checked against the repository: the two commands of
 * the repository are in the README itself and are what `package.json` and CI run; `npm run pulumi-cli`, which
 * readies the Pulumi CLI both of them run on, is documented and is a script of the package; every `npm run …`
 * the README names exists; the README says plainly that running a program needs the Pulumi CLI, and the package
 * indeed ships no engine. The commands themselves run in other tests: `npm start`'s cycle in
 * test/stack/gitops.test.ts, `npm run pulumi-cli` in test/stack/pulumi-cli.test.ts.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(__dirname, "..", "..");
const read = (file: string) => readFileSync(join(root, file), "utf8");
const readme = read("README.md");
const pkg = JSON.parse(read("package.json")) as {
  scripts: Record<string, string>;
  bin: Record<string, string>;
  files: string[];
};
/** The ```sh blocks of the README, one string each. */
const shBlocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
/** A Markdown text with its line breaks and runs of spaces as one space (prose is wrapped freely). */
const flat = (text: string) => text.replace(/\s+/g, " ");

/**
 * The source file of the repository a script runs with `node`: `node dist/tools/x.js` → `tools/x.ts` (built by
 * `npm run build`), `node tools/x.mts` → itself; undefined when the script runs no such file.
 */
function sourceRunBy(script: string): string | undefined {
  const built = /\bnode (dist\/\S+)\.js\b/.exec(script)?.[1];
  if (built !== undefined) return `${built.slice("dist/".length)}.ts`;
  return /\bnode ((?:tools|bench)\/\S+\.m?ts)\b/.exec(script)?.[1];
}

describe("the README", () => {
  it("states the repository's two commands, which are the package's scripts and what CI runs", () => {
    const block = shBlocks.find((b) => b.includes("npm ci && npm start"));
    expect(block, "a ```sh block with `npm ci && npm start`").toBeDefined();
    const commands = (block ?? "")
      .split("\n")
      .map((l) => l.replace(/#.*$/, "").trim())
      .filter(Boolean);
    expect(commands).toEqual(["npm ci && npm start", "npm test"]);
    // `npm start` runs a script of tools/ that exists (not the retired stand-in of tools/stack).
    const start = sourceRunBy(pkg.scripts.start ?? "");
    expect(start, pkg.scripts.start).toMatch(/^tools\/[^/]+\.ts$/);
    expect(existsSync(join(root, start ?? "")), `${start} exists`).toBe(true);
    // `npm test` readies the Pulumi CLI before the tests that run it.
    const test = pkg.scripts.test ?? "";
    expect(test).toContain("vitest run");
    const readies = test.search(/npm run (--silent )?pulumi-cli\b/);
    expect(readies, test).toBeGreaterThanOrEqual(0);
    expect(readies, test).toBeLessThan(test.indexOf("vitest run"));
    const ci = read(".ci/run")
      .split("\n")
      .filter((l) => l.startsWith("npm "));
    expect(ci).toEqual(["npm ci --no-audit --no-fund", "npm test"]);
  });

  it("documents `npm run pulumi-cli`, the script that readies the Pulumi CLI the two commands run on", () => {
    expect(flat(readme)).toContain("`npm run pulumi-cli`");
    const cli = sourceRunBy(pkg.scripts["pulumi-cli"] ?? "");
    expect(cli, pkg.scripts["pulumi-cli"]).toBe("tools/pulumi-cli.mts");
    expect(existsSync(join(root, cli ?? ""))).toBe(true);
  });

  it("names only npm scripts that exist, each running a file that exists", () => {
    const named = [...readme.matchAll(/\bnpm run (?:--silent )?([\w:-]+)/g)].map((m) => m[1] ?? "");
    expect(named).toContain("pulumi-cli");
    for (const name of new Set(named)) {
      const script = pkg.scripts[name];
      expect(script, `npm run ${name} (named in README.md) is a script of package.json`).toBeDefined();
      const source = sourceRunBy(script ?? "");
      if (source !== undefined)
        expect(existsSync(join(root, source)), `${source} of npm run ${name}`).toBe(true);
    }
    // The stand-in engine is retired: the README sends no one to it.
    expect(readme).not.toMatch(/tools\/stack\b|npm run stack\b/);
  });

  it("says the Pulumi CLI is required to run a program, and the package ships no engine of its own", () => {
    expect(flat(readme)).toContain(
      "`preview`, `up`, `refresh` and `destroy` of your program need the Pulumi CLI: the package ships no engine of its own.",
    );
    expect(Object.values(pkg.bin).some((b) => b.includes("tools/"))).toBe(false);
    expect(pkg.files.some((f) => f.includes("tools"))).toBe(false);
  });
});
