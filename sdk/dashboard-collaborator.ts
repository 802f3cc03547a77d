import * as pulumi from "@pulumi/pulumi";
import type { DashboardCollaboratorArgs } from "./args";
import { MODULE, named, outputKeys } from "./common";
import { providerShim } from "./provider-shim";

export type { DashboardCollaboratorArgs } from "./args";

const provider = providerShim("DashboardCollaborator");

/**
 * Edit access for one user on a dashboard with restriction level 37 (type
 * `pulumi-nodejs:dynamic/posthog:DashboardCollaborator`, id `<dashboardId>/<userUuid>`). An existing
 * collaborator is adopted; every change replaces.
 *
 * ```ts
 * // jane: a Member; its id is the user UUID, and ids stay known in a preview (output-only userUuid does not)
 * new posthog.DashboardCollaborator("jane-kpis", { dashboardId: kpis.id, userUuid: jane.id });
 * ```
 */
export class DashboardCollaborator extends pulumi.dynamic.Resource {
  // generated:outputs (npm run codegen, from the resource's OutputsSchema; do not edit)
  /** The dashboard's id. */
  declare readonly dashboardId: pulumi.Output<number>;
  /** The collaborator's user UUID. */
  declare readonly userUuid: pulumi.Output<string>;
  /** The access level: 37 (can edit). */
  declare readonly level: pulumi.Output<number>;
  /** The project of the dashboard: its id, a string of digits. */
  declare readonly projectId: pulumi.Output<string>;
  /** The collaborator's e-mail address. */
  declare readonly email: pulumi.Output<string>;
  /** When the collaborator was added (ISO 8601). */
  declare readonly addedAt: pulumi.Output<string | null>;
  // /generated:outputs

  /**
   * @param name the Pulumi resource name
   * @param args `dashboardId`, `userUuid`, optional `level` (37) and `projectId`
   * @param opts resource options
   */
  constructor(name: string, args: DashboardCollaboratorArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = outputKeys("DashboardCollaborator");
    super(provider, name, { ...outs, ...args, ...named(name, args) }, opts, MODULE, "DashboardCollaborator");
  }
}
