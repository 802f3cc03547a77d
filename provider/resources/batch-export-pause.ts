/**
 * BatchExportPause: keeps a batch export paused (or unpaused).
 * API: GET `/api/organizations/:organization_id/batch_exports/:id/`, POST `…/:id/pause/` and `…/:id/unpause/`.
 *
 * The id is the batch export's id. Create records whether the export was paused (`pausedBefore`), then
 * pauses or unpauses it; update does the same; delete restores the state found before Pulumi took over.
 * Refresh shows someone unpausing it as drift; the next `up` pauses it again.
 */
import { z } from "zod";
import type { BatchExport, PostHogClient } from "../client";
import { defineResource } from "../lifecycle";

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

/** Outputs of a BatchExportPause. */
export interface BatchExportPauseOutputs extends Record<string, unknown> {
  batchExportId: string;
  paused: boolean;
  /** Whether the export was paused before Pulumi took over (restored on delete). */
  pausedBefore: boolean;
  /** The export's name. */
  name: string | null;
  /** When it was last paused (ISO 8601), else null. */
  lastPausedAt: string | null;
}

function toOutputs(b: BatchExport, pausedBefore: boolean): BatchExportPauseOutputs {
  return {
    batchExportId: b.id,
    paused: b.paused,
    pausedBefore,
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

/** The BatchExportPause provider. */
export const batchExportPauseProvider = defineResource<
  typeof BatchExportPauseInputsSchema,
  BatchExportPauseOutputs
>({
  name: "BatchExportPause",
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
  async create(api, want) {
    const live = await api.batchExports.retrieve({ id: want.batchExportId });
    const b = await setPaused(api, want.batchExportId, want.paused, live);
    return { id: b.id, outs: toOutputs(b, live.paused) };
  },
  async read(api, id, props) {
    return toOutputs(await api.batchExports.retrieve({ id }), props.pausedBefore);
  },
  async update(api, id, olds, want) {
    // One request: pause/unpause are idempotent on the server; refresh picks up lastPausedAt.
    const { paused } = want.paused
      ? await api.batchExports.pause({ id })
      : await api.batchExports.unpause({ id });
    return { ...olds, paused };
  },
  async delete(api, id, props) {
    // Restore the state found before Pulumi took over (one idempotent request).
    if (props.pausedBefore === true) await api.batchExports.pause({ id });
    else await api.batchExports.unpause({ id });
  },
});
