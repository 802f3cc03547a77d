/**
 * The example (examples/gitops, dev stack, run by the root Pulumi.yaml) applied through the real Pulumi CLI to a
 * fresh emulator, for tests that then preview, refresh or break its settings. {@link useExampleStack} registers
 * the hooks.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { type RunningEmulator, startEmulator } from "../../emulator";
import { type RunOptions, type RunResult, runStack } from "../../tools/pulumi";
import { dnsAutomation, seedApi } from "../../tools/seed-api";

const root = join(__dirname, "..", "..");

/**
 * Registers `beforeAll`: a fresh emulator (rate limit off), a DNS automation publishing the TXT record
 * DomainVerification waits for, and `pulumi up` of the example on a local backend in `<work>/state` (it must
 * succeed); and `afterAll`: `pulumi destroy` (unless `options.destroy` is false: the example's destroy is
 * test/stack/gitops.test.ts's, and a file whose tests do not need it skips the run), then the emulator and the work
 * directory are removed. `run` runs
 * an operation of the dev stack with the emulator's connection in the environment (`more` overrides any option;
 * the stack's settings file is `configFile`, a copy of examples/gitops/Pulumi.dev.yaml).
 */
export function useExampleStack(
  prefix: string,
  options: { destroy?: boolean } = {},
): {
  work: string;
  stateDir: string;
  configFile: string;
  emulator(): RunningEmulator;
  env(): Record<string, string>;
  run(operation: RunOptions["operation"], more?: Partial<RunOptions>): Promise<RunResult>;
} {
  const work = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const stateDir = join(work, "state");
  const configFile = join(work, "Pulumi.dev.yaml");
  let emulator: RunningEmulator | undefined;
  let env: Record<string, string> = {};
  let dns: ReturnType<typeof dnsAutomation> | undefined;
  const run = (operation: RunOptions["operation"], more: Partial<RunOptions> = {}) =>
    runStack({ operation, projectDir: root, stack: "dev", stateDir, configFile, env, ...more });

  beforeAll(async () => {
    emulator = await startEmulator({ rateLimit: false });
    env = {
      POSTHOG_HOST: emulator.url,
      POSTHOG_API_KEY: emulator.apiKey,
      POSTHOG_ORGANIZATION_ID: emulator.organizationId,
    };
    dns = dnsAutomation(seedApi(emulator.url, emulator.apiKey), 200);
    const up = await run("up");
    expect(up.ok, up.output).toBe(true);
  }, 300_000);

  afterAll(async () => {
    await dns?.stop();
    if (emulator) {
      if (options.destroy !== false) await run("destroy");
      await emulator.close();
    }
    rmSync(work, { recursive: true, force: true });
  }, 300_000);

  return {
    work,
    stateDir,
    configFile,
    emulator() {
      if (!emulator) throw new Error("the emulator starts in beforeAll");
      return emulator;
    },
    env: () => env,
    run,
  };
}
