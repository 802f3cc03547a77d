/**
 * What the tests of programs served by the posthog provider plugin share (test/plugin/*.test.ts,
 * test/docs/examples-yaml.test.ts): the CLI's environment with no POSTHOG_* setting of the caller's, the check that
 * the built plugin and the language host are there, and a stack whose settings reach the plugin only through the
 * stack config, the key set as a secret as the README says.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as provrpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { readPort } from "../../tools/provider-host";
import { ensureStack, killTree, pulumiOk, type RunResult, writeStackSettings } from "../../tools/pulumi";
import type { TestEmulator } from "../support/emulator";

/** The checkout's root. */
export const root = join(__dirname, "..", "..");

/** The CLI's environment: no POSTHOG_* setting of the caller's, so only the stack config reaches the plugin. */
export const NO_POSTHOG_ENV: NodeJS.ProcessEnv = {
  POSTHOG_HOST: undefined,
  POSTHOG_API_KEY: undefined,
  POSTHOG_ORGANIZATION_ID: undefined,
  POSTHOG_PROJECT_ID: undefined,
};

/**
 * Throws naming the first of `files` that is missing (the built plugin is always required) and the commands that
 * make it (default `npm run build` and `npm run pulumi-cli`).
 */
export function requireBuilt(files: string[], how = "`npm run build` and `npm run pulumi-cli`"): void {
  for (const needed of [join(root, "dist", "provider", "adapters", "plugin", "main.js"), ...files])
    if (!existsSync(needed)) throw new Error(`${needed} is missing: run ${how} first`);
}

/**
 * Creates `stack` of the program in `projectDir` on the backend `stateDir` (tools/pulumi.ts `ensureStack`), writes
 * its settings file with the emulator's host and organization (plus `extra`, lines of YAML under `config:`), and
 * sets the key with `pulumi config set --secret posthog:apiKey` (without `--secret` when `plainKey`, as a hurried
 * user types it). Returns the settings file.
 * @throws when the CLI fails, with its output.
 */
export async function stackWithSettings(opts: {
  projectDir: string;
  stack: string;
  stateDir: string;
  emu: TestEmulator;
  env: NodeJS.ProcessEnv;
  configFile?: string;
  extra?: string;
  plainKey?: boolean;
}): Promise<string> {
  const { projectDir, stack, stateDir, emu, env } = opts;
  const configFile = await ensureStack({
    projectDir,
    stack,
    stateDir,
    env,
    ...(opts.configFile ? { configFile: opts.configFile } : {}),
  });
  writeStackSettings(
    configFile,
    `config:\n  posthog:host: ${emu.url}\n  posthog:organizationId: ${emu.organizationId}\n${opts.extra ?? ""}`,
  );
  await pulumiOk(
    [
      "config",
      "set",
      ...(opts.plainKey ? [] : ["--secret"]),
      "posthog:apiKey",
      emu.apiKey,
      "--stack",
      stack,
      "--config-file",
      configFile,
    ],
    { cwd: projectDir, stateDir, env },
  );
  return configFile;
}

/** A run's diagnostics and output, for an assertion's message. */
export const why = (r: RunResult) => `${JSON.stringify(r.diagnostics, null, 1)}\n${r.output}`;

/**
 * The YAML package declaration docs/installation-configuration.md gives (`sdks/posthog.yaml` beside Pulumi.yaml):
 * package.json's version and schema.json's `pluginDownloadURL` under `downloadUrl`, the key the YAML language host
 * reads (pulumi/pulumi-yaml pkg/pulumiyaml/packages/file.go, `PackageDecl`), so that the CLI fetches a missing
 * plugin from the GitHub release, not get.pulumi.com. The YAML text, each key on a line.
 */
export function yamlDeclaration(): string {
  const read = (file: string) => JSON.parse(readFileSync(join(root, file), "utf8"));
  const { version } = read("package.json") as { version: string };
  const { pluginDownloadURL } = read("schema.json") as { pluginDownloadURL: string };
  return `packageDeclarationVersion: 1\nname: posthog\nversion: ${version}\ndownloadUrl: ${pluginDownloadURL}\n`;
}

/**
 * The head of a Pulumi.yaml whose program gets the posthog provider from this repository's plugin folder
 * (`plugins: providers:` with its path, as a reader's project names a plugin not installed): `name`, `runtime`
 * (default `yaml`), then those lines; the caller appends the rest (`resources:`, `config:` …).
 */
export const pluginProject = (name: string, runtime = "yaml") =>
  `name: ${name}\nruntime: ${runtime}\nplugins:\n  providers:\n    - name: posthog\n      path: ${join(root, "plugin")}\n`;

/**
 * From tools/pulumi.ts: `ops`, each step's resource name → its operation (`create`, `same`, …), and `refreshOf`,
 * the refresh part of a run with `--refresh`.
 */
export { opsByName as ops, refreshOf } from "../../tools/pulumi";

/**
 * Starts a plugin as the engine does, `command ...args <engine address>` (a listening socket stands for the
 * engine), reads the port it prints, asks its version (GetPluginInfo) and its schema (GetSchema, the JSON text)
 * over gRPC, and stops it with its children.
 * @throws when it prints no port (with its stderr) or a call fails.
 */
export async function askPlugin(
  command: string,
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ version: string; schema: string }> {
  const engine: Server = createServer(() => {});
  await new Promise<void>((ok) => engine.listen(0, "127.0.0.1", ok));
  const { port: enginePort } = engine.address() as { port: number };
  let child: ChildProcess | undefined;
  try {
    child = spawn(command, [...args, `127.0.0.1:${enginePort}`], {
      cwd: opts.cwd,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      ...(opts.env ? { env: opts.env } : {}),
    });
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const port = await readPort(child).catch((e: Error) => {
      throw new Error(`${e.message}\n${stderr}`);
    });
    const client = new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    try {
      const version = await new Promise<string>((ok, fail) =>
        client.getPluginInfo(new Empty(), (e, r) => (e ? fail(e) : ok(r.getVersion()))),
      );
      const schema = await new Promise<string>((ok, fail) =>
        client.getSchema(new provproto.GetSchemaRequest(), (e, r) => (e ? fail(e) : ok(r.getSchema()))),
      );
      return { version, schema };
    } finally {
      client.close();
    }
  } finally {
    if (child) killTree(child);
    engine.close();
  }
}
