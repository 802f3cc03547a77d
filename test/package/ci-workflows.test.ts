/**
 * The GitHub Actions workflows of examples/ci/workflows (documented in docs/ci.md), parsed with the `yaml`
 * package: the triggers, matrices, pulumi/actions inputs and flags they rely on. The drift gate's shell steps are
 * run with bash against the real Pulumi CLI in test/stack/ci-preview-json.test.ts.
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
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = join(__dirname, "..", "..");
const dir = join(root, "examples", "ci", "workflows");

type Step = {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
};
type Job = {
  "runs-on": string;
  strategy?: { matrix?: { stack?: string[] }; "fail-fast"?: boolean; "max-parallel"?: number };
  if?: string;
  env?: Record<string, string>;
  environment?: string;
  steps: Step[];
};
type Workflow = {
  name: string;
  env?: Record<string, string>;
  on: Record<string, unknown>;
  permissions?: Record<string, string>;
  jobs: Record<string, Job>;
};

const load = (file: string): Workflow => parse(readFileSync(join(dir, file), "utf8")) as Workflow;
const onlyJob = (w: Workflow): Job => {
  const jobs = Object.values(w.jobs);
  expect(jobs).toHaveLength(1);
  return jobs[0] as Job;
};
const pulumiStep = (job: Job): Step => {
  const steps = job.steps.filter((s) => s.uses?.startsWith("pulumi/actions@"));
  expect(steps).toHaveLength(1);
  return steps[0] as Step;
};
/** The GitHub expression of the matrix's stack, as written in the workflows. */
const MATRIX_STACK = ["$", "{{ matrix.stack }}"].join("");
const files = ["pulumi-preview.yml", "pulumi-up.yml", "pulumi-drift.yml", "integration-tests.yml"];
/** The plugin route (no npm project): checked on its own below. */
const pluginRoute = ["pulumi-yaml.yml"];

describe("every workflow", () => {
  it("is checked here: the npm route's or the plugin route's", () => {
    expect(readdirSync(dir).sort()).toEqual([...files, ...pluginRoute].sort());
  });
  it.each(files)("%s: Node >= 22 before npm ci, pulumi/actions v6, only the documented secrets", (file) => {
    const text = readFileSync(join(dir, file), "utf8");
    for (const job of Object.values(load(file).jobs)) {
      const node = job.steps.find((s) => s.uses?.startsWith("actions/setup-node@"));
      expect(Number(node?.with?.["node-version"])).toBeGreaterThanOrEqual(22);
      const nodeAt = job.steps.indexOf(node as Step);
      const ciAt = job.steps.findIndex((s) => s.run === "npm ci");
      expect(ciAt).toBeGreaterThan(nodeAt);
      for (const step of job.steps.filter((s) => s.uses?.startsWith("pulumi/")))
        expect(step.uses).toBe("pulumi/actions@v6");
    }
    const secrets = [...text.matchAll(/\$\{\{\s*secrets\.([A-Z_]+)\s*\}\}/g)].map((m) => m[1]);
    for (const secret of secrets) expect(["PULUMI_ACCESS_TOKEN", "POSTHOG_API_KEY"]).toContain(secret);
  });
});

describe("pulumi-preview.yml", () => {
  const w = load("pulumi-preview.yml");
  const job = onlyJob(w);
  it("runs on pull requests, previews every stack and comments on the pull request", () => {
    expect(Object.keys(w.on)).toEqual(["pull_request"]);
    expect(w.permissions?.["pull-requests"]).toBe("write");
    expect(job.strategy?.matrix?.stack).toEqual(["dev", "staging", "prod"]);
    const step = pulumiStep(job);
    expect(step.with).toMatchObject({ command: "preview", "comment-on-pr": true });
    expect(step.with?.["stack-name"]).toContain(MATRIX_STACK);
    expect(Object.keys(step.env ?? {}).sort()).toEqual(["POSTHOG_API_KEY", "PULUMI_ACCESS_TOKEN"]);
  });
  it("runs the governance policy pack with the stack's policy configuration (issue 37)", () => {
    expectPolicyPack(pulumiStep(job));
  });
});

/**
 * A workflow's audit step run as the runner runs it (its `run` with bash, `-eo pipefail`), in a fresh folder holding
 * `.github/policy/prod.json` that is JSON null (the audit refuses it before any request: exit 2) and, at `command`
 * (a path in that folder), an executable bash script whose body `body(cli)` runs the built CLI `cli`. The step's
 * environment: `env(folder)`, a job summary file (GITHUB_STEP_SUMMARY) and an API key. The folder is removed after.
 * @returns bash's exit status and stderr, and the job summary's text
 */
function runAuditStep(
  step: Step,
  command: string,
  body: (cli: string) => string,
  env: (work: string) => Record<string, string>,
): { status: number | null; stderr: string; summary: string } {
  const work = mkdtempSync(join(tmpdir(), "audit-step-"));
  try {
    mkdirSync(join(work, ".github", "policy"), { recursive: true });
    writeFileSync(join(work, ".github", "policy", "prod.json"), "null");
    mkdirSync(dirname(join(work, command)), { recursive: true });
    const cli = join(root, "dist", "provider", "cli.js");
    writeFileSync(join(work, command), `#!/usr/bin/env bash\n${body(cli)}\n`, { mode: 0o755 });
    const summary = join(work, "summary.md");
    writeFileSync(summary, "");
    const r = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", step.run ?? ""], {
      cwd: work,
      encoding: "utf8",
      env: { ...env(work), GITHUB_STEP_SUMMARY: summary, POSTHOG_API_KEY: "phx_x" },
    });
    return { status: r.status, stderr: r.stderr, summary: readFileSync(summary, "utf8") };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The pulumi/actions step runs the package's policy pack executable (the route every Node.js language host runs)
 * with `.github/policy/<stack>.json`, and that executable ships in the package.
 */
function expectPolicyPack(step: Step): void {
  expect(step.with?.policyPacks).toBe("node_modules/pulumi-posthog/policy/posthog-policy");
  expect(step.with?.policyPackConfigs).toBe(`.github/policy/${MATRIX_STACK}.json`);
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { files: string[] };
  expect(pkg.files).toContain("policy");
  expect(existsSync(join(root, "policy", "posthog-policy"))).toBe(true);
}

describe("pulumi-up.yml", () => {
  const w = load("pulumi-up.yml");
  const job = onlyJob(w);
  it("runs on a push to main, one stack at a time in order, stopping at the first failure", () => {
    expect(w.on).toEqual({ push: { branches: ["main"] } });
    expect(job.strategy).toMatchObject({ "max-parallel": 1, "fail-fast": true });
    expect(job.strategy?.matrix?.stack).toEqual(["dev", "staging", "prod"]);
    expect(job.environment).toBe(MATRIX_STACK);
    expect(pulumiStep(job).with).toMatchObject({ command: "up" });
  });
  it("runs the governance policy pack with the stack's policy configuration (issue 37)", () => {
    expectPolicyPack(pulumiStep(job));
  });
});

describe("pulumi-drift.yml", () => {
  const w = load("pulumi-drift.yml");
  expect(Object.keys(w.jobs)).toEqual(["drift", "audit"]);
  const job = w.jobs.drift as Job;
  const preview = job.steps.find((s) => s.id === "preview") as Step;
  const summary = job.steps.find((s) => s.run?.includes("$GITHUB_STEP_SUMMARY")) as Step;
  const gate = job.steps.at(-1) as Step;

  it("runs nightly (and on demand) over dev, staging and prod, each stack checked even when one drifted", () => {
    const schedule = w.on.schedule as { cron: string }[];
    expect(schedule).toHaveLength(1);
    expect(schedule[0]?.cron.split(/\s+/)).toHaveLength(5);
    expect(schedule[0]?.cron).toMatch(/^\d+ \d+ \* \* \*$/); // once a day
    expect(w.on).toHaveProperty("workflow_dispatch");
    expect(job.strategy?.matrix?.stack).toEqual(["dev", "staging", "prod"]);
    expect(job.strategy?.["fail-fast"]).toBe(false);
    expect(Object.keys(job.env ?? {}).sort()).toEqual(["POSTHOG_API_KEY", "PULUMI_ACCESS_TOKEN"]);
  });

  it("previews with --refresh --expect-no-changes, writes a job summary always, then fails on drift", () => {
    const command = preview.run?.replace(/\\\n\s*/g, " ") ?? "";
    expect(command).toMatch(/pulumi preview --stack "[^"]*\$\{\{ matrix\.stack \}\}" /);
    expect(command).toContain(" --refresh");
    expect(command).toContain(" --expect-no-changes");
    expect(command).toContain(" --json");
    expect(job.steps.indexOf(summary)).toBeGreaterThan(job.steps.indexOf(preview));
    expect(summary.if).toBe("always()");
    expect(summary.run).toContain("drift-summary.cjs");
    // Fails closed: the gate runs unless both the CLI and the summary (which read the whole JSON) said no drift.
    expect(summary.id).toBe("summary");
    expect(summary.run).toContain(["$", "{{ steps.preview.outputs.status }}"].join(""));
    expect(summary.run).toContain('echo "status=$?" >> "$GITHUB_OUTPUT"');
    expect(gate.if).toBe(
      "always() && (steps.preview.outputs.status != '0' || steps.summary.outputs.status != '0')",
    );
    expect(gate.run).toMatch(/exit 1\s*$/);
  });
  it("captures the preview's stdout alone with streaming JSON off, and keeps it as an artifact (the summary cuts long texts)", () => {
    const command = preview.run?.replace(/\\\n\s*/g, " ") ?? "";
    expect(command).toMatch(/PULUMI_ENABLE_STREAMING_JSON_PREVIEW=false +pulumi preview --stack /);
    expect(command).toContain(" > preview.json 2> preview.err");
    const keep = job.steps.find((s) => s.uses?.startsWith("actions/upload-artifact@")) as Step;
    expect(keep.if).toBe("always()");
    expect(String(keep.with?.path).trim().split("\n")).toEqual(["preview.json", "preview.err"]);
    expect(keep.with?.name).toContain(MATRIX_STACK);
    expect(job.steps.indexOf(keep)).toBeGreaterThan(job.steps.indexOf(summary));
    expect(job.steps.indexOf(keep)).toBeLessThan(job.steps.indexOf(gate));
  });
  // Its shell steps run against the real CLI's `pulumi preview --json` (no change, drift, a change not applied,
  // a wrong key, a missing stack) in test/stack/ci-preview-json.test.ts.

  it("audits the live organization once a night beside the drift gate: markdown to the job summary, the audit's exit status as the job's (issue 37)", () => {
    const audit = w.jobs.audit as Job;
    expect(audit.strategy).toBeUndefined(); // one organization, not one run per stack
    expect(Object.keys(audit.env ?? {})).toEqual(["POSTHOG_API_KEY"]);
    const step = audit.steps.find((s) => s.run?.includes("pulumi-posthog audit")) as Step;
    expect(step.run).toContain(
      "npx pulumi-posthog audit --config .github/policy/prod.json --format markdown > audit.md",
    );
    expect(step.run).toContain('cat audit.md >> "$GITHUB_STEP_SUMMARY"');
    // Fails closed: the step ends with the audit's own status (1 a mandatory violation, 2 could not read).
    expect(step.run?.trim().split("\n").at(-1)).toBe("exit $status");
    expect(step.run).toMatch(/status=\$\?\n/);
  });

  it("when the audit cannot run to the end (exit 2, no report), the job summary says so with its one line (issue 49)", () => {
    // The step's script with bash as the runner runs it, `npx pulumi-posthog` being the built CLI, and a policy
    // file that is JSON null: the audit refuses it before any request (exit 2, one line on stderr).
    const step = (w.jobs.audit as Job).steps.find((s) => s.run?.includes("pulumi-posthog audit")) as Step;
    const r = runAuditStep(
      step,
      "bin/npx",
      (cli) => `shift\nexec "${process.execPath}" "${cli}" "$@"`,
      (work) => ({
        PATH: `${join(work, "bin")}:${process.env.PATH}`,
      }),
    );
    expect(r.status).toBe(2);
    const line =
      "pulumi-posthog audit: --config .github/policy/prod.json: the policy config must be a JSON object of rule ids";
    expect(r.stderr).toContain(line);
    expect(r.summary).toMatch(
      new RegExp(
        `^## PostHog governance audit: not run to the end, nothing is reported\n\n\`\`\`text\n${line}.*, got null \\(see docs/troubleshooting/commands\\.md#the-audit-command\\)\n\`\`\`\n$`,
      ),
    );
  });
});

describe("integration-tests.yml", () => {
  const w = load("integration-tests.yml");
  const job = onlyJob(w);
  it("runs the tests through the emulator recipe of the installed package (not npx), with no secret", () => {
    expect(Object.keys(w.on).sort()).toEqual(["pull_request", "push"]);
    const runs = job.steps.map((s) => s.run ?? "").join("\n");
    expect(runs).toContain(
      "bash node_modules/pulumi-posthog/examples/ci/posthog-emulator.sh run -- npm test",
    );
    expect(runs).not.toMatch(/npx\s+posthog-emulator/);
    expect(readFileSync(join(dir, "integration-tests.yml"), "utf8")).not.toContain("secrets.");
    // The script it names ships in the package.
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { files: string[] };
    expect(pkg.files).toContain("examples/ci");
    expect(existsSync(join(root, "examples", "ci", "posthog-emulator.sh"))).toBe(true);
  });
});

describe("pulumi-yaml.yml: the plugin route (issue 51, item 6)", () => {
  /** A dollar sign, to write GitHub expressions and shell parameters in template strings. */
  const D = "$";
  const w = load("pulumi-yaml.yml");
  const text = readFileSync(join(dir, "pulumi-yaml.yml"), "utf8");
  const install =
    'pulumi plugin install resource posthog "$POSTHOG_PLUGIN_VERSION" --server "$POSTHOG_PLUGIN_SERVER"';
  it("installs the plugin from the GitHub release schema.json names, at a version, in every job, after the CLI", () => {
    const schema = JSON.parse(readFileSync(join(root, "schema.json"), "utf8")) as {
      pluginDownloadURL: string;
    };
    expect(w.env).toEqual({
      POSTHOG_PLUGIN_VERSION: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      POSTHOG_PLUGIN_SERVER: schema.pluginDownloadURL,
    });
    for (const [name, job] of Object.entries(w.jobs)) {
      const runs = job.steps.map((s) => s.run ?? s.uses ?? "");
      expect(runs, name).toContain(install);
      expect(runs.indexOf(install), name).toBeGreaterThan(
        runs.findIndex((r) => r.startsWith("pulumi/actions@")),
      );
    }
    const secrets = [...text.matchAll(/\$\{\{\s*secrets\.([A-Z_]+)\s*\}\}/g)].map((m) => m[1]);
    for (const secret of secrets) expect(["PULUMI_ACCESS_TOKEN", "POSTHOG_API_KEY"]).toContain(secret);
  });
  it("previews on pull requests and runs up on a push to main, one stack at a time, with the policy pack of the plugin's version", () => {
    const job = w.jobs.pulumi as Job;
    expect(job.strategy).toMatchObject({ "max-parallel": 1, "fail-fast": true });
    expect(job.strategy?.matrix?.stack).toEqual(["dev", "staging", "prod"]);
    const step = pulumiStep({ ...job, steps: job.steps.filter((s) => s.with?.command) });
    expect(step.with?.command).toBe(`${D}{{ github.event_name == 'push' && 'up' || 'preview' }}`);
    expect(step.with?.policyPacks).toBe(
      `${D}{{ runner.temp }}/policy/node_modules/pulumi-posthog/policy/posthog-policy`,
    );
    expect(step.with?.policyPackConfigs).toBe(`.github/policy/${MATRIX_STACK}.json`);
    expect(job.steps.map((s) => s.run ?? "")).toContain(
      'npm install --prefix "$RUNNER_TEMP/policy" "pulumi-posthog@$POSTHOG_PLUGIN_VERSION" @pulumi/policy@1',
    );
  });
  it("audits nightly from the plugin's folder with no Node.js set up; run with bash, it reports as the npm route's audit does", () => {
    const audit = w.jobs.audit as Job;
    expect(audit.steps.some((s) => s.uses?.startsWith("actions/setup-node@"))).toBe(false);
    const step = audit.steps.find((s) => s.run?.includes(" audit \\")) as Step;
    expect(step.run).toContain(
      `"${D}{PULUMI_HOME:-$HOME/.pulumi}/plugins/resource-posthog-v$POSTHOG_PLUGIN_VERSION/pulumi-posthog" audit`,
    );
    // The step's script with a plugin folder whose pulumi-posthog is the built CLI, and a policy file that is JSON
    // null: the audit refuses it before any request (exit 2, one line on stderr), and the step exits with it.
    const plugin = "home/plugins/resource-posthog-v0.1.0/pulumi-posthog";
    const r = runAuditStep(
      step,
      plugin,
      (cli) => `exec "${process.execPath}" "${cli}" "$@"`,
      (work) => ({
        PATH: "/usr/bin:/bin",
        PULUMI_HOME: join(work, "home"),
        POSTHOG_PLUGIN_VERSION: "0.1.0",
      }),
    );
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      "pulumi-posthog audit: --config .github/policy/prod.json: the policy config must be",
    );
  });
});
