/**
 * Project: a project of the organization.
 * The whole description is the card's (`project.card.description`), which schema.json and the SDK class take.
 */
import { z } from "zod";
import { type PostHogClient, type Project, ValidationError } from "../client";
import { keptOnDestroy } from "../framework/adopted";
import { known } from "../framework/adoption";
import type { Adopted } from "../framework/bookkeeping";
import { resource, wholeIdImport } from "../framework/card";
import { ref, res } from "../framework/examples";
import { ProjectIdInput } from "../framework/inputs";
import { TimeZoneInput } from "../framework/limits";
import {
  type JournalContext,
  journalContext,
  type LostObjectKind,
  type ProvisionalCreate,
  provisionalCreate,
} from "../framework/lost-create";

/**
 * The longest project name PostHog takes (its serializer's `max_length`), in characters; the provisional name of a
 * create's project is kept within it (provider/framework/lost-create.ts, `provisionalName`).
 */
const NAME_LIMIT = 200;

/**
 * What reportLostObjects (provider/framework/lost-create.ts) needs to name a project that a create with an unknown
 * outcome made and no resource holds (the card's `lostObjects`).
 */
const lostProjects: LostObjectKind = {
  list: (api) => api.projects.all(),
  adoptInput: "projectId",
  deleteCommand: (host, organization, _scope, id) =>
    `curl -X DELETE -H "Authorization: Bearer $POSTHOG_API_KEY" ${host}/api/organizations/${organization}/projects/${id}/ ` +
    "(it deletes the project with its data)",
};

const bool = () => z.boolean({ error: "expected true or false" }).optional();
/** A list of strings of at most 200 characters each (PostHog stores them as `varchar(200)`). */
const strings200 = () =>
  z
    .array(z.string({ error: "expected a string" }).max(200, { error: "expected at most 200 characters" }), {
      error: "expected a list of strings",
    })
    .optional();

/** Inputs of a Project. */
export const ProjectInputsSchema = z.strictObject({
  /** Project name (1..200 characters). */
  name: z
    .string({ error: "expected a project name (1..200 characters)" })
    .trim()
    .min(1, { error: "expected a project name (1..200 characters)" })
    .max(200, { error: "expected a project name (1..200 characters)" }),
  /**
   * Adopt this existing project (its id) instead of creating one. Changing it replaces the resource. An adopted
   * project is kept on destroy unless `deleteAdoptedOnDestroy` is true.
   */
  projectId: ProjectIdInput.optional(),
  /**
   * Delete the project on destroy even though it was adopted (`projectId`), with its data, dashboards and batch
   * exports. Default: an adopted project is left as it was found (a project this resource created is always
   * deleted on destroy).
   */
  deleteAdoptedOnDestroy: z.boolean({ error: "expected true or false" }).optional(),
  /** What the product is, for PostHog's AI features (at most 1,000 characters). */
  productDescription: z
    .string({ error: "expected a string" })
    .max(1000, { error: "expected at most 1,000 characters" })
    .optional(),
  /**
   * IANA time zone name of the project, case-sensitive, e.g. "Europe/Berlin", "Asia/Kolkata", "UTC" (canonical
   * names and their aliases, as PostHog accepts them).
   */
  timezone: TimeZoneInput.optional(),
  /** URLs of the app (toolbar, heatmaps), each at most 200 characters. */
  appUrls: strings200(),
  /** Discard client IP addresses. */
  anonymizeIps: bool(),
  /** Turn autocapture off. */
  autocaptureOptOut: bool(),
  /** Record sessions. */
  sessionRecordingOptIn: bool(),
  /** Capture heatmaps. */
  heatmapsOptIn: bool(),
  /** Enable surveys. */
  surveysOptIn: bool(),
  /** First day of the week: 0 (Sunday) or 1 (Monday). */
  weekStartDay: z.literal([0, 1], { error: "expected 0 (Sunday) or 1 (Monday)" }).optional(),
  /** Domains allowed to record sessions, each at most 200 characters. */
  recordingDomains: strings200(),
  /** A demo project filled with sample data; only settable at creation (changing it replaces). */
  isDemo: bool(),
});
export type ProjectInputs = z.input<typeof ProjectInputsSchema>;
type In = z.output<typeof ProjectInputsSchema>;

/**
 * Outputs of a Project, as create, read and update return them: the settings as PostHog holds them (a setting
 * PostHog leaves empty is absent) and the server's fields. `required` in the package schema: neither optional
 * nor nullable. Each property's comment is its documentation (schema.json, the SDK class, docs/resources).
 */
export const ProjectOutputsSchema = z.object({
  /** The project name. */
  name: z.string(),
  /**
   * The project id, a string of digits (also the resource id). Unknown in a preview where this project is updated:
   * give dependents `id`, which stays known.
   */
  projectId: z.string(),
  /** As declared: delete the adopted project on destroy. */
  deleteAdoptedOnDestroy: z.boolean().optional(),
  /** What the product is, for PostHog's AI features; "" when unset. */
  productDescription: z.string(),
  /** The IANA time zone of the project. */
  timezone: z.string().optional(),
  /** URLs of the app (toolbar, heatmaps); empty when none. */
  appUrls: z.array(z.string()),
  /** Whether client IP addresses are discarded. */
  anonymizeIps: z.boolean().optional(),
  /** Whether autocapture is off. */
  autocaptureOptOut: z.boolean().optional(),
  /** Whether sessions are recorded. */
  sessionRecordingOptIn: z.boolean().optional(),
  /** Whether heatmaps are captured. */
  heatmapsOptIn: z.boolean().optional(),
  /** Whether surveys are on. */
  surveysOptIn: z.boolean().optional(),
  /** The first day of the week: 0 (Sunday) or 1 (Monday). */
  weekStartDay: z.int().optional(),
  /** Domains allowed to record sessions; empty when none. */
  recordingDomains: z.array(z.string()),
  /** Whether it is a demo project filled with sample data. */
  isDemo: z.boolean().optional(),
  /** The project's UUID. */
  uuid: z.string().nullable(),
  /** The id (UUID) of the organization the project belongs to. */
  organization: z.string().nullable(),
  /** The project API key that PostHog's SDKs send events with (secret). */
  apiToken: z.string().nullable(),
  /** The token of the live events stream (secret). */
  liveEventsToken: z.string().nullable(),
  /** When the project was created (ISO 8601). */
  createdAt: z.string().nullable(),
  /** Whether any event was received. */
  ingestedEvent: z.boolean(),
});

/** Input property → wire field, for the settings sent as they are. */
const SETTINGS = {
  name: "name",
  productDescription: "product_description",
  timezone: "timezone",
  appUrls: "app_urls",
  anonymizeIps: "anonymize_ips",
  autocaptureOptOut: "autocapture_opt_out",
  sessionRecordingOptIn: "session_recording_opt_in",
  heatmapsOptIn: "heatmaps_opt_in",
  surveysOptIn: "surveys_opt_in",
  weekStartDay: "week_start_day",
  recordingDomains: "recording_domains",
  isDemo: "is_demo",
} as const satisfies Partial<Record<keyof In, string>>;

/** Outputs of a Project: the settings (live values) plus the server's fields. */
export type ProjectOutputs = z.infer<typeof ProjectOutputsSchema> & Adopted & Record<string, unknown>;

/** What the project's outputs carry over from the state (or the create): how it was taken over, what destroy does. */
type Marker = { adopted?: boolean | undefined; deleteAdoptedOnDestroy?: boolean | undefined };

function toOutputs(p: Project, marker: Marker): ProjectOutputs {
  const wire = p as Record<string, unknown>;
  // null means "not set": read it as the empty value of its type, so a declared "" or [] shows no diff
  const empty: Record<string, unknown> = { productDescription: "", appUrls: [], recordingDomains: [] };
  // PostHog's answer as it is; test/provider/outputs-schema.test.ts checks it against ProjectOutputsSchema
  const settings = Object.fromEntries(
    Object.entries(SETTINGS).map(([prop, field]) => [prop, wire[field] ?? empty[prop]]),
  ) as Pick<ProjectOutputs, keyof typeof SETTINGS>;
  return {
    ...settings,
    name: p.name,
    projectId: String(p.id),
    uuid: p.uuid ?? null,
    organization: p.organization ?? null,
    apiToken: p.api_token ?? null,
    liveEventsToken: typeof wire.live_events_token === "string" ? wire.live_events_token : null,
    createdAt: p.created_at ?? null,
    ingestedEvent: p.ingested_event ?? false,
    ...(marker.adopted !== undefined ? { adopted: marker.adopted } : {}),
    ...(marker.deleteAdoptedOnDestroy !== undefined
      ? { deleteAdoptedOnDestroy: marker.deleteAdoptedOnDestroy }
      : {}),
  };
}

/**
 * The declared settings (never `isDemo`) that differ from `seen` (all of them when `seen` is undefined), as a
 * wire body. `seen` is the live project or the outputs last read.
 */
function body(want: In, seen?: Project | ProjectOutputs): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [prop, field] of Object.entries(SETTINGS)) {
    const v = want[prop as keyof typeof SETTINGS];
    if (v === undefined || prop === "isDemo") continue;
    const current =
      seen === undefined
        ? undefined
        : "projectId" in seen
          ? seen[prop]
          : (seen as Record<string, unknown>)[field];
    if (seen && JSON.stringify(current) === JSON.stringify(v)) continue;
    out[field] = v;
  }
  return out;
}

function destroyMarker(want: In): Marker {
  return want.deleteAdoptedOnDestroy !== undefined
    ? { deleteAdoptedOnDestroy: want.deleteAdoptedOnDestroy }
    : {};
}

async function converge(api: PostHogClient, live: Project, want: In): Promise<Project> {
  const b = body(want, live);
  return Object.keys(b).length === 0 ? live : api.projects.update({ id: live.id, body: b });
}

/** The Project resource: its card (everything about it) and its provider. */
export const project = resource<
  typeof ProjectInputsSchema,
  ProjectOutputs,
  "Project",
  typeof ProjectOutputsSchema
>({
  name: "Project",
  troubleshooting: "project",
  summary: [
    "A project of the organization (type `pulumi-nodejs:dynamic/posthog:Project`). Unset settings are not",
    "managed; `isDemo` (and `projectId`) changes replace it. `apiToken` and `liveEventsToken` are secret.",
    "Adopt an existing project with `projectId`.",
  ].join("\n"),
  examples: {
    typescript: [
      'import * as posthog from "pulumi-posthog";',
      "",
      'const web = new posthog.Project("web", {',
      '  name: "Web",',
      '  timezone: "Europe/Berlin",',
      "  anonymizeIps: true,",
      '  appUrls: ["https://www.example.com"],',
      "});",
      "",
      "export const projectId = web.id;",
      "export const apiToken = web.apiToken; // a secret output: encrypted in the state, shown as [secret]",
    ],
    program: {
      statements: [
        res("Project", "web", {
          name: "Web",
          timezone: "Europe/Berlin",
          anonymizeIps: true,
          appUrls: ["https://www.example.com"],
        }),
      ],
      outputs: { projectId: ref("web"), apiToken: ref("web", "apiToken") },
    },
  },
  resolvedInputs: ["projectId"],
  idInput: "projectId",
  description: [
    "Project: a project of the organization.",
    "API: `/api/organizations/:organization_id/projects/` (POST create, GET `:id/`, PATCH `:id/`, DELETE `:id/`).",
    "",
    "Settings left unset are not managed (the server's defaults stand, and never show as a diff). `isDemo`",
    "can only be chosen at creation: changing it replaces the project. `apiToken` and `liveEventsToken` are",
    "secret outputs. Adoption: `projectId` takes over an existing project and converges its settings.",
  ].join("\n"),
  outputs: ProjectOutputsSchema,
  secretOutputs: ["apiToken", "liveEventsToken"],
  exclusiveInputs: [],
  importId: wholeIdImport("Project", "<projectId>", "\\d+"),
  adoption: {
    // With `projectId`: GET `/api/organizations/:organization_id/projects/:id/`.
    async probe(api, inputs) {
      if (!known(inputs.projectId) || inputs.projectId === "@current") return undefined;
      const p = await api.projects.retrieve({ id: String(inputs.projectId) });
      return { kind: "project", id: String(p.id), name: p.name ?? "", by: "projectId" };
    },
  },
  records: { adopted: true },
  lostObjects: lostProjects,
  inputs: ProjectInputsSchema,
  replaceOnChanges: ["isDemo", "projectId"],
  async create(api, want, ctx) {
    if (want.projectId !== undefined) {
      const live = await api.projects.retrieve({ id: want.projectId });
      if (want.isDemo !== undefined && want.isDemo !== (live.is_demo ?? false)) {
        throw new Error(
          `Project ${live.id} has isDemo=${live.is_demo}; isDemo can only be chosen at creation`,
        );
      }
      const p = await converge(api, live, want);
      return { id: String(p.id), outs: toOutputs(p, { ...destroyMarker(want), adopted: true }) };
    }
    const organization = api.settings.organizationId ?? "";
    const where = journalContext(api.settings, ctx.resource);
    return provisionalCreate(ctx.creates, newProject(api, want, organization, where));
  },
  async read(api, id, props) {
    return toOutputs(await api.projects.retrieve({ id }), props);
  },
  async update(api, id, olds, want) {
    // One PATCH of what differs from the state last read (a GET only when nothing differs).
    const b = body(want, olds);
    return toOutputs(
      Object.keys(b).length > 0
        ? await api.projects.update({ id, body: b })
        : await api.projects.retrieve({ id }),
      { adopted: olds.adopted, ...destroyMarker(want) },
    );
  },
  async delete(api, id, props) {
    // Adopted objects are left as they were found (README, "What destroy does"); unknown counts as adopted.
    if (props.adopted !== false && props.deleteAdoptedOnDestroy !== true) {
      keptOnDestroy(`Project ${id} (${props.name})`, props.adopted === undefined, "deleteAdoptedOnDestroy");
      return;
    }
    await api.projects.delete({ id });
  },
});

/**
 * The create of a new project, named provisionally (the declared name and the create's marker), as
 * provider/framework/lost-create.ts `provisionalCreate` runs it: in turn with the creates of projects of the same
 * name; first the one an earlier create of this resource made (a killed run, or a lost answer earlier in this run: it
 * carries that create's marker); else POST `/api/organizations/:organization_id/projects/`; after a lost answer, the
 * one that carries this create's marker; then given its declared name by one PATCH (with the other declared settings
 * that differ).
 */
function newProject(
  api: PostHogClient,
  want: In,
  organization: string,
  where: JournalContext,
): ProvisionalCreate<Project, { id: string; outs: ProjectOutputs }> {
  return {
    type: "Project",
    scope: organization,
    name: want.name,
    where,
    adoptHint: "the input projectId",
    list: () => api.projects.all(),
    retrieve: (id) => api.projects.retrieve({ id }),
    reread: true,
    async post(op) {
      try {
        return await api.projects.create({
          body: {
            ...body(want),
            name: op.provisionalName(want.name, NAME_LIMIT),
            ...(want.isDemo !== undefined ? { is_demo: want.isDemo } : {}),
          },
        });
      } catch (e) {
        if (e instanceof ValidationError) throw new Error(`Project ${want.name}: ${e.message}`, { cause: e });
        throw e;
      }
    },
    async converge(made) {
      const live = await converge(api, made, want);
      return { id: String(live.id), outs: toOutputs(live, { ...destroyMarker(want), adopted: false }) };
    },
  };
}
