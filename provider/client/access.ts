/**
 * The access check: one request proving that the settings reach PostHog (host, key, organization and, when set,
 * project) before anything is written. The provider runs it once per run (its clients share the outcome), on its
 * first operation.
 */
import { z } from "zod";
import { type ClientContext, call } from "./common";
import {
  ConnectionError,
  errorFields,
  ForbiddenError,
  isMisconfiguredConnection,
  NotFoundError,
  RateLimitedError,
  ServerError,
  UnexpectedResponseError,
} from "./errors";
import { settingOrigin } from "./settings";
import type { ClientShared } from "./shared";
import { path } from "./transport";

/** Parameters of {@link checkAccess}. */
export interface CheckAccessParams {
  /**
   * When true, a check made earlier by this client or one sharing its {@link ClientShared} (`createClient({ shared })`)
   * for the same key, host, organization and project is not repeated: its outcome (success, or the definite error it
   * threw) is returned again; a failure that may pass (5xx, 429, no connection) is checked again by the next call.
   * Default false.
   */
  once?: boolean | undefined;
}

/** What {@link checkAccess} proved. */
export interface AccessProof {
  /** The organization id checked (`@current` when none is set). */
  organizationId: string;
  /** The project id checked, when one is set (else undefined: no project was checked). */
  projectId: string | undefined;
  /** The requests it made (1, or 2 for a key restricted to projects). */
  requests: number;
}

/** Either a page `{results: […]}` or one object with an `id`: all the check needs to see it is PostHog's API. */
const ProbeSchema = z.union([
  z.looseObject({ results: z.array(z.unknown()) }),
  z.looseObject({ id: z.union([z.number(), z.string()]) }),
]);

/**
 * Proves that the client's settings reach PostHog: the host answers as PostHog's API, the key is accepted, the
 * organization (`settings.organizationId`, else the key owner's `@current`) exists and the key reaches it, and,
 * when `settings.projectId` is set, that project exists in that organization and the key reaches it.
 *
 * Requests (scope `project:read`, which `project:write` includes): GET
 * `/api/organizations/:organization_id/projects/:project_id/` when a project id is set, else GET
 * `/api/organizations/:organization_id/projects/?limit=1`. A key restricted to projects (refused on every
 * organization endpoint) is checked with GET `/api/projects/:project_id/dashboards/?limit=1` (`dashboard:read`)
 * instead, after that refusal.
 *
 * @throws UnauthenticatedError (key), NotFoundError with `missing` `organization`/`project`/`endpoint`/
 *   `unrecognized` (ids, host), ForbiddenError (scope or restriction), ConnectionError, UnexpectedResponseError
 *   (the host is not PostHog's API): each message ends with the setting to check and where it came from.
 */
export function checkAccess(ctx: ClientContext, p: CheckAccessParams = {}): Promise<AccessProof> {
  const organizationId = ctx.org(undefined);
  const projectId = ctx.settings.projectId === "@current" ? undefined : ctx.settings.projectId;
  if (!p.once) return probe(ctx, organizationId, projectId);
  const outcomes = ctx.shared.accessChecks;
  const id = JSON.stringify([ctx.transport.scope, organizationId, projectId ?? null]);
  let outcome = outcomes.get(id);
  if (!outcome) {
    const made = probe(ctx, organizationId, projectId);
    outcome = made;
    outcomes.set(id, made);
    // A definite answer (4xx, TLS/HTTP not spoken, not PostHog's API) is kept for the next callers; a failure
    // that may pass (5xx, 429, no connection, after the client's retries) is forgotten once every caller then
    // waiting has it, so a later operation checks again.
    made.catch((e: unknown) => {
      if (mayPass(e) && outcomes.get(id) === made) outcomes.delete(id);
    });
  }
  return outcome;
}

async function probe(
  ctx: ClientContext,
  organizationId: string,
  projectId: string | undefined,
): Promise<AccessProof> {
  const s = ctx.settings;
  const get = (p: string, query?: Record<string, number>) =>
    call(ctx, { method: "GET", path: p, query }, ProbeSchema).catch((e: unknown) => {
      throw explain(ctx, e, organizationId, projectId);
    });
  try {
    if (projectId !== undefined) await get(path`/api/organizations/${organizationId}/projects/${projectId}/`);
    else await get(path`/api/organizations/${organizationId}/projects/`, { limit: 1 });
    return { organizationId, projectId, requests: 1 };
  } catch (e) {
    const projectKey =
      e instanceof ForbiddenError &&
      /scoped projects are only supported on project-based endpoints/i.test(e.detail ?? "");
    if (!projectKey) throw e;
    // A key restricted to projects can only manage dashboards: prove the project on a project endpoint.
    await get(path`/api/projects/${projectId ?? s.projectId ?? "@current"}/dashboards/`, { limit: 1 });
    return { organizationId, projectId, requests: 2 };
  }
}

/** A failure that a later attempt may not meet: a server error, throttling, no connection at all. */
function mayPass(e: unknown): boolean {
  return (
    e instanceof ServerError ||
    e instanceof RateLimitedError ||
    (e instanceof ConnectionError && !isMisconfiguredConnection(e))
  );
}

/** The check's own reading of a failure: a project missing from the organization is a setting to fix. */
function explain(ctx: ClientContext, e: unknown, organizationId: string, projectId: string | undefined) {
  const s = ctx.settings;
  const check = "the provider checks these settings before its first change, so nothing was written";
  if (e instanceof NotFoundError && e.missing === "object" && projectId !== undefined) {
    const where =
      organizationId === "@current" && s.organizationId === undefined
        ? "the key owner's current organization (no organization id is set: set posthog:organizationId or POSTHOG_ORGANIZATION_ID to the project's organization)"
        : `organization ${organizationId} (set by ${settingOrigin(s, "organizationId")})`;
    return new NotFoundError(
      {
        ...errorFields(e),
        hint: `project ${projectId} (set by ${settingOrigin(s, "projectId")}) is not a project of ${where} at ${s.host}, or the API key cannot reach it: check the project id and the organization id; ${check}`,
      },
      "project",
    );
  }
  if (e instanceof NotFoundError && e.missing === "object") {
    // A list of the organization cannot be "not found" in PostHog: the route itself is missing.
    return new NotFoundError(
      {
        ...errorFields(e),
        hint: `${s.host} has no such API endpoint: check the host ${s.host}, set by ${settingOrigin(s, "host")}: it must be the address PostHog is served at, with its path prefix if it has one; ${check}`,
      },
      "endpoint",
    );
  }
  if (e instanceof UnexpectedResponseError) {
    return new UnexpectedResponseError({
      ...errorFields(e),
      hint: `the answer is not PostHog's API: check the host ${s.host}, set by ${settingOrigin(s, "host")}: it must be the address PostHog is served at, with its path prefix if it has one; ${check}`,
    });
  }
  return e;
}
