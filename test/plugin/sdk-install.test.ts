/**
 * Issue 35, item 2: each generated SDK installs as the README ("SDKs for each language") says, from a clone.
 *
 * - Node.js: in a new TypeScript program, `npm install` of the tarball `npm run sdk-pack` writes (tools/sdk-pack.mts:
 *   compiled JavaScript and declarations in bin/, no install script, no TypeScript dependency; the npm registry
 *   for @pulumi/pulumi), and the program, with `plugins: providers: [{name: posthog, path: <clone>/plugin}]` in its Pulumi.yaml, runs
 *   preview, up and destroy through the real CLI and its Node.js language host against the emulator; `pulumi about`
 *   lists posthog at package.json's version and the state's default provider is `default_<version>_<download URL>`.
 * - Python: `pip install --no-deps --no-build-isolation <clone>/sdk-gen/python` into a new virtual environment (no
 *   package index here: setuptools and wheel of Debian's Python, seen by a `--system-site-packages` venv, build it;
 *   the venv is made `--without-pip` and runs Debian's pip, seen the same way, as `<venv>/bin/python -m pip`, which
 *   installs into the venv: no pip of its own to install first); `pip show` reports the version, and the installed
 *   pulumi-plugin.json names it. Not run: a program (no `pulumi` package for Python without PyPI).
 * - Go: `go build ./... && go vet ./...` in sdk-gen/go, its module path the folder's (the program:
 *   test/plugin/go.test.ts).
 * - .NET: no .NET SDK here (nor NuGet): the files its build needs are checked (version.txt, the project's version
 *   and a target framework Microsoft supports).
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PULUMI_BIN, pulumi, runStack, savedState } from "../../tools/pulumi";
import { NPM_OFFLINE } from "../package/packed";
import { startTestEmulator, type TestEmulator } from "../support/emulator";
import { NO_POSTHOG_ENV, ops, pluginProject, requireBuilt, root, stackWithSettings, why } from "./support";

const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
const work = mkdtempSync(join(tmpdir(), "sdk-install-"));
/**
 * The default provider's name when a program's resources request `version` and `pluginDownloadURL` (as the
 * generated Node.js and Go SDKs do): `default_<major>_<minor>_<patch>_<URL as a QName>`
 * (pkg/v3@v3.274.1/resource/deploy/providers/provider.go, DefaultName).
 */
const { pluginDownloadURL } = JSON.parse(readFileSync(join(root, "schema.json"), "utf8")) as {
  pluginDownloadURL: string;
};
const defaultProvider = `default_${version.replaceAll(".", "_")}_${pluginDownloadURL.replace("://", "_/")}`;
const sdkDir = join(root, "sdk-gen");
/** Node 24 of the checkout first on PATH: npm's scripts, the language host and the plugin run it. */
const PATH = [PULUMI_BIN, join(root, "node_modules", ".bin"), process.env.PATH ?? ""].join(":");

/** Runs `command args…` in `cwd`; throws with its output when it fails; returns stdout and stderr. */
function sh(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, PATH, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  const out = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  if (r.status !== 0)
    throw new Error(`${command} ${args.join(" ")} failed (${r.error?.message ?? r.status}):\n${out}`);
  return out;
}

// The program's node_modules is thousands of files: on a loaded machine their removal outlasts the default hook
// timeout.
afterAll(() => rmSync(work, { recursive: true, force: true }), 300_000);

describe("the generated Node.js SDK, installed from its tarball, in a TypeScript program (real CLI)", () => {
  const projectDir = join(work, "nodejs");
  const stateDir = join(work, "state");
  const stack = "dev";
  const env: NodeJS.ProcessEnv = { ...NO_POSTHOG_ENV };
  let emu: TestEmulator;
  let configFile: string;

  beforeAll(async () => {
    requireBuilt([join(PULUMI_BIN, "pulumi-language-nodejs"), join(sdkDir, "nodejs", "package.json")]);
    emu = await startTestEmulator();
    mkdirSync(projectDir, { recursive: true });
    // A program as `pulumi new typescript` lays it out; the plugin named by its folder in the clone.
    writeFileSync(join(projectDir, "Pulumi.yaml"), pluginProject("posthog-nodejs-sdk", "nodejs"));
    writeFileSync(
      join(projectDir, "package.json"),
      `${JSON.stringify({ name: "posthog-nodejs-sdk", main: "index.ts", dependencies: { "@pulumi/pulumi": "^3.269.0" } }, null, 2)}\n`,
    );
    writeFileSync(
      join(projectDir, "tsconfig.json"),
      `${JSON.stringify({ compilerOptions: { strict: true, target: "es2020", module: "commonjs", moduleResolution: "node", skipLibCheck: true }, files: ["index.ts"] }, null, 2)}\n`,
    );
    writeFileSync(
      join(projectDir, "index.ts"),
      [
        'import * as posthog from "@pulumi-posthog/posthog";',
        'import * as pulumi from "@pulumi/pulumi";',
        "",
        "const config = new pulumi.Config();",
        'const web = new posthog.Project("web", { name: "Node web", timezone: "Europe/Paris" });',
        'const kpis = new posthog.Dashboard("kpis", { name: config.get("dashboardName") ?? "Node KPIs", projectId: web.id });',
        "export const projectId = web.id;",
        "export const dashboardId = kpis.id;",
        "",
      ].join("\n"),
    );
    // The README's two commands: the packed SDK written into the program's folder, then installed there (from the
    // npm cache where it holds the packages: the registry is asked only for what it lacks; no audit, no funding).
    sh("node", [join(root, "tools", "sdk-pack.mts"), "--out", projectDir], root);
    sh("npm", ["install", ...NPM_OFFLINE, `./pulumi-posthog-posthog-${version}.tgz`], projectDir);
    configFile = await stackWithSettings({
      projectDir,
      stack,
      stateDir,
      emu,
      env,
      configFile: join(work, "Pulumi.dev.yaml"),
    });
  }, 600_000);

  afterAll(async () => {
    await emu?.close();
  });

  it("the installed package is compiled JavaScript with declarations (bin/), builds nothing at install, carries the version, and leaves the clone as it was", () => {
    const pkgDir = join(projectDir, "node_modules", "@pulumi-posthog", "posthog");
    const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
    expect(pkg).toMatchObject({
      version,
      main: "bin/index.js",
      types: "bin/index.d.ts",
      pulumi: { name: "posthog", version },
    });
    for (const file of ["index.js", "index.d.ts", "package.json", "types/input.d.ts"])
      expect(existsSync(join(pkgDir, "bin", file)), file).toBe(true);
    // Nothing runs or compiles where it is installed: no script, no TypeScript among what it needs at run time,
    // no TypeScript source shipped.
    expect(pkg.scripts).toBeUndefined();
    expect(Object.keys(pkg.dependencies)).toEqual(["@pulumi/pulumi"]);
    expect(readdirSync(pkgDir, { recursive: true }).filter((f) => /(?<!\.d)\.ts$/.test(String(f)))).toEqual(
      [],
    );
    // One @pulumi/pulumi: the program's, which the SDK uses too.
    expect(existsSync(join(pkgDir, "node_modules", "@pulumi", "pulumi"))).toBe(false);
    expect(readdirSync(join(sdkDir, "nodejs")).filter((f) => /^(bin|node_modules|.*\.tgz)$/.test(f))).toEqual(
      [],
    );
  });

  it("pulumi about lists posthog at package.json's version", async () => {
    const r = await pulumi(["about", "--json"], { cwd: projectDir, stateDir, env });
    expect(r.exitCode, `${r.stdout}${r.stderr}`).toBe(0);
    const plugins = (JSON.parse(r.stdout) as { plugins?: { name: string; version: string | null }[] })
      .plugins;
    expect(plugins?.find((p) => p.name === "posthog")?.version).toBe(version);
  }, 300_000);

  it("preview plans (the program type-checked against the installed SDK), up creates under default_<version>, destroy removes all", async () => {
    const run = (operation: "preview" | "up" | "destroy", more: NodeJS.ProcessEnv = {}) =>
      runStack({
        operation,
        projectDir,
        stack,
        stateDir,
        configFile,
        env: { ...env, ...more },
        timeoutMs: 600_000,
      });
    await emu.control("DELETE", "/requests");
    // The preview runs the program as `pulumi preview` does: ts-node type-checks it (strict, tsconfig.json) against
    // the installed SDK's declarations, and a type error fails it.
    const preview = await run("preview");
    expect(preview.ok, why(preview)).toBe(true);
    expect(ops(preview)).toEqual({ web: "create", kpis: "create" });
    expect((await emu.requests()).filter((r) => r.method !== "GET")).toEqual([]);

    // The same program, type-checked by the preview: the up only transpiles it (PULUMI_NODEJS_TRANSPILE_ONLY, the
    // switch @pulumi/pulumi's runner reads), and runs it as the preview did.
    const up = await run("up", { PULUMI_NODEJS_TRANSPILE_ONLY: "true" });
    expect(up.ok, why(up)).toBe(true);
    expect(ops(up)).toEqual({ web: "create", kpis: "create" });
    const projectId = Number(up.outputs.projectId);
    const dashboardId = Number(up.outputs.dashboardId);
    const dashboard = await emu.call("GET", `/api/projects/${projectId}/dashboards/${dashboardId}/`);
    expect(dashboard.body).toMatchObject({ name: "Node KPIs" });
    // The state as the backend saved it (what `pulumi stack export` prints).
    const state = savedState({ projectDir, stack, stateDir });
    expect(
      (state.deployment.resources ?? []).map((r) => String(r.urn)).filter((u) => u.includes(":providers:")),
    ).toEqual([`urn:pulumi:${stack}::posthog-nodejs-sdk::pulumi:providers:posthog::${defaultProvider}`]);

    const destroy = await run("destroy");
    expect(destroy.ok, why(destroy)).toBe(true);
    expect(destroy.counts.delete).toBe(2);
    expect((await emu.call("GET", `${emu.org}/projects/${projectId}/`)).status).toBe(404);
  }, 900_000);
});

/**
 * A Python whose packages include pip, setuptools and wheel, which build the SDK when no package index is reachable
 * (`--no-build-isolation`): Debian's (python3-pip, python3-setuptools, python3-wheel), whose venv sees them with
 * `--system-site-packages`; undefined when there is none.
 */
const python = ["/usr/bin/python3", "python3"].find(
  (p) => spawnSync(p, ["-c", "import setuptools, wheel, venv, pip"]).status === 0,
);
/** What pip leaves in the SDK's folder when it builds there (ignored by its .gitignore and by gen-sdk --check). */
const pipLeftovers = () =>
  readdirSync(join(sdkDir, "python")).filter((f) => f === "build" || f.endsWith(".egg-info"));

describe("the generated Python SDK", () => {
  it.skipIf(!python)(
    "pip install --no-deps --no-build-isolation <clone>/sdk-gen/python into a venv; pip show reports the version",
    () => {
      const before = pipLeftovers();
      const venv = join(work, "venv");
      sh(python as string, ["-m", "venv", "--system-site-packages", "--without-pip", venv], work);
      const venvPython = join(venv, "bin", "python");
      const pip = (...args: string[]) => sh(venvPython, ["-m", "pip", ...args], work, { PIP_NO_INDEX: "1" });
      try {
        pip("install", "--no-deps", "--no-build-isolation", join(sdkDir, "python"));
      } finally {
        for (const f of pipLeftovers())
          if (!before.includes(f)) rmSync(join(sdkDir, "python", f), { recursive: true, force: true });
      }
      const show = pip("show", "pulumi_posthog");
      expect(show).toMatch(new RegExp(`^Version: ${version.replaceAll(".", "\\.")}$`, "m"));
      const installed = sh(
        venvPython,
        [
          "-c",
          "import importlib.util as u; print(u.find_spec('pulumi_posthog').submodule_search_locations[0])",
        ],
        work,
      ).trim();
      expect(installed.startsWith(venv)).toBe(true);
      expect(JSON.parse(readFileSync(join(installed, "pulumi-plugin.json"), "utf8"))).toMatchObject({
        name: "posthog",
        version,
      });
    },
    300_000,
  );
});

describe("the generated Go SDK", () => {
  it("is the module its folder's repository path names, with go.mod and go.sum: go build ./... && go vet ./... pass in it", () => {
    const dir = join(sdkDir, "go");
    expect(readFileSync(join(dir, "go.mod"), "utf8")).toMatch(
      /^module github\.com\/pulumi-posthog\/pulumi-posthog\/sdk-gen\/go$/m,
    );
    expect(existsSync(join(dir, "go.sum"))).toBe(true);
    // The module files as they are (no go.sum entry added): what a user's `go build` of the module does.
    const goEnv = { GOFLAGS: "-mod=readonly", GOTOOLCHAIN: "local", CGO_ENABLED: "0" };
    sh("go", ["build", "./..."], dir, goEnv);
    expect(sh("go", ["vet", "./..."], dir, goEnv)).toBe("");
  }, 900_000);
});

describe("the generated .NET SDK (no .NET SDK here: its files are checked, not built)", () => {
  it("has version.txt (Utilities.cs reads it), the project's version, and targets a supported framework (net8.0)", () => {
    const dir = join(sdkDir, "dotnet");
    const project = readFileSync(join(dir, "PulumiPosthog.Posthog.csproj"), "utf8");
    expect(readFileSync(join(dir, "version.txt"), "utf8").trim()).toBe(version);
    expect(readFileSync(join(dir, "Utilities.cs"), "utf8")).toContain('"PulumiPosthog.Posthog.version.txt"');
    expect(project).toContain(`<Version>${version}</Version>`);
    expect(project).toContain("<TargetFramework>net8.0</TargetFramework>");
    expect(project).toContain('<EmbeddedResource Include="version.txt" />');
    expect(JSON.parse(readFileSync(join(dir, "pulumi-plugin.json"), "utf8"))).toMatchObject({ version });
  });
});
