/**
 * The Node.js floor, checked when an entry point of the package loads (`pulumi-posthog`,
 * `pulumi-posthog/provider`, `pulumi-posthog/client` import this module FIRST, before undici or
 * @pulumi/pulumi load). The Pulumi CLI runs whatever `node` is first on PATH, for the program and for the
 * dynamic-provider host; on an older Node, undici 8 fails deep inside its own code
 * (`TypeError: Cannot read properties of undefined (reading 'bind')`). This module turns that into one line
 * that says what was found, what is needed and what to do. It imports only docs-link.ts, which has no imports
 * either: keep it that way, so that it runs before anything else.
 */
import { docsLink } from "./docs-link";

/** The oldest Node.js the package runs on: undici 8 needs 22.19 (its `engines`), @pulumi/pulumi 22. */
export const minimumNodeVersion = "22.19.0";

/** `[major, minor, patch]` of a version such as `22.19.0` or `v20.11.1`; missing or bad parts are 0. */
function parts(version: string): [number, number, number] {
  const [major, minor, patch] = version
    .replace(/^v/, "")
    .split(/[.-]/)
    .map((p) => Number.parseInt(p, 10) || 0);
  return [major ?? 0, minor ?? 0, patch ?? 0];
}

/**
 * Whether `version` (e.g. `process.versions.node`, `20.11.1`) is at least `minimum` (default
 * {@link minimumNodeVersion}), comparing major, minor and patch numerically. Never throws.
 */
export function isSupportedNodeVersion(version: string, minimum: string = minimumNodeVersion): boolean {
  const a = parts(version);
  const b = parts(minimum);
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

/**
 * Throws when `version` (default: the running Node's) is older than {@link minimumNodeVersion}.
 * @throws Error with a one-line message: the version found and its binary, the version needed, and that the
 * Pulumi CLI runs the `node` on PATH, so that is the one to upgrade; then the pointer to its docs section.
 */
export function assertNodeVersion(
  version: string = process.versions.node,
  execPath: string = process.execPath,
): void {
  if (isSupportedNodeVersion(version)) return;
  const needed = minimumNodeVersion.replace(/\.0$/, "");
  const message =
    `pulumi-posthog needs Node.js >= ${needed} but runs on ${version} (${execPath}). ` +
    `The Pulumi CLI runs the \`node\` on PATH for the program and the provider host: ` +
    `install Node.js >= ${needed} and put it first on PATH (e.g. \`nvm install 22 && nvm use 22\`), ` +
    `then run \`node --version\` to check.${docsLink("troubleshooting/installation.md", "pulumi-posthog-needs-nodejs")}`;
  throw new Error(message);
}

assertNodeVersion();
