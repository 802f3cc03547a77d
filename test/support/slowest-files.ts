/**
 * A vitest reporter (beside the default one, vitest.config.ts) that prints, at the end of a run, the ten test files
 * that took longest: the time of their tests and hooks (vitest's module `duration`), in seconds, slowest first.
 * It is where to look when `npm test` grows; docs/contributing/tests.md says how to keep it short.
 */
import type { Reporter, TestModule } from "vitest/node";

/** How many files the summary names. */
const SHOWN = 10;

export default class SlowestFiles implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const rows = testModules
      .map((m) => ({ file: m.relativeModuleId, seconds: m.diagnostic().duration / 1000 }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, SHOWN);
    if (rows.length === 0) return;
    const total = testModules.reduce((sum, m) => sum + m.diagnostic().duration, 0) / 1000;
    const lines = rows.map((r) => `  ${r.seconds.toFixed(1).padStart(7)} s  ${r.file}`);
    process.stdout.write(
      `\nThe ${rows.length} slowest test files (tests and hooks; all ${testModules.length} files: ${total.toFixed(0)} s):\n${lines.join("\n")}\n`,
    );
  }
}
