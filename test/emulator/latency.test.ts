import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseCli } from "../../emulator/cli";
import { startEmulator } from "../../emulator/index";
import { RequestLogEntrySchema } from "../../emulator/schemas";

/** Sends `n` GETs at once to `url` with `key`, then returns the emulator's request log. */
async function logOf(e: { url: string; apiKey: string }, n: number) {
  const get = () =>
    fetch(`${e.url}/api/organizations/@current/members/?limit=1`, {
      headers: { authorization: `Bearer ${e.apiKey}` },
    }).then((r) => r.text());
  await Promise.all(Array.from({ length: n }, get));
  const res = await fetch(`${e.url}/_emulator/requests`, {
    headers: { authorization: `Bearer ${e.apiKey}` },
  });
  return z.array(RequestLogEntrySchema).parse(await res.json());
}

describe("added latency with jitter", () => {
  it("waits latencyMs ± latencyJitterMs before each API request, each its own draw, shown in the log", async () => {
    const e = await startEmulator({ rateLimit: false, latencyMs: 80, latencyJitterMs: 20 });
    try {
      const log = await logOf(e, 40);
      expect(log).toHaveLength(40);
      for (const entry of log) {
        expect(entry.latencyMs).toBeGreaterThanOrEqual(60);
        expect(entry.latencyMs).toBeLessThanOrEqual(100);
        // the request's duration includes the wait (timers may fire up to 1 ms early of the hrtime clock)
        expect(entry.durationMs).toBeGreaterThanOrEqual(entry.latencyMs - 1);
      }
      // 40 draws from 41 values: all equal would mean no jitter
      expect(new Set(log.map((l) => l.latencyMs)).size).toBeGreaterThan(1);
    } finally {
      await e.close();
    }
  });

  it("adds nothing by default, and exactly latencyMs without jitter", async () => {
    for (const [options, expected] of [
      [{}, 0],
      [{ latencyMs: 30 }, 30],
    ] as const) {
      const e = await startEmulator({ rateLimit: false, ...options });
      try {
        const log = await logOf(e, 5);
        expect(log.map((l) => l.latencyMs)).toEqual([expected, expected, expected, expected, expected]);
      } finally {
        await e.close();
      }
    }
  });

  it("refuses a negative or over-long jitter, naming the option", async () => {
    await expect(startEmulator({ latencyJitterMs: -1 })).rejects.toThrow(/latencyJitterMs/);
    await expect(startEmulator({ latencyJitterMs: 60_001 })).rejects.toThrow(/latencyJitterMs/);
  });

  it("takes --latency-ms and --latency-jitter-ms on the command line", () => {
    expect(parseCli(["--latency-ms", "80", "--latency-jitter-ms", "20"])).toMatchObject({
      latencyMs: 80,
      latencyJitterMs: 20,
    });
    expect(() => parseCli(["--latency-jitter-ms", "x"])).toThrow(
      '--latency-jitter-ms needs an integer from 0 to 60000, got "x"',
    );
  });
});
