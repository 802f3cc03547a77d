/**
 * `pulumi-posthog audit`: the governance rules (provider/governance/rules.ts) run against the live organization,
 * with no Pulumi stack. It reads what `export` reads (provider/export/organization.ts `readOrganization`: every
 * project the key can read, unless `projects` narrows it; GET requests only), builds the {@link GovModel} of every
 * object found, managed by a stack or not (a dashboard shared publicly by hand is found like any other), and
 * evaluates every rule the configuration leaves enabled.
 *
 * Refs in the model are `<kind>/<id>`: `domain/<uuid>`, `invite/<uuid>`, `member/<user uuid>`, `dashboard/<id>`,
 * `sharing/<dashboard id>` (the public sharing of that dashboard), `batch-export/<uuid>`, `project/<id>`.
 *
 * It fails closed: a read that failed or was skipped (a 401, a 403 that keeps a kind or a project out, a 404 on a
 * list, a cut connection) never yields a report, only an {@link AuditReadError} whose one-line message names what
 * could not be read and the setting to fix.
 */
import { ForbiddenError, type Invite, type PostHogClient, PostHogError } from "../client";
import { EXPORT_KINDS, readOrganization, type Skipped, type Snapshot } from "../export/organization";
import {
  type Enforcement,
  type EnforcementLevel,
  evaluate,
  type GovDashboard,
  type GovernanceConfig,
  type GovInvite,
  type GovModel,
  type GovSharing,
  RESTRICTION,
  RULES,
  type Violation,
} from "./rules";

/** The output formats of the audit: a terminal's table, JSON for machines, markdown for a CI job summary. */
export const AUDIT_FORMATS = ["table", "json", "markdown"] as const;
export type AuditFormat = (typeof AUDIT_FORMATS)[number];

/** How much the audit read (every object the rules were evaluated over). */
export interface AuditRead {
  domains: number;
  members: number;
  /** Pending invites evaluated (expired ones are not: they can no longer be accepted). */
  invites: number;
  expiredInvites: number;
  projects: number;
  dashboards: number;
  sharedDashboards: number;
  batchExports: number;
  /** HTTP requests made, retries included (GET only). */
  requests: number;
}

/** The outcome of an audit: what was read, each rule's enforcement, and the violations (in rule order). */
export interface AuditReport {
  host: string;
  /** The organization's id when known (from the settings or the project list). */
  organizationId: string | undefined;
  /** The ids of the projects audited. */
  projects: number[];
  read: AuditRead;
  rules: { id: string; enforcement: EnforcementLevel; violations: number }[];
  violations: Violation[];
}

/** What the audit needed and could not read; the message is one line naming it and the setting to fix. */
export class AuditReadError extends Error {
  override readonly name = "AuditReadError";
}

/** Options of {@link runAudit}. */
export interface AuditOptions {
  /** Project ids to audit; default: every project the key can read. */
  projects?: (string | number)[];
}

/**
 * What a snapshot may leave out without hiding anything from the rules: the tiles a template cannot carry, and
 * dashboards soft-deleted (before or while they were read), which no longer exist. Anything else skipped (a kind or a
 * project the key may not read, collaborators refused) fails the audit.
 */
const harmless = (k: Skipped) =>
  k.kind === "dashboard tiles" || (k.kind === "dashboards" && k.why.startsWith("soft-deleted"));

/**
 * Reads the organization `client` points at (as `export` does) and evaluates every enabled rule over it.
 * @throws AuditReadError when anything the rules need could not be read (never a partial report).
 */
export async function runAudit(
  client: PostHogClient,
  config: GovernanceConfig,
  options: AuditOptions = {},
): Promise<AuditReport> {
  const attemptsBefore = client.stats().attempts;
  let snapshot: Snapshot;
  let invites: Invite[];
  try {
    // Every kind but invites, which are read below in full: export keeps only those it can declare.
    snapshot = await readOrganization(client, {
      kinds: new Set(EXPORT_KINDS.filter((k) => k !== "invites")),
      ...(options.projects?.length ? { projects: options.projects } : {}),
    });
    invites = [];
    for await (const i of client.invites.iterate()) invites.push(i);
  } catch (e) {
    throw readError(e, client);
  }
  const unread = snapshot.skipped.filter((k) => !harmless(k));
  const first = unread[0];
  if (first !== undefined) {
    const more =
      unread.length > 1
        ? ` (and ${unread.length - 1} more: ${unread
            .slice(1)
            .map((k) => k.what)
            .join(", ")})`
        : "";
    const narrow =
      first.kind === "projects" && first.what !== "all projects"
        ? ", or leave that project out with --project <id> for each project to audit"
        : "";
    throw new AuditReadError(
      `could not read ${first.what}: ${first.why}${more}; nothing is reported: set POSTHOG_API_KEY to a key that may read the whole organization${narrow}`,
    );
  }
  const pending = invites.filter((i) => i.is_expired !== true);
  const model = govModel(snapshot, pending);
  const violations = evaluate(model, config);
  const dashboards = snapshot.projects.flatMap((p) => p.dashboards);
  return {
    host: client.settings.host,
    organizationId: snapshot.organizationId,
    projects: snapshot.projects.map((p) => p.project.id),
    read: {
      domains: snapshot.domains.length,
      members: snapshot.members.length,
      invites: pending.length,
      expiredInvites: invites.length - pending.length,
      projects: snapshot.projects.length,
      dashboards: dashboards.length,
      sharedDashboards: dashboards.filter((d) => d.dashboard.is_shared === true).length,
      batchExports: snapshot.batchExports.length,
      requests: client.stats().attempts - attemptsBefore,
    },
    rules: RULES.map((r) => ({
      id: r.id,
      enforcement: config[r.id]?.enforcement ?? "advisory",
      violations: violations.filter((v) => v.rule === r.id).length,
    })),
    violations,
  };
}

/**
 * The {@link GovModel} of a snapshot and the organization's pending invites. Every object is in it, managed or
 * not (`managed` is left unknown: the audit sees no stack). A field absent from PostHog's answer is unknown
 * (undefined: e.g. the `saml_*` fields current PostHog keeps off the domain), null is unset. A restricted dashboard's collaborators are counted from
 * its collaborator list; an unrestricted one's are not read (unknown).
 */
export function govModel(snapshot: Snapshot, invites: Invite[]): GovModel {
  const dashboards: GovDashboard[] = [];
  const sharing: GovSharing[] = [];
  for (const p of snapshot.projects) {
    for (const d of p.dashboards) {
      const detail = d.dashboard;
      const name = detail.name ?? "";
      const dashboard: GovDashboard = {
        ref: `dashboard/${detail.id}`,
        label: `Dashboard "${name}" (project ${p.project.id})`,
        id: detail.id,
        name,
        tags:
          detail.tags === undefined
            ? undefined
            : (detail.tags ?? []).filter((t): t is string => typeof t === "string"),
        restrictionLevel: detail.restriction_level ?? undefined,
        collaborators:
          (detail.restriction_level ?? RESTRICTION.everyoneCanEdit) === RESTRICTION.onlyCollaboratorsCanEdit
            ? d.collaborators.length
            : undefined,
      };
      dashboards.push(dashboard);
      sharing.push({
        ref: `sharing/${detail.id}`,
        label: `Sharing of dashboard ${detail.id} (project ${p.project.id})`,
        enabled: detail.is_shared ?? undefined,
        dashboard,
        dashboardId: detail.id,
      });
    }
  }
  return {
    domains: snapshot.domains.map((d) => ({
      ref: `domain/${d.id}`,
      label: `Domain "${d.domain}"`,
      domain: d.domain,
      ssoEnforcement: d.sso_enforcement,
      samlEntityId: d.saml_entity_id,
      samlAcsUrl: d.saml_acs_url,
      samlX509Cert: d.saml_x509_cert,
      verified: d.is_verified ?? undefined,
    })),
    invites: invites.map(
      (i): GovInvite => ({
        ref: `invite/${i.id}`,
        label: typeof i.target_email === "string" ? `Invite of "${i.target_email}"` : `Invite ${i.id}`,
        email: i.target_email ?? undefined,
        level: i.level,
      }),
    ),
    members: snapshot.members.map((m) => ({
      ref: `member/${m.user.uuid}`,
      label: `Member "${m.user.email}"`,
      email: m.user.email,
      userUuid: m.user.uuid,
      level: m.level,
    })),
    dashboards,
    sharing,
    exportPauses: snapshot.batchExports.map((b) => ({
      ref: `batch-export/${b.id}`,
      label: `Batch export "${b.name ?? b.id}"`,
      batchExportId: b.id,
      name: b.name ?? undefined,
      paused: b.paused,
    })),
    projects: snapshot.projects.map(({ project }) => ({
      ref: `project/${project.id}`,
      label: `Project "${project.name}" (id ${project.id})`,
      name: project.name,
      timezone: project.timezone,
    })),
  };
}

/** What a request of the audit reads, in words, from its path (e.g. "the dashboards of project 1001"). */
function whatPath(path: string): string {
  const org = /\/api\/organizations\/[^/]+\/(domains|members|invites|batch_exports|projects)\/$/.exec(path);
  if (org) return `the organization's ${org[1] === "batch_exports" ? "batch exports" : org[1]}`;
  if (/\/api\/organizations\/[^/]+\/?$/.test(path)) return "the organization";
  if (/\/api\/projects\/$/.test(path)) return "the projects the key can see";
  const collaborators = /\/api\/projects\/([^/]+)\/dashboards\/(\d+)\/collaborators\/$/.exec(path);
  if (collaborators)
    return `the collaborators of dashboard ${collaborators[2]} (project ${collaborators[1]})`;
  const dashboard = /\/api\/projects\/([^/]+)\/dashboards\/(\d+)\/$/.exec(path);
  if (dashboard) return `dashboard ${dashboard[2]} of project ${dashboard[1]}`;
  const dashboards = /\/api\/projects\/([^/]+)\/dashboards\/$/.exec(path);
  if (dashboards) return `the dashboards of project ${dashboards[1]}`;
  return path;
}

/**
 * The {@link AuditReadError} of a failed read: what could not be read, the client's message (which names the
 * setting to fix when the failure points at one) and, when it names none, the settings to check.
 */
function readError(e: unknown, client: PostHogClient): AuditReadError {
  if (e instanceof AuditReadError) return e;
  if (e instanceof PostHogError) {
    let text = e.message;
    let fix = "";
    if (e instanceof ForbiddenError && e.missingScope !== undefined) {
      fix = `: set POSTHOG_API_KEY to a key with the scope ${e.missingScope}`;
    } else if (!/POSTHOG_[A-Z_]+|posthog:[A-Za-z]+/.test(text)) {
      // The client's hint names the setting when the failure points at one. Any other hint speaks of a stack's
      // state (e.g. a list's 404: "nothing was marked gone"): replaced by the settings that could be wrong.
      if (e.hint !== undefined && text.endsWith(` — ${e.hint}`)) text = text.slice(0, -` — ${e.hint}`.length);
      fix =
        ` — check POSTHOG_HOST (${client.settings.host}) and POSTHOG_ORGANIZATION_ID, that what is read still ` +
        "exists, and that the key (POSTHOG_API_KEY) may read it; then run again";
    }
    return new AuditReadError(`could not read ${whatPath(e.path)}, nothing is reported: ${text}${fix}`, {
      cause: e,
    });
  }
  return new AuditReadError(`could not read the organization, nothing is reported: ${(e as Error).message}`, {
    cause: e,
  });
}

/** 1 when a mandatory violation was found, else 0 (advisory findings do not fail the audit). */
export function auditExitCode(report: AuditReport): 0 | 1 {
  return report.violations.some((v) => v.enforcement === "mandatory") ? 1 : 0;
}

/** The report as `format` prints it (no trailing newline). */
export function renderReport(report: AuditReport, format: AuditFormat): string {
  switch (format) {
    case "json":
      return JSON.stringify(
        {
          organization: report.organizationId ?? null,
          host: report.host,
          projects: report.projects,
          read: report.read,
          rules: report.rules,
          violations: report.violations.map((v) => ({
            rule: v.rule,
            enforcement: v.enforcement,
            ref: v.ref,
            label: v.label,
            message: v.message,
            fix: v.fix,
          })),
        },
        null,
        2,
      );
    case "markdown":
      return renderMarkdown(report);
    default:
      return renderTable(report);
  }
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** "3 domains, 6 members, …" */
function readLine(r: AuditRead): string {
  return [
    plural(r.domains, "domain"),
    plural(r.members, "member"),
    `${plural(r.invites, "pending invite")}${r.expiredInvites > 0 ? ` (${r.expiredInvites} expired, not evaluated)` : ""}`,
    plural(r.projects, "project"),
    `${plural(r.dashboards, "dashboard")} (${r.sharedDashboards} shared publicly)`,
    plural(r.batchExports, "batch export"),
  ].join(", ");
}

/** "12 rules evaluated (5 mandatory, 7 advisory), 0 disabled" */
function rulesLine(report: AuditReport): string {
  const count = (e: EnforcementLevel) => report.rules.filter((r) => r.enforcement === e).length;
  const evaluated = report.rules.length - count("disabled");
  return `${plural(evaluated, "rule")} evaluated (${count("mandatory")} mandatory, ${count("advisory")} advisory), ${count("disabled")} disabled`;
}

const countOf = (report: AuditReport, e: Enforcement) =>
  report.violations.filter((v) => v.enforcement === e).length;

const subject = (report: AuditReport) =>
  `organization ${report.organizationId ?? "@current"} at ${report.host}`;

function renderTable(report: AuditReport): string {
  const lines = [
    `PostHog governance audit of ${subject(report)}`,
    `Read: ${readLine(report.read)} (${plural(report.read.requests, "request")}, GET only)`,
    `Rules: ${rulesLine(report)}`,
    "",
  ];
  if (report.violations.length === 0) {
    lines.push("No violations.");
    return lines.join("\n");
  }
  const width = (h: string, of: (v: Violation) => string) =>
    Math.max(h.length, ...report.violations.map((v) => of(v).length));
  const w = [
    width("ENFORCEMENT", (v) => v.enforcement),
    width("RULE", (v) => v.rule),
    width("OBJECT", (v) => v.ref),
  ];
  const row = (a: string, b: string, c: string, d: string) =>
    `${a.padEnd(w[0] ?? 0)}  ${b.padEnd(w[1] ?? 0)}  ${c.padEnd(w[2] ?? 0)}  ${d}`;
  lines.push(row("ENFORCEMENT", "RULE", "OBJECT", "FINDING"));
  for (const v of report.violations) {
    lines.push(row(v.enforcement, v.rule, v.ref, v.message));
    lines.push(row("", "", "", `fix: ${v.fix}`));
  }
  const mandatory = countOf(report, "mandatory");
  lines.push(
    "",
    `${plural(report.violations.length, "violation")}: ${mandatory} mandatory${mandatory > 0 ? " (the audit fails)" : ""}, ${countOf(report, "advisory")} advisory`,
  );
  return lines.join("\n");
}

/**
 * Text in a markdown table cell: pipes, emphasis and HTML characters escaped (a fix's `<the Domain>` would be
 * read as a tag, a pattern's `*` as emphasis), line breaks as spaces.
 */
const cell = (s: string) =>
  s
    .replace(/[\\|*_`[\]]/g, (c) => `\\${c}`)
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/\r?\n/g, " ");

/** A ref as code in a table cell (only a pipe needs escaping there). */
const code = (s: string) => `\`${s.replace(/\|/g, "\\|")}\``;

function renderMarkdown(report: AuditReport): string {
  const mandatory = countOf(report, "mandatory");
  const heading =
    report.violations.length === 0
      ? "## PostHog governance audit: no violations"
      : `## PostHog governance audit: ${plural(report.violations.length, "violation")} (${mandatory} mandatory)`;
  const lines = [
    heading,
    "",
    `Audit of ${subject(report).replace(/^organization (\S+)/, "organization `$1`")}. Read: ${readLine(report.read)}.`,
    "",
  ];
  if (report.violations.length > 0) {
    lines.push("| Enforcement | Rule | Object | Finding | Fix |", "| --- | --- | --- | --- | --- |");
    for (const v of report.violations) {
      const level = v.enforcement === "mandatory" ? "**mandatory**" : "advisory";
      lines.push(`| ${level} | ${code(v.rule)} | ${code(v.ref)} | ${cell(v.message)} | ${cell(v.fix)} |`);
    }
    lines.push("");
  }
  lines.push(
    `### Rules evaluated`,
    "",
    `${rulesLine(report)}.`,
    "",
    "| Rule | Enforcement | Violations |",
    "| --- | --- | --- |",
  );
  for (const r of report.rules) {
    lines.push(`| \`${r.id}\` | ${r.enforcement} | ${r.enforcement === "disabled" ? "-" : r.violations} |`);
  }
  return lines.join("\n");
}
