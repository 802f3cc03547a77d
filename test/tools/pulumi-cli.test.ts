/**
 * `npm run pulumi-cli` (tools/pulumi-cli.mts) readying a folder with `--out`: from a supported `pulumi` on PATH
 * (the one this checkout built, in .pulumi-cli/bin), and its refusals: no Go and no CLI, a CLI older than the
 * supported range, a failed build step. The cold build itself is what `npm test` runs first (it is not repeated
 * here: minutes of CPU); a ready folder is what every stack test uses.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PULUMI_BIN } from "../../tools/pulumi";

const root = join(__dirname, "..", "..");
const script = join(root, "tools", "pulumi-cli.mts");
const node = process.execPath;
const work = mkdtempSync(join(tmpdir(), "pulumi-cli-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A folder holding executables written from `scripts` (`name` → shell script body). */
function binDir(name: string, scripts: Record<string, string>): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  for (const [file, body] of Object.entries(scripts)) {
    writeFileSync(join(dir, file), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, file), 0o755);
  }
  return dir;
}

/** Runs the script with `--out <work>/<out>` and PATH = the given folders, plus /bin for `sh`. */
function ready(out: string, path: string[]) {
  const r = spawnSync(node, [script, "--out", join(work, out)], {
    encoding: "utf8",
    env: { PATH: [...path, "/bin"].join(":"), HOME: process.env.HOME ?? "/root" },
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("npm run pulumi-cli", () => {
  it("links a supported pulumi on PATH and its language host, and copies the plugin; a second run is ready at once", () => {
    const first = ready("linked", [PULUMI_BIN, dirname(node)]);
    expect(first.stderr).toBe("");
    expect(first.status).toBe(0);
    expect(first.stdout).toContain(`using ${join(PULUMI_BIN, "pulumi")} (v3.`);
    const bin = join(work, "linked", "bin");
    expect(readlinkSync(join(bin, "pulumi"))).toBe(join(PULUMI_BIN, "pulumi"));
    expect(readlinkSync(join(bin, "pulumi-language-nodejs"))).toBe(
      join(PULUMI_BIN, "pulumi-language-nodejs"),
    );
    // The YAML language host beside that CLI is linked too (issue 29: Pulumi YAML programs of the plugin).
    expect(readlinkSync(join(bin, "pulumi-language-yaml"))).toBe(join(PULUMI_BIN, "pulumi-language-yaml"));
    const version = spawnSync(join(bin, "pulumi"), ["version"], { encoding: "utf8" }).stdout.trim();
    expect(version).toMatch(/^v3\.\d+\.\d+$/);
    const second = ready("linked", [PULUMI_BIN, dirname(node)]);
    expect(second.status).toBe(0);
    expect(second.stdout).toMatch(/^pulumi-cli: ready: pulumi v3\.\d+\.\d+ \(from .*\) in /);
    expect(second.stdout).not.toContain("using");
  });

  it("with neither Go nor a pulumi on PATH: one message naming both ways out", () => {
    const r = ready("none", [dirname(node)]);
    expect(r.status).toBe(1);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/neither a supported Pulumi CLI \(>= 3\.139\.0, < 4\) on PATH nor Go/);
    expect(lines[0]).toContain("install the Pulumi CLI (https://www.pulumi.com/docs/iac/download-install/)");
    expect(lines[0]).toContain("or Go 1.26.6 or later (https://go.dev/dl/)");
  });

  it("a pulumi older than the supported range is named with the range, and not used", () => {
    const old = binDir("old", { pulumi: 'echo "v3.100.0"', "pulumi-language-nodejs": "exit 0" });
    const r = ready("old-out", [old, dirname(node)]);
    expect(r.stdout).toContain(
      `${join(old, "pulumi")} is v3.100.0, outside the supported range (>= 3.139.0, < 4.0.0): not used`,
    );
    expect(r.status).toBe(1); // and no Go to build one
    expect(r.stderr).toContain(`(${join(old, "pulumi")} is v3.100.0)`);
  });

  it("a failed build step is named, with the tail of its log", () => {
    const go = binDir("go", {
      go: [
        'if [ "$1" = version ]; then echo "go version go1.26.8 linux/amd64"; exit 0; fi',
        'echo "go: downloading example.com/m v1.0.0"',
        'echo "verifying example.com/m@v1.0.0: checksum mismatch" >&2',
        "exit 1",
      ].join("\n"),
    });
    const r = ready("failed", [go, dirname(node)]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain("pulumi-cli: download the CLI's modules (go mod download) …");
    expect(r.stderr).toContain('step "download the CLI\'s modules (go mod download)" failed (exit 1)');
    expect(r.stderr).toContain("verifying example.com/m@v1.0.0: checksum mismatch");
    expect(r.stderr).toContain(join(root, "tools", "pulumi-cli", "cli"));
  });
});
