/**
 * `npm run soak`: the fault-injection soak at a larger size than in `npm test` (see bench/soak-core.ts).
 *
 *   npm run soak [-- --resources 300 --parallel 10 --max-rounds 10 --json]
 *
 * Prints progress, then a summary (or one JSON object with --json); exits 1 when a phase did not converge,
 * the server and the state disagree (duplicates, orphans, missing, stale) or the API key leaked.
 */
import { parseArgs } from "node:util";
import { runSoak } from "./soak-core";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      resources: { type: "string", default: "300" },
      parallel: { type: "string", default: "10" },
      "max-rounds": { type: "string", default: "10" },
      json: { type: "boolean", default: false },
    },
  });
  const report = await runSoak({
    resources: Number(values.resources),
    parallel: Number(values.parallel),
    maxRounds: Number(values["max-rounds"]),
    ...(values.json ? {} : { log: (l: string) => console.error(l) }),
  });
  const ok =
    report.keyLeaks.length === 0 &&
    report.phases.every(
      (p) =>
        p.converged &&
        p.audit.duplicates.length + p.audit.orphans.length + p.audit.missing.length + p.audit.stale.length ===
          0,
    );
  if (values.json) console.log(JSON.stringify({ ...report, ok }));
  else {
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
  if (!ok) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
