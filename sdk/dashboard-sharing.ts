import * as pulumi from "@pulumi/pulumi";
import type { DashboardSharingArgs } from "./args";
import { MODULE, named, outputKeys, withSecretOutputs } from "./common";
import { providerShim } from "./provider-shim";

export type { DashboardSharingArgs } from "./args";

const provider = providerShim("DashboardSharing");

/**
 * Public sharing of a dashboard on or off (type `pulumi-nodejs:dynamic/posthog:DashboardSharing`, id = the
 * dashboard id). `accessToken` is secret. Delete turns sharing off.
 *
 * ```ts
 * const share = new posthog.DashboardSharing("kpis", { dashboardId: kpis.id, enabled: true });
 * ```
 */
export class DashboardSharing extends pulumi.dynamic.Resource {
  // generated:outputs (npm run codegen, from the resource's OutputsSchema; do not edit)
  /** The dashboard's id (also the resource id). */
  declare readonly dashboardId: pulumi.Output<number>;
  /** Whether public sharing is on. */
  declare readonly enabled: pulumi.Output<boolean>;
  /** The project of the dashboard: its id, a string of digits. */
  declare readonly projectId: pulumi.Output<string>;
  /** The token of the public link (secret); null while sharing is off. */
  declare readonly accessToken: pulumi.Output<string | null>;
  /** When sharing was first configured (ISO 8601), else null. */
  declare readonly createdAt: pulumi.Output<string | null>;
  /**
   * Whether public sharing was on when this resource took it over (its create or `pulumi import` read it): delete
   * sets it back. Absent in state written before it existed: delete then turns sharing off.
   */
  declare readonly enabledBefore: pulumi.Output<boolean | undefined>;
  // /generated:outputs

  /**
   * @param name the Pulumi resource name
   * @param args `dashboardId`, optional `enabled` (true) and `projectId`
   * @param opts resource options (`accessToken` is always added as a secret output)
   */
  constructor(name: string, args: DashboardSharingArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = outputKeys("DashboardSharing");
    super(
      provider,
      name,
      { ...outs, ...args, ...named(name, args) },
      withSecretOutputs(opts, ["accessToken"]),
      MODULE,
      "DashboardSharing",
    );
  }
}
