/**
 * Fastify, the emulator's HTTP server, is an optional peer dependency of `pulumi-posthog`: users of the
 * provider and the client install no HTTP server framework; users of the emulator (`pulumi-posthog/emulator`,
 * the `posthog-emulator` bin) add it with `npm install --save-dev fastify@5`. `emulator/index.ts` imports
 * this module FIRST, so that a missing or wrong Fastify fails in one line that says what to install, instead
 * of `Cannot find module 'fastify'` with a require stack. No imports of its own: keep it that way.
 */

/** The Fastify major version the emulator is written against. */
export const fastifyMajor = 5;

/** Thrown when Fastify is missing or of another major version; its message is one line. */
export class FastifyNotInstalledError extends Error {
  override name = "FastifyNotInstalledError";
}

/**
 * What is wrong with the Fastify install seen from this module (resolved as `require("fastify")` would be,
 * from the user's node_modules), or `undefined` if Fastify 5 is installed. Never throws.
 * `resolve` is `require.resolve` (a parameter for tests).
 */
export function fastifyProblem(resolve: (id: string) => string = require.resolve): string | undefined {
  const fix = `run \`npm install --save-dev fastify@${fastifyMajor}\` in the project that runs it`;
  let manifest: string;
  try {
    resolve("fastify");
    manifest = resolve("fastify/package.json");
  } catch {
    return (
      `the PostHog emulator needs fastify ${fastifyMajor}, which is not installed ` +
      `(an optional peer dependency of pulumi-posthog: the provider and the client do not need it): ${fix}`
    );
  }
  let version = "unknown";
  try {
    version = String((require(manifest) as { version?: unknown }).version);
  } catch {
    // unreadable manifest: reported as version "unknown" below
  }
  if (Number.parseInt(version, 10) === fastifyMajor) return undefined;
  return `the PostHog emulator needs fastify ${fastifyMajor} but found fastify ${version}: ${fix}`;
}

/** Throws {@link FastifyNotInstalledError} (one line) unless Fastify 5 is installed. */
export function assertFastifyInstalled(): void {
  const problem = fastifyProblem();
  if (problem) throw new FastifyNotInstalledError(`pulumi-posthog/emulator: ${problem}`);
}

assertFastifyInstalled();
