import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// `npm run stack -- …` is `node dist/tools/stack/cli.js …` after the build; run the compiled CLI on the tiny
// fixture program as a user would, checking exit statuses and the --json line.
const root = join(__dirname, "..", "..");
const cli = join(root, "dist", "tools", "stack", "cli.js");
const projectDir = join(__dirname, "fixtures", "tiny");
const stack = `c${process.pid}`;
const stackFile = join(projectDir, `Pulumi.${stack}.yaml`);
const work = mkdtempSync(join(tmpdir(), "stack-cli-"));
const db = join(work, "db");
const state = join(work, "state.json");

function settings(labels: string): void {
  writeFileSync(
    stackFile,
    `config:\n  tiny:dir: ${db}\n  tiny:labels: ${labels}\n  tiny:token:\n    secure: v1:x\n`,
  );
}
function stackCli(...args: string[]) {
  const r = spawnSync(
    process.execPath,
    [cli, ...args, "--cwd", projectDir, "--stack", stack, "--state", state],
    {
      encoding: "utf8",
      env: { ...process.env, TINY_TOKEN: "t0ken" },
      timeout: 60_000,
    },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  if (!existsSync(cli)) throw new Error("dist/ is missing: run `npm run build` first");
  mkdirSync(db);
});
afterAll(() => {
  rmSync(stackFile, { force: true });
  rmSync(work, { recursive: true, force: true });
});

describe("npm run stack (the stand-in engine's CLI)", () => {
  it("rejects an unknown operation with exit status 2 and the usage", () => {
    const r = stackCli("apply");
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("operation must be one of preview, up, refresh, destroy");
  });

  it("prints one JSON line per operation with counts and per-resource changes", () => {
    settings("[alpha]");
    const r = stackCli("up", "--json");
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] ?? "") as Record<string, unknown>;
    expect(line).toMatchObject({
      step: "up",
      ok: true,
      counts: { create: 2, update: 0, replace: 0, delete: 0, same: 0 },
    });
    expect((line.changes as { op: string; name: string }[]).map((c) => `${c.op} ${c.name}`).sort()).toEqual([
      "create child",
      "create item-0",
    ]);
    expect(readdirSync(db)).toHaveLength(2);
  }, 60_000);

  it("gates on drift with preview --refresh --expect-no-changes (exit 1 once an object changed outside)", () => {
    const file = join(db, readdirSync(db).find((f) => f.startsWith("alpha-")) ?? "");
    writeFileSync(file, readFileSync(file, "utf8").replace('"label":"alpha"', '"label":"edited"'));
    const r = stackCli("preview", "--refresh", "--expect-no-changes", "--json");
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("--expect-no-changes: 1 change(s) found");
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, counts: { update: 1, same: 1 } });
  }, 60_000);

  it("prints a readable Pulumi-like account and exits 1 when an operation fails", () => {
    settings("[alpha, '']");
    const r = stackCli("up");
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`Updating (${stack})`);
    expect(r.stdout).toMatch(
      /\+ {2}tiny:Item\s+item-1\s+create\s+\*\*failed\*\*: invalid inputs: label: label must be a non-empty string/,
    );
    const destroy = stackCli("destroy");
    expect(destroy.status).toBe(0);
    expect(destroy.stdout).toContain("- 2 deleted");
    expect(readdirSync(db)).toEqual([]);
  }, 60_000);
});
