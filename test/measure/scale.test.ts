import { describe, expect, it } from "vitest";
import { type ScaleRun, scaleTable, targetsOf } from "../../bench/scale";

// The scale bench's targets (issue 20): refresh requests at 300 and 3,000, no failure at 3,000, time per resource
// growing at most 1.25× from 300 to 3,000, ours ÷ naive wall at 300 at most 1.05.

const run = (
  resources: number,
  provider: "ours" | "naive",
  operation: "up" | "previewRefresh" | "destroy",
  wallSeconds: number,
  requests: number,
  failed = 0,
): ScaleRun => ({
  resources,
  provider,
  operation,
  wallSeconds,
  requests,
  throttled: 0,
  failed,
  providerRssMiB: 250,
  stateBytes: resources * 5000,
  msPerResource: (wallSeconds * 1000) / resources,
  windowFloorSeconds: Math.floor(Math.max(0, requests - 1) / 480) * 60,
});

describe("scale targets", () => {
  it("computes each target from the runs and flags the missed ones", () => {
    const runs = [
      run(300, "ours", "up", 12, 246),
      run(300, "ours", "previewRefresh", 9, 9),
      run(300, "ours", "destroy", 8, 241),
      run(300, "naive", "up", 12, 360),
      run(300, "naive", "previewRefresh", 10, 300),
      run(300, "naive", "destroy", 7, 240),
      run(3000, "ours", "up", 140, 2460),
      run(3000, "ours", "previewRefresh", 80, 28, 1),
      run(3000, "ours", "destroy", 100, 2400),
    ];
    const t = Object.fromEntries(targetsOf(runs, [300, 3000]).map((x) => [x.name, x]));
    expect(t["preview --refresh requests at 300"]).toMatchObject({ value: 9, limit: 15, ok: true });
    expect(t["preview --refresh requests at 3000"]).toMatchObject({ value: 28, limit: 60, ok: true });
    expect(t["failed at 3000"]).toMatchObject({ value: 1, ok: false });
    expect(t["up: time per resource at 3000 ÷ at 300"]).toMatchObject({ value: 1.17, ok: true });
    expect(t["previewRefresh: time per resource at 3000 ÷ at 300"]).toMatchObject({ value: 0.89, ok: true });
    expect(t["destroy: time per resource at 3000 ÷ at 300"]).toMatchObject({ value: 1.25, ok: true });
    expect(t["up: ours ÷ naive wall at 300"]).toMatchObject({ value: 1, ok: true });
    expect(t["destroy: ours ÷ naive wall at 300"]).toMatchObject({ value: 1.143, ok: false });
    const table = scaleTable({ latencyMs: 80, jitterMs: 20, runs, targets: targetsOf(runs, [300, 3000]) });
    expect(table).toContain("target destroy: ours ÷ naive wall at 300: 1.143 ≤ 1.05: MISSED");
    expect(table).toContain("target failed at 3000: 1 ≤ 0: MISSED");
  });
});
