/**
 * BatchExportPause: keeps a batch export paused (or unpaused).
 * The whole description is the card's (`batchExportPause.card.description`), which schema.json and the SDK class take.
 */
import { z } from "zod";
import type { BatchExport, PostHogClient } from "../client";
import { known } from "../framework/adoption";
import { resource, UUID, wholeIdImport } from "../framework/card";
import { ref, res } from "../framework/examples";
import { listedOrRetrieved } from "../framework/lifecycle";
import { journalContext } from "../framework/lost-create";
import { recordedChange } from "../framework/recorded-change";

/** Inputs of a BatchExportPause. */
export const BatchExportPauseInputsSchema = z.strictObject({
  /** The batch export's id (UUID). Changing it replaces the resource. */
  batchExportId: z.string({ error: "expected a batch export id (UUID)" }).min(1, {
    error: "expected a batch export id (UUID)",
  }),
  /** Desired state: true = paused (default), false = running. */
  paused: z.boolean({ error: "expected true or false" }).default(true),
});
export type BatchExportPauseInputs = z.input<typeof BatchExportPauseInputsSchema>;

/**
 * Outputs of a BatchExportPause, as create, read and update return them. `required` in the package schema:
 * neither optional nor nullable. Each property's comment is its documentation (schema.json, the SDK class,
 * docs/resources).
 */
export const BatchExportPauseOutputsSchema = z.object({
  /** The batch export's id (UUID; also the resource id). */
  batchExportId: z.string(),
  /** Whether the export is paused. */
  paused: z.boolean(),
  /**
   * Whether the export was paused before Pulumi took it over: delete restores it. Absent when unknown: delete then
   * leaves the export as it is.
   */
  pausedBefore: z.boolean().optional(),
  /** The export's name. */
  name: z.string().nullable(),
  /** When it was last paused (ISO 8601), else null. */
  lastPausedAt: z.string().nullable(),
});

/** Outputs of a BatchExportPause. */
export type BatchExportPauseOutputs = z.infer<typeof BatchExportPauseOutputsSchema> & Record<string, unknown>;

function toOutputs(b: BatchExport, pausedBefore: boolean | undefined): BatchExportPauseOutputs {
  return {
    batchExportId: b.id,
    paused: b.paused,
    ...(typeof pausedBefore === "boolean" ? { pausedBefore } : {}),
    name: b.name ?? null,
    lastPausedAt: b.last_paused_at ?? null,
  };
}

/** Pauses or unpauses (both idempotent on the server), then reads the export back. */
async function setPaused(
  api: PostHogClient,
  id: string,
  paused: boolean,
  live: BatchExport,
): Promise<BatchExport> {
  if (live.paused === paused) return live;
  if (paused) await api.batchExports.pause({ id });
  else await api.batchExports.unpause({ id });
  return api.batchExports.retrieve({ id });
}

/** The BatchExportPause resource: its card (everything about it) and its provider. */
export const batchExportPause = resource<
  typeof BatchExportPauseInputsSchema,
  BatchExportPauseOutputs,
  "BatchExportPause",
  typeof BatchExportPauseOutputsSchema
>({
  name: "BatchExportPause",
  troubleshooting: "batchexportpause",
  summary: [
    "Keeps a batch export paused (or running) (type `pulumi-nodejs:dynamic/posthog:BatchExportPause`, id = the",
    "batch export id). Delete restores the state found before. Refresh shows someone unpausing it as drift.",
  ].join("\n"),
  examples: {
    typescript: [
      'import * as pulumi from "@pulumi/pulumi";',
      'import * as posthog from "pulumi-posthog";',
      "",
      'new posthog.BatchExportPause("warehouse", {',
      '  batchExportId: "0190aaaa-0000-4000-8000-000000000001",',
      '  paused: pulumi.getStack() !== "prod",',
      "});",
    ],
    program: {
      statements: [
        res("BatchExportPause", "events-to-s3", {
          batchExportId: "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c01",
          paused: true,
        }),
      ],
      outputs: { exportName: ref("events-to-s3", "name") },
    },
  },
  resolvedInputs: [],
  description: [
    "BatchExportPause: keeps a batch export paused (or unpaused).",
    "API: GET `/api/organizations/:organization_id/batch_exports/:id/`, POST `\u2026/:id/pause/` and `\u2026/:id/unpause/`.",
    "",
    "The id is the batch export's id. Create records whether the export was paused (`pausedBefore`), then",
    "pauses or unpauses it; update does the same; `pulumi import` records it as found; delete restores the state",
    "found before Pulumi took over, with no write when the export is so already. A create",
    "whose run was killed leaves `pausedBefore` in the provider's create journal, so the next",
    "create records what was found before the first one, not its own pause. When `pausedBefore` is unknown (not in",
    "the state), delete leaves the export as it is and says so.",
    "Refresh shows someone unpausing it as drift; the next `up` pauses it again.",
  ].join("\n"),
  outputs: BatchExportPauseOutputsSchema,
  secretOutputs: [],
  exclusiveInputs: [],
  importId: wholeIdImport("BatchExportPause", "<batchExportId> (a UUID)", UUID),
  adoption: {
    // A BatchExportPause always takes over an existing batch export: GET `…/batch_exports/:id/`.
    async probe(api, inputs) {
      if (!known(inputs.batchExportId)) return undefined;
      const b = await api.batchExports.retrieve({ id: String(inputs.batchExportId) });
      return {
        kind: "batch export",
        id: b.id,
        name: b.name ?? "",
        by: "a BatchExportPause always takes over an existing batch export",
        note: b.paused ? "paused now" : "running now",
      };
    },
  },
  records: { adopted: false, found: { found: "pausedBefore", from: "paused" } },
  inputs: BatchExportPauseInputsSchema,
  identity: (v) =>
    typeof v.batchExportId === "string"
      ? [
          {
            key: `batch-export:${v.batchExportId.toLowerCase()}`,
            property: "batchExportId",
            object: `the batch export ${v.batchExportId}`,
          },
        ]
      : [],
  replaceOnChanges: ["batchExportId"],
  async create(api, want, ctx) {
    const live = await api.batchExports.retrieve({ id: want.batchExportId });
    // A create of this resource that never returned (its run was killed) may have paused it already: what it
    // found before is what this resource found (provider/framework/recorded-change.ts).
    const { result: b, before: pausedBefore } = await recordedChange(ctx.creates, {
      type: "BatchExportPause",
      scope: api.settings.organizationId ?? "",
      id: want.batchExportId,
      where: journalContext(api.settings, ctx.resource),
      field: "pausedBefore",
      found: live.paused,
      change: () => setPaused(api, want.batchExportId, want.paused, live),
      idOf: (made) => made.id,
    });
    return { id: b.id, outs: toOutputs(b, pausedBefore) };
  },
  async read(api, id, props, how) {
    // A refresh reads it from the organization's list (it carries `paused` and `last_paused_at`).
    const live = await listedOrRetrieved(
      how,
      () => api.batchExports.find({ id }),
      () => api.batchExports.retrieve({ id }),
    );
    return toOutputs(live, props.pausedBefore);
  },
  async update(api, id, olds, want) {
    // One request: pause/unpause are idempotent on the server; refresh picks up lastPausedAt.
    const { paused } = want.paused
      ? await api.batchExports.pause({ id })
      : await api.batchExports.unpause({ id });
    return { ...olds, paused };
  },
  async delete(api, id, props) {
    if (typeof props.pausedBefore !== "boolean") {
      console.log(
        `warning: destroy left batch export ${id} ${props.paused ? "paused" : "running"} as it is: whether it was ` +
          "paused before Pulumi took it over is unknown, so it is not guessed. Pause or unpause it in PostHog if needed.",
      );
      return;
    }
    const restore = () =>
      props.pausedBefore === true ? api.batchExports.pause({ id }) : api.batchExports.unpause({ id });
    // The state says this resource changed it: restore the state found before Pulumi took over (one idempotent
    // request).
    if (props.paused !== props.pausedBefore) {
      await restore();
      return;
    }
    // As found, says the state (an import, or a create that found it as declared): one GET, and a request only if
    // someone changed it since.
    const live = await api.batchExports.retrieve({ id });
    if (live.paused !== props.pausedBefore) await restore();
  },
});
