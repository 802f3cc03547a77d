/**
 * Reads a live organization for `pulumi-posthog export` and `pulumi-posthog audit`: GET requests only (a key with
 * `:read` scopes is enough), every list read whole and checked (the client's `readList`), the organization's lists
 * at the same time; for export at most one request per dashboard (its detail, for the template) plus the
 * collaborator list of each dashboard restricted to collaborators; for the audit (`details: false`, `strict`) no
 * detail at all (the list carries what its rules read) and only the collaborator lists its rules need. The result
 * is plain data ({@link Snapshot}) that provider/apps/export/program.ts turns into files and the audit into its model;
 * nothing here writes to the API or to disk.
 *
 * Endpoints (all GET): `/api/organizations/:org/domains/`, `…/members/`, `…/invites/`, `…/projects/` (or
 * `/api/projects/` when the organization's list is refused to a key scoped to projects), `…/batch_exports/`,
 * `/api/projects/:project/dashboards/` (+ `:id/`, `:id/collaborators/`). Every project the key can read is
 * exported unless `projects` narrows it; a project whose dashboards the key may not read is left out and
 * reported in `skipped`.
 */
import {
  type BatchExport,
  type Collaborator,
  type Dashboard,
  type Domain,
  ForbiddenError,
  type Invite,
  isObjectGone,
  type Member,
  type PostHogClient,
  type Project,
} from "../client";
import { withoutDocsLink } from "../client/docs-link";
import { type DashboardTemplateJson, dashboardTemplate, type TemplateOmission } from "./dashboard-template";

/** What `export` can read, one name per kind, as given to `--only` (comma-separated). */
export const EXPORT_KINDS = [
  "domains",
  "members",
  "invites",
  "projects",
  "dashboards",
  "collaborators",
  "sharing",
  "batch-exports",
] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

/** The read scope each kind needs (named when the key lacks it). */
export const KIND_SCOPES: Record<ExportKind, string> = {
  domains: "organization:read",
  members: "organization_member:read",
  invites: "organization_member:read",
  projects: "project:read",
  dashboards: "dashboard:read",
  collaborators: "dashboard:read",
  sharing: "dashboard:read",
  "batch-exports": "batch_export:read",
};

/** Kinds another kind needs in the program (a dashboard lives in a Project; sharing on a Dashboard…). */
const NEEDS: Partial<Record<ExportKind, ExportKind[]>> = {
  dashboards: ["projects"],
  collaborators: ["dashboards", "projects"],
  sharing: ["dashboards", "projects"],
};

/**
 * Parses `--only` (e.g. "dashboards,members"): the kinds named plus those they need (dashboards need their
 * projects; collaborators and sharing need the dashboards). Undefined = every kind.
 * @throws Error naming the unknown kind and the accepted ones.
 */
export function parseKinds(only: string | undefined): Set<ExportKind> {
  if (only === undefined) return new Set(EXPORT_KINDS);
  const out = new Set<ExportKind>();
  for (const raw of only.split(",")) {
    const k = raw.trim();
    if (k === "") continue;
    if (!(EXPORT_KINDS as readonly string[]).includes(k)) {
      throw new Error(`Invalid --only: unknown kind "${k}"; accepted: ${EXPORT_KINDS.join(", ")}`);
    }
    out.add(k as ExportKind);
  }
  if (out.size === 0) throw new Error(`Invalid --only: name at least one of ${EXPORT_KINDS.join(", ")}`);
  for (const k of [...out]) for (const n of NEEDS[k] ?? []) out.add(n);
  return out;
}

/** One exported dashboard: its detail, template (when it has an exportable tile) and collaborators. */
export interface DashboardSnapshot {
  dashboard: Dashboard;
  /** The template JSON, or undefined when no tile can go in one (created plain on promotion). */
  template: DashboardTemplateJson | undefined;
  omitted: TemplateOmission[];
  /** Collaborators (restricted dashboards only; [] otherwise). */
  collaborators: Collaborator[];
  /** Whether the collaborator list was read (else `collaborators` is [] without saying anything). */
  collaboratorsRead: boolean;
}

/** One exported project and its dashboards (in id order). */
export interface ProjectSnapshot {
  project: Project;
  dashboards: DashboardSnapshot[];
}

/** An invite with its e-mail address (PostHog's model allows none: such invites are skipped). */
export type AddressedInvite = Invite & { target_email: string };

/** Something not exported, and why (for the summary). */
export interface Skipped {
  kind: ExportKind | "dashboard tiles";
  what: string;
  why: string;
}

/** Everything `export` read. Lists are in a stable order (ids, e-mails, names). */
export interface Snapshot {
  /** The organization's id when known (from the settings or the project list), else undefined. */
  organizationId: string | undefined;
  /** The API host the client used (written to the stack file when not PostHog Cloud US). */
  host: string;
  kinds: Set<ExportKind>;
  domains: Domain[];
  members: Member[];
  /** Pending invites with an e-mail address only (expired ones and those without an address are skipped). */
  invites: AddressedInvite[];
  projects: ProjectSnapshot[];
  batchExports: BatchExport[];
  skipped: Skipped[];
  /**
   * HTTP requests made (retries included in `lists`): list pages, dashboard details, collaborator lists of
   * restricted dashboards.
   */
  requests: { lists: number; dashboardDetails: number; collaboratorLists: number };
}

/**
 * What a read has done so far, for a progress line (the audit prints one on stderr when its read takes a while):
 * updated by {@link readOrganization} as each request is answered. `*Due` are known once the list that names them
 * has been read.
 */
export interface ReadTally {
  /** Organization lists read (domains, members, invites, batch exports, projects) of `listsDue`. */
  lists: number;
  listsDue: number;
  /** Projects whose dashboards are listed, of `projectsDue`. */
  projects: number;
  projectsDue: number;
  /** Dashboards listed so far. */
  dashboards: number;
  /** Dashboard details read (export only), of `detailsDue`. */
  details: number;
  detailsDue: number;
  /** Collaborator lists read, of `collaboratorsDue`. */
  collaborators: number;
  collaboratorsDue: number;
}

/** A tally of nothing read yet. */
export const newTally = (): ReadTally => ({
  lists: 0,
  listsDue: 0,
  projects: 0,
  projectsDue: 0,
  dashboards: 0,
  details: 0,
  detailsDue: 0,
  collaborators: 0,
  collaboratorsDue: 0,
});

/** Options of {@link readOrganization}. */
export interface ReadOptions {
  /** Project ids to export; default: every project the key can read (POSTHOG_PROJECT_ID does not narrow it). */
  projects?: (string | number)[];
  kinds?: Set<ExportKind>;
  /** Progress lines (the CLI prints them on stderr). */
  progress?: (line: string) => void;
  /** Dashboard details (and collaborator lists) read at the same time. Default 4; 16 without details. */
  concurrency?: number;
  /**
   * Whether each dashboard's detail is read (default true: the export's templates need its tiles). false: the
   * dashboards are the list's items (id, name, tags, is_shared, restriction_level, deleted: all the audit's rules
   * read), one request per page instead of one per dashboard; `template` is then undefined.
   */
  details?: boolean;
  /**
   * The dashboards whose collaborator list is read (with kind `collaborators`). Default: those restricted to
   * collaborators (restriction level 37), whose collaborators the program declares.
   */
  collaboratorsOf?: (dashboard: Dashboard) => boolean;
  /**
   * Fail closed (the audit): any read that fails throws, a 403 included, and the organization's project list is
   * the only source of projects (a key refused it is not read from `/api/projects/`, which lists only the
   * projects its user may see). Default false (export): a kind or project the key may not read is skipped and
   * reported in `skipped`.
   */
  strict?: boolean;
  /** Updated as the read goes (see {@link ReadTally}). */
  tally?: ReadTally;
}

const byString =
  <T>(key: (t: T) => string) =>
  (a: T, b: T) => {
    const ka = key(a);
    const kb = key(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  };

/** Runs `fn` over `items` with at most `limit` at a time, results in input order. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i] as T);
      } catch (e) {
        failed = true; // the other workers start nothing more
        throw e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** The collaborators the program declares: those of dashboards restricted to collaborators (level 37). */
const restricted = (d: Dashboard) => (d.restriction_level ?? 21) === 37;

/** One {@link readOrganization}, handed to each of its stages: the client, the options and what is gathered. */
interface OrganizationRead {
  client: PostHogClient;
  options: ReadOptions;
  kinds: Set<ExportKind>;
  progress: (line: string) => void;
  strict: boolean;
  tally: ReadTally;
  skipped: Skipped[];
  requests: Snapshot["requests"];
  /** The client's HTTP attempts before the read (see {@link Snapshot.requests}). */
  attemptsBefore: number;
  /** Progress lines of the organization's lists, said in a fixed order once all are read. */
  said: Map<string, string>;
}

/** What the organization's lists hold (undefined: a kind not read, or skipped). */
interface OrganizationLists {
  domains: Domain[] | undefined;
  members: Member[] | undefined;
  invites: Invite[] | undefined;
  batchExports: BatchExport[] | undefined;
  listed: { projects: Project[] } | undefined;
}

/** Reads a whole list of `kind` (progress line under `label`); a 403 skips `kind` (undefined), unless strict. */
async function readList<T>(
  r: OrganizationRead,
  kind: ExportKind,
  all: () => Promise<T[]>,
  label: string,
): Promise<T[] | undefined> {
  if (!r.kinds.has(kind)) return undefined;
  r.tally.listsDue++;
  let items: T[];
  try {
    items = await all();
  } catch (e) {
    if (r.strict || !(e instanceof ForbiddenError)) throw e;
    r.skipped.push({ kind, what: `all ${kind}`, why: forbiddenWhy(e, kind) });
    r.said.set(label, `${label}: not readable with this key (${forbiddenWhy(e, kind)})`);
    return undefined;
  }
  r.tally.lists++;
  r.said.set(label, `${label}: ${items.length}`);
  return items;
}

/**
 * The organization's lists of the kinds read, all at the same time (projects from {@link listProjects}); their
 * progress lines are said once all are read, in a fixed order.
 */
async function readOrganizationLists(r: OrganizationRead): Promise<OrganizationLists> {
  const { client } = r;
  const projectsLabel: string[] = [];
  const [domains, members, invites, batchExports, listed] = await Promise.all([
    readList(r, "domains", () => client.domains.all(), "domains"),
    readList(r, "members", () => client.members.all(), "members"),
    readList(r, "invites", () => client.invites.all(), "invites"),
    readList(r, "batch-exports", () => client.batchExports.all(), "batch exports"),
    r.kinds.has("projects")
      ? listProjects(
          client,
          client.settings.organizationId,
          r.skipped,
          (line) => projectsLabel.push(line),
          r.strict,
          r.tally,
        )
      : undefined,
  ]);
  for (const label of ["domains", "members", "invites", "batch exports"]) {
    const line = r.said.get(label);
    if (line !== undefined) r.progress(line);
  }
  for (const line of projectsLabel) r.progress(line);
  return { domains, members, invites, batchExports, listed };
}

/** The pending invites of `read` with an e-mail address; those without one, and expired ones, are reported skipped. */
function addressedInvites(r: OrganizationRead, read: Invite[] | undefined): AddressedInvite[] {
  const invites: AddressedInvite[] = [];
  for (const i of read ?? []) {
    if (typeof i.target_email !== "string") {
      r.skipped.push({
        kind: "invites",
        what: `invite ${i.id}`,
        why: "it has no e-mail address (target_email is null), and an Invite is declared by its e-mail",
      });
    } else if (i.is_expired === true) {
      r.skipped.push({
        kind: "invites",
        what: `invite of ${i.target_email}`,
        why: "expired (an expired invite cannot be adopted; send a new one)",
      });
    } else invites.push({ ...i, target_email: i.target_email });
  }
  return invites;
}

/**
 * The projects to read, without their dashboards yet: every project listed, or those `wanted` names (in its order);
 * none when the projects were not listed.
 * @throws Error naming a project of `wanted` that is not among those listed, and the projects listed
 */
function wantedProjects(
  listed: { projects: Project[] } | undefined,
  wanted: ReadOptions["projects"],
): ProjectSnapshot[] {
  if (listed === undefined) return [];
  const allProjects = listed.projects;
  const projects: ProjectSnapshot[] = [];
  // Every project the key can read, unless --project narrows the export.
  const ids = wanted?.length ? wanted.map(String) : allProjects.map((p) => String(p.id));
  for (const id of ids) {
    const project = allProjects.find((p) => String(p.id) === id);
    if (!project) {
      throw new Error(
        `Project ${id} is not in this organization (its projects: ${allProjects.map((p) => `${p.id} "${p.name}"`).join(", ")}): ` +
          "check --project",
      );
    }
    projects.push({ project, dashboards: [] });
  }
  return projects;
}

/**
 * Reads the dashboards of `projects` (see {@link readProjectDashboards}): strict (the audit), every project at once,
 * 4 at a time; else one project after another, until a missing scope stops them.
 */
async function readDashboards(r: OrganizationRead, projects: ProjectSnapshot[]): Promise<void> {
  const { options } = r;
  const read: ProjectDashboards = {
    client: r.client,
    kinds: r.kinds,
    skipped: r.skipped,
    requests: r.requests,
    progress: r.progress,
    tally: r.tally,
    details: options.details !== false,
    collaboratorsOf: options.collaboratorsOf ?? restricted,
    concurrency: options.concurrency ?? (options.details === false ? 16 : 4),
    strict: r.strict,
  };
  r.tally.projectsDue = projects.length;
  if (r.strict) {
    // The audit: every project at once (each one's pages and collaborator lists paced by the client's limiter).
    await mapLimit([...projects], 4, (p) => readProjectDashboards(read, p, projects));
  } else {
    for (const p of [...projects]) {
      if ((await readProjectDashboards(read, p, projects)) === "stop") break;
    }
  }
}

/**
 * Reads the organization the client's settings point at (GET only): every project the key can read, or those
 * `options.projects` names. The organization's lists are read at the same time (each list whole and checked by the
 * client: a page loop or a count its pages disagree with throws InconsistentListError), then each project's
 * dashboards, then their details (unless `details: false`) and the collaborator lists `collaboratorsOf` selects,
 * `concurrency` at a time within the client's rate limit. A kind the key may not read (403) is skipped and
 * reported with the scope it needs (or PostHog's reason), and so is everything that depends on it; a project whose
 * dashboards the key may not read is left out and reported; with `strict`, each of these throws instead. Other
 * errors (401, a wrong host or organization, network) are thrown: nothing sensible can be exported then. A
 * dashboard listed whose detail answers 404 is "soft-deleted while exporting" only when a second read of the list
 * no longer holds it; otherwise the read fails naming it.
 * @throws the client's errors (UnauthenticatedError, ForbiddenError with `strict`, NotFoundError for a wrong
 *   organization/project, ConnectionError, InconsistentListError), each naming the setting to fix; Error when a
 *   project of `options.projects` is not among the organization's, when a listed dashboard cannot be read, or
 *   when the key sees projects of several organizations and none is set
 */
export async function readOrganization(client: PostHogClient, options: ReadOptions = {}): Promise<Snapshot> {
  const r: OrganizationRead = {
    client,
    options,
    kinds: options.kinds ?? new Set(EXPORT_KINDS),
    progress: options.progress ?? (() => {}),
    strict: options.strict === true,
    tally: options.tally ?? newTally(),
    skipped: [],
    requests: { lists: 0, dashboardDetails: 0, collaboratorLists: 0 },
    attemptsBefore: client.stats().attempts,
    said: new Map(),
  };
  const lists = await readOrganizationLists(r);
  const invites = addressedInvites(r, lists.invites);
  const allProjects = lists.listed?.projects ?? [];
  const organizationId =
    client.settings.organizationId ??
    allProjects.find((p) => typeof p.organization === "string")?.organization ??
    undefined;
  const projects = wantedProjects(lists.listed, options.projects);
  if (r.kinds.has("dashboards")) await readDashboards(r, projects);
  // Every HTTP attempt of this client since the start, retries included; what is not a detail is a list page.
  const { requests } = r;
  requests.lists =
    client.stats().attempts - r.attemptsBefore - requests.dashboardDetails - requests.collaboratorLists;
  return {
    organizationId,
    host: client.settings.host,
    kinds: r.kinds,
    domains: [...(lists.domains ?? [])].sort(byString((d) => d.domain)),
    members: [...(lists.members ?? [])].sort(byString((m) => m.user.email.toLowerCase())),
    invites: invites.sort(byString((i) => i.target_email.toLowerCase())),
    projects,
    batchExports: [...(lists.batchExports ?? [])].sort(byString((b) => b.id)),
    skipped: r.skipped,
    requests,
  };
}

/** What reading one project's dashboards needs (the shared state of one {@link readOrganization}). */
interface ProjectDashboards {
  client: PostHogClient;
  kinds: Set<ExportKind>;
  skipped: Skipped[];
  requests: Snapshot["requests"];
  progress: (line: string) => void;
  tally: ReadTally;
  details: boolean;
  collaboratorsOf: (dashboard: Dashboard) => boolean;
  concurrency: number;
  strict: boolean;
}

/**
 * Reads the dashboards of project `p` into `p.dashboards`: the list, then each live dashboard's detail (when
 * `details`) and the collaborators `collaboratorsOf` selects. A 403 on the list (not strict) removes `p` from
 * `projects` and reports it, or, for a missing scope, reports every dashboard skipped and returns "stop".
 */
async function readProjectDashboards(
  r: ProjectDashboards,
  p: ProjectSnapshot,
  projects: ProjectSnapshot[],
): Promise<"stop" | undefined> {
  const { client, skipped, progress, tally } = r;
  const projectId = String(p.project.id);
  const label = `dashboards of project ${projectId} "${p.project.name}"`;
  let items: Dashboard[];
  try {
    items = await client.dashboards.all({ projectId });
  } catch (e) {
    if (r.strict || !(e instanceof ForbiddenError)) throw e;
    if (e.missingScope !== undefined) {
      // The key may read no dashboard at all (a scope it lacks): said once, for every project.
      skipped.push({ kind: "dashboards", what: "all dashboards", why: forbiddenWhy(e, "dashboards") });
      progress(`${label}: not readable with this key (${forbiddenWhy(e, "dashboards")})`);
      return "stop";
    }
    // This project is out of the key's reach (a key scoped to other projects, no access to a private one):
    // left out of the program, and said so.
    projects.splice(projects.indexOf(p), 1);
    const why = `the API key may not read it (403${e.detail ? `: ${e.detail}` : ""})`;
    skipped.push({ kind: "projects", what: `project ${projectId} "${p.project.name}"`, why });
    progress(`project ${projectId} "${p.project.name}": skipped, ${why}`);
    return undefined;
  }
  tally.projects++;
  tally.dashboards += items.length;
  progress(`${label}: ${items.length}`);
  const live = items.filter((d) => {
    if (d.deleted === true) {
      skipped.push({
        kind: "dashboards",
        what: `dashboard ${d.id} "${d.name ?? ""}"`,
        why: "soft-deleted",
      });
      return false;
    }
    return true;
  });
  live.sort((a, b) => a.id - b.id);
  const withCollaborators = (d: Dashboard) => r.kinds.has("collaborators") && r.collaboratorsOf(d);
  tally.detailsDue += r.details ? live.length : 0;
  // Without details the list tells which collaborator lists are due; with details, each detail does.
  if (!r.details) tally.collaboratorsDue += live.filter(withCollaborators).length;
  /** The list read again, once, when a listed dashboard's detail answers 404 (is it gone, or unreadable?). */
  let relisted: Promise<Dashboard[]> | undefined;
  let done = 0;
  const read = await mapLimit(live, r.concurrency, async (item) => {
    let detail: Dashboard = item;
    if (r.details) {
      try {
        r.requests.dashboardDetails++;
        detail = await client.dashboards.retrieve({ projectId, id: item.id });
        tally.details++;
      } catch (e) {
        if (!isObjectGone(e)) throw e;
        relisted ??= client.dashboards.all({ projectId });
        const again = (await relisted).find((d) => d.id === item.id);
        if (again !== undefined && again.deleted !== true) {
          throw new Error(
            `Dashboard ${item.id} "${item.name ?? ""}" of project ${projectId} is listed, but reading it answered 404 ` +
              `(${withoutDocsLink(e.message)}); it is still listed, so it was not deleted: check that the key (POSTHOG_API_KEY) may ` +
              "read it, then run again",
          );
        }
        skipped.push({
          kind: "dashboards",
          what: `dashboard ${item.id} "${item.name ?? ""}"`,
          why: "soft-deleted while exporting (PostHog answered 404, and the list no longer holds it)",
        });
        return undefined;
      }
      if (withCollaborators(detail)) tally.collaboratorsDue++;
    }
    const { template, omitted } = r.details
      ? dashboardTemplate(detail)
      : { template: undefined, omitted: [] };
    let collaborators: Collaborator[] = [];
    let collaboratorsRead = false;
    if (withCollaborators(detail)) {
      try {
        r.requests.collaboratorLists++;
        collaborators = await client.collaborators.list({ projectId, dashboardId: detail.id });
        collaboratorsRead = true;
        tally.collaborators++;
      } catch (e) {
        if (r.strict || !(e instanceof ForbiddenError)) throw e;
        skipped.push({
          kind: "collaborators",
          what: `collaborators of dashboard ${detail.id}`,
          why: forbiddenWhy(e, "collaborators"),
        });
      }
    }
    done++;
    if (r.details && (done % 25 === 0 || done === live.length))
      progress(`dashboard details: ${done}/${live.length}`);
    for (const o of omitted) {
      skipped.push({ kind: "dashboard tiles", what: `dashboard ${detail.id}: ${o.what}`, why: o.why });
    }
    return {
      dashboard: detail,
      template: template !== undefined && template.tiles.length > 0 ? template : undefined,
      omitted,
      collaborators: [...collaborators].sort(byString((c) => c.user.email.toLowerCase())),
      collaboratorsRead,
    } satisfies DashboardSnapshot;
  });
  p.dashboards = read.filter((d): d is DashboardSnapshot => d !== undefined);
  return undefined;
}

/** Why a 403 keeps `kind` out: the scope the key lacks, else PostHog's own reason (e.g. a key scoped to projects). */
function forbiddenWhy(e: ForbiddenError, kind: ExportKind): string {
  if (e.missingScope === undefined && e.detail) return `the API key may not read them (403: ${e.detail})`;
  const scope = e.missingScope ?? KIND_SCOPES[kind];
  return `the API key may not read them (403; it needs the scope ${scope}${e.detail ? `: ${e.detail}` : ""})`;
}

/**
 * Every project the key can read, sorted by id: the organization's list, or, when PostHog refuses it to a key
 * scoped to projects (a 403 naming no missing scope), GET `/api/projects/` (the projects the key's user sees,
 * kept to those of `organizationId` when it is known). A 403 of both is reported in `skipped` (undefined).
 * @throws Error when `/api/projects/` lists projects of several organizations and none is set
 */
async function listProjects(
  client: PostHogClient,
  organizationId: string | undefined,
  skipped: Skipped[],
  progress: (line: string) => void,
  strict: boolean,
  tally: ReadTally,
): Promise<{ projects: Project[] } | undefined> {
  const all = async (read: () => Promise<Project[]>) => (await read()).sort((a, b) => a.id - b.id);
  tally.listsDue++;
  let refused: ForbiddenError;
  try {
    const projects = await all(() => client.projects.all());
    tally.lists++;
    progress(`projects: ${projects.length}`);
    return { projects };
  } catch (e) {
    if (strict || !(e instanceof ForbiddenError)) throw e;
    refused = e;
  }
  if (refused.missingScope === undefined) {
    try {
      let projects = await all(() => client.projects.visible.all());
      const orgs = new Set(projects.map((p) => p.organization).filter((o) => typeof o === "string"));
      if (organizationId !== undefined)
        projects = projects.filter((p) => (p.organization ?? organizationId) === organizationId);
      else if (orgs.size > 1) {
        throw new Error(
          `The API key sees projects of ${orgs.size} organizations (${[...orgs].join(", ")}): set ` +
            "POSTHOG_ORGANIZATION_ID to the one to export",
        );
      }
      progress(
        `projects: ${projects.length} (the organization's list is refused to this key: ${refused.detail ?? "403"}; read from /api/projects/)`,
      );
      return { projects };
    } catch (e) {
      if (!(e instanceof ForbiddenError)) throw e;
    }
  }
  const why = forbiddenWhy(refused, "projects");
  skipped.push({ kind: "projects", what: "all projects", why });
  progress(`projects: not readable with this key (${why})`);
  return undefined;
}
