import * as pulumi from "@pulumi/pulumi";
import type { MemberArgs } from "./args";
import { MODULE, named, outputKeys } from "./common";
import { providerShim } from "./provider-shim";

export type { MemberArgs } from "./args";

const provider = providerShim("Member");

/**
 * An existing organization member whose level is managed (type `pulumi-nodejs:dynamic/posthog:Member`).
 * Members cannot be created (use {@link Invite}), so every Member adopts: delete leaves the person in the
 * organization and sets their level back to the one they had when this resource took them over (`levelBefore`);
 * `retainOnDelete: true` keeps the current level; `removeFromOrganizationOnDestroy: true` removes them (owners
 * cannot be removed: clear error).
 *
 * ```ts
 * new posthog.Member("jane", { email: "jane@example.com", level: "admin", retainOnDelete: true });
 * ```
 */
export class Member extends pulumi.dynamic.Resource {
  // generated:outputs (npm run codegen, from the resource's OutputsSchema; do not edit)
  /**
   * The member's user UUID (also the resource id). Unknown in a preview where this member is updated (when not
   * declared as an input): give dependents `id`, which stays known.
   */
  declare readonly userUuid: pulumi.Output<string>;
  /** The member's e-mail address. */
  declare readonly email: pulumi.Output<string>;
  /** The organization level: 1 member, 8 admin, 15 owner. */
  declare readonly level: pulumi.Output<number>;
  /** As declared: keep the person and their current level on delete. */
  declare readonly retainOnDelete: pulumi.Output<boolean>;
  /** As declared: remove the person from the organization on delete. */
  declare readonly removeFromOrganizationOnDestroy: pulumi.Output<boolean | undefined>;
  /**
   * The level the person had when this resource took them over (its create, or `pulumi import`), set back on
   * delete. Absent when unknown (state written before it existed): delete then leaves the level as it is.
   */
  declare readonly levelBefore: pulumi.Output<number | undefined>;
  /** The membership's own id (UUID). */
  declare readonly membershipId: pulumi.Output<string>;
  /** The member's first name; "" when none. */
  declare readonly firstName: pulumi.Output<string>;
  /** The member's last name; "" when none. */
  declare readonly lastName: pulumi.Output<string>;
  /** When the person joined (ISO 8601). */
  declare readonly joinedAt: pulumi.Output<string | null>;
  /** Whether the member has two-factor authentication on. */
  declare readonly is2faEnabled: pulumi.Output<boolean>;
  // /generated:outputs

  /**
   * @param name the Pulumi resource name
   * @param args `userUuid` or `email`, `level`, optional `retainOnDelete`, `removeFromOrganizationOnDestroy`
   * @param opts resource options
   */
  constructor(name: string, args: MemberArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = outputKeys("Member");
    super(provider, name, { ...outs, ...args, ...named(name, args) }, opts, MODULE, "Member");
  }
}
