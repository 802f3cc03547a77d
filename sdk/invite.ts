import * as pulumi from "@pulumi/pulumi";
import type { InviteArgs } from "./args";
import { MODULE, named, outputKeys } from "./common";
import { providerShim } from "./provider-shim";

export type { InviteArgs } from "./args";

const provider = providerShim("Invite");

/**
 * An invitation to the organization (type `pulumi-nodejs:dynamic/posthog:Invite`). Every change replaces it
 * (there is no update endpoint). Once accepted it stays satisfied; when it expires, refresh shows drift and
 * the next `up` re-invites. Adopt a pending invite with `adopt: true`.
 *
 * ```ts
 * new posthog.Invite("jane", { targetEmail: "jane@example.com", level: "admin" });
 * ```
 */
export class Invite extends pulumi.dynamic.Resource {
  // generated:outputs (npm run codegen, from the resource's OutputsSchema; do not edit)
  /** The invited e-mail address. */
  declare readonly targetEmail: pulumi.Output<string>;
  /** The first name shown in the invitation; "" when none. */
  declare readonly firstName: pulumi.Output<string>;
  /** The organization level on joining: 1 member, 8 admin, 15 owner. */
  declare readonly level: pulumi.Output<number>;
  /** The personal message of the invitation e-mail; "" when none. */
  declare readonly message: pulumi.Output<string>;
  /** Access to private projects: each a project id and a level ("none", "member" or "admin"). */
  declare readonly privateProjectAccess: pulumi.Output<{ id: number; level: string }[]>;
  /** As declared: send the invitation e-mail. */
  declare readonly sendEmail: pulumi.Output<boolean>;
  /** As declared: merge with other pending invites of this e-mail. */
  declare readonly combinePendingInvites: pulumi.Output<boolean>;
  /** As declared: take over a pending invite of this e-mail and level. */
  declare readonly adopt: pulumi.Output<boolean>;
  /** As declared: revoke the adopted invite on destroy. */
  declare readonly deleteAdoptedOnDestroy: pulumi.Output<boolean | undefined>;
  /** True when the invite is more than 3 days old: refresh shows it as drift, the next up invites again. */
  declare readonly isExpired: pulumi.Output<boolean>;
  /** True once the invite was accepted (the e-mail is a member): the invite is then satisfied. */
  declare readonly accepted: pulumi.Output<boolean>;
  /** Whether PostHog tried to send the e-mail. */
  declare readonly emailingAttemptMade: pulumi.Output<boolean>;
  /** When the invite was created (ISO 8601). */
  declare readonly createdAt: pulumi.Output<string | null>;
  // /generated:outputs

  /**
   * @param name the Pulumi resource name
   * @param args the invite's inputs (see {@link InviteArgs})
   * @param opts resource options
   */
  constructor(name: string, args: InviteArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = outputKeys("Invite");
    super(provider, name, { ...outs, ...args, ...named(name, args) }, opts, MODULE, "Invite");
  }
}
