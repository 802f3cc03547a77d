/**
 * Bodies as the real PostHog answers them where the emulator (which follows the API reference) cannot: each read
 * from PostHog's source (PostHog/posthog), for the fake server of test/support/fake-posthog.ts.
 */
import { page, userBasic } from "./fake-posthog";

/** The organization and project the bodies belong to. */
export const ORG = "0190f0e2-1111-7000-8000-000000000001";
export const PROJECT = 2;
export const ORG_PATH = `/api/organizations/${ORG}`;
export const DASHBOARDS_PATH = `/api/projects/${PROJECT}/dashboards`;

const owner = userBasic(1, "owner@example.com");
const at = "2026-01-05T10:00:00Z";

/** The project (posthog/api/project.py `ProjectBackwardCompatSerializer`, abridged): the access check reads it. */
export const project = {
  id: PROJECT,
  uuid: "0190f0e2-2222-7000-8000-000000000002",
  organization: ORG,
  api_token: "phc_fake0000000000000000000000000000000000000",
  name: "Default project",
  timezone: "UTC",
  access_control: false,
  is_demo: false,
  completed_snippet_onboarding: true,
  has_completed_onboarding_for: null,
  ingested_event: true,
};

/** An insight as `InsightSerializer` serves it in a tile, minus `id` (products/product_analytics/backend/api/insight.py). */
const insightWithoutId = {
  short_id: "aB3dE5gH",
  name: "Weekly signups",
  derived_name: null,
  filters: {},
  query: {
    kind: "InsightVizNode",
    source: { kind: "TrendsQuery", series: [{ kind: "EventsNode", event: "signup" }] },
  },
  dashboards: [7],
  dashboard_tiles: [],
  description: "",
  last_refresh: null,
  result: null,
  deleted: false,
  saved: true,
  tags: [],
  created_by: owner,
  created_at: at,
  effective_restriction_level: 21,
  effective_privilege_level: 37,
  user_access_level: "editor",
  is_cached: false,
};

/**
 * The tiles of dashboard 7 (products/dashboards/backend/api/dashboard.py `DashboardTileSerializer`, whose `id` is
 * `required=False`; `ButtonTileSerializer` for the button): an insight tile and a text tile without ids (their
 * insight and text without ids too), PostHog's button tile, and a tile as the API reference allows it ("objects
 * with free-form keys"): a button whose `text` is its label.
 */
export const tiles = [
  {
    insight: insightWithoutId,
    text: null,
    button_tile: null,
    widget: null,
    layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } },
    color: null,
    filters_overrides: {},
    show_description: null,
    transparent_background: null,
    order: 0,
    last_refresh: null,
    is_cached: false,
  },
  {
    insight: null,
    text: {
      body: "Read me first",
      created_by: owner,
      last_modified_by: null,
      last_modified_at: at,
      team: PROJECT,
      dashboard_tiles: [],
    },
    button_tile: null,
    widget: null,
    layouts: { sm: { x: 6, y: 0, w: 6, h: 5 } },
    color: "blue",
    order: 1,
    last_refresh: null,
    is_cached: false,
  },
  {
    id: 31,
    insight: null,
    text: null,
    button_tile: {
      id: 4,
      url: "https://posthog.com/docs",
      text: "Docs",
      placement: "right",
      created_by: owner,
      last_modified_by: null,
      last_modified_at: at,
      dashboard_tiles: [{ id: 31, dashboard_id: 7, deleted: false }],
      team: PROJECT,
    },
    widget: null,
    layouts: { sm: { x: 0, y: 5, w: 12, h: 1 } },
    color: null,
    order: 2,
    last_refresh: null,
    is_cached: false,
  },
  { id: 32, type: "button", text: "Open the runbook", url: "/runbook", layouts: { sm: { x: 0, y: 6 } } },
];

/** Dashboard 7's list item (`DashboardBasicSerializer`). */
export const dashboardItem = {
  id: 7,
  name: "Launch",
  description: "",
  pinned: false,
  created_at: at,
  created_by: owner,
  last_accessed_at: null,
  last_viewed_at: null,
  folder: null,
  is_shared: false,
  deleted: false,
  creation_mode: "default",
  tags: [],
  restriction_level: 21,
  effective_restriction_level: 21,
  effective_privilege_level: 37,
  user_access_level: "editor",
  access_control_version: "v2",
  last_refresh: null,
  team_id: PROJECT,
};

/** Dashboard 7's detail (`DashboardSerializer`). */
export const dashboardDetail = {
  ...dashboardItem,
  filters: {},
  variables: {},
  breakdown_colors: [],
  data_color_theme_id: null,
  persisted_filters: null,
  persisted_variables: null,
  quick_filter_ids: [],
  tiles,
};

const invite = (id: string, target_email: string | null, access: unknown) => ({
  id,
  target_email,
  first_name: "",
  emailing_attempt_made: true,
  level: 1,
  is_expired: false,
  created_by: owner,
  created_at: at,
  updated_at: at,
  message: null,
  private_project_access: access,
});

/**
 * Invites (posthog/api/organization_invite.py `OrganizationInviteSerializer`; posthog/models/organization_invite.py:
 * `target_email` is `EmailField(null=True)`, `private_project_access` a JSON list whose levels were the integers of
 * ee/models/explicit_team_membership.py, 1 member and 8 administrator, before access control's "none", "member",
 * "admin").
 */
export const invites = {
  legacyAdmin: invite("0190f0e2-3333-7000-8000-000000000001", "legacy.admin@example.com", [
    { id: PROJECT, level: 8 },
  ]),
  legacyMember: invite("0190f0e2-3333-7000-8000-000000000002", "legacy.member@example.com", [
    { id: PROJECT, level: 1 },
  ]),
  noAccess: invite("0190f0e2-3333-7000-8000-000000000003", "no.access@example.com", [
    { id: PROJECT, level: "none" },
  ]),
  noEmail: invite("0190f0e2-3333-7000-8000-000000000004", null, null),
};

/**
 * A domain as current PostHog serves it (posthog/api/organization_domain.py `OrganizationDomainSerializer`): no
 * `saml_*` fields; SAML and SCIM live in the linked `identity_provider_config` (the id of an
 * `IdentityProviderConfig`, a UUID, or null).
 */
export const domain = {
  id: "0190f0e2-4444-7000-8000-000000000001",
  domain: "corp.example.com",
  is_verified: true,
  verified_at: at,
  verification_challenge: "Yq3oQz5t0bC9kLh2xWm8nRf4aSd7gUe1vJ6pTy0iOZc",
  jit_provisioning_enabled: false,
  sso_enforcement: "saml",
  has_saml: true,
  has_scim: false,
  scim_base_url: null,
  has_id_jag: false,
  identity_provider_config: "0190f0e2-5555-7000-8000-000000000001",
};

/** The routes of the fake server serving the bodies above (the access check's project included). */
export const realRoutes = () => ({
  [`GET ${ORG_PATH}/projects/${PROJECT}/`]: { body: project },
  [`GET ${ORG_PATH}/projects/`]: { body: page([project]) },
  [`GET ${ORG_PATH}/invites/`]: { body: page(Object.values(invites)) },
  [`GET ${DASHBOARDS_PATH}/`]: { body: page([dashboardItem]) },
  [`GET ${DASHBOARDS_PATH}/7/`]: { body: dashboardDetail },
  [`GET ${ORG_PATH}/domains/`]: { body: page([domain]) },
  [`GET ${ORG_PATH}/domains/${domain.id}/`]: { body: domain },
});
