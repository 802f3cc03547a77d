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
    const runPlugin = require.resolve("@pulumi/pulumi/cmd/run-plugin", { paths: [folder] });
    const served = await askPlugin(process.execPath, [runPlugin, folder], { cwd: work });
    expect(JSON.parse(served.schema)).toEqual(schema);
    expect(served.version).toBe(version);
  }, 60_000);
});
