/**
 * Text and JSON renderings of the stand-in engine's results: Pulumi-like readable lines, and the one JSON
 * line per step printed with `--json`.
 */
import type { Diagnostic, EngineEvent, Operation, RunResult, Step, StepOp } from "./engine";
import { type Json, UNKNOWN } from "./values";

const SYMBOL: Record<StepOp, string> = {
  create: "+ ",
  update: "~ ",
  replace: "+-",
  delete: "- ",
  same: "  ",
};
const PAST: Record<StepOp, string> = {
  create: "created",
  update: "updated",
  replace: "replaced",
  delete: "deleted",
  same: "unchanged",
};
const FUTURE: Record<StepOp, string> = {
  create: "to create",
  update: "to update",
  replace: "to replace",
  delete: "to delete",
  same: "unchanged",
};

/** `pulumi-nodejs:dynamic/posthog:Dashboard` → `posthog:Dashboard` (the module and type the SDK gives). */
export function shortType(type: string): string {
  return type.replace(/^pulumi-nodejs:dynamic\//, "");
}

/** The heading Pulumi prints for an operation, e.g. `Previewing update (dev)`. */
export function heading(operation: Operation, stack: string): string {
  const verb = { preview: "Previewing update", up: "Updating", refresh: "Refreshing", destroy: "Destroying" };
  return `${verb[operation]} (${stack})`;
}

/** One readable line for a step: symbol, type, name, operation, changed properties, error. */
export function formatStep(step: Step, operation: Operation): string {
  const what =
    operation === "refresh"
      ? { create: "create", update: "drifted", replace: "replace", delete: "gone", same: "in sync" }[step.op]
      : step.op;
  const diff =
    step.op === "update" || step.op === "replace"
      ? `  [diff: ${step.diffs.map((k) => `${step.replaces?.includes(k) ? "+-" : "~"}${k}`).join(", ")}]`
      : "";
  const error = step.error ? `  **failed**: ${step.error}` : "";
  return ` ${SYMBOL[step.op]} ${shortType(step.type).padEnd(32)} ${step.name.padEnd(40)} ${what}${diff}${error}`;
}

/** A diagnostic line (program logs, provider output), or undefined for noise not worth showing. */
export function formatDiagnostic(d: Diagnostic): string | undefined {
  if (/ExperimentalWarning|--trace-warnings/.test(d.message)) return undefined;
  return `    ${d.severity}: ${d.message}`;
}

/** JSON text of an output value, with values not known during a preview shown as `[unknown]`. */
function showValue(v: Json): string {
  if (v === UNKNOWN) return "[unknown]";
  return JSON.stringify(v, (_k, x: unknown) => (x === UNKNOWN ? "[unknown]" : x));
}

/** The summary block: outputs and counts, Pulumi style. */
export function formatSummary(r: RunResult): string[] {
  const lines: string[] = [];
  const outs = Object.entries(r.outputs);
  if (outs.length > 0 && (r.operation === "up" || r.operation === "preview")) {
    lines.push("Outputs:");
    for (const [k, v] of outs) lines.push(`    ${k}: ${showValue(v)}`);
  }
  lines.push("Resources:");
  const future = r.operation === "preview";
  for (const op of ["create", "update", "replace", "delete"] as const) {
    const n = r.counts[op];
    if (n === 0) continue;
    const label = r.operation === "refresh" && op === "update" ? "drifted" : future ? FUTURE[op] : PAST[op];
    lines.push(`    ${SYMBOL[op].trim()} ${n} ${label}`);
  }
  lines.push(`    ${r.counts.same} unchanged`);
  const failed = r.steps.filter((s) => s.error).length;
  if (failed > 0) lines.push(`    ${failed} failed`);
  return lines;
}

/** The per-step JSON object printed with `--json` (one line each). */
export function jsonLine(r: RunResult, label: string = r.operation): Record<string, unknown> {
  return {
    step: label,
    operation: r.operation,
    stack: r.stack,
    ok: r.ok,
    counts: r.counts,
    changes: r.steps
      .filter((s) => s.op !== "same" || s.error)
      .map((s) => ({
        op: s.op,
        type: shortType(s.type),
        name: s.name,
        urn: s.urn,
        diffs: s.diffs,
        ...(s.replaces ? { replaces: s.replaces } : {}),
        ...(s.error ? { error: s.error } : {}),
      })),
    errors: r.diagnostics.filter((d) => d.severity === "error").map((d) => d.message),
  };
}

/** An event printer for readable output (changed or failed steps as they complete, diagnostics worth showing). */
export function printer(operation: Operation, write: (line: string) => void): (e: EngineEvent) => void {
  return (e) => {
    if (e.kind === "step") {
      // Like Pulumi without --show-sames: unchanged resources only appear in the summary count.
      if (e.step.op !== "same" || e.step.error) write(formatStep(e.step, operation));
    } else {
      const line = formatDiagnostic(e.diagnostic);
      if (line !== undefined && e.diagnostic.severity !== "debug") write(line);
    }
  };
}
