/**
 * `pulumi-posthog audit`: the governance rules (provider/apps/governance/rules.ts) run against the live organization,
 * with no Pulumi stack. It reads only what the rules need, with GET requests only (provider/apps/organization.ts
 * `readOrganization` with `details: false` and `strict`): the organization's domains, members, invites, batch
 * exports and projects at the same time, each project's dashboard list (which carries the name, tags, is_shared,
 * restriction_level and deleted the rules read: no dashboard detail), and the collaborator list of each dashboard
 * a collaborator rule needs (tagged as restricted and restricted to collaborators), in parallel within the client's
 * rate limit (480 requests a minute by default). It builds the {@link GovModel} of every object found, managed by a
 * stack or not (a dashboard shared publicly by hand is found like any other), and evaluates every rule the
 * configuration leaves enabled.
 *
 * Refs in the model are `<kind>/<id>`: `domain/<uuid>`, `invite/<uuid>`, `member/<user uuid>`, `dashboard/<id>`,
 * `sharing/<dashboard id>` (the public sharing of that dashboard), `batch-export/<uuid>`, `project/<id>`.
 *
 * It fails closed: any read it could not complete (a 401, 403, 404 or 5xx on any list, a cut connection, truncated
 * JSON, a list whose pages disagree: InconsistentListError, an object listed whose collaborators cannot be read)
 * never yields a report, only an {@link AuditReadError} whose one-line message names the read and the setting or
 * scope to check.
 *
 * Names are printed inertly: in the table and markdown formats every control character (C0, C1, DEL), line
 * separator and bidirectional control is shown escaped (`\n`, `\u001b`, …) by {@link inertText}, so a name cannot
 * add a line, move the cursor or colour the terminal; in markdown every cell that can hold a name is a code span
 * ({@link markdownCode}), so no link, image, HTML or emphasis in a name is rendered. JSON keeps every name exact.
 */
import { type Dashboard, ForbiddenError, type Invite, type PostHogClient, PostHogError } from "../../client";
import { withoutDocsLink } from "../../client/docs-link";
import {
  EXPORT_KINDS,
  newTally,
  type ReadTally,
  readOrganization,
  type Skipped,
  type Snapshot,
} from "../organization";
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
  RULE_IDS,
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
  /**
   * Progress lines (the CLI prints them on stderr): one once the read has taken `progressAfterMs` (default 3 s),
   * then one every `progressEveryMs` (default 10 s), and a last one when it is done; none for a quicker read.
   */
  progress?: (line: string) => void;
  progressAfterMs?: number;
  progressEveryMs?: number;
}

/**
 * What a snapshot may leave out without hiding anything from the rules: the tiles a template cannot carry, and
 * dashboards soft-deleted (before or while they were read), which no longer exist. Anything else skipped fails the
 * audit (the strict read throws before it skips anything else).
 */
const harmless = (k: Skipped) =>
  k.kind === "dashboard tiles" || (k.kind === "dashboards" && k.why.startsWith("soft-deleted"));

/**
 * The rules that count a dashboard's collaborators ({@link GovDashboard.collaborators}), each with a `tags` key
 * naming the dashboards it judges. test/governance/audit.test.ts checks that every rule of {@link RULES} whose
 * findings depend on the collaborators is here.
 */
export const COLLABORATOR_RULES: readonly string[] = ["posthog-restricted-dashboard-collaborators"];

/**
 * The dashboards whose collaborator list the enabled rules need: restricted to collaborators (restriction level
 * 37; below it PostHog does not use them) and tagged with one of the `tags` of an enabled rule of
 * {@link COLLABORATOR_RULES}. No rule enabled: none (no collaborator list is read).
 */
export function collaboratorsNeeded(config: GovernanceConfig): (d: Dashboard) => boolean {
  const tags = new Set<string>();
  for (const id of COLLABORATOR_RULES) {
    const settings = config[id];
    if (!RULE_IDS.includes(id) || settings === undefined || settings.enforcement === "disabled") continue;
    for (const t of (settings.config as { tags?: string[] }).tags ?? []) tags.add(t);
  }
  return (d) =>
    (d.restriction_level ?? RESTRICTION.everyoneCanEdit) === RESTRICTION.onlyCollaboratorsCanEdit &&
    (d.tags ?? []).some((t) => typeof t === "string" && tags.has(t));
}

/**
 * Reads the organization `client` points at (only what the enabled rules need, see the module's docstring) and
 * evaluates every enabled rule over it. Endpoints (GET): `/api/organizations/:org/domains/`, `…/members/`,
 * `…/invites/`, `…/batch_exports/`, `…/projects/`, `/api/projects/:project/dashboards/`,
 * `…/dashboards/:id/collaborators/`.
 * @throws AuditReadError when anything the rules need could not be read (never a partial report).
 */
export async function runAudit(
  client: PostHogClient,
  config: GovernanceConfig,
  options: AuditOptions = {},
): Promise<AuditReport> {
  const attemptsBefore = client.stats().attempts;
  const tally = newTally();
  const stopProgress = startProgress(client, tally, options);
  let snapshot: Snapshot;
  let invites: Invite[];
  try {
    // Every kind but invites, which are read beside it in full: export keeps only those it can declare.
    [snapshot, invites] = await Promise.all([
      readOrganization(client, {
        kinds: new Set(EXPORT_KINDS.filter((k) => k !== "invites")),
        ...(options.projects?.length ? { projects: options.projects } : {}),
        details: false,
        strict: true,
        collaboratorsOf: collaboratorsNeeded(config),
        tally,
      }),
      (async () => {
        tally.listsDue++;
        const all = await client.invites.all();
        tally.lists++;
        return all;
      })(),
    ]);
  } catch (e) {
    stopProgress(false);
    throw readError(e, client);
  }
  stopProgress(true);
  const unread = snapshot.skipped.filter((k) => !harmless(k));
  const first = unread[0];
  if (first !== undefined) {
    throw new AuditReadError(
      `could not read ${first.what}: ${first.why}; nothing is reported: set POSTHOG_API_KEY to a key that may read the whole organization`,
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

const thousands = (n: number) => n.toLocaleString("en-US");

/**
 * Starts the progress lines of a read (see {@link AuditOptions.progress}); returns the function that stops them,
 * saying how long the read took when a line was printed (`done` false: the read failed, nothing more is said).
 */
function startProgress(
  client: PostHogClient,
  tally: ReadTally,
  options: AuditOptions,
): (done: boolean) => void {
  const say = options.progress;
  if (say === undefined) return () => {};
  const started = Date.now();
  let said = false;
  const seconds = () => `${Math.round((Date.now() - started) / 100) / 10} s`;
  const requests = () => client.stats().attempts;
  const line = () => {
    const { queued } = client.stats();
    const limit = client.settings.rateLimit;
    const waiting =
      queued > 0 && limit !== false
        ? `, ${thousands(queued)} waiting for the key's rate limit (${thousands(limit.perMinute)} a minute, POSTHOG_RATE_LIMIT)`
        : "";
    const collaborators =
      tally.collaboratorsDue > 0
        ? `, collaborator lists ${tally.collaborators}/${tally.collaboratorsDue}`
        : "";
    said = true;
    say(
      `reading for ${seconds()}: organization lists ${tally.lists}/${tally.listsDue}, projects ${tally.projects}/` +
        `${tally.projectsDue} (${thousands(tally.dashboards)} dashboards listed)${collaborators}; ` +
        `${thousands(requests())} requests${waiting}`,
    );
  };
  let timer: NodeJS.Timeout | undefined;
  const every = options.progressEveryMs ?? 10_000;
  timer = setTimeout(function tick() {
    line();
    timer = setTimeout(tick, every);
  }, options.progressAfterMs ?? 3_000);
  return (done) => {
    clearTimeout(timer);
    if (said && done) say(`read in ${seconds()}: ${thousands(requests())} requests`);
  };
}

/**
 * The {@link GovModel} of a snapshot and the organization's pending invites. Every object is in it, managed or
 * not (`managed` is left unknown: the audit sees no stack). A field absent from PostHog's answer is unknown
 * (undefined: e.g. the `saml_*` fields current PostHog keeps off the domain), null is unset. A dashboard's collaborators
 * are counted from its collaborator list when it was read (see {@link collaboratorsNeeded}), else unknown.
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
        collaborators: d.collaboratorsRead ? d.collaborators.length : undefined,
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
 * setting to fix when the failure points at one) and, when it names none, the settings to check; then the client's
 * pointer to the docs, unless its hint was replaced (the command then points at the audit's section).
 */
function readError(e: unknown, client: PostHogClient): AuditReadError {
  if (e instanceof AuditReadError) return e;
  if (e instanceof PostHogError) {
    let text = withoutDocsLink(e.message);
    let pointer = e.message.slice(text.length);
    let fix = "";
    if (e instanceof ForbiddenError && e.missingScope !== undefined) {
      fix = `: set POSTHOG_API_KEY to a key with the scope ${e.missingScope}`;
    } else if (e instanceof ForbiddenError) {
      const inProject = /^\/api\/projects\/[^/]+\//.test(e.path);
      fix =
        " — PostHog refuses it to this key (a key scoped to some projects, or a user without access): set " +
        `POSTHOG_API_KEY to a key whose user may read the whole organization${inProject ? ", or leave that project out with --project <id> for each project to audit" : ""}`;
    } else if (!/POSTHOG_[A-Z_]+|posthog:[A-Za-z]+/.test(text)) {
      // The client's hint names the setting when the failure points at one. Any other hint speaks of a stack's
      // state (e.g. a list's 404: "nothing was marked gone"): replaced by the settings that could be wrong.
      if (e.hint !== undefined && text.endsWith(` — ${e.hint}`)) {
        text = text.slice(0, -` — ${e.hint}`.length);
        pointer = "";
      }
      fix =
        ` — check POSTHOG_HOST (${client.settings.host}) and POSTHOG_ORGANIZATION_ID, that what is read still ` +
        "exists, and that the key (POSTHOG_API_KEY) may read it; then run again";
    }
    return new AuditReadError(
      `could not read ${whatPath(e.path)}, nothing is reported: ${text}${fix}${pointer}`,
      {
        cause: e,
      },
    );
  }
  return new AuditReadError(`could not read the organization, nothing is reported: ${(e as Error).message}`, {
    cause: e,
  });
}

/** 1 when a mandatory violation was found, else 0 (advisory findings do not fail the audit). */
export function auditExitCode(report: AuditReport): 0 | 1 {
  return report.violations.some((v) => v.enforcement === "mandatory") ? 1 : 0;
}

/**
 * Characters a terminal or a renderer acts on rather than shows: C0 controls (newline, carriage return, escape…),
 * DEL, C1 controls, the line and paragraph separators, and the bidirectional marks, embeddings, overrides and
 * isolates (which can reorder what a line shows).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const ACTIVE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
const SHORT: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };
const hex4 = (c: string) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`;

/**
 * `text` with every character a terminal or renderer would act on shown escaped, as JSON writes it: `\n`, `\r`,
 * `\t`, else `\u001b`-style (see ACTIVE). Nothing else changes, so a name stays readable and can add no line, move
 * no cursor and colour nothing.
 */
export function inertText(text: string): string {
  return text.replace(ACTIVE, (c) => SHORT[c] ?? hex4(c));
}

/**
 * `text` as a markdown code span for a table cell, shown as it is and rendered as nothing else: no link, image,
 * autolink, HTML, emphasis or line break. Its characters are {@link inertText}'s with backslashes doubled (so the
 * escapes cannot be mistaken for the name's own backslashes, and no backslash can escape a cell's pipe), `|` written
 * `\|` (GitHub's table syntax for a pipe in a cell, code spans included), the fence one backtick longer than the
 * longest run of backticks in it. "" for an empty text (an empty code span is not one).
 * examples/ci/drift-summary.cjs escapes its cells the same way (test/governance/inert-names.test.ts compares them).
 */
export function markdownCode(text: string): string {
  const shown = inertText(text.replace(/\\/g, "\\\\")).replace(/\|/g, "\\|");
  if (shown === "") return "";
  const fence = "`".repeat(Math.max(0, ...(shown.match(/`+/g) ?? []).map((run) => run.length)) + 1);
  const pad = shown.startsWith("`") || shown.endsWith("`") || /^ .* $/.test(shown) ? " " : "";
  return `${fence}${pad}${shown}${pad}${fence}`;
}

/** JSON text with the characters JSON.stringify leaves raw but a terminal may act on written as \u escapes (same value). */
const jsonInert = (json: string) =>
  json.replace(/[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g, hex4);

/** The report as `format` prints it (no trailing newline). */
export function renderReport(report: AuditReport, format: AuditFormat): string {
  switch (format) {
    case "json":
      return jsonInert(
        JSON.stringify(
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
        ),
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

/**
 * The table: every text that can hold a name (object refs, findings, fixes, the host and organization) through
 * {@link inertText}, so each line starts where the table says: the three heading lines, the column heads, then one
 * row and one `fix:` line per violation.
 */
function renderTable(report: AuditReport): string {
  const lines = [
    `PostHog governance audit of organization ${inertText(report.organizationId ?? "@current")} at ${inertText(report.host)}`,
    `Read: ${readLine(report.read)} (${plural(report.read.requests, "request")}, GET only)`,
    `Rules: ${rulesLine(report)}`,
    "",
  ];
  if (report.violations.length === 0) {
    lines.push("No violations.");
    return lines.join("\n");
  }
  const rows = report.violations.map((v) => ({
    enforcement: v.enforcement,
    rule: inertText(v.rule),
    ref: inertText(v.ref),
    message: inertText(v.message),
    fix: inertText(v.fix),
  }));
  const width = (h: string, of: (v: (typeof rows)[number]) => string) =>
    Math.max(h.length, ...rows.map((v) => of(v).length));
  const w = [
    width("ENFORCEMENT", (v) => v.enforcement),
    width("RULE", (v) => v.rule),
    width("OBJECT", (v) => v.ref),
  ];
  const row = (a: string, b: string, c: string, d: string) =>
    `${a.padEnd(w[0] ?? 0)}  ${b.padEnd(w[1] ?? 0)}  ${c.padEnd(w[2] ?? 0)}  ${d}`;
  lines.push(row("ENFORCEMENT", "RULE", "OBJECT", "FINDING"));
  for (const v of rows) {
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
 * Markdown for a CI job summary: every text that can hold a name (the organization, host, object refs, findings,
 * fixes) is a code span ({@link markdownCode}); the rest is the report's own words.
 */
function renderMarkdown(report: AuditReport): string {
  const mandatory = countOf(report, "mandatory");
  const heading =
    report.violations.length === 0
      ? "## PostHog governance audit: no violations"
      : `## PostHog governance audit: ${plural(report.violations.length, "violation")} (${mandatory} mandatory)`;
  const lines = [
    heading,
    "",
    `Audit of organization ${markdownCode(report.organizationId ?? "@current")} at ${markdownCode(report.host)}. Read: ${readLine(report.read)}.`,
    "",
  ];
  if (report.violations.length > 0) {
    lines.push("| Enforcement | Rule | Object | Finding | Fix |", "| --- | --- | --- | --- | --- |");
    for (const v of report.violations) {
      const level = v.enforcement === "mandatory" ? "**mandatory**" : "advisory";
      lines.push(
        `| ${level} | ${markdownCode(v.rule)} | ${markdownCode(v.ref)} | ${markdownCode(v.message)} | ${markdownCode(v.fix)} |`,
      );
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
    lines.push(
      `| ${markdownCode(r.id)} | ${r.enforcement} | ${r.enforcement === "disabled" ? "-" : r.violations} |`,
    );
  }
  return lines.join("\n");
}
