/**
 * The package's own name and version, read from its package.json at load time, so a published build and
 * this checkout report the same thing. Used for the `User-Agent` header: `pulumi-posthog/<version>`.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

function findPackageJson(from: string): { name: string; version: string; root: string | undefined } {
  for (let dir = from; ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "pulumi-posthog" && pkg.version)
        return { name: pkg.name, version: pkg.version, root: dir };
    } catch {
      // no package.json here: keep walking up
    }
    if (dirname(dir) === dir) return { name: "pulumi-posthog", version: "0.0.0", root: undefined };
  }
}

const pkg = findPackageJson(__dirname);
/** The npm package name, `pulumi-posthog`. */
export const packageName: string = pkg.name;
/** The package version, e.g. `0.1.0`. */
export const packageVersion: string = pkg.version;
/** The directory of the package (its package.json), or undefined when it was not found. */
export const packageRoot: string | undefined = pkg.root;
/** The `User-Agent` header value every request carries: `pulumi-posthog/<version>`. */
export const userAgent = `${packageName}/${packageVersion}`;
