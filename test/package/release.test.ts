/**
 * Issue 35, item 8: the release workflow, .github/workflows/release.yml (CONTRIBUTING.md, "Releasing"). What can run
 * here runs: actionlint (built from its Go module by tools/actionlint.mts) on every workflow of the repository and of
 * examples/ci; the workflow's own shell steps that need no GitHub (the tag/version gate, the release notes) with
 * bash, as the runner runs them; `npm publish --dry-run` of both npm packages (the root package from the tarball
 * `npm pack` makes of a source-only copy, test/package/packed.ts; the generated Node.js SDK); the sdist of the
 * Python SDK. The rest is checked against the repository: every `npm run` script, path, module path and package
 * name the workflow names exists and agrees, the actions are pinned to versions, and nothing is published before the
 * tests pass and the GitHub release holds the plugin tarballs.
 */
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  globSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { packedTarball, root, sh, toolPath } from "./packed";

type Step = {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  "working-directory"?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
};
type Job = {
  name?: string;
  needs?: string | string[];
  permissions?: Record<string, string>;
  environment?: { name: string; url?: string } | string;
  env?: Record<string, string>;
  steps: Step[];
};
type Workflow = {
  on: Record<string, unknown>;
  permissions?: Record<string, string>;
  env?: Record<string, string>;
  jobs: Record<string, Job>;
};

const workflowFile = join(root, ".github", "workflows", "release.yml");
const text = readFileSync(workflowFile, "utf8");
const workflow = parse(text) as Workflow;
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  name: string;
  version: string;
  scripts: Record<string, string>;
  bin: Record<string, string>;
};
const version = pkg.version;
const work = mkdtempSync(join(tmpdir(), "release-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const job = (name: string): Job => {
  const j = workflow.jobs[name];
  if (!j) throw new Error(`release.yml has no job ${name}`);
  return j;
};
const needs = (j: Job): string[] => (j.needs === undefined ? [] : [j.needs].flat());
const allSteps = (): [string, Step][] =>
  Object.entries(workflow.jobs).flatMap(([name, j]) => j.steps.map((s): [string, Step] => [name, s]));
/** The step of `jobName` whose name or id is `key`. */
const step = (jobName: string, key: string): Step => {
  const s = job(jobName).steps.find((x) => x.id === key || x.name === key);
  if (!s?.run) throw new Error(`release.yml: job ${jobName} has no run step ${key}`);
  return s;
};

/** `node tools/actionlint.mts args…` (Node 24, as `npm run actionlint`): its exit status and output. */
function actionlint(args: string[]): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [join(root, "tools", "actionlint.mts"), ...args], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/**
 * Runs a `run:` script of the workflow as the runner does (`bash --noprofile --norc -eo pipefail`) in `cwd`, with
 * `env` and a fresh $GITHUB_OUTPUT; returns its status, output and the outputs it wrote.
 */
function runStep(script: string, cwd: string, env: Record<string, string>) {
  const scriptFile = join(cwd, ".step.sh");
  const outputFile = join(cwd, ".github-output");
  writeFileSync(scriptFile, script);
  writeFileSync(outputFile, "");
  const r = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", scriptFile], {
    cwd,
    encoding: "utf8",
    env: { PATH: toolPath, HOME: process.env.HOME ?? cwd, GITHUB_OUTPUT: outputFile, ...env },
  });
  const outputs = Object.fromEntries(
    readFileSync(outputFile, "utf8")
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
  return { status: r.status, output: `${r.stdout}${r.stderr}`, outputs };
}

describe("actionlint (tools/actionlint.mts, Go module tools/pulumi-cli/actionlint)", () => {
  // shellcheck is turned off: it is on some machines and not others, in different versions (the workflows were
  // checked with shellcheck 0.9.0 by hand). The first run on a machine builds actionlint: 20 s to 2 minutes cold.
  it("passes .github/workflows/*.yml and examples/ci/workflows/*.yml", () => {
    const r = actionlint(["-shellcheck=", "-pyflakes="]);
    expect(r.output).not.toMatch(/\[[a-z-]+\]$/m);
    expect(r.status, r.output).toBe(0);
  }, 600_000);

  it("fails a release workflow with a mistake, naming the file, the line and the rule", () => {
    const broken = join(work, "release.yml");
    writeFileSync(broken, text.replace("needs: [test, github-release]", "needs: [test, github-releases]"));
    const r = actionlint(["-shellcheck=", "-pyflakes=", broken]);
    expect(r.status, r.output).toBe(1);
    expect(r.output).toMatch(/release\.yml:\d+:\d+: .*"github-releases".*\[job-needs\]/);
  }, 300_000);
});

describe("the version gate (job test, step version), run with bash", () => {
  const script = step("test", "version").run as string;
  const changelog = readFileSync(join(root, "CHANGELOG.md"), "utf8");
  /** A folder with package.json at `v` and `changelogText`, where the step runs. */
  const checkout = (v: string, changelogText: string): string => {
    const dir = mkdtempSync(join(work, "gate-"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: pkg.name, version: v }));
    writeFileSync(join(dir, "CHANGELOG.md"), changelogText);
    return dir;
  };

  it(`passes the tag v${version} of this checkout, for npm's latest`, () => {
    const r = runStep(script, checkout(version, changelog), { TAG: `v${version}` });
    expect(r.status, r.output).toBe(0);
    expect(r.outputs).toEqual({ version, "npm-tag": "latest", prerelease: "false" });
  });

  it("fails a tag that is not package.json's version, saying what to change, with no output", () => {
    const r = runStep(script, checkout(version, changelog), { TAG: "v9.9.9" });
    expect(r.status).toBe(1);
    expect(r.output).toContain(`::error::the tag v9.9.9 is not v + package.json's version (${version})`);
    expect(r.output).toContain('set "version": "9.9.9" in package.json');
    expect(r.output).toContain(`push v${version}`);
    expect(r.outputs).toEqual({});
  });

  it("fails when CHANGELOG.md has no section for the version (a later version's or a prerelease's does not count)", () => {
    const without = changelog.replace(`## [${version}]`, `## [${version}-rc.1]`);
    expect(without).not.toBe(changelog);
    const r = runStep(script, checkout(version, without), { TAG: `v${version}` });
    expect(r.status).toBe(1);
    expect(r.output).toContain(`CHANGELOG.md has no section "## [${version}] - <date>": rename [Unreleased]`);
  });

  it("gives a prerelease npm's `next` tag and marks the GitHub release a prerelease", () => {
    const pre = "0.2.0-alpha.1";
    const r = runStep(script, checkout(pre, `${changelog}\n## [${pre}] - 2026-12-01\n`), { TAG: `v${pre}` });
    expect(r.status, r.output).toBe(0);
    expect(r.outputs).toEqual({ version: pre, "npm-tag": "next", prerelease: "true" });
  });
});

describe("the release notes (job plugin), run with bash", () => {
  it(`are CHANGELOG.md's section of ${version}, up to the next version`, () => {
    const dir = mkdtempSync(join(work, "notes-"));
    mkdirSync(join(dir, "dist"));
    cpSync(join(root, "CHANGELOG.md"), join(dir, "CHANGELOG.md"));
    const r = runStep(step("plugin", "release notes from CHANGELOG.md").run as string, dir, {
      VERSION: version,
    });
    expect(r.status, r.output).toBe(0);
    const notes = readFileSync(join(dir, "dist", "notes.md"), "utf8");
    const changelog = readFileSync(join(root, "CHANGELOG.md"), "utf8");
    const start = changelog.indexOf("\n", changelog.indexOf(`## [${version}]`)) + 1;
    const end = changelog.indexOf("\n## ", start);
    expect(notes.trim().length).toBeGreaterThan(0);
    expect(notes).toBe(changelog.slice(start, end === -1 ? undefined : end + 1));
  });
});

describe("the plugin tarballs' checksums (job plugin), run with bash on tarballs of the names it expects", () => {
  const script = step("plugin", "checksums, and every tarball schema.json's pluginDownloadURL needs")
    .run as string;
  /** The os-arch pairs the step requires. */
  const required = /for platform in ([\w -]+); do/.exec(script)?.[1]?.trim().split(/\s+/) ?? [];
  /** A folder of small tarballs `pulumi-resource-posthog-v<version>-<platform>.tar.gz`, each holding the executable. */
  const release = (platforms: string[]): string => {
    const dir = mkdtempSync(join(work, "release-"));
    const stage = mkdtempSync(join(work, "stage-"));
    writeFileSync(join(stage, "pulumi-resource-posthog"), "#!/bin/sh\n");
    mkdirSync(join(stage, "node", "bin"), { recursive: true });
    writeFileSync(join(stage, "node", "bin", "node"), "");
    for (const p of platforms)
      sh(
        "tar",
        [
          "-czf",
          join(dir, `pulumi-resource-posthog-v${version}-${p}.tar.gz`),
          "-C",
          stage,
          "pulumi-resource-posthog",
          "node/bin/node",
        ],
        stage,
      );
    return dir;
  };

  it("requires the os/arch pairs tools/plugin-tarball.mts always makes with --all", () => {
    const tool = readFileSync(join(root, "tools", "plugin-tarball.mts"), "utf8");
    const always = [...tool.matchAll(/\{ os: "(\w+)", arch: "(\w+)", [^}]*optional: false \}/g)].map(
      (m) => `${m[1]}-${m[2]}`,
    );
    expect(always.length).toBeGreaterThanOrEqual(3);
    expect(required.sort()).toEqual(always.sort());
  });

  it("writes pulumi-resource-posthog-v<version>-checksums.txt, which sha256sum -c verifies, the optional windows one included", () => {
    const dir = release([...required, "windows-amd64"]);
    const r = runStep(script, dir, { VERSION: version });
    expect(r.status, r.output).toBe(0);
    const sums = `pulumi-resource-posthog-v${version}-checksums.txt`;
    const lines = readFileSync(join(dir, sums), "utf8").trim().split("\n");
    expect(lines).toHaveLength(required.length + 1);
    for (const line of lines)
      expect(line).toMatch(/^[0-9a-f]{64} {2}pulumi-resource-posthog-v[\w.-]+\.tar\.gz$/);
    expect(sh("sha256sum", ["-c", sums], dir)).toContain(
      `pulumi-resource-posthog-v${version}-linux-arm64.tar.gz: OK`,
    );
  });

  it("fails on a tarball without its Node.js runtime (node/bin/node)", () => {
    const dir = release(required);
    const stage = mkdtempSync(join(work, "stage-"));
    writeFileSync(join(stage, "pulumi-resource-posthog"), "#!/bin/sh\n");
    const file = join(dir, `pulumi-resource-posthog-v${version}-linux-amd64.tar.gz`);
    sh("tar", ["-czf", file, "-C", stage, "pulumi-resource-posthog"], stage);
    const r = runStep(script, dir, { VERSION: version });
    expect(r.status).not.toBe(0);
    expect(r.output).toContain("node/bin/node");
    expect(existsSync(join(dir, `pulumi-resource-posthog-v${version}-checksums.txt`))).toBe(false);
  });

  it("fails naming the tarball that is missing", () => {
    const dir = release(required.filter((p) => p !== "linux-arm64"));
    const r = runStep(script, dir, { VERSION: version });
    expect(r.status).toBe(1);
    expect(r.output).toContain(
      `::error::npm run plugin-tarball -- --all made no pulumi-resource-posthog-v${version}-linux-arm64.tar.gz`,
    );
  });
});

describe("the Python SDK's sdist (job sdk-python; setuptools of this machine, python -m build on the runner)", () => {
  const hasSetuptools = spawnSync("python3", ["-c", "import setuptools"]).status === 0;
  it.skipIf(!hasSetuptools)(
    `is pulumi_posthog-${version}.tar.gz, with the README the workflow copies`,
    () => {
      const dir = mkdtempSync(join(work, "python-"));
      cpSync(join(root, "sdk-gen", "python"), join(dir, "sdk-gen", "python"), { recursive: true });
      const build =
        job("sdk-python").steps.find((s) => s.name === "build the sdist and the wheel")?.run ?? "";
      const copy = build.split("\n").find((l) => l.trim().startsWith("cp ")) ?? "";
      expect(copy).toContain("sdk-gen/python/README.md");
      sh("bash", ["-c", copy], dir);
      sh("python3", ["setup.py", "-q", "sdist", "-d", join(dir, "out")], join(dir, "sdk-gen", "python"));
      const sdist = join(dir, "out", `pulumi_posthog-${version}.tar.gz`);
      expect(existsSync(sdist)).toBe(true);
      const info = sh("tar", ["-xzOf", sdist, `pulumi_posthog-${version}/PKG-INFO`], dir);
      expect(info).toMatch(new RegExp(`^Version: ${version.replace(/\./g, "\\.")}$`, "m"));
      const readme = readFileSync(
        join(root, "sdk-gen", "python", "pulumi_posthog", "README.md"),
        "utf8",
      ).trim();
      expect(info).toContain(readme.split("\n")[0]);
    },
  );
});

describe("what the workflow names exists and agrees", () => {
  it("runs on a tag v* only, with read-only permissions unless a job needs more", () => {
    expect(workflow.on).toEqual({ push: { tags: ["v*"] } });
    expect(workflow.permissions).toEqual({ contents: "read" });
    const writers = Object.entries(workflow.jobs).filter(([, j]) => j.permissions?.contents === "write");
    expect(writers.map(([n]) => n).sort()).toEqual(["github-release", "sdk-go"]);
    const oidc = Object.entries(workflow.jobs).filter(([, j]) => j.permissions?.["id-token"] === "write");
    expect(oidc.map(([n]) => n).sort()).toEqual(["npm", "sdk-nodejs", "sdk-python"]);
  });

  it("tests first (the version gate, npm ci, npm test); the release waits for the tarballs; every registry for the release", () => {
    const runs = job("test").steps.map((s) => s.id ?? s.run ?? "");
    expect(runs.indexOf("version")).toBeLessThan(runs.indexOf("npm ci"));
    expect(runs.indexOf("npm ci")).toBeLessThan(runs.indexOf("npm test"));
    expect(runs.indexOf("npm ci")).toBeGreaterThan(-1);
    expect(needs(job("plugin"))).toEqual(["test"]);
    expect(needs(job("github-release")).sort()).toEqual(["plugin", "test"]);
    for (const name of ["npm", "sdk-nodejs", "sdk-python", "sdk-dotnet", "sdk-go"])
      expect(needs(job(name)), name).toContain("github-release");
    expect(Object.keys(workflow.jobs).sort()).toEqual(
      ["github-release", "npm", "plugin", "sdk-dotnet", "sdk-go", "sdk-nodejs", "sdk-python", "test"].sort(),
    );
  });

  it("pins every action to a version and uses only the documented secrets", () => {
    for (const [jobName, s] of allSteps().filter(([, s]) => s.uses))
      expect(s.uses, `${jobName}: ${s.uses}`).toMatch(/^[\w.-]+\/[\w.-]+@v\d+(\.\d+){0,2}$/);
    const secrets = [...text.matchAll(/\$\{\{\s*secrets\.([A-Za-z_]+)\s*\}\}/g)].map((m) => m[1]);
    expect([...new Set(secrets)].sort()).toEqual(["GITHUB_TOKEN", "NPM_TOKEN", "NUGET_API_KEY"]);
  });

  it("every `npm run X` is a script of the package.json where it runs", () => {
    let count = 0;
    for (const [jobName, s] of allSteps()) {
      const dir = join(root, s["working-directory"] ?? ".");
      // Commands only: a message (`echo …`) may name a script of another folder.
      const commands = (s.run ?? "")
        .split("\n")
        .filter((l) => !/^\s*echo /.test(l))
        .join("\n");
      for (const m of commands.matchAll(/\bnpm run (?:--silent )?([\w:.-]+)/g)) {
        const scripts = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { scripts?: object })
          .scripts;
        expect(Object.keys(scripts ?? {}), `${jobName}: npm run ${m[1]} in ${dir}`).toContain(m[1]);
        count++;
      }
    }
    expect(count).toBeGreaterThanOrEqual(1); // plugin-tarball
  });

  it("every path of the repository it names exists (dist/ and what it copies are what its steps make)", () => {
    const named = new Set<string>();
    const made = new Set<string>();
    for (const [, s] of allSteps()) {
      for (const m of (s.run ?? "").matchAll(/\bcp \S+ (\S+)/g)) made.add(m[1] as string);
      const texts = [s.run ?? "", s["working-directory"] ?? "", ...Object.values(s.with ?? {}).map(String)];
      for (const t of texts)
        for (const m of t.matchAll(
          /(?:^|[\s"'=(])((?:sdk-gen|tools|plugin|examples|\.ci)\/[\w.*/-]*)(?![\w.*/$-])/g,
        ))
          named.add((m[1] as string).replace(/\/$/, ""));
    }
    expect(named.size).toBeGreaterThanOrEqual(5);
    for (const path of named) {
      if (made.has(path)) continue;
      if (path.includes("*")) expect(globSync(path, { cwd: root }), path).not.toHaveLength(0);
      else expect(existsSync(join(root, path)), path).toBe(true);
    }
  });

  it("the Go tag is the module path of sdk-gen/go/go.mod (a tag <folder>/v<version> versions that module)", () => {
    const s = step(
      "sdk-go",
      "tag the Go SDK's folder (a tag sdk-gen/go/v<version> versions the module in sdk-gen/go)",
    );
    const required = /"\$module" != "([^"]+)"/.exec(s.run ?? "")?.[1];
    const goMod = readFileSync(join(root, "sdk-gen", "go", "go.mod"), "utf8");
    expect(/^module (\S+)$/m.exec(goMod)?.[1]).toBe(required);
    expect(required).toBe("github.com/pulumi-posthog/pulumi-posthog/sdk-gen/go");
    expect(s.run).toContain('tag="sdk-gen/go/v$VERSION"');
  });

  it("the NuGet package is the .NET SDK's project, at package.json's version", () => {
    const run = job("sdk-dotnet")
      .steps.map((s) => s.run ?? "")
      .join("\n");
    const id = /dist\/nuget\/([\w.]+)\.\$VERSION\.nupkg/.exec(run)?.[1];
    const csproj = globSync("*.csproj", { cwd: join(root, "sdk-gen", "dotnet") });
    expect(csproj).toHaveLength(1);
    const project = readFileSync(join(root, "sdk-gen", "dotnet", csproj[0] as string), "utf8");
    expect(id).toBe(
      /<PackageId>([^<]+)<\/PackageId>/.exec(project)?.[1] ?? basename(csproj[0] as string, ".csproj"),
    );
    expect(run).toContain('-p:Version="$VERSION"');
  });
});

describe("npm publish --dry-run (offline)", () => {
  it(`of the root package: pulumi-posthog-${version}.tgz, every bin inside`, async () => {
    const packed = await packedTarball();
    expect(basename(packed.tarball)).toBe(`pulumi-posthog-${version}.tgz`);
    for (const [bin, target] of Object.entries(pkg.bin))
      expect(packed.files, bin).toContain(target.replace(/^\.\//, ""));
    const out = sh("npm", ["publish", "--dry-run", "--offline", "--tag", "latest", packed.tarball], work);
    expect(out).toContain(`+ pulumi-posthog@${version}`);
  }, 600_000);

  it(`of the generated Node.js SDK, from sdk-gen/nodejs as the workflow publishes it: @pulumi-posthog/posthog@${version}`, () => {
    const publish = job("sdk-nodejs").steps.find((s) => s.run?.startsWith("npm publish"));
    expect(publish?.["working-directory"]).toBe("sdk-gen/nodejs");
    // Nothing builds in that folder before (npm packs its `main`, bin/index.js, when it is there).
    const before = job("sdk-nodejs").steps.slice(0, job("sdk-nodejs").steps.indexOf(publish as Step));
    for (const s of before) expect(s["working-directory"], s.name).toBeUndefined();
    for (const s of before) expect(s.run ?? "", s.name).not.toMatch(/cd sdk-gen\/nodejs|--prefix sdk-gen/);
    // A copy without what a build or an install leaves (node_modules/, bin/: the SDK's .gitignore keeps them out).
    const dir = join(mkdtempSync(join(work, "sdk-nodejs-")), "nodejs");
    cpSync(join(root, "sdk-gen", "nodejs"), dir, {
      recursive: true,
      filter: (src) => !/[/\\](node_modules|bin)$/.test(src),
    });
    const out = sh(
      "npm",
      ["publish", "--dry-run", "--offline", "--json", "--access", "public", "--tag", "latest"],
      dir,
    );
    const result = (
      JSON.parse(out) as Record<string, { name: string; version: string; files: { path: string }[] }>
    )["@pulumi-posthog/posthog"];
    expect(result?.version).toBe(version);
    const files = (result?.files ?? []).map((f) => f.path);
    const sdk = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      main?: string;
      scripts?: Record<string, string>;
      pulumi?: { name?: string; version?: string; server?: string };
    };
    expect(sdk.pulumi?.version).toBe(version);
    for (const file of ["package.json", "README.md", "index.ts"]) expect(files, file).toContain(file);
    // What runs at install is in the package, and so is `main`, unless an install script makes it there.
    const install = ["preinstall", "install", "postinstall"].map((k) => sdk.scripts?.[k]).filter(Boolean);
    for (const command of install)
      for (const m of (command as string).matchAll(/\bnode (\S+)/g))
        expect(files, command).toContain((m[1] as string).replace(/^\.\//, ""));
    if (install.length === 0) expect(files).toContain(sdk.main?.replace(/^\.\//, ""));
  }, 120_000);
});
