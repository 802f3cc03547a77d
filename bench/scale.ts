/**
 * Scale: the generated program of bench/latency.ts (members, invites, dashboards in 3 projects, collaborators on
 * the first dashboard of each) at 300, 1,000 and 3,000 resources with our provider, the naive one, the naive one
 * with ours' outputs and the no-op one (below), through the real Pulumi CLI (tools/pulumi.ts, v3.274.1 on a local file backend): `up`, `preview --refresh`,
 * `destroy`, each on a fresh emulator child answering
 * after 80 ± 20 ms and throttling as PostHog does (480 requests a minute, 4,800 an hour per key; each operation
 * starts with the windows empty, as runs minutes apart do; the invite budget is lifted, see latency.ts). The CLI
 * saves the state at the end of each operation only (see {@link SKIP_CHECKPOINTS}).
 *
 * Per run: wall seconds, requests the emulator answered, 429s, failed steps, the provider host's peak RSS, the
 * state's size (the file backend's `<stack>.json`). Derived: at the largest size, ms per resource beyond PostHog's floor for `up` and
 * `destroy` and ms per resource of the whole refresh (targets ≤ 5), the refresh's
 * requests (targets ≤ 15 at 300, ≤ 60 at 3,000), ours ÷ naive wall at 300 (target ≤ 1.05), and for each run the
 * floor PostHog's sliding window sets: n requests need at least ⌊(n − 1)/480⌋ minutes.
 *
 * The engine's floor (issue 36): at every size the same program shape also runs with two more providers of
 * bench/naive-provider.ts through the same CLI: `naiveOutputs`, the naive provider returning ours' output
 * properties, its program declaring the output properties ours' classes declare (the same HTTP calls as naive),
 * and `noop`, ours' program on a provider that answers at once without
 * HTTP and returns ours' outputs (the engine's own cost for this state). Per size and operation the bench prints
 * ours, naive, naive with outputs, no-op and PostHog's floor ({@link ScaleRun.floorSeconds} of ours' run), and the
 * goals: at the smallest size (300) ours ≤ 1.05 × naive with outputs, at the largest (3,000) ours ≤ max(no-op,
 * PostHog's floor) + 2 ms per resource, for each operation.
 *
 *   npm run bench -- --only scale [--scale-sizes 300,1000,3000] [--scale-repeat 6]   (results.json `scale`)
 */
import { median, round } from "./emulator-process";
import { chainOf, type OpName, type ProviderKind, runSequence } from "./latency";

/** One operation of one program size with one provider. */
export interface ScaleRun {
  resources: number;
  provider: ProviderKind;
  operation: OpName;
  wallSeconds: number;
  requests: number;
  throttled: number;
  failed: number;
  providerRssMiB: number | null;
  stateBytes: number | null;
  /** wallSeconds ÷ resources, in milliseconds. */
  msPerResource: number;
  /** What PostHog's sliding window of 480 a minute allows at best for these requests: ⌊(n − 1)/480⌋ × 60 s. */
  windowFloorSeconds: number;
  /**
   * PostHog's floor for this run: max(the window floor, the longest chain of dependent requests × the mean RTT),
   * as latency.ts bounds an operation (chainOf; requests ÷ rate is the window floor here). 0 for the no-op run.
   */
  floorSeconds?: number;
  /** Every round's wall, when the run is the median of several (the smallest size). */
  wallSamples?: number[];
  firstError?: string;
}

/** A target of the issue, checked on the runs. */
export interface ScaleTarget {
  name: string;
  value: number | null;
  limit: number;
  ok: boolean;
}

export interface ScaleResults {
  latencyMs: number;
  jitterMs: number;
  runs: ScaleRun[];
  targets: ScaleTarget[];
}

const OPS: OpName[] = ["up", "previewRefresh", "destroy"];
/** The providers run at each size, in the order of the table's columns. */
const PROVIDERS: ProviderKind[] = ["ours", "naive", "naiveOutputs", "noop"];
/** The goals of issue 36: ours ÷ naive with outputs at the smallest size; ms per resource at the largest. */
const OUTPUTS_RATIO_GOAL = 1.05;
const MS_PER_RESOURCE_GOAL = 2;

/**
 * The CLI saves the state only at the end of each operation (`PULUMI_SKIP_CHECKPOINTS=true`), for ours and naive
 * alike: saving the whole state after every step, as the engine does by default, costs O(n²) in the stack's size
 * (through the stand-in at 1,000 resources it was most of `up`'s 147 s), the engine's cost, not the provider's;
 * `stateBytes` shows what each provider adds to it. Pulumi v3.274.1 honours the variable on its own: the file
 * backend's SnapshotManager runs `unsafeServiceLoop`, which saves only when the operation ends
 * (pkg/backend/snapshot.go `NewSnapshotManager`; sdk/go/common/env/env.go declares `SkipCheckpoints` without
 * `env.Needs(Experimental)`). `PULUMI_EXPERIMENTAL`, which the stand-in required beside it, is left unset: in
 * this CLI it also turns on update plans (`GeneratePlan` in cmd/pulumi/operations/up.go and preview.go), work a
 * user's `pulumi up` does not do.
 */
const SKIP_CHECKPOINTS = { PULUMI_SKIP_CHECKPOINTS: "true" };

/** Runs the scale section (needs `npm run build`). `sizes` default 300, 1,000, 3,000; every provider at each. */
export async function runScaleBench(
  o: {
    sizes?: number[];
    latencyMs?: number;
    jitterMs?: number;
    /**
     * Rounds at the smallest size, the providers' order rotating (default 6; with 3 the `up` ratio's median moved
     * between 1.04 and 1.16 from one run to the next): its walls are the medians.
     */
    repeat?: number;
    progress?: (line: string) => void;
  } = {},
): Promise<ScaleResults> {
  const sizes = o.sizes ?? [300, 1000, 3000];
  const latencyMs = o.latencyMs ?? 80;
  const jitterMs = o.jitterMs ?? 20;
  const repeat = Math.max(1, o.repeat ?? 6);
  const progress = o.progress ?? (() => undefined);
  const smallest = Math.min(...sizes);
  // At the smallest size the providers take turns, `repeat` rounds, each round starting one provider later, so
  // that a drift of the machine's load hits all alike; the larger sizes run once per provider.
  const plan: { size: number; provider: ProviderKind }[] = [];
  for (let r = 0; r < repeat; r++)
    for (let i = 0; i < PROVIDERS.length; i++)
      plan.push({ size: smallest, provider: PROVIDERS[(r + i) % PROVIDERS.length] as ProviderKind });
  for (const size of sizes)
    if (size !== smallest) for (const provider of PROVIDERS) plan.push({ size, provider });
  const samples = new Map<string, ScaleRun[]>();
  for (const { size, provider } of plan) {
    progress(`scale: ${size} resources, ${provider}`);
    const { ops, graph } = await runSequence(
      "generated",
      provider,
      size,
      latencyMs,
      jitterMs,
      progress,
      SKIP_CHECKPOINTS,
    );
    for (const operation of OPS) {
      const f = ops[operation];
      const key = `${size}/${provider}/${operation}`;
      samples.set(key, [
        ...(samples.get(key) ?? []),
        {
          resources: graph.length,
          provider,
          operation,
          wallSeconds: f.wallSeconds,
          requests: f.requests,
          throttled: f.throttled,
          failed: f.failed,
          providerRssMiB: f.providerRssMiB ?? null,
          stateBytes: f.stateBytes ?? null,
          msPerResource: round((f.wallSeconds * 1000) / Math.max(1, graph.length), 1),
          windowFloorSeconds: Math.floor(Math.max(0, f.requests - f.throttled - 1) / 480) * 60,
          floorSeconds: round(
            Math.max(
              Math.floor(Math.max(0, f.requests - f.throttled - 1) / 480) * 60,
              (chainOf(graph, provider, operation, 0).chain * f.meanRttMs) / 1000,
            ),
            2,
          ),
          ...(f.firstError ? { firstError: f.firstError } : {}),
        },
      ]);
    }
  }
  const runs = [...samples.values()].map(medianRun);
  return { latencyMs, jitterMs, runs, targets: targetsOf(runs, sizes) };
}

/**
 * One run from the rounds of one size, provider and operation: the median wall (and its time per resource), the
 * median requests, every 429 and failure, the largest RSS; `wallSamples` lists every wall.
 */
function medianRun(rounds: ScaleRun[]): ScaleRun {
  const first = rounds[0] as ScaleRun;
  if (rounds.length === 1) return first;
  const wall = round(median(rounds.map((r) => r.wallSeconds)));
  const rss = rounds.map((r) => r.providerRssMiB).filter((x): x is number => x !== null);
  const error = rounds.find((r) => r.firstError)?.firstError;
  return {
    ...first,
    wallSeconds: wall,
    msPerResource: round((wall * 1000) / Math.max(1, first.resources), 1),
    requests: Math.round(median(rounds.map((r) => r.requests))),
    throttled: rounds.reduce((a, r) => a + r.throttled, 0),
    failed: rounds.reduce((a, r) => a + r.failed, 0),
    providerRssMiB: rss.length > 0 ? Math.max(...rss) : null,
    ...(first.floorSeconds !== undefined
      ? { floorSeconds: round(median(rounds.map((r) => r.floorSeconds ?? 0)), 2) }
      : {}),
    wallSamples: rounds.map((r) => r.wallSeconds),
    ...(error ? { firstError: error } : {}),
  };
}

/** The targets on these runs. */
export function targetsOf(runs: ScaleRun[], sizes: number[]): ScaleTarget[] {
  const smallest = Math.min(...sizes);
  const largest = Math.max(...sizes);
  const find = (size: number, provider: ProviderKind, op: OpName) =>
    runs.find(
      (r) => r.provider === provider && r.operation === op && Math.abs(r.resources - size) < size * 0.01,
    );
  const targets: ScaleTarget[] = [];
  const add = (name: string, value: number | undefined, limit: number) =>
    targets.push({ name, value: value ?? null, limit, ok: value !== undefined && value <= limit });
  add(`preview --refresh requests at ${smallest}`, find(smallest, "ours", "previewRefresh")?.requests, 15);
  if (largest >= 3000)
    add(`preview --refresh requests at ${largest}`, find(largest, "ours", "previewRefresh")?.requests, 60);
  add(
    `failed at ${largest}`,
    OPS.reduce((a, op) => a + (find(largest, "ours", op)?.failed ?? Number.NaN), 0),
    0,
  );
  for (const op of OPS) {
    const small = find(smallest, "ours", op);
    const large = find(largest, "ours", op);
    // Growth beyond what no provider can beat: the floor PostHog's 480 requests a minute set for the run's
    // requests (⌊(n − 1)/480⌋ minutes; none for a refresh's few reads), per resource (issue 26).
    if (largest > smallest && large)
      add(
        op === "previewRefresh"
          ? `previewRefresh: ms per resource at ${largest}`
          : `${op}: ms per resource beyond PostHog's floor at ${largest}`,
        round(((large.wallSeconds - large.windowFloorSeconds) * 1000) / large.resources, 1),
        5,
      );
    const naive = find(smallest, "naive", op);
    if (small && naive)
      add(`${op}: ours ÷ naive wall at ${smallest}`, round(small.wallSeconds / naive.wallSeconds, 3), 1.05);
  }
  return [...targets, ...goalsOf(runs, sizes)];
}

/**
 * The goals of issue 36 on these runs, each as the measured value against its limit: for each operation, at the
 * smallest size ours' wall ÷ naive-with-outputs' wall ≤ 1.05, and at the largest ours' wall ≤ max(no-op's wall,
 * PostHog's floor of ours' run) + 2 ms per resource (value and limit in seconds). A goal whose runs are missing or
 * failed is missed (its value null).
 */
export function goalsOf(runs: ScaleRun[], sizes: number[]): ScaleTarget[] {
  const smallest = Math.min(...sizes);
  const largest = Math.max(...sizes);
  const find = (size: number, provider: ProviderKind, op: OpName) =>
    runs.find(
      (r) =>
        r.provider === provider &&
        r.operation === op &&
        r.failed === 0 &&
        Math.abs(r.resources - size) < size * 0.01,
    );
  const goals: ScaleTarget[] = [];
  for (const op of OPS) {
    const ours = find(smallest, "ours", op);
    const withOutputs = find(smallest, "naiveOutputs", op);
    const ratio = ours && withOutputs ? round(ours.wallSeconds / withOutputs.wallSeconds, 3) : null;
    goals.push({
      name: `goal ${op}: ours ÷ naive with outputs wall at ${smallest}`,
      value: ratio,
      limit: OUTPUTS_RATIO_GOAL,
      ok: ratio !== null && ratio <= OUTPUTS_RATIO_GOAL,
    });
  }
  for (const op of OPS) {
    const ours = find(largest, "ours", op);
    const noop = find(largest, "noop", op);
    const limit =
      ours && noop
        ? round(
            Math.max(noop.wallSeconds, ours.floorSeconds ?? ours.windowFloorSeconds) +
              (MS_PER_RESOURCE_GOAL * ours.resources) / 1000,
            2,
          )
        : Number.NaN;
    const value = ours && noop ? ours.wallSeconds : null;
    goals.push({
      name: `goal ${op}: ours wall s ≤ max(no-op, PostHog's floor) + ${MS_PER_RESOURCE_GOAL} ms × resources at ${largest}`,
      value,
      limit,
      ok: value !== null && value <= limit,
    });
  }
  return goals;
}

/** The human-readable table of {@link runScaleBench}'s results. */
export function scaleTable(r: ScaleResults): string {
  const lines = [
    `scale: generated program, RTT ${r.latencyMs} ± ${r.jitterMs} ms, 480/min 4,800/h per key`,
    "  resources provider     operation        wall s   ms/res  requests  429  failed  window floor s  host RSS MiB  state KiB",
  ];
  for (const x of r.runs)
    lines.push(
      `  ${String(x.resources).padStart(9)} ${x.provider.padEnd(12)} ${x.operation.padEnd(15)} ${String(x.wallSeconds).padStart(7)} ${String(x.msPerResource).padStart(8)} ${String(x.requests).padStart(9)} ${String(x.throttled).padStart(4)} ${String(x.failed).padStart(7)} ${String(x.windowFloorSeconds).padStart(15)} ${String(x.providerRssMiB ?? "—").padStart(12)} ${String(x.stateBytes === null ? "—" : round(x.stateBytes / 1024, 0)).padStart(10)}`,
    );
  lines.push(...floorTable(r.runs));
  for (const t of r.targets)
    if (t.name.startsWith("goal "))
      lines.push(`  ${t.name}: ${t.value ?? "—"} vs ${t.limit}: ${t.ok ? "met" : "missed"}`);
    else lines.push(`  target ${t.name}: ${t.value} ≤ ${t.limit}: ${t.ok ? "OK" : "MISSED"}`);
  for (const x of r.runs)
    if (x.firstError) lines.push(`  ${x.resources} ${x.provider} ${x.operation}: ${x.firstError}`);
  return lines.join("\n");
}

/**
 * The engine's floor, one line per size and operation: the wall seconds of ours, naive, naive with outputs and
 * no-op, and PostHog's floor of ours' run; "—" where a provider did not run, a "!" after a wall whose run failed.
 */
export function floorTable(runs: ScaleRun[]): string[] {
  const lines = [
    "  engine floor (wall s)",
    "  resources operation            ours     naive  naive+outs     no-op  PostHog floor",
  ];
  const sizes = [...new Set(runs.map((x) => x.resources))].sort((a, b) => a - b);
  const cell = (x: ScaleRun | undefined, width: number) =>
    (x ? `${x.wallSeconds}${x.failed > 0 || x.firstError ? "!" : ""}` : "—").padStart(width);
  for (const size of sizes)
    for (const op of OPS) {
      const of = (p: ProviderKind) =>
        runs.find((x) => x.resources === size && x.operation === op && x.provider === p);
      const ours = of("ours");
      lines.push(
        `  ${String(size).padStart(9)} ${op.padEnd(15)} ${cell(ours, 9)} ${cell(of("naive"), 9)} ${cell(of("naiveOutputs"), 11)} ${cell(of("noop"), 9)} ${String(ours ? (ours.floorSeconds ?? ours.windowFloorSeconds) : "—").padStart(14)}`,
      );
    }
  return lines;
}
