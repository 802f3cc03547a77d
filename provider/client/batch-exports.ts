/**
 * Batch exports (organization scope): list, retrieve, pause, unpause.
 * Endpoints: `/api/organizations/:organization_id/batch_exports/` (+ `:id/`, `:id/pause/`, `:id/unpause/`).
 */
import { z } from "zod";
import {
  type ClientContext,
  call,
  listOperations,
  type OrgParams,
  type PageParams,
  pageSchema,
  parseBody,
  sharedAll,
} from "./common";
import { path } from "./transport";

/** A batch export. `destination` and `interval` are structured values the seed does not detail. */
export const BatchExportSchema = z.looseObject({
  id: z.string(),
  name: z.string().nullish(),
  model: z.string().nullish(),
  destination: z.unknown().optional(),
  interval: z.unknown().optional(),
  paused: z.boolean(),
  last_paused_at: z.string().nullish(),
  start_at: z.string().nullish(),
  end_at: z.string().nullish(),
  native_query: z.string().nullish(),
});
/** A batch export as returned by the API. */
export type BatchExport = z.output<typeof BatchExportSchema>;

/** Pause/unpause answer: "200, no body" in the seed, `{"paused": bool}` in the real service. */
export const PauseResponseSchema = z.union([z.undefined(), z.looseObject({ paused: z.boolean() })]);

/** Optional body of pause/unpause (the fields of a batch export; the real unpause also takes `backfill`). */
export const PauseBodySchema = z.looseObject({ backfill: z.boolean().optional() });
export type PauseBody = z.input<typeof PauseBodySchema>;

/** Parameters naming one batch export. */
export interface BatchExportParams extends OrgParams {
  /** Batch export UUID. */
  id: string;
}

/** The page wrapper of the list (made once: see `pageSchema`). */
const BatchExportPageSchema = pageSchema(BatchExportSchema);

const listPath = (ctx: ClientContext, p: OrgParams | undefined) =>
  path`/api/organizations/${ctx.org(p)}/batch_exports/`;

/** Operations on batch exports. */
export function batchExports(ctx: ClientContext) {
  const toggle = async (
    p: BatchExportParams & { body?: PauseBody },
    action: "pause" | "unpause",
  ): Promise<{ paused: boolean }> => {
    const body = p.body === undefined ? {} : parseBody(PauseBodySchema, p.body, "body");
    const res = await call(
      ctx,
      {
        method: "POST",
        path: path`/api/organizations/${ctx.org(p)}/batch_exports/${p.id}/${action}/`,
        body,
        signal: p.signal,
        idempotent: true,
      },
      PauseResponseSchema,
    );
    return { paused: res?.paused ?? action === "pause" };
  };
  return {
    /** GET `/api/organizations/:organization_id/batch_exports/`: `list` (one page), `iterate`, `all`. */
    ...listOperations(ctx, (p?: OrgParams & PageParams) => listPath(ctx, p), BatchExportPageSchema),
    /**
     * The batch export with this id as the organization's list shows it, or undefined when the list does not
     * show it. Served from a list read shared by concurrent and recent `find()` calls (see
     * `coalescing.findCacheMs`).
     */
    find: async (p: BatchExportParams): Promise<BatchExport | undefined> => {
      const items = await sharedAll(ctx, listPath(ctx, p), BatchExportPageSchema);
      return items.find((b) => b.id === p.id);
    },
    /** GET `…/batch_exports/:id/`. @throws NotFoundError */
    retrieve: async (p: BatchExportParams) =>
      call(
        ctx,
        {
          method: "GET",
          path: path`/api/organizations/${ctx.org(p)}/batch_exports/${p.id}/`,
          signal: p.signal,
        },
        BatchExportSchema,
      ),
    /**
     * POST `…/batch_exports/:id/pause/` (scope batch_export:write). Idempotent on the server, so retried
     * like a PATCH. Returns `{paused}` (the server's answer, else `true` when it sent no body).
     */
    pause: async (p: BatchExportParams & { body?: PauseBody }) => toggle(p, "pause"),
    /** POST `…/batch_exports/:id/unpause/`. Returns `{paused}` (else `false` when no body). */
    unpause: async (p: BatchExportParams & { body?: PauseBody }) => toggle(p, "unpause"),
  };
}
