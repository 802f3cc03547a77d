import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import {
  ensureStack,
  errorsOf,
  pulumiOk,
  type RunOptions,
  runStack,
  writeStackSettings,
} from "../../tools/pulumi";
import { requestsSince as requestsOf, startTestEmulator, type TestEmulator } from "../support/emulator";
import { NO_POSTHOG_ENV, requireBuilt, root, why } from "./support";

// Issue 34, point 4, through the provider plugin: `pulumi preview` with a wrong key used to pass (`+ 2 to create`,
// no request: the protocol tells the plugin's check nothing of a preview), and the nightly gate
// `pulumi preview --refresh --expect-no-changes` passed with a wrong key or an organization of none when nothing
// changed. Now the plugin's check proves the settings reach PostHog in every run (one GET), changes or none: each
// such preview fails naming the setting, with no write. A Pulumi YAML program, the real CLI, the emulator.
const work = mkdtempSync(join(tmpdir(), "plugin-preview-settings-"));
const projectDir = join(work, "program");
const stateDir = join(work, "state");
const stack = "dev";
const env: NodeJS.ProcessEnv = NO_POSTHOG_ENV;
let emu: TestEmulator;
let configFile: string;

beforeAll(async () => {
  requireBuilt([join(root, ".pulumi-cli", "bin", "pulumi-language-yaml")]);
  emu = await startTestEmulator();
  mkdirSync(projectDir, { recursive: true });
  writeFileSync(
    join(projectDir, "Pulumi.yaml"),
    `name: posthog-preview-settings
runtime: yaml
plugins:
  providers:
    - name: posthog
      path: ${join(root, "plugin")}
resources:
  kpis:
    type: posthog:index:Dashboard
    properties:
      name: Preview settings KPIs
`,
  );
  configFile = await ensureStack({ projectDir, stack, stateDir, env });
  writeStackSettings(
    configFile,
    `config:\n  posthog:host: ${emu.url}\n  posthog:organizationId: ${emu.organizationId}\n`,
  );
}, 120_000);
afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

const run = (operation: RunOptions["operation"], more: Partial<RunOptions> = {}) =>
  runStack({ operation, projectDir, stack, stateDir, configFile, env, ...more });
/** The settings file's YAML document with `change` applied to its `config` (the passphrase's salt line kept). */
const withConfig = (text: string, change: (config: Record<string, unknown>) => void) => {
  const doc = parseYaml(text) as { config: Record<string, unknown> };
  change(doc.config);
  return stringifyYaml(doc);
};
/** The API requests since the last call (method and path), then clears the emulator's log. */
const requestsSince = () => requestsOf(emu);

describe("a preview through the plugin proves the settings, changes or none (real Pulumi CLI, YAML)", () => {
  it("a wrong key or an organization of none fails the preview and the nightly gate naming the setting, with one GET and no write", async () => {
    await requestsSince();
    // The settings file with the right key, then with the wrong key, each set as a secret by the CLI in one run (the
    // wrong one under a key of the program's, whose ciphertext then takes the place of posthog:apiKey's): the runs
    // below switch between the two (and the right one with another organization) by writing the file.
    const wrongKey = "phx_this_key_is_not_known_to_posthog_0000000000000";
    const wrongName = "posthog-preview-settings:wrongKey";
    await pulumiOk(
      [
        "config",
        "set-all",
        "--secret",
        `posthog:apiKey=${emu.apiKey}`,
        "--secret",
        `${wrongName}=${wrongKey}`,
        "--stack",
        stack,
        "--config-file",
        configFile,
      ],
      { cwd: projectDir, stateDir, env },
    );
    const both = readFileSync(configFile, "utf8");
    expect(both).not.toContain(emu.apiKey);
    expect(both).not.toContain(wrongKey);
    const right = withConfig(both, (config) => {
      delete config[wrongName];
    });
    const wrong = withConfig(both, (config) => {
      config["posthog:apiKey"] = config[wrongName];
      delete config[wrongName];
    });
    expect(right).toMatch(/^encryptionsalt: /m);
    expect(right).toMatch(/^ {2}posthog:apiKey:\n {4}secure: /m);
    expect(wrong).not.toBe(right);
    writeFileSync(configFile, wrong);
    // A new stack, wrong key: the preview of two creates used to pass with no request.
    const fresh = await run("preview");
    expect(fresh.ok, why(fresh)).toBe(false);
    expect(errorsOf(fresh).join("\n")).toMatch(/posthog:apiKey/);
    expect(await requestsSince()).toEqual([expect.stringMatching(/^GET /)]);

    writeFileSync(configFile, right);
    const up = await run("up");
    expect(up.ok, why(up)).toBe(true);
    const organization = "0b5e7a9c-0000-4000-8000-00000000dead";
    const otherOrganization = right.replace(
      /^(\s*posthog:organizationId:).*$/m,
      (_, key: string) => `${key} ${organization}`,
    );
    expect(otherOrganization).toContain(`posthog:organizationId: ${organization}`);
    const cases: [string, string, RegExp][] = [
      ["a wrong key", wrong, /posthog:apiKey/],
      [
        "an organization of none",
        otherOrganization,
        new RegExp(
          `organization ${organization} \\(set by the stack config posthog:organizationId\\) was not found`,
        ),
      ],
    ];
    for (const [what, settings, message] of cases) {
      writeFileSync(configFile, settings);
      await requestsSince();
      // Nothing to change, and the nightly gate: both fail, as tomorrow's up would.
      const same = await run("preview");
      expect(same.ok, `${what}: ${why(same)}`).toBe(false);
      expect(errorsOf(same).join("\n"), what).toMatch(message);
      const gate = await run("preview", { refresh: true, expectNoChanges: true });
      expect(gate.ok, `${what}: ${why(gate)}`).toBe(false);
      expect(errorsOf(gate).join("\n"), what).toMatch(message);
      expect(
        (await requestsSince()).filter((r) => !r.startsWith("GET ")),
        what,
      ).toEqual([]);
      // Put the right settings back.
      writeFileSync(configFile, right);
    }
    const calm = await run("preview", { refresh: true, expectNoChanges: true });
    expect(calm.ok, why(calm)).toBe(true);
    expect((await requestsSince()).filter((r) => !r.startsWith("GET "))).toEqual([]);
  }, 600_000);
});
