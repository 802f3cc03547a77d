/**
 * The one list of resources: each one's card (provider/framework/card.ts) and operations. Everything else derives
 * from it: the dynamic providers of provider/providers.ts (what the SDK's `__provider` shims call), the plugin's
 * resources, import ids, input schemas and secret outputs, the preview's adoption lines, schema.json, the SDK classes
 * and the docs' tables. A new resource is its file here, its import and one line in {@link RESOURCES}; `npm run
 * generate` writes the rest (./modules.ts: each card's module re-exported; ../providers.ts: the named providers).
 */
import { batchExportPause } from "./batch-export-pause";
import { dashboard } from "./dashboard";
import { dashboardCollaborator } from "./dashboard-collaborator";
import { dashboardSharing } from "./dashboard-sharing";
import { domain } from "./domain";
import { domainVerification } from "./domain-verification";
import { invite } from "./invite";
import { member } from "./member";
import { project } from "./project";

export * from "./modules";

/** Every resource, in the order the docs and schema.json list them. */
export const RESOURCES = [
  domain,
  domainVerification,
  invite,
  member,
  project,
  dashboard,
  dashboardCollaborator,
  dashboardSharing,
  batchExportPause,
] as const;

/** A resource's name, as in type tokens (`posthog:index:<Name>`, `pulumi-nodejs:dynamic/posthog:<Name>`). */
export type ResourceName = (typeof RESOURCES)[number]["card"]["name"];

/** Every resource name, as used in type tokens and by the SDK shims. */
export const resourceNames: readonly ResourceName[] = RESOURCES.map((r) => r.card.name);

/** The resource named `name`, or undefined. */
export function resourceOf(name: string): (typeof RESOURCES)[number] | undefined {
  return RESOURCES.find((r) => r.card.name === name);
}
