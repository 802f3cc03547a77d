import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PULUMI_BIN, pulumi } from "../../tools/pulumi";
import { askPlugin, NO_POSTHOG_ENV, pluginProject, requireBuilt, root, yamlDeclaration } from "./support";

const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
const work = mkdtempSync(join(tmpdir(), "plugin-versions-"));
const sdk = (...parts: string[]) => readFileSync(join(root, "sdk-gen", ...parts), "utf8");
const json = (text: string) => JSON.parse(text) as Record<string, unknown>;
/** The first group of `pattern` in `text`, or a note that it is not there (so the comparison names the file). */
const grab = (text: string, pattern: RegExp) => pattern.exec(text)?.[1] ?? `no match of ${pattern}`;
/** Go's settings for the Go program: the module files as they are, the Go installed, no cgo. */
const goEnv = { GOFLAGS: "-mod=readonly", GOTOOLCHAIN: "local", CGO_ENABLED: "0" };

/** `pulumi about --json` in `projectDir`: the plugins it lists, `{name: version}` (null when it lists none). */
async function aboutPlugins(projectDir: string, stateDir: string, env: NodeJS.ProcessEnv = {}) {
  const r = await pulumi(["about", "--json"], { cwd: projectDir, stateDir, env, timeoutMs: 600_000 });
  expect(r.exitCode, `${r.stdout}${r.stderr}`).toBe(0);
  const about = JSON.parse(r.stdout) as { plugins?: { name: string; version: string | null }[] };
  return Object.fromEntries((about.plugins ?? []).map((p) => [p.name, p.version]));
}

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe(`one version everywhere: package.json's (${version})`, () => {
  it("schema.json and every generated SDK carry it", () => {
    const found: Record<string, unknown> = {
      "schema.json version": json(readFileSync(join(root, "schema.json"), "utf8")).version,
      "nodejs/package.json version": json(sdk("nodejs", "package.json")).version,
      "nodejs/package.json pulumi.version": (
        json(sdk("nodejs", "package.json")).pulumi as { version?: string }
      )?.version,
      "python/setup.py VERSION": grab(sdk("python", "setup.py"), /^VERSION = "([^"]*)"/m),
      "python/pulumi_posthog/pulumi-plugin.json version": json(
        sdk("python", "pulumi_posthog", "pulumi-plugin.json"),
      ).version,
      "dotnet/version.txt": sdk("dotnet", "version.txt").trim(),
      "dotnet/PulumiPosthog.Posthog.csproj <Version>": grab(
        sdk("dotnet", "PulumiPosthog.Posthog.csproj"),
        /<Version>([^<]*)<\/Version>/,
      ),
      "dotnet/pulumi-plugin.json version": json(sdk("dotnet", "pulumi-plugin.json")).version,
      "go/pulumi-plugin.json version": json(sdk("go", "pulumi-plugin.json")).version,
      "go/posthog/pulumi-plugin.json version": json(sdk("go", "posthog", "pulumi-plugin.json")).version,
      // The version the Go SDK's resources, functions and provider register with (PkgResourceDefaultOpts, …).
      "go/posthog/internal/pulumiUtilities.go": [
        ...sdk("go", "posthog", "internal", "pulumiUtilities.go").matchAll(/semver\.MustParse\("([^"]*)"\)/g),
      ].map((m) => m[1]),
    };
    expect(found).toEqual({
      ...Object.fromEntries(Object.keys(found).map((k) => [k, version])),
      "go/posthog/internal/pulumiUtilities.go": [version, version],
    });
  });

  it("the plugin reports it in GetPluginInfo and GetSchema (gRPC, the executable started as the engine does)", async () => {
    requireBuilt([]);
    // `pulumi-resource-posthog <engine address>`, with the Node.js of node_modules/.bin first on PATH.
    const served = await askPlugin(join(root, "plugin", "pulumi-resource-posthog"), [], {
      cwd: work,
      env: { ...process.env, PATH: `${join(root, "node_modules", ".bin")}:${process.env.PATH ?? ""}` },
    });
    expect({ getPluginInfo: served.version, getSchema: json(served.schema).version }).toEqual({
      getPluginInfo: version,
      getSchema: version,
    });
  }, 60_000);
});

describe("what the CLI sees: pulumi about (YAML, Go)", () => {
  const stateDir = join(work, "state");
  const env: NodeJS.ProcessEnv = { ...goEnv, ...NO_POSTHOG_ENV };

  beforeAll(() => {
    requireBuilt([join(PULUMI_BIN, "pulumi-language-yaml"), join(PULUMI_BIN, "pulumi-language-go")]);
  });

  // That `up` of such a program registers the default provider as default_<version>_<download URL>:
  // test/plugin/yaml.test.ts.
  it("a YAML program with the package declared (sdks/posthog.yaml, as the README says): about lists posthog at the version", async () => {
    const projectDir = join(work, "yaml");
    mkdirSync(join(projectDir, "sdks"), { recursive: true });
    writeFileSync(
      join(projectDir, "Pulumi.yaml"),
      [
        pluginProject("posthog-yaml-version").trimEnd(),
        "resources:",
        "  web:",
        "    type: posthog:index:Project",
        "    properties:",
        "      name: YAML version",
        "",
      ].join("\n"),
    );
    writeFileSync(join(projectDir, "sdks", "posthog.yaml"), yamlDeclaration());
    expect((await aboutPlugins(projectDir, stateDir, env)).posthog).toBe(version);
  }, 600_000);

  it("the Go program (test/plugin/go-program): about lists posthog at the version (go/pulumi-plugin.json)", async () => {
    const projectDir = join(root, "test", "plugin", "go-program");
    expect((await aboutPlugins(projectDir, stateDir, env)).posthog).toBe(version);
  }, 600_000);
});
