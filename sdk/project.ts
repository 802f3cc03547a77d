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
  // generated:outputs (npm run codegen, from the resource's OutputsSchema; do not edit)
  /** The project name. */
  declare readonly name: pulumi.Output<string>;
  /**
   * The project id, a string of digits (also the resource id). Unknown in a preview where this project is updated:
   * give dependents `id`, which stays known.
   */
  declare readonly projectId: pulumi.Output<string>;
  /** As declared: delete the adopted project on destroy. */
  declare readonly deleteAdoptedOnDestroy: pulumi.Output<boolean | undefined>;
  /** What the product is, for PostHog's AI features; "" when unset. */
  declare readonly productDescription: pulumi.Output<string>;
  /** The IANA time zone of the project. */
  declare readonly timezone: pulumi.Output<string | undefined>;
  /** URLs of the app (toolbar, heatmaps); empty when none. */
  declare readonly appUrls: pulumi.Output<string[]>;
  /** Whether client IP addresses are discarded. */
  declare readonly anonymizeIps: pulumi.Output<boolean | undefined>;
  /** Whether autocapture is off. */
  declare readonly autocaptureOptOut: pulumi.Output<boolean | undefined>;
  /** Whether sessions are recorded. */
  declare readonly sessionRecordingOptIn: pulumi.Output<boolean | undefined>;
  /** Whether heatmaps are captured. */
  declare readonly heatmapsOptIn: pulumi.Output<boolean | undefined>;
  /** Whether surveys are on. */
  declare readonly surveysOptIn: pulumi.Output<boolean | undefined>;
  /** The first day of the week: 0 (Sunday) or 1 (Monday). */
  declare readonly weekStartDay: pulumi.Output<number | undefined>;
  /** Domains allowed to record sessions; empty when none. */
  declare readonly recordingDomains: pulumi.Output<string[]>;
  /** Whether it is a demo project filled with sample data. */
  declare readonly isDemo: pulumi.Output<boolean | undefined>;
  /** The project's UUID. */
  declare readonly uuid: pulumi.Output<string | null>;
  /** The id (UUID) of the organization the project belongs to. */
  declare readonly organization: pulumi.Output<string | null>;
  /** The project API key that PostHog's SDKs send events with (secret). */
  declare readonly apiToken: pulumi.Output<string | null>;
  /** The token of the live events stream (secret). */
  declare readonly liveEventsToken: pulumi.Output<string | null>;
  /** When the project was created (ISO 8601). */
  declare readonly createdAt: pulumi.Output<string | null>;
  /** Whether any event was received. */
  declare readonly ingestedEvent: pulumi.Output<boolean>;
  // /generated:outputs

  /**
   * @param name the Pulumi resource name
   * @param args the project's inputs (see {@link ProjectArgs})
   * @param opts resource options (`apiToken` and `liveEventsToken` are always added as secret outputs)
   */
  constructor(name: string, args: ProjectArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = outputKeys("Project");
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
