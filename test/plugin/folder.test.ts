import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { PULUMI_BIN, pulumi } from "../../tools/pulumi";
import { askPlugin, requireBuilt, root } from "./support";

const folder = join(root, "plugin");
const work = mkdtempSync(join(tmpdir(), "plugin-folder-"));
const stateDir = join(work, "state");
const schema = JSON.parse(readFileSync(join(root, "schema.json"), "utf8")) as Record<string, unknown>;
const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
/** The folder's files and their bytes: the language host's `npm install` there must leave them as they are. */
const snapshot = () =>
  Object.fromEntries(readdirSync(folder).map((f) => [f, readFileSync(join(folder, f), "utf8")]));

afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * The folder run as Pulumi's Node.js language host runs a plugin folder (its RunPlugin): `node
 * <@pulumi/pulumi/cmd/run-plugin, resolved from the folder> <folder> <engine address>`, in the program's
 * directory, a listening socket standing for the engine. Started once, for the two tests that need it.
 */
let servedOnce: ReturnType<typeof askPlugin> | undefined;
const servedByFolder = () => {
  const runPlugin = require.resolve("@pulumi/pulumi/cmd/run-plugin", { paths: [folder] });
  servedOnce ??= askPlugin(process.execPath, [runPlugin, folder], { cwd: work });
  return servedOnce;
};
/**
 * Whether the Node.js language host of .pulumi-cli runs plugin folders: the one `npm run pulumi-cli` builds (from
 * sdk/v3 v3.68.0, tools/pulumi-cli/langhost/go.mod) answers RunPlugin with "not supported"; one linked with a
 * supported `pulumi` from PATH (3.139 or later) runs them.
 */
const hostRunsPlugins = () =>
  (JSON.parse(readFileSync(join(PULUMI_BIN, "..", "stamp.json"), "utf8")) as { source: string }).source ===
  "path";

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

  it("pulumi package get-schema <clone>/plugin takes the folder as a plugin folder, whose plugin serves the schema, and leaves it as it was", async () => {
    const before = snapshot();
    const got = await pulumi(["package", "get-schema", folder], { cwd: work, stateDir });
    const printed = `${got.stdout}${got.stderr}`;
    if (process.env.SHOW_PLUGIN_RUN) process.stdout.write(`${printed}\n`);
    // The error of a folder without PulumiPlugin.yaml is gone: the CLI had the language host install it.
    expect(printed).not.toContain('to have an executable named "pulumi-resource-"');
    expect(printed).toContain("Installing dependencies...");
    if (hostRunsPlugins()) {
      // A language host with RunPlugin (Pulumi's current one) ran the folder.
      expect(got.exitCode, printed).toBe(0);
      expect(JSON.parse(got.stdout)).toEqual(schema);
    } else {
      // The v3.68 host `npm run pulumi-cli` builds looks for node_modules in the folder itself, and has no
      // RunPlugin: the CLI stops there, so the folder is run as a current host runs it.
      expect(got.exitCode, printed).not.toBe(0);
      expect(printed).toContain("npm install reported success, but node_modules directory is missing");
      expect(JSON.parse((await servedByFolder()).schema)).toEqual(schema);
    }
    expect(snapshot()).toEqual(before);
  }, 120_000);

  it("runs as Pulumi's Node.js language host runs a plugin folder, and serves the schema and the version", async () => {
    const served = await servedByFolder();
    expect(JSON.parse(served.schema)).toEqual(schema);
    expect(served.version).toBe(version);
  }, 60_000);
});
