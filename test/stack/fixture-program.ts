/**
 * The SDK fixture program (test/stack/fixtures/posthog: it declares the resources listed in its stack setting
 * `fx:resources`, with `require("pulumi-posthog")`) run through the real Pulumi CLI (tools/pulumi.ts) against a
 * fresh emulator. {@link useFixtureProgram} registers the hooks.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { emulatorEnv } from "../../emulator";
import {
  type RunOptions,
  type RunResult,
  runStack,
  startPulumi,
  writeStackSettings,
} from "../../tools/pulumi";
import { startTestEmulator, type TestEmulator } from "../support/emulator";

const root = join(__dirname, "..", "..");
export const fixtureDir = join(__dirname, "fixtures", "posthog");

/** The resources the fixture declares: `[type, name, args]`, e.g. `["Invite", "jane", {targetEmail: …}]`. */
export type Declared = [type: string, name: string, args: Record<string, unknown>][];

/** A stack of the fixture program: its local backend and settings file, and `run` writing its settings then running. */
export interface FixtureStack {
  name: string;
  stateDir: string;
  configFile: string;
  /** The connection to the emulator (POSTHOG_* variables) the runs get. */
  env(): Record<string, string>;
  run(
    operation: RunOptions["operation"],
    resources: Declared,
    more?: Partial<RunOptions>,
  ): Promise<RunResult>;
  /**
   * Starts `pulumi up --yes --skip-preview` of the settings last written by `run`, and hands back its process (to
   * kill it mid-run: {@link killTree}) and its outcome.
   */
  startUp(env: Record<string, string>): ReturnType<typeof startPulumi>;
}

/**
 * Registers `beforeAll`/`afterAll`: a fresh emulator (`paidFeatures` as given, default on) and a temporary
 * directory for settings files and backends, removed afterwards. `emu()` is the emulator (after `beforeAll`);
 * `stack(name)` a stack of the fixture program with the emulator's connection in the environment.
 * @throws (in `beforeAll`) when dist/ is missing: the fixture loads the built SDK.
 */
export function useFixtureProgram(options: { prefix: string; paidFeatures?: boolean }): {
  work: string;
  emu(): TestEmulator;
  stack(name: string): FixtureStack;
} {
  const work = mkdtempSync(join(tmpdir(), `${options.prefix}-`));
  let emu: TestEmulator | undefined;
  let env: Record<string, string> = {};
  beforeAll(async () => {
    if (!existsSync(join(root, "dist", "sdk", "index.js"))) {
      throw new Error(
        "dist/ is missing: the fixture loads the built SDK (pulumi-posthog); run `npm run build` first",
      );
    }
    emu = await startTestEmulator(options.paidFeatures === false ? { paidFeatures: false } : {});
    env = {
      ...emulatorEnv(emu),
    };
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(work, { recursive: true, force: true });
  });
  return {
    work,
    emu() {
      if (!emu) throw new Error("the emulator starts in beforeAll");
      return emu;
    },
    stack(name) {
      const stateDir = join(work, name);
      const configFile = join(work, `Pulumi.${name}.yaml`);
      return {
        name,
        stateDir,
        configFile,
        env: () => env,
        startUp(env) {
          return startPulumi(
            [
              "up",
              "--stack",
              name,
              "--config-file",
              configFile,
              "--non-interactive",
              "--yes",
              "--skip-preview",
            ],
            { cwd: fixtureDir, stateDir, env },
          );
        },
        run(operation, resources, more = {}) {
          writeStackSettings(
            configFile,
            `config:\n  fx:resources: ${JSON.stringify(JSON.stringify(resources))}\n`,
          );
          return runStack({
            operation,
            projectDir: fixtureDir,
            stack: name,
            stateDir,
            configFile,
            env,
            ...more,
          });
        },
      };
    },
  };
}
