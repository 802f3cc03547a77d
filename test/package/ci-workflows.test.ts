/**
 * The GitHub Actions workflows of examples/ci/workflows (documented in docs/ci.md), parsed with the `yaml`
 * package: the triggers, matrices, pulumi/actions inputs and flags they rely on. The drift gate's shell steps are
 * also run with bash against a stand-in `pulumi` that reports drift (or none), with GITHUB_OUTPUT and
 * GITHUB_STEP_SUMMARY files as the runner provides them, to prove the status is carried to the failing step and
 * the job summary names what drifted.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
  env?: Record<string, string>;
  environment?: string;
  steps: Step[];
};
type Workflow = {
  name: string;
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

describe("every workflow", () => {
  it.each(files)("%s: Node >= 22 before npm ci, pulumi/actions v6, only the documented secrets", (file) => {
    const text = readFileSync(join(dir, file), "utf8");
    const job = onlyJob(load(file));
    const node = job.steps.find((s) => s.uses?.startsWith("actions/setup-node@"));
    expect(Number(node?.with?.["node-version"])).toBeGreaterThanOrEqual(22);
    const nodeAt = job.steps.indexOf(node as Step);
    const ciAt = job.steps.findIndex((s) => s.run === "npm ci");
    expect(ciAt).toBeGreaterThan(nodeAt);
    for (const step of job.steps.filter((s) => s.uses?.startsWith("pulumi/")))
      expect(step.uses).toBe("pulumi/actions@v6");
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
});

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
});

describe("pulumi-drift.yml", () => {
  const w = load("pulumi-drift.yml");
  const job = onlyJob(w);
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
    expect(gate.if).toBe("steps.preview.outputs.status != '0'");
    expect(gate.run).toMatch(/exit 1\s*$/);
  });

  describe("its steps, run with bash against a stand-in pulumi", () => {
    let work: string;
    beforeAll(() => {
      work = mkdtempSync(join(tmpdir(), "posthog-drift-"));
      mkdirSync(join(work, ".github"));
      mkdirSync(join(work, "bin"));
      copyFileSync(
        join(root, "examples", "ci", "drift-summary.cjs"),
        join(work, ".github", "drift-summary.cjs"),
      );
    });
    afterAll(() => rmSync(work, { recursive: true, force: true }));

    /** The job's shell steps for stack "prod": outputs, summary, and whether the gate step fails the job. */
    const runJob = (previewJson: string, exitCode: number) => {
      writeFileSync(join(work, "fake.json"), previewJson);
      const fake = join(work, "bin", "pulumi");
      writeFileSync(
        fake,
        `#!/bin/sh\necho "$@" > "${work}/args"\ncat "${work}/fake.json"\necho "error: no changes were expected but changes were proposed" >&2\nexit ${exitCode}\n`,
      );
      chmodSync(fake, 0o755);
      const out = join(work, "output");
      const summaryFile = join(work, "summary.md");
      writeFileSync(out, "");
      writeFileSync(summaryFile, "");
      const env = {
        ...process.env,
        PATH: `${join(work, "bin")}:${join(root, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
        GITHUB_OUTPUT: out,
        GITHUB_STEP_SUMMARY: summaryFile,
      };
      const script = (step: Step) => (step.run ?? "").replaceAll(MATRIX_STACK, "prod");
      // GitHub runs `run:` with `bash -e {0}` (bash --noprofile --norc -eo pipefail {0}).
      const bash = (step: Step) =>
        spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", script(step)], {
          cwd: work,
          env,
          encoding: "utf8",
        });
      const previewRun = bash(preview);
      const outputs = Object.fromEntries(
        readFileSync(out, "utf8")
          .trim()
          .split("\n")
          .map((l) => l.split("=")),
      );
      const summaryRun = bash(summary);
      const gateRuns = outputs.status !== "0"; // the gate's `if:`, evaluated as GitHub does
      const gateRun = gateRuns ? bash(gate) : undefined;
      return {
        previewStatus: previewRun.status,
        args: readFileSync(join(work, "args"), "utf8").trim(),
        outputs,
        summaryStatus: summaryRun.status,
        summary: readFileSync(summaryFile, "utf8"),
        jobFails: gateRun !== undefined && gateRun.status !== 0,
      };
    };

    it("drift: the summary lists each changed resource and its properties, and the job fails", () => {
      const drifted = {
        steps: [
          { op: "same", urn: "urn:pulumi:prod::org::pulumi-nodejs:dynamic/posthog:Project::web" },
          {
            op: "update",
            urn: "urn:pulumi:prod::org::pulumi-nodejs:dynamic/posthog:Dashboard::kpis",
            diffReasons: ["name", "restrictionLevel"],
          },
          {
            op: "create",
            urn: "urn:pulumi:prod::org::pulumi-nodejs:dynamic/posthog:Invite::jane",
          },
        ],
        diagnostics: [],
        changeSummary: { same: 1, update: 1, create: 1 },
      };
      const job = runJob(JSON.stringify(drifted), 255);
      expect(job.previewStatus).toBe(0); // the preview step records the status; the gate step fails
      expect(job.args).toBe("preview --stack my-org/prod --refresh --expect-no-changes --json");
      expect(job.outputs).toEqual({ status: "255" });
      expect(job.summaryStatus).toBe(0);
      expect(job.summary).toContain("### Drift: my-org/prod");
      expect(job.summary).toContain("2 resource(s) drifted");
      expect(job.summary).toContain("| update | posthog:Dashboard | kpis | `name`, `restrictionLevel` |");
      expect(job.summary).toContain("| create | posthog:Invite | jane |  |");
      expect(job.summary).not.toContain("| web |");
      expect(job.jobFails).toBe(true);
    });

    it("no drift: the summary says so and the job passes", () => {
      const job = runJob(JSON.stringify({ steps: [{ op: "same", urn: "urn:pulumi:prod::org::t::web" }] }), 0);
      expect(job.outputs).toEqual({ status: "0" });
      expect(job.summary).toContain("No drift: PostHog matches git.");
      expect(job.jobFails).toBe(false);
    });

    it("a preview that fails before comparing: the summary shows its error, and the job fails", () => {
      const job = runJob("", 255);
      expect(job.summary).toContain("The preview failed before it could compare");
      expect(job.summary).toContain("error: no changes were expected but changes were proposed");
      expect(job.jobFails).toBe(true);
    });
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
