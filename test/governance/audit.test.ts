/**
 * `pulumi-posthog audit` (issue 37) against the emulator over real HTTP: an organization seeded through the API
 * with one violation of every rule, on objects no stack manages (a dashboard shared publicly by hand, an owner
 * invite, a paused export…); each found with its ref, in the three formats; exit 0 clean (advisory findings
 * printed), 1 on a mandatory violation, 2 when something could not be read (a 401, a 403 that keeps dashboards
 * out, a 404 on a list, a cut connection; a wrong key, host or organization, each in one line naming the setting)
 * and on bad input, refused before any request.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COLLABORATOR_RULES } from "../../provider/apps/governance/audit";
import { evaluate, parseGovernanceConfig, RULES } from "../../provider/apps/governance/rules";
import { type CliIo, main } from "../../provider/cli";
import { requestsSince, startTestEmulator, type TestEmulator } from "../support/emulator";
import { ACTIVE, cellsOf, codeSpanText, HOSTILE_NAMES, unescapeShown } from "../support/inert";

const root = join(__dirname, "..", "..");
const work = mkdtempSync(join(tmpdir(), "governance-audit-"));
let emu: TestEmulator;

/** The ids of what the seed made, for the refs the audit must name. */
const ids = {
  web: 0,
  legacy: 0,
  scratch: 0,
  corp: "",
  sso: "",
  unverified: "",
  ownerInvite: "",
  adminInvite: "",
  gmailInvite: "",
  memberInvite: "",
  sales: 0,
  publicKpis: 0,
  status: 0,
  finance: 0,
  payroll: 0,
  board: 0,
  personsExport: "",
};
const OLIVIA = "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d01";
const ADAM = "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d02";
const MIA = "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03";
let otto = "";
let ada = "";

/** The policy config of the seeded organization: every rule mandatory but the name pattern, tuned to the seed. */
const CONFIG = {
  all: "mandatory",
  "posthog-sharing-allow-list": { allowedDashboards: ["Public KPIs"], allowedTags: ["public"] },
  "posthog-invite-admin-domains": { adminDomains: ["example.com"] },
  "posthog-invite-company-domain": { companyDomains: ["example.com"] },
  "posthog-max-owners": { maxOwners: 1 },
  "posthog-admin-allow-list": { admins: ["ada.admin@example.com"] },
  "posthog-production-exports-unpaused": { production: true },
  "posthog-project-name-pattern": { enforcementLevel: "advisory", namePattern: "^[A-Z][A-Za-z ]*$" },
};

/** Writes `config` as a file in the work directory and returns its name. */
function configFile(name: string, config: unknown): string {
  writeFileSync(join(work, name), typeof config === "string" ? config : JSON.stringify(config));
  return name;
}

/**
 * Runs `pulumi-posthog audit ARGS` in-process against `emu` (or `env` overrides); `stderr` is filled as the audit
 * writes it (a test may watch it while the audit runs); `io` adds to the CLI's io (e.g. `auditProgress`).
 */
async function audit(
  args: string[],
  env: Record<string, string> = {},
  io: Partial<CliIo> = {},
  stderr: string[] = [],
) {
  const stdout: string[] = [];
  const code = await main(["audit", ...args], {
    stdout: (l) => stdout.push(l),
    stderr: (l) => stderr.push(l),
    env: {
      POSTHOG_HOST: emu.url,
      POSTHOG_API_KEY: emu.apiKey,
      POSTHOG_RETRY_BASE_DELAY_MS: "1",
      ...env,
    },
    cwd: work,
    ...io,
  });
  return { code, out: stdout.join("\n"), stderr };
}

/** The (rule, ref) pair of every violation the seed holds under {@link CONFIG}, sorted. */
function expectedViolations(): string[][] {
  return [
    ["posthog-domain-sso-enforced", `domain/${ids.corp}`],
    ["posthog-domain-sso-enforced", `domain/${ids.unverified}`],
    ["posthog-domain-verified", `domain/${ids.unverified}`],
    ["posthog-sharing-allow-list", `sharing/${ids.sales}`],
    ["posthog-invite-not-owner", `invite/${ids.ownerInvite}`],
    ["posthog-invite-admin-domains", `invite/${ids.adminInvite}`],
    ["posthog-invite-company-domain", `invite/${ids.adminInvite}`],
    ["posthog-invite-company-domain", `invite/${ids.gmailInvite}`],
    ["posthog-max-owners", `member/${OLIVIA}`],
    ["posthog-max-owners", `member/${otto}`],
    ["posthog-admin-allow-list", `member/${ADAM}`],
    ["posthog-restricted-dashboards", `dashboard/${ids.finance}`],
    ["posthog-restricted-dashboard-collaborators", `dashboard/${ids.payroll}`],
    ["posthog-production-exports-unpaused", `batch-export/${ids.personsExport}`],
    ["posthog-project-timezone", `project/${ids.legacy}`],
    ["posthog-project-name-pattern", `project/${ids.scratch}`],
  ].sort();
}

beforeAll(async () => {
  // The world is kept in a state file so that a project without timezone can be written in it (PostHog's API, and
  // so the emulator's, refuses to clear a project's timezone), then the emulator started again on it.
  const stateFile = join(work, "world.json");
  const first = await startTestEmulator({ stateFile });
  emu = first;
  const post = async (path: string, body: unknown, status = 201) => {
    const r = await emu.call("POST", path, { body });
    if (r.status !== status) throw new Error(`POST ${path} → ${r.status} ${r.text}`);
    return r.body;
  };
  const patch = async (path: string, body: unknown) => {
    const r = await emu.call("PATCH", path, { body });
    if (r.status !== 200) throw new Error(`PATCH ${path} → ${r.status} ${r.text}`);
    return r.body;
  };
  ids.web = (await post(`${emu.org}/projects/`, { name: "Web", timezone: "Europe/Berlin" })).id;
  ids.legacy = (await post(`${emu.org}/projects/`, { name: "Legacy" })).id;
  ids.scratch = (await post(`${emu.org}/projects/`, { name: "scratch-42" })).id;

  // Domains: one verified with complete SAML enforced (clean), one verified enforcing SAML without its
  // certificate, one never verified (so without SSO either).
  const verified = async (domain: string, settings: Record<string, unknown>) => {
    const d = await post(`${emu.org}/domains/`, { domain });
    await emu.control("POST", "/dns", {
      name: `_posthog-challenge.${domain}`,
      txt: d.verification_challenge,
    });
    await post(`${emu.org}/domains/${d.id}/verify/`, {}, 200);
    await patch(`${emu.org}/domains/${d.id}/`, settings);
    return d.id as string;
  };
  const saml = {
    saml_entity_id: "https://idp.example.com/entity",
    saml_acs_url: "https://us.posthog.com/complete/saml/",
  };
  ids.sso = await verified("sso.example.com", {
    ...saml,
    saml_x509_cert: "MIIC-certificate",
    sso_enforcement: "saml",
  });
  ids.corp = await verified("corp.example.com", { ...saml, sso_enforcement: "saml" });
  ids.unverified = (await post(`${emu.org}/domains/`, { domain: "unverified.example.com" })).id;

  // Invites: at owner level, at admin level outside the admin domains, to a private address, and a clean one.
  const invite = async (target_email: string, level: number) =>
    (await post(`${emu.org}/invites/`, { target_email, level, send_email: false })).id as string;
  ids.ownerInvite = await invite("olga.owner@example.com", 15);
  ids.adminInvite = await invite("carl@contractor.io", 8);
  ids.gmailInvite = await invite("someone@gmail.com", 1);
  ids.memberInvite = await invite("nora.new@example.com", 1);

  // Members: a second owner (the seed has Olivia) and a listed admin (the seed's Adam is not listed).
  otto = (await post("/_emulator/users", { email: "otto.owner@example.com", level: 15 })).user.uuid;
  ada = (await post("/_emulator/users", { email: "ada.admin@example.com", level: 8 })).user.uuid;

  // Dashboards: one shared publicly by hand (no stack manages anything here), two shared and allowed (by name, by
  // tag), restricted-tagged ones editable by everyone, without a collaborator, and a clean one.
  const dashboard = async (project: number, body: Record<string, unknown>) =>
    (await post(`/api/projects/${project}/dashboards/`, body)).id as number;
  ids.sales = await dashboard(emu.projectId, { name: "Sales" });
  ids.publicKpis = await dashboard(emu.projectId, { name: "Public KPIs" });
  ids.status = await dashboard(ids.web, { name: "Status", tags: ["public"] });
  for (const [project, id] of [
    [emu.projectId, ids.sales],
    [emu.projectId, ids.publicKpis],
    [ids.web, ids.status],
  ] as const) {
    await patch(`/api/projects/${project}/dashboards/${id}/sharing/`, { enabled: true });
  }
  ids.finance = await dashboard(ids.web, { name: "Finance", tags: ["restricted"], restriction_level: 21 });
  ids.payroll = await dashboard(ids.web, { name: "Payroll", tags: ["restricted"], restriction_level: 37 });
  ids.board = await dashboard(emu.projectId, { name: "Board", tags: ["restricted"], restriction_level: 37 });
  await post(`${emu.project}/dashboards/${ids.board}/collaborators/`, { user_uuid: MIA, level: 37 });

  // Batch exports: the seed's "Persons to BigQuery" paused.
  const exports = (await emu.call("GET", `${emu.org}/batch_exports/`)).body.results as {
    id: string;
    name: string;
  }[];
  ids.personsExport = exports.find((e) => e.name === "Persons to BigQuery")?.id ?? "";
  await post(`${emu.org}/batch_exports/${ids.personsExport}/pause/`, {}, 200);

  await first.close();
  const world = JSON.parse(readFileSync(stateFile, "utf8"));
  const legacy = world.projects.find((p: { id: number }) => p.id === ids.legacy);
  legacy.settings.timezone = null;
  writeFileSync(stateFile, JSON.stringify(world));
  emu = await startTestEmulator({ stateFile, apiKey: first.apiKey });
});

afterAll(async () => {
  await emu?.close();
  rmSync(work, { recursive: true, force: true });
});

describe("the audit of a seeded organization", () => {
  it("finds every violation, each with its ref, on objects no stack manages; json; exit 1 (mandatory)", async () => {
    await requestsSince(emu);
    const r = await audit(["--config", configFile("policy.json", CONFIG), "--format", "json"]);
    expect(r.stderr).toEqual([]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out);
    expect(report.violations.map((v: { rule: string; ref: string }) => [v.rule, v.ref]).sort()).toEqual(
      expectedViolations(),
    );
    for (const v of report.violations) {
      expect(Object.keys(v)).toEqual(["rule", "enforcement", "ref", "label", "message", "fix"]);
      expect(v.enforcement).toBe(v.rule === "posthog-project-name-pattern" ? "advisory" : "mandatory");
    }
    const shared = report.violations.find((v: { rule: string }) => v.rule === "posthog-sharing-allow-list");
    expect(shared).toEqual({
      rule: "posthog-sharing-allow-list",
      enforcement: "mandatory",
      ref: `sharing/${ids.sales}`,
      label: `Sharing of dashboard ${ids.sales} (project ${emu.projectId})`,
      message: `Sharing of dashboard ${ids.sales} (project ${emu.projectId}) shares dashboard "Sales" publicly, and it is not in the allow list`,
      fix: expect.stringContaining("set enabled: false on the sharing"),
    });
    expect(report.violations.find((v: { ref: string }) => v.ref === `dashboard/${ids.payroll}`).message).toBe(
      `Dashboard "Payroll" (project ${ids.web}) is tagged "restricted" and has 0 collaborator(s); at least 1 required`,
    );
    expect(report.read).toEqual({
      domains: 3,
      members: 6,
      invites: 4,
      expiredInvites: 0,
      projects: 4,
      dashboards: 6,
      sharedDashboards: 3,
      batchExports: 2,
      requests: expect.any(Number),
    });
    expect(report.projects).toEqual([emu.projectId, ids.web, ids.legacy, ids.scratch]);
    expect(report.organization).toBe(emu.organizationId);
    // GET only, and every request counted.
    const requests = await requestsSince(emu);
    expect(requests.filter((q) => !q.startsWith("GET "))).toEqual([]);
    expect(report.read.requests).toBe(requests.length);
    // Only what the rules need: the five organization lists, one page of dashboards per project (the list carries
    // what the rules read: no dashboard detail), and the collaborators of the dashboards tagged restricted and
    // restricted to collaborators (Payroll and Board; Finance is editable by everyone).
    const paths = requests.map((q) => q.replace(/^GET /, "").replace(/\?.*$/, ""));
    expect(paths.filter((q) => /\/dashboards\/\d+\/$/.test(q))).toEqual([]);
    expect(paths.filter((q) => q.endsWith("/collaborators/")).sort()).toEqual(
      [
        `/api/projects/${ids.web}/dashboards/${ids.payroll}/collaborators/`,
        `/api/projects/${emu.projectId}/dashboards/${ids.board}/collaborators/`,
      ].sort(),
    );
    expect(requests).toHaveLength(5 + 4 + 2);
  });

  it("a publicly shared dashboard whose detail read would answer 404: no detail is read, the sharing is found (exit 1)", async () => {
    // Before issue 49 the audit read each dashboard's detail and took this 404 for "soft-deleted while exporting":
    // the one shared dashboard dropped out and the report was clean (exit 0).
    const only = configFile("sharing-only.json", {
      all: "disabled",
      "posthog-sharing-allow-list": "mandatory",
    });
    const armed = await emu.control("POST", "/faults", {
      method: "GET",
      path: `^/api/projects/${emu.projectId}/dashboards/${ids.sales}/$`,
      status: 404,
    });
    expect(armed.status).toBe(201);
    try {
      const r = await audit(["--config", only, "--format", "json"]);
      expect(r.stderr).toEqual([]);
      expect(r.code).toBe(1);
      expect(
        JSON.parse(r.out)
          .violations.map((v: { ref: string }) => v.ref)
          .sort(),
      ).toEqual([`sharing/${ids.sales}`, `sharing/${ids.publicKpis}`, `sharing/${ids.status}`].sort());
    } finally {
      await emu.control("DELETE", "/faults");
    }
  });

  it("no collaborator list is read when no enabled rule counts collaborators", async () => {
    const config = Object.fromEntries(COLLABORATOR_RULES.map((id) => [id, "disabled"]));
    await requestsSince(emu);
    const r = await audit(["--config", configFile("no-collaborators.json", config), "--format", "json"]);
    expect(r.stderr).toEqual([]);
    expect((await requestsSince(emu)).filter((q) => q.includes("/collaborators/"))).toEqual([]);
  });

  it("table (the default): one row per violation with its fix, the counts, and what was read", async () => {
    const r = await audit(["--config", configFile("policy.json", CONFIG)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toEqual([]);
    const lines = r.out.split("\n");
    expect(lines[0]).toBe(`PostHog governance audit of organization ${emu.organizationId} at ${emu.url}`);
    expect(lines[1]).toMatch(
      /^Read: 3 domains, 6 members, 4 pending invites, 4 projects, 6 dashboards \(3 shared publicly\), 2 batch exports \(\d+ requests, GET only\)$/,
    );
    expect(lines[2]).toBe("Rules: 13 rules evaluated (12 mandatory, 1 advisory), 0 disabled");
    expect(lines[4]).toMatch(/^ENFORCEMENT +RULE +OBJECT +FINDING$/);
    for (const [rule, ref] of expectedViolations()) {
      expect(lines.some((l) => new RegExp(`^\\w+ +${rule} +${ref} +\\S`).test(l))).toBe(true);
    }
    expect(lines.filter((l) => /^ +fix: /.test(l))).toHaveLength(expectedViolations().length);
    expect(lines.at(-1)).toBe("16 violations: 15 mandatory (the audit fails), 1 advisory");
  });

  it("markdown for a CI job summary: a heading, a table of the violations, the rules evaluated", async () => {
    const r = await audit(["--config", configFile("policy.json", CONFIG), "--format", "markdown"]);
    expect(r.code).toBe(1);
    const lines = r.out.split("\n");
    expect(lines[0]).toBe("## PostHog governance audit: 16 violations (15 mandatory)");
    expect(lines).toContain("| Enforcement | Rule | Object | Finding | Fix |");
    const rows = lines.filter((l) => /^\| (\*\*mandatory\*\*|advisory) \| `posthog-/.test(l));
    expect(rows.map((l) => l.split(" | ").slice(1, 3).join(" ").replace(/`/g, "")).sort()).toEqual(
      expectedViolations().map(([rule, ref]) => `${rule} ${ref}`),
    );
    // Every finding and fix is a code span: shown as it is (a pattern's brackets and star, a fix's <placeholder>),
    // rendered as nothing else; a backslash doubled.
    expect(lines).toContain(
      `| advisory | \`posthog-project-name-pattern\` | \`project/${ids.scratch}\` | \`Project "scratch-42" (id ${ids.scratch})'s ` +
        "name does not match ^[A-Z][A-Za-z ]*$` | `rename the Project to match namePattern in the " +
        "posthog-project-name-pattern config` |",
    );
    expect(
      lines.find(
        (l) => l.includes("`posthog-restricted-dashboard-collaborators`") && l.includes("0 collaborator"),
      ),
    ).toContain("a DashboardCollaborator with dashboardId: <the Dashboard>.id, userUuid and level");
    for (const row of rows) expect(cellsOf(row), row).toHaveLength(5);
    expect(lines).toContain("### Rules evaluated");
    expect(lines).toContain("| `posthog-max-owners` | mandatory | 2 |");
    expect(lines).toContain("| `posthog-project-name-pattern` | advisory | 1 |");
    expect(
      lines.filter((l) => /^\| `posthog-[a-z-]+` \| (mandatory|advisory|disabled) \|/.test(l)),
    ).toHaveLength(RULES.length);
  });

  it("advisory findings only: printed, exit 0; a disabled rule is not evaluated", async () => {
    const advisory = { ...CONFIG, all: "advisory", "posthog-domain-verified": "disabled" };
    const r = await audit(["--config", configFile("advisory.json", advisory), "--format", "json"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out);
    expect(report.violations.map((v: { rule: string; ref: string }) => [v.rule, v.ref]).sort()).toEqual(
      expectedViolations().filter(([rule]) => rule !== "posthog-domain-verified"),
    );
    expect(new Set(report.violations.map((v: { enforcement: string }) => v.enforcement))).toEqual(
      new Set(["advisory"]),
    );
    expect(report.rules.find((x: { id: string }) => x.id === "posthog-domain-verified")).toEqual({
      id: "posthog-domain-verified",
      enforcement: "disabled",
      violations: 0,
    });
  });

  it("without --config: every rule advisory with its defaults (exit 0), the shared dashboards all found", async () => {
    const r = await audit(["--format", "json"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out);
    const refs = (rule: string) =>
      report.violations
        .filter((v: { rule: string }) => v.rule === rule)
        .map((v: { ref: string }) => v.ref)
        .sort();
    // No allow list: every public sharing is a finding; no company domains configured: not evaluated.
    expect(refs("posthog-sharing-allow-list")).toEqual(
      [ids.sales, ids.publicKpis, ids.status].map((id) => `sharing/${id}`).sort(),
    );
    expect(refs("posthog-invite-company-domain")).toEqual([]);
    // At most 3 owners by default; nobody listed as admin: both admins found.
    expect(refs("posthog-max-owners")).toEqual([]);
    expect(refs("posthog-admin-allow-list")).toEqual([`member/${ADAM}`, `member/${ada}`].sort());
    // Not production unless configured.
    expect(refs("posthog-production-exports-unpaused")).toEqual([]);
  });

  it("--project narrows the dashboards and projects audited", async () => {
    const r = await audit([
      "--config",
      configFile("policy.json", CONFIG),
      "--project",
      String(ids.web),
      "--format",
      "json",
    ]);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out);
    expect(report.projects).toEqual([ids.web]);
    const pairs = report.violations.map((v: { rule: string; ref: string }) => [v.rule, v.ref]);
    expect(pairs).toContainEqual(["posthog-restricted-dashboards", `dashboard/${ids.finance}`]);
    expect(pairs).not.toContainEqual(["posthog-sharing-allow-list", `sharing/${ids.sales}`]);
    expect(pairs).not.toContainEqual(["posthog-project-timezone", `project/${ids.legacy}`]);
  });

  it("is the pulumi-posthog bin (built): the report on stdout, exit 1 on a mandatory violation", async () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    const args = [join(root, pkg.bin["pulumi-posthog"]), "audit", "--config", join(work, "policy.json")];
    const env = { ...process.env, POSTHOG_HOST: emu.url, POSTHOG_API_KEY: emu.apiKey };
    // Asynchronously: the emulator answers from this process.
    const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
      const child = execFile(process.execPath, [...args, "--format", "json"], { env }, (_e, stdout, stderr) =>
        done({ status: child.exitCode, stdout, stderr }),
      );
    });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(1);
    expect(JSON.parse(run.stdout).violations).toHaveLength(expectedViolations().length);
  });
});

describe("a clean organization", () => {
  it("exit 0 with every rule mandatory, saying so in each format", async () => {
    const clean = await startTestEmulator();
    const config = configFile("clean.json", {
      all: "mandatory",
      "posthog-admin-allow-list": { admins: ["adam.admin@example.com"] },
    });
    const env = { POSTHOG_HOST: clean.url, POSTHOG_API_KEY: clean.apiKey };
    try {
      const table = await audit(["--config", config], env);
      expect(table.code).toBe(0);
      expect(table.stderr).toEqual([]);
      expect(table.out.split("\n").slice(2)).toEqual([
        "Rules: 13 rules evaluated (13 mandatory, 0 advisory), 0 disabled",
        "",
        "No violations.",
      ]);
      const json = await audit(["--config", config, "--format", "json"], env);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.out).violations).toEqual([]);
      const markdown = await audit(["--config", config, "--format", "markdown"], env);
      expect(markdown.code).toBe(0);
      expect(markdown.out.split("\n")[0]).toBe("## PostHog governance audit: no violations");
    } finally {
      await clean.close();
    }
  });
});

describe("fails closed: exit 2, one line naming what could not be read and the setting, no report", () => {
  /** Runs the audit with a fault armed on `path` (a regular expression), then disarms it. */
  async function withFault(fault: Record<string, unknown>, env: Record<string, string> = {}) {
    const armed = await emu.control("POST", "/faults", fault);
    expect(armed.status).toBe(201);
    try {
      return await audit(["--config", configFile("policy.json", CONFIG)], env);
    } finally {
      await emu.control("DELETE", "/faults");
    }
  }

  it("a 401 on the members list", async () => {
    const r = await withFault({ method: "GET", path: "/members/$", status: 401 });
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.stderr).toHaveLength(1);
    expect(r.stderr[0]).toMatch(
      /^pulumi-posthog audit: could not read the organization's members, nothing is reported: GET \/api\/organizations\/[^ ]+\/members\/ → 401 /,
    );
    expect(r.stderr[0]).toContain("POSTHOG_API_KEY");
  });

  it("a 404 on one project's dashboard list", async () => {
    const r = await withFault({ method: "GET", path: `^/api/projects/${ids.web}/dashboards/$`, status: 404 });
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.stderr).toHaveLength(1);
    expect(r.stderr[0]).toMatch(
      new RegExp(
        `^pulumi-posthog audit: could not read the dashboards of project ${ids.web}, nothing is reported: GET /api/projects/${ids.web}/dashboards/ → 404 `,
      ),
    );
    // The settings that could be wrong, not the provider's words about a stack's state.
    expect(r.stderr[0]).toContain(`check POSTHOG_HOST (${emu.url}) and POSTHOG_ORGANIZATION_ID`);
    expect(r.stderr[0]).not.toContain("marked gone");
    // Nor the client's pointer about a stack's objects: the audit's own section.
    expect(r.stderr[0]?.endsWith(`; then run again${AUDIT_DOCS}`)).toBe(true);
    expect(r.stderr[0]?.split(" (see docs/")).toHaveLength(2);
  });

  it("a connection cut on every try of the batch export list", async () => {
    const r = await withFault({ method: "GET", path: "/batch_exports/$", reset: true });
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.stderr).toHaveLength(1);
    expect(r.stderr[0]).toMatch(
      /^pulumi-posthog audit: could not read the organization's batch exports, nothing is reported: GET \/api\/organizations\/[^ ]+\/batch_exports\/ → no response/,
    );
    expect(r.stderr[0]).toContain("POSTHOG_HOST");
  });

  it("a key that may not read dashboards (403): the scope named, not a clean report", async () => {
    const key = await emu.createKey({
      scopes: ["organization:read", "organization_member:read", "project:read", "batch_export:read"],
    });
    const r = await audit(["--config", configFile("policy.json", CONFIG)], { POSTHOG_API_KEY: key });
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.stderr).toHaveLength(1);
    expect(r.stderr[0]).toMatch(
      /^pulumi-posthog audit: could not read the dashboards of project \d+, nothing is reported: GET \/api\/projects\/\d+\/dashboards\/ → 403 permission_denied: API key missing required scope 'dashboard:read'/,
    );
    expect(r.stderr[0]).toMatch(
      /: set POSTHOG_API_KEY to a key with the scope dashboard:read \(see docs\/troubleshooting\/settings-and-keys\.md#403-a-scope-is-missing-or-the-key-is-restricted\)$/,
    );
  });

  /**
   * Every read the audit makes, with a fault on it: exit 2, nothing on stdout, one line naming what could not be
   * read (`what`) and a setting or scope to check. `fault` is the emulator's fault (its `path` a regular expression).
   */
  /** The organization's paths, as the audit asks them (POSTHOG_ORGANIZATION_ID unset: `@current`). */
  const org = () => "^/api/organizations/[^/]+";
  const cases: [string, () => Record<string, unknown>, () => string][] = [
    [
      "a 403 on the organization's project list",
      () => ({ path: `${org()}/projects/$`, status: 403 }),
      () => "the organization's projects",
    ],
    [
      "a 404 on the organization's project list",
      () => ({ path: `${org()}/projects/$`, status: 404 }),
      () => "the organization's projects",
    ],
    [
      "a 403 on the domain list",
      () => ({ path: `${org()}/domains/$`, status: 403 }),
      () => "the organization's domains",
    ],
    [
      "a 503 on every try of the invite list",
      () => ({ path: `${org()}/invites/$`, status: 503 }),
      () => "the organization's invites",
    ],
    [
      "a 500 on the member list",
      () => ({ path: `${org()}/members/$`, status: 500 }),
      () => "the organization's members",
    ],
    [
      "a 404 on the collaborators of a listed restricted dashboard",
      () => ({ path: `/dashboards/${ids.payroll}/collaborators/$`, status: 404 }),
      () => `the collaborators of dashboard ${ids.payroll} (project ${ids.web})`,
    ],
    [
      "a 403 on one project's dashboard list (a key scoped to other projects)",
      () => ({ path: `^/api/projects/${ids.legacy}/dashboards/$`, status: 403 }),
      () => `the dashboards of project ${ids.legacy}`,
    ],
    [
      "a member list whose next loops back to its first page",
      () => ({
        path: `${org()}/members/$`,
        body: { next: `${emu.url}/api/organizations/${emu.organizationId}/members/?limit=100&offset=0` },
      }),
      () => "the organization's members",
    ],
    [
      "a dashboard list whose next loops back to its first page",
      () => ({
        path: `^/api/projects/${ids.web}/dashboards/$`,
        body: { next: `${emu.url}/api/projects/${ids.web}/dashboards/?limit=100&offset=0` },
      }),
      () => `the dashboards of project ${ids.web}`,
    ],
    [
      "a dashboard list whose count disagrees with its pages",
      () => ({ path: `^/api/projects/${emu.projectId}/dashboards/$`, body: { count: 40 } }),
      () => `the dashboards of project ${emu.projectId}`,
    ],
    [
      "truncated JSON on the batch export list",
      () => ({ path: `${org()}/batch_exports/$`, truncateBody: true }),
      () => "the organization's batch exports",
    ],
    [
      "a connection cut on every try of the domain list",
      () => ({ path: `${org()}/domains/$`, reset: true }),
      () => "the organization's domains",
    ],
  ];
  it.each(cases)("%s", async (_name, spec, whatOf) => {
    const what = whatOf();
    const r = await withFault({ method: "GET", ...spec() });
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.stderr).toHaveLength(1);
    const line = r.stderr[0] as string;
    expect(
      line.startsWith(`pulumi-posthog audit: could not read ${what}, nothing is reported: GET `),
      line,
    ).toBe(true);
    expect(line).toMatch(/POSTHOG_(API_KEY|HOST)|posthog:host|scope/);
    expect(line).not.toContain("\n");
  });

  it("the pages' disagreement is named: a page loop, a count", async () => {
    const loop = await withFault({
      method: "GET",
      path: `${org()}/members/$`,
      body: { next: `${emu.url}/api/organizations/${emu.organizationId}/members/?limit=100&offset=0` },
    });
    expect(loop.stderr[0]).toContain(
      "the pages of the list disagree, read twice: page loop: the page at offset 0 links its next page at offset 0, not after it",
    );
    const count = await withFault({
      method: "GET",
      path: `^/api/projects/${emu.projectId}/dashboards/$`,
      body: { count: 40 },
    });
    expect(count.stderr[0]).toContain(
      "the pages of the list disagree, read twice: the page at offset 0 is the last (no next) with",
    );
    expect(count.stderr[0]).toContain("count 40");
  });

  it("a count that disagrees once (the list changed while it was read): read again, the report whole", async () => {
    const r = await withFault({
      method: "GET",
      path: `^/api/projects/${emu.projectId}/dashboards/$`,
      body: { count: 40 },
      times: 1,
    });
    expect(r.stderr).toEqual([]);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`sharing/${ids.sales}`);
  });

  it.each([
    ["a wrong key", () => ({ POSTHOG_API_KEY: "phx_wrongwrongwrongwrongwrong" }), "POSTHOG_API_KEY"],
    ["a wrong host", () => ({ POSTHOG_HOST: `${emu.url}/nothing` }), "POSTHOG_HOST"],
    [
      "a wrong organization",
      () => ({ POSTHOG_ORGANIZATION_ID: "0b5e7a9c-0000-4000-8000-000000000000" }),
      "POSTHOG_ORGANIZATION_ID",
    ],
    ["no key", () => ({ POSTHOG_API_KEY: "" }), "POSTHOG_API_KEY"],
  ])("%s", async (_name, env, setting) => {
    const r = await audit([], env());
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.stderr).toHaveLength(1);
    expect(r.stderr[0]).toMatch(/^pulumi-posthog audit: /);
    expect(r.stderr[0]).toContain(`environment variable ${setting}`);
  });
});

describe("the progress line: on stderr while a read takes a while, then how long it took", () => {
  /** The line once everything but the two held collaborator lists is read. */
  const WAITING =
    /^pulumi-posthog audit: reading for [\d.]+ s: organization lists 5\/5, projects 4\/4 \(6 dashboards listed\), collaborator lists 0\/2; 11 requests$/;

  it("a line saying what is read and what is left, while the collaborator lists are held; the report on stdout", async () => {
    const hold = await emu.control("POST", "/holds", { method: "GET", path: "/collaborators/$" });
    expect(hold.status).toBe(201);
    const stderr: string[] = [];
    const run = audit(
      ["--config", configFile("policy.json", CONFIG), "--format", "json"],
      {},
      { auditProgress: { afterMs: 0, everyMs: 5 } },
      stderr,
    );
    try {
      // Both collaborator lists are held: the lines say so until they are released.
      for (;;) {
        const held = await emu.control("GET", `/holds/${hold.body.id}`);
        if (held.body.held.length === 2 && stderr.some((l) => WAITING.test(l))) break;
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      await emu.control("DELETE", `/holds/${hold.body.id}`);
    }
    const r = await run;
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).violations.length).toBe(expectedViolations().length);
    // Every line before the last says what is read so far; one said that all but the two held lists were read.
    expect(r.stderr.slice(0, -1).every((l) => /^pulumi-posthog audit: reading for [\d.]+ s: /.test(l))).toBe(
      true,
    );
    expect(r.stderr.filter((l) => WAITING.test(l)).length).toBeGreaterThan(0);
    expect(r.stderr.at(-1)).toMatch(/^pulumi-posthog audit: read in [\d.]+ s: 11 requests$/);
    expect(r.stderr.every((l) => l.startsWith("pulumi-posthog audit: "))).toBe(true);
  });

  it("none for a read quicker than the first line's delay (the default 3 s is far beyond this emulator's)", async () => {
    const r = await audit(
      ["--config", configFile("policy.json", CONFIG), "--format", "json"],
      {},
      {
        auditProgress: { afterMs: 60_000, everyMs: 60_000 },
      },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toEqual([]);
  });
});

describe("the rules that count collaborators", () => {
  it("COLLABORATOR_RULES holds every rule whose findings depend on a dashboard's collaborators", () => {
    const dashboard = (collaborators: number | undefined) => ({
      ref: "dashboard/1",
      label: 'Dashboard "Payroll"',
      id: 1,
      name: "Payroll",
      tags: ["restricted"],
      restrictionLevel: 37,
      collaborators,
    });
    const model = (collaborators: number | undefined) => ({
      domains: [],
      invites: [],
      members: [],
      dashboards: [dashboard(collaborators)],
      sharing: [],
      exportPauses: [],
      projects: [],
    });
    // Each rule alone, with its defaults: does a count of 0 collaborators change what it finds?
    const findings = (id: string, collaborators: number | undefined) =>
      JSON.stringify(
        evaluate(model(collaborators), parseGovernanceConfig({ all: "disabled", [id]: "advisory" })).map(
          (v) => [v.rule, v.message],
        ),
      );
    const counting = RULES.map((rule) => rule.id).filter((id) => findings(id, 0) !== findings(id, undefined));
    expect(counting.length).toBeGreaterThan(0);
    for (const id of counting) expect(COLLABORATOR_RULES).toContain(id);
  });
});

describe("names are printed inertly in every format (issue 49, item 3)", () => {
  let hostile: TestEmulator;
  const names = new Map<number, string>();
  let aaaa = 0;
  const CONFIG_HOSTILE = {
    all: "mandatory",
    "posthog-admin-allow-list": { admins: ["adam.admin@example.com"] },
    "posthog-project-name-pattern": { namePattern: "^(a+)+$" },
  };
  const run = (format: string) =>
    audit(["--config", configFile("hostile.json", CONFIG_HOSTILE), "--format", format], {
      POSTHOG_HOST: hostile.url,
      POSTHOG_API_KEY: hostile.apiKey,
    });

  beforeAll(async () => {
    hostile = await startTestEmulator();
    for (const name of HOSTILE_NAMES) {
      const d = await hostile.call("POST", `${hostile.project}/dashboards/`, { body: { name } });
      expect(d.status, d.text).toBe(201);
      const shared = await hostile.call("PATCH", `${hostile.project}/dashboards/${d.body.id}/sharing/`, {
        body: { enabled: true },
      });
      expect(shared.status, shared.text).toBe(200);
      names.set(d.body.id, name);
    }
    // Catastrophic backtracking for a backtracking engine: ^(a+)+$ against 34 a's and a "!".
    const p = await hostile.call("POST", `${hostile.org}/projects/`, {
      body: { name: `${"a".repeat(34)}!`, timezone: "UTC" },
    });
    expect(p.status, p.text).toBe(201);
    aaaa = p.body.id;
  });
  afterAll(async () => {
    await hostile?.close();
  });

  it("json: every name exact, the 34 a's and a '!' judged at once by the linear-time pattern", async () => {
    const r = await run("json");
    expect(r.stderr).toEqual([]);
    expect(r.code).toBe(1);
    for (const line of r.out.split("\n")) expect(line).not.toMatch(ACTIVE);
    const report = JSON.parse(r.out) as { violations: { rule: string; ref: string; message: string }[] };
    for (const [id, name] of names) {
      const v = report.violations.find((x) => x.ref === `sharing/${id}`);
      expect(v?.message).toContain(`shares dashboard "${name}" publicly`);
    }
    expect(
      report.violations.filter((v) => v.rule === "posthog-project-name-pattern").map((v) => v.ref),
    ).toContain(`project/${aaaa}`);
  });

  it("table: every line starts where the table says, no control character raw, each name escaped", async () => {
    const json = JSON.parse((await run("json")).out) as { violations: { message: string }[] };
    const r = await run("table");
    expect(r.code).toBe(1);
    expect(r.stderr).toEqual([]);
    const lines = r.out.split("\n");
    for (const line of lines) expect(line).not.toMatch(ACTIVE);
    expect(lines[0]).toMatch(/^PostHog governance audit of organization /);
    expect(lines[1]).toMatch(/^Read: /);
    expect(lines[2]).toMatch(/^Rules: /);
    expect(lines[3]).toBe("");
    expect(lines[4]).toMatch(/^ENFORCEMENT +RULE +OBJECT +FINDING$/);
    const body = lines.slice(5, -2);
    expect(body).toHaveLength(2 * json.violations.length);
    for (const [i, line] of body.entries()) {
      if (i % 2 === 0)
        expect(line).toMatch(/^(mandatory|advisory) {2,}posthog-[a-z-]+ {2,}[a-z-]+\/\S+ {2,}\S/);
      else expect(line).toMatch(/^ +fix: /);
    }
    expect(lines.at(-2)).toBe("");
    expect(lines.at(-1)).toMatch(/^\d+ violations: \d+ mandatory \(the audit fails\), 0 advisory$/);
    // A forged row would start with "mandatory posthog-fake-rule": it is part of its finding, escaped.
    expect(r.out).toContain("x\\nmandatory posthog-fake-rule project/1 FAKE ROW");
    expect(r.out).toContain("\\u001b[31mred\\u001b[0m");
    expect(r.out).toContain("carriage\\rreturn");
  });

  it("markdown: each violation one row of five cells, every finding a code span giving back the exact message", async () => {
    const json = JSON.parse((await run("json")).out) as {
      violations: { ref: string; message: string; fix: string }[];
    };
    const r = await run("markdown");
    expect(r.code).toBe(1);
    const lines = r.out.split("\n");
    for (const line of lines) expect(line).not.toMatch(ACTIVE);
    const rows = lines.filter((l) => /^\| (\*\*mandatory\*\*|advisory) \|/.test(l));
    expect(rows).toHaveLength(json.violations.length);
    for (const [i, row] of rows.entries()) {
      const cells = cellsOf(row);
      expect(cells, row).toHaveLength(5);
      const v = json.violations[i] as { ref: string; message: string; fix: string };
      expect(unescapeShown(codeSpanText(cells[2] as string) ?? "(no code span)")).toBe(v.ref);
      expect(unescapeShown(codeSpanText(cells[3] as string) ?? "(no code span)")).toBe(v.message);
      expect(unescapeShown(codeSpanText(cells[4] as string) ?? "(no code span)")).toBe(v.fix);
    }
    // Outside code spans, nothing of a name: no raw link, image or tag in the text around the cells.
    const outside = rows.map((row) =>
      cellsOf(row)
        .filter((c) => codeSpanText(c) === undefined)
        .join(" "),
    );
    for (const text of outside) expect(text).toMatch(/^(\*\*mandatory\*\*|advisory)$/);
  });

  it("an error naming a project: one line, its name escaped", async () => {
    const weird = await hostile.call("POST", `${hostile.org}/projects/`, {
      body: { name: "evil\nsecond line \u001b[2J", timezone: "UTC" },
    });
    expect(weird.status, weird.text).toBe(201);
    const r = await audit(["--project", "999999"], {
      POSTHOG_HOST: hostile.url,
      POSTHOG_API_KEY: hostile.apiKey,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toHaveLength(1);
    expect(r.stderr[0]).toContain("Project 999999 is not in this organization");
    expect(r.stderr[0]).toContain('"evil\\nsecond line \\u001b[2J"');
    expect(r.stderr[0]).not.toMatch(ACTIVE);
  });
});

/** The pointer the audit's error lines end with (docs-link.ts), when the error names no section of its own. */
const AUDIT_DOCS = " (see docs/troubleshooting/commands.md#the-audit-command)";

describe("bad input: exit 2, one line naming the flag and what it accepts, before any request", () => {
  it.each([
    [["--format", "xml"], 'pulumi-posthog audit: Invalid --format "xml": accepted: table, json, markdown'],
    [["--project", "web"], 'pulumi-posthog audit: Invalid --project "web": expected a project id (a number)'],
    [
      ["--config", "missing.json"],
      "pulumi-posthog audit: --config missing.json cannot be read (ENOENT): give the policy config file",
    ],
    [
      ["--config", configFile("max-owners.json", { "posthog-max-owners": { maxOwners: "two" } })],
      'pulumi-posthog audit: --config max-owners.json: policy config "posthog-max-owners": maxOwners: expected an integer',
    ],
    [
      ["--config", configFile("unknown-key.json", { "posthog-sharing-allow-list": { allowed: ["Sales"] } })],
      'pulumi-posthog audit: --config unknown-key.json: policy config "posthog-sharing-allow-list": unknown key "allowed"; accepted: enforcementLevel, allowedDashboards, allowedTags',
    ],
    [
      ["--config", configFile("level.json", { all: "strict" })],
      'pulumi-posthog audit: --config level.json: policy config "all": expected one of advisory, mandatory, disabled, got "strict"',
    ],
  ])("%j", async (args, line) => {
    await requestsSince(emu);
    const r = await audit(args);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.stderr).toEqual([`${line}${AUDIT_DOCS}`]);
    expect(await requestsSince(emu)).toEqual([]);
  });

  it.each([
    ["null", "null", "got null"],
    ["an array", "[]", "got an array"],
    ["a number", "42", "got a number"],
    ["a string", '"mandatory"', "got a string"],
  ])("a config that is %s: refused before any request", async (_what, text, got) => {
    await requestsSince(emu);
    const r = await audit(["--config", configFile("not-an-object.json", text)]);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.stderr).toEqual([
      `pulumi-posthog audit: --config not-an-object.json: the policy config must be a JSON object of rule ids (${RULES.map((x) => x.id).join(", ")}) and "all", ${got}${AUDIT_DOCS}`,
    ]);
    expect(await requestsSince(emu)).toEqual([]);
  });

  it.each([
    [
      { "posthog-max-owners": 3 },
      'policy config "posthog-max-owners": expected advisory, mandatory, disabled or an object',
    ],
    [
      { "posthog-max-owners": null },
      'policy config "posthog-max-owners": expected advisory, mandatory, disabled or an object',
    ],
    [
      { "posthog-max-owners": ["mandatory"] },
      'policy config "posthog-max-owners": expected advisory, mandatory, disabled or an object',
    ],
    [
      { "posthog-max-owners": { enforcementLevel: 1 } },
      'policy config "posthog-max-owners": enforcementLevel: expected one of',
    ],
    [{ all: null }, 'policy config "all": expected one of advisory, mandatory, disabled, got null'],
    [
      { "posthog-invite-company-domain": { companyDomains: "example.com" } },
      'policy config "posthog-invite-company-domain": companyDomains: expected a list of strings',
    ],
    [
      { "posthog-project-name-pattern": { namePattern: 5 } },
      'policy config "posthog-project-name-pattern": namePattern: expected a regular expression',
    ],
    [
      { "posthog-project-name-pattern": { namePattern: "^(?=Acme)" } },
      'policy config "posthog-project-name-pattern": namePattern: "^(?=Acme)" cannot run in linear time (error parsing regexp: invalid or unsupported Perl syntax: `(?=`): patterns run on RE2, whose syntax has no lookahead, lookbehind or backreference',
    ],
    [
      { "posthog-project-name-pattern": { namePattern: "^(a)\\1$" } },
      'policy config "posthog-project-name-pattern": namePattern: "^(a)\\\\1$" cannot run in linear time',
    ],
    [
      { "posthog-project-name-pattern": { namePattern: "([a-z" } },
      'policy config "posthog-project-name-pattern": namePattern: "([a-z" is not a valid regular expression',
    ],
  ])(
    "a rule entry or key of the wrong type: %j, refused naming it, before any request",
    async (config, message) => {
      await requestsSince(emu);
      const r = await audit(["--config", configFile("wrong-type.json", config)]);
      expect(r.code).toBe(2);
      expect(r.out).toBe("");
      expect(r.stderr).toHaveLength(1);
      expect(r.stderr[0]).toContain(`pulumi-posthog audit: --config wrong-type.json: ${message}`);
      expect(await requestsSince(emu)).toEqual([]);
    },
  );

  it("a config file that is not JSON, an unknown flag, an argument: named", async () => {
    const notJson = await audit(["--config", configFile("broken.json", "{all: mandatory")]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toHaveLength(1);
    expect(notJson.stderr[0]).toMatch(/^pulumi-posthog audit: --config broken\.json is not JSON: /);
    const flag = await audit(["--out", "x"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toHaveLength(1);
    expect(flag.stderr[0]).toContain("--out");
    const positional = await audit(["everything"]);
    expect(positional.code).toBe(2);
    expect(positional.stderr).toEqual([
      `pulumi-posthog audit: unexpected argument "everything": audit takes only --config, --format and --project${AUDIT_DOCS}`,
    ]);
  });

  it("--help prints the audit's usage, exit 0", async () => {
    const r = await audit(["--help"]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^Audit:\n {2}pulumi-posthog audit \[--config FILE\] \[--format table\|json\|markdown\]/,
    );
  });
});
