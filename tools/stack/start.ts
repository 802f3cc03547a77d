#!/usr/bin/env node
/**
 * `npm start [-- --json]`: the whole GitOps cycle of examples/gitops on the `dev` stack, against a fresh local
 * emulator (no account, no network), through the stand-in engine (tools/stack/engine.ts):
 *
 *   preview → up (a DNS automation publishes the domain's TXT record meanwhile) → preview showing no changes →
 *   a changed stack setting (publicKpis: true) → up updating exactly that → an outside change (someone
 *   unpauses the batch export through the API) → refresh reporting the drift → up healing it → destroy
 *   leaving the organization as it was found (dashboards soft-deleted, never HTTP DELETE; the batch export
 *   unpaused again).
 *
 * Every step is checked; the exit status is 0 only when every step did what it should. The repository's
 * files are not touched: the changed setting is applied to a copy of Pulumi.dev.yaml, and the checkpoint
 * lives in a temporary directory.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { parseDocument } from "yaml";
import { startEmulator } from "../../emulator";
import { type Operation, type RunResult, runStack, type Step } from "./engine";
import { readProject, stackFilePath } from "./project";
import { formatSummary, heading, jsonLine, printer } from "./report";
import { dnsAutomation, type SeedApi, seedApi } from "./seed-api";

/** One step of the demo and whether it did what it should. */
export interface DemoStep {
  /** Short id, e.g. "preview", "up-setting", "refresh-drift". */
  label: string;
  /** What the step does and what it must show, in words. */
  title: string;
  /** The engine's result (absent for the outside change). */
  result?: RunResult;
  /** Expectations that were not met (empty = passed). */
  failures: string[];
  /** Emulator API requests made during the step: `METHOD /path`. */
  requests: string[];
}

export interface DemoOptions {
  /** Repository root holding Pulumi.yaml (default: the current directory). */
  projectDir?: string;
  /** Print per-step JSON lines instead of the readable account. */
  json?: boolean;
  /** Where lines go (default stdout). */
  write?: (line: string) => void;
}

export interface DemoResult {
  ok: boolean;
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

/**
 * Runs the demo (see the module doc). Starts and stops its own emulator; never throws for a step that did
 * not do what it should (that step lists `failures`), only for setup errors.
 */
export async function runDemo(opts: DemoOptions = {}): Promise<DemoResult> {
  const projectDir = resolve(opts.projectDir ?? ".");
  const write = opts.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const project = readProject(projectDir);
  const work = mkdtempSync(join(tmpdir(), "posthog-gitops-demo-"));
  const statePath = join(work, "dev.json");
  const configFile = join(work, "Pulumi.dev.yaml");
  copyFileSync(stackFilePath(projectDir, project, "dev"), configFile);
  const emulator = await startEmulator({ rateLimit: false });
  const a = seedApi(emulator.url, emulator.apiKey);
  const env = {
    POSTHOG_HOST: emulator.url,
    POSTHOG_API_KEY: emulator.apiKey,
    POSTHOG_ORGANIZATION_ID: emulator.organizationId,
    POSTHOG_PROJECT_ID: String(emulator.projectId),
  };
  const steps: DemoStep[] = [];
  if (!opts.json) {
    write(`Emulator at ${emulator.url} (organization ${emulator.organizationId}); checkpoint ${statePath}`);
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
      const base = step.result ? jsonLine(step.result, step.label) : { step: step.label };
      write(
        JSON.stringify({
          ...base,
          title: step.title,
          passed: step.failures.length === 0,
          failures: step.failures,
        }),
      );
      return;
    }
    if (step.result) {
      write("");
      for (const line of formatSummary(step.result)) write(line);
    }
    write(step.failures.length === 0 ? `  ✔ ${step.title}` : `  ✘ ${step.title}`);
    for (const f of step.failures) write(`      - ${f}`);
    write("");
  };
  const engineStep = async (
    label: string,
    operation: Operation,
    title: string,
    check: (r: RunResult, requests: string[]) => Promise<string[]> | string[],
  ): Promise<RunResult> => {
    if (!opts.json) write(`=== ${label}: ${heading(operation, "dev")}`);
    await requestLog();
    const result = await runStack({
      operation,
      projectDir,
      stack: "dev",
      statePath,
      configFile,
      env,
      ...(opts.json ? {} : { onEvent: printer(operation, write) }),
    });
    const requests = await requestLog();
    const failures = result.ok ? [] : ["the operation failed"];
    failures.push(...(await check(result, requests)));
    report({ label, title, result, failures, requests });
    return result;
  };

  let dns: ReturnType<typeof dnsAutomation> | undefined;
  try {
    const before = await snapshot(a);
    const writes = (requests: string[]) => requests.filter((r) => !r.startsWith("GET "));

    const preview = await engineStep(
      "preview",
      "preview",
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
    const up = await engineStep(
      "up",
      "up",
      `up creates all ${total} resources and verifies the domain`,
      async (r) => {
        published = (await dns?.stop()) ?? [];
        return [
          ...(r.counts.create === total && changed(r).length === total
            ? []
            : [`expected ${total} creates, got ${describe(changed(r))}`]),
          ...(r.outputs.domainVerified === true ? [] : ["the domain was not verified"]),
          ...(published.length > 0 ? [] : ["no TXT record was published"]),
        ];
      },
    );
    if (!opts.json && published.length > 0)
      write(`  (DNS automation published TXT ${published.join(", ")})\n`);
    const dashboards = (up.outputs.dashboards ?? {}) as Record<string, string>;
    const projectId = String(up.outputs.projectId ?? "");

    await engineStep("preview-no-changes", "preview", "a second preview shows no changes", (r) =>
      changed(r).length === 0 && r.counts.same === total
        ? []
        : [`expected no changes, got ${describe(changed(r))}`],
    );

    const doc = parseDocument(readFileSync(configFile, "utf8"));
    doc.setIn(["config", `${project.name}:publicKpis`], true);
    writeFileSync(configFile, doc.toString());
    if (!opts.json)
      write(
        `Changed stack setting: ${project.name}:publicKpis: false → true (in a copy of Pulumi.dev.yaml)\n`,
      );
    await engineStep(
      "up-setting",
      "up",
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
      title: `POST …/batch_exports/${exportId ?? "?"}/unpause/ outside Pulumi`,
      failures: outside,
      requests: await requestLog(),
    });

    await engineStep(
      "refresh-drift",
      "refresh",
      "refresh reports the unpaused batch export as drift",
      (r) => {
        const drift = r.steps.find((s) => s.type.endsWith(":BatchExportPause"));
        return drift?.op === "update" && drift.diffs.includes("paused")
          ? []
          : [`expected drift of BatchExportPause.paused, got ${describe(changed(r))}`];
      },
    );

    await engineStep("up-heal", "up", "up heals the drift: the batch export is paused again", async (r) => {
      const healed = r.steps.find((s) => s.type.endsWith(":BatchExportPause"));
      const live = exportId ? (await snapshot(a)).batchExports[exportId] : undefined;
      return [
        ...(healed?.op === "update"
          ? []
          : [`expected an update of BatchExportPause, got ${describe(changed(r))}`]),
        ...(live === true ? [] : ["the batch export is not paused on the server"]),
      ];
    });

    await engineStep(
      "destroy",
      "destroy",
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
    ? `npm start: all ${steps.length} steps did what they should (preview, up, no-change preview, setting change, outside change, drift, heal, destroy); the organization is as it was found`
    : `npm start: ${steps.length - passed} of ${steps.length} steps did not do what they should: ${steps
        .filter((s) => s.failures.length > 0)
        .map((s) => s.label)
        .join(", ")}`;
  if (opts.json) write(JSON.stringify({ summary, ok, passed, steps: steps.length }));
  else write(summary);
  return { ok, steps, summary };
}

if (require.main === module) {
  const { values } = parseArgs({ options: { json: { type: "boolean", default: false } } });
  runDemo({ json: values.json }).then(
    (r) => {
      process.exitCode = r.ok ? 0 : 1;
    },
    (e: unknown) => {
      process.stderr.write(`npm start failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
