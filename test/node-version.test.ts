/**
 * The Node.js floor (issue 11, point 8): the Pulumi CLI runs the `node` on PATH, and on a Node older than
 * undici 8 needs, loading the package failed deep inside undici (`reading 'bind'`). Each entry point now
 * checks the version first and throws one line saying what was found, what is needed and what to do.
 * No older Node can be installed here, so the compiled entries run on this Node with `process.versions.node`
 * overridden by a `--require` preload, which is what the check reads (undici itself loads fine on this Node,
 * so without the check these loads would succeed).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assertNodeVersion,
  isSupportedNodeVersion,
  minimumNodeVersion,
} from "../provider/client/node-version";

const root = join(__dirname, "..");
const json = (file: string) => JSON.parse(readFileSync(file, "utf8")) as { engines: { node: string } };

describe("isSupportedNodeVersion", () => {
  it.each([
    ["22.19.0", true],
    ["22.19.1", true],
    ["22.20.0", true],
    ["23.0.0", true],
    ["24.9.0", true],
    ["v22.19.0", true],
    ["25.0.0-nightly20260101abcdef", true],
    ["22.18.9", false],
    ["22.9.0", false], // numeric, not lexical: 9 < 19
    ["22.0.0", false],
    ["20.11.1", false],
    ["18.20.4", false],
  ])("%s → %s", (version, ok) => {
    expect(isSupportedNodeVersion(version)).toBe(ok);
  });
});

describe("the floor", () => {
  it("is undici's engines floor, and package.json engines.node says the same", () => {
    expect(minimumNodeVersion).toBe("22.19.0");
    expect(json(join(root, "node_modules", "undici", "package.json")).engines.node).toBe(">=22.19.0");
    expect(json(join(root, "package.json")).engines.node).toBe(">=22.19");
  });

  it("throws one line naming the version found, its binary, the version needed and what to do", () => {
    expect(() => assertNodeVersion("24.9.0")).not.toThrow();
    let message = "";
    try {
      assertNodeVersion("20.11.1", "/usr/bin/node");
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).not.toContain("\n");
    expect(message).toContain("runs on 20.11.1 (/usr/bin/node)");
    expect(message).toContain("needs Node.js >= 22.19");
    expect(message).toContain("The Pulumi CLI runs the `node` on PATH");
    expect(message).toContain("install Node.js >= 22.19");
  });
});

describe("the compiled entry points on an older Node", () => {
  let dir: string;
  const preload = (version: string) => {
    const file = join(dir, `node-${version}.cjs`);
    writeFileSync(
      file,
      `Object.defineProperty(process.versions, "node", { value: ${JSON.stringify(version)} });\n`,
    );
    return file;
  };
  /** Loads `entry` in a child Node whose `process.versions.node` is `version`; reports what it saw. */
  const load = (entry: string, version: string) => {
    const script = `
      let error = null;
      try { require(${JSON.stringify(join(root, entry))}); } catch (e) { error = e.message; }
      const undiciLoaded = Object.keys(require.cache).some((k) => /[\\\\/]undici[\\\\/]/.test(k));
      process.stdout.write(JSON.stringify({ error, undiciLoaded }));`;
    const child = spawnSync(process.execPath, ["--require", preload(version), "-e", script], {
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(child.status, child.stderr).toBe(0);
    return JSON.parse(child.stdout) as { error: string | null; undiciLoaded: boolean };
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "posthog-node-version-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(["dist/sdk/index.js", "dist/provider/index.js", "dist/provider/client/index.js"])(
    "%s throws the one-line message before undici loads",
    (entry) => {
      const old = load(entry, "20.11.1");
      expect(old.error).toBe(
        `pulumi-posthog needs Node.js >= 22.19 but runs on 20.11.1 (${process.execPath}). ` +
          "The Pulumi CLI runs the `node` on PATH for the program and the provider host: " +
          "install Node.js >= 22.19 and put it first on PATH (e.g. `nvm install 22 && nvm use 22`), " +
          "then run `node --version` to check. (see docs/troubleshooting/installation.md#pulumi-posthog-needs-nodejs)",
      );
      expect(old.undiciLoaded).toBe(false); // the check ran first: undici was never the failure
      const floor = load(entry, "22.19.0");
      expect(floor.error).toBeNull();
    },
  );
});
