/**
 * The lookups: existing PostHog objects read by their API, the one implementation that the SDK's `getX`/`getXOutput`
 * (sdk/lookups.ts: mocks, `pulumi.Input`s, the stack config) and the provider plugin's functions
 * `posthog:index:getX` (provider/adapters/plugin) both call. Each {@link Lookup} checks its arguments (zod, before
 * any request or mock call: provider/lookups/args.ts) and reads with the client it is given.
 */
import type { z } from "zod";
import type { AccessControls, BatchExport, Dashboard, PostHogClient, Project, Sharing } from "../client";
import {
  checkArgs,
  DashboardArgsSchema,
  DashboardRefArgsSchema,
  exactlyOne,
  MemberByEmailSchema,
  MemberByUuidSchema,
  ProjectByIdSchema,
  ProjectByNameSchema,
  withOrg,
} from "./args";
import type { MemberInfo } from "./types";

export type { MemberInfo } from "./types";

/** One lookup: its argument check and its read. */
export interface Lookup<A, R> {
  /**
   * The arguments, checked and parsed (ids to numbers); no request.
   * @throws InvalidInputError naming the argument and what it accepts
   */
  check(args: unknown): A;
  /** Reads the result with `api` (its requests and errors are the lookup's docstring's in sdk/lookups.ts). */
  run(api: PostHogClient, args: A): Promise<R>;
  /** Result fields that carry a token: the SDK's Output form and the plugin return the result secret. */
  secret?: readonly string[];
  /** For a lookup whose result is a list: the key that holds it in an invoke's result object (which is an object). */
  listKey?: string;
}

/** `obj` without its undefined properties (for exact optional property types). */
function defined<T extends object>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

/** The checked arguments of a schema. */
type Out<S extends z.ZodType> = z.output<S>;

/** The organization option of checked arguments (none when unset). */
const orgOf = (a: { organizationId?: string | undefined }) =>
  a.organizationId === undefined ? {} : { organizationId: a.organizationId };

const getMember: Lookup<Out<typeof MemberByEmailSchema> | Out<typeof MemberByUuidSchema>, MemberInfo> = {
  check: (args) =>
    exactlyOne("getMember", args, "email", "userUuid")
      ? checkArgs("getMember", MemberByEmailSchema, args)
      : checkArgs("getMember", MemberByUuidSchema, args),
  async run(api, a) {
    const m =
      "email" in a
        ? await api.members.find({ ...orgOf(a), email: a.email })
        : await api.members.find({ ...orgOf(a), userUuid: a.userUuid });
    if (!m) {
      const who = "email" in a ? `e-mail ${a.email}` : `user UUID ${a.userUuid}`;
      throw new Error(
        `getMember: no member with ${who} in organization ${api.settings.organizationId ?? "@current"}: ` +
          "check the address (invite the person with an Invite first) or the organizationId",
      );
    }
    return {
      userUuid: m.user.uuid,
      email: m.user.email,
      firstName: m.user.first_name ?? "",
      lastName: m.user.last_name ?? "",
      level: m.level,
      membershipId: m.id,
      joinedAt: m.joined_at ?? null,
    };
  },
};

const getProject: Lookup<Out<typeof ProjectByIdSchema> | Out<typeof ProjectByNameSchema>, Project> = {
  check: (args) =>
    exactlyOne("getProject", args, "id", "name")
      ? checkArgs("getProject", ProjectByIdSchema, args)
      : checkArgs("getProject", ProjectByNameSchema, args),
  async run(api, a) {
    if ("id" in a) return api.projects.retrieve({ ...orgOf(a), id: a.id });
    const matches = (await api.projects.all(orgOf(a))).filter((p) => p.name === a.name);
    const [only] = matches;
    if (matches.length !== 1 || only === undefined) {
      throw new Error(
        matches.length === 0
          ? `getProject: no project named "${a.name}" visible to the key: check the name (exact, case-sensitive) or look it up by id`
          : `getProject: ${matches.length} projects are named "${a.name}": look it up by id (ids ${matches.map((p) => p.id).join(", ")})`,
      );
    }
    return api.projects.retrieve({ ...orgOf(a), id: only.id });
  },
  secret: ["api_token"],
};

const getDashboard: Lookup<Out<typeof DashboardArgsSchema>, Dashboard> = {
  check: (args) => checkArgs("getDashboard", DashboardArgsSchema, args),
  run: (api, a) => api.dashboards.retrieve(defined({ id: a.id, projectId: a.projectId })),
};

const getDashboardSharing: Lookup<Out<typeof DashboardRefArgsSchema>, Sharing> = {
  check: (args) => checkArgs("getDashboardSharing", DashboardRefArgsSchema, args),
  run: (api, a) => api.sharing.retrieve(defined({ dashboardId: a.dashboardId, projectId: a.projectId })),
  secret: ["access_token"],
};

const getDashboardAccessControls: Lookup<Out<typeof DashboardRefArgsSchema>, AccessControls> = {
  check: (args) => checkArgs("getDashboardAccessControls", DashboardRefArgsSchema, args),
  run: (api, a) => api.dashboards.accessControls(defined({ id: a.dashboardId, projectId: a.projectId })),
};

const getBatchExports: Lookup<Out<typeof withOrg>, BatchExport[]> = {
  check: (args) => checkArgs("getBatchExports", withOrg, args),
  run: (api, a) => api.batchExports.all(defined({ organizationId: a.organizationId })),
  listKey: "batchExports",
};

/** Every lookup, by its function name (`posthog:index:<name>` in the plugin and under mocks). */
export const LOOKUPS = {
  getMember,
  getProject,
  getDashboard,
  getDashboardSharing,
  getDashboardAccessControls,
  getBatchExports,
} as const;

/** A lookup's name. */
export type LookupName = keyof typeof LOOKUPS;
