/**
 * Profile: where the program and the provider host spend their CPU, ours beside naive. Runs the generated program
 * of bench/latency.ts (`--profile-size`, default 300 resources) with each provider at zero latency (`up`,
 * `preview --refresh`, `destroy`), with bench/profile-hook.ts in every program and provider-host process, then sums
 * each profile: busy time (not idle), time per file (self), and the inclusive time of the functions named in
 * {@link WATCHED} (what the issue-20 profiling found). The profiles stay in `--profile-dir` (default a temporary
 * directory) for Chrome DevTools or `speedscope`.
 *
 *   npm run bench -- --only profile [--profile-size 300] [--profile-dir /tmp/prof]
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { round } from "./emulator-process";
import { type OpName, type ProviderKind, runSequence } from "./latency";

/** Functions whose inclusive time is reported: Pulumi's per-property promises, our lifecycle, the journal. */
export const WATCHED = [
  "transferProperties",
  "debuggablePromise",
  "prepareStackTrace",
  "check",
  "diff",
  "read",
  "recordCreate",
  "fsync",
] as const;

/** One profile summed up. */
export interface ProfileSummary {
  role: "program" | "host";
  provider: ProviderKind;
  /** The operation whose process it was (destroy runs no program). */
  operation: OpName;
  busyMs: number;
  topFiles: { file: string; selfMs: number }[];
  watchedMs: Record<string, number>;
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** Busy time, self time per file and the inclusive time of {@link WATCHED} functions of one `.cpuprofile`. */
export function summarize(profile: CpuProfile): Omit<ProfileSummary, "role" | "provider" | "operation"> {
  const self = new Map<number, number>();
  for (const [i, id] of profile.samples.entries())
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const inclusive = new Map<number, number>();
  const inc = (id: number): number => {
    const known = inclusive.get(id);
    if (known !== undefined) return known;
    let sum = self.get(id) ?? 0;
    for (const c of byId.get(id)?.children ?? []) sum += inc(c);
    inclusive.set(id, sum);
    return sum;
  };
  const files = new Map<string, number>();
  let busy = 0;
  for (const n of profile.nodes) {
    const t = self.get(n.id) ?? 0;
    const url = n.callFrame.url.replace(/^file:\/\//, "").replace(/.*node_modules\//, "");
    const file = url || `(${n.callFrame.functionName || "native"})`;
    files.set(file, (files.get(file) ?? 0) + t);
    if (file !== "((idle))") busy += t;
  }
  const watchedMs: Record<string, number> = {};
  for (const name of WATCHED) {
    // outermost calls only, so recursion is not counted twice
    const outer = (id: number, inside: boolean): number => {
      const n = byId.get(id);
      if (!n) return 0;
      const match = n.callFrame.functionName === name;
      if (match && !inside) return inc(id);
      return (n.children ?? []).reduce((a, c) => a + outer(c, inside || match), 0);
    };
    watchedMs[name] = round(outer(profile.nodes[0]?.id ?? 0, false) / 1000, 0);
  }
  return {
    busyMs: round(busy / 1000, 0),
    topFiles: [...files]
      .filter(([f, t]) => f !== "((idle))" && t > 0)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([file, t]) => ({ file, selfMs: round(t / 1000, 0) })),
    watchedMs,
  };
}

/** Runs the profiled sequences (see the module doc). Needs `npm run build`. */
export async function runProfileBench(
  o: { size?: number; dir?: string; progress?: (line: string) => void } = {},
): Promise<{ size: number; dir: string; profiles: ProfileSummary[] }> {
  const size = o.size ?? 300;
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), "posthog-profile-"));
  const hook = join(__dirname, "profile-hook.js");
  const profiles: ProfileSummary[] = [];
  for (const provider of ["ours", "naive"] as const) {
    const out = join(dir, provider);
    mkdirSync(out, { recursive: true });
    o.progress?.(`profile: ${size} resources, ${provider}`);
    // After each operation, its profiles (written when its processes exited: the CLI stops the provider host with
    // SIGINT and waits for it) move into a folder named after it: the real CLI may start more than one provider
    // host in one operation, so the order of the pids alone does not tell the operation.
    const moveInto = (op: OpName) => {
      mkdirSync(join(out, op), { recursive: true });
      for (const f of readdirSync(out).filter((x) => x.endsWith(".cpuprofile")))
        renameSync(join(out, f), join(out, op, f));
    };
    await runSequence(
      "generated",
      provider,
      size,
      0,
      0,
      o.progress ?? (() => undefined),
      { NODE_OPTIONS: `--require ${hook}`, PROF_DIR: out },
      (op) => moveInto(op),
    );
    for (const operation of ["up", "previewRefresh", "destroy"] as const) {
      // pids grow with time: the processes in the order they started
      const files = readdirSync(join(out, operation))
        .filter((f) => f.endsWith(".cpuprofile"))
        .map((f) => ({
          f,
          role: f.split("-")[0] as "program" | "host",
          pid: Number(/-(\d+)\./.exec(f)?.[1]),
        }))
        .sort((a, b) => a.pid - b.pid);
      for (const { f, role } of files) {
        const profile = JSON.parse(readFileSync(join(out, operation, f), "utf8")) as CpuProfile;
        profiles.push({ role, provider, operation, ...summarize(profile) });
      }
    }
  }
  return { size, dir, profiles };
}

/** The human-readable table of {@link runProfileBench}. */
export function profileTable(r: Awaited<ReturnType<typeof runProfileBench>>): string {
  const lines = [`profile: generated program of ${r.size} resources at zero latency; profiles in ${r.dir}`];
  for (const p of r.profiles) {
    const watched = Object.entries(p.watchedMs)
      .filter(([, ms]) => ms > 0)
      .map(([k, ms]) => `${k} ${ms}`)
      .join(", ");
    lines.push(
      `  ${p.provider.padEnd(5)} ${p.role.padEnd(7)} ${p.operation.padEnd(14)} busy ${p.busyMs} ms; ${watched}`,
    );
    lines.push(`    ${p.topFiles.map((t) => `${t.file} ${t.selfMs}`).join(" | ")}`);
  }
  return lines.join("\n");
}
