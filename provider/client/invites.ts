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
  pageSchema,
  parseBody,
  sharedAll,
  UserSchema,
} from "./common";
import { InvalidInputError, RateLimitedError, UnexpectedResponseError, ValidationError } from "./errors";
import type { ClientShared } from "./shared";
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

/** Most invites PostHog takes in one bulk request (posthog/api/organization_invite.py `bulk`: 400 beyond it). */
export const MAX_INVITES_PER_BULK = 20;

/**
 * How long {@link invites}' `createCoalesced` waits, in milliseconds, for more invites of the same organization
 * after the last one queued (each create that arrives restarts the wait, up to {@link INVITE_BATCH_MAX_WAIT_MS}
 * after the first): long enough for the creates the engine starts together to arrive at the provider host.
 */
export const INVITE_BATCH_WINDOW_MS = 20;
/** The longest a queued invite waits for others before its request is sent, in milliseconds. */
export const INVITE_BATCH_MAX_WAIT_MS = 100;

/** One invite waiting to be sent by `createCoalesced`: its validated body and the caller's promise. */
interface QueuedInvite {
  body: z.output<typeof InviteCreateBodySchema>;
  email: string;
  /** Called right before the request leaves; when it throws, this invite is not sent and gets that error. */
  beforeSend?: (() => void) | undefined;
  resolve(invite: Invite): void;
  reject(error: unknown): void;
}

/**
 * The invites waiting for one organization of one scope (key and origin); sent when the timer fires. Kept in
 * {@link ClientShared.inviteBatches} by `<scope> <organization>`, so the clients of one run fill one batch.
 */
export interface InviteBatch {
  items: QueuedInvite[];
  first: number;
  timer: NodeJS.Timeout | undefined;
}

/** Find one invite by id or by e-mail (case-insensitive). */
export type InviteFindParams = OrgParams &
  ({ id: string; email?: undefined } | { email: string; id?: undefined });

/** The page wrapper of the list (made once: see `pageSchema`). */
const InvitePageSchema = pageSchema(InviteSchema);

const listPath = (ctx: ClientContext, p: OrgParams | undefined) =>
  path`/api/organizations/${ctx.org(p)}/invites/`;

/**
 * The requests on invites, one each: `list`/`iterate`/`all`, `create`, `bulkCreate`, `delete` and `find` (see
 * {@link invites}, which adds `createCoalesced`).
 */
function inviteOperations(ctx: ClientContext) {
  const reads = listOperations(ctx, (p?: OrgParams & PageParams) => listPath(ctx, p), InvitePageSchema);
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
      const items = await sharedAll(ctx, listPath(ctx, p), InvitePageSchema);
      if (p.id !== undefined) return items.find((i) => i.id === p.id);
      const email = p.email.toLowerCase();
      // an invite without an e-mail address (null) is never the one asked for
      return items.find((i) => typeof i.target_email === "string" && i.target_email.toLowerCase() === email);
    },
  };
}

/** What sends the invites `createCoalesced` queued: the client's context and its requests on invites. */
interface InviteSender {
  ctx: ClientContext;
  api: ReturnType<typeof inviteOperations>;
}

/** Settles `item` with the answer of its own POST `…/invites/`. */
const sendAlone = (s: InviteSender, p: OrgParams, item: QueuedInvite): Promise<void> =>
  s.api.create({ ...p, body: item.body }).then(item.resolve, item.reject);

/**
 * Sends `items` (1 to 20 invites of one organization): one alone as POST `…/invites/`, more as one POST
 * `…/invites/bulk/`, each caller getting its own invite from the answer. When PostHog refuses the bulk:
 * - 400 (one invite is invalid, e.g. already a member: PostHog validates all before saving any, so none was
 *   made): each is sent alone, for its own answer;
 * - 429 beyond `maxRateLimitWaitMs` (the invites do not all fit the organization's budget): each is sent alone,
 *   one after another, so those that fit are sent and the others fail with the budget's error (unsent once
 *   PostHog has named the time it frees);
 * - anything else (a lost answer, 403, …): every caller gets that error (a lost answer: each looks for its own).
 */
async function sendBatch(s: InviteSender, p: OrgParams, items: QueuedInvite[]): Promise<void> {
  const [only] = items;
  if (only && items.length === 1) return sendAlone(s, p, only);
  let answer: Invite[] | undefined;
  try {
    answer = await s.api.bulkCreate({ ...p, body: items.map((i) => i.body) });
  } catch (e) {
    if (e instanceof ValidationError) {
      await Promise.all(items.map((item) => sendAlone(s, p, item)));
    } else if (e instanceof RateLimitedError) {
      for (const item of items) await sendAlone(s, p, item);
    } else {
      for (const item of items) item.reject(e);
    }
    return;
  }
  await settleFromBulk(s, p, items, answer);
}

/**
 * Settles each of `items` with its invite from the bulk request's `answer` (by e-mail), or, when the answer holds
 * none (the seed's "200, no body"), from the invite list (one shared read); an invite found in neither gets an
 * UnexpectedResponseError, a failed list read its error.
 */
async function settleFromBulk(
  s: InviteSender,
  p: OrgParams,
  items: QueuedInvite[],
  answer: Invite[] | undefined,
): Promise<void> {
  const byEmail = new Map<string, Invite>();
  for (const invite of answer ?? []) {
    if (typeof invite.target_email === "string") byEmail.set(invite.target_email.toLowerCase(), invite);
  }
  await Promise.all(
    items.map(async (item) => {
      try {
        // The seed's bulk answers "200, no body": each invite is then read from the list (one shared read).
        const invite = byEmail.get(item.email) ?? (await s.api.find({ ...p, email: item.email }));
        if (invite) return item.resolve(invite);
        item.reject(
          new UnexpectedResponseError({
            method: "POST",
            path: path`/api/organizations/${s.ctx.org(p)}/invites/bulk/`,
            status: answer === undefined ? 200 : 201,
            detail: `neither the answer nor the invite list shows the invite for ${item.email}`,
            hint: "run `pulumi refresh`, then `pulumi up` again",
          }),
        );
      } catch (e) {
        item.reject(e);
      }
    }),
  );
}

/**
 * Sends `batch` (queued under `key`, for organization `org`) now: it stops collecting, each invite's `beforeSend`
 * runs (one that throws is rejected with that error and not sent), and the others go in one {@link sendBatch}.
 */
function flushBatch(s: InviteSender, key: string, org: string, batch: InviteBatch): void {
  clearTimeout(batch.timer);
  const batches = s.ctx.shared.inviteBatches;
  if (batches.get(key) === batch) batches.delete(key);
  const ready = batch.items.filter((item) => {
    try {
      item.beforeSend?.();
      return true;
    } catch (e) {
      item.reject(e);
      return false;
    }
  });
  if (ready.length > 0) void sendBatch(s, { organizationId: org }, ready);
}

/**
 * Queues `item` in the batch of `key` (organization `org`): a batch already holding its e-mail is sent first and a
 * new one started; the batch is sent once it holds {@link MAX_INVITES_PER_BULK} invites, else when no invite has
 * joined it for {@link INVITE_BATCH_WINDOW_MS} or {@link INVITE_BATCH_MAX_WAIT_MS} after its first.
 */
function queueInvite(s: InviteSender, key: string, org: string, item: QueuedInvite): void {
  const batches = s.ctx.shared.inviteBatches;
  let batch = batches.get(key);
  if (batch?.items.some((i) => i.email === item.email)) {
    flushBatch(s, key, org, batch);
    batch = undefined;
  }
  if (!batch) {
    batch = { items: [], first: Date.now(), timer: undefined };
    batches.set(key, batch);
  }
  const current = batch;
  current.items.push(item);
  clearTimeout(current.timer);
  if (current.items.length >= MAX_INVITES_PER_BULK) flushBatch(s, key, org, current);
  else {
    const wait = Math.min(INVITE_BATCH_WINDOW_MS, current.first + INVITE_BATCH_MAX_WAIT_MS - Date.now());
    current.timer = setTimeout(() => flushBatch(s, key, org, current), Math.max(0, wait));
  }
}

/** Operations on invites: the requests of {@link inviteOperations}, and `createCoalesced`. */
export function invites(ctx: ClientContext) {
  const sender: InviteSender = { ctx, api: inviteOperations(ctx) };
  return {
    ...sender.api,
    /**
     * Creates one invite like `create`, sharing one POST `…/invites/bulk/` with the other invites of the same
     * organization created within {@link INVITE_BATCH_WINDOW_MS} of each other by any client sharing this one's
     * {@link ClientShared} (`createClient({ shared })`) with the same key and host (up to
     * {@link MAX_INVITES_PER_BULK} per request): N invites the engine creates together cost ⌈N/20⌉ requests, and
     * count N against the organization's invite budget as N creates would. An invite alone is sent as `create`
     * sends it. Two invites of one e-mail never share a request. `beforeSend` runs right
     * before the request leaves: when it throws, that invite is not sent and its caller gets the error.
     * @returns the created invite, as `create` does.
     * @throws InvalidInputError (before anything is queued); the errors of `create`, each caller its own (see
     *   the 400 and 429 fallbacks of {@link sendBatch}); AmbiguousWriteError for every invite of a bulk
     *   request whose answer was lost.
     */
    createCoalesced: (
      p: OrgParams & { body: InviteCreateBody; beforeSend?: () => void },
    ): Promise<Invite> => {
      const body = parseBody(InviteCreateBodySchema, p.body, "body");
      const org = ctx.org(p);
      const key = `${ctx.transport.scope} ${org}`;
      const email = body.target_email.toLowerCase();
      return new Promise<Invite>((resolve, reject) => {
        queueInvite(sender, key, org, { body, email, resolve, reject, beforeSend: p.beforeSend });
      });
    },
  };
}
