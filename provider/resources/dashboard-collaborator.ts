/**
 * DashboardCollaborator: gives a user edit access to a dashboard whose restriction level is 37 (only
 * The whole description is the card's (`dashboardCollaborator.card.description`), which schema.json and the SDK class take.
 */
import { z } from "zod";
import {
  AmbiguousWriteError,
  type Collaborator,
  isObjectGone,
  NotFoundError,
  ValidationError,
} from "../client";
import type { Adopted } from "../framework/bookkeeping";
import { resource, UUID } from "../framework/card";
import { call, ref, res } from "../framework/examples";
import { dashboardIdInput, ProjectIdInput, resolveProjectId } from "../framework/inputs";
import { madeFromScratch, noteMadeFromScratch } from "../framework/lost-create";

/** Inputs of a DashboardCollaborator. */
export const DashboardCollaboratorInputsSchema = z.strictObject({
  /** The dashboard's id, as a Dashboard's `id` output is (`dashboardId: kpis.id`) or a number. */
  dashboardId: dashboardIdInput("dashboardId"),
  /** The collaborator's user UUID (e.g. from `getMember`). */
  userUuid: z.uuid({ error: "expected a user UUID" }),
  /** Access level: 37 (can edit), the only level PostHog accepts. Default 37. */
  level: z.literal(37, { error: "expected 37 (can edit): the only level PostHog accepts" }).default(37),
  /** Project id; default: the provider's `posthog:projectId`, else the key's current project. */
  projectId: ProjectIdInput.optional(),
});
export type DashboardCollaboratorInputs = z.input<typeof DashboardCollaboratorInputsSchema>;
type In = z.output<typeof DashboardCollaboratorInputsSchema>;

/**
 * Outputs of a DashboardCollaborator, as create and read return them. `required` in the package schema: neither
 * optional nor nullable. Each property's comment is its documentation (schema.json, the SDK class, docs/resources).
 */
export const DashboardCollaboratorOutputsSchema = z.object({
  /** The dashboard's id. */
  dashboardId: z.int(),
  /** The collaborator's user UUID. */
  userUuid: z.string(),
  /** The access level: 37 (can edit). */
  level: z.int(),
  /** The project of the dashboard: its id, a string of digits. */
  projectId: z.string(),
  /** The collaborator's e-mail address. */
  email: z.string(),
  /** When the collaborator was added (ISO 8601). */
  addedAt: z.string().nullable(),
});

/** Outputs of a DashboardCollaborator. */
export type DashboardCollaboratorOutputs = z.infer<typeof DashboardCollaboratorOutputsSchema> &
  Adopted &
  Record<string, unknown>;

/** The outputs of collaborator `c`; `adopted` as recorded (true: imported, kept on destroy). */
function toOutputs(
  c: Collaborator,
  want: Pick<In, "dashboardId">,
  projectId: string,
  adopted?: boolean,
): DashboardCollaboratorOutputs {
  return {
    dashboardId: c.dashboard_id ?? want.dashboardId,
    userUuid: c.user.uuid,
    level: c.level,
    projectId,
    email: c.user.email,
    addedAt: c.added_at ?? null,
    ...(adopted !== undefined ? { adopted } : {}),
  };
}

/** Splits `<dashboardId>/<userUuid>`. */
function parseId(id: string): { dashboardId: number; userUuid: string } {
  const [dashboardId, userUuid] = id.split("/");
  return { dashboardId: Number(dashboardId), userUuid: userUuid ?? "" };
}

/** The DashboardCollaborator provider (no update: every change replaces). */
/** The DashboardCollaborator resource: its card (everything about it) and its provider. */
export const dashboardCollaborator = resource<
  typeof DashboardCollaboratorInputsSchema,
  DashboardCollaboratorOutputs,
  "DashboardCollaborator",
  typeof DashboardCollaboratorOutputsSchema
>({
  name: "DashboardCollaborator",
  troubleshooting: "dashboardcollaborator",
  summary: [
    "Edit access for one user on a dashboard with restriction level 37 (type",
    "`pulumi-nodejs:dynamic/posthog:DashboardCollaborator`, id `<dashboardId>/<userUuid>`). An existing",
    "collaborator is adopted; every change replaces.",
  ].join("\n"),
  examples: {
    typescript: [
      'import * as posthog from "pulumi-posthog";',
      "",
      'const kpis = new posthog.Dashboard("kpis", { name: "KPIs", restrictionLevel: 37 });',
      'const mia = new posthog.Member("mia", { email: "mia@example.com", level: "member", retainOnDelete: true });',
      "",
      "// A Dashboard's id connects as it is; a Member's id is the user UUID.",
      'new posthog.DashboardCollaborator("mia-kpis", { dashboardId: kpis.id, userUuid: mia.id });',
    ],
    program: {
      statements: [
        res("Dashboard", "kpis", { name: "KPIs", restrictionLevel: "only-collaborators-can-edit" }),
        call("getMember", "mia", { email: "mia.member@example.com" }),
        res("DashboardCollaborator", "mia-kpis", {
          dashboardId: ref("kpis"),
          userUuid: ref("mia", "userUuid"),
        }),
      ],
      outputs: { collaboratorEmail: ref("mia-kpis", "email") },
    },
  },
  resolvedInputs: ["projectId"],
  description: [
    "DashboardCollaborator: gives a user edit access to a dashboard whose restriction level is 37 (only",
    "collaborators can edit).",
    "API: `/api/projects/:project_id/dashboards/:dashboard_id/collaborators/` (GET list, POST add,",
    "DELETE `:user__uuid/`).",
    "",
    "The id is `<dashboardId>/<userUuid>`. The level is always 37 (the only one PostHog accepts); there is no",
    "update, every change replaces. Adding a user who already is a collaborator adopts them (no error, no",
    "duplicate). When the dashboard's restriction level does not allow collaborators, create fails with a",
    "clear error saying to set `restrictionLevel: 37` on the Dashboard. A collaborator taken in by `pulumi import`",
    "(`adopted: true`) is left as found on destroy; any other is removed.",
  ].join("\n"),
  outputs: DashboardCollaboratorOutputsSchema,
  secretOutputs: [],
  exclusiveInputs: [],
  importId: {
    form: "<projectId>/<dashboardId>/<userUuid>",
    pattern: new RegExp(`^(\\d+)/(\\d+)/(${UUID})$`),
    parse: (m) => ({ id: `${m[2]}/${m[3]}`, props: { projectId: m[1] } }),
    object: (m) => `DashboardCollaborator ${m[3]} of dashboard ${m[2]} of project ${m[1]}`,
    why: () => "That user is not a collaborator of the dashboard, or the dashboard does not exist",
  },
  adoption: "never" /* a user who already is a collaborator is taken over, not announced */,
  records: { adopted: true },
  inputs: DashboardCollaboratorInputsSchema,
  // Dashboard ids are unique across projects: the dashboard and the user name the collaborator.
  identity: (v) =>
    v.dashboardId !== undefined && typeof v.userUuid === "string"
      ? [
          {
            key: `collaborator:${String(v.dashboardId)}/${v.userUuid.toLowerCase()}`,
            property: "userUuid",
            object: `the collaborator ${v.userUuid} of dashboard ${String(v.dashboardId)}`,
          },
        ]
      : [],
  async create(api, want, ctx) {
    const projectId = await resolveProjectId(api, want.projectId);
    const where = { projectId, dashboardId: want.dashboardId, userUuid: want.userUuid };
    const id = `${want.dashboardId}/${want.userUuid}`;
    // Read first: a user who already is a collaborator (an exported organization's first up) is adopted with no
    // write; PostHog would refuse the add with a 400 anyway. Not on a dashboard this run made from nothing, to
    // which this run has not added the user yet: it cannot have them (one request instead of two), and should
    // someone add them meanwhile, PostHog's 400 "already" adopts them below.
    const fresh = (type: string, of: string) => madeFromScratch(ctx.creates, type, of);
    if (!fresh("Dashboard", String(want.dashboardId)) || fresh("DashboardCollaborator", id)) {
      const existing = await api.collaborators.find(where);
      if (existing) return { id, outs: toOutputs(existing, want, projectId) };
    }
    try {
      const c = await api.collaborators.add({
        ...where,
        body: { level: want.level, user_uuid: want.userUuid },
      });
      // Added from nothing by this run: a later create of it in the run reads first.
      noteMadeFromScratch(ctx.creates, "DashboardCollaborator", id);
      return { id, outs: toOutputs(c, want, projectId) };
    } catch (e) {
      // Already a collaborator (or an add whose answer was lost): adopt it.
      if (
        e instanceof AmbiguousWriteError ||
        (e instanceof ValidationError && /already/i.test(e.detail ?? ""))
      ) {
        const c = await api.collaborators.find(where);
        if (c) return { id, outs: toOutputs(c, want, projectId) };
      }
      if (e instanceof ValidationError && /restriction level/i.test(e.detail ?? "")) {
        throw new Error(
          `Dashboard ${want.dashboardId} does not allow collaborators: its restriction level lets everyone in the ` +
            "project edit. Set restrictionLevel: 37 on the Dashboard (needs PostHog's advanced permissions) " +
            `(server: ${e.detail})`,
          { cause: e },
        );
      }
      if (e instanceof ValidationError && /inherent access/i.test(e.detail ?? "")) {
        throw new Error(
          `User ${want.userUuid} can already edit dashboard ${want.dashboardId} (its creator or a project admin), ` +
            `so PostHog refuses them as a collaborator: remove this DashboardCollaborator (server: ${e.detail})`,
          { cause: e },
        );
      }
      throw e;
    }
  },
  async read(api, id, props) {
    const old = props;
    const { dashboardId, userUuid } = parseId(id);
    const projectId = old.projectId ?? (await resolveProjectId(api));
    let c: Collaborator | undefined;
    try {
      c = await api.collaborators.find({ projectId, dashboardId, userUuid });
    } catch (e) {
      // The list could not be read (a 404 of the list says nothing of the collaborator): the collaborator is gone
      // only when its dashboard's own GET says the dashboard is; otherwise the failure stands and the state is kept.
      if (!(e instanceof NotFoundError)) throw e;
      const dashboardGone = await api.dashboards.retrieve({ projectId, id: dashboardId }).then(
        () => false,
        (d: unknown) => (isObjectGone(d) ? true : Promise.reject(e)),
      );
      if (dashboardGone) return undefined;
      throw e;
    }
    return c ? toOutputs(c, { dashboardId }, projectId, old.adopted) : undefined;
  },
  async delete(api, id, props) {
    const old = props;
    const { dashboardId, userUuid } = parseId(id);
    if (old.adopted === true) {
      // Imported: it existed before Pulumi, so it is left as found (docs/how-it-works/adoption.md, "What destroy does").
      console.log(
        `warning: destroy kept the collaborator ${old.email ?? userUuid} of dashboard ${dashboardId}: it was ` +
          "imported, and imported objects are left as they were found. Remove them in PostHog if needed.",
      );
      return;
    }
    try {
      await api.collaborators.remove({
        projectId: old.projectId ?? (await resolveProjectId(api)),
        dashboardId,
        userUuid,
      });
    } catch (e) {
      // The dashboard went back to "everyone can edit": the collaborator grants nothing any more.
      if (e instanceof ValidationError && /restriction level/i.test(e.detail ?? "")) return;
      throw e;
    }
  },
});
