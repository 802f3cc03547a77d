/**
 * The plugin from `plugin/` on a Node.js older than 22.19 (issue 35, item 7): plugin/pulumi-resource-posthog runs
 * the `node` first on PATH, and there loading the providers fails (undici 8). The plugin used to exit before
 * printing its port, and the CLI wrapped the package's message in "Detected that …/pulumi-resource-posthog exited
 * prematurely. This is *always* a bug in the provider" with a stack trace. Now it serves a refusing plugin
 * (provider/adapters/plugin/main.ts), and what the user sees is the provider's one line, as a check failure of the
 * provider.
 *
 * Runs a Pulumi YAML program naming `<clone>/plugin` through the real CLI with the machine's own older `node` first
 * on PATH (the first `node` on the system PATH older than 22.19, e.g. /usr/bin/node v20); skipped where there is
 * none. No request reaches PostHog: the host setting is a closed port.
 */
import { spawnSync } from "node:child_process";
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify as stringifyYaml } from "yaml";
import { isSupportedNodeVersion } from "../../provider/client/node-version";
import { ensureStack, PULUMI_BIN, pulumi, pulumiOk, writeStackSettings } from "../../tools/pulumi";
import { NO_POSTHOG_ENV, requireBuilt, root } from "./support";

/** The first `node` on the system PATH (and the usual places) older than the package's floor, with its version. */
function olderNode(): { path: string; version: string } | undefined {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/local/bin", "/usr/bin", "/bin"];
  for (const dir of dirs) {
    const path = join(dir, "node");
    try {
      accessSync(path, constants.X_OK);
    } catch {
      continue;
    }
    const version = spawnSync(path, ["--version"], { encoding: "utf8" }).stdout.trim().replace(/^v/, "");
    if (version && !isSupportedNodeVersion(version)) return { path, version };
  }
  return undefined;
}

const old = olderNode();
const work = mkdtempSync(join(tmpdir(), "plugin-old-node-"));
const stateDir = join(work, "state");
const projectDir = join(work, "program");
const stack = "dev";

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.skipIf(old === undefined)(
  `the plugin from plugin/ on an older Node.js (${old?.path} ${old?.version})`,
  () => {
    it("fails with the provider's one line: no 'exited prematurely', no stack trace", async () => {
      requireBuilt([join(PULUMI_BIN, "pulumi-language-yaml")]);
      const { path: nodePath, version } = old as { path: string; version: string };
      mkdirSync(projectDir, { recursive: true });
      writeFileSync(
        join(projectDir, "Pulumi.yaml"),
        stringifyYaml({
          name: "posthog-old-node",
          runtime: "yaml",
          plugins: { providers: [{ name: "posthog", path: join(root, "plugin") }] },
          resources: { web: { type: "posthog:index:Project", properties: { name: "Old Node.js" } } },
        }),
      );
      const env = NO_POSTHOG_ENV;
      const configFile = await ensureStack({ projectDir, stack, stateDir, env });
      writeStackSettings(
        configFile,
        "config:\n  posthog:host: http://127.0.0.1:9\n  posthog:organizationId: org\n",
      );
      await pulumiOk(
        [
          "config",
          "set",
          "--secret",
          "posthog:apiKey",
          "phx_old_node",
          "--stack",
          stack,
          "--config-file",
          configFile,
        ],
        { cwd: projectDir, stateDir, env },
      );

      // PATH: the CLI and the YAML language host, then the older node's folder (and the shell's tools).
      const bin = join(work, "bin");
      mkdirSync(bin, { recursive: true });
      for (const tool of ["pulumi", "pulumi-language-yaml"])
        symlinkSync(join(PULUMI_BIN, tool), join(bin, tool));
      const path = [bin, dirname(nodePath), "/usr/bin", "/bin"].filter((d) => existsSync(d)).join(delimiter);
      const run = await pulumi(
        ["preview", "--stack", stack, "--config-file", configFile, "--non-interactive", "--color", "never"],
        { cwd: projectDir, stateDir, env, path },
      );
      const printed = `${run.stdout}${run.stderr}`;
      if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`${printed}\n`);
      expect(run.exitCode).not.toBe(0);
      expect(printed).not.toContain("exited prematurely");
      expect(printed).not.toContain("*always* a bug");
      expect(printed).not.toMatch(/^\s+at .*\(.*:\d+:\d+\)$/m);
      // The one line, under the provider's resource in the diagnostics.
      const line = printed
        .split("\n")
        .find((l) =>
          l.trim().startsWith("error: pulumi:providers:posthog resource 'default' has a problem:"),
        );
      expect(line, printed).toBeDefined();
      expect(line).toContain(`pulumi-posthog needs Node.js >= 22.19 but runs on ${version} (${nodePath}).`);
      expect(line).toContain("install Node.js >= 22.19 and put it first on PATH");
      expect(line).toContain("Or install the plugin's tarball, which brings its own Node.js");
      expect(
        line
          ?.trim()
          .endsWith(
            "--file <tarball>`). (see docs/troubleshooting/installation.md#pulumi-posthog-needs-nodejs)",
          ),
      ).toBe(true);
    }, 120_000);
  },
);
