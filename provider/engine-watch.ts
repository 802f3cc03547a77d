/**
 * Ends the dynamic-provider host when the Pulumi engine that started it is gone.
 *
 * The CLI starts each plugin in a process group of its own (pulumi/pulumi sdk/go/common/util/cmdutil/child_unix.go,
 * `Setpgid`), and `@pulumi/pulumi`'s dynamic-provider host never checks on the engine: when the CLI is killed
 * (SIGKILL of a CI job, an OOM kill, a closed terminal), the host outlived it forever, measured under the real CLI
 * (issue 26). This watch connects to the engine's address (the host's first argument) every
 * {@link ENGINE_WATCH_INTERVAL_MS}; after two refused connections in a row the engine is gone, and the host exits
 * as soon as no provider operation is under way (an operation under way finishes first, so its create journal
 * records what it made: provider/lost-create.ts), or after {@link ENGINE_GONE_GRACE_MS} at most.
 *
 * Only in the dynamic-provider host (`@pulumi/pulumi/cmd/dynamic-provider`): anywhere else (a program, a test
 * loading the providers) it does nothing.
 */
import { connect } from "node:net";

/** How often the engine's address is tried, ms. */
export const ENGINE_WATCH_INTERVAL_MS = 2_000;
/** The longest operations under way may keep the host alive once the engine is gone, ms. */
export const ENGINE_GONE_GRACE_MS = 300_000;

let watching = false;
let underWay = 0;
let goneSince: number | undefined;

/** `host:port` of the engine when this process is the dynamic-provider host the engine started, else undefined. */
function engineAddress(): { host: string; port: number } | undefined {
  const script = process.argv[1] ?? "";
  if (!/cmd[\\/]dynamic-provider([\\/]index\.js)?$/.test(script)) return undefined;
  const m = /^(.*):(\d+)$/.exec(process.argv[2] ?? "");
  return m?.[1] && m[2] ? { host: m[1].replace(/^\[|\]$/g, ""), port: Number(m[2]) } : undefined;
}

/** Exits when the engine is gone and nothing is under way (a second later: the last answer leaves first). */
function exitIfIdle(): void {
  if (goneSince === undefined) return;
  if (Date.now() - goneSince > ENGINE_GONE_GRACE_MS) process.exit(1);
  if (underWay === 0) {
    setTimeout(() => {
      if (underWay === 0) process.exit(1);
    }, 1_000).unref();
  }
}

/** Starts the watch (once per process; a no-op outside the dynamic-provider host). */
export function watchEngine(): void {
  if (watching) return;
  watching = true;
  const address = engineAddress();
  if (!address) return;
  let refused = 0;
  const timer = setInterval(() => {
    const socket = connect(address.port, address.host);
    socket.setTimeout(ENGINE_WATCH_INTERVAL_MS);
    socket.once("connect", () => {
      refused = 0;
      socket.destroy();
    });
    socket.once("timeout", () => socket.destroy());
    socket.once("error", (e: NodeJS.ErrnoException) => {
      socket.destroy();
      if (e.code !== "ECONNREFUSED") return;
      refused += 1;
      if (refused >= 2) {
        goneSince ??= Date.now();
        exitIfIdle();
      }
    });
  }, ENGINE_WATCH_INTERVAL_MS);
  timer.unref();
}

/**
 * Whether the engine that started this host still accepts connections at its address: one TCP connect to it
 * (refused: false; connected, or any other outcome: true). True outside a dynamic-provider host (no address).
 * Asked before a create that waited its turn starts ({@link oneAtATime} in lost-create.ts), so that a create the
 * engine can no longer record is not sent.
 */
export function engineReachable(): Promise<boolean> {
  const address = engineAddress();
  if (!address) return Promise.resolve(true);
  return new Promise((resolve) => {
    const socket = connect(address.port, address.host);
    socket.setTimeout(ENGINE_WATCH_INTERVAL_MS);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", (e: NodeJS.ErrnoException) => {
      socket.destroy();
      resolve(e.code !== "ECONNREFUSED");
    });
  });
}

/** Counts `operation` as under way until it settles (the host then exits if the engine is gone). */
export async function underWayWhile<T>(operation: () => Promise<T>): Promise<T> {
  underWay += 1;
  try {
    return await operation();
  } finally {
    underWay -= 1;
    exitIfIdle();
  }
}
