/**
 * The hand-written part of the generated Dashboard class (sdk/dashboard.ts, `npm run codegen`): what runs once a
 * Dashboard is constructed. A declared restriction PostHog does not enforce (the organization lacks the feature) is
 * worth a warning: the program says "only collaborators", the dashboard lets everyone edit.
 */
import * as pulumi from "@pulumi/pulumi";
import { docsLink } from "../../provider/client/docs-link";

/** What the hook reads of the Dashboard it is given. */
interface DashboardOutputs extends pulumi.Resource {
  restrictionLevel: pulumi.Output<number>;
  effectiveRestrictionLevel: pulumi.Output<number | null>;
}

/**
 * Warns (`pulumi.log.warn`, naming the dashboard) once the outputs are known when the dashboard's declared restriction
 * level is not the one in effect. No request.
 */
export function afterConstruct(dashboard: DashboardOutputs, name: string): void {
  pulumi
    .all([dashboard.restrictionLevel, dashboard.effectiveRestrictionLevel])
    .apply(([declared, effective]) => {
      const message = restrictionNotInEffect(name, declared, effective);
      if (message !== undefined) void pulumi.log.warn(message, dashboard);
    });
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
    "resources on this dashboard cannot be created until then." +
    docsLink("troubleshooting/resources.md", "dashboard")
  );
}
