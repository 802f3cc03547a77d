/**
 * What the README promises a newcomer (issue 21), checked against the repository: the two commands of the
 * repository are in the README itself and are what `package.json` and CI run; the README says plainly that running
 * a program needs the Pulumi CLI, and the package indeed ships no engine (the stand-in stays in the repository);
 * the stand-in's limits the docs list are those its source states. The commands themselves run in other tests:
 * `npm start`'s cycle in test/stack/gitops.test.ts, the stand-in on a user's program in
 * test/package/install.test.ts.
 */
import { readFileSync } from "node:fs";
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

describe("the README", () => {
  it("states the repository's two commands, which are the package's scripts and what CI runs", () => {
    const block = shBlocks.find((b) => b.includes("npm ci && npm start"));
    expect(block, "a ```sh block with `npm ci && npm start`").toBeDefined();
    const commands = (block ?? "")
      .split("\n")
      .map((l) => l.replace(/#.*$/, "").trim())
      .filter(Boolean);
    expect(commands).toEqual(["npm ci && npm start", "npm test"]);
    expect(pkg.scripts.start).toContain("tools/stack/start.js");
    expect(pkg.scripts.test).toContain("vitest run");
    const ci = read(".ci/run")
      .split("\n")
      .filter((l) => l.startsWith("npm "));
    expect(ci).toEqual(["npm ci --no-audit --no-fund", "npm test"]);
  });

  it("says the Pulumi CLI is required to run a program, and the package ships no engine of its own", () => {
    expect(flat(readme)).toContain(
      "`preview`, `up`, `refresh` and `destroy` of your program need the Pulumi CLI: the package ships no engine of its own.",
    );
    expect(Object.values(pkg.bin).some((b) => b.includes("tools/"))).toBe(false);
    expect(pkg.files.some((f) => f.includes("tools"))).toBe(false);
  });

  it("names what the stand-in does not do, as its source states it", () => {
    const header = (read("tools/stack/engine.ts").split("*/")[0] ?? "").replace(/^\s*\* ?/gm, "");
    const notDone = /What it does not do: (.+?)\.(\s|$)/.exec(flat(header))?.[1] ?? "";
    expect(notDone).not.toBe("");
    const docs = flat(read("docs/installation-configuration.md"));
    const section = docs.slice(docs.indexOf("## Without the Pulumi CLI"), docs.indexOf("## Settings"));
    // Each limit of the source is named in the docs (their wording: "`import`", "stack references", …).
    for (const limit of [
      "import",
      "Resource.get",
      "stack references",
      "component providers",
      "policy packs",
    ]) {
      expect(notDone).toContain(limit);
      expect(section).toContain(limit);
    }
    for (const flag of ["--target", "--parallel", "--continue-on-error", "secrets provider"]) {
      expect(notDone).toContain(flag);
      expect(section).toContain(flag);
    }
    expect(flat(readme)).toContain("its checkpoint is not Pulumi's state");
  });
});
