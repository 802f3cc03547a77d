/**
 * The thin `__provider` of every resource. Pulumi serializes a dynamic resource's provider into its state
 * (`__provider`, in inputs and outputs). Ours holds two strings, the module specifier `pulumi-posthog/provider`
 * and the resource name, and forwards each method to that module's export; so the state stays small (about
 * 2 KB), holds no key and no path of the machine, is identical from one package version, checkout or machine
 * to the next (no `~__provider` churn), and refresh/destroy run the INSTALLED provider code after an upgrade.
 */
// The type only: the shim has every method of a dynamic provider (`Provider` of provider/framework/lifecycle.ts, the same
// type, named from @pulumi/pulumi here so that the SDK's declaration files import nothing that reads zod).
import type * as pulumi from "@pulumi/pulumi";

/**
 * The module specifier the serialized provider loads its code from in the provider host: always
 * `pulumi-posthog/provider`, never a path, so state written from one checkout or machine is refreshed and
 * destroyed from any other. It is resolved from the host's working directory (see {@link providerShim}).
 */
export const providerModule = "pulumi-posthog/provider";

/**
 * The serializable provider of resource `name` (an export of `provider/index.ts`, e.g. `"Domain"`), whose
 * code comes from module `specifier` (default {@link providerModule}). Every method is a one-line forwarder
 * run in the provider host, where `p()` resolves the specifier as a file in the host's working directory
 * would (`createRequire("<cwd>/")`). That directory is the program directory: the engine starts the
 * `pulumi-nodejs` plugin in `ctx.Pwd` (pulumi/pulumi pkg/resource/plugin/provider_plugin.go:288,
 * plugin.go:599 `cmd.Dir = pwd`), which is the directory of `main` (pkg/engine/deployment.go:57–68,
 * project.go:66), for `up`, `refresh` and `destroy` alike. From there Node finds `node_modules/pulumi-posthog`
 * of an installed package, and inside this repository the package itself (self-reference: `name` and
 * `exports` of the nearest package.json). A bare `require` would not do: the host loads this text with
 * require-from-string, whose module has no filename, so it searches `node_modules` only.
 * Throws (in the host, at the first call) `MODULE_NOT_FOUND` when the package is not installed there.
 * Keep this function tiny: its text is what every resource stores in state.
 */
export function providerShim(
  name: string,
  specifier: string = providerModule,
): Required<pulumi.dynamic.ResourceProvider> {
  const [s, n] = [specifier, name];
  const p = () => require("node:module").createRequire(`${process.cwd()}/`)(s)[n];
  return {
    configure: (...a) => p().configure(...a),
    check: (...a) => p().check(...a),
    diff: (...a) => p().diff(...a),
    create: (...a) => p().create(...a),
    read: (...a) => p().read(...a),
    update: (...a) => p().update(...a),
    delete: (...a) => p().delete(...a),
  };
}
