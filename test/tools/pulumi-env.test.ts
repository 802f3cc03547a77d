/**
 * The environment every CLI command of the tests, `npm start` and the benchmarks runs in (tools/pulumi.ts
 * `pulumiEnv`): always the local backend and a passphrase; a test that names another backend or removes the
 * passphrase fails before anything runs, never logging in to Pulumi Cloud.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { backendUrl, PASSPHRASE, pulumi, pulumiEnv } from "../../tools/pulumi";

const work = mkdtempSync(join(tmpdir(), "pulumi-env-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("pulumiEnv", () => {
  it("is the local file backend with a passphrase, PULUMI_HOME inside it, no update check or plugin download", () => {
    const env = pulumiEnv(work, { PULUMI_ACCESS_TOKEN: "pul-abc" });
    expect(env.PULUMI_BACKEND_URL).toBe(`file://${work}?metadata=skip`);
    expect(env.PULUMI_HOME).toBe(join(work, ".pulumi-home"));
    expect(env.PULUMI_CONFIG_PASSPHRASE).toBe(PASSPHRASE);
    expect(env.PULUMI_SKIP_UPDATE_CHECK).toBe("true");
    expect(env.PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION).toBe("true");
    expect(env.PULUMI_IGNORE_AMBIENT_PLUGINS).toBe("true");
    expect(env.PULUMI_ACCESS_TOKEN).toBeUndefined(); // Pulumi Cloud credentials never reach the CLI
  });

  it("refuses another backend and a missing passphrase, before any command runs", async () => {
    expect(() => pulumiEnv(work, { PULUMI_BACKEND_URL: "https://api.pulumi.com" })).toThrow(
      `PULUMI_BACKEND_URL is https://api.pulumi.com: these tools only use file://${work}?metadata=skip`,
    );
    expect(() => pulumiEnv(work, { PULUMI_CONFIG_PASSPHRASE: undefined })).toThrow(
      /no PULUMI_CONFIG_PASSPHRASE/,
    );
    expect(() => pulumiEnv(work, { PULUMI_CONFIG_PASSPHRASE: "" })).toThrow(/no PULUMI_CONFIG_PASSPHRASE/);
    await expect(
      pulumi(["whoami"], {
        cwd: work,
        stateDir: work,
        env: { PULUMI_BACKEND_URL: "https://api.pulumi.com" },
      }),
    ).rejects.toThrow(/these tools only use/);
  });

  it("the real CLI in it answers from the local backend", async () => {
    const r = await pulumi(["whoami", "--verbose"], { cwd: work, stateDir: work });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Backend URL: ${backendUrl(work)}`);
  });

  // A CLI killed while the file backend rewrote a `.attrs` sidecar left it empty, and every later command on the
  // stack failed with `failed to load checkpoint: EOF` (the engine-kill soak, after an early kill of the CLI).
  // With `?metadata=skip` the backend writes no sidecar at all, so no kill can leave one half-written.
  it("writes no .attrs sidecar beside the state, which a killed CLI could leave empty", async () => {
    const state = join(work, "sidecars");
    const project = join(state, "project");
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, "Pulumi.yaml"), "name: sidecars\nruntime: yaml\noutputs:\n  answer: 42\n");
    const run = (args: string[]) => pulumi(args, { cwd: project, stateDir: state });
    for (const args of [
      ["stack", "init", "dev"],
      ["up", "--yes"],
      ["stack", "export"],
    ]) {
      const r = await run(args);
      expect(r.exitCode, `pulumi ${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(0);
    }
    const files = readdirSync(join(state, ".pulumi"), { recursive: true }).map(String);
    expect(files).toContain(join("stacks", "sidecars", "dev.json"));
    expect(files.filter((f) => f.endsWith(".attrs"))).toEqual([]);
  });
});
