#!/usr/bin/env node
/**
 * `pulumi-resource-posthog`: the provider plugin's executable. The engine starts it with the engine's address as
 * argument and reads the port of its gRPC server from its first line of output (`@pulumi/pulumi/provider`'s `main`).
 *
 * `main`'s server answers Configure without looking at the request (it hands the provider no settings), so this
 * executable gives its `configure` method the request's settings first ({@link withConfigure}): the provider's
 * `args` (or `variables`) become the stack config of the resources' providers, as under the dynamic-provider host.
 *
 * On a Node.js older than the package needs (provider/client/node-version.ts), loading the providers would fail, the
 * plugin would exit before printing its port, and the engine would show its "exited prematurely … This is *always*
 * a bug in the provider" block with a stack trace around the message. So this executable checks first, and on
 * such a Node serves a plugin that refuses ({@link refusingService}): its GetSchema answers (schema.json needs no
 * more), and its CheckConfig fails with the package's one line plus where to get a Node.js, which the engine shows
 * as `error: pulumi:providers:posthog resource '<name>' has a problem: pulumi-posthog needs Node.js >= 22.19 …`.
 * Only modules that load on any Node.js `@pulumi/pulumi` runs on are loaded before that check.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { main } from "@pulumi/pulumi/provider";
import { withoutDocsLink } from "../../client/docs-link";
import { packageRoot, packageVersion } from "../../client/version";
import { engineArgument } from "../../framework/engine-watch";

/** The pieces of a gRPC unary call the Configure handler uses. */
interface ConfigureCall {
  request: {
    getArgs(): { toJavaScript(): unknown } | undefined;
    getVariablesMap(): { entries(): Iterable<[string, string]> } | undefined;
  };
}
/** The pieces of a CheckConfig call the handler uses. */
interface CheckConfigCall {
  request: { getNews(): { toJavaScript(): unknown } | undefined };
}
type Callback = (error: Error | null, response?: unknown) => void;
type Handler<C> = (call: C, callback: Callback) => void;

/** The modules of `@pulumi/pulumi` the service handlers build their answers with. */
function fromPulumi() {
  const load = createRequire(require.resolve("@pulumi/pulumi"));
  const grpc = load("@grpc/grpc-js") as typeof import("@grpc/grpc-js");
  const provproto = load("./proto/provider_pb") as {
    ConfigureResponse: new () => {
      setAcceptsecrets(v: boolean): void;
      setAcceptresources(v: boolean): void;
      setAcceptoutputs(v: boolean): void;
    };
    CheckResponse: new () => { setInputs(v: unknown): void; setFailuresList(v: unknown[]): void };
    CheckFailure: new () => { setProperty(v: string): void; setReason(v: string): void };
  };
  const { Struct } = load("google-protobuf/google/protobuf/struct_pb") as {
    Struct: { fromJavaScript(v: unknown): unknown };
  };
  return { grpc, provproto, Struct };
}

/**
 * Replaces handlers of the ResourceProvider service that `main` registers with `@pulumi/pulumi`'s own
 * `@grpc/grpc-js`: wraps `grpc.Server.prototype.addService` (this process serves nothing else) so that the
 * implementation's `configure` and `checkConfig` are the given ones.
 */
function overrideService(handlers: {
  configure: Handler<ConfigureCall>;
  checkConfig: Handler<CheckConfigCall>;
}): void {
  const { grpc } = fromPulumi();
  const addService = grpc.Server.prototype.addService;
  grpc.Server.prototype.addService = function (service, implementation) {
    Object.assign(implementation as Record<string, unknown>, handlers);
    return addService.call(this, service, implementation);
  };
}

/**
 * Makes the service's `configure` hand the request's settings to the resources' providers before answering as
 * `main` does (secrets accepted, resources and output values not), and its `checkConfig` check them.
 */
function withConfigure(plugin: typeof import("./index"), served: import("./index").PluginProvider): void {
  const { provproto, Struct } = fromPulumi();
  overrideService({
    configure: (call, callback) => {
      const variables = new Map(call.request.getVariablesMap()?.entries() ?? []);
      served.configure(plugin.configFromRequest(call.request.getArgs()?.toJavaScript(), variables)).then(
        () => {
          const resp = new provproto.ConfigureResponse();
          resp.setAcceptsecrets(true);
          resp.setAcceptresources(false);
          resp.setAcceptoutputs(false);
          callback(null, resp);
        },
        (e: unknown) => callback(e instanceof Error ? e : new Error(String(e))),
      );
    },
    checkConfig: (call, callback) => {
      try {
        const news = (call.request.getNews()?.toJavaScript() ?? {}) as Record<string, unknown>;
        const { inputs } = plugin.checkConfig(news);
        const resp = new provproto.CheckResponse();
        resp.setInputs(Struct.fromJavaScript(inputs));
        callback(null, resp);
      } catch (e) {
        callback(e instanceof Error ? e : new Error(String(e)));
      }
    },
  });
}

/** A Log call's severity, as the engine's protocol numbers them (pulumi/proto engine.proto `LogSeverity`). */
const SEVERITY = { info: 1, warning: 2 } as const;

/**
 * Shows the providers' notes in the CLI's output. The resources write them as lines `warning: …` or `info: …` on
 * stdout, which the dynamic provider's host passes on as log lines; but the engine passes a provider plugin's own
 * output on only as debug lines (`unstructuredOutput`, pulumi/pulumi sdk/go/common/resource/plugin/plugin.go,
 * v3.274.1), so `pulumi destroy` would not show "warning: destroy kept …". This sends each such line through the
 * engine's `Log` RPC (`@pulumi/pulumi`'s client of the Engine service) to `engineAddress` (`host:port`, the
 * plugin's argument), with its severity and without its prefix; every other line (the port `main` prints first
 * among them) stays on stdout, and so does a note whose delivery fails.
 */
function forwardNotes(engineAddress: string): void {
  const load = createRequire(require.resolve("@pulumi/pulumi"));
  const grpc = load("@grpc/grpc-js") as typeof import("@grpc/grpc-js");
  const { EngineClient } = load("./proto/engine_grpc_pb") as {
    EngineClient: new (
      address: string,
      credentials: unknown,
    ) => { log(req: unknown, callback: (error: Error | null) => void): void };
  };
  const { LogRequest } = load("./proto/engine_pb") as {
    LogRequest: new () => {
      setSeverity(v: number): void;
      setMessage(v: string): void;
      setUrn(v: string): void;
    };
  };
  let engine: InstanceType<typeof EngineClient> | undefined;
  const print = console.log.bind(console);
  console.log = (...args: unknown[]) => {
    const line = args.map(String).join(" ");
    const note = /^(warning|info): ([\s\S]*)$/.exec(line);
    if (note === null) return print(...args);
    engine ??= new EngineClient(engineAddress, grpc.credentials.createInsecure());
    const req = new LogRequest();
    req.setSeverity(SEVERITY[note[1] as keyof typeof SEVERITY]);
    req.setMessage(note[2] as string);
    req.setUrn("");
    engine.log(req, (error) => {
      if (error) print(line);
    });
  };
}

/**
 * The message of a Node.js too old for the package (provider/client/node-version.ts, which throws it when loaded on
 * one), with where else to get a Node.js for the plugin; undefined on a supported Node.js.
 * @throws any other error of loading provider/client/node-version.ts, as it is.
 */
export function nodeVersionRefusal(): string | undefined {
  try {
    require("../../client/node-version");
    return undefined;
  } catch (e) {
    if (!(e instanceof Error) || !e.message.startsWith("pulumi-posthog needs Node.js")) throw e;
    return (
      `${withoutDocsLink(e.message)} Or install the plugin's tarball, which brings its own Node.js ` +
      "(`npm run plugin-tarball`, then `pulumi plugin install resource posthog <version> --file <tarball>`)." +
      e.message.slice(withoutDocsLink(e.message).length)
    );
  }
}

/**
 * The plugin on a Node.js it cannot run on: GetSchema serves schema.json; CheckConfig (the engine's first call for
 * a provider of a program) fails with `message` as its one check failure, Configure and every resource operation
 * fail with it as their error.
 */
function refusingService(message: string): void {
  const { grpc, provproto } = fromPulumi();
  overrideService({
    configure: (_call, callback) =>
      callback(
        Object.assign(new Error(message), { code: grpc.status.FAILED_PRECONDITION, details: message }),
      ),
    checkConfig: (_call, callback) => {
      const failure = new provproto.CheckFailure();
      failure.setProperty("");
      failure.setReason(message);
      const resp = new provproto.CheckResponse();
      resp.setFailuresList([failure]);
      callback(null, resp);
    },
  });
  const refuse = async (): Promise<never> => {
    throw new Error(message);
  };
  void main(
    {
      version: packageVersion,
      getSchema: async () => {
        if (packageRoot === undefined)
          throw new Error("schema.json not found: the package's root is unknown");
        return readFileSync(join(packageRoot, "schema.json"), "utf8");
      },
      check: refuse,
      diff: refuse,
      create: refuse,
      read: refuse,
      update: refuse,
      delete: refuse,
      invoke: refuse,
    },
    process.argv.slice(2),
  );
}

const refusal = nodeVersionRefusal();
if (refusal !== undefined) {
  refusingService(refusal);
} else {
  // Loaded only now: the providers need the Node.js checked above (undici 8).
  const plugin = require("./index") as typeof import("./index");
  const served = plugin.pluginProvider();
  withConfigure(plugin, served);
  const engineAddress = engineArgument(process.argv.slice(2));
  if (engineAddress !== undefined) forwardNotes(engineAddress);
  void main(served, process.argv.slice(2));
}
