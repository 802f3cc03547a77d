import { describe, expect, it } from "vitest";
import { summarize } from "../../bench/profile";

// The profile bench's summing of a V8 CPU profile: busy time leaves idle out, self time per file, and a watched
// function's inclusive time counts its outermost calls only (a recursive call is not counted twice).

describe("summarize", () => {
  it("sums busy time, self time per file and the inclusive time of watched functions", () => {
    const frame = (functionName: string, url: string) => ({ functionName, url });
    const profile = {
      nodes: [
        { id: 1, callFrame: frame("(root)", ""), children: [2, 5, 6] },
        {
          id: 2,
          callFrame: frame("transferProperties", "file:///x/node_modules/@pulumi/pulumi/runtime/rpc.js"),
          children: [3],
        },
        {
          id: 3,
          callFrame: frame(
            "debuggablePromise",
            "file:///x/node_modules/@pulumi/pulumi/runtime/debuggable.js",
          ),
          children: [4],
        },
        {
          id: 4,
          callFrame: frame("transferProperties", "file:///x/node_modules/@pulumi/pulumi/runtime/rpc.js"),
        },
        { id: 5, callFrame: frame("(idle)", "") },
        { id: 6, callFrame: frame("check", "file:///x/dist/provider/lifecycle.js") },
      ],
      samples: [2, 3, 3, 4, 5, 5, 5, 6],
      timeDeltas: [1000, 2000, 2000, 1000, 5000, 5000, 5000, 3000],
    };
    const s = summarize(profile);
    expect(s.busyMs).toBe(9);
    expect(s.topFiles).toEqual([
      { file: "@pulumi/pulumi/runtime/debuggable.js", selfMs: 4 },
      { file: "/x/dist/provider/lifecycle.js", selfMs: 3 },
      { file: "@pulumi/pulumi/runtime/rpc.js", selfMs: 2 },
    ]);
    expect(s.watchedMs.transferProperties).toBe(6); // 1 + 4 (debuggablePromise) + 1 (the nested call, inside)
    expect(s.watchedMs.debuggablePromise).toBe(5);
    expect(s.watchedMs.check).toBe(3);
    expect(s.watchedMs.fsync).toBe(0);
  });
});
