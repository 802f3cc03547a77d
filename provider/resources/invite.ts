/**
 * Invite: an invitation to join the organization.
 * The whole description is the card's (`invite.card.description`), which schema.json and the SDK class take.
 */
import { z } from "zod";
import {
  AmbiguousWriteError,
  type Invite,
  type PostHogClient,
  PROJECT_ACCESS_LEVELS,
  projectAccessLevelName,
  RateLimitedError,
  ValidationError,
} from "../client";
import { docsLink } from "../client/docs-link";
import { keptOnDestroy } from "../framework/adopted";
import { known } from "../framework/adoption";
import type { Adopted } from "../framework/bookkeeping";
import { resource, UUID, wholeIdImport } from "../framework/card";
import type { Identity } from "../framework/claims";
import { ref, res } from "../framework/examples";
import { EmailInput, integerIdInput, OrganizationLevelInput } from "../framework/inputs";
import { beginCreate, type CreateOperation, journalContext } from "../framework/lost-create";

/** Inputs of an Invite. */
export const InviteInputsSchema = z.strictObject({
  /** The e-mail address to invite (at most 254 characters). One Invite per address in a program. */
  targetEmail: EmailInput,
  /** First name shown in the invitation (at most 30 characters). Default "". */
  firstName: z.string().max(30, { error: "expected at most 30 characters" }).default(""),
  /** Organization level on joining: 1/8/15 or "member"/"admin"/"owner". Default 1 (member). */
  level: OrganizationLevelInput.default(1),
  /** A personal message in the invitation e-mail (no length limit beyond the 1 MiB request body). */
  message: z.string().optional(),
  /**
   * Access to private projects: `[{id: <project id>, level: "none" | "member" | "admin"}]`, the id a number or a
   * string of its digits. Default [].
   */
  privateProjectAccess: z
    .array(
      z.strictObject({
        /** Project (team) id: a number, or a string of its digits (a Project's `id`). */
        id: integerIdInput(
          (got) => `expected a project id (a positive integer, or a string of its digits), got ${got}`,
        ),
        /** Access level in that project. */
        level: z.enum(PROJECT_ACCESS_LEVELS, { error: 'expected "none", "member" or "admin"' }),
      }),
    )
    .default([]),
  /** Send the invitation e-mail. Default true. */
  sendEmail: z.boolean({ error: "expected true or false" }).default(true),
  /** Merge with other pending invites of this e-mail (highest level wins). Default false. */
  combinePendingInvites: z.boolean({ error: "expected true or false" }).default(false),
  /**
   * Take over a pending invite of this e-mail and level instead of sending a new one. Default false. An adopted
   * invite is kept on destroy unless `deleteAdoptedOnDestroy` is true.
   */
  adopt: z.boolean({ error: "expected true or false" }).default(false),
  /**
   * Revoke the invite on destroy even though it was adopted (`adopt: true` found it). Default: an adopted invite
   * is left as it was found (an invite this resource sent is always revoked on destroy). Changing it updates the
   * state only (no new invite).
   */
  deleteAdoptedOnDestroy: z.boolean({ error: "expected true or false" }).optional(),
});
export type InviteInputs = z.input<typeof InviteInputsSchema>;
type In = z.output<typeof InviteInputsSchema>;

/**
 * Outputs of an Invite, as create and read return them: the invite as PostHog holds it, the write-only inputs as
 * declared, and the server's fields. `required` in the package schema: neither optional nor nullable. Each
 * property's comment is its documentation (schema.json, the SDK class, docs/resources).
 */
export const InviteOutputsSchema = z.object({
  /** The invited e-mail address. */
  targetEmail: z.string(),
  /** The first name shown in the invitation; "" when none. */
  firstName: z.string(),
  /** The organization level on joining: 1 member, 8 admin, 15 owner. */
  level: z.int(),
  /** The personal message of the invitation e-mail; "" when none. */
  message: z.string(),
  /** Access to private projects: each a project id and a level ("none", "member" or "admin"). */
  privateProjectAccess: z.array(z.object({ id: z.int(), level: z.string() })),
  /** As declared: send the invitation e-mail. */
  sendEmail: z.boolean(),
  /** As declared: merge with other pending invites of this e-mail. */
  combinePendingInvites: z.boolean(),
  /** As declared: take over a pending invite of this e-mail and level. */
  adopt: z.boolean(),
  /** As declared: revoke the adopted invite on destroy. */
  deleteAdoptedOnDestroy: z.boolean().optional(),
  /** True when the invite is more than 3 days old: refresh shows it as drift, the next up invites again. */
  isExpired: z.boolean(),
  /** True once the invite was accepted (the e-mail is a member): the invite is then satisfied. */
  accepted: z.boolean(),
  /** Whether PostHog tried to send the e-mail. */
  emailingAttemptMade: z.boolean(),
  /** When the invite was created (ISO 8601). */
  createdAt: z.string().nullable(),
});

/** Outputs of an Invite. */
export type InviteOutputs = z.infer<typeof InviteOutputsSchema> & Adopted & Record<string, unknown>;

function toOutputs(i: Invite, want: In | InviteOutputs, adopted: boolean | undefined): InviteOutputs {
  return {
    ...(adopted !== undefined ? { adopted } : {}),
    ...(want.deleteAdoptedOnDestroy !== undefined
      ? { deleteAdoptedOnDestroy: want.deleteAdoptedOnDestroy }
      : {}),
    // PostHog's model allows an invite without an e-mail (null): keep the address this resource knows
    targetEmail: i.target_email ?? want.targetEmail,
    firstName: i.first_name ?? "",
    level: i.level,
    // null means no message: read it as "" so a declared "" does not replace the invite
    message: i.message ?? "",
    // legacy integer levels (1, 8) read as the names a program declares, so they show no change
    privateProjectAccess: (i.private_project_access ?? []).map((p) => ({
      id: p.id,
      level: projectAccessLevelName(p.level),
    })),
    // write-only on the server: keep what was declared
    sendEmail: want.sendEmail,
    combinePendingInvites: want.combinePendingInvites,
    adopt: want.adopt,
    isExpired: i.is_expired === true,
    accepted: false,
    emailingAttemptMade: i.emailing_attempt_made ?? false,
    createdAt: i.created_at ?? null,
  };
}

function sameInvite(i: Invite, want: In): boolean {
  return !i.is_expired && i.level === want.level;
}

/**
 * The invites of `want.targetEmail` as {@link CreateOperation} looks at them after an unknown outcome: the pending
 * one, if any (PostHog keeps one invite per address), named by the address in lowercase. One shared list read
 * (GET `/api/organizations/:organization_id/invites/`, the client's `find`); `seen` receives the invite.
 */
async function invitesOf(api: PostHogClient, want: In, seen: (i: Invite) => void) {
  const found = await api.invites.find({ email: want.targetEmail });
  if (!found || found.is_expired) return [];
  seen(found);
  return [{ id: found.id, name: want.targetEmail.toLowerCase(), created_at: found.created_at }];
}

/**
 * Sends the invite (POST `…/invites/`, or one `…/invites/bulk/` shared with the invites created together), journaled
 * first. After a lost answer it takes no invite for its own: PostHog's invite carries nothing a create could mark it
 * with, so a pending invite of the address made since the create started may be someone else's
 * ({@link CreateOperation.settleLost} fails naming it and `adopt: true`, sending nothing else).
 */
async function send(
  api: PostHogClient,
  want: In,
  op: CreateOperation,
  beforeSend: () => void,
): Promise<Invite> {
  await op.journal();
  try {
    // Invites the engine creates together share one bulk request (up to 20): ⌈N/20⌉ requests for N invites.
    const sent = await api.invites.createCoalesced({
      beforeSend,
      body: {
        target_email: want.targetEmail,
        first_name: want.firstName,
        level: want.level,
        ...(want.message !== undefined ? { message: want.message } : {}),
        private_project_access: want.privateProjectAccess,
        send_email: want.sendEmail,
        combine_pending_invites: want.combinePendingInvites,
      },
    });
    op.made(sent.id);
    return sent;
  } catch (e) {
    // The create may have gone through: look for it before anyone retries (no duplicate e-mails); fail naming an
    // invite of the address made since it started (it cannot be proved to be this create's).
    if (e instanceof AmbiguousWriteError) {
      // Never adopts for an Invite: it fails naming the invite, or says the create did not apply or stays unknown.
      await op.settleLost(() => invitesOf(api, want, () => undefined), e, "adopt: true");
      throw e;
    }
    op.failed();
    if (e instanceof RateLimitedError) {
      // The organization's invite budget (or the key's) is used up for longer than posthog:maxRateLimitWait:
      // nothing was sent for this address; the next up sends it.
      throw new Error(`The invite for ${want.targetEmail} was not sent: ${e.message}`, { cause: e });
    }
    if (e instanceof ValidationError && /already belongs/i.test(e.detail ?? "")) {
      throw new Error(
        `${want.targetEmail} is already a member of the organization: manage their level with a Member ` +
          `resource instead of an Invite (server: ${e.detail})`,
        { cause: e },
      );
    }
    throw e;
  }
}

/**
 * The address of an Invite about to be created already has a pending invite that no resource of this stack's run
 * holds: another stack's, a person's, or (after a create of this resource whose outcome was unknown) perhaps this
 * one's. PostHog keeps one invite per address, so creating would replace it and send a second e-mail: nothing is
 * sent, and `adopt: true` takes it over (issue 49, item 8).
 */
export class PendingInviteError extends Error {
  constructor(email: string, other: Invite) {
    super(
      `Invite for ${email}: PostHog already has a pending invite for this address, ${other.id} (level ${other.level}, ` +
        `created ${other.created_at ?? "at an unknown time"}), and no resource of this stack holds it: another stack's, ` +
        "a person's, or one a create of this resource made whose answer was never seen. PostHog keeps one invite per " +
        "address, so creating this one would replace it and send a second e-mail: nothing was sent. To manage that " +
        "invite with this resource, declare it with adopt: true (it takes over a pending invite of the same e-mail " +
        "and level; of another level, a new invite replaces it). If another stack manages it, keep the Invite in that " +
        "stack only; if this stack manages it under another resource name, give this resource that name's alias" +
        docsLink("how-it-works/one-object.md", "several-stacks-one-organization"),
    );
    this.name = "PendingInviteError";
  }
}

/** The invite an Invite manages: PostHog keeps one per address (case-insensitively). */
function inviteIdentity(v: { targetEmail?: unknown }): Identity[] {
  return typeof v.targetEmail === "string"
    ? [
        {
          key: `invite:${v.targetEmail.toLowerCase()}`,
          property: "targetEmail",
          object: `the invite for ${v.targetEmail} (e-mail addresses compare case-insensitively)`,
        },
      ]
    : [];
}

/**
 * The invite an Invite resource holds is gone, and another invite for its e-mail took its place (PostHog keeps one
 * invite per address: a newer invite replaces the older): another stack of the organization, or a person, invited the
 * same address. Thrown by `read` (a refresh, the nightly drift gate) instead of dropping the resource from the state.
 */
class InviteReplacedError extends Error {
  constructor(id: string, email: string, other: Invite) {
    super(
      `The invite ${id} for ${email} that this resource manages was replaced by invite ${other.id} ` +
        `(created ${other.created_at ?? "at an unknown time"}${other.is_expired ? ", expired" : ""}): PostHog keeps one ` +
        `invite per e-mail address, and another stack of this organization (or a person) invited ${email} again. ` +
        "Two stacks must not declare an invite for the same address: keep the Invite in one stack only. In the stack " +
        "that gives it up, remove it from the program (or run `pulumi state delete <this resource's URN>`); to make " +
        `this stack the one that manages invite ${other.id}, run \`pulumi state delete <this resource's URN>\` here, ` +
        "declare the Invite with `adopt: true`, and run `pulumi up`" +
        docsLink("how-it-works/one-object.md", "several-stacks-one-organization"),
    );
    this.name = "InviteReplacedError";
  }
}

/**
 * The line a preview prints when the create of an Invite without `adopt: true` (checked `inputs`) will fail because
 * its address already has a pending invite (PostHog keeps one per address; the create refuses to replace one that
 * no resource of the run holds: provider/resources/invite.ts), else undefined. One list read (GET
 * `/api/organizations/:organization_id/invites/`); never writes.
 * @throws the client's errors of that read (the caller ignores them: the create decides)
 */
async function pendingInviteNotice(
  api: PostHogClient,
  inputs: Record<string, unknown>,
  resource: string | undefined,
): Promise<string | undefined> {
  if (inputs.adopt === true || !known(inputs.targetEmail)) return undefined;
  const email = String(inputs.targetEmail);
  const i = await api.invites.find({ email });
  if (!i || i.is_expired) return undefined;
  return (
    `${resource === undefined ? "Invite" : `Invite "${resource}"`}: PostHog already has a pending invite for ` +
    `${email}, ${i.id} (level ${i.level}, created ${i.created_at ?? "at an unknown time"}): pulumi up will fail on ` +
    "it, sending nothing, unless the Invite declares adopt: true (PostHog keeps one invite per address: creating " +
    "would replace it and send a second e-mail)"
  );
}

/** The Invite provider (no update: every change replaces). */
/** The Invite resource: its card (everything about it) and its provider. */
export const invite = resource<
  typeof InviteInputsSchema,
  InviteOutputs,
  "Invite",
  typeof InviteOutputsSchema
>({
  name: "Invite",
  troubleshooting: "invite",
  summary: [
    "An invitation to the organization (type `pulumi-nodejs:dynamic/posthog:Invite`). Every change replaces it",
    "(there is no update endpoint). Once accepted it stays satisfied; when it expires, refresh shows drift and",
    "the next `up` re-invites. Adopt a pending invite with `adopt: true`.",
  ].join("\n"),
  examples: {
    typescript: [
      'import * as posthog from "pulumi-posthog";',
      "",
      'new posthog.Invite("jane", { targetEmail: "jane@example.com", level: "admin", firstName: "Jane" });',
    ],
    program: {
      statements: [
        res("Invite", "jane", { targetEmail: "jane@example.com", level: "admin", firstName: "Jane" }),
      ],
      outputs: { inviteId: ref("jane") },
    },
  },
  resolvedInputs: [],
  description: [
    "Invite: an invitation to join the organization.",
    "API: `/api/organizations/:organization_id/invites/` (POST create, GET list, DELETE `:id/`).",
    "",
    "- There is no update endpoint: every input change replaces the invite (PostHog itself drops the older",
    "  invites of the same e-mail when a new one is created, so no duplicates pile up).",
    "- Read finds the invite in the list. An invite that disappeared because it was accepted (its e-mail is now",
    "  a member) stays satisfied: `accepted` becomes true and nothing is re-sent. An expired invite shows as",
    "  drift (`isExpired`) and the next `up` re-invites.",
    "- Adoption: `adopt: true` takes over a pending, unexpired invite for the same e-mail and level instead of",
    "  sending a new one.",
  ].join("\n"),
  outputs: InviteOutputsSchema,
  secretOutputs: [],
  exclusiveInputs: [],
  importId: wholeIdImport(
    "Invite",
    "<inviteId> (a UUID)",
    UUID,
    "The organization has no pending invite of that id: an accepted or revoked invite leaves its list",
  ),
  adoption: {
    // With `adopt: true`: the organization's invites (one list read), a pending unexpired one of that e-mail and level.
    async probe(api, inputs) {
      if (inputs.adopt !== true || !known(inputs.targetEmail)) return undefined;
      const i = await api.invites.find({ email: String(inputs.targetEmail) });
      if (!i || i.is_expired || i.level !== inputs.level) return undefined;
      return {
        kind: "invite",
        id: i.id,
        name: i.target_email ?? String(inputs.targetEmail),
        by: "adopt: true",
      };
    },
    notice: pendingInviteNotice,
  },
  records: { adopted: true },
  inputs: InviteInputsSchema,
  // PostHog keeps one invite per address (case-insensitively): two Invites of one address replace each other.
  identity: inviteIdentity,
  // After a 404 on the DELETE (lifecycle.ts): still there only while it is pending under its id (an accepted or
  // replaced one is gone, which `read` would report otherwise).
  exists: async (api, id) => (await api.invites.find({ id })) !== undefined,
  changes(olds, news, changed) {
    // Accepted: satisfied; only a different person means a new invite.
    if (olds.accepted === true) return changed.filter((k) => k === "targetEmail");
    // Expired: re-invite.
    if (olds.isExpired === true) return [...changed, "isExpired"];
    // `adopt` only matters at create time.
    return news.adopt === olds.adopt ? changed : changed.filter((k) => k !== "adopt");
  },
  async create(api, want, ctx) {
    const organization = api.settings.organizationId ?? "";
    const email = want.targetEmail.toLowerCase();
    const op = beginCreate(
      ctx.creates,
      "Invite",
      organization,
      email,
      journalContext(api.settings, ctx.resource),
    );
    if (want.adopt) {
      const found = await api.invites.find({ email: want.targetEmail });
      if (found && sameInvite(found, want)) {
        op.adopted(found.id);
        return { id: found.id, outs: toOutputs(found, want, true) };
      }
    }
    // An earlier create of this resource that never saw its answer (a killed run, or a lost answer): the invite it
    // made, by the id it returned; a pending invite of the address made since it started proves nothing (it fails).
    let listed: Invite | undefined;
    const prior = await op.recoverPrior(() => invitesOf(api, want, (i) => (listed = i)), "adopt: true");
    if (prior && listed?.id === prior.id) return { id: listed.id, outs: toOutputs(listed, want, false) };
    // PostHog keeps one invite per address: a pending invite no resource of this run holds is someone else's (another
    // stack's, a person's) unless `adopt: true` says to take it over; the invite this resource replaces is held.
    if (!want.adopt) {
      const pending = await api.invites.find({ email: want.targetEmail });
      if (pending && !pending.is_expired && !op.isTaken(pending.id)) {
        op.failed();
        throw new PendingInviteError(want.targetEmail, pending);
      }
    }
    // Still this resource's invite when the request leaves (an Invite of the state may have been checked since).
    const created = await send(api, want, op, () => ctx.claim(inviteIdentity(want)));
    return { id: created.id, outs: toOutputs(created, want, false) };
  },
  async read(api, id, props) {
    const old = props;
    const found = await api.invites.find({ id });
    if (found) return toOutputs(found, old, old.adopted);
    // Gone from the list: accepted (now a member) stays satisfied; otherwise it was revoked.
    if (old.accepted === true || (old.targetEmail && (await api.members.find({ email: old.targetEmail })))) {
      return { ...old, accepted: true, isExpired: false };
    }
    // Replaced: PostHog keeps one invite per address, so a newer invite of this e-mail (another stack's, a person's)
    // took its place. Said, rather than dropped from the state (the next up would send it again and replace theirs).
    const other = old.targetEmail ? await api.invites.find({ email: old.targetEmail }) : undefined;
    if (other && other.id !== id) throw new InviteReplacedError(id, old.targetEmail, other);
    return undefined;
  },
  // The plan after a refresh names an expired invite's re-sending: `+- replace [diff: -isExpired]`.
  driftShown: (o) => (o.isExpired === true ? { isExpired: true } : undefined),
  // Only deleteAdoptedOnDestroy changes in place (the state alone); every other change replaces.
  replaceOnChanges: [
    "targetEmail",
    "firstName",
    "level",
    "message",
    "privateProjectAccess",
    "sendEmail",
    "combinePendingInvites",
    "adopt",
    "isExpired",
  ],
  async update(_api, _id, olds, want) {
    const { deleteAdoptedOnDestroy: _, ...kept } = olds;
    return {
      ...kept,
      ...(want.deleteAdoptedOnDestroy !== undefined
        ? { deleteAdoptedOnDestroy: want.deleteAdoptedOnDestroy }
        : {}),
    };
  },
  async delete(api, id, props) {
    if (props.accepted === true) return;
    // Adopted objects are left as they were found (README, "What destroy does"). State written before the marker
    // existed: an invite declared with adopt: true may have been adopted, so it is kept.
    const adopted = props.adopted ?? props.adopt === true;
    if (adopted && props.deleteAdoptedOnDestroy !== true) {
      keptOnDestroy(
        `the invite ${id} for ${props.targetEmail}`,
        props.adopted === undefined,
        "deleteAdoptedOnDestroy",
      );
      return;
    }
    await api.invites.delete({ id });
  },
});
