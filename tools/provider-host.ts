/**
 * A gRPC client for the REAL Pulumi dynamic-provider host (`@pulumi/pulumi/cmd/dynamic-provider`), the process
 * the Pulumi engine starts for `pulumi-nodejs:dynamic:*` resources. Provider-level tests and the benchmarks use it
 * to run our serialized providers exactly as `pulumi up` / `refresh` / `destroy` would, without the Pulumi CLI.
 *
 * Property objects are passed through as the engine sends them: `news` (check, diff, update) and `props`
 * (create, read, delete) must carry the serialized provider under `__provider`; results carry it back.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { type AddressInfo, createServer, type Server } from "node:net";
import { dirname, join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as provrpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { isSupportedNodeVersion, minimumNodeVersion } from "../provider/client/node-version";

/** Options of {@link startProviderHost}. */
export interface ProviderHostOptions {
  /** The program directory: the host resolves `require(...)` in serialized providers from here. */
  cwd: string;
  /** The Pulumi project name (env `PULUMI_NODEJS_PROJECT`); `Config.get("k")` reads `<project>:k`. Default "posthog-test". */
  project?: string;
  /** Extra environment for the host process (merged over `process.env`). */
  env?: NodeJS.ProcessEnv;
  /**
   * Deadline of every gRPC call in milliseconds. Default: none, as the engine sets none unless the resource
   * option `customTimeouts` asks (pkg/resource/deploy/step.go passes the custom timeout to the provider call).
   */
  deadlineMs?: number;
  /** Called with every chunk the host writes to stdout/stderr after the port line (provider logs). */
  onOutput?: (text: string) => void;
  /**
   * The script the host runs: default the dynamic-provider host of `@pulumi/pulumi`; a provider plugin's main (e.g.
   * `dist/provider/adapters/plugin/main.js`, which serves the same `ResourceProvider` service) to call the plugin.
   */
  main?: string;
}

/** A running dynamic-provider host and a typed client for its `pulumirpc.ResourceProvider` service. */
export interface ProviderHost {
  /** The TCP port the host listens on (127.0.0.1). */
  readonly port: number;
  /**
   * Sends `Configure` with the given namespaced config (e.g. `{"posthog:apiKey": "..."}`); always sets args.
   * Keys listed in `secretKeys` are wrapped as secrets, the way the engine sends `pulumi config set --secret`.
   */
  configure(config: Record<string, string>, secretKeys?: readonly string[]): Promise<void>;
  /** `Check`: validated inputs (with `__provider`) and the failures. */
  check(
    urn: string,
    olds: object,
    news: object,
  ): Promise<{ inputs: Record<string, unknown>; failures: { property: string; reason: string }[] }>;
  /** `Diff` of the old outputs against the new inputs. `changes` is undefined for DIFF_UNKNOWN. */
  diff(
    id: string,
    urn: string,
    olds: object,
    news: object,
  ): Promise<{ changes: boolean | undefined; replaces: string[]; deleteBeforeReplace: boolean }>;
  /** `Create`: the new id and the outputs (with `__provider`). `timeoutMs`: this call's deadline (customTimeouts). */
  create(
    urn: string,
    props: object,
    timeoutMs?: number,
  ): Promise<{ id: string; outs: Record<string, unknown> }>;
  /** `Read` (refresh): `id` is "" when the object is gone; `inputs` only when the provider returned them. */
  read(
    id: string,
    urn: string,
    props: object,
    inputs?: object,
    timeoutMs?: number,
  ): Promise<{ id: string; props: Record<string, unknown>; inputs?: Record<string, unknown> }>;
  /** `Update`: the new outputs (with `__provider`). */
  update(
    id: string,
    urn: string,
    olds: object,
    news: object,
    timeoutMs?: number,
  ): Promise<{ outs: Record<string, unknown> }>;
  /** `Delete`. */
  delete(id: string, urn: string, props: object, timeoutMs?: number): Promise<void>;
  /** Stops accepting connections at the engine's address the host was given, as a dead engine does. */
  engineGone(): Promise<void>;
  /** Resolves when the host process has exited. */
  exited(): Promise<void>;
  /** Closes the client and stops the host process. */
  close(): Promise<void>;
}

/** Pulumi's marker for a secret value on the wire (`{[SECRET_SIG]: SECRET_VALUE, value}`). */
const secretSig = "4dabf18193072939515e22adb298388d";
const secretValue = "1b47061264138c4ac30d75fd1eb44270";

/**
 * The Node binary to run the host with: this process's own when it is at least the package's floor
 * (provider/client/node-version.ts), else the npm-installed `node` package of this checkout (`node_modules/node/bin/node`).
 */
function nodeBinary(): string {
  if (isSupportedNodeVersion(process.versions.node)) return process.execPath;
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", "node", "bin", "node");
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir)
      throw new Error(
        `Node >= ${minimumNodeVersion} is required to run the provider host; found ${process.version}`,
      );
  }
}

/**
 * Preloaded (`--import`) into every child this module starts: the child exits when its
 * stdin (a pipe from the parent) closes, so no child outlives its parent, even one killed with SIGKILL.
 * `unref` keeps the watch from holding a child that has finished its work.
 */
export const PARENT_WATCH =
  'data:text/javascript,process.stdin.on("end",()=>process.exit(129));process.stdin.on("error",()=>process.exit(129));process.stdin.resume();process.stdin.unref();';

/** A Struct from a plain object: JSON round trip first (drops `undefined`, which Struct rejects). */
function toStruct(value: object): Struct {
  return Struct.fromJavaScript(JSON.parse(JSON.stringify(value)) as Record<string, never>);
}

function fromStruct(value: Struct | undefined): Record<string, unknown> {
  return (value?.toJavaScript() ?? {}) as Record<string, unknown>;
}

/**
 * Waits for the first stdout line of a provider host (the dynamic-provider host or a provider plugin), which is
 * its port. @throws when the line is not a port, or the process exits first (with its stderr).
 */
export function readPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let buffered = "";
    let stderr = "";
    const onErr = (chunk: Buffer) => {
      stderr += chunk.toString();
    };
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      const newline = buffered.indexOf("\n");
      if (newline < 0) return;
      child.stdout?.off("data", onData);
      child.stderr?.off("data", onErr);
      child.off("exit", onExit);
      const port = Number.parseInt(buffered.slice(0, newline).trim(), 10);
      if (Number.isInteger(port) && port > 0) resolve(port);
      else reject(new Error(`provider host printed no port: ${JSON.stringify(buffered)} ${stderr}`));
    };
    const onExit = (code: number | null) =>
      reject(new Error(`provider host exited (${code}) before printing its port: ${stderr}`));
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onErr);
    child.once("exit", onExit);
  });
}

/** A host process started by {@link spawnHost}: the process, the stand-in engine's listener, the host's port. */
interface SpawnedHost {
  child: ChildProcess;
  engine: Server;
  port: number;
}

/**
 * Spawns the real dynamic-provider host (`node <@pulumi/pulumi>/cmd/dynamic-provider/index.js <engine>`, or
 * `opts.main`) in `opts.cwd` with `PULUMI_NODEJS_PROJECT` set, and a listener standing in for the engine; reads the
 * host's port and forwards its later output to `opts.onOutput`. Throws when the host exits before printing its port.
 */
async function spawnHost(opts: ProviderHostOptions): Promise<SpawnedHost> {
  const hostJs = opts.main ?? require.resolve("@pulumi/pulumi/cmd/dynamic-provider/index.js");
  // argv[2] is the engine's address: Pulumi's Node.js host never dials it, our providers' watch does
  // (provider/framework/engine-watch.ts: the host ends once nothing accepts connections there). This process stands in for
  // the engine with a listener of its own, open while the host is (`engineGone()` closes it earlier).
  const engine = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => engine.listen(0, "127.0.0.1", resolve));
  const engineAddress = `127.0.0.1:${(engine.address() as AddressInfo).port}`;
  const child = spawn(nodeBinary(), ["--import", PARENT_WATCH, hostJs, engineAddress], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env, PULUMI_NODEJS_PROJECT: opts.project ?? "posthog-test" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.once("exit", () => engine.close());
  const port = await readPort(child);
  const forward = (chunk: Buffer) => opts.onOutput?.(chunk.toString());
  child.stdout?.on("data", forward);
  child.stderr?.on("data", forward);
  return { child, engine, port };
}

/** A unary method of the generated gRPC client. */
type Unary<Req, Res> = (
  req: Req,
  md: grpc.Metadata,
  options: Partial<grpc.CallOptions>,
  cb: (err: grpc.ServiceError | null, res: Res) => void,
) => grpc.ClientUnaryCall;

/** Calls a unary method of the client; rejects with the gRPC `ServiceError`. */
type Call = <Req, Res>(method: Unary<Req, Res>, req: Req, timeoutMs?: number) => Promise<Res>;

/** The {@link Call} of `client`, with the call's `timeoutMs` or else `deadlineMs` as its deadline (none if neither). */
function unaryCaller(client: provrpc.ResourceProviderClient, deadlineMs: number | undefined): Call {
  return (method, req, timeoutMs) =>
    new Promise((resolve, reject) => {
      const ms = timeoutMs ?? deadlineMs;
      const options = ms === undefined ? {} : { deadline: Date.now() + ms };
      method.call(client, req, new grpc.Metadata(), options, (err, res) =>
        err ? reject(err) : resolve(res),
      );
    });
}

/** The host's calls of the `ResourceProvider` service (Configure, Check, Diff, Create, Read, Update, Delete). */
type ResourceCalls = Pick<
  ProviderHost,
  "configure" | "check" | "diff" | "create" | "read" | "update" | "delete"
>;

/** {@link ResourceCalls} over `client`: each builds its request, calls, and reads the response into plain values. */
function resourceCalls(client: provrpc.ResourceProviderClient, call: Call): ResourceCalls {
  return {
    async configure(config, secretKeys = []) {
      const req = new provproto.ConfigureRequest();
      const args = Object.fromEntries(
        Object.entries(config).map(([k, v]) => [
          k,
          secretKeys.includes(k) ? { [secretSig]: secretValue, value: v } : v,
        ]),
      );
      req.setArgs(toStruct(args));
      await call(client.configure, req);
    },
    async check(urn, olds, news) {
      const req = new provproto.CheckRequest();
      req.setUrn(urn);
      req.setOlds(toStruct(olds));
      req.setNews(toStruct(news));
      const res = await call(client.check, req);
      return {
        inputs: fromStruct(res.getInputs()),
        failures: res.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
      };
    },
    async diff(id, urn, olds, news) {
      const req = new provproto.DiffRequest();
      req.setId(id);
      req.setUrn(urn);
      req.setOlds(toStruct(olds));
      req.setNews(toStruct(news));
      const res = await call(client.diff, req);
      const kinds = provproto.DiffResponse.DiffChanges;
      const changes = res.getChanges();
      return {
        changes: changes === kinds.DIFF_SOME ? true : changes === kinds.DIFF_NONE ? false : undefined,
        replaces: res.getReplacesList(),
        deleteBeforeReplace: res.getDeletebeforereplace(),
      };
    },
    async create(urn, props, timeoutMs) {
      const req = new provproto.CreateRequest();
      req.setUrn(urn);
      req.setProperties(toStruct(props));
      const res = await call(client.create, req, timeoutMs);
      return { id: res.getId(), outs: fromStruct(res.getProperties()) };
    },
    async read(id, urn, props, inputs, timeoutMs) {
      const req = new provproto.ReadRequest();
      req.setId(id);
      req.setUrn(urn);
      req.setProperties(toStruct(props));
      if (inputs) req.setInputs(toStruct(inputs));
      const res = await call(client.read, req, timeoutMs);
      const returnedInputs = res.getInputs();
      return {
        id: res.getId(),
        props: fromStruct(res.getProperties()),
        ...(returnedInputs ? { inputs: fromStruct(returnedInputs) } : {}),
      };
    },
    async update(id, urn, olds, news, timeoutMs) {
      const req = new provproto.UpdateRequest();
      req.setId(id);
      req.setUrn(urn);
      req.setOlds(toStruct(olds));
      req.setNews(toStruct(news));
      const res = await call(client.update, req, timeoutMs);
      return { outs: fromStruct(res.getProperties()) };
    },
    async delete(id, urn, props, timeoutMs) {
      const req = new provproto.DeleteRequest();
      req.setId(id);
      req.setUrn(urn);
      req.setProperties(toStruct(props));
      await call(client.delete, req, timeoutMs);
    },
  };
}

/** The host's life: the engine's address going away, its exit, closing the client and stopping it (SIGTERM, then SIGKILL after 3 s). */
function hostLifecycle(
  host: SpawnedHost,
  client: provrpc.ResourceProviderClient,
): Pick<ProviderHost, "engineGone" | "exited" | "close"> {
  const { child, engine } = host;
  return {
    engineGone() {
      return new Promise<void>((resolve) => engine.close(() => resolve()));
    },
    exited: () =>
      child.exitCode !== null || child.signalCode !== null
        ? Promise.resolve()
        : new Promise<void>((resolve) => child.once("exit", () => resolve())),
    async close() {
      client.close();
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Starts the real dynamic-provider host (`node <@pulumi/pulumi>/cmd/dynamic-provider/index.js <engine>`) in
 * `opts.cwd` with `PULUMI_NODEJS_PROJECT` set, reads its port from stdout and connects a gRPC client.
 * Startup takes about 1.3 s. Calls have no deadline unless `deadlineMs` or the call's `timeoutMs` sets one;
 * errors reject with the gRPC `ServiceError`, whose `details` carries the provider's message. The host exits
 * when this process does (even on SIGKILL: see {@link PARENT_WATCH}).
 * @throws Error when the host exits before printing its port.
 */
export async function startProviderHost(opts: ProviderHostOptions): Promise<ProviderHost> {
  const host = await spawnHost(opts);
  const client = new provrpc.ResourceProviderClient(
    `127.0.0.1:${host.port}`,
    grpc.credentials.createInsecure(),
  );
  return {
    port: host.port,
    ...resourceCalls(client, unaryCaller(client, opts.deadlineMs)),
    ...hostLifecycle(host, client),
  };
}
