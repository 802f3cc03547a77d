/**
 * Dashboard: a dashboard of a project.
 * The whole description is the card's (`dashboard.card.description`), which schema.json and the SDK class take.
 */
import { z } from "zod";
import { type Dashboard, type DashboardBody, isObjectGone, type PostHogClient } from "../client";
import { keptOnDestroy } from "../framework/adopted";
import { known } from "../framework/adoption";
import type { Adopted } from "../framework/bookkeeping";
import { resource } from "../framework/card";
import { ref, res } from "../framework/examples";
import { dashboardIdInput, exclusive, ProjectIdInput, resolveProjectId } from "../framework/inputs";
import { listedOrRetrieved } from "../framework/lifecycle";
import {
  type CreateOperation,
  type JournalContext,
  journalContext,
  type LostObjectKind,
  type ProvisionalCreate,
  provisionalCreate,
} from "../framework/lost-create";

/**
 * The longest dashboard name PostHog stores (its model's `varchar(400)`), in characters; the provisional name of a
 * create's dashboard is kept within it (provider/framework/lost-create.ts, `provisionalName`).
 */
const NAME_LIMIT = 400;

/**
 * What reportLostObjects (provider/framework/lost-create.ts) needs to name a dashboard that a create with an unknown
 * outcome made and no resource holds (the card's `lostObjects`).
 */
const lostDashboards: LostObjectKind = {
  list: (api, scope) => api.dashboards.all({ projectId: scope }),
  adoptInput: "dashboardId",
  deleteCommand: (host, _organization, scope, id) =>
    `curl -X PATCH -H "Authorization: Bearer $POSTHOG_API_KEY" -H "Content-Type: application/json" ` +
    `-d '{"deleted": true}' ${host}/api/projects/${scope}/dashboards/${id}/ (a soft delete, as destroy does)`,
};

/** A tile of template JSON: `{type: "INSIGHT", name, description, query, layouts, color}` or `{type: "TEXT", body, …}`. */
const TemplateTileSchema = z
  .looseObject({
    /** "INSIGHT" or "TEXT" (older templates: lowercase); PostHog skips tiles of other types. */
    type: z.string({ error: 'expected a tile type such as "INSIGHT" or "TEXT"' }),
    // name, description, body and layouts may be null: PostHog's own "save as template" writes null for an
    // unnamed insight, and create_from_template reads them with `.get()` (posthog/helpers/dashboard_templates.py).
    name: z.string({ error: "expected a string or null" }).nullable().optional(),
    description: z.string({ error: "expected a string or null" }).nullable().optional(),
    /** The text of a TEXT tile (at most 4,000 characters). */
    body: z.string({ error: "expected a string or null" }).nullable().optional(),
    query: z.unknown().optional(),
    layouts: z
      .record(z.string(), z.unknown(), { error: "expected an object of layouts or null" })
      .nullable()
      .optional(),
    color: z.string({ error: "expected a string or null" }).nullable().optional(),
  })
  .superRefine((tile, ctx) => {
    if (tile.type.toUpperCase() === "TEXT" && typeof tile.body === "string" && tile.body.length > 4000) {
      ctx.addIssue({
        code: "custom",
        path: ["body"],
        message: "expected a text tile body of at most 4,000 characters",
      });
    }
  });

/**
 * What `create_from_template_json` requires of a template (PostHog's `dashboard_template_schema.json`):
 * `template_name`, `dashboard_description`, `dashboard_filters` and at least one tile; optional `variables`,
 * `tags`, `image_url`, `id`, `team_id`, `created_at`, `is_featured`. Other keys pass as they are.
 */
export const DashboardTemplateJsonSchema = z.looseObject({
  template_name: z.string({ error: "required: the template's name (a string)" }),
  dashboard_description: z.string({ error: 'required: a string (it may be "")' }),
  dashboard_filters: z.record(z.string(), z.unknown(), {
    error: "required: an object of dashboard filters (it may be {})",
  }),
  tiles: z
    .array(TemplateTileSchema, { error: "required: a list of at least one tile" })
    .min(1, { error: "required: a list of at least one tile" }),
  variables: z
    .array(
      z.looseObject({
        id: z.string({ error: "expected a string" }),
        name: z.string({ error: "expected a string" }),
        type: z.enum(["event", "element"], { error: 'expected "event" or "element"' }),
        default: z.record(z.string(), z.unknown(), { error: "expected an object" }),
        description: z.string({ error: "expected a string" }),
        required: z.boolean({ error: "expected true or false" }),
      }),
      { error: "expected a list of variables or null" },
    )
    .nullable()
    .optional(),
  tags: z.array(z.string({ error: "expected a string" }), { error: "expected a list of strings" }).optional(),
  image_url: z.string({ error: "expected a string or null" }).nullable().optional(),
  id: z.string({ error: "expected a string" }).optional(),
  team_id: z.number({ error: "expected an integer or null" }).int().nullable().optional(),
  created_at: z.string({ error: "expected a string or null" }).nullable().optional(),
  is_featured: z.boolean({ error: "expected true or false" }).optional(),
});

/** The names of the restriction levels, as `restrictionLevel` accepts them beside the numbers. */
export const RESTRICTION_LEVELS = { "everyone-can-edit": 21, "only-collaborators-can-edit": 37 } as const;

/** A restriction level: 21 / 37 or its name ({@link RESTRICTION_LEVELS}); parsed to the number. */
const RestrictionLevelInput = z
  .union([z.literal([21, 37]), z.enum(["everyone-can-edit", "only-collaborators-can-edit"])], {
    error:
      'expected 21 or "everyone-can-edit" (everyone in the project can edit), or 37 or ' +
      '"only-collaborators-can-edit" (only collaborators can edit)',
  })
  .transform((v): 21 | 37 => (typeof v === "number" ? v : RESTRICTION_LEVELS[v]));

/**
 * The mutually exclusive inputs of a Dashboard: how it is made (checked by the schema, unions in the SDK's
 * DashboardArgs).
 */
export const DashboardExclusiveInputs = [
  { kind: "atMostOne", keys: ["useTemplate", "useDashboard", "templateJson", "dashboardId"] },
] as const;

/** Inputs of a Dashboard. */
export const DashboardInputsSchema = z
  .strictObject({
    /** Dashboard name (1..400 characters). */
    name: z
      .string({ error: "expected a dashboard name (1..400 characters)" })
      .min(1, { error: "expected a dashboard name (1..400 characters)" })
      .max(400, { error: "expected a dashboard name (1..400 characters)" }),
    /** Description (no length limit beyond the API's 1 MiB request body). Default "". */
    description: z.string({ error: "expected a string" }).default(""),
    /** Pin the dashboard in the sidebar. Default false. */
    pinned: z.boolean({ error: "expected true or false" }).default(false),
    /** Tags, each at most 255 characters. Default []. */
    tags: z
      .array(
        z
          .string({ error: "expected a tag (a string)" })
          .max(255, { error: "expected a tag of at most 255 characters" }),
        { error: "expected a list of strings" },
      )
      .default([]),
    /**
     * Who may edit: 21 or "everyone-can-edit" = everyone in the project (default), 37 or
     * "only-collaborators-can-edit" = only collaborators. The output is the number.
     */
    restrictionLevel: RestrictionLevelInput.default(21),
    /** Project id; default: the provider's `posthog:projectId`, else the key's current project. Changing it replaces. */
    projectId: ProjectIdInput.optional(),
    /** Create from this template key (e.g. "DEFAULT_APP"). Create-only: changing it replaces. */
    useTemplate: z.string().min(1, { error: "expected a template key such as DEFAULT_APP" }).optional(),
    /**
     * Create as a duplicate of this dashboard (its id, e.g. `other.id`; same project). Create-only: changing it
     * replaces.
     */
    useDashboard: dashboardIdInput("useDashboard").optional(),
    /**
     * Create from template JSON, as an object or a JSON string (e.g. the text of `dashboards/kpis.json` in your
     * repository): `{template_name, dashboard_description, dashboard_filters, tiles: [{type: "INSIGHT" | "TEXT",
     * …}, …]}`, the four required, at least one tile (PostHog's dashboard template schema). Create-only.
     */
    templateJson: z
      .union([z.string(), z.record(z.string(), z.unknown())], {
        error: "expected template JSON: an object or a JSON string",
      })
      .transform((v, ctx) => {
        if (typeof v !== "string") return v;
        try {
          const parsed: unknown = JSON.parse(v);
          if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
            return parsed as Record<string, unknown>;
        } catch {
          // reported below
        }
        ctx.addIssue({ code: "custom", message: "expected template JSON: a JSON object" });
        return z.NEVER;
      })
      .pipe(DashboardTemplateJsonSchema)
      .optional(),
    /**
     * Adopt this existing dashboard (its id: a number, or a string of its digits) instead of creating one.
     * Changing it replaces. An adopted dashboard is kept on destroy unless `deleteAdoptedOnDestroy` is true.
     */
    dashboardId: dashboardIdInput("dashboardId").optional(),
    /**
     * Soft-delete the dashboard on destroy even though it was adopted (`dashboardId`). Default: an adopted
     * dashboard is left as it was found (a dashboard this resource created is always soft-deleted on destroy).
     */
    deleteAdoptedOnDestroy: z.boolean({ error: "expected true or false" }).optional(),
    /** On delete, also soft-delete the insights that are only on this dashboard. Default false. */
    deleteInsights: z.boolean({ error: "expected true or false" }).default(false),
  })
  .superRefine(exclusive(DashboardExclusiveInputs));
export type DashboardInputs = z.input<typeof DashboardInputsSchema>;
type In = z.output<typeof DashboardInputsSchema>;

/**
 * Outputs of a Dashboard, as create, read and update return them: its settings as PostHog holds them, the
 * create-only inputs as declared, and the server's fields. `required` in the package schema: neither optional nor
 * nullable. Each property's comment is its documentation (schema.json, the SDK class, docs/resources).
 */
export const DashboardOutputsSchema = z.object({
  /** The dashboard name. */
  name: z.string(),
  /** The description; "" when none. */
  description: z.string(),
  /** Whether it is pinned in the sidebar. */
  pinned: z.boolean(),
  /** The tags. */
  tags: z.array(z.string()),
  /** Who may edit: 21 everyone in the project, 37 only collaborators (as declared). */
  // Read leniently: PostHog knows 21 and 37 today; a level it adds later must not fail a refresh.
  restrictionLevel: z.int(),
  /** The project the dashboard lives in: its id, a string of digits. */
  projectId: z.string(),
  /** As declared: the template key it was created from. */
  useTemplate: z.string().optional(),
  /** As declared: the id of the dashboard it was created as a duplicate of. */
  useDashboard: z.int().optional(),
  /** As declared: the template JSON it was created from, as an object. */
  templateJson: z.record(z.string(), z.unknown()).optional(),
  /** As declared: the id of the existing dashboard this resource adopted. */
  dashboardId: z.int().optional(),
  /** As declared: soft-delete the adopted dashboard on destroy. */
  deleteAdoptedOnDestroy: z.boolean().optional(),
  /** Whether delete also soft-deletes the insights that are only on this dashboard. */
  deleteInsights: z.boolean(),
  /** True when someone soft-deleted the dashboard outside Pulumi (seen by a refresh); the next up restores it. */
  deleted: z.boolean(),
  /** How it was created: "default", "template" or "duplicate". */
  creationMode: z.string().nullable(),
  /**
   * The restriction level in force: 21 when the organization lacks PostHog's advanced permissions, whatever is
   * declared.
   */
  effectiveRestrictionLevel: z.int().nullable(),
  /** Whether public sharing is on. */
  isShared: z.boolean(),
  /** When the dashboard was created (ISO 8601). */
  createdAt: z.string().nullable(),
});

/** Outputs of a Dashboard. */
export type DashboardOutputs = z.infer<typeof DashboardOutputsSchema> & Adopted & Record<string, unknown>;

const CREATE_ONLY = ["useTemplate", "useDashboard", "templateJson", "dashboardId"] as const;

/**
 * Outputs of live dashboard `d`; `want` gives the declared (or recorded) create-only inputs and
 * `deleteAdoptedOnDestroy`, `adopted` whether this resource adopted it (undefined: unknown, old state).
 */
function toOutputs(
  d: Dashboard,
  projectId: string,
  want: In | DashboardOutputs,
  adopted: boolean | undefined,
): DashboardOutputs {
  const outs: DashboardOutputs = {
    name: d.name ?? "",
    description: d.description ?? "",
    pinned: d.pinned ?? false,
    tags: (d.tags ?? []).map(String),
    restrictionLevel: d.restriction_level ?? 21,
    projectId,
    deleteInsights: want.deleteInsights,
    deleted: d.deleted === true,
    creationMode: d.creation_mode ?? null,
    effectiveRestrictionLevel: d.effective_restriction_level ?? null,
    isShared: d.is_shared ?? false,
    createdAt: d.created_at ?? null,
  };
  for (const k of CREATE_ONLY) if (want[k] !== undefined) (outs as Record<string, unknown>)[k] = want[k];
  if (adopted !== undefined) outs.adopted = adopted;
  if (want.deleteAdoptedOnDestroy !== undefined) outs.deleteAdoptedOnDestroy = want.deleteAdoptedOnDestroy;
  return outs;
}

/** Whether two tag lists hold the same tags, in any order. */
function sameTags(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const sa = [...new Set(a ?? [])].sort();
  const sb = [...new Set(b ?? [])].sort();
  return sa.length === sb.length && sa.every((t, i) => t === sb[i]);
}

/** The PATCH body converging `live` to `want` (restoring it when soft-deleted). */
function convergeBody(
  want: In,
  live: Partial<DashboardOutputs> | undefined,
  restore: boolean,
): DashboardBody {
  const body: DashboardBody = {};
  if (restore) body.deleted = false;
  if (live?.name !== want.name) body.name = want.name;
  if (live?.description !== want.description) body.description = want.description;
  if (live?.pinned !== want.pinned) body.pinned = want.pinned;
  if (!sameTags(live?.tags, want.tags)) body.tags = want.tags;
  if ((live?.restrictionLevel ?? 21) !== want.restrictionLevel)
    body.restriction_level = want.restrictionLevel;
  return body;
}

async function patch(
  api: PostHogClient,
  projectId: string,
  id: number,
  body: DashboardBody,
): Promise<Dashboard> {
  return api.dashboards.update({ projectId, id, body });
}

/** The Dashboard resource: its card (everything about it) and its provider. */
export const dashboard = resource<
  typeof DashboardInputsSchema,
  DashboardOutputs,
  "Dashboard",
  typeof DashboardOutputsSchema
>({
  name: "Dashboard",
  troubleshooting: "dashboard",
  summary: [
    "A dashboard (type `pulumi-nodejs:dynamic/posthog:Dashboard`): plain, from a template key (`useTemplate`),",
    "a duplicate (`useDashboard`) or template JSON (`templateJson`). Delete is a soft delete; a dashboard",
    "soft-deleted outside Pulumi is restored by the next `up`. Adopt an existing one with `dashboardId`.",
  ].join("\n"),
  examples: {
    typescript: [
      'import * as fs from "node:fs";',
      'import * as posthog from "pulumi-posthog";',
      "",
      'const kpis = new posthog.Dashboard("kpis", {',
      '  name: "KPIs",',
      '  templateJson: fs.readFileSync("dashboards/kpis.json", "utf8"),',
      '  restrictionLevel: "only-collaborators-can-edit", // or 37',
      '  tags: ["kpi"],',
      "});",
      'new posthog.Dashboard("app", { name: "App", useTemplate: "DEFAULT_APP" });',
      'new posthog.Dashboard("legacy", { name: "Legacy", dashboardId: 42 }); // adopt an existing one',
      "",
      "export const kpisId = kpis.id;",
    ],
    program: {
      statements: [
        res("Project", "web", { name: "Web" }),
        res("Dashboard", "kpis", { name: "KPIs", projectId: ref("web"), pinned: true, tags: ["kpi"] }),
      ],
      outputs: { kpisId: ref("kpis") },
    },
  },
  resolvedInputs: ["projectId"],
  idInput: "dashboardId",
  description: [
    "Dashboard: a dashboard of a project.",
    "API: `/api/projects/:project_id/dashboards/` (POST create, GET/PATCH `:id/`, POST `create_from_template_json/`).",
    "",
    "- Created plain, from a template key (`useTemplate`), as a duplicate of another dashboard (`useDashboard`),",
    "  or from template JSON (`templateJson`, e.g. a file in your repository). These are create-only: changing",
    "  them replaces the dashboard. Updates are one PATCH.",
    '- Delete is a soft delete, `PATCH {"deleted": true}` (with `delete_insights` when `deleteInsights`), never an',
    "  HTTP DELETE (the API refuses it).",
    "- A dashboard soft-deleted outside Pulumi reads as `deleted: true` (PostHog answers 404 for it, and it can",
    '  never be hard-deleted); the next `up` restores it with `PATCH {"deleted": false}`, same id, no duplicate.',
    "- Adoption: `dashboardId` takes over an existing dashboard (restoring it if soft-deleted) and converges it.",
  ].join("\n"),
  outputs: DashboardOutputsSchema,
  secretOutputs: [],
  exclusiveInputs: DashboardExclusiveInputs,
  importId: {
    form: "<projectId>/<dashboardId>",
    pattern: /^(\d+)\/(\d+)$/,
    parse: (m) => ({ id: m[2] ?? "", props: { projectId: m[1] } }),
    object: (m) => `Dashboard ${m[2]} of project ${m[1]}`,
    why: (m) =>
      "PostHog answers 404 for it: there is no dashboard of that id, or it is soft-deleted (a Dashboard declared " +
      `with dashboardId: ${m[2]} takes a soft-deleted one over and restores it)`,
  },
  adoption: {
    // With `dashboardId`: GET `/api/projects/:project_id/dashboards/:id/` (a soft-deleted one answers 404).
    async probe(api, inputs) {
      if (!known(inputs.dashboardId)) return undefined;
      const projectId = known(inputs.projectId) ? String(inputs.projectId) : undefined;
      const id = Number(inputs.dashboardId);
      try {
        const d = await api.dashboards.retrieve({ projectId, id });
        return { kind: "dashboard", id: String(d.id), name: d.name ?? "", by: "dashboardId" };
      } catch {
        return undefined;
      }
    },
  },
  records: { adopted: true },
  lostObjects: lostDashboards,
  inputs: DashboardInputsSchema,
  replaceOnChanges: ["projectId", ...CREATE_ONLY],
  // From template JSON the template is posted alone, then the other settings are PATCHed.
  requestBodies: (d) =>
    d.templateJson !== undefined
      ? [["templateJson"], ["name", "description", "pinned", "tags", "restrictionLevel"]]
      : [["name", "description", "pinned", "tags", "restrictionLevel", "useTemplate", "useDashboard"]],
  // The plan after a refresh names a soft-deleted dashboard's restore: `~ update [diff: -deleted]`.
  driftShown: (o) => (o.deleted === true ? { deleted: true } : undefined),
  // A DashboardSharing's policy is judged by its dashboard's name and tags (provider/framework/policy-facts.ts).
  factsOf: (v) => ({ name: v.name, tags: v.tags }),
  // A soft-deleted dashboard must be restored: that is a change even when every input matches.
  changes(olds, news, changed) {
    // Tags are a set: the server may answer them in another order.
    const kept = changed.filter((k) => !(k === "tags" && sameTags(olds.tags, news.tags)));
    return olds.deleted === true ? [...kept, "deleted"] : kept;
  },
  async create(api, want, ctx) {
    const projectId = await resolveProjectId(api, want.projectId);
    const where = journalContext(api.settings, ctx.resource);
    let d: Dashboard;
    if (want.dashboardId !== undefined) {
      // Adopt: read it, then PATCH only what differs, so adopting a dashboard that already matches the program
      // (an exported organization's first up) writes nothing. A soft-deleted one answers 404 to GET: PATCH with
      // deleted:false restores it and converges it in one request.
      let found: Dashboard | undefined;
      try {
        found = await api.dashboards.retrieve({ projectId, id: want.dashboardId });
      } catch (e) {
        if (!isObjectGone(e)) throw e;
      }
      const body = convergeBody(want, found && toOutputs(found, projectId, want, true), found === undefined);
      d =
        found && Object.keys(body).length === 0 ? found : await patch(api, projectId, want.dashboardId, body);
    } else {
      d = await provisionalCreate(ctx.creates, newDashboard(api, projectId, want, where));
    }
    return { id: String(d.id), outs: toOutputs(d, projectId, want, want.dashboardId !== undefined) };
  },
  async read(api, id, props, how) {
    const old = props;
    const projectId = old.projectId ?? (await resolveProjectId(api));
    const where = { projectId, id: Number(id) };
    try {
      // A refresh reads it from the project's list (it carries every field of the outputs): ⌈N/100⌉ requests
      // for N dashboards of a project; one missing from the list is soft-deleted or unlisted, and one GET tells
      // which (one moved between two page reads makes the pages disagree: the client reads the list again).
      const live = await listedOrRetrieved(
        how,
        () => api.dashboards.find(where),
        () => api.dashboards.retrieve(where),
      );
      return toOutputs(live, projectId, old, old.adopted);
    } catch (e) {
      // Dashboards cannot be hard-deleted, so PostHog's 404 for the dashboard means soft-deleted: keep the id,
      // show the drift. A 404 for the project, the endpoint or from another server is an error (isObjectGone).
      // `pulumi import` of a dashboard answering 404 (none of that id, or one soft-deleted): nothing to import, so
      // gone, never a resource recorded as `deleted: true`.
      if (isObjectGone(e)) return how.importing ? undefined : { ...old, deleted: true };
      throw e;
    }
  },
  async update(api, id, olds, want) {
    const projectId = olds.projectId ?? (await resolveProjectId(api, want.projectId));
    const body = convergeBody(want, olds, olds.deleted === true);
    try {
      const d =
        Object.keys(body).length > 0
          ? await patch(api, projectId, Number(id), body)
          : await api.dashboards.retrieve({ projectId, id: Number(id) });
      return toOutputs(d, projectId, want, olds.adopted);
    } catch (e) {
      if (isObjectGone(e) && olds.deleted === true) {
        throw new Error(
          `Dashboard ${id} cannot be restored: project ${projectId} has no such dashboard, even soft-deleted ` +
            "(was the project deleted?). Remove the resource from the program, or from the state with `pulumi state delete`",
          { cause: e },
        );
      }
      throw e;
    }
  },
  async delete(api, id, props) {
    const old = props;
    // Adopted objects are left as they were found (README, "What destroy does"). State written before the
    // marker existed holds `dashboardId` exactly when the dashboard was adopted.
    const adopted = old.adopted ?? old.dashboardId !== undefined;
    if (adopted && old.deleteAdoptedOnDestroy !== true) {
      keptOnDestroy(`Dashboard ${id} (${old.name})`, false, "deleteAdoptedOnDestroy");
      return;
    }
    await patch(api, old.projectId ?? (await resolveProjectId(api)), Number(id), {
      deleted: true,
      ...(old.deleteInsights ? { delete_insights: true } : {}),
    });
  },
});

/**
 * The create of a new dashboard, named provisionally (the declared name and the create's marker), as
 * provider/framework/lost-create.ts `provisionalCreate` runs it: in turn with the creates of dashboards of the same
 * name; first the one an earlier create of this resource made (a killed run, or a lost answer earlier in this run: it
 * carries that create's marker); else from its settings ({@link postPlain}) or from `templateJson`
 * ({@link postTemplate}); after a lost answer, the one that carries this create's marker; then given its declared
 * name and settings by one PATCH ({@link converged}).
 */
function newDashboard(
  api: PostHogClient,
  projectId: string,
  want: In,
  where: JournalContext,
): ProvisionalCreate<Dashboard, Dashboard> {
  const template = want.templateJson;
  // PostHog names a dashboard made from a template after the template; the PATCH gives it the declared settings.
  const templateName = template?.template_name;
  return {
    type: "Dashboard",
    scope: projectId,
    name: template !== undefined && typeof templateName === "string" ? templateName : want.name,
    names: template !== undefined ? [want.name] : [],
    where,
    adoptHint: "the input dashboardId",
    list: () => api.dashboards.all({ projectId }),
    retrieve: (id) => api.dashboards.retrieve({ projectId, id: Number(id) }),
    reread: false,
    post: (op) =>
      template !== undefined ? postTemplate(api, projectId, want, op) : postPlain(api, projectId, want, op),
    converge: (made) => converged(api, projectId, want, made),
  };
}

/**
 * POST `/api/projects/:project_id/dashboards/` of the declared settings, the dashboard named provisionally
 * (`op.provisionalName`): the dashboard it made.
 */
async function postPlain(
  api: PostHogClient,
  projectId: string,
  want: In,
  op: CreateOperation,
): Promise<Dashboard> {
  const d = await api.dashboards.create({
    projectId,
    body: {
      name: op.provisionalName(want.name, NAME_LIMIT),
      description: want.description,
      pinned: want.pinned,
      tags: want.tags,
      ...(want.restrictionLevel !== 21 ? { restriction_level: want.restrictionLevel } : {}),
      ...(want.useTemplate !== undefined ? { use_template: want.useTemplate } : {}),
      ...(want.useDashboard !== undefined ? { use_dashboard: want.useDashboard } : {}),
    },
  });
  // A new, empty dashboard (not a copy of another or of a template): it has no collaborators yet.
  if (want.useTemplate === undefined && want.useDashboard === undefined) op.madeFromScratch(String(d.id));
  return d;
}

/**
 * POST `create_from_template_json/` of the template with its `template_name` replaced by the provisional name
 * (PostHog names the dashboard after it): the dashboard it made, or undefined when it answered without a body.
 */
function postTemplate(
  api: PostHogClient,
  projectId: string,
  want: In,
  op: CreateOperation,
): Promise<Dashboard | undefined> {
  const template = { ...(want.templateJson ?? {}), template_name: op.provisionalName(want.name, NAME_LIMIT) };
  return api.dashboards.createFromTemplateJson({ projectId, body: { template } });
}

/**
 * The dashboard `d` with its declared name and settings: one PATCH of what differs (always the name, when `d` carries
 * a create's provisional name; with `useTemplate`, PostHog also gives it the template's description), else `d`.
 */
async function converged(api: PostHogClient, projectId: string, want: In, d: Dashboard): Promise<Dashboard> {
  const body = convergeBody(want, toOutputs(d, projectId, want, false), false);
  return Object.keys(body).length > 0 ? patch(api, projectId, d.id, body) : d;
}
