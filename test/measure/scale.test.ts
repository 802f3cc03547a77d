import { describe, expect, it } from "vitest";
import { goalsOf, type ScaleRun, scaleTable, targetsOf } from "../../bench/scale";

// The scale bench's targets (issues 20 and 26): refresh requests at 300 and 3,000, no failure at 3,000, at 3,000 at
// most 5 ms per resource beyond PostHog's floor for up and destroy and 5 ms per resource for the whole refresh,
// ours ÷ naive wall at 300 at most 1.05.

const run = (
  resources: number,
  provider: "ours" | "naive" | "naiveOutputs" | "noop",
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
      run(3000, "ours", "up", 315, 2460), // floor: ⌊2459/480⌋ = 5 minutes
      run(3000, "ours", "previewRefresh", 12, 28, 1),
      run(3000, "ours", "destroy", 258, 2400), // floor: ⌊2399/480⌋ = 4 minutes
    ];
    const t = Object.fromEntries(targetsOf(runs, [300, 3000]).map((x) => [x.name, x]));
    expect(t["preview --refresh requests at 300"]).toMatchObject({ value: 9, limit: 15, ok: true });
    expect(t["preview --refresh requests at 3000"]).toMatchObject({ value: 28, limit: 60, ok: true });
    expect(t["failed at 3000"]).toMatchObject({ value: 1, ok: false });
    expect(t["up: ms per resource beyond PostHog's floor at 3000"]).toMatchObject({
      value: 5,
      limit: 5,
      ok: true,
    });
    expect(t["previewRefresh: ms per resource at 3000"]).toMatchObject({ value: 4, ok: true });
    expect(t["destroy: ms per resource beyond PostHog's floor at 3000"]).toMatchObject({
      value: 6,
      ok: false,
    });
    expect(t["up: ours ÷ naive wall at 300"]).toMatchObject({ value: 1, ok: true });
    expect(t["destroy: ours ÷ naive wall at 300"]).toMatchObject({ value: 1.143, ok: false });
    const table = scaleTable({ latencyMs: 80, jitterMs: 20, runs, targets: targetsOf(runs, [300, 3000]) });
    expect(table).toContain("target destroy: ours ÷ naive wall at 300: 1.143 ≤ 1.05: MISSED");
    expect(table).toContain("target failed at 3000: 1 ≤ 0: MISSED");
  });

  it("checks the engine-floor goals: ours ÷ naive with outputs at 300, ours against max(no-op, PostHog's floor) + 2 ms per resource at 3,000", () => {
    const runs = [
      run(300, "ours", "up", 10.5, 246),
      run(300, "ours", "previewRefresh", 9, 9),
      run(300, "ours", "destroy", 8, 241),
      run(300, "naiveOutputs", "up", 10, 360),
      run(300, "naiveOutputs", "previewRefresh", 9, 300),
      run(300, "naiveOutputs", "destroy", 7, 240),
      run(3000, "ours", "up", 306, 2460), // window floor 300 s
      { ...run(3000, "ours", "previewRefresh", 40, 28), floorSeconds: 0.3 },
      { ...run(3000, "ours", "destroy", 250, 2400), floorSeconds: 245 }, // above the window floor of 240 s
      run(3000, "noop", "up", 200, 0),
      run(3000, "noop", "previewRefresh", 33, 0),
      run(3000, "noop", "destroy", 100, 0),
    ];
    const g = Object.fromEntries(goalsOf(runs, [300, 3000]).map((x) => [x.name, x]));
    expect(g["goal up: ours ÷ naive with outputs wall at 300"]).toMatchObject({
      value: 1.05,
      limit: 1.05,
      ok: true,
    });
    expect(g["goal previewRefresh: ours ÷ naive with outputs wall at 300"]).toMatchObject({
      value: 1,
      ok: true,
    });
    expect(g["goal destroy: ours ÷ naive with outputs wall at 300"]).toMatchObject({
      value: 1.143,
      ok: false,
    });
    const at3000 = (op: string) =>
      g[`goal ${op}: ours wall s ≤ max(no-op, PostHog's floor) + 2 ms × resources at 3000`];
    // up: PostHog's floor (300 s) is above no-op's 200 s: 306 ≤ 300 + 6
    expect(at3000("up")).toMatchObject({ value: 306, limit: 306, ok: true });
    // preview --refresh: no-op's 33 s is above the floor: 40 > 33 + 6
    expect(at3000("previewRefresh")).toMatchObject({ value: 40, limit: 39, ok: false });
    // destroy: PostHog's floor 245 s: 250 ≤ 251
    expect(at3000("destroy")).toMatchObject({ value: 250, limit: 251, ok: true });
    // a goal whose runs are missing is missed
    const partial = goalsOf(
      runs.filter((r) => r.provider !== "noop"),
      [300, 3000],
    );
    expect(partial.find((x) => x.name.startsWith("goal up: ours wall"))).toMatchObject({
      value: null,
      ok: false,
    });
    const table = scaleTable({ latencyMs: 80, jitterMs: 20, runs, targets: targetsOf(runs, [300, 3000]) });
    expect(table).toContain("goal destroy: ours ÷ naive with outputs wall at 300: 1.143 vs 1.05: missed");
    // the engine-floor table's row: ours, naive, naive with outputs, no-op, PostHog's floor
    const rows = table.split("\n").map((l) => l.trim().split(/\s+/).join(" "));
    expect(rows).toContain("3000 up 306 — — 200 300");
    expect(rows).toContain("300 destroy 8 — 7 — 0");
  });
});
