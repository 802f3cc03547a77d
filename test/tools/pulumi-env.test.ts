/**
 * The environment every CLI command of the tests, `npm start` and the benchmarks runs in (tools/pulumi.ts
 * `pulumiEnv`): always the local backend and a passphrase; a test that names another backend or removes the
 * passphrase fails before anything runs, never logging in to Pulumi Cloud.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PASSPHRASE, pulumi, pulumiEnv } from "../../tools/pulumi";

const work = mkdtempSync(join(tmpdir(), "pulumi-env-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("pulumiEnv", () => {
  it("is the local file backend with a passphrase, PULUMI_HOME inside it, no update check or plugin download", () => {
    const env = pulumiEnv(work, { PULUMI_ACCESS_TOKEN: "pul-abc" });
    expect(env.PULUMI_BACKEND_URL).toBe(`file://${work}`);
    expect(env.PULUMI_HOME).toBe(join(work, ".pulumi-home"));
    expect(env.PULUMI_CONFIG_PASSPHRASE).toBe(PASSPHRASE);
    expect(env.PULUMI_SKIP_UPDATE_CHECK).toBe("true");
    expect(env.PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION).toBe("true");
    expect(env.PULUMI_IGNORE_AMBIENT_PLUGINS).toBe("true");
    expect(env.PULUMI_ACCESS_TOKEN).toBeUndefined(); // Pulumi Cloud credentials never reach the CLI
  });

  it("refuses another backend and a missing passphrase, before any command runs", async () => {
    expect(() => pulumiEnv(work, { PULUMI_BACKEND_URL: "https://api.pulumi.com" })).toThrow(
      `PULUMI_BACKEND_URL is https://api.pulumi.com: these tools only use file://${work}`,
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
    expect(r.stdout).toContain(`Backend URL: file://${work}`);
  });
});
