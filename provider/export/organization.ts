/**
 * Reads a live organization for `pulumi-posthog export`: GET requests only (a key with `:read` scopes is
 * enough), every list paginated, at most one request per dashboard (its detail, for the template) plus the
 * collaborator list of each dashboard restricted to collaborators. The result is plain data ({@link Snapshot})
 * that provider/export/program.ts turns into files; nothing here writes to the API or to disk.
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

/** Options of {@link readOrganization}. */
export interface ReadOptions {
  /** Project ids to export; default: every project the key can read (POSTHOG_PROJECT_ID does not narrow it). */
  projects?: (string | number)[];
  kinds?: Set<ExportKind>;
  /** Progress lines (the CLI prints them on stderr). */
  progress?: (line: string) => void;
  /** Dashboard details read at the same time. Default 4. */
  concurrency?: number;
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
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Reads the organization the client's settings point at (GET only): every project the key can read, or those
 * `options.projects` names. A kind the key may not read (403) is skipped and reported with the scope it needs (or
 * PostHog's reason), and so is everything that depends on it; a project whose dashboards the key may not read is
 * left out and reported; other errors (401, a wrong host or organization, network) are thrown: nothing sensible
 * can be exported then.
 * @throws the client's errors (UnauthenticatedError, NotFoundError for a wrong organization/project,
 *   ConnectionError), each naming the setting to fix; Error when a project of `options.projects` is not among
 *   the organization's, or when the key sees projects of several organizations and none is set
 */
export async function readOrganization(client: PostHogClient, options: ReadOptions = {}): Promise<Snapshot> {
  const kinds = options.kinds ?? new Set(EXPORT_KINDS);
  const progress = options.progress ?? (() => {});
  const skipped: Skipped[] = [];
  const requests = { lists: 0, dashboardDetails: 0, collaboratorLists: 0 };
  const attemptsBefore = client.stats().attempts;
  /** Reads every page of a list, counting its requests; a 403 skips `kind` (and returns undefined). */
  const list = async <T>(
    kind: ExportKind,
    iterate: () => AsyncIterable<T>,
    label: string,
  ): Promise<T[] | undefined> => {
    if (!kinds.has(kind)) return undefined;
    const items: T[] = [];
    try {
      for await (const item of iterate()) items.push(item);
    } catch (e) {
      if (e instanceof ForbiddenError) {
        skipped.push({ kind, what: `all ${kind}`, why: forbiddenWhy(e, kind) });
        progress(`${label}: not readable with this key (${forbiddenWhy(e, kind)})`);
        return undefined;
      }
      throw e;
    }
    progress(`${label}: ${items.length}`);
    return items;
  };

  const domains = (await list("domains", () => client.domains.iterate(), "domains")) ?? [];
  const members = (await list("members", () => client.members.iterate(), "members")) ?? [];
  const allInvites = (await list("invites", () => client.invites.iterate(), "invites")) ?? [];
  const invites: AddressedInvite[] = [];
  for (const i of allInvites) {
    if (typeof i.target_email !== "string") {
      skipped.push({
        kind: "invites",
        what: `invite ${i.id}`,
        why: "it has no e-mail address (target_email is null), and an Invite is declared by its e-mail",
      });
    } else if (i.is_expired === true) {
      skipped.push({
        kind: "invites",
        what: `invite of ${i.target_email}`,
        why: "expired (an expired invite cannot be adopted; send a new one)",
      });
    } else invites.push({ ...i, target_email: i.target_email });
  }
  const batchExports =
    (await list("batch-exports", () => client.batchExports.iterate(), "batch exports")) ?? [];

  let organizationId = client.settings.organizationId;
  const listed = kinds.has("projects")
    ? await listProjects(client, organizationId, skipped, progress)
    : undefined;
  const allProjects = listed?.projects ?? [];
  organizationId ??= allProjects.find((p) => typeof p.organization === "string")?.organization ?? undefined;
  const projects: ProjectSnapshot[] = [];
  if (listed !== undefined) {
    // Every project the key can read, unless --project narrows the export.
    const wanted = options.projects?.length
      ? options.projects.map(String)
      : allProjects.map((p) => String(p.id));
    for (const id of wanted) {
      const project = allProjects.find((p) => String(p.id) === id);
      if (!project) {
        throw new Error(
          `Project ${id} is not in this organization (its projects: ${allProjects.map((p) => `${p.id} "${p.name}"`).join(", ")}): ` +
            "check --project",
        );
      }
      projects.push({ project, dashboards: [] });
    }
  }

  for (const p of kinds.has("dashboards") ? [...projects] : []) {
    const projectId = String(p.project.id);
    const label = `dashboards of project ${projectId} "${p.project.name}"`;
    const items: Dashboard[] = [];
    try {
      for await (const d of client.dashboards.iterate({ projectId })) items.push(d);
    } catch (e) {
      if (!(e instanceof ForbiddenError)) throw e;
      if (e.missingScope !== undefined) {
        // The key may read no dashboard at all (a scope it lacks): said once, for every project.
        skipped.push({ kind: "dashboards", what: "all dashboards", why: forbiddenWhy(e, "dashboards") });
        progress(`${label}: not readable with this key (${forbiddenWhy(e, "dashboards")})`);
        break;
      }
      // This project is out of the key's reach (a key scoped to other projects, no access to a private one):
      // left out of the program, and said so.
      projects.splice(projects.indexOf(p), 1);
      const why = `the API key may not read it (403${e.detail ? `: ${e.detail}` : ""})`;
      skipped.push({ kind: "projects", what: `project ${projectId} "${p.project.name}"`, why });
      progress(`project ${projectId} "${p.project.name}": skipped, ${why}`);
      continue;
    }
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
    let done = 0;
    const read = await mapLimit(live, options.concurrency ?? 4, async (item) => {
      let detail: Dashboard;
      try {
        requests.dashboardDetails++;
        detail = await client.dashboards.retrieve({ projectId, id: item.id });
      } catch (e) {
        if (isObjectGone(e)) {
          skipped.push({
            kind: "dashboards",
            what: `dashboard ${item.id} "${item.name ?? ""}"`,
            why: "soft-deleted while exporting (PostHog answered 404)",
          });
          return undefined;
        }
        throw e;
      }
      const { template, omitted } = dashboardTemplate(detail);
      let collaborators: Collaborator[] = [];
      if (kinds.has("collaborators") && (detail.restriction_level ?? 21) === 37) {
        try {
          requests.collaboratorLists++;
          collaborators = await client.collaborators.list({ projectId, dashboardId: detail.id });
        } catch (e) {
          if (!(e instanceof ForbiddenError)) throw e;
          skipped.push({
            kind: "collaborators",
            what: `collaborators of dashboard ${detail.id}`,
            why: forbiddenWhy(e, "collaborators"),
          });
        }
      }
      done++;
      if (done % 25 === 0 || done === live.length) progress(`dashboard details: ${done}/${live.length}`);
      for (const o of omitted) {
        skipped.push({ kind: "dashboard tiles", what: `dashboard ${detail.id}: ${o.what}`, why: o.why });
      }
      return {
        dashboard: detail,
        template: template.tiles.length > 0 ? template : undefined,
        omitted,
        collaborators: [...collaborators].sort(byString((c) => c.user.email.toLowerCase())),
      } satisfies DashboardSnapshot;
    });
    p.dashboards = read.filter((d): d is DashboardSnapshot => d !== undefined);
  }

  // Every HTTP attempt of this client since the start, retries included; what is not a detail is a list page.
  requests.lists =
    client.stats().attempts - attemptsBefore - requests.dashboardDetails - requests.collaboratorLists;
  return {
    organizationId,
    host: client.settings.host,
    kinds,
    domains: [...domains].sort(byString((d) => d.domain)),
    members: [...members].sort(byString((m) => m.user.email.toLowerCase())),
    invites: invites.sort(byString((i) => i.target_email.toLowerCase())),
    projects,
    batchExports: [...batchExports].sort(byString((b) => b.id)),
    skipped,
    requests,
  };
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
): Promise<{ projects: Project[] } | undefined> {
  const all = async (iterate: () => AsyncIterable<Project>) => {
    const items: Project[] = [];
    for await (const p of iterate()) items.push(p);
    return items.sort((a, b) => a.id - b.id);
  };
  let refused: ForbiddenError;
  try {
    const projects = await all(() => client.projects.iterate());
    progress(`projects: ${projects.length}`);
    return { projects };
  } catch (e) {
    if (!(e instanceof ForbiddenError)) throw e;
    refused = e;
  }
  if (refused.missingScope === undefined) {
    try {
      let projects = await all(() => client.projects.visible.iterate());
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
