/**
 * The emulator CLI in a child process for the benchmarks (so its CPU time is not charged to the measured
 * process), plus the two small statistics they share. Not part of the published package.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { seedApi } from "../tools/seed-api";

/** A running emulator child: its ready line, the API and control plane on its seed key, and `stop()`. */
export interface Emu {
  url: string;
  apiKey: string;
  organizationId: string;
  projectId: number;
  child: ChildProcess;
  /** One API request on the seed key; resolves the parsed body. @throws Error on a non-2xx status. */
  api(method: string, path: string, body?: unknown): Promise<unknown>;
  /** The control plane: `/_emulator/<path>` on the seed key. @throws Error on a non-2xx status. */
  control(method: string, path: string, body?: unknown): Promise<unknown>;
  /** SIGTERM, then waits for the child to exit. */
  stop(): Promise<void>;
}

/**
 * Starts `dist/emulator/cli.js` of the checkout at `root` on a free port with the extra `flags` (e.g.
 * `["--rate-limit", "off"]`) and waits for its ready line. Needs a build.
 */
export async function startEmu(root: string, flags: string[]): Promise<Emu> {
  const child = spawn(process.execPath, [join(root, "dist", "emulator", "cli.js"), "--port", "0", ...flags], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = (await once(createInterface({ input: child.stdout as NodeJS.ReadableStream }), "line")) as [
    string,
  ];
  const info = JSON.parse(line) as { url: string; apiKey: string; organizationId: string; projectId: number };
  const { call } = seedApi(info.url, info.apiKey);
  return {
    url: info.url,
    apiKey: info.apiKey,
    organizationId: info.organizationId,
    projectId: info.projectId,
    child,
    api: call,
    control: (method, path, body) => call(method, `/_emulator${path}`, body),
    async stop() {
      child.kill("SIGTERM");
      if (child.exitCode === null) await once(child, "exit");
    },
  };
}

/** The median of `xs` (the mean of the two middle values for an even count). */
export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/** `x` rounded to `d` decimals. */
export const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
