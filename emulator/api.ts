import { randomUUID } from "node:crypto";
import { forbidden, invalid, notFound } from "./errors";
import { type Ctx, hasKey, type Operation, paginate, parseBody, type Result } from "./runtime";
import {
  CollaboratorCreateSchema,
  CreateFromTemplateSchema,
  DashboardWriteSchema,
  DomainCreateSchema,
  DomainUpdateSchema,
  type InviteCreate,
  InviteCreateSchema,
  MemberUpdateSchema,
  MoveTileSchema,
  PauseSchema,
  ProjectWriteSchema,
  SharingUpdateSchema,
} from "./schemas";
import {
  batchExportJson,
  collaboratorJson,
  type DashboardRecord,
  domainJson,
  type InviteRecord,
  inviteJson,
  isInviteExpired,
  type MembershipRecord,
  memberJson,
  newProjectRecord,
  projectJson,
  projectListJson,
  type TileRecord,
  tokenUrlsafe,
  userJson,
  type World,
} from "./world";

const ORG = "/api/organizations/:organization_id";
const DASH = "/api/projects/:project_id/dashboards";
const ADMIN = 8;
const OWNER = 15;
const EVERYONE_CAN_EDIT = 21;
const ONLY_COLLABORATORS = 37;

const ok = (body?: unknown): Result => ({ status: 200, body });
const created = (body: unknown): Result => ({ status: 201, body });
const noContent: Result = { status: 204 };

const isUuid = (s: string | undefined): s is string =>
  typeof s === "string" && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
const intParam = (s: string | undefined): number | undefined =>
  s && /^\d+$/.test(s) ? Number(s) : undefined;

const requireAdmin = (ctx: Ctx): void => {
  if (ctx.membership.level < ADMIN) throw forbidden("Your organization access level is insufficient.");
};

// ---------------------------------------------------------------------------------------------
// Batch exports

const teamIds = (world: World): Set<number> => new Set(world.projects.map((p) => p.id));

const findBatchExport = (ctx: Ctx) => {
  const id = ctx.params.id;
  const teams = teamIds(ctx.world);
  const found = isUuid(id) && ctx.world.batchExports.find((b) => b.id === id && teams.has(b.team_id));
  if (!found) throw notFound();
  return found;
};

const batchExportOps: Operation[] = [
  {
    method: "GET",
    url: `${ORG}/batch_exports/`,
    scope: "batch_export:read",
    parent: "organization",
    handle: (ctx) => {
      const teams = teamIds(ctx.world);
      const items = ctx.world.batchExports.filter((b) => teams.has(b.team_id)).map(batchExportJson);
      return ok(paginate(ctx.request, items));
    },
  },
  {
    method: "GET",
    url: `${ORG}/batch_exports/:id/`,
    scope: "batch_export:read",
    parent: "organization",
    handle: (ctx) => ok(batchExportJson(findBatchExport(ctx))),
  },
  {
    method: "POST",
    url: `${ORG}/batch_exports/:id/pause/`,
    scope: "batch_export:write",
    parent: "organization",
    handle: (ctx) => {
      const batchExport = findBatchExport(ctx);
      parseBody(PauseSchema, ctx.body);
      if (!batchExport.paused) {
        batchExport.paused = true;
        batchExport.last_paused_at = ctx.now;
      }
      return ok();
    },
  },
  {
    method: "POST",
    url: `${ORG}/batch_exports/:id/unpause/`,
    scope: "batch_export:write",
    parent: "organization",
    handle: (ctx) => {
      const batchExport = findBatchExport(ctx);
      parseBody(PauseSchema, ctx.body);
      batchExport.paused = false;
      return ok();
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Domains

const findDomain = (ctx: Ctx) => {
  const id = ctx.params.id;
  const found = isUuid(id) && ctx.world.domains.find((d) => d.id === id);
  if (!found) throw notFound();
  return found;
};

const domainOps: Operation[] = [
  {
    method: "GET",
    url: `${ORG}/domains/`,
    scope: "organization:read",
    parent: "organization",
    handle: (ctx) => {
      const items = [...ctx.world.domains].sort((a, b) => a.domain.localeCompare(b.domain)).map(domainJson);
      return ok(paginate(ctx.request, items));
    },
  },
  {
    method: "POST",
    url: `${ORG}/domains/`,
    scope: "organization:write",
    parent: "organization",
    handle: (ctx) => {
      requireAdmin(ctx);
      const body = parseBody(DomainCreateSchema, ctx.body);
      if (ctx.world.domains.some((d) => d.domain === body.domain)) {
        throw invalid("domain with this domain already exists.", "domain", "unique");
      }
      // jit_provisioning_enabled and sso_enforcement are silently dropped: the domain is unverified.
      const domain = {
        id: randomUUID(),
        domain: body.domain,
        verified_at: null,
        verification_challenge: tokenUrlsafe(32),
        jit_provisioning_enabled: false,
        sso_enforcement: "",
        saml_entity_id: body.saml_entity_id ?? null,
        saml_acs_url: body.saml_acs_url ?? null,
        saml_x509_cert: body.saml_x509_cert ?? null,
      };
      ctx.world.domains.push(domain);
      return created(domainJson(domain));
    },
  },
  {
    method: "GET",
    url: `${ORG}/domains/:id/`,
    scope: "organization:read",
    parent: "organization",
    handle: (ctx) => ok(domainJson(findDomain(ctx))),
  },
  {
    method: "PATCH",
    url: `${ORG}/domains/:id/`,
    scope: "organization:write",
    parent: "organization",
    handle: (ctx) => {
      requireAdmin(ctx);
      const domain = findDomain(ctx);
      const body = parseBody(DomainUpdateSchema, ctx.body);
      if (domain.verified_at === null) {
        for (const attr of ["jit_provisioning_enabled", "sso_enforcement"] as const) {
          if (body[attr]) {
            throw invalid(
              "This attribute cannot be updated until the domain is verified.",
              attr,
              "verification_required",
            );
          }
        }
      }
      if (body.jit_provisioning_enabled !== undefined)
        domain.jit_provisioning_enabled = body.jit_provisioning_enabled;
      if (body.sso_enforcement !== undefined) domain.sso_enforcement = body.sso_enforcement;
      if (body.saml_entity_id !== undefined) domain.saml_entity_id = body.saml_entity_id;
      if (body.saml_acs_url !== undefined) domain.saml_acs_url = body.saml_acs_url;
      if (body.saml_x509_cert !== undefined) domain.saml_x509_cert = body.saml_x509_cert;
      return ok(domainJson(domain));
    },
  },
  {
    method: "DELETE",
    url: `${ORG}/domains/:id/`,
    scope: "organization:write",
    parent: "organization",
    handle: (ctx) => {
      requireAdmin(ctx);
      const domain = findDomain(ctx);
      ctx.world.domains = ctx.world.domains.filter((d) => d !== domain);
      return noContent;
    },
  },
  {
    method: "POST",
    url: `${ORG}/domains/:id/verify/`,
    scope: null,
    parent: "organization",
    handle: (ctx) => {
      requireAdmin(ctx);
      const domain = findDomain(ctx);
      if (domain.verified_at !== null) {
        throw invalid("This domain has already been verified.", null, "already_verified");
      }
      const txt = ctx.world.dns[`_posthog-challenge.${domain.domain}`];
      if (txt !== undefined && txt === domain.verification_challenge) domain.verified_at = ctx.now;
      // The seed: 200 with no body, whether or not the TXT record matched.
      return ok();
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Invites

const lowerDomain = (email: string): string => {
  const at = email.lastIndexOf("@");
  return `${email.slice(0, at)}@${email.slice(at + 1).toLowerCase()}`;
};

/** Validates one invite against the world (no mutation); returns the record to store. */
function prepareInvite(ctx: Ctx, body: InviteCreate, attrPrefix: string): InviteRecord {
  const attr = (name: string | null) => (attrPrefix ? (name ? `${attrPrefix}__${name}` : attrPrefix) : name);
  const email = lowerDomain(body.target_email);
  if (body.level > ctx.membership.level) {
    throw forbidden("You cannot invite a user with a higher permission level than your own.");
  }
  const members = new Set(
    ctx.world.memberships.map((m) => ctx.world.users.find((u) => u.id === m.user_id)?.email.toLowerCase()),
  );
  if (members.has(email.toLowerCase())) {
    throw invalid("A user with this email address already belongs to the organization.", attr(null));
  }
  const access = body.private_project_access ?? [];
  for (const entry of access) {
    if (!ctx.world.projects.some((p) => p.id === entry.id)) {
      throw invalid(
        "Project does not exist on this organization, or it is private and you do not have access to it.",
        attr("private_project_access"),
      );
    }
  }
  let level: number = body.level;
  let merged = access;
  if (body.combine_pending_invites) {
    const pending = ctx.world.invites.filter(
      (i) => i.target_email.toLowerCase() === email.toLowerCase() && !isInviteExpired(ctx.world, i),
    );
    const byProject = new Map<number, "member" | "admin">();
    for (const entry of [...pending.flatMap((i) => i.private_project_access), ...access]) {
      const current = byProject.get(entry.id);
      byProject.set(entry.id, current === "admin" || entry.level === "admin" ? "admin" : "member");
    }
    level = Math.max(level, ...pending.map((i) => i.level));
    merged = [...byProject].map(([id, lvl]) => ({ id, level: lvl }));
  }
  return {
    id: randomUUID(),
    target_email: email,
    first_name: body.first_name,
    emailing_attempt_made: body.send_email,
    level,
    created_by_id: ctx.user.id,
    created_at: ctx.now,
    updated_at: ctx.now,
    message: body.message,
    private_project_access: merged,
  };
}

/** Stores an invite, replacing every earlier invite for the same email. */
const storeInvite = (world: World, invite: InviteRecord): void => {
  world.invites = world.invites.filter(
    (i) => i.target_email.toLowerCase() !== invite.target_email.toLowerCase(),
  );
  world.invites.push(invite);
};

const inviteOps: Operation[] = [
  {
    method: "GET",
    url: `${ORG}/invites/`,
    scope: "organization_member:read",
    parent: "organization",
    handle: (ctx) => {
      const items = [...ctx.world.invites]
        .sort((a, b) => b.created_at.localeCompare(a.created_at))
        .map((i) => inviteJson(ctx.world, i));
      return ok(paginate(ctx.request, items));
    },
  },
  {
    method: "POST",
    url: `${ORG}/invites/`,
    scope: "organization_member:write",
    parent: "organization",
    handle: (ctx) => {
      const invite = prepareInvite(ctx, parseBody(InviteCreateSchema, ctx.body), "");
      storeInvite(ctx.world, invite);
      return created(inviteJson(ctx.world, invite));
    },
  },
  {
    method: "POST",
    url: `${ORG}/invites/bulk/`,
    scope: "organization_member:write",
    parent: "organization",
    handle: (ctx) => {
      if (!Array.isArray(ctx.body)) {
        throw invalid("This endpoint needs an array of data for bulk invite creation.");
      }
      if (ctx.body.length > 20) {
        throw invalid("A maximum of 20 invites can be sent in a single request.", null, "max_length");
      }
      const items = ctx.body.map((item, index) => parseBody(InviteCreateSchema, item, String(index)));
      const prepared = items.map((item, index) => prepareInvite(ctx, item, String(index)));
      for (const invite of prepared) storeInvite(ctx.world, invite);
      // The seed: 200 with no body.
      return ok();
    },
  },
  {
    method: "DELETE",
    url: `${ORG}/invites/:id/`,
    scope: "organization_member:write",
    parent: "organization",
    handle: (ctx) => {
      const id = ctx.params.id;
      const invite = isUuid(id) && ctx.world.invites.find((i) => i.id === id);
      if (!invite) throw notFound();
      requireAdmin(ctx);
      ctx.world.invites = ctx.world.invites.filter((i) => i !== invite);
      return noContent;
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Members

const findMember = (ctx: Ctx): MembershipRecord => {
  const id = ctx.params.user__uuid;
  const user =
    id === "@me"
      ? ctx.user
      : isUuid(id)
        ? ctx.world.users.find((u) => u.uuid === id.toLowerCase())
        : undefined;
  const membership = user && ctx.world.memberships.find((m) => m.user_id === user.id);
  if (!membership) throw notFound();
  return membership;
};

/** OrganizationMembership.validate_update of the real service, for the acting member. */
function validateMemberUpdate(actor: MembershipRecord, target: MembershipRecord, newLevel?: number): void {
  if (newLevel !== undefined) {
    if (target.id === actor.id) throw forbidden("You can't change your own access level.");
    if (newLevel === OWNER) {
      if (actor.level !== OWNER) {
        throw forbidden("You can only make another member owner if you're this organization's owner.");
      }
    } else if (newLevel > actor.level) {
      throw forbidden("You can only change access level of others to lower or equal to your current one.");
    }
  }
  if (target.id !== actor.id) {
    if (actor.level < ADMIN) throw forbidden("You can only edit others if you are an admin.");
    if (target.level > actor.level)
      throw forbidden("You can only edit others with level lower or equal to you.");
  }
}

const memberOps: Operation[] = [
  {
    method: "GET",
    url: `${ORG}/members/`,
    scope: "organization_member:read",
    parent: "organization",
    handle: (ctx) => {
      const items = [...ctx.world.memberships]
        .sort((a, b) => b.joined_at.localeCompare(a.joined_at) || a.user_id - b.user_id)
        .map((m) => memberJson(ctx.world, m));
      return ok(paginate(ctx.request, items));
    },
  },
  {
    method: "PATCH",
    url: `${ORG}/members/:user__uuid/`,
    scope: "organization_member:write",
    parent: "organization",
    handle: (ctx) => {
      const target = findMember(ctx);
      const body = parseBody(MemberUpdateSchema, ctx.body);
      validateMemberUpdate(ctx.membership, target, body.level);
      if (body.level !== undefined && body.level !== target.level) {
        target.level = body.level;
        target.updated_at = ctx.now;
      }
      return ok(memberJson(ctx.world, target));
    },
  },
  {
    method: "DELETE",
    url: `${ORG}/members/:user__uuid/`,
    scope: "organization_member:write",
    parent: "organization",
    handle: (ctx) => {
      const target = findMember(ctx);
      validateMemberUpdate(ctx.membership, target);
      if (target.level === OWNER) throw invalid("Cannot leave the organization as its owner!");
      ctx.world.memberships = ctx.world.memberships.filter((m) => m !== target);
      ctx.world.collaborators = ctx.world.collaborators.filter((c) => c.user_id !== target.user_id);
      return noContent;
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Projects

const findProject = (ctx: Ctx) => {
  const raw = ctx.params.id;
  const id = raw === "@current" ? ctx.user.current_team_id : intParam(raw);
  const project = ctx.world.projects.find((p) => p.id === id);
  if (!project) throw notFound();
  return project;
};

/** Projects the key may see (a key limited to other organizations sees none). */
const visibleProjects = (ctx: Ctx) =>
  ctx.key.organizations !== null && !ctx.key.organizations.includes(ctx.world.organization.id)
    ? []
    : [...ctx.world.projects].sort((a, b) => a.id - b.id);

const projectListOp = (url: string, parent: Operation["parent"]): Operation => ({
  method: "GET",
  url,
  scope: "project:read",
  parent,
  handle: (ctx) =>
    ok(
      paginate(
        ctx.request,
        visibleProjects(ctx).map((p) => projectListJson(ctx.world, p)),
      ),
    ),
});

const projectOps: Operation[] = [
  projectListOp(`${ORG}/projects/`, "organization"),
  projectListOp("/api/projects/", "user"),
  {
    method: "POST",
    url: `${ORG}/projects/`,
    scope: "project:write",
    parent: "organization",
    handle: (ctx) => {
      const body = parseBody(ProjectWriteSchema, ctx.body);
      if (!body.is_demo) requireAdmin(ctx);
      if (!ctx.emu.paidFeatures && !body.is_demo && ctx.world.projects.some((p) => !p.settings.is_demo)) {
        throw forbidden(
          "You have reached the maximum limit of allowed projects for your current plan. Upgrade your plan to be able to create and manage more projects.",
        );
      }
      const { name, ...settings } = body;
      const id = ctx.world.nextIds.project++;
      const project = newProjectRecord(id, randomUUID(), name ?? "Default project", ctx.now);
      Object.assign(project.settings, settings);
      ctx.world.projects.push(project);
      return created(projectJson(ctx.world, project, ctx.membership.level));
    },
  },
  {
    method: "GET",
    url: `${ORG}/projects/:id/`,
    scope: "project:read",
    parent: "organization",
    handle: (ctx) => ok(projectJson(ctx.world, findProject(ctx), ctx.membership.level)),
  },
  {
    method: "PATCH",
    url: `${ORG}/projects/:id/`,
    scope: "project:write",
    parent: "organization",
    handle: (ctx) => {
      const project = findProject(ctx);
      requireAdmin(ctx);
      const { name, ...settings } = parseBody(ProjectWriteSchema, ctx.body);
      if (
        settings.primary_dashboard !== undefined &&
        settings.primary_dashboard !== null &&
        !ctx.world.dashboards.some((d) => d.id === settings.primary_dashboard && d.team_id === project.id)
      ) {
        throw invalid(
          `Invalid pk "${settings.primary_dashboard}" - object does not exist.`,
          "primary_dashboard",
          "does_not_exist",
        );
      }
      if (name !== undefined) project.name = name;
      Object.assign(project.settings, settings);
      project.updated_at = ctx.now;
      return ok(projectJson(ctx.world, project, ctx.membership.level));
    },
  },
  {
    method: "DELETE",
    url: `${ORG}/projects/:id/`,
    scope: "project:write",
    parent: "organization",
    handle: (ctx) => {
      const project = findProject(ctx);
      requireAdmin(ctx);
      const w = ctx.world;
      const dashboards = new Set(w.dashboards.filter((d) => d.team_id === project.id).map((d) => d.id));
      w.projects = w.projects.filter((p) => p !== project);
      w.dashboards = w.dashboards.filter((d) => !dashboards.has(d.id));
      w.tiles = w.tiles.filter((t) => !dashboards.has(t.dashboard_id));
      w.insights = w.insights.filter((i) => i.team_id !== project.id);
      w.collaborators = w.collaborators.filter((c) => !dashboards.has(c.dashboard_id));
      w.sharing = w.sharing.filter((s) => !dashboards.has(s.dashboard_id));
      w.batchExports = w.batchExports.filter((b) => b.team_id !== project.id);
      for (const user of w.users) {
        if (user.current_team_id === project.id) user.current_team_id = w.projects[0]?.id ?? null;
      }
      return noContent;
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Dashboards

const TEMPLATES: Record<string, string[]> = {
  DEFAULT_APP: [
    "Daily active users (DAUs)",
    "Weekly active users (WAUs)",
    "Retention",
    "Growth accounting",
    "Referring domain (last 14 days)",
    "Pageview funnel, by browser",
  ],
  WEBSITE_TRAFFIC: [
    "Website unique users (last 14 days)",
    "Page views (last 14 days)",
    "Top pages",
    "Top referrers",
    "Device types",
  ],
};

const isProjectAdmin = (ctx: Ctx): boolean => ctx.membership.level >= ADMIN;
const effectiveRestriction = (ctx: Ctx, d: DashboardRecord): number =>
  ctx.emu.paidFeatures ? d.restriction_level : EVERYONE_CAN_EDIT;
const canRestrict = (ctx: Ctx, d: DashboardRecord): boolean =>
  d.created_by_id === ctx.user.id || isProjectAdmin(ctx);
const privilege = (ctx: Ctx, d: DashboardRecord): number => {
  if (effectiveRestriction(ctx, d) === EVERYONE_CAN_EDIT || canRestrict(ctx, d)) return ONLY_COLLABORATORS;
  return (
    ctx.world.collaborators.find((c) => c.dashboard_id === d.id && c.user_id === ctx.user.id)?.level ??
    EVERYONE_CAN_EDIT
  );
};
const canEdit = (ctx: Ctx, d: DashboardRecord): boolean =>
  effectiveRestriction(ctx, d) < ONLY_COLLABORATORS || privilege(ctx, d) >= ONLY_COLLABORATORS;

const isShared = (world: World, d: DashboardRecord): boolean =>
  world.sharing.find((s) => s.dashboard_id === d.id)?.enabled ?? false;

const layoutKey = (t: TileRecord): [number, number] => {
  const sm = t.layouts.sm as { x?: unknown; y?: unknown } | undefined;
  return [typeof sm?.y === "number" ? sm.y : 0, typeof sm?.x === "number" ? sm.x : 0];
};

const tilesJson = (world: World, d: DashboardRecord) =>
  world.tiles
    .filter((t) => t.dashboard_id === d.id && !t.deleted)
    .sort((a, b) => {
      const [ay, ax] = layoutKey(a);
      const [by, bx] = layoutKey(b);
      return ay - by || ax - bx || a.id - b.id;
    })
    .map((t, order) => {
      const insight = t.insight_id === null ? undefined : world.insights.find((i) => i.id === t.insight_id);
      return {
        id: t.id,
        insight: insight
          ? {
              id: insight.id,
              short_id: insight.short_id,
              name: insight.name,
              description: insight.description,
              query: insight.query,
              deleted: insight.deleted,
            }
          : null,
        text: t.text,
        layouts: t.layouts,
        color: t.color,
        order,
      };
    });

/** The dashboard list subset of seed §2.7. */
const dashboardBasicJson = (ctx: Ctx, d: DashboardRecord) => {
  const creator = ctx.world.users.find((u) => u.id === d.created_by_id);
  const editable = canEdit(ctx, d);
  return {
    id: d.id,
    name: d.name,
    description: d.description,
    pinned: d.pinned,
    created_at: d.created_at,
    created_by: creator ? userJson(creator) : null,
    is_shared: isShared(ctx.world, d),
    deleted: d.deleted,
    creation_mode: d.creation_mode,
    tags: d.tags,
    restriction_level: d.restriction_level,
    effective_restriction_level: effectiveRestriction(ctx, d),
    effective_privilege_level: privilege(ctx, d),
    user_access_level: editable ? "editor" : "viewer",
  };
};

/** The full dashboard of seed §2.7 (write-only fields omitted). */
const dashboardJson = (ctx: Ctx, d: DashboardRecord) => {
  const basic = dashboardBasicJson(ctx, d);
  return {
    id: basic.id,
    name: basic.name,
    description: basic.description,
    pinned: basic.pinned,
    created_at: basic.created_at,
    created_by: basic.created_by,
    is_shared: basic.is_shared,
    deleted: basic.deleted,
    creation_mode: basic.creation_mode,
    filters: d.filters,
    variables: d.variables,
    tags: basic.tags,
    tiles: tilesJson(ctx.world, d),
    restriction_level: basic.restriction_level,
    effective_restriction_level: basic.effective_restriction_level,
    effective_privilege_level: basic.effective_privilege_level,
    user_access_level: basic.user_access_level,
  };
};

/** A non-deleted dashboard of the route's project (`includeDeleted` for an undelete PATCH). */
const findDashboard = (ctx: Ctx, raw: string | undefined, includeDeleted = false, detail = "Not found.") => {
  const id = intParam(raw);
  const project = ctx.project;
  const found = ctx.world.dashboards.find(
    (d) => d.id === id && d.team_id === project?.id && (includeDeleted || !d.deleted),
  );
  if (!found) throw notFound(detail);
  return found;
};

const requireEdit = (
  ctx: Ctx,
  d: DashboardRecord,
  detail = "You don't have edit permissions for this dashboard.",
) => {
  if (!canEdit(ctx, d)) throw forbidden(detail);
};

const newInsight = (ctx: Ctx, name: string, description = "", query: unknown = null) => {
  const id = ctx.world.nextIds.insight++;
  const insight = {
    id,
    short_id: tokenUrlsafe(6).slice(0, 8),
    team_id: ctx.project?.id ?? 0,
    name,
    description,
    query,
    deleted: false,
  };
  ctx.world.insights.push(insight);
  return insight;
};

const addTile = (ctx: Ctx, tile: Omit<TileRecord, "id" | "deleted">): TileRecord => {
  const record = { ...tile, id: ctx.world.nextIds.tile++, deleted: false };
  ctx.world.tiles.push(record);
  return record;
};

const gridLayout = (index: number) => ({
  sm: { x: (index % 2) * 6, y: Math.floor(index / 2) * 5, w: 6, h: 5 },
});

const newDashboard = (ctx: Ctx, fields: Partial<DashboardRecord>): DashboardRecord => {
  const dashboard: DashboardRecord = {
    id: ctx.world.nextIds.dashboard++,
    team_id: ctx.project?.id ?? 0,
    name: "",
    description: "",
    pinned: false,
    created_at: ctx.now,
    created_by_id: ctx.user.id,
    deleted: false,
    creation_mode: "default",
    filters: {},
    variables: {},
    tags: [],
    restriction_level: EVERYONE_CAN_EDIT,
    ...fields,
  };
  ctx.world.dashboards.push(dashboard);
  return dashboard;
};

/** Soft delete (with optional `delete_insights`) or restore, as the real service does it. */
function setDeleted(ctx: Ctx, d: DashboardRecord, deleted: boolean, deleteInsights: boolean): void {
  const tiles = ctx.world.tiles.filter((t) => t.dashboard_id === d.id);
  if (deleted && !d.deleted) {
    if (deleteInsights) {
      for (const tile of tiles) {
        if (tile.deleted || tile.insight_id === null) continue;
        const uses = ctx.world.tiles.filter((t) => t.insight_id === tile.insight_id && !t.deleted).length;
        const insight = ctx.world.insights.find((i) => i.id === tile.insight_id);
        if (insight && uses === 1) insight.deleted = true;
      }
    }
    for (const tile of tiles) tile.deleted = true;
    for (const project of ctx.world.projects) {
      if (project.settings.primary_dashboard === d.id) project.settings.primary_dashboard = null;
    }
  } else if (!deleted && d.deleted) {
    for (const tile of tiles) {
      tile.deleted = false;
      const insight = ctx.world.insights.find((i) => i.id === tile.insight_id);
      if (insight) insight.deleted = false;
    }
  }
  d.deleted = deleted;
}

const dashboardOps: Operation[] = [
  {
    method: "GET",
    url: `${DASH}/`,
    scope: "dashboard:read",
    parent: "project",
    handle: (ctx) => {
      const items = ctx.world.dashboards
        .filter((d) => d.team_id === ctx.project?.id && !d.deleted && d.creation_mode !== "unlisted")
        .sort((a, b) => Number(b.pinned) - Number(a.pinned) || (a.name ?? "").localeCompare(b.name ?? ""))
        .map((d) => dashboardBasicJson(ctx, d));
      return ok(paginate(ctx.request, items));
    },
  },
  {
    method: "POST",
    url: `${DASH}/`,
    scope: "dashboard:write",
    parent: "project",
    handle: (ctx) => {
      const body = parseBody(DashboardWriteSchema, ctx.body);
      if (body.use_template !== undefined && body.use_dashboard !== undefined) {
        throw invalid("`use_dashboard` and `use_template` cannot be used together");
      }
      const template = body.use_template === undefined ? undefined : TEMPLATES[body.use_template];
      if (body.use_template !== undefined && body.use_template !== "" && !template) {
        throw invalid(`Invalid template provided: ${body.use_template}`, "use_template");
      }
      const source =
        body.use_dashboard === undefined
          ? undefined
          : ctx.world.dashboards.find(
              (d) => d.id === body.use_dashboard && d.team_id === ctx.project?.id && !d.deleted,
            );
      if (body.use_dashboard !== undefined && !source)
        throw invalid("Invalid value provided", "use_dashboard");
      const dashboard = newDashboard(ctx, {
        name: body.name === undefined ? "" : body.name,
        description: body.description ?? "",
        pinned: body.pinned ?? false,
        // Tags need the tagging feature; without it they are silently dropped, as in the real service.
        tags: ctx.emu.paidFeatures ? (body.tags ?? []) : [],
        restriction_level: body.restriction_level ?? EVERYONE_CAN_EDIT,
        filters: body.filters ?? source?.filters ?? {},
        variables: body.variables ?? source?.variables ?? {},
        creation_mode: template ? "template" : source ? "duplicate" : "default",
      });
      template?.forEach((name, index) => {
        const insight = newInsight(ctx, name);
        addTile(ctx, {
          dashboard_id: dashboard.id,
          insight_id: insight.id,
          text: null,
          layouts: gridLayout(index),
          color: null,
        });
      });
      if (source) {
        for (const tile of ctx.world.tiles.filter((t) => t.dashboard_id === source.id && !t.deleted)) {
          addTile(ctx, {
            dashboard_id: dashboard.id,
            insight_id: tile.insight_id,
            text: tile.text ? { id: ctx.world.nextIds.text++, body: tile.text.body } : null,
            layouts: structuredClone(tile.layouts),
            color: tile.color,
          });
        }
      }
      if (body.deleted) setDeleted(ctx, dashboard, true, body.delete_insights ?? false);
      return created(dashboardJson(ctx, dashboard));
    },
  },
  {
    method: "GET",
    url: `${DASH}/:id/`,
    scope: "dashboard:read",
    parent: "project",
    handle: (ctx) => ok(dashboardJson(ctx, findDashboard(ctx, ctx.params.id))),
  },
  {
    method: "PATCH",
    url: `${DASH}/:id/`,
    scope: "dashboard:write",
    parent: "project",
    handle: (ctx) => {
      const raw = ctx.body as Record<string, unknown> | undefined;
      const undelete = hasKey(raw, "deleted") && !raw?.deleted;
      const dashboard = findDashboard(ctx, ctx.params.id, undelete);
      requireEdit(ctx, dashboard);
      const body = parseBody(DashboardWriteSchema, ctx.body);
      if (body.restriction_level !== undefined && body.restriction_level !== dashboard.restriction_level) {
        if (!canRestrict(ctx, dashboard)) {
          throw forbidden(
            "Only the dashboard owner and project admins have the restriction rights required to change the dashboard's restriction level.",
          );
        }
      }
      const tiles = ctx.world.tiles.filter((t) => t.dashboard_id === dashboard.id);
      for (const [index, patch] of (body.tiles ?? []).entries()) {
        if (patch.id !== undefined && !tiles.some((t) => t.id === patch.id)) {
          throw invalid(`Tile ${patch.id} is not on this dashboard.`, `tiles__${index}__id`);
        }
        if (patch.id === undefined && !patch.text) {
          throw invalid("A new tile needs a text.", `tiles__${index}__text`);
        }
      }
      // Everything is valid: apply.
      if (body.name !== undefined) dashboard.name = body.name;
      if (body.description !== undefined) dashboard.description = body.description;
      if (body.pinned !== undefined) dashboard.pinned = body.pinned;
      if (body.tags !== undefined && ctx.emu.paidFeatures) dashboard.tags = body.tags;
      if (body.filters !== undefined) dashboard.filters = body.filters;
      if (body.variables !== undefined) dashboard.variables = body.variables;
      if (body.restriction_level !== undefined) dashboard.restriction_level = body.restriction_level;
      for (const patch of body.tiles ?? []) {
        const tile = tiles.find((t) => t.id === patch.id);
        if (!tile) {
          addTile(ctx, {
            dashboard_id: dashboard.id,
            insight_id: null,
            text: { id: ctx.world.nextIds.text++, body: patch.text?.body ?? "" },
            layouts: patch.layouts ?? {},
            color: patch.color ?? null,
          });
          continue;
        }
        if (patch.layouts !== undefined) tile.layouts = patch.layouts;
        if (patch.color !== undefined) tile.color = patch.color;
        if (patch.deleted !== undefined) tile.deleted = patch.deleted;
        if (patch.text && tile.text) tile.text.body = patch.text.body;
      }
      if (body.deleted !== undefined) setDeleted(ctx, dashboard, body.deleted, body.delete_insights ?? false);
      return ok(dashboardJson(ctx, dashboard));
    },
  },
  {
    method: "DELETE",
    url: `${DASH}/:id/`,
    scope: "dashboard:write",
    parent: "project",
    // Hard delete is refused with an empty 405 (soft delete is PATCH {"deleted": true}).
    handle: () => ({ status: 405 }),
  },
  {
    method: "GET",
    url: `${DASH}/:id/access_controls/`,
    scope: "access_control:read",
    parent: "project",
    handle: (ctx) => ok(dashboardJson(ctx, findDashboard(ctx, ctx.params.id))),
  },
  {
    method: "GET",
    url: `${DASH}/:id/global_access_controls/`,
    scope: "access_control:read",
    parent: "project",
    handle: (ctx) => ok(dashboardJson(ctx, findDashboard(ctx, ctx.params.id))),
  },
  {
    method: "PATCH",
    url: `${DASH}/:id/move_tile/`,
    scope: null,
    parent: "project",
    handle: (ctx) => {
      const source = findDashboard(ctx, ctx.params.id);
      requireEdit(ctx, source);
      const body = parseBody(MoveTileSchema, ctx.body);
      const tile = ctx.world.tiles.find(
        (t) => t.id === body.tile.id && t.dashboard_id === source.id && !t.deleted,
      );
      if (!tile) throw notFound();
      const target = findDashboard(ctx, String(body.toDashboard));
      requireEdit(ctx, target, "You don't have edit permissions for the destination dashboard.");
      tile.dashboard_id = target.id;
      // The seed: 200 with no body.
      return ok();
    },
  },
  {
    method: "POST",
    url: `${DASH}/create_from_template_json/`,
    scope: null,
    parent: "project",
    handle: (ctx) => {
      const { template } = parseBody(CreateFromTemplateSchema, ctx.body);
      const dashboard = newDashboard(ctx, {
        name: template.template_name,
        description: template.dashboard_description,
        filters: template.dashboard_filters,
        tags: ctx.emu.paidFeatures ? (template.tags ?? []) : [],
        creation_mode: "template",
      });
      template.tiles.forEach((tile, index) => {
        const type = tile.type.toUpperCase();
        const layouts = tile.layouts ?? gridLayout(index);
        if (type === "INSIGHT") {
          const insight = newInsight(ctx, tile.name ?? "", tile.description ?? "", tile.query ?? null);
          addTile(ctx, {
            dashboard_id: dashboard.id,
            insight_id: insight.id,
            text: null,
            layouts,
            color: tile.color ?? null,
          });
        } else if (type === "TEXT") {
          addTile(ctx, {
            dashboard_id: dashboard.id,
            insight_id: null,
            text: { id: ctx.world.nextIds.text++, body: tile.body ?? "" },
            layouts,
            color: tile.color ?? null,
          });
        }
      });
      return ok(dashboardJson(ctx, dashboard));
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Collaborators and sharing

const COLLAB = `${DASH}/:id/collaborators`;
const dashboardOf = (ctx: Ctx) => findDashboard(ctx, ctx.params.id, false, "Dashboard not found.");

const collaboratorOps: Operation[] = [
  {
    method: "GET",
    url: `${COLLAB}/`,
    scope: "dashboard:read",
    parent: "project",
    handle: (ctx) => {
      const dashboard = dashboardOf(ctx);
      // Not paginated: a plain JSON array, without the creator.
      const items = ctx.world.collaborators
        .filter((c) => c.dashboard_id === dashboard.id && c.user_id !== dashboard.created_by_id)
        .map((c) => collaboratorJson(ctx.world, c));
      return ok(items);
    },
  },
  {
    method: "POST",
    url: `${COLLAB}/`,
    scope: "dashboard:write",
    parent: "project",
    handle: (ctx) => {
      const dashboard = dashboardOf(ctx);
      requireEdit(ctx, dashboard);
      const body = parseBody(CollaboratorCreateSchema, ctx.body);
      if (effectiveRestriction(ctx, dashboard) <= EVERYONE_CAN_EDIT) {
        throw invalid("Cannot add collaborators to a dashboard on the lowest restriction level.");
      }
      if (body.level !== ONLY_COLLABORATORS)
        throw invalid("Only edit access can be explicitly specified currently.");
      const user = ctx.world.users.find((u) => u.uuid === body.user_uuid.toLowerCase());
      if (!user) throw invalid("User does not exist.");
      const membership = ctx.world.memberships.find((m) => m.user_id === user.id);
      if (!membership) throw invalid("Cannot add collaborators that have no access to the project.");
      if (user.id === dashboard.created_by_id || membership.level >= ADMIN) {
        throw invalid(
          "Cannot add collaborators that already have inherent access (the dashboard owner or a project admins).",
        );
      }
      if (ctx.world.collaborators.some((c) => c.dashboard_id === dashboard.id && c.user_id === user.id)) {
        throw invalid("User already is a collaborator.");
      }
      const collaborator = {
        id: randomUUID(),
        dashboard_id: dashboard.id,
        user_id: user.id,
        level: body.level,
        added_at: ctx.now,
        updated_at: ctx.now,
      };
      ctx.world.collaborators.push(collaborator);
      return created(collaboratorJson(ctx.world, collaborator));
    },
  },
  {
    method: "DELETE",
    url: `${COLLAB}/:user__uuid/`,
    scope: "dashboard:write",
    parent: "project",
    handle: (ctx) => {
      const dashboard = dashboardOf(ctx);
      requireEdit(ctx, dashboard);
      const uuid = ctx.params.user__uuid?.toLowerCase();
      const user = ctx.world.users.find((u) => u.uuid === uuid);
      const collaborator =
        user && ctx.world.collaborators.find((c) => c.dashboard_id === dashboard.id && c.user_id === user.id);
      if (!collaborator) throw notFound();
      if (effectiveRestriction(ctx, dashboard) <= EVERYONE_CAN_EDIT) {
        throw invalid("Cannot remove collaborators from a dashboard on the lowest restriction level.");
      }
      ctx.world.collaborators = ctx.world.collaborators.filter((c) => c !== collaborator);
      return noContent;
    },
  },
];

const sharingOps: Operation[] = [
  {
    method: "GET",
    url: `${DASH}/:id/sharing/`,
    scope: "sharing_configuration:read",
    parent: "project",
    handle: (ctx) => {
      const dashboard = dashboardOf(ctx);
      const config = ctx.world.sharing.find((s) => s.dashboard_id === dashboard.id);
      // Get-or-build: nothing is stored before the first PATCH, so each GET builds a fresh token.
      if (!config) return ok({ created_at: null, enabled: false, access_token: tokenUrlsafe(22) });
      return ok({
        created_at: config.created_at,
        enabled: config.enabled,
        access_token: config.access_token,
      });
    },
  },
  {
    method: "PATCH",
    url: `${DASH}/:id/sharing/`,
    scope: "sharing_configuration:write",
    parent: "project",
    handle: (ctx) => {
      const dashboard = dashboardOf(ctx);
      requireEdit(ctx, dashboard);
      const body = parseBody(SharingUpdateSchema, ctx.body);
      if (body.enabled && !ctx.emu.paidFeatures)
        throw forbidden("Public sharing is disabled for this organization.");
      let config = ctx.world.sharing.find((s) => s.dashboard_id === dashboard.id);
      if (!config) {
        config = {
          dashboard_id: dashboard.id,
          created_at: ctx.now,
          enabled: false,
          access_token: tokenUrlsafe(22),
        };
        ctx.world.sharing.push(config);
      }
      if (body.enabled !== undefined) config.enabled = body.enabled;
      return ok({
        created_at: config.created_at,
        enabled: config.enabled,
        access_token: config.access_token,
      });
    },
  },
];

/** Every operation of the emulated API (seed §4 plus the real service's reads the provider needs). */
export const operations: Operation[] = [
  ...batchExportOps,
  ...domainOps,
  ...inviteOps,
  ...memberOps,
  ...projectOps,
  ...dashboardOps,
  ...collaboratorOps,
  ...sharingOps,
];
