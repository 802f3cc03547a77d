#!/usr/bin/env node
/**
 * `pulumi-resource-posthog`: the provider plugin's executable. The engine starts it with the engine's address as
 * argument and reads the port of its gRPC server from its first line of output (`@pulumi/pulumi/provider`'s `main`).
 *
 * `main`'s server answers Configure without looking at the request (it hands the provider no settings), so this
 * executable gives its `configure` method the request's settings first ({@link withConfigure}): the provider's
 * `args` (or `variables`) become the stack config of the resources' providers, as under the dynamic-provider host.
 */
import { createRequire } from "node:module";
import { main } from "@pulumi/pulumi/provider";
import { checkConfig, configFromRequest, configure, pluginProvider } from "./index";

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

/**
 * Makes the ResourceProvider service that `main` registers with `@pulumi/pulumi`'s own `@grpc/grpc-js` read the
 * settings of Configure: wraps `grpc.Server.prototype.addService` (this process serves nothing else) so that the
 * service's `configure` hands them to the resources' providers before answering as `main` does (secrets accepted,
 * resources and output values not).
 */
function withConfigure(): void {
  const fromPulumi = createRequire(require.resolve("@pulumi/pulumi"));
  const grpc = fromPulumi("@grpc/grpc-js") as typeof import("@grpc/grpc-js");
  const provproto = fromPulumi("./proto/provider_pb") as {
    ConfigureResponse: new () => {
      setAcceptsecrets(v: boolean): void;
      setAcceptresources(v: boolean): void;
      setAcceptoutputs(v: boolean): void;
    };
    CheckResponse: new () => { setInputs(v: unknown): void };
  };
  const { Struct } = fromPulumi("google-protobuf/google/protobuf/struct_pb") as {
    Struct: { fromJavaScript(v: unknown): unknown };
  };
  const addService = grpc.Server.prototype.addService;
  grpc.Server.prototype.addService = function (service, implementation) {
    const impl = implementation as Record<string, unknown>;
    impl.configure = (call: ConfigureCall, callback: Callback) => {
      const variables = new Map(call.request.getVariablesMap()?.entries() ?? []);
      configure(configFromRequest(call.request.getArgs()?.toJavaScript(), variables)).then(
        () => {
          const resp = new provproto.ConfigureResponse();
          resp.setAcceptsecrets(true);
          resp.setAcceptresources(false);
          resp.setAcceptoutputs(false);
          callback(null, resp);
        },
        (e: unknown) => callback(e instanceof Error ? e : new Error(String(e))),
      );
    };
    impl.checkConfig = (call: CheckConfigCall, callback: Callback) => {
      try {
        const news = (call.request.getNews()?.toJavaScript() ?? {}) as Record<string, unknown>;
        const { inputs } = checkConfig(news);
        const resp = new provproto.CheckResponse();
        resp.setInputs(Struct.fromJavaScript(inputs));
        callback(null, resp);
      } catch (e) {
        callback(e instanceof Error ? e : new Error(String(e)));
      }
    };
    return addService.call(this, service, implementation);
  };
}

withConfigure();
void main(pluginProvider(), process.argv.slice(2));
