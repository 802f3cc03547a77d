/**
 * The nightly drift gate of docs/ci.md (examples/ci/workflows/pulumi-drift.yml with examples/ci/drift-summary.cjs)
 * on the real Pulumi CLI: the workflow's own shell steps (the preview, the job summary, the failing gate), parsed
 * from its YAML and run with bash as GitHub runs them, with the `pulumi` of .pulumi-cli/bin first on PATH (a local
 * file backend in place of Pulumi Cloud: the workflow's `my-org/<stack>` becomes the local backend's
 * `organization/posthog-org/<stack>`), GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files as the runner provides them,
 * and POSTHOG_API_KEY in the environment as the workflow passes its secret.
 *
 * The program (a dashboard and a batch-export pause, in a temporary project with the package linked as a user's
 * `npm install` would) is applied once; then the real `pulumi preview --refresh --expect-no-changes --json` is
 * captured for: drift made through the API (the export unpaused, the dashboard renamed; a plain `pulumi up` after
 * it), no change (once `pulumi up --refresh` brought the stack back), a change in git not applied yet (a
 * replacement), a wrong API key and a missing stack. Each asserts the CLI's exit code and the JSON it printed (the
 * format the summary script reads), and what the summary and the gate make of it.
 *
 * Issue 34, item 6: stdout can hold more than the preview's JSON document: the engine's events one per line
 * (PULUMI_ENABLE_STREAMING_JSON_PREVIEW, which the preview step turns off), or text after the JSON (Pulumi Cloud's
 * Neo diagnostics); JSON.parse of the whole called that "not complete JSON" (`Unexpected non-whitespace character
 * after JSON at position N`). The summary reads the first JSON value, and stays under 900 KiB (a job summary takes
 * 1 MiB), cutting long texts and lists and saying what it cut.
 */
import { spawn } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  linkPackage,
  PULUMI_BIN,
  pulumiEnv,
  pulumiOk,
  runStack,
  writeStackSettings,
} from "../../tools/pulumi";
import { startTestEmulator, type TestEmulator } from "../support/emulator";

const root = join(__dirname, "..", "..");
const work = mkdtempSync(join(tmpdir(), "ci-preview-json-"));
const project = join(work, "posthog-org");
const stateDir = join(work, "state");
const settingsFile = join(project, "Pulumi.prod.yaml");
/** The stack's name on the local backend (the workflow's `my-org/prod` on Pulumi Cloud). */
const STACK = "organization/posthog-org/prod";
const TIMEOUT = 300_000;
/** The GitHub expression of the matrix's stack, as written in the workflow. */
const MATRIX_STACK = ["$", "{{ matrix.stack }}"].join("");

type Step = { name?: string; id?: string; run?: string; if?: string };
const workflow = parse(
  readFileSync(join(root, "examples", "ci", "workflows", "pulumi-drift.yml"), "utf8"),
) as {
  jobs: Record<string, { steps: Step[] }>;
};
const steps = Object.values(workflow.jobs)[0]?.steps ?? [];
const previewStep = steps.find((s) => s.id === "preview") as Step;
const summaryStep = steps.find((s) => s.run?.includes("$GITHUB_STEP_SUMMARY")) as Step;
const gateStep = steps.at(-1) as Step;

/** One preview step of the real JSON (only what the tests read). */
type JsonStep = {
  op: string;
  urn: string;
  diffReasons?: string[];
  replaceReasons?: string[];
  detailedDiff?: unknown;
  oldState?: { inputs?: Record<string, unknown> };
  newState?: { inputs?: Record<string, unknown> };
};
type PreviewJson = {
  steps: JsonStep[];
  diagnostics: { severity: string; message: string; urn?: string }[];
  changeSummary?: Record<string, number>;
};

let emu: TestEmulator;
/** The real CLI's `preview --json` output of the cases below: no change, drift, a failed preview. */
const real: { noChange?: string; drift?: string; error?: string } = {};
let exportIds: string[] = [];
/** POSTHOG_* as the workflow's job environment gives them (the key is its secret). */
let jobEnv: Record<string, string> = {};

const settings = (batchExportId: string) =>
  writeStackSettings(
    settingsFile,
    `config:\n  posthog:host: ${emu.url}\n  posthog-org:batchExportId: ${batchExportId}\n`,
  );

beforeAll(async () => {
  emu = await startTestEmulator();
  exportIds = ((await emu.call("GET", `${emu.org}/batch_exports/`)).body.results as { id: string }[]).map(
    (b) => b.id,
  );
  expect(exportIds.length).toBeGreaterThanOrEqual(2);
  // A user's project after `npm install pulumi-posthog @pulumi/pulumi`: the packages linked from this checkout.
  mkdirSync(join(project, "node_modules", "@pulumi"), { recursive: true });
  mkdirSync(join(project, ".github"));
  linkPackage(project);
  symlinkSync(
    join(root, "node_modules", "@pulumi", "pulumi"),
    join(project, "node_modules", "@pulumi", "pulumi"),
    "dir",
  );
  writeFileSync(
    join(project, "package.json"),
    `${JSON.stringify({ name: "posthog-org", main: "index.js", private: true }, null, 2)}\n`,
  );
  // A JavaScript program (index.js): the Node.js runtime told so (`typescript: false`) loads no ts-node and
  // TypeScript compiler in each of the runs below, which would compile nothing here.
  writeFileSync(
    join(project, "Pulumi.yaml"),
    "name: posthog-org\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n",
  );
  writeFileSync(
    join(project, "index.js"),
    `const pulumi = require("@pulumi/pulumi");
const posthog = require("pulumi-posthog");

const config = new pulumi.Config();
new posthog.Dashboard("kpis", { name: "KPIs" });
new posthog.BatchExportPause("warehouse", { batchExportId: config.require("batchExportId"), paused: true });
`,
  );
  // docs/ci.md, step 1: the summary script beside the workflows.
  copyFileSync(
    join(root, "examples", "ci", "drift-summary.cjs"),
    join(project, ".github", "drift-summary.cjs"),
  );
  writeFileSync(settingsFile, "config: {}\n");
  jobEnv = {
    POSTHOG_API_KEY: emu.apiKey,
    POSTHOG_ORGANIZATION_ID: emu.organizationId,
    POSTHOG_PROJECT_ID: String(emu.projectId),
  };
  await pulumiOk(["stack", "init", STACK, "--non-interactive"], { cwd: project, stateDir, env: jobEnv });
  settings(exportIds[0] as string);
  const up = await apply();
  expect(up.counts).toMatchObject({ create: 2 });
}, TIMEOUT);

afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

/**
 * `pulumi up` of the stack; with `refresh`, `pulumi up --refresh`: git wins (how docs/ci.md says to bring a
 * drifted stack back; a plain `up` compares with the state, which knows nothing of the drift, and changes nothing).
 */
async function apply(refresh = false) {
  const up = await runStack({
    operation: "up",
    refresh,
    projectDir: project,
    stack: "prod", // STACK's own name (runStack checks the backend's file of that name)
    stateDir,
    configFile: settingsFile,
    env: jobEnv,
  });
  expect(up.ok, up.output).toBe(true);
  return up;
}

/** `bash --noprofile --norc -eo pipefail -c <script>` (GitHub's `run:` shell), without blocking the emulator. */
function bash(script: string, env: NodeJS.ProcessEnv): Promise<{ status: number | null; output: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", script], {
      cwd: project,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.on("error", reject);
    child.on("close", (status) => resolveRun({ status, output }));
  });
}

/**
 * A step's `if:` as GitHub evaluates it here: `always()`, `steps.<id>.outputs.<name>`, string literals, `!=`,
 * `==`, `&&`, `||` and parentheses (what the drift workflow uses). A condition without a status function (or
 * with `success()`) holds only while no earlier step failed; the steps run here never fail (they record status).
 */
function holds(condition: string | undefined, outputs: Record<string, Record<string, string>>): boolean {
  if (condition === undefined) return true;
  const js = condition
    .replace(/\balways\(\)/g, "true")
    .replace(/\bsuccess\(\)/g, "true")
    .replace(/\bsteps\.([\w-]+)\.outputs\.([\w-]+)/g, (_, id: string, name: string) =>
      JSON.stringify(outputs[id]?.[name] ?? ""),
    )
    .replace(/!=/g, "!==")
    .replace(/([^!=])==([^=])/g, "$1===$2");
  if (!/^[\s\w"'()!=&|]*$/.test(js)) throw new Error(`cannot evaluate the condition ${condition}`);
  return Boolean(new Function(`return (${js});`)());
}

/**
 * The summary and the gate of the drift job, as the runner runs them after the preview step: the summary step
 * (`if: always()`) with its own GITHUB_OUTPUT file, then the gate when its `if:` holds, the GitHub expressions
 * replaced by the step outputs (the preview's `status` given here). Reads preview.json and preview.err as the
 * preview left them in the project. Returns the job summary, the summary step's recorded status and whether the
 * job failed.
 */
async function judgeJob(previewStatus: string, stack = "prod", env: Record<string, string> = jobEnv) {
  const fullEnv = pulumiEnv(stateDir, env);
  const outputs: Record<string, Record<string, string>> = { preview: { status: previewStatus } };
  const summaryFile = join(work, "step-summary.md");
  writeFileSync(summaryFile, "");
  const summaryOut = join(work, "github-output-summary");
  writeFileSync(summaryOut, "");
  const summaryRun = await bash(script(summaryStep, stack, outputs), {
    ...fullEnv,
    GITHUB_OUTPUT: summaryOut,
    GITHUB_STEP_SUMMARY: summaryFile,
  });
  expect(summaryRun.status, summaryRun.output).toBe(0); // the step records the status; the gate fails the job
  outputs.summary = readOutputs(summaryOut);
  const gate = holds(gateStep.if, outputs)
    ? await bash(script(gateStep, stack, outputs), fullEnv)
    : undefined;
  return {
    summary: readFileSync(summaryFile, "utf8"),
    summaryStatus: outputs.summary.status,
    jobFails: gate !== undefined && gate.status !== 0,
  };
}

/** A step's `run:` for one stack: the workflow's `my-org/<matrix stack>` and its step outputs filled in. */
const script = (step: Step, stack: string, outputs: Record<string, Record<string, string>> = {}) =>
  (step.run ?? "")
    .replaceAll(`my-org/${MATRIX_STACK}`, `organization/posthog-org/${stack}`)
    .replace(
      /\$\{\{\s*steps\.([\w-]+)\.outputs\.([\w-]+)\s*\}\}/g,
      (_, id: string, name: string) => outputs[id]?.[name] ?? "",
    );

/** The NAME=value lines a step wrote to its GITHUB_OUTPUT file. */
const readOutputs = (file: string): Record<string, string> =>
  Object.fromEntries(
    readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );

/**
 * The drift job's shell steps for one stack, as the runner runs them: the preview (recording its status), the
 * summary (`if: always()`), and the gate when its `if:` holds. Returns the CLI's exit status (the step output),
 * what it wrote to preview.json and preview.err, the job summary, and whether the job failed. `path`, when given,
 * goes first on PATH (a `pulumi` standing in for the CLI).
 */
async function runJob(stack = "prod", env: Record<string, string> = jobEnv, path?: string) {
  const out = join(work, "github-output-preview");
  writeFileSync(out, "");
  const fullEnv = pulumiEnv(stateDir, env);
  if (path !== undefined) fullEnv.PATH = `${path}:${fullEnv.PATH}`;
  const preview = await bash(script(previewStep, stack), { ...fullEnv, GITHUB_OUTPUT: out });
  expect(preview.status, preview.output).toBe(0); // the step records the status; the gate fails the job
  const status = readOutputs(out).status ?? "";
  const json = readFileSync(join(project, "preview.json"), "utf8");
  return {
    status,
    json,
    preview: parsed(json),
    stderr: readFileSync(join(project, "preview.err"), "utf8"),
    ...(await judgeJob(status, stack, env)),
  };
}

/** The preview's JSON, or undefined when `json` is not JSON (empty, or cut short). */
function parsed(json: string): PreviewJson | undefined {
  try {
    return JSON.parse(json) as PreviewJson;
  } catch {
    return undefined;
  }
}

/**
 * The summary and the gate on preview output given here (written to preview.json and preview.err, as a preview
 * step would leave them), with the preview step's status.
 */
async function judgeOutput(json: string, status: string, stderr = "") {
  writeFileSync(join(project, "preview.json"), json);
  writeFileSync(join(project, "preview.err"), stderr);
  return judgeJob(status);
}

/** The steps of the program's resources that would change something (not refresh or same). */
const changing = (p: PreviewJson | undefined) =>
  (p?.steps ?? []).filter(
    (s) => s.op !== "refresh" && s.op !== "same" && !s.urn.includes("pulumi:pulumi:Stack"),
  );
const nameOf = (urn: string) => urn.slice(urn.lastIndexOf("::") + 2);

describe("the drift gate (pulumi-drift.yml, drift-summary.cjs) on the real CLI's preview --json", () => {
  it(
    "drift made in PostHog: a plain up changes nothing (no write reaches PostHog); then exit 7, update steps naming no property (a dynamic provider reports none), and the summary names each resource and property from oldState/newState; the job fails until up --refresh",
    async () => {
      await emu.call("POST", `${emu.org}/batch_exports/${exportIds[0]}/unpause/`);
      const dashboards = (await emu.call("GET", `${emu.project}/dashboards/`)).body.results as {
        id: number;
        name: string;
      }[];
      const kpis = dashboards.find((d) => d.name === "KPIs");
      await emu.call("PATCH", `${emu.project}/dashboards/${kpis?.id}/`, {
        body: { name: "KPIs (from the UI)" },
      });
      // A plain `pulumi up` does not bring it back: it compares the program with the state, which still holds
      // what the last up wrote, so it changes nothing and sends no write; the night's job below is red.
      await emu.control("DELETE", "/requests");
      expect((await apply()).counts).toMatchObject({ update: 0, same: 2 });
      expect((await emu.requests()).filter((r) => r.method !== "GET")).toEqual([]);

      const job = await runJob();
      expect(job.status).toBe("7"); // the CLI's ExitNoChanges: --expect-no-changes saw changes
      expect(job.stderr).toContain("error: no changes were expected for preview but changes were proposed");
      expect(job.preview?.changeSummary).toEqual({ same: 1, update: 2 });
      const updates = changing(job.preview);
      expect(updates.map((s) => `${s.op} ${nameOf(s.urn)}`).sort()).toEqual([
        "update kpis",
        "update warehouse",
      ]);
      for (const step of updates) {
        // What the summary cannot take from the engine: Pulumi's dynamic providers report no diff keys.
        expect(step.diffReasons).toBeUndefined();
        expect(step.detailedDiff ?? null).toBeNull();
      }
      // oldState: what the refresh read from PostHog; newState: what the program declares.
      const warehouse = updates.find((s) => s.urn.endsWith("::warehouse"));
      expect(warehouse?.oldState?.inputs?.paused).toBe(false);
      expect(warehouse?.newState?.inputs?.paused).toBe(true);
      const dashboard = updates.find((s) => s.urn.endsWith("::kpis"));
      expect(dashboard?.oldState?.inputs?.name).toBe("KPIs (from the UI)");
      expect(dashboard?.newState?.inputs?.name).toBe("KPIs");

      expect(job.summary).toContain(`### Drift: \`${STACK}\``);
      expect(job.summary).toContain(
        "2 resource(s) drifted: the next `pulumi up --refresh` would change them.",
      );
      expect(job.summary).toContain("| `update` | `posthog:BatchExportPause` | `warehouse` | `paused` |");
      expect(job.summary).toContain("| `update` | `posthog:Dashboard` | `kpis` | `name` |");
      expect(job.summary).not.toContain("No drift");
      expect(job.summaryStatus).toBe("1");
      expect(job.jobFails).toBe(true);
      real.drift = job.json;
      // `pulumi up --refresh` (git wins) does: the next night is green (the next case).
      expect((await apply(true)).counts).toMatchObject({ update: 2 });
    },
    TIMEOUT,
  );

  it(
    "no change (the stack brought back by up --refresh, and PULUMI_ENABLE_STREAMING_JSON_PREVIEW=true in the job's environment): exit 0, one JSON document whose steps are all refresh or same, and the summary says there is no drift; the job passes",
    async () => {
      // The job's environment sets PULUMI_ENABLE_STREAMING_JSON_PREVIEW=true (an organization-wide setting): set,
      // the CLI's --json prints the engine's events one per line; the preview step turns it off, so it still
      // captures one JSON document, and the summary reads No drift.
      const job = await runJob("prod", { ...jobEnv, PULUMI_ENABLE_STREAMING_JSON_PREVIEW: "true" });
      expect(job.status).toBe("0");
      expect(job.preview?.changeSummary).toEqual({ same: 3 });
      expect(new Set(job.preview?.steps.map((s) => s.op))).toEqual(new Set(["refresh", "same"]));
      expect(job.preview?.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
      expect(job.summary).toBe(`### Drift: \`${STACK}\`\n\nNo drift: PostHog matches git.\n`);
      expect(job.summaryStatus).toBe("0");
      expect(job.jobFails).toBe(false);
      real.noChange = job.json;
    },
    TIMEOUT,
  );

  it(
    "a change in git not applied yet (another batch export): one replace step naming batchExportId, one row in the summary; the job fails",
    async () => {
      settings(exportIds[1] as string);
      try {
        const job = await runJob();
        expect(job.status).toBe("7");
        // A preview lists a replacement as one step, with the key forcing it (the one diff key a dynamic
        // provider reports).
        expect(changing(job.preview).map((s) => [s.op, nameOf(s.urn), s.replaceReasons])).toEqual([
          ["replace", "warehouse", ["batchExportId"]],
        ]);
        expect(job.summary).toContain("1 resource(s) drifted");
        expect(job.summary).toContain(
          "| `replace` | `posthog:BatchExportPause` | `warehouse` | `batchExportId` |",
        );
        expect(job.summary.match(/\| `warehouse` \|/g)).toHaveLength(1);
        expect(job.jobFails).toBe(true);
      } finally {
        settings(exportIds[0] as string);
      }
    },
    TIMEOUT,
  );

  it(
    "a wrong API key: exit 1, the errors in the JSON's diagnostics (stderr empty), and the summary shows them naming POSTHOG_API_KEY; the job fails",
    async () => {
      const job = await runJob("prod", { ...jobEnv, POSTHOG_API_KEY: "phx_not_a_key_of_this_instance" });
      expect(job.status).toBe("1");
      expect(job.stderr.trim()).toBe("");
      const errors = job.preview?.diagnostics.filter((d) => d.severity === "error") ?? [];
      expect(errors.map((d) => (d.urn ? nameOf(d.urn) : "")).sort()).toEqual(["", "kpis", "warehouse"]);
      for (const d of errors.filter((e) => e.urn)) {
        expect(d.message).toMatch(/^error: Preview failed: GET .* → 401 /);
        expect(d.message).toContain("set by the environment variable POSTHOG_API_KEY");
      }
      expect(job.preview?.changeSummary).toBeUndefined();
      expect(job.summary).toContain("The preview failed: it could not compare PostHog with git.");
      expect(job.summary).toMatch(
        /^- \*\*error\*\* \(`kpis`\): `Preview failed: GET .* → 401 .*POSTHOG_API_KEY/m,
      );
      expect(job.summary).toContain("- **error**: `preview failed`");
      expect(job.summary).not.toContain("No drift");
      expect(job.summary).not.toContain("phx_not_a_key_of_this_instance");
      expect(job.summaryStatus).toBe("1");
      expect(job.jobFails).toBe(true);
      real.error = job.json;
    },
    TIMEOUT,
  );

  it(
    "a missing stack: exit 6, no JSON at all, and the summary shows the CLI's error from stderr; the job fails",
    async () => {
      const job = await runJob("staging");
      expect(job.status).toBe("6"); // the CLI's ExitStackNotFound
      expect(job.json).toBe("");
      expect(job.stderr).toContain("error: no stack named");
      expect(job.summary).toContain("The preview failed before it could compare (no JSON output):");
      expect(job.summary).toContain("error: no stack named");
      expect(job.jobFails).toBe(true);
    },
    TIMEOUT,
  );
});

/** `text` cut to its first `n` characters (what a killed CLI or a cut pipe leaves). */
const cut = (text: string | undefined, n: number) => {
  expect(text, "the real CLI's output, captured by the cases above").toBeDefined();
  return (text ?? "").slice(0, n);
};

describe("the drift gate fails closed: output it cannot read is drift or an error, never No drift", () => {
  const never = (job: { summary: string; summaryStatus: string | undefined; jobFails: boolean }) => {
    expect(job.summary).toMatch(new RegExp(`^### Drift: \`${STACK}\`\n\n`));
    expect(job.summary).not.toContain("No drift");
    expect(job.summaryStatus).toBe("1");
    expect(job.jobFails).toBe(true);
  };

  it("empty output with exit 0: no JSON output, the job fails", async () => {
    const job = await judgeOutput("", "0");
    expect(job.summary).toContain("The preview failed before it could compare (no JSON output):");
    never(job);
  });

  it.each([
    ["half of it", 0.5],
    ["all but its last character", -1],
  ])(
    "the real no-change JSON truncated (%s) with exit 0: not complete JSON, the job fails",
    async (_, at) => {
      const whole = real.noChange ?? "";
      const json = cut(real.noChange, at < 0 ? whole.trimEnd().length - 1 : Math.floor(whole.length * at));
      const job = await judgeOutput(json, "0");
      expect(job.summary).toContain("The preview's output is not complete JSON (");
      never(job);
    },
  );

  it.each([
    ["{}", "no `steps` array"],
    ["[]", "a JSON array, not an object"],
    ["null", "a JSON null, not an object"],
    ['{"steps":[null],"changeSummary":{}}', "step 1 has no `op` or `urn`"],
    ['{"steps":"none","changeSummary":{}}', "no `steps` array"],
  ])("JSON that is not a preview (%s) with exit 0: the job fails", async (json, problem) => {
    const job = await judgeOutput(json, "0");
    expect(job.summary).toContain(`The preview's JSON is not a preview (${problem})`);
    never(job);
  });

  it("the real no-change JSON without its changeSummary, or with counts its steps do not show: the job fails", async () => {
    const preview = JSON.parse(real.noChange ?? "{}") as PreviewJson;
    const { changeSummary: _, ...unfinished } = preview;
    const job = await judgeOutput(JSON.stringify(unfinished), "0");
    expect(job.summary).toContain("has no `changeSummary`");
    never(job);
    const miscounted = await judgeOutput(
      JSON.stringify({ ...preview, changeSummary: { same: 1, update: 2 } }),
      "0",
    );
    expect(miscounted.summary).toContain("counts changes (update: 2) that its steps do not show");
    never(miscounted);
  });

  it("the real no-change JSON with a failing exit status (7, 1, none): the status wins, the job fails", async () => {
    for (const status of ["7", "1", ""]) {
      const job = await judgeOutput(real.noChange ?? "", status, "error: something the JSON does not show\n");
      expect(job.summary).toContain(
        `The preview exited with status ${status || "(none)"} although its JSON shows no change`,
      );
      expect(job.summary).toContain("error: something the JSON does not show");
      never(job);
    }
  });

  it("the real drift and error JSON with exit 0 (e.g. a preview run without --expect-no-changes): the job fails", async () => {
    const drift = await judgeOutput(real.drift ?? "", "0");
    expect(drift.summary).toContain("2 resource(s) drifted");
    never(drift);
    const error = await judgeOutput(real.error ?? "", "0");
    expect(error.summary).toContain("The preview failed: it could not compare PostHog with git.");
    never(error);
  });

  it(
    "the real CLI's engine events, one JSON per line (PULUMI_ENABLE_STREAMING_JSON_PREVIEW forced on, exit 0): the summary names the setting instead of 'not complete JSON'; the job fails",
    async () => {
      // A `pulumi` first on PATH that runs the real CLI with the setting on, whatever the step says.
      const bin = join(work, "streaming-bin");
      mkdirSync(bin, { recursive: true });
      writeFileSync(
        join(bin, "pulumi"),
        `#!/usr/bin/env bash\nPULUMI_ENABLE_STREAMING_JSON_PREVIEW=true exec "${join(PULUMI_BIN, "pulumi")}" "$@"\n`,
        { mode: 0o755 },
      );
      const job = await runJob("prod", jobEnv, bin);
      expect(job.status).toBe("0");
      // What the summary used to call "not complete JSON": a whole JSON value (the first event), then more.
      const firstLine = job.json.slice(0, job.json.indexOf("\n"));
      expect(JSON.parse(firstLine)).toHaveProperty("preludeEvent");
      expect(() => JSON.parse(job.json)).toThrow(
        `Unexpected non-whitespace character after JSON at position ${firstLine.length + 1}`,
      );
      expect(job.summary).toContain("The preview printed the engine's events, one JSON per line");
      expect(job.summary).toContain("PULUMI_ENABLE_STREAMING_JSON_PREVIEW=false");
      expect(job.summary).not.toContain("not complete JSON");
      never(job);
    },
    TIMEOUT,
  );

  it("the real drift JSON with text after it on stdout (Neo's diagnostics on Pulumi Cloud), exit 7: the summary reads the JSON and quotes the text; the job fails", async () => {
    const neo = "Neo Diagnostics ✨\n  The dashboard kpis was renamed in PostHog.\n";
    const json = `${real.drift ?? ""}${neo}`;
    // The error the summary used to report for a real preview: the JSON whole, then something else.
    expect(() => JSON.parse(json)).toThrow(
      `Unexpected non-whitespace character after JSON at position ${(real.drift ?? "").length}`,
    );
    const job = await judgeOutput(json, "7");
    expect(job.summary).toContain("2 resource(s) drifted");
    expect(job.summary).toContain("| `update` | `posthog:Dashboard` | `kpis` | `name` |");
    expect(job.summary).toContain(
      `The CLI printed ${Buffer.byteLength(neo.trim())} bytes after the preview's JSON (not part of the preview):`,
    );
    expect(job.summary).toContain("Neo Diagnostics ✨\n  The dashboard kpis was renamed in PostHog.\n```");
    expect(job.summary).not.toContain("not complete JSON");
    never(job);
  });

  it("the real no-change JSON with a line after it, exit 0: No drift, the line quoted after it", async () => {
    const job = await judgeOutput(`${real.noChange ?? ""}a line after the JSON\n`, "0");
    expect(job.summary).toBe(
      `### Drift: \`${STACK}\`\n\nNo drift: PostHog matches git.\n\n` +
        "The CLI printed 21 bytes after the preview's JSON (not part of the preview):\n\n" +
        "```text\na line after the JSON\n```\n",
    );
    expect(job.summaryStatus).toBe("0");
    expect(job.jobFails).toBe(false);
  });

  it("the real no-change JSON followed by a second JSON document (the real drift), exit 0: it cannot tell which is the preview; the job fails", async () => {
    const job = await judgeOutput(`${real.noChange ?? ""}${real.drift ?? ""}`, "0");
    expect(job.summary).toContain("The preview's output holds more than one JSON document");
    never(job);
  });

  it("a 5 MB error diagnostic (the real error JSON, one message made 5 MB): the job summary stays under 900 KiB, the message cut saying how much; the job fails", async () => {
    const preview = JSON.parse(real.error ?? "{}") as PreviewJson;
    const error = preview.diagnostics.find((d) => d.severity === "error" && d.urn?.endsWith("::kpis"));
    expect(error).toBeDefined();
    const original = (error as { message: string }).message;
    (error as { message: string }).message = `${original}\n${"é".repeat(2.5 * 1024 * 1024)}`;
    const job = await judgeOutput(JSON.stringify(preview, null, 4), "1");
    const size = Buffer.byteLength(job.summary);
    expect(size).toBeLessThan(900 * 1024);
    expect(job.summary).toMatch(/^- \*\*error\*\* \(`kpis`\): `Preview failed: GET .* → 401 /m);
    const cutBytes = Number(
      /… \(cut: (\d+) more bytes; the full output is in the job log \/ the preview artifact\)/.exec(
        job.summary,
      )?.[1],
    );
    expect(cutBytes).toBeGreaterThan(5 * 1024 * 1024 - 16 * 1024);
    expect(job.summary).toContain("- **error**: `preview failed`"); // the other errors are still listed
    never(job);
  });

  it("10,000 drifted resources with long names, and a 5 MB stderr with no JSON: each summary stays under 900 KiB and says what it cut; the job fails", async () => {
    const steps: JsonStep[] = Array.from({ length: 10_000 }, (_, i) => ({
      op: "update",
      urn: `urn:pulumi:prod::posthog-org::pulumi-nodejs:dynamic/posthog:Dashboard::${"board-".repeat(40)}${i}`,
      oldState: { inputs: { name: `from the UI ${i}` } },
      newState: { inputs: { name: "KPIs" } },
    }));
    const many = await judgeOutput(
      JSON.stringify({ steps, diagnostics: [], changeSummary: { update: 10_000 } }),
      "7",
    );
    expect(Buffer.byteLength(many.summary)).toBeLessThan(900 * 1024);
    expect(many.summary).toContain("10000 resource(s) drifted");
    expect(many.summary).toMatch(
      /\n… \(cut: \d+ more drifted resource\(s\); the full output is in the job log \/ the preview artifact\)\n/,
    );
    never(many);
    const noisy = await judgeOutput("", "1", `${"x".repeat(5 * 1024 * 1024)}\nerror: the last line\n`);
    expect(Buffer.byteLength(noisy.summary)).toBeLessThan(900 * 1024);
    expect(noisy.summary).toMatch(
      /\(cut: \d+ bytes before; the full output is in the job log \/ the preview artifact\) … x+/,
    );
    expect(noisy.summary).toContain("error: the last line\n```");
    never(noisy);
  });

  it(
    "the real CLI's no-change output cut by a broken pipe in the preview step (exit 0): the job fails",
    async () => {
      // A `pulumi` first on PATH that, for the step's preview, pipes the real CLI's no-change output captured
      // above (the no-change case: the same command on the same stack) through `head -c 1000`: the step gets only
      // the first 1,000 bytes, and the wrapper's exit status is head's (0), as with the real CLI in the pipe.
      const bin = join(work, "cut-bin");
      mkdirSync(bin, { recursive: true });
      const captured = join(work, "no-change-preview.json");
      expect(real.noChange, "the real CLI's output, captured by the no-change case").toBeDefined();
      writeFileSync(captured, real.noChange ?? "");
      writeFileSync(
        join(bin, "pulumi"),
        `#!/usr/bin/env bash\n[ "$1" = preview ] || exit 99\ncat "${captured}" | head -c 1000\n`,
        { mode: 0o755 },
      );
      const job = await runJob("prod", jobEnv, bin);
      expect(job.status).toBe("0");
      expect(job.json.length).toBe(1000);
      expect(() => JSON.parse(job.json)).toThrow();
      expect(job.summary).toContain("The preview's output is not complete JSON (");
      never(job);
    },
    TIMEOUT,
  );
});
