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
  // generated:outputs (npm run codegen, from the resource's OutputsSchema; do not edit)
  /** The dashboard name. */
  declare readonly name: pulumi.Output<string>;
  /** The description; "" when none. */
  declare readonly description: pulumi.Output<string>;
  /** Whether it is pinned in the sidebar. */
  declare readonly pinned: pulumi.Output<boolean>;
  /** The tags. */
  declare readonly tags: pulumi.Output<string[]>;
  /** Who may edit: 21 everyone in the project, 37 only collaborators (as declared). */
  declare readonly restrictionLevel: pulumi.Output<number>;
  /** The project the dashboard lives in: its id, a string of digits. */
  declare readonly projectId: pulumi.Output<string>;
  /** As declared: the template key it was created from. */
  declare readonly useTemplate: pulumi.Output<string | undefined>;
  /** As declared: the id of the dashboard it was created as a duplicate of. */
  declare readonly useDashboard: pulumi.Output<number | undefined>;
  /** As declared: the template JSON it was created from, as an object. */
  declare readonly templateJson: pulumi.Output<{ [x: string]: unknown } | undefined>;
  /** As declared: the id of the existing dashboard this resource adopted. */
  declare readonly dashboardId: pulumi.Output<number | undefined>;
  /** As declared: soft-delete the adopted dashboard on destroy. */
  declare readonly deleteAdoptedOnDestroy: pulumi.Output<boolean | undefined>;
  /** Whether delete also soft-deletes the insights that are only on this dashboard. */
  declare readonly deleteInsights: pulumi.Output<boolean>;
  /**
   * True when someone soft-deleted the dashboard outside Pulumi (seen by a refresh); the next up restores it.
   */
  declare readonly deleted: pulumi.Output<boolean>;
  /** How it was created: "default", "template" or "duplicate". */
  declare readonly creationMode: pulumi.Output<string | null>;
  /**
   * The restriction level in force: 21 when the organization lacks PostHog's advanced permissions, whatever is
   * declared.
   */
  declare readonly effectiveRestrictionLevel: pulumi.Output<number | null>;
  /** Whether public sharing is on. */
  declare readonly isShared: pulumi.Output<boolean>;
  /** When the dashboard was created (ISO 8601). */
  declare readonly createdAt: pulumi.Output<string | null>;
  // /generated:outputs

  /**
   * @param name the Pulumi resource name
   * @param args the dashboard's inputs (see {@link DashboardArgs})
   * @param opts resource options
   */
  constructor(name: string, args: DashboardArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = outputKeys("Dashboard");
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
