#!/usr/bin/env node
/**
 * `npm start [-- --json]`: the whole GitOps cycle of examples/gitops on the `dev` stack, through the real Pulumi
 * CLI (`.pulumi-cli/bin/pulumi`, readied by `npm run pulumi-cli`) on a local file backend, against a fresh local
 * emulator (no account, no network):
 *
 *   `pulumi config set` of the connection (`--secret` for the API key) → preview → up (a DNS automation
 *   publishes the domain's TXT record meanwhile) → `up --refresh` applying the SSO enforcement that waited for
 *   the verification → the drift gate `preview --refresh --expect-no-changes` passing → a changed stack setting
 *   (publicKpis: true) → up updating exactly that → an outside change (someone unpauses the batch export through
 *   the API) → the drift gate failing on it → refresh reporting the drift → up healing it → the drift gate
 *   passing → destroy leaving the organization as it was found (dashboards soft-deleted, never HTTP DELETE; the
 *   batch export unpaused again).
 *
 * Every step is checked; the exit status is 0 only when every step did what it should. The repository's files
 * are not touched: the stack's settings are a copy of Pulumi.dev.yaml (`--config-file`) and the backend lives in
 * a temporary directory. The CLI's own output is shown as it prints it (or, with `--json`, one JSON line a step).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { parseDocument } from "yaml";
import { startEmulator } from "../emulator";
import {
  backendUrl,
  ensureStack,
  type Operation,
  pulumiExecutable,
  pulumiOk,
  type RunOptions,
  type RunResult,
  readProject,
  runStack,
  type Step,
} from "./pulumi";
import { dnsAutomation, type SeedApi, seedApi } from "./seed-api";

/** One step of the demo and whether it did what it should. */
export interface DemoStep {
  /** Short id, e.g. "preview", "up-setting", "drift-gate-fails". */
  label: string;
  /** The command, as a user types it (without `--stack dev --config-file …`). */
  command: string;
  /** What the step does and what it must show, in words. */
  title: string;
  /** The CLI's result (absent for the outside change and the settings). */
  result?: RunResult;
  /** Expectations that were not met (empty = passed). */
  failures: string[];
  /** Emulator API requests made during the step: `METHOD /path`. */
  requests: string[];
}

export interface DemoOptions {
  /** Repository root holding Pulumi.yaml (default: the current directory). */
  projectDir?: string;
  /** Print per-step JSON lines instead of the CLI's output. */
  json?: boolean;
  /** Where lines go (default stdout). */
  write?: (line: string) => void;
}

export interface DemoResult {
  ok: boolean;
  /** `pulumi version` of the CLI that ran, e.g. `v3.274.1`. */
  pulumiVersion: string;
  steps: DemoStep[];
  summary: string;
}

interface Snapshot {
  members: Record<string, number>;
  invites: string[];
  domains: string[];
  projects: number[];
  batchExports: Record<string, boolean>;
}

async function snapshot(a: SeedApi): Promise<Snapshot> {
  const org = "/api/organizations/@current";
  const [members, invites, domains, projects, exports] = await Promise.all([
    a.list<{ user: { email: string }; level: number }>(`${org}/members/?limit=500`),
    a.list<{ target_email: string }>(`${org}/invites/?limit=500`),
    a.list<{ domain: string }>(`${org}/domains/?limit=500`),
    a.list<{ id: number }>(`${org}/projects/?limit=500`),
    a.list<{ id: string; paused: boolean }>(`${org}/batch_exports/?limit=500`),
  ]);
  return {
    members: Object.fromEntries(members.map((m) => [m.user.email, m.level])),
    invites: invites.map((i) => i.target_email).sort(),
    domains: domains.map((d) => d.domain).sort(),
    projects: projects.map((p) => p.id).sort((x, y) => x - y),
    batchExports: Object.fromEntries(exports.map((b) => [b.id, b.paused])),
  };
}

const changed = (r: RunResult): Step[] => r.steps.filter((s) => s.op !== "same" || s.error);
const describe = (steps: Step[]) => steps.map((s) => `${s.op} ${s.name}`).join(", ") || "none";
const shortType = (type: string) => type.replace(/^pulumi-nodejs:dynamic\//, "");

/** The JSON line of a step (`--json`). */
function jsonLine(step: DemoStep): Record<string, unknown> {
  const r = step.result;
  return {
    step: step.label,
    command: step.command,
    title: step.title,
    passed: step.failures.length === 0,
    failures: step.failures,
    ...(r
      ? {
          operation: r.operation,
          ok: r.ok,
          exitCode: r.exitCode,
          counts: r.counts,
          changes: changed(r).map((s) => ({
            op: s.op,
            type: shortType(s.type),
            name: s.name,
            diffs: s.diffs,
            ...(s.replaces ? { replaces: s.replaces } : {}),
            ...(s.error ? { error: s.error } : {}),
          })),
          errors: r.diagnostics.filter((d) => d.severity === "error").map((d) => d.message),
        }
      : {}),
  };
}

/** One demo's state, made by {@link startDemo} and handed to every step. */
interface Demo {
  opts: DemoOptions;
  write: (line: string) => void;
  projectDir: string;
  /** The project's name (the root Pulumi.yaml), the prefix of its stack settings. */
  projectName: string;
  /** The demo's temporary directory (the backend, the settings file). */
  work: string;
  stateDir: string;
  /** The stack's settings file (`--config-file`), a copy of Pulumi.dev.yaml. */
  configFile: string;
  pulumiVersion: string;
  emulator: Awaited<ReturnType<typeof startEmulator>>;
  a: SeedApi;
  /** The environment of the CLI runs (no POSTHOG_* variable: the connection is the stack's settings). */
  env: NodeJS.ProcessEnv;
  /** The steps so far. */
  steps: DemoStep[];
  /** The DNS automation while the first up runs. */
  dns: ReturnType<typeof dnsAutomation> | undefined;
}

/**
 * Sets the demo up: reads the project, makes a temporary directory, asks the CLI its version (throws when there is
 * no CLI: run `npm run pulumi-cli`), starts a fresh emulator, and prints where things are (but with `--json`).
 * Returns the demo's state.
 */
async function startDemo(opts: DemoOptions): Promise<Demo> {
  const projectDir = resolve(opts.projectDir ?? ".");
  const write = opts.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const project = readProject(projectDir);
  const work = mkdtempSync(join(tmpdir(), "posthog-gitops-demo-"));
  const stateDir = join(work, "backend");
  const pulumiVersion = (await pulumiOk(["version"], { cwd: projectDir, stateDir })).trim();
  const emulator = await startEmulator({ rateLimit: false });
  if (!opts.json) {
    write(
      `The real Pulumi CLI ${pulumiVersion} (${pulumiExecutable()}), local backend ${backendUrl(stateDir)}`,
    );
    write(`Emulator at ${emulator.url} (organization ${emulator.organizationId})`);
    write("");
  }
  return {
    opts,
    write,
    projectDir,
    projectName: project.name,
    work,
    stateDir,
    configFile: join(work, "Pulumi.dev.yaml"),
    pulumiVersion,
    emulator,
    a: seedApi(emulator.url, emulator.apiKey),
    // The connection comes from the stack's settings, as a user sets it; none from POSTHOG_* variables.
    env: {
      POSTHOG_HOST: undefined,
      POSTHOG_API_KEY: undefined,
      POSTHOG_ORGANIZATION_ID: undefined,
      POSTHOG_PROJECT_ID: undefined,
    },
    steps: [],
    dns: undefined,
  };
}

/** The emulator's requests since the last call (`METHOD /path`), then clears its log. */
async function requestLog(d: Demo): Promise<string[]> {
  const log = (await d.a.call("GET", "/_emulator/requests")) as { method: string; path: string }[];
  await d.a.call("DELETE", "/_emulator/requests");
  return log.map((r) => `${r.method} ${r.path}`);
}

/** Records a step and prints it (a JSON line with `--json`, else ✔/✘ and its failures). */
function report(d: Demo, step: DemoStep): void {
  d.steps.push(step);
  if (d.opts.json) {
    d.write(JSON.stringify(jsonLine(step)));
    return;
  }
  d.write(step.failures.length === 0 ? `  ✔ ${step.title}` : `  ✘ ${step.title}`);
  for (const f of step.failures) d.write(`      - ${f}`);
  d.write("");
}

/** The writes among requests (all but GETs). */
const writes = (requests: string[]) => requests.filter((r) => !r.startsWith("GET "));

/** One step that runs the CLI: what it runs and how it is checked. */
interface CliStep {
  label: string;
  operation: Operation;
  /** More run options (`refresh`, `expectNoChanges`). */
  more: Partial<RunOptions>;
  title: string;
  /** The step's failures, from the run's result and the API requests it made. */
  check: (r: RunResult, requests: string[]) => Promise<string[]> | string[];
  /** Whether the command must succeed (default true). */
  expectOk?: boolean;
}

/**
 * Runs one CLI step on the `dev` stack (its output echoed but with `--json`), checks its exit and `step.check`,
 * and reports it. Returns the CLI's result.
 */
async function cliStep(d: Demo, step: CliStep): Promise<RunResult> {
  const { label, operation, more, title } = step;
  const expectOk = step.expectOk ?? true;
  const flags = [
    ...(operation === "preview" ? [] : ["--yes"]),
    ...(more.refresh ? ["--refresh"] : []),
    ...(more.expectNoChanges ? ["--expect-no-changes"] : []),
  ];
  const command = `pulumi ${operation}${flags.length ? ` ${flags.join(" ")}` : ""}`;
  if (!d.opts.json) d.write(`=== ${label}: ${command}`);
  await requestLog(d);
  const result = await runStack({
    operation,
    projectDir: d.projectDir,
    stack: "dev",
    stateDir: d.stateDir,
    configFile: d.configFile,
    env: d.env,
    ...more,
    ...(d.opts.json ? {} : { echo: (text: string) => process.stdout.write(text) }),
  });
  const requests = await requestLog(d);
  const failures =
    result.ok === expectOk
      ? []
      : [expectOk ? `the command failed (exit ${result.exitCode})` : "the command succeeded; it should fail"];
  failures.push(...(await step.check(result, requests)));
  report(d, { label, command, title, result, failures, requests });
  return result;
}

/** The settings, as the README's quick start sets them: the key encrypted in the stack's settings file. */
async function configStep(d: Demo): Promise<void> {
  const { configFile, emulator, env } = d;
  await ensureStack({ projectDir: d.projectDir, stack: "dev", stateDir: d.stateDir, configFile, env });
  const set = async (key: string, value: string, secret = false) =>
    pulumiOk(
      [
        "config",
        "set",
        ...(secret ? ["--secret"] : []),
        key,
        value,
        "--stack",
        "dev",
        "--config-file",
        configFile,
      ],
      { cwd: d.projectDir, stateDir: d.stateDir, env },
    );
  await set("posthog:host", emulator.url);
  await set("posthog:organizationId", emulator.organizationId);
  await set("posthog:apiKey", emulator.apiKey, true);
  const settings = readFileSync(configFile, "utf8");
  report(d, {
    label: "config",
    command: "pulumi config set posthog:host …; pulumi config set --secret posthog:apiKey …",
    title: "the connection is stack settings, the API key stored encrypted",
    failures: [
      ...(settings.includes(emulator.apiKey) ? ["the API key is in clear in the stack's settings file"] : []),
      ...(/posthog:apiKey:\s*\n\s*secure:/.test(settings) ? [] : ["posthog:apiKey is not a secure setting"]),
    ],
    requests: await requestLog(d),
  });
}

/** `preview`: only creates, no write. Returns how many resources it plans to create. */
async function previewStep(d: Demo): Promise<number> {
  const preview = await cliStep(d, {
    label: "preview",
    operation: "preview",
    more: {},
    title: "preview plans only creates and writes nothing",
    check: (r, req) => [
      ...(r.counts.create > 0 && changed(r).every((s) => s.op === "create")
        ? []
        : [`expected only creates, got ${describe(changed(r))}`]),
      ...(writes(req).length === 0 ? [] : [`preview wrote to the API: ${writes(req).join(", ")}`]),
    ],
  });
  return preview.counts.create;
}

/**
 * `up` with the DNS automation running: creates all `total` resources, verifies the domain, keeps the secrets
 * secret. Returns the program's dashboards (name → id) and project id, for the destroy's checks.
 */
async function upStep(
  d: Demo,
  total: number,
): Promise<{ dashboards: Record<string, string>; projectId: string }> {
  d.dns = dnsAutomation(d.a);
  let published: string[] = [];
  const up = await cliStep(d, {
    label: "up",
    operation: "up",
    more: {},
    title: `up creates all ${total} resources and verifies the domain`,
    check: async (r) => {
      published = (await d.dns?.stop()) ?? [];
      return [
        ...(r.counts.create === total && changed(r).length === total
          ? []
          : [`expected ${total} creates, got ${describe(changed(r))}`]),
        ...(r.outputs.domainVerified === true ? [] : ["the domain was not verified"]),
        ...(r.outputs.projectApiToken === "[secret]" ? [] : ["the project's API token output is not secret"]),
        ...(published.length > 0 ? [] : ["no TXT record was published"]),
      ];
    },
  });
  if (!d.opts.json && published.length > 0)
    d.write(`  (DNS automation published TXT ${published.join(", ")})\n`);
  return {
    dashboards: (up.outputs.dashboards ?? {}) as Record<string, string>,
    projectId: String(up.outputs.projectId ?? ""),
  };
}

/** `up --refresh`: exactly one update, the Domain's SSO enforcement that waited for the verification (a PATCH). */
async function upRefreshStep(d: Demo): Promise<void> {
  await cliStep(d, {
    label: "up-refresh",
    operation: "up",
    more: { refresh: true },
    title:
      "up --refresh applies the SSO enforcement that waited for the domain's verification, and only that",
    check: (r, req) => {
      const c = changed(r);
      const domain = c.find((s) => shortType(s.type) === "posthog:Domain");
      return [
        ...(c.length === 1 && domain?.op === "update"
          ? []
          : [`expected exactly one update of the Domain, got ${describe(c)}`]),
        ...(req.some((x) => /^PATCH \/api\/organizations\/[^/]+\/domains\/[^/]+\/$/.test(x))
          ? []
          : ["no PATCH of the domain was sent"]),
      ];
    },
  });
}

/**
 * The drift gate `preview --refresh --expect-no-changes`: passes with no change when `expectDrift` is undefined,
 * else fails showing a change of the resource named `expectDrift`; never writes.
 */
async function gate(d: Demo, label: string, title: string, expectDrift: string | undefined): Promise<void> {
  await cliStep(d, {
    label,
    operation: "preview",
    more: { refresh: true, expectNoChanges: true },
    title,
    check: (r, req) => {
      const c = changed(r);
      const asExpected = expectDrift === undefined ? c.length === 0 : c.some((s) => s.name === expectDrift);
      const wanted = expectDrift === undefined ? "no changes" : `a change of ${expectDrift}`;
      return [
        ...(asExpected ? [] : [`expected ${wanted}, got ${describe(c)}`]),
        ...(writes(req).length === 0 ? [] : [`the drift gate wrote to the API: ${writes(req).join(", ")}`]),
      ];
    },
    expectOk: expectDrift === undefined,
  });
}

/** A changed stack setting (`publicKpis: true`), then `up` updating exactly the DashboardSharing. */
async function settingStep(d: Demo): Promise<void> {
  const doc = parseDocument(readFileSync(d.configFile, "utf8"));
  doc.setIn(["config", `${d.projectName}:publicKpis`], true);
  writeFileSync(d.configFile, doc.toString());
  if (!d.opts.json)
    d.write(
      `Changed stack setting: ${d.projectName}:publicKpis: false → true (in a copy of Pulumi.dev.yaml)\n`,
    );
  await cliStep(d, {
    label: "up-setting",
    operation: "up",
    more: {},
    title: "after changing publicKpis, up updates exactly the dashboard sharing",
    check: (r) => {
      const c = changed(r);
      const only = c.length === 1 && c[0]?.op === "update" && c[0].type.endsWith(":DashboardSharing");
      return [
        ...(only ? [] : [`expected exactly one update of DashboardSharing, got ${describe(c)}`]),
        ...(c[0]?.diffs.includes("enabled") ? [] : ["the update did not change `enabled`"]),
        ...(r.outputs.kpiShareToken === "[secret]" ? [] : ["the share token output is not secret"]),
      ];
    },
  });
}

/** The outside change: someone unpauses the warehouse export through the API. Returns its id (if one was paused). */
async function outsideChangeStep(d: Demo): Promise<string | undefined> {
  const exportId = Object.entries(await snapshot(d.a).then((s) => s.batchExports)).find(
    ([, paused]) => paused,
  )?.[0];
  if (!d.opts.json) d.write("=== outside-change: someone unpauses the batch export through the API");
  await requestLog(d);
  const outside: string[] = [];
  if (exportId) await d.a.call("POST", `/api/organizations/@current/batch_exports/${exportId}/unpause/`, {});
  else outside.push("no paused batch export found (the dev stack should have paused it)");
  report(d, {
    label: "outside-change",
    command: `POST …/batch_exports/${exportId ?? "?"}/unpause/`,
    title: "someone unpauses the batch export outside Pulumi",
    failures: outside,
    requests: await requestLog(d),
  });
  return exportId;
}

/** `refresh` reporting the unpaused batch export as drift, writing nothing. */
async function refreshDriftStep(d: Demo): Promise<void> {
  await cliStep(d, {
    label: "refresh-drift",
    operation: "refresh",
    more: {},
    title: "refresh reports the unpaused batch export as drift",
    check: (r, req) => {
      const drift = r.steps.find((s) => s.type.endsWith(":BatchExportPause"));
      return [
        ...(drift?.op === "update" && drift.diffs.includes("paused")
          ? []
          : [`expected drift of BatchExportPause.paused, got ${describe(changed(r))}`]),
        ...(writes(req).length === 0 ? [] : [`refresh wrote to the API: ${writes(req).join(", ")}`]),
      ];
    },
  });
}

/** `up` healing the drift: the batch export `exportId` is paused again on the server. */
async function healStep(d: Demo, exportId: string | undefined): Promise<void> {
  await cliStep(d, {
    label: "up-heal",
    operation: "up",
    more: {},
    title: "up heals the drift: the batch export is paused again",
    check: async (r) => {
      const healed = r.steps.find((s) => s.type.endsWith(":BatchExportPause"));
      const live = exportId ? (await snapshot(d.a)).batchExports[exportId] : undefined;
      return [
        ...(healed?.op === "update"
          ? []
          : [`expected an update of BatchExportPause, got ${describe(changed(r))}`]),
        ...(live === true ? [] : ["the batch export is not paused on the server"]),
      ];
    },
  });
}

/**
 * `destroy`: `total` deletes, every dashboard of `made` soft-deleted (PATCH, never HTTP DELETE), and the
 * organization as `before` (the snapshot taken before anything ran).
 */
async function destroyStep(
  d: Demo,
  before: Snapshot,
  total: number,
  made: { dashboards: Record<string, string>; projectId: string },
): Promise<void> {
  await cliStep(d, {
    label: "destroy",
    operation: "destroy",
    more: {},
    title: "destroy leaves the organization as found (dashboards soft-deleted, batch export unpaused)",
    check: async (r, req) => {
      const after = await snapshot(d.a);
      const dashboardPaths = Object.values(made.dashboards).map(
        (id) => `/api/projects/${made.projectId}/dashboards/${id}/`,
      );
      const hardDeletes = req.filter((x) =>
        /^DELETE \/api\/(projects|environments)\/[^/]+\/dashboards\/\d+\/$/.test(x),
      );
      const softDeletes = dashboardPaths.filter((p) => req.includes(`PATCH ${p}`));
      const diffs = (Object.keys(before) as (keyof Snapshot)[]).filter(
        (k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]),
      );
      return [
        ...(r.counts.delete === total ? [] : [`expected ${total} deletes, got ${r.counts.delete}`]),
        ...(hardDeletes.length === 0 ? [] : [`HTTP DELETE sent for dashboards: ${hardDeletes.join(", ")}`]),
        ...(dashboardPaths.length > 0 && softDeletes.length === dashboardPaths.length
          ? []
          : [`expected a soft delete (PATCH) of ${dashboardPaths.join(", ")}`]),
        ...diffs.map(
          (k) => `${k} differ: before ${JSON.stringify(before[k])}, after ${JSON.stringify(after[k])}`,
        ),
      ];
    },
  });
}

/** The steps in order (see the module doc); each reports itself on `d.steps`. */
async function runSteps(d: Demo): Promise<void> {
  const before = await snapshot(d.a);
  await configStep(d);
  const total = await previewStep(d);
  const made = await upStep(d, total);
  await upRefreshStep(d);
  await gate(d, "drift-gate", "the nightly drift gate passes: PostHog matches the program", undefined);
  await settingStep(d);
  const exportId = await outsideChangeStep(d);
  await gate(
    d,
    "drift-gate-fails",
    "the drift gate fails on the outside change, naming the batch export, and writes nothing",
    "warehouse-export",
  );
  await refreshDriftStep(d);
  await healStep(d, exportId);
  await gate(d, "drift-gate-healed", "the drift gate passes again", undefined);
  await destroyStep(d, before, total, made);
}

/** The demo's result from its steps; prints the summary line (a JSON line with `--json`). */
function finishDemo(d: Demo): DemoResult {
  const { steps, pulumiVersion } = d;
  const passed = steps.filter((s) => s.failures.length === 0).length;
  const ok = passed === steps.length;
  const summary = ok
    ? `npm start: all ${steps.length} steps did what they should, through the real Pulumi CLI ${pulumiVersion} (settings, preview, up, up --refresh, drift gate, setting change, outside change, drift gate failing, refresh, heal, drift gate, destroy); the organization is as it was found`
    : `npm start: ${steps.length - passed} of ${steps.length} steps did not do what they should (Pulumi CLI ${pulumiVersion}): ${steps
        .filter((s) => s.failures.length > 0)
        .map((s) => s.label)
        .join(", ")}`;
  if (d.opts.json) d.write(JSON.stringify({ summary, ok, passed, steps: steps.length, pulumiVersion }));
  else d.write(summary);
  return { ok, pulumiVersion, steps, summary };
}

/**
 * Runs the demo (see the module doc). Starts and stops its own emulator; never throws for a step that did
 * not do what it should (that step lists `failures`), only for setup errors (no CLI: run `npm run pulumi-cli`).
 */
export async function runDemo(opts: DemoOptions = {}): Promise<DemoResult> {
  const d = await startDemo(opts);
  try {
    await runSteps(d);
  } finally {
    await d.dns?.stop();
    await d.emulator.close();
    rmSync(d.work, { recursive: true, force: true });
  }
  return finishDemo(d);
}

if (require.main === module) {
  const { values } = parseArgs({ options: { json: { type: "boolean", default: false } } });
  runDemo({ json: values.json }).then(
    (r) => {
      process.exitCode = r.ok ? 0 : 1;
    },
    (e: unknown) => {
      process.stderr.write(`npm start failed: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
