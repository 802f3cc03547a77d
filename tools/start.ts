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

/**
 * Runs the demo (see the module doc). Starts and stops its own emulator; never throws for a step that did
 * not do what it should (that step lists `failures`), only for setup errors (no CLI: run `npm run pulumi-cli`).
 */
export async function runDemo(opts: DemoOptions = {}): Promise<DemoResult> {
  const projectDir = resolve(opts.projectDir ?? ".");
  const write = opts.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const project = readProject(projectDir);
  const work = mkdtempSync(join(tmpdir(), "posthog-gitops-demo-"));
  const stateDir = join(work, "backend");
  const configFile = join(work, "Pulumi.dev.yaml");
  const cli = { cwd: projectDir, stateDir };
  const pulumiVersion = (await pulumiOk(["version"], cli)).trim();
  const emulator = await startEmulator({ rateLimit: false });
  const a = seedApi(emulator.url, emulator.apiKey);
  // The connection comes from the stack's settings, as a user sets it; none from POSTHOG_* variables.
  const env: NodeJS.ProcessEnv = {
    POSTHOG_HOST: undefined,
    POSTHOG_API_KEY: undefined,
    POSTHOG_ORGANIZATION_ID: undefined,
    POSTHOG_PROJECT_ID: undefined,
  };
  const steps: DemoStep[] = [];
  if (!opts.json) {
    write(
      `The real Pulumi CLI ${pulumiVersion} (${pulumiExecutable()}), local backend ${backendUrl(stateDir)}`,
    );
    write(`Emulator at ${emulator.url} (organization ${emulator.organizationId})`);
    write("");
  }

  const requestLog = async (): Promise<string[]> => {
    const log = (await a.call("GET", "/_emulator/requests")) as { method: string; path: string }[];
    await a.call("DELETE", "/_emulator/requests");
    return log.map((r) => `${r.method} ${r.path}`);
  };
  const report = (step: DemoStep) => {
    steps.push(step);
    if (opts.json) {
      write(JSON.stringify(jsonLine(step)));
      return;
    }
    write(step.failures.length === 0 ? `  ✔ ${step.title}` : `  ✘ ${step.title}`);
    for (const f of step.failures) write(`      - ${f}`);
    write("");
  };
  const cliStep = async (
    label: string,
    operation: Operation,
    more: Partial<RunOptions>,
    title: string,
    check: (r: RunResult, requests: string[]) => Promise<string[]> | string[],
    expectOk = true,
  ): Promise<RunResult> => {
    const flags = [
      ...(operation === "preview" ? [] : ["--yes"]),
      ...(more.refresh ? ["--refresh"] : []),
      ...(more.expectNoChanges ? ["--expect-no-changes"] : []),
    ];
    const command = `pulumi ${operation}${flags.length ? ` ${flags.join(" ")}` : ""}`;
    if (!opts.json) write(`=== ${label}: ${command}`);
    await requestLog();
    const result = await runStack({
      operation,
      projectDir,
      stack: "dev",
      stateDir,
      configFile,
      env,
      ...more,
      ...(opts.json ? {} : { echo: (text: string) => process.stdout.write(text) }),
    });
    const requests = await requestLog();
    const failures =
      result.ok === expectOk
        ? []
        : [
            expectOk
              ? `the command failed (exit ${result.exitCode})`
              : "the command succeeded; it should fail",
          ];
    failures.push(...(await check(result, requests)));
    report({ label, command, title, result, failures, requests });
    return result;
  };

  let dns: ReturnType<typeof dnsAutomation> | undefined;
  try {
    const before = await snapshot(a);
    const writes = (requests: string[]) => requests.filter((r) => !r.startsWith("GET "));

    // The settings, as the README's quick start sets them: the key encrypted in the stack's settings file.
    await ensureStack({ projectDir, stack: "dev", stateDir, configFile, env });
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
        { ...cli, env },
      );
    await set("posthog:host", emulator.url);
    await set("posthog:organizationId", emulator.organizationId);
    await set("posthog:apiKey", emulator.apiKey, true);
    const settings = readFileSync(configFile, "utf8");
    report({
      label: "config",
      command: "pulumi config set posthog:host …; pulumi config set --secret posthog:apiKey …",
      title: "the connection is stack settings, the API key stored encrypted",
      failures: [
        ...(settings.includes(emulator.apiKey)
          ? ["the API key is in clear in the stack's settings file"]
          : []),
        ...(/posthog:apiKey:\s*\n\s*secure:/.test(settings)
          ? []
          : ["posthog:apiKey is not a secure setting"]),
      ],
      requests: await requestLog(),
    });

    const preview = await cliStep(
      "preview",
      "preview",
      {},
      "preview plans only creates and writes nothing",
      (r, req) => [
        ...(r.counts.create > 0 && changed(r).every((s) => s.op === "create")
          ? []
          : [`expected only creates, got ${describe(changed(r))}`]),
        ...(writes(req).length === 0 ? [] : [`preview wrote to the API: ${writes(req).join(", ")}`]),
      ],
    );
    const total = preview.counts.create;

    dns = dnsAutomation(a);
    let published: string[] = [];
    const up = await cliStep(
      "up",
      "up",
      {},
      `up creates all ${total} resources and verifies the domain`,
      async (r) => {
        published = (await dns?.stop()) ?? [];
        return [
          ...(r.counts.create === total && changed(r).length === total
            ? []
            : [`expected ${total} creates, got ${describe(changed(r))}`]),
          ...(r.outputs.domainVerified === true ? [] : ["the domain was not verified"]),
          ...(r.outputs.projectApiToken === "[secret]"
            ? []
            : ["the project's API token output is not secret"]),
          ...(published.length > 0 ? [] : ["no TXT record was published"]),
        ];
      },
    );
    if (!opts.json && published.length > 0)
      write(`  (DNS automation published TXT ${published.join(", ")})\n`);
    const dashboards = (up.outputs.dashboards ?? {}) as Record<string, string>;
    const projectId = String(up.outputs.projectId ?? "");

    await cliStep(
      "up-refresh",
      "up",
      { refresh: true },
      "up --refresh applies the SSO enforcement that waited for the domain's verification, and only that",
      (r, req) => {
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
    );

    const gate = (label: string, title: string, expectDrift: string | undefined) =>
      cliStep(
        label,
        "preview",
        { refresh: true, expectNoChanges: true },
        title,
        (r, req) => {
          const c = changed(r);
          const asExpected =
            expectDrift === undefined ? c.length === 0 : c.some((s) => s.name === expectDrift);
          const wanted = expectDrift === undefined ? "no changes" : `a change of ${expectDrift}`;
          return [
            ...(asExpected ? [] : [`expected ${wanted}, got ${describe(c)}`]),
            ...(writes(req).length === 0
              ? []
              : [`the drift gate wrote to the API: ${writes(req).join(", ")}`]),
          ];
        },
        expectDrift === undefined,
      );
    await gate("drift-gate", "the nightly drift gate passes: PostHog matches the program", undefined);

    const doc = parseDocument(readFileSync(configFile, "utf8"));
    doc.setIn(["config", `${project.name}:publicKpis`], true);
    writeFileSync(configFile, doc.toString());
    if (!opts.json)
      write(
        `Changed stack setting: ${project.name}:publicKpis: false → true (in a copy of Pulumi.dev.yaml)\n`,
      );
    await cliStep(
      "up-setting",
      "up",
      {},
      "after changing publicKpis, up updates exactly the dashboard sharing",
      (r) => {
        const c = changed(r);
        const only = c.length === 1 && c[0]?.op === "update" && c[0].type.endsWith(":DashboardSharing");
        return [
          ...(only ? [] : [`expected exactly one update of DashboardSharing, got ${describe(c)}`]),
          ...(c[0]?.diffs.includes("enabled") ? [] : ["the update did not change `enabled`"]),
          ...(r.outputs.kpiShareToken === "[secret]" ? [] : ["the share token output is not secret"]),
        ];
      },
    );

    // The outside change: someone unpauses the warehouse export in the PostHog UI.
    const exportId = Object.entries(await snapshot(a).then((s) => s.batchExports)).find(
      ([, paused]) => paused,
    )?.[0];
    if (!opts.json) write("=== outside-change: someone unpauses the batch export through the API");
    await requestLog();
    const outside: string[] = [];
    if (exportId) await a.call("POST", `/api/organizations/@current/batch_exports/${exportId}/unpause/`, {});
    else outside.push("no paused batch export found (the dev stack should have paused it)");
    report({
      label: "outside-change",
      command: `POST …/batch_exports/${exportId ?? "?"}/unpause/`,
      title: "someone unpauses the batch export outside Pulumi",
      failures: outside,
      requests: await requestLog(),
    });

    await gate(
      "drift-gate-fails",
      "the drift gate fails on the outside change, naming the batch export, and writes nothing",
      "warehouse-export",
    );

    await cliStep(
      "refresh-drift",
      "refresh",
      {},
      "refresh reports the unpaused batch export as drift",
      (r, req) => {
        const drift = r.steps.find((s) => s.type.endsWith(":BatchExportPause"));
        return [
          ...(drift?.op === "update" && drift.diffs.includes("paused")
            ? []
            : [`expected drift of BatchExportPause.paused, got ${describe(changed(r))}`]),
          ...(writes(req).length === 0 ? [] : [`refresh wrote to the API: ${writes(req).join(", ")}`]),
        ];
      },
    );

    await cliStep("up-heal", "up", {}, "up heals the drift: the batch export is paused again", async (r) => {
      const healed = r.steps.find((s) => s.type.endsWith(":BatchExportPause"));
      const live = exportId ? (await snapshot(a)).batchExports[exportId] : undefined;
      return [
        ...(healed?.op === "update"
          ? []
          : [`expected an update of BatchExportPause, got ${describe(changed(r))}`]),
        ...(live === true ? [] : ["the batch export is not paused on the server"]),
      ];
    });

    await gate("drift-gate-healed", "the drift gate passes again", undefined);

    await cliStep(
      "destroy",
      "destroy",
      {},
      "destroy leaves the organization as found (dashboards soft-deleted, batch export unpaused)",
      async (r, req) => {
        const after = await snapshot(a);
        const dashboardPaths = Object.values(dashboards).map(
          (id) => `/api/projects/${projectId}/dashboards/${id}/`,
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
    );
  } finally {
    await dns?.stop();
    await emulator.close();
    rmSync(work, { recursive: true, force: true });
  }

  const passed = steps.filter((s) => s.failures.length === 0).length;
  const ok = passed === steps.length;
  const summary = ok
    ? `npm start: all ${steps.length} steps did what they should, through the real Pulumi CLI ${pulumiVersion} (settings, preview, up, up --refresh, drift gate, setting change, outside change, drift gate failing, refresh, heal, drift gate, destroy); the organization is as it was found`
    : `npm start: ${steps.length - passed} of ${steps.length} steps did not do what they should (Pulumi CLI ${pulumiVersion}): ${steps
        .filter((s) => s.failures.length > 0)
        .map((s) => s.label)
        .join(", ")}`;
  if (opts.json) write(JSON.stringify({ summary, ok, passed, steps: steps.length, pulumiVersion }));
  else write(summary);
  return { ok, pulumiVersion, steps, summary };
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
