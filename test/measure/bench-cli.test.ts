/**
 * The scale bench (bench/scale.ts, on bench/latency.ts's runSequence) end to end through the real Pulumi CLI, at
 * a size that keeps `npm test` short: the generated program of 10 resources, ours, the naive provider, the naive
 * provider with ours' outputs and the no-op provider, one round, `up`, `preview --refresh` and `destroy` against an emulator child at 20 ms and PostHog's rate limits.
 * `npm run bench -- --only scale` runs the same code at 300 to 3,000 resources. Needs `npm run build` (the
 * programs load the built SDK and naive provider) and `npm run pulumi-cli`.
 */
import { describe, expect, it } from "vitest";
import { runScaleBench, type ScaleRun } from "../../bench/scale";

describe("the scale bench through the real CLI", () => {
  it("measures ours, naive, naive with outputs and no-op for each operation: no failure, requests, host memory and the state's size", async () => {
    const r = await runScaleBench({ sizes: [10], repeat: 1, latencyMs: 20, jitterMs: 0 });
    const find = (provider: string, operation: string) =>
      r.runs.find((x) => x.provider === provider && x.operation === operation) as ScaleRun;
    expect(r.runs.map((x) => `${x.provider} ${x.operation}`).sort()).toEqual(
      [
        "naive destroy",
        "naive previewRefresh",
        "naive up",
        "naiveOutputs destroy",
        "naiveOutputs previewRefresh",
        "naiveOutputs up",
        "noop destroy",
        "noop previewRefresh",
        "noop up",
        "ours destroy",
        "ours previewRefresh",
        "ours up",
      ].sort(),
    );
    for (const x of r.runs) {
      expect(x.firstError, `${x.provider} ${x.operation}`).toBeUndefined();
      expect(x.failed, `${x.provider} ${x.operation}`).toBe(0);
      // every resource of the program is in the state saved after `up` (the graph's nodes, read from the checkpoint)
      expect(x.resources).toBe(10);
      expect(x.wallSeconds).toBeGreaterThan(0);
      // the provider host, a great-grandchild under the CLI, was found and sampled
      expect(x.providerRssMiB, `${x.provider} ${x.operation}`).toBeGreaterThan(20);
      expect(x.stateBytes, `${x.provider} ${x.operation}`).toBeGreaterThan(0);
    }
    // the requests each provider sends for these 10 resources (2 members, 2 invites, 2 collaborators, 4
    // dashboards): the naive one reads each resource on refresh, ours reads lists
    expect(find("naive", "previewRefresh").requests).toBe(10);
    expect(find("naiveOutputs", "previewRefresh").requests).toBe(10);
    // the no-op provider sends nothing: its walls are the engine's own
    for (const op of ["up", "previewRefresh", "destroy"]) expect(find("noop", op).requests).toBe(0);
    expect(find("ours", "previewRefresh").requests).toBeLessThan(10);
    expect(find("ours", "up").requests).toBeGreaterThan(0);
    // after destroy the state holds no resource: it is smaller than after up
    expect(find("ours", "destroy").stateBytes).toBeLessThan(find("ours", "up").stateBytes as number);
    const refresh = r.targets.find((t) => t.name === "preview --refresh requests at 10");
    expect(refresh).toMatchObject({ limit: 15, ok: true });
    // the engine-floor goals are computed from these runs (met or not: the walls at 10 resources are noise)
    const goals = r.targets.filter((t) => t.name.startsWith("goal "));
    expect(goals).toHaveLength(6);
    for (const g of goals) expect(g.value, g.name).toBeGreaterThan(0);
  }, 900_000);
});
