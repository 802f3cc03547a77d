/**
 * Organization invites. Endpoints: `/api/organizations/:organization_id/invites/` (+ `:id/`, `bulk/`).
 * There is no retrieve endpoint: {@link invites}.find reads the (shared, short-lived) list.
 */
import { z } from "zod";
import {
  type ClientContext,
  call,
  listOperations,
  type OrgParams,
  type PageParams,
  parseBody,
  sharedAll,
  UserSchema,
} from "./common";
import { InvalidInputError } from "./errors";
import { path } from "./transport";

/** Organization membership levels: 1 member, 8 administrator, 15 owner. */
export const OrganizationLevelSchema = z.literal([1, 8, 15]);
export type OrganizationLevel = z.output<typeof OrganizationLevelSchema>;

/**
 * The access levels an invite may give to a private project, as PostHog accepts them on create:
 * `ACCESS_CONTROL_LEVELS_MEMBER` (posthog/rbac/user_access_control.py), checked by
 * posthog/models/organization_invite.py `validate_private_project_access`.
 */
export const PROJECT_ACCESS_LEVELS = ["none", "member", "admin"] as const;

/**
 * One entry of `private_project_access` as PostHog answers it: a project (team) id and the access level in it,
 * "none", "member" or "admin" (posthog/models/organization_invite.py `validate_private_project_access`,
 * `ACCESS_CONTROL_LEVELS_MEMBER`), or, in invites stored before access control, the integer of the deprecated
 * `ExplicitTeamMembership.Level`: 1 member, 8 administrator (ee/models/explicit_team_membership.py).
 */
export const PrivateProjectAccessSchema = z.looseObject({
  id: z.number().int(),
  level: z.union([z.string(), z.number().int()]),
});
export type PrivateProjectAccess = z.output<typeof PrivateProjectAccessSchema>;

/**
 * The access level of a `private_project_access` entry by name: a legacy integer (1, 8) becomes "member" or
 * "admin"; any other integer its decimal text; a name is kept as it is.
 */
export function projectAccessLevelName(level: PrivateProjectAccess["level"]): string {
  if (typeof level === "string") return level;
  return level === 1 ? "member" : level === 8 ? "admin" : String(level);
}

/**
 * An invite as returned by the API. `send_email`/`combine_pending_invites` are write-only. `target_email` may be
 * null: PostHog's model allows it (`EmailField(null=True)`), though its API never creates such an invite.
 */
export const InviteSchema = z.looseObject({
  id: z.string(),
  target_email: z.string().nullish(),
  first_name: z.string().nullish(),
  emailing_attempt_made: z.boolean().nullish(),
  level: z.number().int(),
  is_expired: z.boolean().nullish(),
  created_by: UserSchema.nullish(),
  created_at: z.string().nullish(),
  updated_at: z.string().nullish(),
  message: z.string().nullish(),
  private_project_access: z.array(PrivateProjectAccessSchema).nullish(),
});
export type Invite = z.output<typeof InviteSchema>;

/** Create body: `target_email` required; `level` 1/8/15 (default 1); `send_email` defaults to true on the server. */
export const InviteCreateBodySchema = z.looseObject({
  target_email: z.email("expected an e-mail address"),
  first_name: z.string().max(30).optional(),
  level: OrganizationLevelSchema.optional(),
  message: z.string().nullish(),
  private_project_access: z
    .array(z.looseObject({ id: z.number().int(), level: z.enum(PROJECT_ACCESS_LEVELS) }))
    .nullish(),
  send_email: z.boolean().optional(),
  combine_pending_invites: z.boolean().optional(),
});
export type InviteCreateBody = z.input<typeof InviteCreateBodySchema>;

/** Bulk create body: 1 to 20 invites. */
export const InviteBulkBodySchema = z.array(InviteCreateBodySchema).min(1).max(20);

/** Bulk answer: "200, no body" in the seed, 201 with an array of invites in the real service. */
export const InviteBulkResponseSchema = z.union([z.undefined(), z.array(InviteSchema)]);

/** Find one invite by id or by e-mail (case-insensitive). */
export type InviteFindParams = OrgParams &
  ({ id: string; email?: undefined } | { email: string; id?: undefined });

const listPath = (ctx: ClientContext, p: OrgParams | undefined) =>
  path`/api/organizations/${ctx.org(p)}/invites/`;

/** Operations on invites. */
export function invites(ctx: ClientContext) {
  const reads = listOperations(ctx, (p?: OrgParams & PageParams) => listPath(ctx, p), InviteSchema);
  return {
    /** GET `/api/organizations/:organization_id/invites/` (organization_member:read): `list` (one page), `iterate`, `all`. */
    ...reads,
    /**
     * POST `…/invites/` (organization_member:write) → 201 invite. Replaces earlier invites for the same e-mail.
     * @throws InvalidInputError (before sending), ValidationError (e.g. already a member), ForbiddenError
     */
    create: async (p: OrgParams & { body: InviteCreateBody }) =>
      call(
        ctx,
        {
          method: "POST",
          path: listPath(ctx, p),
          body: parseBody(InviteCreateBodySchema, p.body, "body"),
          signal: p.signal,
        },
        InviteSchema,
      ),
    /** POST `…/invites/bulk/` with 1–20 invites → the created invites (real service) or undefined (seed). */
    bulkCreate: async (p: OrgParams & { body: InviteCreateBody[] }) =>
      call(
        ctx,
        {
          method: "POST",
          path: path`/api/organizations/${ctx.org(p)}/invites/bulk/`,
          body: parseBody(InviteBulkBodySchema, p.body, "body"),
          signal: p.signal,
        },
        InviteBulkResponseSchema,
      ),
    /** DELETE `…/invites/:id/` (organization_member:write) → 204. */
    delete: async (p: OrgParams & { id: string }): Promise<void> => {
      await call(
        ctx,
        { method: "DELETE", path: path`/api/organizations/${ctx.org(p)}/invites/${p.id}/`, signal: p.signal },
        z.unknown(),
      );
    },
    /**
     * The invite with this id or e-mail (compared case-insensitively; invites without one never match), or
     * undefined. Served from a list read shared by concurrent and
     * recent `find()` calls (see `coalescing.findCacheMs`): N finds cost one list read (count/pageSize pages).
     */
    find: async (p: InviteFindParams): Promise<Invite | undefined> => {
      if (p.id === undefined && typeof p.email !== "string") {
        throw new InvalidInputError("id", "Invalid find parameters: expected id or email");
      }
      const items = await sharedAll(ctx, listPath(ctx, p), InviteSchema);
      if (p.id !== undefined) return items.find((i) => i.id === p.id);
      const email = p.email.toLowerCase();
      // an invite without an e-mail address (null) is never the one asked for
      return items.find((i) => typeof i.target_email === "string" && i.target_email.toLowerCase() === email);
    },
  };
}
