import { createHash, randomBytes } from "node:crypto";
import { z } from "zod";

/**
 * The emulator's world: plain data, one zod schema per stored record (the same schemas validate a
 * state file on load). Everything the API serves is derived from this state by the serializers below.
 */

const json = z.unknown();
const timestamp = z.string();

export const UserRecordSchema = z.object({
  id: z.number().int(),
  uuid: z.string(),
  distinct_id: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string(),
  is_email_verified: z.boolean(),
  mascot_config: z.record(z.string(), json),
  role_at_organization: z.string(),
  current_team_id: z.number().int().nullable(),
  last_login: timestamp.nullable(),
});
export type UserRecord = z.infer<typeof UserRecordSchema>;

export const MembershipRecordSchema = z.object({
  id: z.string(),
  user_id: z.number().int(),
  level: z.number().int(),
  joined_at: timestamp,
  updated_at: timestamp,
});
export type MembershipRecord = z.infer<typeof MembershipRecordSchema>;

export const ApiKeyRecordSchema = z.object({
  /** sha256 hex of the key; the key itself is never stored. */
  hash: z.string(),
  user_id: z.number().int(),
  /** null: a legacy full-access key. */
  scopes: z.array(z.string()).nullable(),
  organizations: z.array(z.string()).nullable(),
  projects: z.array(z.number().int()).nullable(),
});
export type ApiKeyRecord = z.infer<typeof ApiKeyRecordSchema>;

export const BatchExportRecordSchema = z.object({
  id: z.string(),
  team_id: z.number().int(),
  name: z.string(),
  model: z.enum(["events", "persons", "sessions"]),
  destination: z.record(z.string(), json),
  interval: z.string(),
  paused: z.boolean(),
  last_paused_at: timestamp.nullable(),
  start_at: timestamp.nullable(),
  end_at: timestamp.nullable(),
  native_query: z.string().nullable(),
});
export type BatchExportRecord = z.infer<typeof BatchExportRecordSchema>;

export const DomainRecordSchema = z.object({
  id: z.string(),
  domain: z.string(),
  verified_at: timestamp.nullable(),
  verification_challenge: z.string(),
  jit_provisioning_enabled: z.boolean(),
  sso_enforcement: z.string(),
  saml_entity_id: z.string().nullable(),
  saml_acs_url: z.string().nullable(),
  saml_x509_cert: z.string().nullable(),
});
export type DomainRecord = z.infer<typeof DomainRecordSchema>;

/**
 * Access levels of an invite's private project, lowest first: PostHog's `ACCESS_CONTROL_LEVELS_MEMBER`
 * (posthog/rbac/user_access_control.py), which posthog/models/organization_invite.py
 * `validate_private_project_access` accepts.
 */
export const PROJECT_ACCESS_LEVELS = ["none", "member", "admin"] as const;
export type ProjectAccessLevel = (typeof PROJECT_ACCESS_LEVELS)[number];
export const ProjectAccessSchema = z.object({ id: z.number().int(), level: z.enum(PROJECT_ACCESS_LEVELS) });

export const InviteRecordSchema = z.object({
  id: z.string(),
  target_email: z.string(),
  first_name: z.string(),
  emailing_attempt_made: z.boolean(),
  level: z.number().int(),
  created_by_id: z.number().int(),
  created_at: timestamp,
  updated_at: timestamp,
  message: z.string().nullable(),
  private_project_access: z.array(ProjectAccessSchema),
});
export type InviteRecord = z.infer<typeof InviteRecordSchema>;

/** A project (and its main team, which shares its id). `settings` holds the writable team fields. */
export const ProjectRecordSchema = z.object({
  id: z.number().int(),
  uuid: z.string(),
  api_token: z.string(),
  live_events_token: z.string(),
  name: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  settings: z.record(z.string(), json),
});
export type ProjectRecord = z.infer<typeof ProjectRecordSchema>;

/**
 * An insight. Fields beyond the first ones default, so state files written before them still load. `name` and
 * `description` are nullable, as PostHog's `Insight` model has them (a template tile without a name makes an
 * insight named null: posthog/helpers/dashboard_templates.py `_create_tile_for_insight`).
 */
export const InsightRecordSchema = z.object({
  id: z.number().int(),
  short_id: z.string(),
  team_id: z.number().int(),
  name: z.string().nullable(),
  description: z.string().nullable(),
  query: json,
  deleted: z.boolean(),
  derived_name: z.string().nullable().default(null),
  filters: z.record(z.string(), json).default({}),
  created_at: timestamp.nullable().default(null),
  created_by_id: z.number().int().nullable().default(null),
  last_modified_at: timestamp.nullable().default(null),
  /** True for insights made from a template (the real service sets `is_sample=True` there). */
  is_sample: z.boolean().default(false),
});
export type InsightRecord = z.infer<typeof InsightRecordSchema>;

/** A text card (PostHog's `Text` model: body at most 4,000 characters, nullable). */
export const TextRecordSchema = z.object({
  id: z.number().int(),
  body: z.string().nullable(),
  created_by_id: z.number().int().nullable().default(null),
  last_modified_by_id: z.number().int().nullable().default(null),
  last_modified_at: timestamp.nullable().default(null),
});
export type TextRecord = z.infer<typeof TextRecordSchema>;

/** A dashboard tile: exactly one of an insight or a text card, with its layouts and colour. */
export const TileRecordSchema = z.object({
  id: z.number().int(),
  dashboard_id: z.number().int(),
  insight_id: z.number().int().nullable(),
  text: TextRecordSchema.nullable(),
  layouts: z.record(z.string(), json),
  color: z.string().nullable(),
  deleted: z.boolean(),
  filters_overrides: z.record(z.string(), json).nullable().default({}),
  show_description: z.boolean().nullable().default(null),
  transparent_background: z.boolean().nullable().default(null),
});
export type TileRecord = z.infer<typeof TileRecordSchema>;

export const DashboardRecordSchema = z.object({
  id: z.number().int(),
  team_id: z.number().int(),
  name: z.string().nullable(),
  description: z.string(),
  pinned: z.boolean(),
  created_at: timestamp,
  created_by_id: z.number().int(),
  deleted: z.boolean(),
  creation_mode: z.enum(["default", "template", "duplicate", "unlisted"]),
  filters: z.record(z.string(), json),
  variables: z.record(z.string(), json),
  tags: z.array(z.string()),
  restriction_level: z.number().int(),
});
export type DashboardRecord = z.infer<typeof DashboardRecordSchema>;

export const CollaboratorRecordSchema = z.object({
  id: z.string(),
  dashboard_id: z.number().int(),
  user_id: z.number().int(),
  level: z.number().int(),
  added_at: timestamp,
  updated_at: timestamp,
});
export type CollaboratorRecord = z.infer<typeof CollaboratorRecordSchema>;

export const SharingRecordSchema = z.object({
  dashboard_id: z.number().int(),
  created_at: timestamp,
  enabled: z.boolean(),
  access_token: z.string(),
});
export type SharingRecord = z.infer<typeof SharingRecordSchema>;

export const WorldSchema = z.object({
  version: z.literal(1),
  clockOffsetMs: z.number(),
  /** While the clock is frozen (control plane), the emulator-clock time it stands at (epoch ms); else null. */
  clockFrozenAt: z.number().nullable().default(null),
  organization: z.object({ id: z.string(), name: z.string(), created_at: timestamp }),
  users: z.array(UserRecordSchema),
  memberships: z.array(MembershipRecordSchema),
  apiKeys: z.array(ApiKeyRecordSchema),
  batchExports: z.array(BatchExportRecordSchema),
  domains: z.array(DomainRecordSchema),
  invites: z.array(InviteRecordSchema),
  projects: z.array(ProjectRecordSchema),
  dashboards: z.array(DashboardRecordSchema),
  insights: z.array(InsightRecordSchema),
  tiles: z.array(TileRecordSchema),
  collaborators: z.array(CollaboratorRecordSchema),
  sharing: z.array(SharingRecordSchema),
  /** TXT records by name, set through the control plane. */
  dns: z.record(z.string(), z.string()),
  nextIds: z.object({
    user: z.number().int(),
    project: z.number().int(),
    dashboard: z.number().int(),
    insight: z.number().int(),
    tile: z.number().int(),
    text: z.number().int(),
  }),
});
export type World = z.infer<typeof WorldSchema>;

/** The seeded organization's id (deterministic across runs). */
export const SEED_ORGANIZATION_ID = "4d1b8f2e-6c3a-4e5f-9a7b-2c8d0e1f3a5b";
/** The seeded project's id (== its main team's id). */
export const SEED_PROJECT_ID = 1001;

/** sha256 hex of a personal API key. */
export const hashKey = (key: string): string => createHash("sha256").update(key).digest("hex");

/** URL-safe random token with `bytes` bytes of entropy (as Python's `secrets.token_urlsafe`). */
export const tokenUrlsafe = (bytes: number): string => randomBytes(bytes).toString("base64url");

/** A fresh personal API key, `phx_` followed by 43 URL-safe characters. */
export const newApiKey = (): string => `phx_${tokenUrlsafe(32)}`;

/**
 * The emulator's clock (epoch ms): real time plus the offset advanced through the control plane, or, while it is
 * frozen, the time it stands at.
 */
export const nowMs = (world: World): number => world.clockFrozenAt ?? Date.now() + world.clockOffsetMs;
export const nowIso = (world: World): string => new Date(nowMs(world)).toISOString();

/** Writable project settings (the team fields) with the values a new project starts with. */
export const defaultProjectSettings = (): Record<string, unknown> => ({
  product_description: null,
  app_urls: [],
  slack_incoming_webhook: null,
  anonymize_ips: false,
  completed_snippet_onboarding: false,
  test_account_filters: [],
  test_account_filters_default_checked: false,
  path_cleaning_filters: [],
  is_demo: false,
  timezone: "UTC",
  data_attributes: ["data-attr"],
  person_display_name_properties: null,
  correlation_config: {},
  autocapture_opt_out: false,
  autocapture_exceptions_opt_in: false,
  autocapture_web_vitals_opt_in: false,
  autocapture_web_vitals_allowed_metrics: null,
  autocapture_exceptions_errors_to_ignore: null,
  capture_console_log_opt_in: true,
  capture_performance_opt_in: true,
  session_recording_opt_in: false,
  session_recording_sample_rate: null,
  session_recording_minimum_duration_milliseconds: null,
  session_recording_linked_flag: null,
  session_recording_network_payload_capture_config: null,
  session_replay_config: null,
  survey_config: null,
  access_control: false,
  week_start_day: 0,
  primary_dashboard: null,
  live_events_columns: null,
  recording_domains: null,
  inject_web_apps: false,
  extra_settings: null,
  modifiers: null,
  has_completed_onboarding_for: null,
  surveys_opt_in: null,
  heatmaps_opt_in: null,
});

/** A new project record (its tokens are fresh secrets). */
export function newProjectRecord(id: number, uuid: string, name: string, at: string): ProjectRecord {
  return {
    id,
    uuid,
    api_token: `phc_${tokenUrlsafe(32)}`,
    live_events_token: tokenUrlsafe(32),
    name,
    created_at: at,
    updated_at: at,
    settings: defaultProjectSettings(),
  };
}

const seedUser = (id: number, uuid: string, first: string, last: string, role: string): UserRecord => ({
  id,
  uuid,
  distinct_id: `seed-${first.toLowerCase()}-${id}`,
  first_name: first,
  last_name: last,
  email: `${first.toLowerCase()}.${last.toLowerCase()}@example.com`,
  is_email_verified: true,
  mascot_config: {},
  role_at_organization: role,
  current_team_id: SEED_PROJECT_ID,
  last_login: null,
});

/**
 * The deterministic seeded world: one organization, one project (id 1001), the key holder Olivia
 * Owner (level 15), Adam Admin (8), Mia Member and Max Member (1), and two unpaused batch exports.
 * `seedKey` becomes Olivia's full-access key.
 */
export function seedWorld(seedKey: string, at: string): World {
  const users = [
    seedUser(1, "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d01", "Olivia", "Owner", "leadership"),
    seedUser(2, "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d02", "Adam", "Admin", "engineering"),
    seedUser(3, "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03", "Mia", "Member", "product"),
    seedUser(4, "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04", "Max", "Member", "marketing"),
  ];
  const levels = [15, 8, 1, 1];
  return {
    version: 1,
    clockOffsetMs: 0,
    clockFrozenAt: null,
    organization: { id: SEED_ORGANIZATION_ID, name: "Emulated Organization", created_at: at },
    users,
    memberships: users.map((u, i) => ({
      id: `7e2c4a6b-8d0f-4b1a-9c3e-5a7b9c1d3e0${i + 1}`,
      user_id: u.id,
      level: levels[i] ?? 1,
      joined_at: at,
      updated_at: at,
    })),
    apiKeys: [{ hash: hashKey(seedKey), user_id: 1, scopes: null, organizations: null, projects: null }],
    batchExports: [
      {
        id: "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c01",
        team_id: SEED_PROJECT_ID,
        name: "Events to S3",
        model: "events",
        destination: {
          type: "S3",
          config: { bucket_name: "emulated-exports", region: "us-east-1", prefix: "events/" },
        },
        interval: "hour",
        paused: false,
        last_paused_at: null,
        start_at: null,
        end_at: null,
        native_query: null,
      },
      {
        id: "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c02",
        team_id: SEED_PROJECT_ID,
        name: "Persons to BigQuery",
        model: "persons",
        destination: { type: "BigQuery", config: { project_id: "emulated", dataset_id: "posthog" } },
        interval: "day",
        paused: false,
        last_paused_at: null,
        start_at: null,
        end_at: null,
        native_query: null,
      },
    ],
    domains: [],
    invites: [],
    projects: [
      newProjectRecord(SEED_PROJECT_ID, "5c3e1a7b-9d2f-4e6a-8b0c-1d3e5f7a9b01", "Default project", at),
    ],
    dashboards: [],
    insights: [],
    tiles: [],
    collaborators: [],
    sharing: [],
    dns: {},
    nextIds: { user: 5, project: SEED_PROJECT_ID + 1, dashboard: 1, insight: 1, tile: 1, text: 1 },
  };
}

// ---------------------------------------------------------------------------------------------
// Serializers: records → the wire objects of seed-api.md §2 (exactly the documented fields).

/** §2.1 embedded user object. */
export const userJson = (u: UserRecord) => ({
  id: u.id,
  uuid: u.uuid,
  distinct_id: u.distinct_id,
  first_name: u.first_name,
  last_name: u.last_name,
  email: u.email,
  is_email_verified: u.is_email_verified,
  mascot_config: u.mascot_config,
  role_at_organization: u.role_at_organization,
});

/** §2.2 batch export (plus its id). */
export const batchExportJson = (b: BatchExportRecord) => ({
  id: b.id,
  name: b.name,
  model: b.model,
  destination: b.destination,
  interval: b.interval,
  paused: b.paused,
  last_paused_at: b.last_paused_at,
  start_at: b.start_at,
  end_at: b.end_at,
  native_query: b.native_query,
});

/**
 * §2.3 domain; `has_saml` is true when entity id, ACS URL and certificate are all set. With `samlOnDomain` false,
 * the domain as current PostHog serves it (posthog/api/organization_domain.py `OrganizationDomainSerializer`): no
 * `saml_*` fields, SAML and SCIM living in a linked `identity_provider_config` (its id; none here, so null, and
 * `has_saml`, `has_scim`, `has_id_jag` false).
 */
export const domainJson = (d: DomainRecord, samlOnDomain = true) => {
  const common = {
    id: d.id,
    domain: d.domain,
    is_verified: d.verified_at !== null,
    verified_at: d.verified_at,
    verification_challenge: d.verification_challenge,
    jit_provisioning_enabled: d.jit_provisioning_enabled,
    sso_enforcement: d.sso_enforcement,
  };
  if (!samlOnDomain) {
    return {
      ...common,
      has_saml: false,
      has_scim: false,
      scim_base_url: null,
      has_id_jag: false,
      identity_provider_config: null,
    };
  }
  return {
    ...common,
    has_saml: Boolean(d.saml_entity_id && d.saml_acs_url && d.saml_x509_cert),
    saml_entity_id: d.saml_entity_id,
    saml_acs_url: d.saml_acs_url,
    saml_x509_cert: d.saml_x509_cert,
  };
};

const INVITE_VALIDITY_MS = 3 * 24 * 3600 * 1000;

/** §2.4 invite (send_email and combine_pending_invites are write-only, as in the real service). */
export const inviteJson = (world: World, i: InviteRecord) => {
  const creator = world.users.find((u) => u.id === i.created_by_id);
  return {
    id: i.id,
    target_email: i.target_email,
    first_name: i.first_name,
    emailing_attempt_made: i.emailing_attempt_made,
    level: i.level,
    is_expired: isInviteExpired(world, i),
    created_by: creator ? userJson(creator) : null,
    created_at: i.created_at,
    updated_at: i.updated_at,
    message: i.message,
    private_project_access: i.private_project_access,
  };
};

/** An invite expires 3 days (of the emulator's clock) after it was created. */
export const isInviteExpired = (world: World, i: InviteRecord): boolean =>
  Date.parse(i.created_at) < nowMs(world) - INVITE_VALIDITY_MS;

/** §2.5 member. */
export const memberJson = (world: World, m: MembershipRecord) => {
  const user = world.users.find((u) => u.id === m.user_id);
  return {
    id: m.id,
    user: user ? userJson(user) : null,
    level: m.level,
    joined_at: m.joined_at,
    updated_at: m.updated_at,
    last_login: user?.last_login ?? null,
    is_2fa_enabled: false,
    has_social_auth: false,
  };
};

/** §2.6 project list subset. */
export const projectListJson = (world: World, p: ProjectRecord) => ({
  id: p.id,
  uuid: p.uuid,
  organization: world.organization.id,
  api_token: p.api_token,
  name: p.name,
  completed_snippet_onboarding: p.settings.completed_snippet_onboarding,
  has_completed_onboarding_for: p.settings.has_completed_onboarding_for,
  ingested_event: false,
  is_demo: p.settings.is_demo,
  timezone: p.settings.timezone,
  access_control: p.settings.access_control,
});

/** §2.6 full project; `effective_membership_level` is the acting user's level. */
export const projectJson = (world: World, p: ProjectRecord, level: number | null) => {
  const s = p.settings;
  return {
    id: p.id,
    uuid: p.uuid,
    organization: world.organization.id,
    api_token: p.api_token,
    name: p.name,
    product_description: s.product_description,
    created_at: p.created_at,
    updated_at: p.updated_at,
    effective_membership_level: level,
    has_group_types: false,
    live_events_token: p.live_events_token,
    app_urls: s.app_urls,
    slack_incoming_webhook: s.slack_incoming_webhook,
    anonymize_ips: s.anonymize_ips,
    completed_snippet_onboarding: s.completed_snippet_onboarding,
    ingested_event: false,
    test_account_filters: s.test_account_filters,
    test_account_filters_default_checked: s.test_account_filters_default_checked,
    path_cleaning_filters: s.path_cleaning_filters,
    is_demo: s.is_demo,
    timezone: s.timezone,
    data_attributes: s.data_attributes,
    person_display_name_properties: s.person_display_name_properties,
    correlation_config: s.correlation_config,
    autocapture_opt_out: s.autocapture_opt_out,
    autocapture_exceptions_opt_in: s.autocapture_exceptions_opt_in,
    autocapture_web_vitals_opt_in: s.autocapture_web_vitals_opt_in,
    autocapture_web_vitals_allowed_metrics: s.autocapture_web_vitals_allowed_metrics,
    autocapture_exceptions_errors_to_ignore: s.autocapture_exceptions_errors_to_ignore,
    capture_console_log_opt_in: s.capture_console_log_opt_in,
    capture_performance_opt_in: s.capture_performance_opt_in,
    session_recording_opt_in: s.session_recording_opt_in,
    session_recording_sample_rate: s.session_recording_sample_rate,
    session_recording_minimum_duration_milliseconds: s.session_recording_minimum_duration_milliseconds,
    session_recording_linked_flag: s.session_recording_linked_flag,
    session_recording_network_payload_capture_config: s.session_recording_network_payload_capture_config,
    session_replay_config: s.session_replay_config,
    survey_config: s.survey_config,
    access_control: s.access_control,
    week_start_day: s.week_start_day,
    primary_dashboard: s.primary_dashboard,
    live_events_columns: s.live_events_columns,
    recording_domains: s.recording_domains,
    person_on_events_querying_enabled: "true",
    inject_web_apps: s.inject_web_apps,
    extra_settings: s.extra_settings,
    modifiers: s.modifiers,
    default_modifiers: "{}",
    has_completed_onboarding_for: s.has_completed_onboarding_for,
    surveys_opt_in: s.surveys_opt_in,
    heatmaps_opt_in: s.heatmaps_opt_in,
    product_intents: "[]",
  };
};

/**
 * The organization's `slug` as PostHog makes it from a name (posthog/models/utils.py `create_with_slug`:
 * `slugify(name)[:MAX_SLUG_LENGTH]`, Django's `slugify`): ASCII only (NFKD, the rest dropped), lowercase, characters
 * other than letters, digits, `_`, `-` and white space dropped, each run of `-` and white space one `-`, no
 * leading or trailing `-` or `_`, then the first 48 characters; "organization" if nothing is left (PostHog
 * refuses an empty name). The emulator's organization is never renamed, so its slug never changes. Linear time.
 */
export function organizationSlug(name: string): string {
  let slug = "";
  let gap = false;
  for (const ch of name.normalize("NFKD")) {
    const code = ch.codePointAt(0) ?? 0;
    if (code > 0x7f) continue;
    const c = ch.toLowerCase();
    if ((c >= "a" && c <= "z") || (c >= "0" && c <= "9") || c === "_") {
      if (gap && slug !== "") slug += "-";
      gap = false;
      slug += c;
    } else if (c === "-" || c === " " || (code >= 9 && code <= 13) || (code >= 0x1c && code <= 0x1f)) {
      gap = true; // Python's \s: ASCII white space and the separators U+001C to U+001F
    }
  }
  const edge = (c: string | undefined) => c === "-" || c === "_";
  let start = 0;
  while (start < slug.length && edge(slug[start])) start++;
  let end = slug.length;
  while (end > start && edge(slug[end - 1])) end--;
  return slug.slice(start, end).slice(0, 48) || "organization";
}

/**
 * The product features the emulator serves as available (PostHog's `available_product_features`, entries
 * `{key, name}` as a self-hosted licence lists them; keys of posthog/constants.py `AvailableFeature`): with paid
 * features, `advanced_permissions` (restriction level 37, collaborators), `organizations_projects` (more than one
 * non-demo project) and `tagging` (dashboard tags); always `saml` and `sso_enforcement`, which the emulator never
 * refuses.
 */
export const availableFeatures = (paidFeatures: boolean) => [
  ...(paidFeatures
    ? [
        { key: "advanced_permissions", name: "Advanced permissions" },
        { key: "organizations_projects", name: "Projects" },
        { key: "tagging", name: "Tagging" },
      ]
    : []),
  { key: "saml", name: "SAML" },
  { key: "sso_enforcement", name: "SSO enforcement" },
];

/**
 * The organization as PostHog's `OrganizationSerializer` answers it (posthog/api/organization.py; fields of the
 * published OpenAPI `Organization`) for a member of `level`. What the emulator knows comes from the world: id,
 * name, slug (from the name), `created_at` (also `updated_at`: the organization never changes), the member's
 * level, `teams` (PostHog's `TeamBasicSerializer`) and `projects` (`ProjectBasicSerializer`) of every project,
 * `member_count`, the features and `allow_publicly_shared_resources` (sharing needs the paid features here). The
 * rest are the model's defaults on PostHog Cloud (posthog/models/organization.py): plugins level 3 ("config"), no
 * billing customer, no logo or default role, 2FA not enforced, members may invite and use personal API keys.
 * `metadata` and `member_count` are an object and an integer, as the service answers them (the OpenAPI types these
 * method fields as strings).
 */
export const organizationJson = (world: World, level: number, paidFeatures: boolean) => {
  const org = world.organization;
  const projects = [...world.projects].sort((a, b) => a.id - b.id);
  return {
    id: org.id,
    name: org.name,
    slug: organizationSlug(org.name),
    logo_media_id: null,
    created_at: org.created_at,
    updated_at: org.created_at,
    membership_level: level,
    plugins_access_level: 3,
    teams: projects.map((p) => ({
      id: p.id,
      uuid: p.uuid,
      organization: org.id,
      project_id: p.id,
      api_token: p.api_token,
      name: p.name,
      completed_snippet_onboarding: p.settings.completed_snippet_onboarding,
      has_completed_onboarding_for: p.settings.has_completed_onboarding_for,
      ingested_event: false,
      is_demo: p.settings.is_demo,
      timezone: p.settings.timezone,
      access_control: p.settings.access_control,
    })),
    projects: projects.map((p) => ({ id: p.id, organization_id: org.id, name: p.name })),
    available_product_features: availableFeatures(paidFeatures),
    is_member_join_email_enabled: true,
    metadata: { instance_tag: "none" },
    customer_id: null,
    enforce_2fa: null,
    members_can_invite: true,
    members_can_use_personal_api_keys: true,
    allow_publicly_shared_resources: paidFeatures,
    member_count: world.memberships.length,
    is_ai_data_processing_approved: null,
    default_experiment_stats_method: "bayesian",
    default_anonymize_ips: false,
    default_role_id: null,
    is_active: true,
    is_not_active_reason: null,
  };
};

/** §2.8 collaborator. */
export const collaboratorJson = (world: World, c: CollaboratorRecord) => {
  const user = world.users.find((u) => u.id === c.user_id);
  return {
    id: c.id,
    dashboard_id: c.dashboard_id,
    user: user ? userJson(user) : null,
    level: c.level,
    added_at: c.added_at,
    updated_at: c.updated_at,
  };
};
