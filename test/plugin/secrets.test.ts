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
  type RunResult,
  runStack,
  writeStackSettings,
} from "../../tools/pulumi";
import { requestsSince as requestsOf, startTestEmulator, type TestEmulator } from "../support/emulator";
import { filesUnder } from "../support/files";
import { NO_POSTHOG_ENV, pluginProject, requireBuilt, root, why } from "./support";

// Issue 34, point 3 (a): through the provider plugin, a key set as plain stack config (`pulumi config set
// posthog:apiKey …` without --secret) used to run with no warning and be stored in clear in the state (the default
// provider's inputs), although schema.json marks it secret. The plugin's CheckConfig now returns it as a secret:
// the engine stores it encrypted (it cannot also warn as the dynamic SDK does: CheckConfig gets the settings without their secret marks). And no secret output (a Project's apiToken, a sharing's accessToken)
// may appear in clear in what `up --json`, `preview --json`, `refresh --json`, `destroy --json` or `up --debug`
// print, nor in any file of the backend.
//
// On the same stack, issue 34, point 4, through the provider plugin: `pulumi preview` with a wrong key used to pass
// (`+ N to create`, no request: the protocol tells the plugin's check nothing of a preview), and the nightly gate
// `pulumi preview --refresh --expect-no-changes` passed with a wrong key or an organization of none when nothing
// changed. Now the plugin's check proves the settings reach PostHog in every run (one GET), changes or none: each
// such preview fails naming the setting, with no write. A Pulumi YAML program, the real CLI, the emulator.
const work = mkdtempSync(join(tmpdir(), "plugin-secrets-"));
const projectDir = join(work, "program");
const stateDir = join(work, "state");
const stack = "dev";
const env: NodeJS.ProcessEnv = NO_POSTHOG_ENV;
let emu: TestEmulator;

beforeAll(async () => {
  requireBuilt([join(root, ".pulumi-cli", "bin", "pulumi-language-yaml")]);
  emu = await startTestEmulator();
  mkdirSync(projectDir, { recursive: true });
  writeFileSync(
    join(projectDir, "Pulumi.yaml"),
    `${pluginProject("posthog-secrets")}resources:
  web:
    type: posthog:index:Project
    properties:
      name: Secrets web
  kpis:
    type: posthog:index:Dashboard
    properties:
      name: Secrets KPIs
      projectId: \${web.id}
  shared:
    type: posthog:index:DashboardSharing
    properties:
      projectId: \${web.id}
      dashboardId: \${kpis.id}
      enabled: true
`,
  );
}, 120_000);
afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

/** The settings file's YAML document with `change` applied to its `config` (the passphrase's salt line kept). */
const withConfig = (text: string, change: (config: Record<string, unknown>) => void) => {
  const doc = parseYaml(text) as { config: Record<string, unknown> };
  change(doc.config);
  return stringifyYaml(doc);
};

describe("secrets and the settings' proof through the provider plugin (real Pulumi CLI, YAML)", () => {
  it("a preview of a new stack with a wrong key fails naming it (one GET, no write); a key set as plain stack config is stored encrypted; then a wrong key or an organization of none fails the preview and the nightly gate naming the setting (no write) and the right settings pass the gate; no secret is in clear in any --json or --debug output, nor in the backend", async () => {
    // The key in plain text, as a hurried user types it (`pulumi config set posthog:apiKey …` writes this line).
    const configFile = await ensureStack({ projectDir, stack, stateDir, env });
    writeStackSettings(
      configFile,
      `config:\n  posthog:host: ${emu.url}\n  posthog:organizationId: ${emu.organizationId}\n  posthog:apiKey: ${emu.apiKey}\n`,
    );
    const runs: RunResult[] = [];
    const run = async (
      operation: "up" | "preview" | "refresh" | "destroy",
      args: string[],
      more: Partial<RunOptions> = {},
    ) => {
      const r = await runStack({ operation, projectDir, stack, stateDir, configFile, env, args, ...more });
      expect(r.ok, why(r)).toBe(true);
      runs.push(r);
      return r;
    };
    /** The API requests since the last call (method and path), then clears the emulator's log. */
    const requestsSince = () => requestsOf(emu);

    // A wrong key, set as a secret by the CLI under a key of the program's, whose ciphertext then takes the place of
    // posthog:apiKey's in the settings of the runs that need it.
    const wrongKey = "phx_this_key_is_not_known_to_posthog_0000000000000";
    const wrongName = "posthog-secrets:wrongKey";
    await pulumiOk(
      ["config", "set", "--secret", wrongName, wrongKey, "--stack", stack, "--config-file", configFile],
      { cwd: projectDir, stateDir, env },
    );
    const withWrong = readFileSync(configFile, "utf8");
    expect(withWrong).not.toContain(wrongKey);
    const plain = withConfig(withWrong, (config) => {
      delete config[wrongName];
    });
    const wrong = withConfig(withWrong, (config) => {
      config["posthog:apiKey"] = config[wrongName];
      delete config[wrongName];
    });
    expect(plain).toMatch(/^encryptionsalt: /m);
    expect(plain).toContain(`posthog:apiKey: ${emu.apiKey}`);
    expect(wrong).toMatch(/^ {2}posthog:apiKey:\n {4}secure: /m);

    // A new stack, wrong key: the preview of its creates used to pass with no request.
    writeFileSync(configFile, wrong);
    await requestsSince();
    const fresh = await runStack({ operation: "preview", projectDir, stack, stateDir, configFile, env });
    expect(fresh.ok, why(fresh)).toBe(false);
    expect(errorsOf(fresh).join("\n")).toMatch(/posthog:apiKey/);
    expect(await requestsSince()).toEqual([expect.stringMatching(/^GET /)]);

    // The right key, in plain text.
    writeFileSync(configFile, plain);
    const up = await run("up", ["--json"]);
    // The key is in clear in one place only: the CLI's own echo of the stack config it was given in plain text (the
    // `preludeEvent` of --json), which no provider controls.
    const echoed = up.output.split("\n").filter((l) => l.includes(emu.apiKey));
    expect(echoed.length).toBeGreaterThan(0);
    for (const line of echoed) expect(line).toMatch(/^\{"sequence":\d+,"timestamp":\d+,"preludeEvent":/);
    // The state holds it encrypted: the default provider's recorded inputs. In clear are only the settings file the
    // user wrote it into and the CLI's history of that update (its `config`, as given): Pulumi's own records.
    const afterPlain = filesUnder(stateDir);
    const plainRecords = afterPlain.filter((f) => f.text.includes(emu.apiKey)).map((f) => f.path);
    expect(
      plainRecords.map((p) => p.replace(/\d+\.history\.json$/, "N.history.json").slice(stateDir.length)),
    ).toEqual(["/.pulumi/history/posthog-secrets/dev/dev-N.history.json", `/Pulumi.${stack}.yaml`].sort());
    for (const f of afterPlain.filter((x) => x.path.endsWith(".history.json") && x.text.includes(emu.apiKey)))
      expect(JSON.stringify((JSON.parse(f.text) as { config?: unknown }).config)).toContain(emu.apiKey);
    expect(afterPlain.find((f) => f.path.endsWith(`${stack}.json`))?.text).toMatch(
      /"apiKey":\s*\{\s*"4dabf18193072939515e22adb298388d"/,
    );
    // Then it is made a secret in the settings too, as the docs say. From here on, nothing prints it.
    await pulumiOk(
      [
        "config",
        "set",
        "--secret",
        "posthog:apiKey",
        emu.apiKey,
        "--stack",
        stack,
        "--config-file",
        configFile,
      ],
      { cwd: projectDir, stateDir, env },
    );
    // The first up's output is checked below for the secret outputs (it created them), not for the key it echoed.
    const [created] = runs.splice(0);
    const right = readFileSync(configFile, "utf8");
    expect(right).toMatch(/^ {2}posthog:apiKey:\n {4}secure: /m);
    expect(right).not.toContain(wrongName);
    // The secret outputs' values, as PostHog holds them.
    const projects = (await emu.call("GET", `/api/organizations/${emu.organizationId}/projects/?limit=100`))
      .body as {
      results: { id: number; name: string }[];
    };
    const web = projects.results.find((p) => p.name === "Secrets web");
    expect(web).toBeDefined();
    const project = (await emu.call("GET", `/api/organizations/${emu.organizationId}/projects/${web?.id}/`))
      .body as {
      api_token: string;
    };
    const dashboards = (await emu.call("GET", `/api/projects/${web?.id}/dashboards/?limit=100`)).body as {
      results: { id: number }[];
    };
    const sharing = (
      await emu.call("GET", `/api/projects/${web?.id}/dashboards/${dashboards.results[0]?.id}/sharing/`)
    ).body as { access_token: string };
    const secrets = { apiKey: emu.apiKey, apiToken: project.api_token, accessToken: sharing.access_token };
    for (const v of Object.values(secrets)) expect(v.length).toBeGreaterThan(8);

    // Nothing to change, and the nightly gate, with a wrong key or an organization of none: both fail naming the
    // setting, as tomorrow's up would, and write nothing. Their output too is checked below for secrets in clear.
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
    const failed: RunResult[] = [];
    for (const [what, settings, message] of cases) {
      writeFileSync(configFile, settings);
      await requestsSince();
      const same = await runStack({ operation: "preview", projectDir, stack, stateDir, configFile, env });
      expect(same.ok, `${what}: ${why(same)}`).toBe(false);
      expect(errorsOf(same).join("\n"), what).toMatch(message);
      const gate = await runStack({
        operation: "preview",
        projectDir,
        stack,
        stateDir,
        configFile,
        env,
        refresh: true,
        expectNoChanges: true,
      });
      expect(gate.ok, `${what}: ${why(gate)}`).toBe(false);
      expect(errorsOf(gate).join("\n"), what).toMatch(message);
      expect(
        (await requestsSince()).filter((r) => !r.startsWith("GET ")),
        what,
      ).toEqual([]);
      failed.push(same, gate);
    }
    // The right settings back: the nightly gate passes, and writes nothing. `preview --json --refresh` prints what
    // `preview --json` does, after the refresh's events.
    writeFileSync(configFile, right);
    await requestsSince();
    await run("preview", ["--json"], { refresh: true, expectNoChanges: true });
    expect((await requestsSince()).filter((r) => !r.startsWith("GET "))).toEqual([]);
    await run("refresh", ["--json"]);
    await run("up", ["--debug"]);
    const state = filesUnder(stateDir);
    await run("destroy", ["--json"]);
    const seen = [
      ...[...failed, ...runs].map((r, i) => ({
        path: `output of run ${i} (${r.operation})`,
        text: r.output,
      })),
      ...[...failed, ...runs].map((r, i) => ({
        path: `diagnostics of run ${i}`,
        text: JSON.stringify(r.diagnostics),
      })),
      ...state,
      ...filesUnder(stateDir),
    ].filter((f) => !plainRecords.includes(f.path) || f.path.endsWith(".yaml")); // the settings file: now secure
    for (const [what, value] of Object.entries(secrets)) {
      const found = seen.filter((f) => f.text.includes(value)).map((f) => f.path);
      expect(found, `${what} in clear`).toEqual([]);
    }
    for (const [what, value] of Object.entries({
      apiToken: secrets.apiToken,
      accessToken: secrets.accessToken,
    })) {
      expect(created?.output, `${what} in clear in the first up's output`).not.toContain(value);
      expect(
        JSON.stringify(created?.diagnostics),
        `${what} in clear in the first up's diagnostics`,
      ).not.toContain(value);
    }
  }, 600_000);
});
