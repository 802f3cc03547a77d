/**
 * `pulumi-posthog`: manage a PostHog organization as code with Pulumi dynamic resources (type tokens
 * `pulumi-nodejs:dynamic/posthog:<Name>`), plus lookups of existing objects.
 *
 * ```ts
 * import * as posthog from "pulumi-posthog";
 * const web = new posthog.Project("web", { name: "Web" });
 * ```
 * Configure the connection with `pulumi config set --secret posthog:apiKey phx_…` (and `posthog:host`,
 * `posthog:organizationId`, `posthog:projectId`), or the environment (`POSTHOG_API_KEY` …).
 */
import "../provider/client/node-version"; // first: fails early, in one line, on a Node.js too old for undici

export * from "./lookups";
export { providerModule, providerShim } from "./provider-shim";
export * from "./resources";
