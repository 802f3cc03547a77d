/**
 * `pulumi-posthog/provider`: the dynamic providers, one named export per resource (the name in the type
 * token `pulumi-nodejs:dynamic/posthog:<Name>`), and each resource's card and schemas, from the one list
 * (provider/resources/index.ts). The SDK's serialized `__provider` shims `require` this module and call
 * `[Name].check/diff/create/read/update/delete`. The providers share one run (provider/adapters/dynamic.ts): the
 * dynamic-provider host loads this module once per deployment.
 */
import "./client/node-version"; // first: fails early, in one line, on a Node.js too old for undici

import { dynamicProviders } from "./adapters/dynamic";
import { RESOURCES } from "./resources/index";

export { dynamicProvider, dynamicProviders, IMPORT_READ, type Provider } from "./adapters/dynamic";
export { defineResource, type Operations, type ResourceDefinition } from "./framework/lifecycle";
export * from "./resources/index";

/** The dynamic provider of each resource, by name (what the SDK's `__provider` shims call). */
export const providers = dynamicProviders(RESOURCES);

// One named export per resource: the stored shims call `require("pulumi-posthog/provider")[<Name>]`.
/** Domain's dynamic provider. */
export const Domain = providers.Domain;
/** DomainVerification's dynamic provider. */
export const DomainVerification = providers.DomainVerification;
/** Invite's dynamic provider. */
export const Invite = providers.Invite;
/** Member's dynamic provider. */
export const Member = providers.Member;
/** Project's dynamic provider. */
export const Project = providers.Project;
/** Dashboard's dynamic provider. */
export const Dashboard = providers.Dashboard;
/** DashboardCollaborator's dynamic provider. */
export const DashboardCollaborator = providers.DashboardCollaborator;
/** DashboardSharing's dynamic provider. */
export const DashboardSharing = providers.DashboardSharing;
/** BatchExportPause's dynamic provider. */
export const BatchExportPause = providers.BatchExportPause;
