/**
 * Ends the dynamic-provider host, or the provider plugin, when the Pulumi engine that started it is gone.
 *
 * The CLI starts each plugin in a process group of its own (pulumi/pulumi sdk/go/common/util/cmdutil/child_unix.go,
 * `Setpgid`), and `@pulumi/pulumi`'s dynamic-provider host never checks on the engine: when the CLI is killed
 * (SIGKILL of a CI job, an OOM kill, a closed terminal), the host outlived it forever, measured under the real CLI
 * (issue 26). This watch connects to the engine's address (the host's first argument) every
 * {@link ENGINE_WATCH_INTERVAL_MS}; after two refused connections in a row the engine is gone, and the host exits
 * as soon as no provider operation is under way (an operation under way finishes first, so its create journal
 * records what it made: provider/framework/lost-create.ts), or after {@link ENGINE_GONE_GRACE_MS} at most.
 *
 * Only in the dynamic-provider host (`@pulumi/pulumi/cmd/dynamic-provider`) and in the provider plugin
 * (`pulumi-resource-posthog`, `dist/provider/adapters/plugin/main.js`), both started by the engine with its address as
 * argument: anywhere else (a program, a test loading the providers) it does nothing.
 */
import { connect } from "node:net";

/** How often the engine's address is tried, ms. */
export const ENGINE_WATCH_INTERVAL_MS = 2_000;
/** The longest operations under way may keep the host alive once the engine is gone, ms. */
export const ENGINE_GONE_GRACE_MS = 300_000;

/**
 * The watch of one provider host (a field of provider/framework/run.ts `Run`; the host is one process per run):
 * whether it has started, how many operations are under way, and since when the engine is gone (epoch ms).
 */
export interface EngineWatch {
  watching: boolean;
  underWay: number;
  goneSince: number | undefined;
}

/** The watch of a new run: not started, nothing under way. */
export function newEngineWatch(): EngineWatch {
  return { watching: false, underWay: 0, goneSince: undefined };
}

/**
 * The entries the engine starts with its address as argument: Pulumi's dynamic-provider host
 * (`@pulumi/pulumi/cmd/dynamic-provider`, started by `pulumi-resource-pulumi-nodejs`), and this package's provider
 * plugin (`dist/provider/adapters/plugin/main.js`, started by `plugin/pulumi-resource-posthog`, from a checkout, an npm
 * install or a plugin tarball alike).
 */
const ENGINE_STARTED = [
  /cmd[\\/]dynamic-provider([\\/]index\.js)?$/,
  /[\\/]provider[\\/]adapters[\\/]plugin[\\/]main\.js$/,
];

/**
 * The engine's address among the arguments the engine gave a plugin: the first that is not a flag. The engine
 * puts `--logtostderr`, `-v=<n>` and `--tracing <endpoint>` before it when logging or tracing is on
 * (pulumi/pulumi sdk/go/common/resource/plugin/plugin.go, `buildPluginArguments`, v3.274.1), and
 * `@pulumi/pulumi/provider`'s `main` skips the same ones (provider/internals.js, `parseArgs`).
 */
export function engineArgument(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === "--logtostderr" || a.startsWith("-v=")) continue;
    if (a === "--tracing") {
      i += 1;
      continue;
    }
    return a;
  }
  return undefined;
}

/**
 * `host:port` of the engine when this process is one the engine started with its address (the dynamic-provider
 * host or the provider plugin: {@link ENGINE_STARTED}), else undefined.
 */
function engineAddress(): { host: string; port: number } | undefined {
  const script = process.argv[1] ?? "";
  if (!ENGINE_STARTED.some((entry) => entry.test(script))) return undefined;
  const m = /^(.*):(\d+)$/.exec(engineArgument(process.argv.slice(2)) ?? "");
  return m?.[1] && m[2] ? { host: m[1].replace(/^\[|\]$/g, ""), port: Number(m[2]) } : undefined;
}

/** Exits when the engine is gone and nothing is under way (a second later: the last answer leaves first). */
function exitIfIdle(w: EngineWatch): void {
  if (w.goneSince === undefined) return;
  if (Date.now() - w.goneSince > ENGINE_GONE_GRACE_MS) process.exit(1);
  if (w.underWay === 0) {
    setTimeout(() => {
      if (w.underWay === 0) process.exit(1);
    }, 1_000).unref();
  }
}

/** Starts the watch `w` (once per run; a no-op outside the dynamic-provider host and the plugin). */
export function watchEngine(w: EngineWatch): void {
  if (w.watching) return;
  w.watching = true;
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
        w.goneSince ??= Date.now();
        exitIfIdle(w);
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

/** Counts `operation` as under way in `w` until it settles (the host then exits if the engine is gone). */
export async function underWayWhile<T>(w: EngineWatch, operation: () => Promise<T>): Promise<T> {
  w.underWay += 1;
  try {
    return await operation();
  } finally {
    w.underWay -= 1;
    exitIfIdle(w);
  }
}
