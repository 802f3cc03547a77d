/**
 * Member: takes over an existing organization member and manages their `level`.
 * The whole description is the card's (`member.card.description`), which schema.json and the SDK class take.
 */
import { z } from "zod";
import { type Member, type PostHogClient, PostHogError } from "../client";
import { withoutDocsLink } from "../client/docs-link";
import { keptOnDestroy } from "../framework/adopted";
import { known } from "../framework/adoption";
import type { IdentifiedBy } from "../framework/bookkeeping";
import { resource, UUID, wholeIdImport } from "../framework/card";
import type { Identity } from "../framework/claims";
import { ref, res } from "../framework/examples";
import { EmailInput, exclusive, OrganizationLevelInput } from "../framework/inputs";
import { journalContext } from "../framework/lost-create";
import { recordedChange } from "../framework/recorded-change";

/** The mutually exclusive inputs of a Member (checked by the schema, unions in the SDK's MemberArgs). */
export const MemberExclusiveInputs = [{ kind: "exactlyOne", keys: ["userUuid", "email"] }] as const;

/** Inputs of a Member: exactly one of `userUuid` and `email`. */
export const MemberInputsSchema = z
  .strictObject({
    /** The member's user UUID. Changing it replaces the resource (another person). */
    userUuid: z.uuid({ error: "expected a user UUID" }).optional(),
    /** The member's e-mail address. Changing it replaces the resource (another person). */
    email: EmailInput.optional(),
    /** Organization level: 1/8/15 or "member"/"admin"/"owner". */
    level: OrganizationLevelInput,
    /**
     * Keep the person AND their current level when this resource is deleted (the level is not restored). Default
     * false: on delete the person stays and gets back the level they had when this resource took them over.
     */
    retainOnDelete: z.boolean({ error: "expected true or false" }).default(false),
    /**
     * Remove the person from the organization when this resource is deleted. Default: they stay, with the level
     * they had when this resource took them over. PostHog refuses to remove an owner.
     */
    removeFromOrganizationOnDestroy: z.boolean({ error: "expected true or false" }).optional(),
  })
  .superRefine(exclusive(MemberExclusiveInputs));
export type MemberInputs = z.input<typeof MemberInputsSchema>;
type In = z.output<typeof MemberInputsSchema>;

/**
 * Outputs of a Member, as create, read and update return them. `required` in the package schema: neither optional
 * nor nullable. Each property's comment is its documentation (schema.json, the SDK class, docs/resources).
 */
export const MemberOutputsSchema = z.object({
  /**
   * The member's user UUID (also the resource id). Unknown in a preview where this member is updated (when not
   * declared as an input): give dependents `id`, which stays known.
   */
  userUuid: z.string(),
  /** The member's e-mail address. */
  email: z.string(),
  /** The organization level: 1 member, 8 admin, 15 owner. */
  level: z.int(),
  /** As declared: keep the person and their current level on delete. */
  retainOnDelete: z.boolean(),
  /** As declared: remove the person from the organization on delete. */
  removeFromOrganizationOnDestroy: z.boolean().optional(),
  /**
   * The level the person had when this resource took them over (its create, or `pulumi import`), set back on
   * delete. Absent when unknown (state written before it existed): delete then leaves the level as it is.
   */
  levelBefore: z.int().optional(),
  /** The membership's own id (UUID). */
  membershipId: z.string(),
  /** The member's first name; "" when none. */
  firstName: z.string(),
  /** The member's last name; "" when none. */
  lastName: z.string(),
  /** When the person joined (ISO 8601). */
  joinedAt: z.string().nullable(),
  /** Whether the member has two-factor authentication on. */
  is2faEnabled: z.boolean(),
});

/** Outputs of a Member. */
export type MemberOutputs = z.infer<typeof MemberOutputsSchema> & IdentifiedBy & Record<string, unknown>;

/** The input that identifies the member in these checked inputs. */
const declaredBy = (want: In): "email" | "userUuid" => (want.userUuid !== undefined ? "userUuid" : "email");

/** The objects a Member manages: the person, by user UUID and by e-mail (compared case-insensitively). */
function memberIdentity(v: Record<string, unknown>): Identity[] {
  const out: Identity[] = [];
  if (typeof v.userUuid === "string") {
    out.push({
      key: `member:user:${v.userUuid.toLowerCase()}`,
      property: "userUuid",
      object: `the member with user UUID ${v.userUuid}`,
    });
  }
  if (typeof v.email === "string") {
    out.push({
      key: `member:email:${v.email.toLowerCase()}`,
      property: "email",
      object: `the member ${v.email} (e-mail addresses compare case-insensitively)`,
    });
  }
  return out;
}

/** The outputs of live member `m`; `levelBefore` as recorded at create (undefined: unknown, old state). */
function toOutputs(
  m: Member,
  want: Pick<In, "retainOnDelete" | "removeFromOrganizationOnDestroy">,
  by: "email" | "userUuid" | undefined,
  levelBefore: number | undefined,
): MemberOutputs {
  return {
    userUuid: m.user.uuid,
    email: m.user.email,
    level: m.level,
    retainOnDelete: want.retainOnDelete,
    ...(levelBefore !== undefined ? { levelBefore } : {}),
    ...(want.removeFromOrganizationOnDestroy !== undefined
      ? { removeFromOrganizationOnDestroy: want.removeFromOrganizationOnDestroy }
      : {}),
    membershipId: m.id,
    firstName: m.user.first_name ?? "",
    lastName: m.user.last_name ?? "",
    joinedAt: m.joined_at ?? null,
    is2faEnabled: m.is_2fa_enabled ?? false,
    ...(by ? { identifiedBy: by } : {}),
  };
}

/**
 * One PATCH of the level (none when it already matches: returns undefined), turning PostHog's refusals
 * (403 "You can't change your own access level." …) into clear errors.
 */
async function setLevel(
  api: PostHogClient,
  m: { level: number; email: string; userUuid: string },
  level: 1 | 8 | 15,
): Promise<Member | undefined> {
  if (m.level === level) return undefined;
  try {
    return await api.members.update({ userUuid: m.userUuid, body: { level } });
  } catch (e) {
    if (e instanceof PostHogError && e.status === 403) {
      throw new Error(
        `Cannot change the level of ${m.email} from ${m.level} to ${level}: ${e.detail ?? withoutDocsLink(e.message)} ` +
          "(only admins edit others, only owners make owners, nobody changes their own level)",
        { cause: e },
      );
    }
    throw e;
  }
}

/** The Member resource: its card (everything about it) and its provider. */
export const member = resource<
  typeof MemberInputsSchema,
  MemberOutputs,
  "Member",
  typeof MemberOutputsSchema
>({
  name: "Member",
  troubleshooting: "member",
  summary: [
    "An existing organization member whose level is managed (type `pulumi-nodejs:dynamic/posthog:Member`).",
    "Members cannot be created (use {@link Invite}), so every Member adopts: delete leaves the person in the",
    "organization and sets their level back to the one they had when this resource took them over (`levelBefore`);",
    "`retainOnDelete: true` keeps the current level; `removeFromOrganizationOnDestroy: true` removes them (owners",
    "cannot be removed: clear error).",
  ].join("\n"),
  examples: {
    typescript: [
      'import * as posthog from "pulumi-posthog";',
      "",
      'new posthog.Member("mia", { email: "mia@example.com", level: "admin", retainOnDelete: true });',
      'new posthog.Member("max", { userUuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04", level: "member" });',
    ],
    // Max, a member the emulator seeds (the docs tests run it against the emulator), not Mia: the collaborator
    // page's example makes Mia a collaborator, which PostHog refuses for an admin (the pages' examples run together).
    program: {
      statements: [
        res("Member", "max", { email: "max.member@example.com", level: "admin", retainOnDelete: true }),
      ],
      outputs: { maxUuid: ref("max") },
    },
  },
  resolvedInputs: ["userUuid", "email"],
  description: [
    "Member: takes over an existing organization member and manages their `level`.",
    "API: GET `/api/organizations/:organization_id/members/` (find), PATCH / DELETE `\u2026/members/:user__uuid/`.",
    "",
    "Members cannot be created (invite them with Invite): create finds the member by `userUuid` or `email` and",
    "sets the level. The id is the user's UUID. Every Member adopts, so delete leaves the person as found: the level",
    "is set back to the one they had when this resource (its create, or `pulumi import`) took them over",
    "(`levelBefore`; no write when they have it), and they stay in the",
    "organization. `removeFromOrganizationOnDestroy: true` removes them instead (PostHog refuses to remove an owner,",
    "which gives a clear error).",
  ].join("\n"),
  outputs: MemberOutputsSchema,
  secretOutputs: [],
  exclusiveInputs: MemberExclusiveInputs,
  importId: wholeIdImport("Member", "<userUuid>", UUID, "No member of the organization has that user UUID"),
  adoption: {
    // Always: the organization's members (one list read), the one of that e-mail or user UUID.
    async probe(api, inputs) {
      const by = known(inputs.userUuid) ? { userUuid: String(inputs.userUuid) } : undefined;
      const email = known(inputs.email) ? String(inputs.email) : undefined;
      if (!by && email === undefined) return undefined;
      const m = await api.members.find(by ?? { email: email ?? "" });
      if (!m) return undefined;
      const who = [m.user.first_name, m.user.last_name].filter(Boolean).join(" ");
      return {
        kind: "member",
        id: m.user.uuid,
        name: who ? `${m.user.email} (${who})` : m.user.email,
        by: "a Member always takes over an existing member",
        note: `level ${m.level} now`,
      };
    },
  },
  records: { adopted: false, found: { found: "levelBefore", from: "level" } },
  inputs: MemberInputsSchema,
  replaceOnChanges: ["userUuid", "email"],
  // Refreshed inputs identify the member as the program does (exactly one identifier passes check), so a
  // refresh followed by a level change shows only ~level.
  liveInputs: (o) => ({
    ...(o.identifiedBy === "userUuid" ? { userUuid: o.userUuid } : { email: o.email }),
    level: o.level,
    retainOnDelete: o.retainOnDelete,
    ...(o.removeFromOrganizationOnDestroy !== undefined
      ? { removeFromOrganizationOnDestroy: o.removeFromOrganizationOnDestroy }
      : {}),
  }),
  identity: memberIdentity,
  changes: (olds, news, changed) =>
    // The e-mail is a lookup key: a case-only difference is the same person.
    changed.filter(
      (k) => !(k === "email" && String(olds.email).toLowerCase() === String(news.email).toLowerCase()),
    ),
  async create(api, want, ctx) {
    const m = want.userUuid
      ? await api.members.find({ userUuid: want.userUuid })
      : await api.members.find({ email: want.email ?? "" });
    if (!m) {
      const who = want.userUuid ? `user UUID ${want.userUuid}` : `e-mail ${want.email}`;
      throw new Error(
        `No member with ${who} in the organization: members cannot be created, invite them with an Invite first`,
      );
    }
    // The person, by both identifiers, before the level is touched: another Member of the program may name
    // them the other way.
    ctx.claim(memberIdentity({ userUuid: m.user.uuid, email: m.user.email }));
    // A create of this resource whose run was killed may have changed the level already: the level found before
    // it is in the create journal (provider/framework/recorded-change.ts).
    const { result: changed, before: levelBefore } = await recordedChange(ctx.creates, {
      type: "Member",
      scope: api.settings.organizationId ?? "",
      id: m.user.uuid,
      where: journalContext(api.settings, ctx.resource),
      field: "levelBefore",
      found: m.level,
      change: () => setLevel(api, { level: m.level, email: m.user.email, userUuid: m.user.uuid }, want.level),
      idOf: () => m.user.uuid,
    });
    return { id: m.user.uuid, outs: toOutputs(changed ?? m, want, declaredBy(want), levelBefore) };
  },
  async read(api, id, props) {
    const m = await api.members.find({ userUuid: id });
    return m ? toOutputs(m, props, props.identifiedBy, props.levelBefore) : undefined;
  },
  async update(api, id, olds, want) {
    const m = await setLevel(api, { level: olds.level, email: olds.email, userUuid: id }, want.level);
    const by = declaredBy(want);
    if (m) return toOutputs(m, want, by, olds.levelBefore);
    const { removeFromOrganizationOnDestroy: _, ...kept } = olds;
    return {
      ...kept,
      retainOnDelete: want.retainOnDelete,
      identifiedBy: by,
      ...(want.removeFromOrganizationOnDestroy !== undefined
        ? { removeFromOrganizationOnDestroy: want.removeFromOrganizationOnDestroy }
        : {}),
    };
  },
  async delete(api, id, props) {
    const old = props;
    if (old.removeFromOrganizationOnDestroy !== true) {
      // Every Member adopts: leave the person as found (README, "What destroy does").
      if (old.retainOnDelete) return;
      if (old.levelBefore === undefined) {
        keptOnDestroy(
          `the member ${old.email ?? id} at their current level (the level before Pulumi took them over is unknown)`,
          true,
          "removeFromOrganizationOnDestroy",
        );
        return;
      }
      const live = await api.members.find({ userUuid: id });
      if (!live) return; // they left the organization meanwhile
      await setLevel(
        api,
        { level: live.level, email: live.user.email, userUuid: id },
        old.levelBefore as 1 | 8 | 15,
      );
      return;
    }
    try {
      await api.members.delete({ userUuid: id });
    } catch (e) {
      if (e instanceof PostHogError && (e.status === 400 || e.status === 403)) {
        throw new Error(
          `PostHog refused to remove ${old.email ?? id} from the organization: ${e.detail ?? withoutDocsLink(e.message)}. ` +
            "Owners cannot be removed: lower their level first (level: admin), or set removeFromOrganizationOnDestroy: false",
          { cause: e },
        );
      }
      throw e;
    }
  },
});
