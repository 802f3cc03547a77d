/**
 * GitOps for a PostHog organization: the program a platform team keeps in git and applies from CI with
 * `pulumi up` (and checks for drift with `pulumi preview --refresh --expect-no-changes`).
 *
 * Everything it manages comes from the stack settings (Pulumi.dev.yaml, Pulumi.prod.yaml beside this file):
 * - the company's e-mail domain with SAML single sign-on, and its verification (publish the TXT record that
 *   the `dnsRecord` output names; DomainVerification waits for it);
 * - invitations from a list, and the organization level of existing members;
 * - a project, a team dashboard and a KPI dashboard built from `dashboards/web-kpis.json` (kept beside this
 *   program and reviewed like code), editable only by its collaborators, shared by public link when
 *   `publicKpis` is on;
 * - a batch export kept paused in dev (no test data shipped to the warehouse) and running in prod.
 *
 * Connection: `posthog:host` / `posthog:apiKey` (secret) stack settings, or POSTHOG_HOST / POSTHOG_API_KEY.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import * as posthog from "pulumi-posthog";

type Level = "member" | "admin" | "owner";

const config = new pulumi.Config();
const stack = pulumi.getStack();

// --- Identity: domain, SAML, verification ---------------------------------------------------------------
const saml = config.requireObject<{ entityId: string; acsUrl: string; x509Cert: string }>("saml");
const domain = new posthog.Domain("company-domain", {
  domain: config.require("domain"),
  jitProvisioningEnabled: config.getBoolean("jitProvisioning") ?? false,
  ssoEnforcement: "saml",
  samlEntityId: saml.entityId,
  samlAcsUrl: saml.acsUrl,
  samlX509Cert: saml.x509Cert,
});
const verification = new posthog.DomainVerification("company-domain", {
  domainId: domain.id,
  timeoutSeconds: config.getNumber("verificationTimeoutSeconds") ?? 300,
});

// --- People: invites from a list, levels of existing members ---------------------------------------------
const invites =
  config.requireObject<{ email: string; firstName?: string; level?: Level; adopt?: boolean }[]>("invites");
for (const person of invites) {
  new posthog.Invite(`invite-${person.email}`, {
    targetEmail: person.email,
    firstName: person.firstName ?? "",
    level: person.level ?? "member",
    sendEmail: stack === "prod",
    // `adopt: true` takes over a pending invite of the address (one a create whose answer was lost may have made:
    // docs/how-it-works/lost-creates.md) instead of failing, and revokes it on destroy as one the stack sent.
    ...(person.adopt ? { adopt: true, deleteAdoptedOnDestroy: true } : {}),
  });
}
const memberLevels = config.requireObject<Record<string, Level>>("members");
const members = Object.fromEntries(
  Object.entries(memberLevels).map(([email, level]) => [
    email,
    // retainOnDelete: removing the resource stops managing the level; it never removes the person.
    new posthog.Member(`member-${email}`, { email, level, retainOnDelete: true }),
  ]),
);

// --- Analytics: project, dashboards, collaborators, sharing ----------------------------------------------
const projectSettings = config.requireObject<{ name: string; timezone: string; appUrls?: string[] }>(
  "project",
);
const project = new posthog.Project("web", {
  name: projectSettings.name,
  timezone: projectSettings.timezone,
  appUrls: projectSettings.appUrls ?? [],
  anonymizeIps: true,
});

// Dependents take `project.id` (the project id) and `member.id` (the user's UUID), not the output-only
// `projectId` / `userUuid`: in a preview, an updated resource's outputs are its new inputs, so an output that is
// not an input is unknown and would show every dependent as a replacement; ids stay known.
const tags = ["gitops", stack];
const teamDashboard = new posthog.Dashboard("team-overview", {
  projectId: project.id,
  name: "Team overview",
  description: config.get("teamDashboardDescription") ?? "",
  pinned: true,
  tags,
});
const kpis = new posthog.Dashboard("web-kpis", {
  projectId: project.id,
  name: "Web KPIs",
  templateJson: readFileSync(join(__dirname, "dashboards", "web-kpis.json"), "utf8"),
  restrictionLevel: "only-collaborators-can-edit", // or 37
  tags,
});
for (const email of config.requireObject<string[]>("kpiEditors")) {
  const member = members[email];
  if (!member) throw new Error(`kpiEditors: ${email} is not listed under "members" in Pulumi.${stack}.yaml`);
  new posthog.DashboardCollaborator(`kpi-editor-${email}`, {
    projectId: project.id,
    dashboardId: kpis.id,
    userUuid: member.id,
  });
}
// Optional: one "Weekly review" dashboard per squad, all of one name (PostHog allows that; each resource keeps its
// own dashboard). `posthog-gitops:weeklyReviews: 3` declares three. The engine-kill soak uses it for look-alikes.
const weeklyReviews = Array.from(
  { length: config.getNumber("weeklyReviews") ?? 0 },
  (_, i) =>
    new posthog.Dashboard(`weekly-review-${i + 1}`, {
      projectId: project.id,
      name: "Weekly review",
      tags,
    }),
);
const sharing = new posthog.DashboardSharing("web-kpis", {
  projectId: project.id,
  dashboardId: kpis.id,
  enabled: config.getBoolean("publicKpis") ?? false,
});

// --- Data pipeline: the warehouse export, paused outside prod --------------------------------------------
const exportName = config.require("batchExport");
const batchExportId = posthog.getBatchExports().then((all) => {
  const found = all.find((b) => b.name === exportName);
  if (!found) throw new Error(`batchExport: no batch export named "${exportName}" in the organization`);
  return found.id;
});
const exportPause = new posthog.BatchExportPause("warehouse-export", {
  batchExportId,
  paused: config.requireBoolean("pauseBatchExport"),
});

export const dnsRecord = {
  name: domain.challengeRecordName,
  type: "TXT",
  value: domain.verificationChallenge,
};
export const domainVerified = verification.isVerified;
export const projectId = project.projectId;
export const projectApiToken = project.apiToken; // secret
export const dashboards = { teamOverview: teamDashboard.id, webKpis: kpis.id };
export const weeklyReviewDashboards = weeklyReviews.map((d) => d.id);
export const kpiShareToken = sharing.accessToken; // secret
export const batchExportPaused = exportPause.paused;
