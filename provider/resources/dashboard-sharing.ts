/**
 * DashboardSharing: public sharing of a dashboard, on or off.
 * The whole description is the card's (`dashboardSharing.card.description`), which schema.json and the SDK class take.
 */
import { z } from "zod";
import type { Sharing } from "../client";
import { resource } from "../framework/card";
import { ref, res } from "../framework/examples";
import { dashboardIdInput, ProjectIdInput, resolveProjectId } from "../framework/inputs";
import { creatingFacts, plannedFacts } from "../framework/policy-facts";

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

/**
 * Outputs of a DashboardSharing, as create, read and update return them. `required` in the package schema: neither
 * optional nor nullable. Each property's comment is its documentation (schema.json, the SDK class, docs/resources).
 */
export const DashboardSharingOutputsSchema = z.object({
  /** The dashboard's id (also the resource id). */
  dashboardId: z.int(),
  /** Whether public sharing is on. */
  enabled: z.boolean(),
  /** The project of the dashboard: its id, a string of digits. */
  projectId: z.string(),
  /** The token of the public link (secret); null while sharing is off. */
  accessToken: z.string().nullable(),
  /** When sharing was first configured (ISO 8601), else null. */
  createdAt: z.string().nullable(),
  /**
   * Whether public sharing was on when this resource took it over (its create or `pulumi import` read it): delete
   * sets it back. Absent in state written before it existed: delete then turns sharing off.
   */
  enabledBefore: z.boolean().optional(),
});

/** Outputs of a DashboardSharing. */
export type DashboardSharingOutputs = z.infer<typeof DashboardSharingOutputsSchema> & Record<string, unknown>;

/** The outputs of sharing `s`; `enabledBefore` as recorded when this resource took it over (undefined: unknown). */
function toOutputs(
  s: Sharing,
  dashboardId: number,
  projectId: string,
  enabledBefore: boolean | undefined,
): DashboardSharingOutputs {
  return {
    dashboardId,
    enabled: s.enabled,
    projectId,
    // Only meaningful while shared: a never-shared dashboard answers a fresh random token on every GET.
    accessToken: s.enabled ? (s.access_token ?? null) : null,
    createdAt: s.created_at ?? null,
    ...(enabledBefore !== undefined ? { enabledBefore } : {}),
  };
}

/** The DashboardSharing resource: its card (everything about it) and its provider. */
export const dashboardSharing = resource<
  typeof DashboardSharingInputsSchema,
  DashboardSharingOutputs,
  "DashboardSharing",
  typeof DashboardSharingOutputsSchema
>({
  name: "DashboardSharing",
  summary: [
    "Public sharing of a dashboard on or off (type `pulumi-nodejs:dynamic/posthog:DashboardSharing`, id = the",
    "dashboard id). `accessToken` is secret. Delete turns sharing off.",
  ].join("\n"),
  examples: {
    typescript: [
      'import * as posthog from "pulumi-posthog";',
      "",
      'const kpis = new posthog.Dashboard("kpis", { name: "KPIs" });',
      'const share = new posthog.DashboardSharing("kpis", { dashboardId: kpis.id, enabled: true });',
      "",
      "export const shareToken = share.accessToken; // secret",
    ],
    program: {
      statements: [
        res("Dashboard", "kpis", { name: "KPIs" }),
        res("DashboardSharing", "kpis-sharing", { dashboardId: ref("kpis"), enabled: true }),
      ],
      outputs: { shareToken: ref("kpis-sharing", "accessToken") },
    },
  },
  resolvedInputs: ["projectId"],
  description: [
    "DashboardSharing: public sharing of a dashboard, on or off.",
    "API: GET / PATCH `/api/projects/:project_id/dashboards/:dashboard_id/sharing/`.",
    "",
    "The id is the dashboard id. `accessToken` (the token in the public link) is a secret output. Create (and",
    "`pulumi import`) records the sharing found (`enabledBefore`); delete sets it back to that, with no write when it",
    "is so already: sharing that existed before Pulumi stays as found. State written before `enabledBefore` existed:",
    "delete turns sharing off, as it did then.",
  ].join("\n"),
  outputs: DashboardSharingOutputsSchema,
  secretOutputs: ["accessToken"],
  exclusiveInputs: [],
  importId: {
    form: "<projectId>/<dashboardId>",
    pattern: /^(\d+)\/(\d+)$/,
    parse: (m) => ({ id: m[2] ?? "", props: { projectId: m[1] } }),
    object: (m) => `DashboardSharing of dashboard ${m[2]} of project ${m[1]}`,
    why: () =>
      "PostHog answers 404 for its dashboard: there is no dashboard of that id, or it is soft-deleted",
  },
  adoption: "never" /* the sharing found is taken as it is (enabledBefore), not announced */,
  records: { adopted: false, found: { found: "enabledBefore", from: "enabled" } },
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
  // The policy pack judges a public sharing by its dashboard's name and tags (posthog-sharing-allow-list), before
  // the write: what this run leaves the dashboard with, when the program declares it. In a preview of a dashboard the
  // run creates (its id unknown), the dashboards the run creates, one of which it is. No request: a dashboard the
  // program does not declare is known to the pack by its id alone.
  policyFacts(want, facts) {
    const id = want.dashboardId;
    if (typeof id !== "number") {
      const candidates = Object.values(creatingFacts(facts, "Dashboard"));
      return candidates.length > 0 ? { candidates } : undefined;
    }
    const planned = plannedFacts(facts, "Dashboard", String(id));
    return planned === undefined ? undefined : { dashboard: { id, ...planned } };
  },
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
    return { id: String(want.dashboardId), outs: toOutputs(s, want.dashboardId, projectId, live.enabled) };
  },
  async read(api, id, props) {
    const projectId = props.projectId ?? (await resolveProjectId(api));
    return toOutputs(
      await api.sharing.retrieve({ projectId, dashboardId: Number(id) }),
      Number(id),
      projectId,
      props.enabledBefore,
    );
  },
  async update(api, id, olds, want) {
    const projectId = olds.projectId ?? (await resolveProjectId(api, want.projectId));
    const s = await api.sharing.update({
      projectId,
      dashboardId: Number(id),
      body: { enabled: want.enabled },
    });
    return toOutputs(s, Number(id), projectId, olds.enabledBefore);
  },
  async delete(api, id, props) {
    const projectId = props.projectId ?? (await resolveProjectId(api));
    const where = { projectId, dashboardId: Number(id) };
    // State written before `enabledBefore` existed: sharing off, as destroy did then.
    const before = props.enabledBefore ?? false;
    // The state says this resource changed it: one PATCH sets it back (what the sharing was when taken over).
    if (props.enabled !== before || props.enabledBefore === undefined) {
      await api.sharing.update({ ...where, body: { enabled: before } });
      return;
    }
    // As found, says the state (imported, or adopted as declared): one GET, and a PATCH only if it changed since.
    const live = await api.sharing.retrieve(where);
    if (live.enabled !== before) await api.sharing.update({ ...where, body: { enabled: before } });
  },
});
