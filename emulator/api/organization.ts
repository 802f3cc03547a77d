import { randomUUID } from "node:crypto";
import { forbidden, invalid, notFound } from "../errors";
import { type Ctx, type Operation, paginate, parseBody } from "../runtime";
import {
  DomainCreateSchema,
  DomainUpdateSchema,
  type InviteCreate,
  InviteCreateSchema,
  MemberUpdateSchema,
  PauseSchema,
  ProjectWriteSchema,
} from "../schemas";
import {
  batchExportJson,
  domainJson,
  type InviteRecord,
  inviteJson,
  isInviteExpired,
  type MembershipRecord,
  memberJson,
  newProjectRecord,
  organizationJson,
  PROJECT_ACCESS_LEVELS,
  type ProjectAccessLevel,
  projectJson,
  projectListJson,
  tokenUrlsafe,
  type World,
} from "../world";
import { ADMIN, created, intParam, isUuid, noContent, ORG, OWNER, ok, requireAdmin } from "./common";

/** Organization-scope operations: the organization itself, batch exports, domains, invites, members, projects. */

// ---------------------------------------------------------------------------------------------
// The organization (posthog/api/organization.py `OrganizationViewSet`: list and retrieve)

/** Whether the key may see the organization (a key limited to other organizations may not). */
const keySeesOrganization = (ctx: Ctx): boolean =>
  ctx.key.organizations === null || ctx.key.organizations.includes(ctx.world.organization.id);

/** The retrieve's 404s: PostHog's detail for `@current` of a user in no organization, else "Not found.". */
const organizationNotFound = (id: string | undefined) =>
  notFound(id === "@current" ? "Current organization not found." : undefined);

const organizationOps: Operation[] = [
  {
    // The user's organizations (here the one, or none), less those the key is not limited to; paginated.
    method: "GET",
    url: "/api/organizations/",
    scope: "organization:read",
    parent: "organizations",
    withoutMembership: (request) => ok(paginate(request, [])),
    handle: (ctx) => {
      const mine = keySeesOrganization(ctx)
        ? [organizationJson(ctx.world, ctx.membership.level, ctx.emu.paidFeatures)]
        : [];
      return ok(paginate(ctx.request, mine));
    },
  },
  {
    // By id: the user's organizations filtered by the key's (else 404 "Not found."). `@current`: the user's
    // organization, whatever the key's list; then 403 when the key is limited to others (APIScopePermission).
    method: "GET",
    url: `${ORG}/`,
    scope: "organization:read",
    parent: "organizations",
    withoutMembership: (request) => {
      throw organizationNotFound((request.params as Record<string, string>).organization_id);
    },
    handle: (ctx) => {
      const org = ctx.world.organization;
      const id = ctx.params.organization_id;
      if (id === "@current") {
        if (!keySeesOrganization(ctx)) {
          throw forbidden(`API key does not have access to the requested organization: ID ${org.id}.`);
        }
      } else if (id !== org.id || !keySeesOrganization(ctx)) {
        throw organizationNotFound(id);
      }
      return ok(organizationJson(ctx.world, ctx.membership.level, ctx.emu.paidFeatures));
    },
  },
];

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
      // As PostHog answers (products/batch_exports/backend/api/batch_export.py `pause`); the reference: no body.
      return ok({ paused: true });
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
      // As PostHog answers (`unpause`: `{"paused": false}`); the reference: no body.
      return ok({ paused: false });
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
      const items = [...ctx.world.domains]
        .sort((a, b) => a.domain.localeCompare(b.domain))
        .map((d) => domainJson(d, ctx.emu.samlOnDomain));
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
      // jit_provisioning_enabled and sso_enforcement are silently dropped: the domain is unverified. So are the
      // saml_* fields by a PostHog that keeps SAML in identity_provider_config (unknown fields to its serializer).
      const saml: Partial<typeof body> = ctx.emu.samlOnDomain ? body : {};
      const domain = {
        id: randomUUID(),
        domain: body.domain,
        verified_at: null,
        verification_challenge: tokenUrlsafe(32),
        jit_provisioning_enabled: false,
        sso_enforcement: "",
        saml_entity_id: saml.saml_entity_id ?? null,
        saml_acs_url: saml.saml_acs_url ?? null,
        saml_x509_cert: saml.saml_x509_cert ?? null,
      };
      ctx.world.domains.push(domain);
      return created(domainJson(domain, ctx.emu.samlOnDomain));
    },
  },
  {
    method: "GET",
    url: `${ORG}/domains/:id/`,
    scope: "organization:read",
    parent: "organization",
    handle: (ctx) => ok(domainJson(findDomain(ctx), ctx.emu.samlOnDomain)),
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
      if (ctx.emu.samlOnDomain) {
        if (body.saml_entity_id !== undefined) domain.saml_entity_id = body.saml_entity_id;
        if (body.saml_acs_url !== undefined) domain.saml_acs_url = body.saml_acs_url;
        if (body.saml_x509_cert !== undefined) domain.saml_x509_cert = body.saml_x509_cert;
      }
      return ok(domainJson(domain, ctx.emu.samlOnDomain));
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
      // As PostHog answers (posthog/api/organization_domain.py `verify`): 200 with the domain, whether or not the
      // TXT record matched; the reference: no body.
      return ok(domainJson(domain, ctx.emu.samlOnDomain));
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
    const byProject = new Map<number, ProjectAccessLevel>();
    for (const entry of [...pending.flatMap((i) => i.private_project_access), ...access]) {
      const current = byProject.get(entry.id);
      // the highest level per project wins (none < member < admin)
      if (
        current === undefined ||
        PROJECT_ACCESS_LEVELS.indexOf(entry.level) > PROJECT_ACCESS_LEVELS.indexOf(current)
      )
        byProject.set(entry.id, entry.level);
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
    invites: () => 1,
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
    invites: (body) => (Array.isArray(body) ? body.length : 1),
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
      // As PostHog answers (posthog/api/organization_invite.py `bulk`): 201 with the invites; the reference: 200,
      // no body.
      return created(prepared.map((invite) => inviteJson(ctx.world, invite)));
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

export const organizationOperations: Operation[] = [
  ...organizationOps,
  ...batchExportOps,
  ...domainOps,
  ...inviteOps,
  ...memberOps,
  ...projectOps,
];
