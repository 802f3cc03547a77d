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
  /** The invited e-mail address. */
  declare readonly targetEmail: pulumi.Output<string>;
  /** First name in the invitation. */
  declare readonly firstName: pulumi.Output<string>;
  /** Organization level on joining (1, 8 or 15). */
  declare readonly level: pulumi.Output<number>;
  /** The personal message ("" when none). */
  declare readonly message: pulumi.Output<string>;
  /** Access to private projects. */
  declare readonly privateProjectAccess: pulumi.Output<{ id: number; level: string }[]>;
  /** Whether the e-mail is sent. */
  declare readonly sendEmail: pulumi.Output<boolean>;
  /** Whether pending invites were combined. */
  declare readonly combinePendingInvites: pulumi.Output<boolean>;
  /** Whether a pending invite was adopted. */
  declare readonly adopt: pulumi.Output<boolean>;
  /** True when the invite expired (3 days); the next up re-invites. */
  declare readonly isExpired: pulumi.Output<boolean>;
  /** True once accepted (the person is a member). */
  declare readonly accepted: pulumi.Output<boolean>;
  /** Whether PostHog tried to send the e-mail. */
  declare readonly emailingAttemptMade: pulumi.Output<boolean>;
  /** When the invite was created (ISO 8601). */
  declare readonly createdAt: pulumi.Output<string | null>;

  /**
   * @param name the Pulumi resource name
   * @param args the invite's inputs (see {@link InviteArgs})
   * @param opts resource options
   */
  constructor(name: string, args: InviteArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = outputKeys(["isExpired", "accepted", "emailingAttemptMade", "createdAt"]);
    super(provider, name, { ...outs, ...args, ...named(name, args) }, opts, MODULE, "Invite");
  }
}
