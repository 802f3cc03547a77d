import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureStack, pulumiOk, type RunResult, runStack, writeStackSettings } from "../../tools/pulumi";
import { startTestEmulator, type TestEmulator } from "../support/emulator";
import { filesUnder } from "../support/files";
import { NO_POSTHOG_ENV, requireBuilt, root, why } from "./support";

// Issue 34, point 3 (a): through the provider plugin, a key set as plain stack config (`pulumi config set
// posthog:apiKey …` without --secret) used to run with no warning and be stored in clear in the state (the default
// provider's inputs), although schema.json marks it secret. The plugin's CheckConfig now returns it as a secret:
// the engine stores it encrypted (it cannot also warn as the dynamic SDK does: CheckConfig gets the settings without their secret marks). And no secret output (a Project's apiToken, a sharing's accessToken)
// may appear in clear in what `up --json`, `preview --json`, `refresh --json`, `destroy --json` or `up --debug`
// print, nor in any file of the backend. A Pulumi YAML program, the real CLI, the emulator.
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
    `name: posthog-secrets
runtime: yaml
plugins:
  providers:
    - name: posthog
      path: ${join(root, "plugin")}
resources:
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

describe("secrets through the provider plugin (real Pulumi CLI, YAML)", () => {
  it("a key set as plain stack config is stored encrypted; no secret is in clear in any --json or --debug output, nor in the backend", async () => {
    // The key in plain text, as a hurried user types it (`pulumi config set posthog:apiKey …` writes this line).
    const configFile = await ensureStack({ projectDir, stack, stateDir, env });
    writeStackSettings(
      configFile,
      `config:\n  posthog:host: ${emu.url}\n  posthog:organizationId: ${emu.organizationId}\n  posthog:apiKey: ${emu.apiKey}\n`,
    );
    const runs: RunResult[] = [];
    const run = async (operation: "up" | "preview" | "refresh" | "destroy", args: string[]) => {
      const r = await runStack({ operation, projectDir, stack, stateDir, configFile, env, args });
      expect(r.ok, why(r)).toBe(true);
      runs.push(r);
      return r;
    };
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

    // `preview --json --refresh` below prints what `preview --json` does, after the refresh's events.
    await run("refresh", ["--json"]);
    await run("up", ["--debug"]);
    await run("preview", ["--json", "--refresh"]);
    const state = filesUnder(stateDir);
    await run("destroy", ["--json"]);
    const seen = [
      ...runs.map((r, i) => ({ path: `output of run ${i} (${r.operation})`, text: r.output })),
      ...runs.map((r, i) => ({ path: `diagnostics of run ${i}`, text: JSON.stringify(r.diagnostics) })),
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
