/**
 * `npm run soak`: the fault-injection soak at a larger size than in `npm test` (see bench/soak-core.ts), then the
 * engine-kill soak (see bench/engine-kills.ts): SIGKILLs of the real Pulumi CLI's `up`/`destroy` (its process
 * group) at random points, each followed by what a user runs then (`pulumi cancel` for the lock it left, the same
 * command until it converges, `refresh --clear-pending-creates`).
 *
 *   npm run soak [-- --resources 300 --parallel 10 --max-rounds 10 --engine-kills 12 --kill-latency-ms 40
 *                    --kill-faults --kill-points random|held|both --seed N --only faults|kills --json]
 *
 * `--kill-faults` arms the fault phase's mix (429s, 5xx, resets, lost answers) during each killed run of the real
 * CLI and its re-runs: the fault soak through the real engine, with the look-alike dashboards of the kill soak.
 * `--kill-points` (default both): random kill points, kill points made certain by emulator holds (a look-alike
 * create answered, the engine frozen, the next one on the wire), or both in turn (bench/engine-kills.ts).
 *
 * Prints progress, then a summary (or one JSON object with --json); exits 1 when a phase did not converge, the
 * server and the state disagree (duplicates, orphans, missing, stale or refresh differences), a process of a
 * killed engine outlived it, a destroy did not leave the organization as seeded, or the API key leaked.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type EngineKillReport, runEngineKills } from "./engine-kills";
import { runSoak, type SoakReport } from "./soak-core";

function faultsOk(report: SoakReport): boolean {
  return (
    report.keyLeaks.length === 0 &&
    report.phases.every(
      (p) =>
        p.converged &&
        p.audit.duplicates.length + p.audit.orphans.length + p.audit.missing.length + p.audit.stale.length ===
          0,
    )
  );
}

function killsOk(report: EngineKillReport): boolean {
  const t = report.totals;
  return (
    t.notConverged +
      t.neededOperator +
      t.duplicates +
      t.orphans +
      t.missing +
      t.differences +
      t.leakedProcesses ===
      0 &&
    t.notSeededAfterDestroy === 0 &&
    report.baselineNotSeeded.length + report.finalNotSeeded.length + report.finalLeaked.length === 0 &&
    report.keyLeaks.length === 0
  );
}

function printFaults(report: SoakReport, ok: boolean): void {
  console.log(
    `soak: ${report.resources} resources, ${report.requests} API requests, ${report.faulted} faulted`,
  );
  for (const p of report.phases) {
    const a = p.audit;
    console.log(
      `  ${p.phase.padEnd(8)} rounds ${p.failuresPerRound.length} (failed ops per round: ${p.failuresPerRound.join(", ")}) ` +
        `duplicates ${a.duplicates.length}, orphans ${a.orphans.length}, missing ${a.missing.length}, stale ${a.stale.length}`,
    );
    for (const x of [...a.duplicates, ...a.orphans, ...a.missing, ...a.stale].slice(0, 10))
      console.log(`    ${x}`);
  }
  console.log(`  API key found in: ${report.keyLeaks.length ? report.keyLeaks.join("; ") : "nowhere"}`);
  console.log(`  wall time ${(report.wallMs / 1000).toFixed(1)} s — ${ok ? "OK" : "FAILED"}`);
}

function printKills(report: EngineKillReport, ok: boolean): void {
  const t = report.totals;
  const b = report.baseline;
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  console.log(
    `engine kills: ${report.kills.length} episodes of the real Pulumi CLI on examples/gitops (emulator latency ${report.latencyMs} ms, seed ${report.seed}` +
      `${report.faults ? `, faults armed: ${t.faulted} of ${t.apiRequests} API requests faulted` : ""}); ` +
      `un-killed: up ${s(b.upMs)} (${b.upOperations} provider operations), change ${s(b.changeMs)} (${b.changeOperations}), destroy ${s(b.destroyMs)} (${b.destroyOperations})`,
  );
  if (report.expectedDrift.length > 0)
    console.log(`  drift of un-killed runs too (not counted): ${report.expectedDrift.join("; ")}`);
  for (const k of report.kills) {
    const when =
      k.killedAtMs === undefined
        ? `not killed (the run ended first, exit ${k.finishedFirst})`
        : `killed at ${(k.killedAtMs / 1000).toFixed(2)} s${k.nth === undefined ? "" : ` (operation #${k.nth})`}`;
    const pending = k.pending.map((p) => `${p.operation} ${p.type} ${p.name}`).join(", ") || "none";
    console.log(`  #${String(k.index).padEnd(2)} ${k.kind.padEnd(7)} ${when}; pending: ${pending}`);
    const findings = [
      ...k.lostAtKill.map((x) => `applied, not recorded: ${x}`),
      ...k.duplicates.map((x) => `duplicate: ${x}`),
      ...k.orphans.map((x) => `orphan: ${x}`),
      ...k.missing.map((x) => `missing: ${x}`),
      ...k.differences.map((x) => `difference: ${x}`),
      ...k.notSeeded.map((x) => `after destroy, not as seeded: ${x}`),
      ...k.leaked.map((x) => `leaked process: ${x}`),
      ...(k.converged && !k.neededOperator ? [] : [`re-runs failed: ${k.recoveryErrors[0] ?? "?"}`]),
    ];
    console.log(
      `      recovered in ${k.recoveryRuns} run(s)${k.cancelledLock ? " after `pulumi cancel` (the killed run's lock)" : ""}${k.neededOperator ? " (after the operator removed orphans)" : ""}${k.converged ? "" : " — NOT converged"}` +
        `${k.clearedPendingCreates ? `, ${k.clearedPendingCreates} pending create(s) cleared by refresh` : ""}` +
        `${k.adoptedOnRequest.length ? `, ${k.adoptedOnRequest.join(", ")} declared with adopt: true as a re-run asked` : ""}; ` +
        `${k.childrenAtKill} process(es) of the killed run at the kill, ${k.leaked.length} leaked` +
        (findings.length ? "" : "; no finding"),
    );
    for (const f of findings) console.log(`      ${f}`);
  }
  console.log(
    `  totals: ${t.kills} kills (${t.duringOperation} during a provider operation, ${t.pendingCreates} pending creates, ${t.lostWrites} writes applied and not recorded); ` +
      `not converged ${t.notConverged}, duplicates ${t.duplicates}, orphans ${t.orphans}, missing ${t.missing}, differences ${t.differences}, ` +
      `leaked processes ${t.leakedProcesses}, Pulumi's language host lingering ${t.languageHostsLingering} (longest a child outlived the engine: ${t.longestOutlivedMs} ms; ` +
      `${
        Object.entries(t.longestOutlivedMsByRole)
          .map(([k, v]) => `${k} ${v} ms`)
          .join(", ") || "none"
      }), ` +
      `destroys not leaving the organization as seeded ${t.notSeededAfterDestroy}, operator clean-ups ${t.neededOperator}, ` +
      `locks removed with pulumi cancel ${t.cancelledLocks}, pending creates cleared by refresh ${t.clearedPendingCreates}, ` +
      `invites declared with adopt: true as a re-run asked ${t.adoptedOnRequest}`,
  );
  for (const [point, v] of Object.entries(t.byKillPoint))
    console.log(
      `  kill point ${point.padEnd(14)} ${v.kills} kills of ${v.episodes} episodes` +
        `${point === "answered" || point === "clear-pending" ? ` (${v.certain} at the certain moment)` : ""}, ` +
        `not converged ${v.notConverged}, duplicates ${v.duplicates}, orphans ${v.orphans}, missing ${v.missing}`,
    );
  for (const [type, r] of Object.entries(t.byType))
    console.log(
      `  ${type.padEnd(22)} creates under way at a kill ${r.pendingCreates}, applied and not recorded ${r.lost}, ` +
        `duplicates ${r.duplicates}, re-runs stuck ${r.stuck}, not restored by destroy ${r.notRestored}`,
    );
  console.log(
    `  final destroy: organization ${report.finalNotSeeded.length === 0 ? "as seeded" : `differs: ${report.finalNotSeeded.join("; ")}`}; ` +
      `processes left ${report.finalLeaked.length}; API key in the state, an event log or the output: ${report.keyLeaks.length ? report.keyLeaks.join("; ") : "nowhere"}`,
  );
  console.log(`  wall time ${(report.wallMs / 1000).toFixed(1)} s — ${ok ? "OK" : "FAILED"}`);
}

async function main(): Promise<void> {
  // The provider hosts of the runs (and their re-runs after a kill) share one create journal, this soak's own: the
  // emulator's ids repeat from run to run, so entries of an earlier soak must never be seen.
  process.env.POSTHOG_CREATE_JOURNAL_DIR ??= mkdtempSync(join(tmpdir(), "posthog-soak-journal-"));
  const { values } = parseArgs({
    options: {
      resources: { type: "string", default: "300" },
      parallel: { type: "string", default: "10" },
      "max-rounds": { type: "string", default: "10" },
      "engine-kills": { type: "string", default: "12" },
      "kill-latency-ms": { type: "string", default: "40" },
      "kill-faults": { type: "boolean", default: false },
      "kill-points": { type: "string", default: "both" },
      seed: { type: "string" },
      only: { type: "string" },
      json: { type: "boolean", default: false },
    },
  });
  const only = values.only;
  if (only !== undefined && only !== "faults" && only !== "kills")
    throw new Error(`--only takes faults or kills, got ${only}`);
  const killPoints = values["kill-points"];
  if (killPoints !== "random" && killPoints !== "held" && killPoints !== "both")
    throw new Error(`--kill-points takes random, held or both, got ${killPoints}`);
  const log = values.json ? undefined : (l: string) => console.error(l);
  let ok = true;
  const out: Record<string, unknown> = {};

  if (only !== "kills") {
    const report = await runSoak({
      resources: Number(values.resources),
      parallel: Number(values.parallel),
      maxRounds: Number(values["max-rounds"]),
      ...(log ? { log } : {}),
    });
    const good = faultsOk(report);
    ok &&= good;
    if (values.json) out.faults = { ...report, ok: good };
    else printFaults(report, good);
  }
  const kills = Number(values["engine-kills"]);
  if (only !== "faults" && kills > 0) {
    const report = await runEngineKills({
      kills,
      latencyMs: Number(values["kill-latency-ms"]),
      faults: values["kill-faults"],
      killPoints,
      ...(values.seed === undefined ? {} : { seed: Number(values.seed) }),
      ...(log ? { log } : {}),
    });
    const good = killsOk(report);
    ok &&= good;
    if (values.json) out.engineKills = { ...report, ok: good };
    else printKills(report, good);
  }
  if (values.json) console.log(JSON.stringify({ ...out, ok }));
  if (!ok) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
