/**
 * The program under test: a project with a KPI dashboard editable only by its collaborators (found by e-mail
 * with the `getMemberOutput` lookup), optionally shared by public link, and a batch export kept paused (found
 * by name with `getBatchExportsOutput`). `index.ts` runs it with the stack settings; the tests beside it run
 * it under `pulumi.runtime.setMocks` (program.test.ts) and check its inputs with the providers' `check`
 * (check.test.ts).
 */
import * as posthog from "pulumi-posthog";

/** What the program is given (the stack settings, in index.ts). */
export interface AnalyticsSettings {
  /** The project's name. */
  projectName: string;
  /** E-mails of existing members who may edit the KPI dashboard. */
  kpiEditors: string[];
  /** Share the KPI dashboard by public link. */
  publicKpis: boolean;
  /** Name of a batch export to keep paused, if any. */
  pausedExport?: string;
  /** The PostHog host the public link points at, e.g. https://us.posthog.com. */
  host: string;
}

/** Declares the resources; returns them and the values the stack exports. */
export function analytics(settings: AnalyticsSettings) {
  const project = new posthog.Project("web", { name: settings.projectName });
  const kpis = new posthog.Dashboard("kpis", {
    name: "KPIs",
    projectId: project.id,
    restrictionLevel: 37, // only collaborators can edit
  });
  const dashboardId = kpis.id; // a Dashboard's id connects as it is

  const editors = settings.kpiEditors.map((email) => {
    const member = posthog.getMemberOutput({ email });
    return new posthog.DashboardCollaborator(`kpis-${email}`, {
      dashboardId,
      userUuid: member.userUuid,
      projectId: project.id,
    });
  });

  const sharing = new posthog.DashboardSharing("kpis", {
    dashboardId,
    enabled: settings.publicKpis,
    projectId: project.id,
  });
  // Built from a secret output, so secret too: it never shows in clear in `pulumi stack output`.
  const publicUrl = sharing.accessToken.apply((token) =>
    token === null ? undefined : `${settings.host}/shared/${token}`,
  );

  const pausedExport = settings.pausedExport;
  const pause =
    pausedExport === undefined
      ? undefined
      : new posthog.BatchExportPause("paused-export", {
          batchExportId: posthog.getBatchExportsOutput().apply((all) => {
            const found = all.find((b) => b.name === pausedExport);
            if (!found) throw new Error(`no batch export named "${pausedExport}": check pausedExport`);
            return found.id;
          }),
          paused: true,
        });

  return { project, kpis, editors, sharing, pause, apiToken: project.apiToken, publicUrl };
}
