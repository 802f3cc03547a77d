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
import { main } from "../../provider/export/cli";
import { RULES } from "../../provider/governance/rules";
import { requestsSince, startTestEmulator, type TestEmulator } from "../support/emulator";

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

/** Runs `pulumi-posthog audit ARGS` in-process against `emu` (or `env` overrides). */
async function audit(args: string[], env: Record<string, string> = {}) {
  const stdout: string[] = [];
  const stderr: string[] = [];
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
    // Markdown in findings is escaped: a pattern's brackets and star, a fix's <placeholder>.
    expect(lines).toContain(
      `| advisory | \`posthog-project-name-pattern\` | \`project/${ids.scratch}\` | Project "scratch-42" (id ${ids.scratch})'s ` +
        "name does not match ^\\[A-Z\\]\\[A-Za-z \\]\\*$ | rename the Project to match namePattern in the " +
        "posthog-project-name-pattern config |",
    );
    expect(
      lines.find(
        (l) => l.includes("`posthog-restricted-dashboard-collaborators`") && l.includes("0 collaborator"),
      ),
    ).toContain("a DashboardCollaborator with dashboardId: &lt;the Dashboard&gt;.id, userUuid and level");
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
    expect(r.stderr).toEqual([
      "pulumi-posthog audit: could not read all dashboards: the API key may not read them (403; it needs the " +
        "scope dashboard:read: API key missing required scope 'dashboard:read'); nothing is reported: set " +
        "POSTHOG_API_KEY to a key that may read the whole organization",
    ]);
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
    expect(r.stderr).toEqual([line]);
    expect(await requestsSince(emu)).toEqual([]);
  });

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
      'pulumi-posthog audit: unexpected argument "everything": audit takes only --config, --format and --project',
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
