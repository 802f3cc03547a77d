/**
 * Issue 35, item 8, and issue 51: the release workflow, .github/workflows/release.yml
 * (docs/contributing/releasing.md). What can run here runs: actionlint (built from its Go module by tools/actionlint.mts) on every
 * workflow of the repository and of examples/ci; the workflow's own shell steps that need no GitHub (the tag/version
 * gate, the release notes, the npm re-run check with a stand-in `npm`) with bash, as the runner runs them; the
 * cheap stages of tools/release-dry-run.mts (`verify`, `published`) on small fixture folders; `npm publish
 * --dry-run` of both npm packages (the root package from the tarball `npm pack` makes of a source-only copy,
 * test/package/packed.ts; the generated Node.js SDK); the sdist of the Python SDK. The rest is checked against the
 * repository: every `npm run` script, stage, path, module path and package name the workflow names exists and
 * agrees, the actions are pinned by commit, and nothing is published before every build and test job passed.
 * The build and the tests of the built files themselves run in `npm run release-dry-run` (minutes), not here.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
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
    writeFileSync(broken, text.replace("test-dotnet, github-release]", "test-dotnet, github-releases]"));
    const r = actionlint(["-shellcheck=", "-pyflakes=", broken]);
    expect(r.status, r.output).toBe(1);
    expect(r.output).toMatch(/release\.yml:\d+:\d+: .*"github-releases".*\[job-needs\]/);
  }, 300_000);
});

describe("the version gate (job build, step version), run with bash", () => {
  const script = step("build", "version").run as string;
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

describe("the release notes (job build), run with bash", () => {
  it(`are CHANGELOG.md's section of ${version}, up to the next version`, () => {
    const dir = mkdtempSync(join(work, "notes-"));
    mkdirSync(join(dir, "dist"));
    cpSync(join(root, "CHANGELOG.md"), join(dir, "CHANGELOG.md"));
    const r = runStep(step("build", "release notes from CHANGELOG.md").run as string, dir, {
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

describe("tools/release-dry-run.mts, the stages the workflow's jobs call, on small fixture folders", () => {
  const script = join(root, "tools", "release-dry-run.mts");
  /** `node tools/release-dry-run.mts args…`: exit status, stdout, stderr. */
  const dryRun = (args: string[]) => {
    const r = spawnSync(process.execPath, [script, ...args], { cwd: root, encoding: "utf8" });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const sums = `pulumi-posthog-v${version}-checksums.txt`;
  /** The os-arch pairs tools/plugin-tarball.mts always makes with --all (its TARGETS not optional). */
  const required = [
    ...readFileSync(join(root, "tools", "plugin-tarball.mts"), "utf8").matchAll(
      /\{ os: "(\w+)", arch: "(\w+)", [^}]*optional: false \}/g,
    ),
  ].map((m) => `${m[1]}-${m[2]}`);
  /** A release folder of small tarballs for `platforms` (each with the executable and node/bin/node) and an npm tarball, with its checksums file. */
  const release = (platforms: string[], entries = ["pulumi-resource-posthog", "node/bin/node"]): string => {
    const dir = mkdtempSync(join(work, "release-"));
    const stage = mkdtempSync(join(work, "stage-"));
    writeFileSync(join(stage, "pulumi-resource-posthog"), "#!/bin/sh\n");
    mkdirSync(join(stage, "node", "bin"), { recursive: true });
    writeFileSync(join(stage, "node", "bin", "node"), "");
    for (const p of platforms)
      sh(
        "tar",
        ["-czf", join(dir, `pulumi-resource-posthog-v${version}-${p}.tar.gz`), "-C", stage, ...entries],
        stage,
      );
    writeFileSync(join(dir, `pulumi-posthog-${version}.tgz`), "npm tarball");
    sh("bash", ["-c", `sha256sum * > ${sums}`], dir);
    return dir;
  };

  it("every stage the workflow names is one of the script's, and the build job builds with --all --strict", () => {
    const stages = /export const STAGES = \[([^\]]+)\]/.exec(readFileSync(script, "utf8"))?.[1] ?? "";
    const known = [...stages.matchAll(/"([\w-]+)"/g)].map((m) => m[1]);
    const named = [...text.matchAll(/--stage "?([\w-]+|\$STAGE)"?/g)].map((m) => m[1]);
    const matrix = (job("test-artifacts") as Job & { strategy: { matrix: { stage: string[] } } }).strategy
      .matrix.stage;
    const all = named.flatMap((n) => (n === "$STAGE" ? matrix : [n]));
    expect(all).toEqual(
      expect.arrayContaining(["build", "verify", "test-npm", "test-plugin", "test-sdk", "published"]),
    );
    for (const n of all) expect(known, n).toContain(n);
    expect(job("build").steps.map((s) => s.run ?? "")).toContain(
      "node tools/release-dry-run.mts --stage build --all --strict --out dist/release",
    );
    expect(required.length).toBeGreaterThanOrEqual(3);
  });

  it("verify --all passes the files the checksums file lists, each required os/arch there", () => {
    const r = dryRun(["--stage", "verify", "--all", "--out", release(required)]);
    expect(r.status, r.stderr).toBe(0);
  });

  it("verify --all fails naming a required os/arch's missing tarball", () => {
    const r = dryRun([
      "--stage",
      "verify",
      "--all",
      "--out",
      release(required.filter((p) => p !== "linux-arm64")),
    ]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `no plugin tarball for a required os/arch: pulumi-resource-posthog-v${version}-linux-arm64.tar.gz`,
    );
  });

  it("verify --all fails on a tarball without its Node.js runtime (node/bin/node)", () => {
    const r = dryRun(["--stage", "verify", "--all", "--out", release(required, ["pulumi-resource-posthog"])]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/pulumi-resource-posthog-v[\w.-]+\.tar\.gz holds no node\/bin\/node/);
  });

  it("verify fails naming a file whose bytes are not the ones the checksums file lists, and a file it does not list", () => {
    const dir = release(required);
    writeFileSync(join(dir, `pulumi-posthog-${version}.tgz`), "other bytes");
    writeFileSync(join(dir, "stray.txt"), "");
    const r = dryRun(["--stage", "verify", "--out", dir]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`checksum mismatch in ${dir}: pulumi-posthog-${version}.tgz: sha256 `);
    expect(r.stderr).toContain(`stray.txt is not in ${sums}`);
  });

  it("published (a re-run): prints only what is not published yet; equal bytes are skipped", () => {
    const dir = release(required);
    const there = mkdtempSync(join(work, "published-"));
    const first = `pulumi-resource-posthog-v${version}-${required[0]}.tar.gz`;
    cpSync(join(dir, first), join(there, first));
    const r = dryRun(["--stage", "published", "--out", dir, "--from", there]);
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines).not.toContain(first);
    expect(lines).toContain(sums);
    expect(lines).toHaveLength(required.length + 1);
  });

  it("published (a re-run): fails naming a published file with other bytes, and prints nothing to upload", () => {
    const dir = release(required);
    const there = mkdtempSync(join(work, "published-"));
    writeFileSync(join(there, sums), "what an earlier run published\n");
    const r = dryRun(["--stage", "published", "--out", dir, "--from", there]);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`already published with other bytes: ${sums} (published sha256 `);
  });
});

describe("the npm re-run check (job npm), run with bash and a stand-in npm", () => {
  const script = step(
    "npm",
    "publish the built tarball, unless npm has these very bytes (other bytes fail the job)",
  ).run as string;
  /** Runs the step on a tarball, `npm view` answering `integrity` (empty: not published); returns what npm was asked. */
  const publish = (integrity: string) => {
    const dir = mkdtempSync(join(work, "npm-"));
    mkdirSync(join(dir, "dist", "release"), { recursive: true });
    writeFileSync(join(dir, "dist", "release", `pulumi-posthog-${version}.tgz`), "the built bytes");
    mkdirSync(join(dir, "bin"));
    writeFileSync(
      join(dir, "bin", "npm"),
      `#!/usr/bin/env bash\necho "$*" >> "${join(dir, "asked")}"\nif [ "$1" = view ]; then printf '%s' '${integrity}'; fi\n`,
      { mode: 0o755 },
    );
    const r = runStep(script, dir, {
      PATH: `${join(dir, "bin")}:${toolPath}`,
      VERSION: version,
      PACKAGE: "pulumi-posthog",
      FILE: "pulumi-posthog",
      NPM_TAG: "latest",
    });
    return { ...r, asked: readFileSync(join(dir, "asked"), "utf8") };
  };
  const built = `sha512-${createHash("sha512").update("the built bytes").digest("base64")}`;

  it("publishes the built tarball when npm has no such version", () => {
    const r = publish("");
    expect(r.status, r.output).toBe(0);
    expect(r.asked).toContain(
      `publish dist/release/pulumi-posthog-${version}.tgz --provenance --access public --tag latest`,
    );
  });
  it("skips when npm's dist.integrity is the built tarball's", () => {
    const r = publish(built);
    expect(r.status, r.output).toBe(0);
    expect(r.asked).not.toContain("publish");
    expect(r.output).toContain("nothing to publish");
  });
  it("fails naming the tarball when npm has other bytes", () => {
    const r = publish("sha512-b3RoZXI=");
    expect(r.status).toBe(1);
    expect(r.asked).not.toContain("publish");
    expect(r.output).toContain(
      `::error::pulumi-posthog@${version} is on npm with other bytes (sha512-b3RoZXI=) than dist/release/pulumi-posthog-${version}.tgz`,
    );
  });
});

describe("the Python SDK's sdist (tools/release-dry-run.mts buildPython; setuptools of this machine, python -m build on the runner)", () => {
  const hasSetuptools = spawnSync("python3", ["-c", "import setuptools"]).status === 0;
  it.skipIf(!hasSetuptools)(
    `is pulumi_posthog-${version}.tar.gz, with the README the workflow copies`,
    () => {
      const dir = mkdtempSync(join(work, "python-"));
      cpSync(join(root, "sdk-gen", "python"), join(dir, "sdk-gen", "python"), { recursive: true });
      // As the build stage does: the README beside setup.py, copied from the package folder.
      const tool = readFileSync(join(root, "tools", "release-dry-run.mts"), "utf8");
      expect(tool).toContain(
        'run("cp", [join(copy, "pulumi_posthog", "README.md"), join(copy, "README.md")]);',
      );
      const python = join(dir, "sdk-gen", "python");
      cpSync(join(python, "pulumi_posthog", "README.md"), join(python, "README.md"));
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
  it("runs on a tag v* only, read-only at the top, each job's permissions its own (write only where it publishes)", () => {
    expect(workflow.on).toEqual({ push: { tags: ["v*"] } });
    expect(workflow.permissions).toEqual({ contents: "read" });
    for (const [name, j] of Object.entries(workflow.jobs)) expect(j.permissions, name).toBeDefined();
    const writers = Object.entries(workflow.jobs).filter(([, j]) => j.permissions?.contents === "write");
    expect(writers.map(([n]) => n).sort()).toEqual(["github-release", "sdk-go"]);
    const oidc = Object.entries(workflow.jobs).filter(([, j]) => j.permissions?.["id-token"] === "write");
    expect(oidc.map(([n]) => n).sort()).toEqual(["npm", "sdk-python"]);
  });

  it("builds once, tests those files, publishes only when every build and test job passed, then verifies", () => {
    const builds = ["build"];
    const tests = ["test", "test-artifacts", "test-python", "test-dotnet"];
    const publishers = ["github-release", "npm", "sdk-python", "sdk-dotnet", "sdk-go"];
    expect(Object.keys(workflow.jobs).sort()).toEqual([...builds, ...tests, ...publishers, "verify"].sort());
    const runs = job("build").steps.map((s) => s.id ?? s.run ?? "");
    expect(runs.indexOf("version")).toBeLessThan(runs.indexOf("npm ci"));
    expect(runs.indexOf("npm ci")).toBeGreaterThan(-1);
    expect(
      job("test")
        .steps.map((s) => s.run)
        .filter(Boolean),
    ).toEqual(["npm ci", "npm test"]);
    for (const name of tests.filter((t) => t !== "test")) {
      expect(needs(job(name)), name).toEqual(["build"]);
      // The very files the build job uploaded, checked against its checksums file before anything runs.
      const download = job(name).steps.find((s) => s.uses?.startsWith("actions/download-artifact@"));
      expect(download?.with, name).toMatchObject({ name: "release" });
      expect(
        job(name)
          .steps.map((s) => s.run ?? "")
          .join("\n"),
        name,
      ).toMatch(/--stage verify|sha256sum -c/);
    }
    for (const name of publishers) {
      expect(needs(job(name)), name).toEqual(expect.arrayContaining([...builds, ...tests]));
      // Publishes the built files: no publishing job checks out and builds anew.
      const runs = job(name)
        .steps.map((s) => s.run ?? "")
        .join("\n");
      expect(runs, name).not.toMatch(/npm ci|npm pack|python -m build|dotnet pack|plugin-tarball/);
    }
    for (const name of publishers.filter((n) => n !== "github-release"))
      expect(needs(job(name)), name).toContain("github-release");
    expect(needs(job("verify"))).toEqual(expect.arrayContaining(publishers));
    expect(text).not.toContain("--clobber");
  });

  it("pins every action by a 40-hex commit with its tag in a comment, one commit per action, and uses only the documented secrets", () => {
    const pinned = new Map<string, string>();
    for (const line of text.split("\n").filter((l) => /^\s*(- )?uses:/.test(l))) {
      const m = /uses: ([\w.-]+\/[\w.-]+)@([0-9a-f]{40}) # (v\d+(\.\d+){0,2})$/.exec(line);
      expect(m, line).not.toBeNull();
      const [, action, sha, tag] = m as RegExpExecArray;
      expect(pinned.get(`${action}@${tag}`) ?? sha, line).toBe(sha);
      pinned.set(`${action}@${tag}`, sha as string);
    }
    expect(pinned.size).toBeGreaterThanOrEqual(7);
    expect(allSteps().filter(([, s]) => s.uses).length).toBeGreaterThan(pinned.size);
    const secrets = [...text.matchAll(/\$\{\{\s*secrets\.([A-Za-z_]+)\s*\}\}/g)].map((m) => m[1]);
    expect([...new Set(secrets)].sort()).toEqual(["GITHUB_TOKEN", "NPM_TOKEN", "NUGET_API_KEY"]);
  });

  it("each required os/arch is made once, by the build stage with --all (none listed twice)", () => {
    const builds = allSteps().filter(([, s]) => /plugin-tarball|--stage build/.test(s.run ?? ""));
    expect(builds.map(([n, s]) => [n, s.run])).toEqual([
      ["build", "node tools/release-dry-run.mts --stage build --all --strict --out dist/release"],
    ]);
    const tool = readFileSync(join(root, "tools", "plugin-tarball.mts"), "utf8");
    const required = [...tool.matchAll(/\{ os: "(\w+)", arch: "(\w+)", [^}]*optional: false \}/g)].map(
      (m) => `${m[1]}-${m[2]}`,
    );
    expect(new Set(required).size).toBe(required.length);
    expect(required).toEqual(expect.arrayContaining(["linux-amd64", "linux-arm64", "darwin-amd64"]));
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
    const id = /dist\/release\/([\w.]+)\.\$VERSION\.nupkg/.exec(run)?.[1];
    const csproj = globSync("*.csproj", { cwd: join(root, "sdk-gen", "dotnet") });
    expect(csproj).toHaveLength(1);
    const project = readFileSync(join(root, "sdk-gen", "dotnet", csproj[0] as string), "utf8");
    expect(id).toBe(
      /<PackageId>([^<]+)<\/PackageId>/.exec(project)?.[1] ?? basename(csproj[0] as string, ".csproj"),
    );
    // The build stage packs it at package.json's version.
    expect(readFileSync(join(root, "tools", "release-dry-run.mts"), "utf8")).toContain(
      ["`-p:Version=$", "{version}`"].join(""),
    );
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

  it(`of the generated Node.js SDK, a copy of sdk-gen/nodejs as npm packs it: @pulumi-posthog/posthog@${version}`, () => {
    // The workflow publishes the package the build job packed (npm run sdk-pack), named as npm names a scoped one.
    const matrix = (
      job("npm") as Job & { strategy: { matrix: { include: { package: string; file: string }[] } } }
    ).strategy.matrix.include;
    expect(matrix).toContainEqual({ package: "@pulumi-posthog/posthog", file: "pulumi-posthog-posthog" });
    expect(matrix).toContainEqual({ package: pkg.name, file: pkg.name });
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
