/**
 * Issue 29, item 5: the plugin tarball (`npm run plugin-tarball`, tools/plugin-tarball.mts). The real CLI installs
 * it with `pulumi plugin install resource posthog <version> --file <tarball>` into the test's own PULUMI_HOME
 * (inside the state directory: tools/pulumi.ts `pulumiEnv`), and a Pulumi YAML program whose Pulumi.yaml names no
 * plugin path previews through it against the emulator: the installed plugin is the only posthog plugin the CLI can
 * find (ambient plugins ignored, no download).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify as stringifyYaml } from "yaml";
import { PULUMI_BIN, pulumi, pulumiEnv, pulumiOk, runStack } from "../../tools/pulumi";
import { startTestEmulator, type TestEmulator } from "../support/emulator";
import { NO_POSTHOG_ENV, requireBuilt, root, stackWithSettings } from "./support";

const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
const work = mkdtempSync(join(tmpdir(), "plugin-tarball-"));
const projectDir = join(work, "program");
const stateDir = join(work, "state");
const stack = "dev";
const env: NodeJS.ProcessEnv = NO_POSTHOG_ENV;
let emu: TestEmulator;
/** A Pulumi YAML interpolation of `expr`. */
const ref = (expr: string) => `\${${expr}}`;

beforeAll(async () => {
  requireBuilt([join(PULUMI_BIN, "pulumi-language-yaml")]);
  emu = await startTestEmulator();
}, 60_000);

afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

describe("the plugin tarball", () => {
  it("pulumi plugin install --file installs it, and a YAML program with no plugin path previews through it", async () => {
    // Node 24 runs the .mts directly (type stripping), as `npm run plugin-tarball` does.
    const packed = spawnSync(
      process.execPath,
      [join(root, "tools", "plugin-tarball.mts"), "--out", join(work, "out")],
      {
        cwd: root,
        encoding: "utf8",
      },
    );
    expect(packed.status, `${packed.stdout}${packed.stderr}`).toBe(0);
    const arch = process.arch === "arm64" ? "arm64" : "amd64";
    const tarball = join(
      work,
      "out",
      `pulumi-resource-posthog-v${version}-${process.platform}-${arch}.tar.gz`,
    );
    expect(existsSync(tarball), packed.stdout).toBe(true);

    await pulumiOk(["plugin", "install", "resource", "posthog", version, "--file", tarball], {
      cwd: work,
      stateDir,
      env,
    });
    const home = pulumiEnv(stateDir).PULUMI_HOME as string;
    expect(existsSync(join(home, "plugins", `resource-posthog-v${version}`, "pulumi-resource-posthog"))).toBe(
      true,
    );
    const listed = await pulumiOk(["plugin", "ls", "--json"], { cwd: work, stateDir, env });
    expect(JSON.parse(listed)).toContainEqual(
      expect.objectContaining({ name: "posthog", kind: "resource", version }),
    );

    // A YAML program that names no plugin path: the CLI starts the installed plugin.
    mkdirSync(projectDir, { recursive: true });
    writeFileSync(
      join(projectDir, "Pulumi.yaml"),
      stringifyYaml({
        name: "posthog-tarball",
        runtime: "yaml",
        variables: {
          mia: {
            "fn::invoke": {
              function: "posthog:index:getMember",
              arguments: { email: "mia.member@example.com" },
              return: "userUuid",
            },
          },
        },
        resources: {
          kpis: {
            type: "posthog:index:Dashboard",
            properties: { name: "From the tarball", restrictionLevel: "only-collaborators-can-edit" },
          },
        },
        outputs: { mia: ref("mia") },
      }),
    );
    const configFile = await stackWithSettings({
      projectDir,
      stack,
      stateDir,
      emu,
      env,
      extra: `  posthog:projectId: "${emu.projectId}"\n`,
    });

    await emu.control("DELETE", "/requests");
    const preview = await runStack({ operation: "preview", projectDir, stack, stateDir, env });
    expect(preview.ok, `${JSON.stringify(preview.diagnostics)}\n${preview.output}`).toBe(true);
    expect(preview.steps.map((s) => [s.name, s.type, s.op])).toEqual([
      ["kpis", "posthog:index:Dashboard", "create"],
    ]);
    // The plugin read the emulator (getMember's list of members) and wrote nothing.
    const log = await emu.requests();
    expect(log.some((r) => r.method === "GET" && /\/members\//.test(r.path))).toBe(true);
    expect(log.filter((r) => r.method !== "GET")).toEqual([]);

    // Without the installed plugin, the same preview fails: the tarball's plugin is what served it.
    rmSync(join(home, "plugins"), { recursive: true, force: true });
    const without = await pulumi(
      ["preview", "--stack", stack, "--config-file", configFile, "--non-interactive"],
      { cwd: projectDir, stateDir, env },
    );
    if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`${without.stdout}${without.stderr}\n`);
    expect(without.exitCode).not.toBe(0);
    expect(`${without.stdout}${without.stderr}`).toContain(
      "no resource plugin 'pulumi-resource-posthog' found",
    );
  }, 300_000);
});
