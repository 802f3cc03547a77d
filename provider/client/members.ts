/**
 * Organization members. Endpoints: `/api/organizations/:organization_id/members/` (+ `:user__uuid/`).
 * There is no retrieve endpoint: {@link members}.find reads the (shared, short-lived) list.
 */
import { z } from "zod";
import {
  type ClientContext,
  call,
  listOperations,
  type OrgParams,
  type PageParams,
  pageSchema,
  parseBody,
  sharedAll,
  UserSchema,
} from "./common";
import { InvalidInputError } from "./errors";
import { OrganizationLevelSchema } from "./invites";
import { path } from "./transport";

/** A membership: `id` is the membership UUID, `user.uuid` the user's (used in paths). */
export const MemberSchema = z.looseObject({
  id: z.string(),
  user: UserSchema,
  level: z.number().int(),
  joined_at: z.string().nullish(),
  updated_at: z.string().nullish(),
  last_login: z.string().nullish(),
  is_2fa_enabled: z.boolean().nullish(),
  has_social_auth: z.boolean().nullish(),
});
export type Member = z.output<typeof MemberSchema>;

/** Update body: only `level` (1 member, 8 administrator, 15 owner) is editable. */
export const MemberUpdateBodySchema = z.looseObject({ level: OrganizationLevelSchema });
export type MemberUpdateBody = z.input<typeof MemberUpdateBodySchema>;

export interface MemberParams extends OrgParams {
  /** The member's user UUID (`user.uuid`), the `user__uuid` path parameter. */
  userUuid: string;
}

/** Find one member by user UUID or e-mail (case-insensitive). */
export type MemberFindParams = OrgParams &
  ({ userUuid: string; email?: undefined } | { email: string; userUuid?: undefined });

/** The page wrapper of the list (made once: see `pageSchema`). */
const MemberPageSchema = pageSchema(MemberSchema);

const listPath = (ctx: ClientContext, p: OrgParams | undefined) =>
  path`/api/organizations/${ctx.org(p)}/members/`;
const itemPath = (ctx: ClientContext, p: MemberParams) =>
  path`/api/organizations/${ctx.org(p)}/members/${p.userUuid}/`;

/** Operations on members. */
export function members(ctx: ClientContext) {
  const reads = listOperations(ctx, (p?: OrgParams & PageParams) => listPath(ctx, p), MemberPageSchema);
  return {
    /** GET `/api/organizations/:organization_id/members/` (organization_member:read): `list` (one page), `iterate`, `all`. */
    ...reads,
    /**
     * PATCH `…/members/:user__uuid/` (organization_member:write) with `{level}` → member.
     * @throws InvalidInputError (level not 1/8/15), ForbiddenError (level rules), NotFoundError
     */
    update: async (p: MemberParams & { body: MemberUpdateBody }) =>
      call(
        ctx,
        {
          method: "PATCH",
          path: itemPath(ctx, p),
          body: parseBody(MemberUpdateBodySchema, p.body, "body"),
          signal: p.signal,
        },
        MemberSchema,
      ),
    /** DELETE `…/members/:user__uuid/` (organization_member:write) → 204. Owners cannot be removed (400). */
    delete: async (p: MemberParams): Promise<void> => {
      await call(ctx, { method: "DELETE", path: itemPath(ctx, p), signal: p.signal }, z.unknown());
    },
    /**
     * The member with this user UUID or e-mail, or undefined. Served from a list read shared by concurrent
     * and recent `find()` calls, so refreshing N members costs about N/pageSize list requests.
     */
    find: async (p: MemberFindParams): Promise<Member | undefined> => {
      if (p.userUuid === undefined && typeof p.email !== "string") {
        throw new InvalidInputError("userUuid", "Invalid find parameters: expected userUuid or email");
      }
      const items = await sharedAll(ctx, listPath(ctx, p), MemberPageSchema);
      if (p.userUuid !== undefined) return items.find((m) => m.user.uuid === p.userUuid);
      const email = p.email.toLowerCase();
      return items.find((m) => m.user.email.toLowerCase() === email);
    },
  };
}
