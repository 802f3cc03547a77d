/**
 * `pulumi-posthog/provider`: the dynamic providers, one named export per resource (the name in the type
 * token `pulumi-nodejs:dynamic/posthog:<Name>`). The SDK's serialized `__provider` shims `require` this
 * module and call `[Name].check/diff/create/read/update/delete`.
 */
import "./client/node-version"; // first: fails early, in one line, on a Node.js too old for undici
import { batchExportPauseProvider } from "./resources/batch-export-pause";
import { dashboardProvider } from "./resources/dashboard";
import { dashboardCollaboratorProvider } from "./resources/dashboard-collaborator";
import { dashboardSharingProvider } from "./resources/dashboard-sharing";
import { domainProvider } from "./resources/domain";
import { domainVerificationProvider } from "./resources/domain-verification";
import { inviteProvider } from "./resources/invite";
import { memberProvider } from "./resources/member";
import { projectProvider } from "./resources/project";

export { defineResource, type Provider, type ResourceDefinition } from "./framework/lifecycle";
export * from "./resources/batch-export-pause";
export * from "./resources/dashboard";
export * from "./resources/dashboard-collaborator";
export * from "./resources/dashboard-sharing";
export * from "./resources/domain";
export * from "./resources/domain-verification";
export * from "./resources/invite";
export * from "./resources/member";
export * from "./resources/project";

/** Domain provider. */
export const Domain = domainProvider;
/** DomainVerification provider. */
export const DomainVerification = domainVerificationProvider;
/** Invite provider. */
export const Invite = inviteProvider;
/** Member provider. */
export const Member = memberProvider;
/** Project provider. */
export const Project = projectProvider;
/** Dashboard provider. */
export const Dashboard = dashboardProvider;
/** DashboardCollaborator provider. */
export const DashboardCollaborator = dashboardCollaboratorProvider;
/** DashboardSharing provider. */
export const DashboardSharing = dashboardSharingProvider;
/** BatchExportPause provider. */
export const BatchExportPause = batchExportPauseProvider;

/** Every resource name, as used in type tokens and by the SDK shims. */
export const resourceNames = [
  "Domain",
  "DomainVerification",
  "Invite",
  "Member",
  "Project",
  "Dashboard",
  "DashboardCollaborator",
  "DashboardSharing",
  "BatchExportPause",
] as const;
export type ResourceName = (typeof resourceNames)[number];
