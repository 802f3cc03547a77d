/**
 * DashboardSharing: public sharing of a dashboard, on or off.
 * API: GET / PATCH `/api/projects/:project_id/dashboards/:dashboard_id/sharing/` (PATCH as the real
 * service has it; the seed shows only GET).
 *
 * The id is the dashboard id. `accessToken` (the token in the public link) is a secret output. Delete turns
 * sharing off.
 */
import { z } from "zod";
import type { Sharing } from "../client";
import { dashboardIdInput } from "../inputs";
import { defineResource, ProjectIdInput, resolveProjectId } from "../lifecycle";

/** Inputs of a DashboardSharing. */
export const DashboardSharingInputsSchema = z.strictObject({
  /** The dashboard's id, as a Dashboard's `id` output is (`dashboardId: kpis.id`) or a number. Changing it replaces. */
  dashboardId: dashboardIdInput("dashboardId"),
  /** Share publicly. Default true. */
  enabled: z.boolean({ error: "expected true or false" }).default(true),
  /** Project id; default: the provider's `posthog:projectId`, else the key's current project. Changing it replaces. */
  projectId: ProjectIdInput.optional(),
});
export type DashboardSharingInputs = z.input<typeof DashboardSharingInputsSchema>;

/** Outputs of a DashboardSharing. */
export interface DashboardSharingOutputs extends Record<string, unknown> {
  dashboardId: number;
  enabled: boolean;
  projectId: string;
  /** The token of the public link (secret); null while sharing is off. */
  accessToken: string | null;
  /** When sharing was first configured (ISO 8601), else null. */
  createdAt: string | null;
}

function toOutputs(s: Sharing, dashboardId: number, projectId: string): DashboardSharingOutputs {
  return {
    dashboardId,
    enabled: s.enabled,
    projectId,
    // Only meaningful while shared: a never-shared dashboard answers a fresh random token on every GET.
    accessToken: s.enabled ? (s.access_token ?? null) : null,
    createdAt: s.created_at ?? null,
  };
}

/** The DashboardSharing provider. */
export const dashboardSharingProvider = defineResource<
  typeof DashboardSharingInputsSchema,
  DashboardSharingOutputs
>({
  name: "DashboardSharing",
  inputs: DashboardSharingInputsSchema,
  identity: (v) =>
    v.dashboardId !== undefined
      ? [
          {
            key: `sharing:${String(v.dashboardId)}`,
            property: "dashboardId",
            object: `the sharing of dashboard ${String(v.dashboardId)}`,
          },
        ]
      : [],
  replaceOnChanges: ["dashboardId", "projectId"],
  async create(api, want) {
    const projectId = await resolveProjectId(api, want.projectId);
    // Read first: sharing already as declared (an exported organization's first up) is taken as it is, with
    // no write; otherwise one PATCH.
    const live = await api.sharing.retrieve({ projectId, dashboardId: want.dashboardId });
    const s =
      live.enabled === want.enabled
        ? live
        : await api.sharing.update({
            projectId,
            dashboardId: want.dashboardId,
            body: { enabled: want.enabled },
          });
    return { id: String(want.dashboardId), outs: toOutputs(s, want.dashboardId, projectId) };
  },
  async read(api, id, props) {
    const projectId = props.projectId ?? (await resolveProjectId(api));
    return toOutputs(
      await api.sharing.retrieve({ projectId, dashboardId: Number(id) }),
      Number(id),
      projectId,
    );
  },
  async update(api, id, olds, want) {
    const projectId = olds.projectId ?? (await resolveProjectId(api, want.projectId));
    const s = await api.sharing.update({
      projectId,
      dashboardId: Number(id),
      body: { enabled: want.enabled },
    });
    return toOutputs(s, Number(id), projectId);
  },
  async delete(api, id, props) {
    const projectId = props.projectId ?? (await resolveProjectId(api));
    await api.sharing.update({ projectId, dashboardId: Number(id), body: { enabled: false } });
  },
});
