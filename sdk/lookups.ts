/**
 * Lookups: plain async functions that read existing objects, for use in Pulumi programs (or scripts).
 * Connection settings come from `options` (explicit), else the stack config (`posthog:apiKey`,
 * `posthog:host`, `posthog:organizationId`, `posthog:projectId`, read with `new pulumi.Config("posthog")`
 * inside the call), else the environment (`POSTHOG_API_KEY` …). Nothing is cached or captured.
 *
 * ```ts
 * const jane = await posthog.getMember({ email: "jane@example.com" });
 * new posthog.DashboardCollaborator("jane-kpis", { dashboardId: 12, userUuid: jane.userUuid });
 * ```
 */
import * as pulumi from "@pulumi/pulumi";
import {
  type AccessControls,
  type BatchExport,
  type ClientOptions,
  createClient,
  type Dashboard,
  type PostHogClient,
  type Project,
  type Sharing,
} from "../provider/client";

/** Connection options of every lookup (all optional; see the module doc for the fallbacks). */
export type LookupOptions = ClientOptions;

function client(options: LookupOptions | undefined): PostHogClient {
  const cfg = new pulumi.Config("posthog");
  // resolveSettings asks for namespaced keys ("posthog:apiKey"); pulumi.Config wants the bare name.
  return createClient(options ?? {}, { get: (key) => cfg.get(key.replace(/^posthog:/, "")) });
}

/** A member as returned by {@link getMember}. */
export interface MemberInfo {
  /** The user's UUID (what Member, DashboardCollaborator take). */
  userUuid: string;
  email: string;
  firstName: string;
  lastName: string;
  /** Organization level: 1 member, 8 admin, 15 owner. */
  level: number;
  /** The membership id (UUID). */
  membershipId: string;
  /** When the person joined (ISO 8601). */
  joinedAt: string | null;
}

/**
 * Finds an organization member by e-mail (case-insensitive) or user UUID.
 * API: GET `/api/organizations/:organization_id/members/` (all pages).
 * @throws Error when there is no such member; client errors (UnauthenticatedError, ForbiddenError, …).
 */
export async function getMember(
  args: { email: string; organizationId?: string } | { userUuid: string; organizationId?: string },
  options?: LookupOptions,
): Promise<MemberInfo> {
  const api = client(options);
  const org = args.organizationId === undefined ? {} : { organizationId: args.organizationId };
  const m =
    "email" in args
      ? await api.members.find({ ...org, email: args.email })
      : await api.members.find({ ...org, userUuid: args.userUuid });
  if (!m)
    throw new Error(
      `No member with ${"email" in args ? `e-mail ${args.email}` : `user UUID ${args.userUuid}`}`,
    );
  return {
    userUuid: m.user.uuid,
    email: m.user.email,
    firstName: m.user.first_name ?? "",
    lastName: m.user.last_name ?? "",
    level: m.level,
    membershipId: m.id,
    joinedAt: m.joined_at ?? null,
  };
}

/**
 * Finds a project by id (GET `/api/organizations/:organization_id/projects/:id/`, every field) or by exact
 * name (the project list, then GET of the match).
 * @throws Error when no project matches, or several share the name.
 */
export async function getProject(
  args: { id: number | string; organizationId?: string } | { name: string; organizationId?: string },
  options?: LookupOptions,
): Promise<Project> {
  const api = client(options);
  const org = args.organizationId === undefined ? {} : { organizationId: args.organizationId };
  if ("id" in args) return api.projects.retrieve({ ...org, id: args.id });
  const matches = (await api.projects.all(org)).filter((p) => p.name === args.name);
  if (matches.length !== 1) {
    throw new Error(
      matches.length === 0
        ? `No project named "${args.name}"`
        : `${matches.length} projects are named "${args.name}": look it up by id (ids ${matches.map((p) => p.id).join(", ")})`,
    );
  }
  return api.projects.retrieve({ ...org, id: (matches[0] as Project).id });
}

/**
 * Reads a dashboard by id. API: GET `/api/projects/:project_id/dashboards/:id/`.
 * @throws NotFoundError when it does not exist or is soft-deleted.
 */
export async function getDashboard(
  args: { id: number; projectId?: number | string },
  options?: LookupOptions,
): Promise<Dashboard> {
  const api = client(options);
  return api.dashboards.retrieve({
    id: args.id,
    ...(args.projectId === undefined ? {} : { projectId: args.projectId }),
  });
}

/**
 * Reads a dashboard's sharing configuration (`enabled`, `access_token`, `created_at`).
 * API: GET `/api/projects/:project_id/dashboards/:dashboard_id/sharing/`.
 */
export async function getDashboardSharing(
  args: { dashboardId: number; projectId?: number | string },
  options?: LookupOptions,
): Promise<Sharing> {
  const api = client(options);
  return api.sharing.retrieve({
    dashboardId: args.dashboardId,
    ...(args.projectId === undefined ? {} : { projectId: args.projectId }),
  });
}

/**
 * Reads a dashboard's access controls. API: GET `/api/projects/:project_id/dashboards/:id/access_controls/`
 * (scope access_control:read).
 */
export async function getDashboardAccessControls(
  args: { dashboardId: number; projectId?: number | string },
  options?: LookupOptions,
): Promise<AccessControls> {
  const api = client(options);
  return api.dashboards.accessControls({
    id: args.dashboardId,
    ...(args.projectId === undefined ? {} : { projectId: args.projectId }),
  });
}

/**
 * Lists the organization's batch exports (every page).
 * API: GET `/api/organizations/:organization_id/batch_exports/`.
 */
export async function getBatchExports(
  args: { organizationId?: string } = {},
  options?: LookupOptions,
): Promise<BatchExport[]> {
  const api = client(options);
  return api.batchExports.all(
    args.organizationId === undefined ? {} : { organizationId: args.organizationId },
  );
}
