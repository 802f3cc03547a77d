/**
 * Lookups: read existing PostHog objects from a Pulumi program (or a script), in the two forms Pulumi SDKs
 * give every function:
 * - `getX(args, options?)`: plain values in, a `Promise` of the result out;
 * - `getXOutput(args, options?)`: `pulumi.Input`s in (outputs of other resources, config secrets), a
 *   `pulumi.Output` of the result out. It runs once every input is known; in a preview with an unknown input
 *   its result is unknown. Results that carry tokens (`getProjectOutput`: `api_token`;
 *   `getDashboardSharingOutput`: `access_token`) are secret Outputs, as are results of secret arguments.
 *
 * Connection settings come from `options` (explicit), else the stack config (`posthog:apiKey`,
 * `posthog:host`, `posthog:organizationId`, `posthog:projectId`, read with `new pulumi.Config("posthog")`
 * inside the call), else the environment (`POSTHOG_API_KEY` …). No setting is cached or captured; the lookups of
 * one program share their connections, rate limiter and coalesced reads (one `ClientShared`, as the clients of
 * any run do).
 *
 * Under `pulumi.runtime.setMocks` no request is sent: each lookup is a Pulumi invoke of the token
 * `posthog:index:<function>` (`posthog:index:getMember` …), so `mocks.call` receives `{token, inputs: args}`
 * and what it returns is the result (`getBatchExports`: return `{ batchExports: [...] }`, an invoke result is
 * an object). Arguments are checked before either path.
 *
 * ```ts
 * import * as posthog from "pulumi-posthog";
 * const jane = posthog.getMemberOutput({ email: "jane@example.com" });
 * new posthog.DashboardCollaborator("jane-kpis", { dashboardId: 12, userUuid: jane.userUuid });
 * ```
 */
import * as pulumi from "@pulumi/pulumi";
import { MockMonitor } from "@pulumi/pulumi/runtime/mocks";
import type { ClientShared, PostHogClient } from "../provider/client";
import type { Lookup, LookupName } from "../provider/lookups";
import type { MemberInfo } from "../provider/lookups/types";
// The options and results as plain types generated from the client's schemas: this module's declaration file
// imports no zod type (a user's compile reads none of zod's declarations).
import type {
  AccessControlsInfo,
  BatchExportInfo,
  DashboardInfo,
  LookupOptions,
  ProjectInfo,
  SharingInfo,
} from "./lookup-types";

export type { MemberInfo } from "../provider/lookups/types";
export type {
  AccessControlsInfo,
  BatchExportInfo,
  DashboardInfo,
  LookupOptions,
  ProjectInfo,
  SharingInfo,
} from "./lookup-types";

/**
 * Connection options of every `getXOutput` lookup: the four connection settings may be `pulumi.Input`s
 * (e.g. `config.requireSecret("adminKey")`); the others are plain, as in {@link LookupOptions}. A secret key
 * does not make the result secret (the key never reaches the result).
 */
export type LookupOutputOptions = Omit<LookupOptions, "apiKey" | "host" | "organizationId" | "projectId"> & {
  /** Personal API key (`phx_…`). */
  apiKey?: pulumi.Input<string>;
  /** API base URL (default `https://us.posthog.com`). */
  host?: pulumi.Input<string>;
  /** Organization id (UUID); else `@current`. */
  organizationId?: pulumi.Input<string>;
  /** Project id; else `@current`. */
  projectId?: pulumi.Input<string | number>;
};

/** `T` with every property a `pulumi.Input` (the arguments of a `getXOutput`). */
export type InputArgs<T> = { [K in keyof T]: pulumi.Input<T[K]> };

/**
 * `T` without its index signature: the typed fields of an API object whose other fields pass through (they
 * are still there at run time). An Output of it lifts each typed field: `getProjectOutput(…).id` is an
 * `Output<number>`, which an index signature would make `Output<unknown> | undefined`.
 */
export type TypedFields<T> = {
  [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K];
};

// ---------------------------------------------------------------------------------------------------------
// Mocks, argument checks, connection

/**
 * Whether `pulumi.runtime.setMocks` is in effect: the resource monitor is the SDK's `MockMonitor`. A monitor
 * of another copy of `@pulumi/pulumi` (the runtime state is process-global) is recognized by the `mocks`
 * property `MockMonitor` declares.
 */
function mocksSet(): boolean {
  const monitor: unknown = pulumi.runtime.getMonitor();
  if (monitor instanceof MockMonitor) return true;
  if (typeof monitor !== "object" || monitor === null || !("mocks" in monitor)) return false;
  const mocks: unknown = monitor.mocks;
  return typeof mocks === "object" && mocks !== null && "call" in mocks && typeof mocks.call === "function";
}

/** The invoke token of a lookup, `posthog:index:<function>` (what `mocks.call` receives as `token`). */
const lookupToken = (fn: string): string => `posthog:index:${fn}`;

/** Under mocks: the invoke of `fn` with `args` (to `mocks.call`); its result as returned. */
async function invokeMock(fn: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result: unknown = await pulumi.runtime.invoke(lookupToken(fn), args);
  if (typeof result !== "object" || result === null) {
    throw new Error(`mocks.call for ${lookupToken(fn)} returned ${String(result)}: return the result object`);
  }
  return result as Record<string, unknown>;
}

/**
 * The lookups' plain code (provider/lookups: argument checks and reads), loaded on the first lookup: a program that
 * makes none does not load zod nor the client, which would cost every program start ~0.2 s (bench/profile.ts).
 */
function lookups(): typeof import("../provider/lookups") {
  // require, not import(): a dynamic import fails in test runners that run CommonJS in a VM (Jest)
  return require("../provider/lookups");
}

/**
 * Runs lookup `name` on `args`: checked first (no request, no mock call with bad arguments), then the invoke of
 * mocks (`pulumi.runtime.setMocks`), else the read with a client for `options`.
 */
async function run<R>(name: LookupName, args: unknown, options: LookupOptions | undefined): Promise<R> {
  const lookup = lookups().LOOKUPS[name] as Lookup<unknown, R>;
  const a = lookup.check(args);
  if (mocksSet()) {
    const result = await invokeMock(name, a as Record<string, unknown>);
    if (lookup.listKey === undefined) return result as R;
    const list = result[lookup.listKey];
    if (!Array.isArray(list)) {
      throw new Error(
        `mocks.call for ${lookupToken(name)} must return { ${lookup.listKey}: [...] }, got keys ${Object.keys(result).join(", ") || "(none)"}`,
      );
    }
    return list as R;
  }
  return lookup.run(client(options), a);
}

/** `obj` without its undefined properties (for exact optional property types). */
function defined<T extends object>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

/**
 * What the lookups of this program share (`createClient({ shared })`): made by the first lookup that reads, then
 * handed to every lookup's client, so N lookups of one key share connections, the rate limiter, concurrent
 * identical GETs and `find()` lists. Never closed: idle connections do not keep the program alive.
 */
let programShared: ClientShared | undefined;

/**
 * A client for `options`, else the stack config, else the environment, sharing the program's {@link programShared}.
 * Loads the client module on first use.
 */
function client(options: LookupOptions | undefined): PostHogClient {
  const { clientShared, createClient }: typeof import("../provider/client") = require("../provider/client");
  programShared ??= clientShared();
  const cfg = new pulumi.Config("posthog");
  // resolveSettings asks for namespaced keys ("posthog:apiKey"); pulumi.Config wants the bare name.
  return createClient(
    { ...options, shared: programShared },
    { get: (key) => cfg.get(key.replace(/^posthog:/, "")) },
  );
}

/**
 * The Output form of a lookup: waits for `args` and the connection settings of `options`, then runs `get`.
 * Secret arguments make the result secret; a secret connection setting does not (it never reaches the
 * result); `secret` marks results that carry tokens.
 */
function outputOf<R>(
  args: unknown,
  options: LookupOutputOptions | undefined,
  get: (args: never, options: LookupOptions) => Promise<unknown>,
  secret = false,
): pulumi.Output<R> {
  const { apiKey, host, organizationId, projectId, ...rest } = options ?? {};
  const connection = pulumi.unsecret(pulumi.output(defined({ apiKey, host, organizationId, projectId })));
  const result = pulumi
    .all([pulumi.output(args ?? {}), connection])
    .apply(([a, c]) => get(defined(a as object) as never, { ...rest, ...defined(c) } as LookupOptions));
  return (secret ? pulumi.secret(result) : result) as pulumi.Output<R>;
}

// ---------------------------------------------------------------------------------------------------------
// getMember

/** Arguments of {@link getMember}: exactly one of `email` (any case) or `userUuid`. */
export type GetMemberArgs = GetMemberByEmail | GetMemberByUuid;
/** {@link getMember} by e-mail address. */
export interface GetMemberByEmail {
  /** The member's e-mail address (compared case-insensitively). */
  email: string;
  /** The organization id; default: `posthog:organizationId`, else the key's current organization. */
  organizationId?: string;
}
/** {@link getMember} by user UUID. */
export interface GetMemberByUuid {
  /** The member's user UUID. */
  userUuid: string;
  /** The organization id; default: `posthog:organizationId`, else the key's current organization. */
  organizationId?: string;
}
/** Arguments of {@link getMemberOutput}: those of {@link getMember}, each a `pulumi.Input`. */
export type GetMemberOutputArgs = InputArgs<GetMemberByEmail> | InputArgs<GetMemberByUuid>;

/**
 * Finds an organization member by e-mail (case-insensitive) or user UUID.
 * API: GET `/api/organizations/:organization_id/members/` (all pages; scope `organization_member:read`).
 * Mock token: `posthog:index:getMember`.
 * @throws InvalidInputError (no request made) when not exactly one of `email`/`userUuid` is a non-empty
 *   string; Error when there is no such member; client errors (UnauthenticatedError, ForbiddenError, …).
 */
export async function getMember(args: GetMemberArgs, options?: LookupOptions): Promise<MemberInfo> {
  return run("getMember", args, options);
}

/**
 * {@link getMember} with `pulumi.Input` arguments and connection settings; an Output of the member.
 * @throws (as a failed Output) what {@link getMember} throws.
 */
export function getMemberOutput(
  args: GetMemberOutputArgs,
  options?: LookupOutputOptions,
): pulumi.Output<MemberInfo> {
  return outputOf<MemberInfo>(args, options, getMember);
}

// ---------------------------------------------------------------------------------------------------------
// getProject

/** Arguments of {@link getProject}: exactly one of `id` or `name` (exact, case-sensitive). */
export type GetProjectArgs = GetProjectById | GetProjectByName;
/** {@link getProject} by id. */
export interface GetProjectById {
  /** The project id: a positive integer or its decimal string. */
  id: number | string;
  /** The organization id; default: `posthog:organizationId`, else the key's current organization. */
  organizationId?: string;
}
/** {@link getProject} by name. */
export interface GetProjectByName {
  /** The project's exact name (case-sensitive); several projects of that name are an error naming their ids. */
  name: string;
  /** The organization id; default: `posthog:organizationId`, else the key's current organization. */
  organizationId?: string;
}
/** Arguments of {@link getProjectOutput}: those of {@link getProject}, each a `pulumi.Input`. */
export type GetProjectOutputArgs = InputArgs<GetProjectById> | InputArgs<GetProjectByName>;

/**
 * Finds a project by id (GET `/api/organizations/:organization_id/projects/:id/`, every field) or by exact
 * name (the project list, then GET of the match). Scope `project:read`. Mock token: `posthog:index:getProject`.
 * The result carries `api_token` (the project API key) in clear; {@link getProjectOutput} returns it secret.
 * @throws InvalidInputError (no request made) when not exactly one of `id` (a positive integer) and `name` is
 *   given; Error when no project matches, or several share the name (naming their ids); NotFoundError for an
 *   unknown id; client errors.
 */
export async function getProject(args: GetProjectArgs, options?: LookupOptions): Promise<ProjectInfo> {
  return run("getProject", args, options);
}

/**
 * {@link getProject} with `pulumi.Input` arguments and connection settings; a secret Output of the project
 * (it carries `api_token`).
 * @throws (as a failed Output) what {@link getProject} throws.
 */
export function getProjectOutput(
  args: GetProjectOutputArgs,
  options?: LookupOutputOptions,
): pulumi.Output<TypedFields<ProjectInfo>> {
  return outputOf<TypedFields<ProjectInfo>>(args, options, getProject, true);
}

// ---------------------------------------------------------------------------------------------------------
// getDashboard

/** Arguments of {@link getDashboard}. */
export interface GetDashboardArgs {
  /** The dashboard id: a positive integer, or a string of its digits (a Dashboard's `id` as it is). */
  id: number | string;
  /** The project id; else `posthog:projectId`, else `@current`. */
  projectId?: number | string;
}
/** Arguments of {@link getDashboardOutput}. */
export type GetDashboardOutputArgs = InputArgs<GetDashboardArgs>;

/**
 * Reads a dashboard by id. API: GET `/api/projects/:project_id/dashboards/:id/` (scope `dashboard:read`).
 * Mock token: `posthog:index:getDashboard`.
 * @throws InvalidInputError (no request made) when `id` is not a dashboard id; NotFoundError when it does
 *   not exist or is soft-deleted; client errors.
 */
export async function getDashboard(args: GetDashboardArgs, options?: LookupOptions): Promise<DashboardInfo> {
  return run("getDashboard", args, options);
}

/**
 * {@link getDashboard} with `pulumi.Input` arguments (e.g. `id: dashboard.id`) and connection
 * settings; an Output of the dashboard.
 * @throws (as a failed Output) what {@link getDashboard} throws.
 */
export function getDashboardOutput(
  args: GetDashboardOutputArgs,
  options?: LookupOutputOptions,
): pulumi.Output<TypedFields<DashboardInfo>> {
  return outputOf<TypedFields<DashboardInfo>>(args, options, getDashboard);
}

// ---------------------------------------------------------------------------------------------------------
// getDashboardSharing

/** Arguments of {@link getDashboardSharing} and {@link getDashboardAccessControls}. */
export interface GetDashboardSharingArgs {
  /** The dashboard id: a positive integer, or a string of its digits (a Dashboard's `id` as it is). */
  dashboardId: number | string;
  /** The project id; else `posthog:projectId`, else `@current`. */
  projectId?: number | string;
}
/** Arguments of {@link getDashboardSharingOutput}. */
export type GetDashboardSharingOutputArgs = InputArgs<GetDashboardSharingArgs>;

/**
 * Reads a dashboard's sharing configuration (`enabled`, `access_token`, `created_at`, `settings`,
 * `password_required`). API: GET `/api/projects/:project_id/dashboards/:dashboard_id/sharing/` (scope
 * `sharing_configuration:read`). Mock token: `posthog:index:getDashboardSharing`. `access_token` is in clear
 * here; {@link getDashboardSharingOutput} returns it secret.
 * @throws InvalidInputError (no request made) when `dashboardId` is not a dashboard id; NotFoundError for
 *   an unknown dashboard; client errors.
 */
export async function getDashboardSharing(
  args: GetDashboardSharingArgs,
  options?: LookupOptions,
): Promise<SharingInfo> {
  return run("getDashboardSharing", args, options);
}

/**
 * {@link getDashboardSharing} with `pulumi.Input` arguments and connection settings; a secret Output (it
 * carries `access_token`, the token of the public link).
 * @throws (as a failed Output) what {@link getDashboardSharing} throws.
 */
export function getDashboardSharingOutput(
  args: GetDashboardSharingOutputArgs,
  options?: LookupOutputOptions,
): pulumi.Output<TypedFields<SharingInfo>> {
  return outputOf<TypedFields<SharingInfo>>(args, options, getDashboardSharing, true);
}

// ---------------------------------------------------------------------------------------------------------
// getDashboardAccessControls

/** Arguments of {@link getDashboardAccessControls}. */
export type GetDashboardAccessControlsArgs = GetDashboardSharingArgs;
/** Arguments of {@link getDashboardAccessControlsOutput}. */
export type GetDashboardAccessControlsOutputArgs = InputArgs<GetDashboardAccessControlsArgs>;

/**
 * Reads a dashboard's access controls (`access_controls`, `available_access_levels`, `default_access_level`,
 * `user_access_level`, …). API: GET `/api/projects/:project_id/dashboards/:id/access_controls/` (scope
 * `access_control:read`). Mock token: `posthog:index:getDashboardAccessControls`.
 * @throws InvalidInputError (no request made) when `dashboardId` is not a dashboard id; NotFoundError for
 *   an unknown dashboard; client errors.
 */
export async function getDashboardAccessControls(
  args: GetDashboardAccessControlsArgs,
  options?: LookupOptions,
): Promise<AccessControlsInfo> {
  return run("getDashboardAccessControls", args, options);
}

/**
 * {@link getDashboardAccessControls} with `pulumi.Input` arguments and connection settings; an Output.
 * @throws (as a failed Output) what {@link getDashboardAccessControls} throws.
 */
export function getDashboardAccessControlsOutput(
  args: GetDashboardAccessControlsOutputArgs,
  options?: LookupOutputOptions,
): pulumi.Output<TypedFields<AccessControlsInfo>> {
  return outputOf<TypedFields<AccessControlsInfo>>(args, options, getDashboardAccessControls);
}

// ---------------------------------------------------------------------------------------------------------
// getBatchExports

/** Arguments of {@link getBatchExports} (all optional). */
export interface GetBatchExportsArgs {
  /** The organization id (UUID); else `posthog:organizationId`, else `@current`. */
  organizationId?: string;
}
/** Arguments of {@link getBatchExportsOutput}. */
export type GetBatchExportsOutputArgs = InputArgs<GetBatchExportsArgs>;

/**
 * Lists the organization's batch exports (every page), as an array.
 * API: GET `/api/organizations/:organization_id/batch_exports/` (scope `batch_export:read`).
 * Mock token: `posthog:index:getBatchExports`; the mock returns `{ batchExports: [...] }` (an invoke result is
 * an object) and the lookup returns the array.
 * @throws InvalidInputError (no request made) for an unknown argument or an empty `organizationId`; client
 *   errors.
 */
export async function getBatchExports(
  args: GetBatchExportsArgs = {},
  options?: LookupOptions,
): Promise<BatchExportInfo[]> {
  return run("getBatchExports", args, options);
}

/**
 * {@link getBatchExports} with `pulumi.Input` arguments and connection settings; an Output of the array.
 * @throws (as a failed Output) what {@link getBatchExports} throws.
 */
export function getBatchExportsOutput(
  args: GetBatchExportsOutputArgs = {},
  options?: LookupOutputOptions,
): pulumi.Output<TypedFields<BatchExportInfo>[]> {
  return outputOf<TypedFields<BatchExportInfo>[]>(args, options, getBatchExports);
}
