import * as pulumi from "@pulumi/pulumi";
import type { BatchExportPauseArgs } from "./args";
import { MODULE, named, outputKeys } from "./common";
import { providerShim } from "./provider-shim";

export type { BatchExportPauseArgs } from "./args";

const provider = providerShim("BatchExportPause");

/**
 * Keeps a batch export paused (or running) (type `pulumi-nodejs:dynamic/posthog:BatchExportPause`, id = the
 * batch export id). Delete restores the state found before. Refresh shows someone unpausing it as drift.
 *
 * ```ts
 * new posthog.BatchExportPause("s3-export", { batchExportId: "0190…", paused: true });
 * ```
 */
export class BatchExportPause extends pulumi.dynamic.Resource {
  // generated:outputs (npm run codegen, from the resource's OutputsSchema; do not edit)
  /** The batch export's id (UUID; also the resource id). */
  declare readonly batchExportId: pulumi.Output<string>;
  /** Whether the export is paused. */
  declare readonly paused: pulumi.Output<boolean>;
  /**
   * Whether the export was paused before Pulumi took it over: delete restores it. Absent when unknown: delete then
   * leaves the export as it is.
   */
  declare readonly pausedBefore: pulumi.Output<boolean | undefined>;
  /** The export's name. */
  declare readonly name: pulumi.Output<string | null>;
  /** When it was last paused (ISO 8601), else null. */
  declare readonly lastPausedAt: pulumi.Output<string | null>;
  // /generated:outputs

  /**
   * @param name the Pulumi resource name
   * @param args `batchExportId`, optional `paused` (true)
   * @param opts resource options
   */
  constructor(name: string, args: BatchExportPauseArgs, opts?: pulumi.CustomResourceOptions) {
    const outs = outputKeys("BatchExportPause");
    super(provider, name, { ...outs, ...args, ...named(name, args) }, opts, MODULE, "BatchExportPause");
  }
}
