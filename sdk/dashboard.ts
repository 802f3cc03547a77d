import * as pulumi from "@pulumi/pulumi";
import type { DashboardArgs } from "./args";
import { MODULE, named, outputKeys } from "./common";
import { providerShim } from "./provider-shim";

export type { DashboardArgs } from "./args";

const provider = providerShim("Dashboard");

/**
 * A dashboard (type `pulumi-nodejs:dynamic/posthog:Dashboard`): plain, from a template key (`useTemplate`),
 * a duplicate (`useDashboard`) or template JSON (`templateJson`). Delete is a soft delete; a dashboard
 * soft-deleted outside Pulumi is restored by the next `up`. Adopt an existing one with `dashboardId`.
 *
 * ```ts
 * new posthog.Dashboard("kpis", { name: "KPIs", templateJson: fs.readFileSync("dashboards/kpis.json", "utf8") });
 * ```
 */
export class Dashboard extends pulumi.dynamic.Resource {
  /** Name. */
  declare readonly name: pulumi.Output<string>;
  /** Description. */
  declare readonly description: pulumi.Output<string>;
  /** Whether it is pinned. */
  declare readonly pinned: pulumi.Output<boolean>;
  /** Tags. */
  declare readonly tags: pulumi.Output<string[]>;
  /** Restriction level: 21 everyone can edit, 37 only collaborators. */
  declare readonly restrictionLevel: pulumi.Output<number>;
  /** The project id used in API paths. */
  declare readonly projectId: pulumi.Output<string>;
  /** Whether delete also soft-deletes insights only on this dashboard. */
  declare readonly deleteInsights: pulumi.Output<boolean>;
  /** True when soft-deleted outside Pulumi (the next up restores it). */
  declare readonly deleted: pulumi.Output<boolean>;
  /** How it was created: default, template or duplicate. */
  declare readonly creationMode: pulumi.Output<string | null>;
  /** The restriction level in force. */
  declare readonly effectiveRestrictionLevel: pulumi.Output<number | null>;
  /** Whether public sharing is on. */
  declare readonly isShared: pulumi.Output<boolean>;
  /** When it was created (ISO 8601). */
  declare readonly createdAt: pulumi.Output<string | null>;

  /**
   * @param name the Pulumi resource name
   * @param args the dashboard's inputs (see {@link DashboardArgs})
   * @param opts resource options
   */
  constructor(name: string, args: DashboardArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = outputKeys([
      "projectId",
      "deleted",
      "creationMode",
      "effectiveRestrictionLevel",
      "isShared",
      "createdAt",
    ]);
    super(provider, name, { ...outs, ...args, ...named(name, args) }, opts, MODULE, "Dashboard");
    // A declared restriction PostHog does not enforce (the organization lacks the feature) is worth a warning:
    // the program says "only collaborators", the dashboard lets everyone edit. Runs once the outputs are known.
    pulumi.all([this.restrictionLevel, this.effectiveRestrictionLevel]).apply(([declared, effective]) => {
      const message = restrictionNotInEffect(name, declared, effective);
      if (message !== undefined) void pulumi.log.warn(message, this);
    });
  }
}

/**
 * The warning for a dashboard whose restriction level (`declared`, as PostHog stores it) is not the one in
 * effect (`effective`, PostHog's `effective_restriction_level`), else undefined. PostHog keeps 37 ("only
 * collaborators can edit") but enforces 21 ("everyone in the project can edit") when the organization lacks
 * its advanced permissions feature.
 */
function restrictionNotInEffect(
  name: string,
  declared: number | undefined,
  effective: number | null | undefined,
): string | undefined {
  if (declared === undefined || effective === undefined || effective === null || declared === effective)
    return undefined;
  return (
    `Dashboard "${name}": restrictionLevel ${declared} (only collaborators can edit) is not in effect; PostHog ` +
    `enforces ${effective} (everyone in the project can edit) because the organization lacks PostHog's ` +
    "advanced permissions feature (a paid plan). Enable it for the organization (then the next `pulumi up` shows " +
    `no warning), or declare restrictionLevel: ${effective} to match what is enforced; DashboardCollaborator ` +
    "resources on this dashboard cannot be created until then."
  );
}
