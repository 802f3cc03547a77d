import * as pulumi from "@pulumi/pulumi";
import type { ProjectArgs } from "./args";
import { MODULE, named, outputKeys, withSecretOutputs } from "./common";
import { providerShim } from "./provider-shim";

export type { ProjectArgs } from "./args";

const provider = providerShim("Project");

/**
 * A project of the organization (type `pulumi-nodejs:dynamic/posthog:Project`). Unset settings are not
 * managed; `isDemo` (and `projectId`) changes replace it. `apiToken` and `liveEventsToken` are secret.
 * Adopt an existing project with `projectId`.
 *
 * ```ts
 * const web = new posthog.Project("web", { name: "Web", timezone: "Europe/Berlin" });
 * export const token = web.apiToken; // secret
 * ```
 */
export class Project extends pulumi.dynamic.Resource {
  /** Project name. */
  declare readonly name: pulumi.Output<string>;
  /**
   * The project id (also the resource id). Output-only unless adopting, so unknown in a preview where this
   * project is updated: give dependents `project.id`, which stays known.
   */
  declare readonly projectId: pulumi.Output<string>;
  /** Product description. */
  declare readonly productDescription: pulumi.Output<string | undefined>;
  /** IANA time zone. */
  declare readonly timezone: pulumi.Output<string | undefined>;
  /** App URLs. */
  declare readonly appUrls: pulumi.Output<string[] | undefined>;
  /** Whether IPs are discarded. */
  declare readonly anonymizeIps: pulumi.Output<boolean | undefined>;
  /** Whether autocapture is off. */
  declare readonly autocaptureOptOut: pulumi.Output<boolean | undefined>;
  /** Whether sessions are recorded. */
  declare readonly sessionRecordingOptIn: pulumi.Output<boolean | undefined>;
  /** Whether heatmaps are captured. */
  declare readonly heatmapsOptIn: pulumi.Output<boolean | undefined>;
  /** Whether surveys are on. */
  declare readonly surveysOptIn: pulumi.Output<boolean | undefined>;
  /** First day of the week (0 Sunday, 1 Monday). */
  declare readonly weekStartDay: pulumi.Output<number | undefined>;
  /** Domains allowed to record. */
  declare readonly recordingDomains: pulumi.Output<string[] | undefined>;
  /** Whether it is a demo project. */
  declare readonly isDemo: pulumi.Output<boolean | undefined>;
  /** The project's UUID. */
  declare readonly uuid: pulumi.Output<string | null>;
  /** The organization id. */
  declare readonly organization: pulumi.Output<string | null>;
  /** The project API key SDKs send events with (secret). */
  declare readonly apiToken: pulumi.Output<string | null>;
  /** The live events token (secret). */
  declare readonly liveEventsToken: pulumi.Output<string | null>;
  /** When the project was created (ISO 8601). */
  declare readonly createdAt: pulumi.Output<string | null>;
  /** Whether any event arrived. */
  declare readonly ingestedEvent: pulumi.Output<boolean>;

  /**
   * @param name the Pulumi resource name
   * @param args the project's inputs (see {@link ProjectArgs})
   * @param opts resource options (`apiToken` and `liveEventsToken` are always added as secret outputs)
   */
  constructor(name: string, args: ProjectArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = outputKeys([
      "projectId",
      "uuid",
      "organization",
      "apiToken",
      "liveEventsToken",
      "createdAt",
      "ingestedEvent",
    ]);
    super(
      provider,
      name,
      { ...outs, ...args, ...named(name, args) },
      withSecretOutputs(opts, ["apiToken", "liveEventsToken"]),
      MODULE,
      "Project",
    );
  }
}
