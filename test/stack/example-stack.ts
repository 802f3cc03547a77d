/**
 * The example (examples/gitops, dev stack, run by the root Pulumi.yaml) applied through the stand-in engine to a
 * fresh emulator, for tests that then preview, refresh or break its settings. {@link useExampleStack} registers
 * the hooks.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { type RunningEmulator, startEmulator } from "../../emulator";
import { type RunOptions, type RunResult, runStack } from "../../tools/stack/engine";
import { dnsAutomation, seedApi } from "../../tools/stack/seed-api";

const root = join(__dirname, "..", "..");

/**
 * Registers `beforeAll`: a fresh emulator (rate limit off), a DNS automation publishing the TXT record
 * DomainVerification waits for, and `up` of the example into `<work>/state.json` (it must succeed); and
 * `afterAll`: `destroy`, then the emulator and the work directory are removed. `run` runs an operation of the
 * dev stack with the emulator's connection in the environment (`more` overrides any option).
 */
export function useExampleStack(prefix: string): {
  work: string;
  statePath: string;
  emulator(): RunningEmulator;
  env(): Record<string, string>;
  run(operation: RunOptions["operation"], more?: Partial<RunOptions>): Promise<RunResult>;
} {
  const work = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const statePath = join(work, "state.json");
  let emulator: RunningEmulator | undefined;
  let env: Record<string, string> = {};
  let dns: ReturnType<typeof dnsAutomation> | undefined;
  const run = (operation: RunOptions["operation"], more: Partial<RunOptions> = {}) =>
    runStack({ operation, projectDir: root, stack: "dev", statePath, env, ...more });

  beforeAll(async () => {
    emulator = await startEmulator({ rateLimit: false });
    env = {
      POSTHOG_HOST: emulator.url,
      POSTHOG_API_KEY: emulator.apiKey,
      POSTHOG_ORGANIZATION_ID: emulator.organizationId,
    };
    dns = dnsAutomation(seedApi(emulator.url, emulator.apiKey), 200);
    const up = await run("up");
    expect(up.ok, JSON.stringify(up.diagnostics.filter((d) => d.severity === "error"))).toBe(true);
  }, 120_000);

  afterAll(async () => {
    await dns?.stop();
    if (emulator) {
      await run("destroy");
      await emulator.close();
    }
    rmSync(work, { recursive: true, force: true });
  }, 60_000);

  return {
    work,
    statePath,
    emulator() {
      if (!emulator) throw new Error("the emulator starts in beforeAll");
      return emulator;
    },
    env: () => env,
    run,
  };
}
