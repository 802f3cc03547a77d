/**
 * The thin `__provider` of every resource. Pulumi serializes a dynamic resource's provider into its state
 * (`__provider`, in inputs and outputs). Ours holds two strings, the module specifier of the provider code
 * and the resource name, and forwards each method to `require(specifier)[name]`; so the state stays small
 * (< 2 KB), holds no key, is identical from one package version to the next (no `~__provider` churn), and
 * refresh/destroy run the INSTALLED provider code after an upgrade.
 */
import { basename, dirname, resolve } from "node:path";
import type { Provider } from "../provider/lifecycle";

/**
 * Where the provider code is loaded from at deployment time: `pulumi-posthog/provider` when this SDK is an
 * installed package (its path has a `node_modules` segment), else the absolute path of this checkout's
 * compiled `dist/provider/index.js` (examples and tests inside the repository).
 */
export const providerModule: string = __dirname.split(/[\\/]/).includes("node_modules")
  ? "pulumi-posthog/provider"
  : basename(dirname(__dirname)) === "dist"
    ? resolve(__dirname, "..", "provider", "index.js")
    : resolve(__dirname, "..", "dist", "provider", "index.js");

/**
 * The serializable provider of resource `name` (an export of `provider/index.ts`, e.g. `"Domain"`).
 * Every method is a one-line forwarder; `require` runs in the provider host, resolving from the program
 * directory. Keep this function tiny: its text is what every resource stores in state.
 */
export function providerShim(name: string, specifier: string = providerModule): Provider {
  const m = { s: specifier, n: name };
  return {
    configure: (...a) => require(m.s)[m.n].configure(...a),
    check: (...a) => require(m.s)[m.n].check(...a),
    diff: (...a) => require(m.s)[m.n].diff(...a),
    create: (...a) => require(m.s)[m.n].create(...a),
    read: (...a) => require(m.s)[m.n].read(...a),
    update: (...a) => require(m.s)[m.n].update(...a),
    delete: (...a) => require(m.s)[m.n].delete(...a),
  };
}
