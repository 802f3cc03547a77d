/**
 * `plugin/` of a clone as a Pulumi plugin folder (issue 35, item 3): a PulumiPlugin.yaml with `runtime: nodejs`
 * (pulumi/pulumi sdk/go/common/workspace `PluginProject`, `LoadPluginProject`), which the `pulumi package`
 * commands accept for a folder (pkg/cmd/pulumi/packageinstallation `ensureProjectDir`: a PulumiPlugin file, else an
 * executable named `pulumi-resource-<name>`, where a folder's name is empty) and run through the Node.js language
 * host (its RunPlugin: `node @pulumi/pulumi/cmd/run-plugin <folder> <engine>`, which loads plugin/index.js), and
 * the executable `pulumi-resource-posthog` beside it, which `plugins: providers: [{path: <clone>/plugin}]` starts
 * (test/plugin/yaml.test.ts).
 *
 * Through the real CLI: `pulumi package get-schema <clone>/plugin/pulumi-resource-posthog` prints the schema and
 * `pulumi schema check` passes it; `pulumi package get-schema <clone>/plugin` takes the folder (the language host's
 * `npm install` there changes nothing) and, with a Node.js language host that has RunPlugin, prints the schema. The
 * host `npm run pulumi-cli` builds (sdk v3.68, the last one Go's module proxy serves) checks for node_modules in
 * the folder itself and has no RunPlugin, so there it stops at the install; the RunPlugin step is then run here as
 * Pulumi's current host runs it (its command line), and GetSchema and GetPluginInfo are asked over gRPC.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as provrpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { readPort } from "../../tools/provider-host";
import { killTree, PULUMI_BIN, pulumi } from "../../tools/pulumi";
import { requireBuilt, root } from "./support";

const folder = join(root, "plugin");
const work = mkdtempSync(join(tmpdir(), "plugin-folder-"));
const stateDir = join(work, "state");
const schema = JSON.parse(readFileSync(join(root, "schema.json"), "utf8")) as Record<string, unknown>;
const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
/** The folder's files and their bytes: the language host's `npm install` there must leave them as they are. */
const snapshot = () =>
  Object.fromEntries(readdirSync(folder).map((f) => [f, readFileSync(join(folder, f), "utf8")]));

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("plugin/ as a Pulumi plugin folder", () => {
  it("holds a PulumiPlugin.yaml with runtime nodejs, whose entry starts the built plugin", () => {
    requireBuilt([join(PULUMI_BIN, "pulumi")]);
    const project = parseYaml(readFileSync(join(folder, "PulumiPlugin.yaml"), "utf8")) as {
      runtime: { name: string; options?: Record<string, unknown> };
    };
    expect(project.runtime).toEqual({ name: "nodejs", options: { typescript: false } });
    const pkg = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as Record<string, unknown>;
    expect(pkg).toMatchObject({ private: true, main: "index.js" });
    // No dependencies: the host's `npm install` installs nothing, and the lock file it keeps is the committed one.
    expect(pkg.dependencies).toBeUndefined();
    expect(JSON.parse(readFileSync(join(folder, "package-lock.json"), "utf8"))).toMatchObject({
      name: pkg.name,
      packages: { "": { name: pkg.name } },
    });
  });

  it("pulumi package get-schema <clone>/plugin/pulumi-resource-posthog prints the schema; pulumi schema check passes it", async () => {
    const got = await pulumi(["package", "get-schema", join(folder, "pulumi-resource-posthog")], {
      cwd: work,
      stateDir,
    });
    expect(got.exitCode, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toEqual(schema);
    const file = join(work, "schema.json");
    writeFileSync(file, got.stdout);
    const check = await pulumi(["schema", "check", file], { cwd: work, stateDir });
    expect(check.exitCode, `${check.stdout}${check.stderr}`).toBe(0);
    expect(`${check.stdout}${check.stderr}`.trim()).toBe("");
  }, 120_000);

  it("pulumi package get-schema <clone>/plugin takes the folder as a plugin folder, and leaves it as it was", async () => {
    const before = snapshot();
    const got = await pulumi(["package", "get-schema", folder], { cwd: work, stateDir });
    const printed = `${got.stdout}${got.stderr}`;
    if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`${printed}\n`);
    // The error of a folder without PulumiPlugin.yaml is gone: the CLI had the language host install it.
    expect(printed).not.toContain('to have an executable named "pulumi-resource-"');
    expect(printed).toContain("Installing dependencies...");
    if (got.exitCode === 0) {
      // A language host with RunPlugin (Pulumi's current one) ran the folder.
      expect(JSON.parse(got.stdout)).toEqual(schema);
    } else {
      // The v3.68 host `npm run pulumi-cli` builds: it looks for node_modules in the folder itself.
      expect(printed).toContain("npm install reported success, but node_modules directory is missing");
    }
    expect(snapshot()).toEqual(before);
  }, 120_000);

  it("runs as Pulumi's Node.js language host runs a plugin folder, and serves the schema and the version", async () => {
    // RunPlugin of pulumi-language-nodejs: `node <@pulumi/pulumi/cmd/run-plugin, resolved from the folder>
    // <folder> <engine address>`, in the program's directory. A listening socket stands for the engine.
    const engine: Server = createServer(() => {});
    await new Promise<void>((ok) => engine.listen(0, "127.0.0.1", ok));
    const address = engine.address() as { port: number };
    const runPlugin = require.resolve("@pulumi/pulumi/cmd/run-plugin", { paths: [folder] });
    let child: ChildProcess | undefined;
    try {
      child = spawn(process.execPath, [runPlugin, folder, `127.0.0.1:${address.port}`], {
        cwd: work,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      let stderr = "";
      child.stderr?.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      const port = await readPort(child).catch((e: Error) => {
        throw new Error(`${e.message}\n${stderr}`);
      });
      const client = new provrpc.ResourceProviderClient(
        `127.0.0.1:${port}`,
        grpc.credentials.createInsecure(),
      );
      const served = await new Promise<string>((ok, fail) =>
        client.getSchema(new provproto.GetSchemaRequest(), (e, r) => (e ? fail(e) : ok(r.getSchema()))),
      );
      expect(JSON.parse(served)).toEqual(schema);
      const info = await new Promise<string>((ok, fail) =>
        client.getPluginInfo(new Empty(), (e, r) => (e ? fail(e) : ok(r.getVersion()))),
      );
      expect(info).toBe(version);
      client.close();
    } finally {
      if (child) killTree(child);
      engine.close();
    }
  }, 60_000);
});
