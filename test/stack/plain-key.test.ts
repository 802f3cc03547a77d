import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  type EngineEvent,
  ensureStack,
  pulumi,
  type RunOptions,
  type RunResult,
  runStack,
  savedState,
  writeStackSettings,
} from "../../tools/pulumi";
import { type Declared, fixtureDir, useFixtureProgram } from "./fixture-program";

// Issue 28, item 4: `pulumi config set posthog:apiKey phx_…` without `--secret` leaves the key readable in the stack
// settings file. A program using the SDK (test/stack/fixtures/posthog) runs through the real Pulumi CLI against the
// emulator: a preview warns, naming the fix, and the key reaches no state, log or error. Before the fix there was
// no warning at all. The plain key is written into the settings file as `pulumi config set posthog:apiKey …` writes
// it (tools/pulumi.ts writeStackSettings, no CLI run); only the secret one needs the CLI (it encrypts).
const fx = useFixtureProgram({ prefix: "plain-key" });

const warnings = (r: RunResult) =>
  r.diagnostics.filter((d) => d.severity === "warning").map((d) => d.message);
const why = (r: RunResult) => `${JSON.stringify(r.diagnostics, null, 1)}\n${r.output}`;
const FIX = "pulumi config set --secret posthog:apiKey";

describe("posthog:apiKey set as plain stack config", () => {
  it("warns at preview and up naming the fix; only the engine's record of the stack config holds it; once a secret, no warning and no key in the state", async () => {
    const program: Declared = [["Dashboard", "board", { name: "Plain key" }]];
    const key = await fx.emu().createKey();
    const s = fx.stack("plain");
    const env: Record<string, string | undefined> = { ...s.env(), POSTHOG_API_KEY: undefined };
    await ensureStack({
      projectDir: fixtureDir,
      stack: s.name,
      stateDir: s.stateDir,
      configFile: s.configFile,
    });
    const config = async (...args: string[]) => {
      const r = await pulumi(["config", "set", ...args, "--stack", s.name, "--config-file", s.configFile], {
        cwd: fixtureDir,
        stateDir: s.stateDir,
      });
      expect(r.exitCode, r.stderr).toBe(0);
      return r;
    };
    // What `pulumi config set posthog:apiKey <key>` and `pulumi config set fx:resources <json>` write.
    writeStackSettings(
      s.configFile,
      `config:\n  posthog:apiKey: ${key}\n  fx:resources: ${JSON.stringify(JSON.stringify(program))}\n`,
    );
    expect(readFileSync(s.configFile, "utf8")).toContain(`posthog:apiKey: ${key}`);
    const events: EngineEvent[] = [];
    const run = (operation: RunOptions["operation"]) =>
      runStack({
        operation,
        projectDir: fixtureDir,
        stack: s.name,
        stateDir: s.stateDir,
        configFile: s.configFile,
        env: env as Record<string, string>,
        onEvent: (e) => events.push(e),
      });

    const preview = await run("preview");
    expect(preview.ok, why(preview)).toBe(true);
    const warned = warnings(preview).filter((m) => m.includes("posthog:apiKey"));
    expect(warned, why(preview)).toHaveLength(1);
    expect(warned[0]).toContain("plain text");
    expect(warned[0]).toContain(FIX);
    expect(preview.output).toContain(FIX);

    const up = await run("up");
    expect(up.ok, why(up)).toBe(true);
    expect(warnings(up).filter((m) => m.includes(FIX))).toHaveLength(1);
    // The state as the local backend holds it (the checkpoint `pulumi stack export` prints, read without a CLI run).
    const stateOf = () => savedState({ projectDir: fixtureDir, stack: s.name, stateDir: s.stateDir });
    // What the engine does with plain stack config: it records the whole config as the inputs of the default
    // provider (`pulumi:providers:pulumi-nodejs`), in clear. No resource of ours holds the key.
    const exported = stateOf();
    const holders = (exported.deployment.resources ?? [])
      .filter((r) => JSON.stringify(r).includes(key))
      .map((r) => String(r.type));
    expect(holders).toEqual(["pulumi:providers:pulumi-nodejs"]);
    // The engine's events carry it where they carry the stack config: the prelude (the config of the run) and
    // that provider's step; no other event, and no output or error.
    expect(events.length).toBeGreaterThan(10);
    const withKey = events.filter((e) => JSON.stringify(e).includes(key));
    expect(withKey.length).toBeGreaterThan(0);
    for (const e of withKey) {
      const where = e.preludeEvent ? "prelude" : (e.resourcePreEvent ?? e.resOutputsEvent)?.metadata.type;
      expect(["prelude", "pulumi:providers:pulumi-nodejs"], JSON.stringify(Object.keys(e))).toContain(where);
    }
    const printed = [preview, up].map((r) => r.output + JSON.stringify(r.diagnostics)).join("\n");
    expect(printed.includes(key), "the key is in the CLI's output or diagnostics").toBe(false);

    // Made a secret as the warning says: no warning, and after the next up the state holds it only encrypted. (The
    // warning comes from the program, which a preview and an up run alike: the up shows there is none.)
    await config("--secret", "posthog:apiKey", key);
    expect(readFileSync(s.configFile, "utf8")).toMatch(/posthog:apiKey:\n {4}secure: v1:/);
    const secured = await run("up");
    expect(secured.ok, why(secured)).toBe(true);
    expect(warnings(secured).filter((m) => m.includes("posthog:apiKey"))).toEqual([]);
    expect(JSON.stringify(stateOf()).includes(key)).toBe(false);
    expect(secured.output.includes(key)).toBe(false);
    writeFileSync(s.configFile, ""); // the key out of the test's temporary files before they are removed
  }, 300_000);
});
