import { z } from "zod";
import { ProjectAccessSchema } from "./world";

/**
 * Request-body schemas of the emulated API (one per operation). Unknown keys are dropped, as the real
 * serializers drop them; read-only fields are therefore ignored.
 */

/** The real service's domain regex (lowercase only). */
export const DOMAIN_PATTERN = /^([a-z0-9]+(-[a-z0-9]+)*\.)+[a-z]{2,}$/;

const timeZones = new Set([...Intl.supportedValuesOf("timeZone"), "UTC", "Etc/UTC", "GMT"]);

/**
 * Whether `tz` is one of PostHog's time zone choices, pytz's `all_timezones`: the canonical IANA names and
 * their aliases (`Asia/Kolkata`, `US/Eastern`, `Etc/GMT+5`), case-sensitive. Here: a name of the runtime's
 * canonical list, or one its time zone data knows and that is spelled as IANA spells names (each part
 * capitalized), so `europe/berlin` and `Mars/Olympus` are refused.
 */
function isTimeZone(tz: string): boolean {
  if (timeZones.has(tz)) return true;
  if (!/^[A-Z][A-Za-z0-9_+-]*(\/[A-Z][A-Za-z0-9_+-]*)*$/.test(tz)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Organization membership levels: member 1, admin 8, owner 15. */
export const MembershipLevelSchema = z.literal([1, 8, 15]);
/** Dashboard restriction levels: 21 everyone in the project can edit, 37 only collaborators can edit. */
export const RestrictionLevelSchema = z.literal([21, 37]);

/** A schema-level message for format failures only (missing/null/wrong type keep DRF's messages). */
const formatError = (message: string) => (issue: { code: string }) =>
  issue.code === "invalid_format" ? message : undefined;

const structured = z.union([z.array(z.unknown()), z.record(z.string(), z.unknown())]).nullable();
const object = z.record(z.string(), z.unknown());

export const DomainCreateSchema = z.object({
  domain: z
    .string()
    .max(128)
    .regex(DOMAIN_PATTERN, { error: formatError("Please enter a valid domain or subdomain name.") }),
  jit_provisioning_enabled: z.boolean().optional(),
  sso_enforcement: z.string().max(28).optional(),
  saml_entity_id: z.string().max(512).nullable().optional(),
  saml_acs_url: z.string().max(512).nullable().optional(),
  saml_x509_cert: z.string().nullable().optional(),
});
/** Update: `domain` is read-only once the domain exists (ignored). */
export const DomainUpdateSchema = DomainCreateSchema.omit({ domain: true });

export const InviteCreateSchema = z.object({
  target_email: z.email().max(254),
  first_name: z.string().max(30).default(""),
  level: MembershipLevelSchema.default(1),
  message: z.string().nullable().default(null),
  private_project_access: z.array(ProjectAccessSchema).nullable().default([]),
  send_email: z.boolean().default(true),
  combine_pending_invites: z.boolean().default(false),
});
export type InviteCreate = z.output<typeof InviteCreateSchema>;

export const MemberUpdateSchema = z.object({ level: MembershipLevelSchema.optional() });

/** The project fields accepted on create and update (seed §2.6 "Accepted on create: yes"). */
export const ProjectWriteSchema = z
  .object({
    name: z.string().min(1).max(200),
    product_description: z.string().max(1000).nullable(),
    app_urls: z.array(z.string().nullable()),
    slack_incoming_webhook: z.string().max(500).nullable(),
    anonymize_ips: z.boolean(),
    completed_snippet_onboarding: z.boolean(),
    test_account_filters: structured,
    test_account_filters_default_checked: z.boolean().nullable(),
    path_cleaning_filters: structured,
    is_demo: z.boolean(),
    timezone: z.string().refine(isTimeZone, {
      error: (issue) => `"${String(issue.input)}" is not a valid choice.`,
      params: { code: "invalid_choice" },
    }),
    data_attributes: structured,
    person_display_name_properties: z.array(z.string()).nullable(),
    correlation_config: structured,
    autocapture_opt_out: z.boolean().nullable(),
    autocapture_exceptions_opt_in: z.boolean().nullable(),
    autocapture_web_vitals_opt_in: z.boolean().nullable(),
    autocapture_web_vitals_allowed_metrics: structured,
    autocapture_exceptions_errors_to_ignore: structured,
    capture_console_log_opt_in: z.boolean().nullable(),
    capture_performance_opt_in: z.boolean().nullable(),
    session_recording_opt_in: z.boolean(),
    session_recording_sample_rate: z
      .string()
      .regex(/^(0(\.\d{1,2})?|1(\.0{1,2})?)$/, {
        error: formatError("Ensure that there are no more than 2 decimal places."),
      })
      .nullable(),
    session_recording_minimum_duration_milliseconds: z.number().int().min(0).max(30000).nullable(),
    session_recording_linked_flag: structured,
    session_recording_network_payload_capture_config: structured,
    session_replay_config: structured,
    survey_config: structured,
    access_control: z.boolean(),
    week_start_day: z.literal([0, 1]).nullable(),
    primary_dashboard: z.number().int().nullable(),
    live_events_columns: z.array(z.string()).nullable(),
    recording_domains: z.array(z.string().nullable()).nullable(),
    inject_web_apps: z.boolean(),
    extra_settings: structured,
    modifiers: structured,
    has_completed_onboarding_for: structured,
    surveys_opt_in: z.boolean().nullable(),
    heatmaps_opt_in: z.boolean().nullable(),
  })
  .partial();
export type ProjectWrite = z.output<typeof ProjectWriteSchema>;

const TileLayoutsSchema = object;

/** A tile upsert inside a dashboard PATCH (by id; without id, a new text tile). */
export const TilePatchSchema = z.object({
  id: z.number().int().optional(),
  layouts: TileLayoutsSchema.optional(),
  color: z.string().nullable().optional(),
  deleted: z.boolean().optional(),
  text: z
    .object({ body: z.string().max(4000) })
    .nullable()
    .optional(),
});

/** Dashboard create and update (seed §4.6 body). */
export const DashboardWriteSchema = z.object({
  name: z.string().max(400).nullable().optional(),
  description: z.string().optional(),
  pinned: z.boolean().optional(),
  deleted: z.boolean().optional(),
  use_template: z.string().optional(),
  use_dashboard: z.number().int().optional(),
  delete_insights: z.boolean().optional(),
  tags: z.array(z.string().max(255)).optional(),
  restriction_level: RestrictionLevelSchema.optional(),
  filters: z.record(z.string(), z.unknown(), { error: "Filters must be a dictionary" }).optional(),
  variables: z.record(z.string(), z.unknown(), { error: "Variables must be a dictionary" }).optional(),
  tiles: z.array(TilePatchSchema).optional(),
});
export type DashboardWrite = z.output<typeof DashboardWriteSchema>;

/** `PATCH dashboards/:id/move_tile/` body. */
export const MoveTileSchema = z.object({
  tile: z.object({ id: z.number().int() }),
  toDashboard: z.number().int(),
});

/**
 * A tile of template JSON. PostHog's schema (posthog/api/dashboards/dashboard_template_schema.json) only says
 * each tile is an object; posthog/helpers/dashboard_templates.py `create_from_template` reads `type`
 * ("INSIGHT" or "TEXT"), `name`, `description`, `query`, `layouts`, `color` and `body`, each possibly null.
 */
const TemplateTileSchema = z.looseObject({
  type: z.string(),
  name: z.string().nullable().optional(),
  description: z.string().nullable().optional(),
  body: z.string().nullable().optional(),
  query: z.unknown().optional(),
  layouts: object.nullable().optional(),
  color: z.string().nullable().optional(),
});

/** The dashboard template JSON schema (`dashboard_template_schema.json` of the real service). */
export const DashboardTemplateSchema = z.object({
  template_name: z.string(),
  dashboard_description: z.string(),
  dashboard_filters: object,
  tiles: z.array(TemplateTileSchema).min(1),
  variables: z
    .array(
      z.object({
        id: z.string(),
        name: z.string(),
        type: z.enum(["event", "element"]),
        default: object,
        description: z.string(),
        required: z.boolean(),
      }),
    )
    .nullable()
    .optional(),
  tags: z.array(z.string()).optional(),
  image_url: z.string().nullable().optional(),
  id: z.string().optional(),
  team_id: z.number().int().nullable().optional(),
  created_at: z.string().nullable().optional(),
  is_featured: z.boolean().optional(),
});

/** `POST dashboards/create_from_template_json/` body. */
export const CreateFromTemplateSchema = z.object({
  template: DashboardTemplateSchema,
  creation_context: z.string().optional(),
});

/** `POST dashboards/:id/collaborators/` body. */
export const CollaboratorCreateSchema = z.object({
  level: RestrictionLevelSchema,
  user_uuid: z.uuid(),
});

/** `PATCH dashboards/:id/sharing/` body. */
export const SharingUpdateSchema = z.object({ enabled: z.boolean().optional() });

/** Pause/unpause accept the batch export's fields (ignored) and `backfill`. */
export const PauseSchema = z.object({
  name: z.string().optional(),
  model: z.enum(["events", "persons", "sessions"]).nullable().optional(),
  paused: z.boolean().optional(),
  backfill: z.boolean().optional(),
});

// Control plane ---------------------------------------------------------------------------------

export const ControlApiKeySchema = z.object({
  scopes: z
    .array(z.string().regex(/^(\*|[a-z_]+:(read|write))$/))
    .nullable()
    .optional(),
  organizations: z.array(z.string()).optional(),
  projects: z.array(z.number().int()).optional(),
  userEmail: z.email().optional(),
});

export const ControlDnsSchema = z.object({
  name: z.string().min(1).max(253),
  txt: z.string().nullable(),
});

/**
 * `POST /_emulator/clock`: move the emulator's clock forward (`advanceSeconds`, `advanceMs`, both added), and/or
 * stop it (`frozen: true`: it stands still until moved or unfrozen) or let it run again from where it stands.
 */
export const ControlClockSchema = z
  .object({
    advanceSeconds: z.number().min(0).optional(),
    advanceMs: z.number().int().min(0).optional(),
    frozen: z.boolean().optional(),
  })
  .refine((b) => b.advanceSeconds !== undefined || b.advanceMs !== undefined || b.frozen !== undefined, {
    error: "Give advanceSeconds, advanceMs or frozen.",
  });

export const ControlUserSchema = z.object({
  email: z.email(),
  first_name: z.string().max(150).default(""),
  last_name: z.string().max(150).default(""),
  level: MembershipLevelSchema.optional(),
});

export const ControlFaultSchema = z.object({
  method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]).optional(),
  path: z.string().refine(
    (source) => {
      try {
        new RegExp(source);
        return true;
      } catch {
        return false;
      }
    },
    { error: "Not a valid regular expression." },
  ),
  status: z.number().int().min(400).max(599).optional(),
  retryAfter: z.number().min(0).optional(),
  delayMs: z.number().int().min(0).max(60_000).optional(),
  reset: z.boolean().optional(),
  dropResponse: z.boolean().optional(),
  /**
   * A 2xx JSON object answer with these top-level fields replaced after it is handled (e.g. a list's `count`, or a
   * `next` pointing back to a page already read), as a misbehaving proxy or a list changing under the read would.
   */
  body: z.record(z.string(), z.unknown()).optional(),
  /** A 2xx answer cut to the first half of its bytes (Content-Length matching): truncated JSON. */
  truncateBody: z.boolean().optional(),
  times: z.number().int().min(1).optional(),
  probability: z.number().min(0).max(1).optional(),
});
export type ControlFault = z.output<typeof ControlFaultSchema>;

/**
 * `POST /_emulator/holds`: API requests matching `method` and `path` (a regular expression on the pathname) wait,
 * after the added latency and faults and before they are handled, until the control plane releases them; `times`:
 * only the first that many matching requests are held. `cutAfterMs`: once a request has been held that long, its
 * client's connection is cut (as a proxy that gives up on a slow upstream resets it) while the request stays held:
 * released later, it is applied all the same, with no one to answer (PostHog keeps processing a request whose
 * client is gone).
 */
export const ControlHoldSchema = z.object({
  method: ControlFaultSchema.shape.method,
  path: ControlFaultSchema.shape.path,
  times: z.number().int().min(1).optional(),
  cutAfterMs: z.number().int().min(0).optional(),
});
export type ControlHold = z.output<typeof ControlHoldSchema>;

/** `POST /_emulator/holds/:id/release`: release the `count` oldest requests held (default: all of them). */
export const ControlReleaseSchema = z.object({ count: z.number().int().min(1).optional() }).default({});

/** `POST /_emulator/invite-budget`: the organization's invite budget, or `{enabled: false}` for none. */
export const ControlInviteBudgetSchema = z.union([
  z.object({ perHour: z.number().int().min(1), perDay: z.number().int().min(1) }),
  z.object({ enabled: z.literal(false) }),
]);

export const ControlRateLimitSchema = z.union([
  z.object({ perMinute: z.number().int().min(1), perHour: z.number().int().min(1) }),
  z.object({ enabled: z.literal(false) }),
]);

/** One entry of `GET /_emulator/requests` (status 0: the connection was reset by a fault). */
export const RequestLogEntrySchema = z.object({
  method: z.string(),
  path: z.string(),
  query: z.record(z.string(), z.unknown()),
  status: z.number().int(),
  durationMs: z.number(),
  /** The latency the emulator added before handling it (`latencyMs` ± `latencyJitterMs`), in ms. */
  latencyMs: z.number().int(),
  at: z.string(),
});
