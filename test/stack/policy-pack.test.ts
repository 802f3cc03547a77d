/**
 * Issue 37: the governance policy pack (policy/posthog-policy, provider/apps/governance/pack.ts) through the real Pulumi
 * CLI against the emulator. The program (test/stack/fixtures/policy) breaks every rule, or none of them with
 * `pf:compliant: true`; its resources reference each other as users write them, so the pack reads a sharing's
 * dashboard, a domain's verification and a dashboard's collaborators through the engine's property dependencies in
 * a preview that cannot know their ids. Each rule is shown failing (a mandatory violation fails the preview, naming
 * the rule, the resource and the fix, with no write) and passing (the compliant program's preview passes with the
 * same configuration); advisory only warns; the configuration turns rules off and tunes them; a configuration of
 * the wrong shape fails naming the rule and the key. The plugin's resources (`posthog:index:*`) are checked too,
 * in a Pulumi YAML program. The pack runs as the executable the docs name: the v3.68 Node.js language host built
 * here does not run a policy pack folder (RunPlugin: "not supported"), a newer host does. Every run is a preview,
 * which writes no state: they all share one stack (its settings rewritten before each), the YAML program as a
 * second program of the same project. The configurations of the wrong shape preview the YAML program: the CLI
 * checks the configuration against the rules' schemas and the pack checks a rule's keys whatever the program
 * declares, and the YAML program (the plugin's two resources, no Node.js program or dynamic-provider host) is the
 * cheaper one to run.
 */
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { policies } from "../../provider/apps/governance/pack";
import { RULES } from "../../provider/apps/governance/rules";
import { linkPackage, pulumiEnv, type RunResult, runStack, writeStackSettings } from "../../tools/pulumi";
import { pluginProject } from "../plugin/support";
import { requestsSince } from "../support/emulator";
import { useFixtureProgram } from "./fixture-program";

const root = join(__dirname, "..", "..");
const PACK = join(root, "policy", "posthog-policy");
const programDir = join(__dirname, "fixtures", "policy");
const fx = useFixtureProgram({ prefix: "policy-pack" });
const why = (r: RunResult) => r.output;
/** The package's version: the pack's, as the CLI names it (policy/package.json's, equal to it). */
const VERSION = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;

/** Every rule mandatory, each rule's keys set so that the program breaks it (or, compliant, does not). */
const STRICT = {
  all: "mandatory",
  "posthog-sharing-allow-list": { allowedTags: ["public"] },
  "posthog-invite-admin-domains": { adminDomains: ["example.com"] },
  "posthog-invite-company-domain": { companyDomains: ["example.com"] },
  "posthog-max-owners": { maxOwners: 1 },
  "posthog-admin-allow-list": { admins: ["adam.admin@example.com"] },
  "posthog-production-exports-unpaused": { production: true },
  "posthog-project-name-pattern": { namePattern: "^Acme " },
};

/** Each rule and the resource of the violating program that breaks it (its type's last part and name). */
const BROKEN: Record<string, string> = {
  "posthog-domain-sso-enforced": "Domain: corp",
  "posthog-domain-verified": "Domain: corp",
  "posthog-sharing-allow-list": "DashboardSharing: sales",
  "posthog-invite-not-owner": "Invite: olga",
  "posthog-invite-admin-domains": "Invite: carl",
  "posthog-invite-company-domain": "Invite: carl",
  "posthog-max-owners": "Member: mia",
  "posthog-admin-allow-list": "Member: max",
  "posthog-restricted-dashboards": "Dashboard: finance",
  "posthog-restricted-dashboard-collaborators": "Dashboard: finance",
  "posthog-production-exports-unpaused": "BatchExportPause: events",
  "posthog-project-timezone": "Project: web",
  "posthog-project-name-pattern": "Project: web",
};

let configs = 0;
/** Writes a policy configuration file: its path. */
function policyConfig(config: unknown): string {
  const dir = join(fx.work, "policy");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `config-${++configs}.json`);
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** The one stack of every preview here (of the fixture program, and of the YAML program of the same project). */
const stack = fx.stack("policy");

/**
 * The YAML program (written once): a second program of the fixture's project (policy-fx), so that it previews on
 * the same stack. Its owner invite breaks posthog-invite-not-owner; its project breaks no rule.
 */
function yamlProgram(): string {
  const dir = join(fx.work, "yaml");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "Pulumi.yaml"),
    `${pluginProject("policy-fx")}resources:
  olga:
    type: posthog:index:Invite
    properties:
      targetEmail: olga@example.com
      level: owner
      sendEmail: false
  web:
    type: posthog:index:Project
    properties:
      name: Acme Web
      timezone: Europe/Paris
`,
  );
  return dir;
}

/** `pulumi preview` of the program in `projectDir` with the pack and `config` (a file), `settings` its stack config. */
function previewWithPack(settings: string, config: string, projectDir = programDir): Promise<RunResult> {
  writeStackSettings(stack.configFile, settings ? `config:\n${settings}` : "config: {}\n");
  return runStack({
    operation: "preview",
    projectDir,
    stack: stack.name,
    stateDir: stack.stateDir,
    configFile: stack.configFile,
    env: stack.env(),
    args: ["--policy-pack", PACK, "--policy-pack-config", config],
  });
}

/** `pulumi preview` of the fixture program (compliant or not) with the pack and `config` (a file). */
const preview = (compliant: boolean, config: string) =>
  previewWithPack(`  pf:compliant: ${compliant}\n`, config);

/** The violations the CLI printed under "Policies:": `[level] rule (type: name)` lines. */
function reported(r: RunResult): { level: string; rule: string; resource: string }[] {
  return [...r.output.matchAll(/- \[(mandatory|advisory)\]\s+(posthog-[a-z-]+)\s+\(([^)]+)\)/g)].map((m) => ({
    level: m[1] as string,
    rule: m[2] as string,
    resource: (m[3] as string).replace(/^[^ ]*:([A-Za-z]+): /, "$1: "),
  }));
}

/** Only reads reached the emulator since the last call. */
async function onlyReads(): Promise<void> {
  const writes = (await requestsSince(fx.emu())).filter((r) => !r.startsWith("GET "));
  expect(writes).toEqual([]);
}

describe("the policy pack through the real Pulumi CLI (a program of the dynamic SDK)", () => {
  it("every rule's mandatory violation fails the preview naming the rule, the resource and the fix, and nothing is written; the compliant program passes every rule with the same configuration", async () => {
    const strict = policyConfig(STRICT);
    await requestsSince(fx.emu());
    const bad = await preview(false, strict);
    expect(bad.ok, why(bad)).toBe(false);
    expect(bad.output).toContain(`❌ posthog-governance@v${VERSION} (local: ${PACK})`);
    const found = reported(bad);
    for (const [rule, resource] of Object.entries(BROKEN)) {
      expect(found, `${rule} on ${resource}\n${bad.output}`).toContainEqual({
        level: "mandatory",
        rule,
        resource,
      });
    }
    expect(new Set(found.map((f) => f.rule))).toEqual(new Set(RULES.map((r) => r.id)));
    // The pack's message names the object and the fix, e.g. the owner invite's.
    expect(bad.output).toContain(
      'Invite "olga@example.com" invites at owner level. Fix: invite at level "member" or "admin"',
    );
    // A preview cannot know the id of a dashboard it creates: the sharing is judged against each dashboard of the run
    // that may be it, and reported as none of them is allowed.
    expect(bad.output).toMatch(
      /DashboardSharing "sales" shares publicly a dashboard this run creates \(one of [^)]*Dashboard "Sales"[^)]*\), and none of them is in the allow list/,
    );
    await onlyReads();

    const good = await preview(true, strict);
    expect(good.ok, why(good)).toBe(true);
    expect(reported(good)).toEqual([]);
    expect(good.output).toContain(`✅ posthog-governance@v${VERSION}`);
    await onlyReads();
  }, 600_000);

  it("advisory by default: the same violations only warn and the preview passes; the configuration turns rules off and tunes them", async () => {
    const tuned = policyConfig({
      "posthog-project-timezone": "disabled",
      "posthog-project-name-pattern": { enforcementLevel: "mandatory", namePattern: "^scr" },
      "posthog-max-owners": { maxOwners: 2 },
      "posthog-domain-sso-enforced": { exemptDomains: ["example.com"] },
    });
    const r = await preview(false, tuned);
    expect(r.ok, why(r)).toBe(true);
    const found = reported(r);
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((f) => f.level === "advisory")).toBe(true);
    const rules = new Set(found.map((f) => f.rule));
    expect(rules).toContain("posthog-invite-not-owner");
    expect(rules).toContain("posthog-domain-verified");
    expect(rules).toContain("posthog-restricted-dashboards");
    // disabled; tuned to pass ("scratch" matches ^scr, 2 owners are allowed, corp.example.com is exempt)
    for (const off of [
      "posthog-project-timezone",
      "posthog-project-name-pattern",
      "posthog-max-owners",
      "posthog-domain-sso-enforced",
    ])
      expect(rules, off).not.toContain(off);
    // not evaluated until configured: the company domains
    expect(rules).not.toContain("posthog-invite-company-domain");
    await onlyReads();
  }, 600_000);
});

describe("the policy pack on the provider plugin's resources (a Pulumi YAML program)", () => {
  it("posthog:index:* resources are checked as the SDK's are: an owner invite fails the preview naming the rule and the resource", async () => {
    const dir = yamlProgram();
    await requestsSince(fx.emu());
    const r = await previewWithPack("", policyConfig({ all: "mandatory" }), dir);
    expect(r.ok, why(r)).toBe(false);
    expect(r.output).toMatch(/- \[mandatory\]\s+posthog-invite-not-owner\s+\(posthog:index:Invite: olga\)/);
    expect(r.output).not.toMatch(/posthog-project-timezone\s+\(posthog:index:Project/);
    await onlyReads();
  }, 600_000);

  it("a configuration of the wrong shape fails the preview naming the rule and the key", async () => {
    const dir = yamlProgram();
    await requestsSince(fx.emu());
    const wrongType = await previewWithPack(
      "",
      policyConfig({ "posthog-max-owners": { maxOwners: "two" } }),
      dir,
    );
    expect(wrongType.ok).toBe(false);
    expect(wrongType.output).toMatch(/posthog-max-owners: maxOwners: Invalid type\. Expected: integer/);
    const unknownKey = await previewWithPack(
      "",
      policyConfig({ "posthog-max-owners": { maxOwner: 2 } }),
      dir,
    );
    expect(unknownKey.ok).toBe(false);
    expect(unknownKey.output).toContain(
      'policy config "posthog-max-owners": unknown key "maxOwner"; accepted: enforcementLevel, maxOwners ' +
        "(see docs/governance.md#the-configuration)",
    );
    await onlyReads();
  }, 600_000);
});

/** The emulator's seeded people (fixture program). */
const MIA_UUID = "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03";
const MAX_UUID = "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04";

/**
 * Each rule alone mandatory (every other one disabled) under `pulumi up --skip-preview` (what pulumi/actions' `up`
 * and the Automation API run), over the part of the violating program that breaks it (`pf:only`): the resources
 * it declares, and the writes that must not reach PostHog. `stack` rules run after the resources are applied.
 */
const UP_CASES: {
  rule: string;
  keys?: Record<string, unknown>;
  only: string[];
  resource: string;
  /** A write this rule forbids (method and path), matched against every write of the run. */
  forbidden: RegExp;
}[] = [
  {
    rule: "posthog-domain-sso-enforced",
    only: ["Domain:corp"],
    resource: "Domain: corp",
    forbidden: /\/domains\//,
  },
  {
    rule: "posthog-sharing-allow-list",
    keys: { allowedTags: ["public"] },
    only: ["Dashboard:sales", "DashboardSharing:sales"],
    resource: "DashboardSharing: sales",
    forbidden: /\/sharing\/$/,
  },
  {
    rule: "posthog-invite-not-owner",
    only: ["Invite:olga"],
    resource: "Invite: olga",
    forbidden: /\/invites\//,
  },
  {
    rule: "posthog-invite-admin-domains",
    keys: { adminDomains: ["example.com"] },
    only: ["Invite:carl"],
    resource: "Invite: carl",
    forbidden: /\/invites\//,
  },
  {
    rule: "posthog-invite-company-domain",
    keys: { companyDomains: ["example.com"] },
    only: ["Invite:carl"],
    resource: "Invite: carl",
    forbidden: /\/invites\//,
  },
  {
    rule: "posthog-max-owners",
    keys: { maxOwners: 1 },
    only: ["Member:olivia", "Member:mia"],
    resource: "Member: mia",
    forbidden: new RegExp(`/members/${MIA_UUID}/`),
  },
  {
    rule: "posthog-admin-allow-list",
    keys: { admins: ["adam.admin@example.com"] },
    only: ["Member:max"],
    resource: "Member: max",
    forbidden: new RegExp(`/members/${MAX_UUID}/`),
  },
  {
    rule: "posthog-restricted-dashboards",
    only: ["Dashboard:finance"],
    resource: "Dashboard: finance",
    forbidden: /\/dashboards\//,
  },
  {
    rule: "posthog-production-exports-unpaused",
    keys: { production: true },
    only: ["BatchExportPause:events"],
    resource: "BatchExportPause: events",
    forbidden: /\/pause\/$/,
  },
  {
    rule: "posthog-project-timezone",
    only: ["Project:web"],
    resource: "Project: web",
    forbidden: /\/projects\//,
  },
  {
    rule: "posthog-project-name-pattern",
    keys: { namePattern: "^Acme " },
    only: ["Project:web"],
    resource: "Project: web",
    forbidden: /\/projects\//,
  },
];

/**
 * `pulumi up --skip-preview` on a new stack `name` with the pack and `config` (a file): of the violating program's
 * resources `only` (its setting `pf:only`), or of the program in `projectDir` with no setting.
 */
async function upWithPack(
  name: string,
  config: string,
  program: { only: string[] } | { projectDir: string },
): Promise<RunResult> {
  const s = fx.stack(name);
  const only = "only" in program ? program.only : undefined;
  writeStackSettings(
    s.configFile,
    only ? `config:\n  pf:only: ${JSON.stringify(JSON.stringify(only))}\n` : "config: {}\n",
  );
  return runStack({
    operation: "up",
    projectDir: "projectDir" in program ? program.projectDir : programDir,
    stack: s.name,
    stateDir: s.stateDir,
    configFile: s.configFile,
    env: s.env(),
    args: ["--policy-pack", PACK, "--policy-pack-config", config],
  });
}

/** The writes (not GET) the emulator saw since the last call. */
const writesSince = async () => (await requestsSince(fx.emu())).filter((r) => !r.startsWith("GET "));

describe("up --skip-preview: a mandatory rule judged on one resource stops that resource's write", () => {
  it("every rule is one policy, of the kind its judgedOn says", () => {
    const kinds = RULES.map((r) => [r.id, r.judgedOn === "stack" ? "stack" : "resource"]);
    const served = policies().map((p) => [p.name, "validateStack" in p ? "stack" : "resource"]);
    expect(served).toEqual(kinds);
    // Every rule not judged on the whole stack is proven below, each alone.
    expect(UP_CASES.map((c) => c.rule).sort()).toEqual(
      RULES.filter((r) => r.judgedOn !== "stack")
        .map((r) => r.id)
        .sort(),
    );
  });

  it.each(UP_CASES)(
    "$rule: the up fails naming it and $resource, and sends no write it forbids",
    async (c) => {
      await requestsSince(fx.emu());
      const config = policyConfig({
        all: "disabled",
        [c.rule]: { enforcementLevel: "mandatory", ...c.keys },
      });
      const r = await upWithPack(`up-${c.rule.replace(/^posthog-/, "")}`, config, { only: c.only });
      expect(r.ok, why(r)).toBe(false);
      expect(reported(r)).toContainEqual({ level: "mandatory", rule: c.rule, resource: c.resource });
      const writes = await writesSince();
      expect(writes.filter((w) => c.forbidden.test(w.split(" ")[1] ?? ""))).toEqual([]);
    },
    600_000,
  );

  it("posthog-sharing-allow-list judges a sharing by its dashboard's name, which the sharing's check hands the pack (`_policy`): a dashboard the allow list names is shared, by up and by the preview after it; a new one it does not name fails the preview", async () => {
    await requestsSince(fx.emu());
    const config = policyConfig({
      all: "disabled",
      "posthog-sharing-allow-list": { enforcementLevel: "mandatory", allowedDashboards: ["Sales"] },
    });
    const r = await upWithPack("up-sharing-allowed", config, {
      only: ["Dashboard:sales", "DashboardSharing:sales"],
    });
    expect(r.ok, why(r)).toBe(true);
    expect((await writesSince()).filter((w) => /\/sharing\/$/.test(w))).toHaveLength(1);
    // The preview of the stack now (the dashboard's id known): the same facts, from the dashboard's plan.
    const s = fx.stack("up-sharing-allowed");
    const preview = (only: string[]) => {
      writeStackSettings(s.configFile, `config:\n  pf:only: ${JSON.stringify(JSON.stringify(only))}\n`);
      return runStack({
        operation: "preview",
        projectDir: programDir,
        stack: s.name,
        stateDir: s.stateDir,
        configFile: s.configFile,
        env: s.env(),
        args: ["--policy-pack", PACK, "--policy-pack-config", config],
      });
    };
    const again = await preview(["Dashboard:sales", "DashboardSharing:sales"]);
    expect(again.ok, why(again)).toBe(true);
    expect(reported(again)).toEqual([]);
    // A second dashboard shared, new to the stack: its id is unknown in the preview, and of the dashboards the run
    // creates (Finance alone: Sales's check says the run does not create it) none is allowed.
    const more = await preview([
      "Dashboard:sales",
      "DashboardSharing:sales",
      "Dashboard:finance",
      "DashboardSharing:finance",
    ]);
    expect(more.ok, why(more)).toBe(false);
    expect(reported(more)).toEqual([
      { level: "mandatory", rule: "posthog-sharing-allow-list", resource: "DashboardSharing: finance" },
    ]);
    expect(more.output).toContain(
      'DashboardSharing "finance" shares dashboard "Finance" publicly, and it is not in the allow list',
    );
    await onlyReads();
  }, 600_000);

  it("a rule judged on the whole stack (posthog-domain-verified) runs after the writes: the domain is created, then the up fails naming it", async () => {
    await requestsSince(fx.emu());
    const config = policyConfig({ all: "disabled", "posthog-domain-verified": "mandatory" });
    const r = await upWithPack("up-domain-verified", config, { only: ["Domain:corp"] });
    expect(r.ok, why(r)).toBe(false);
    expect(reported(r)).toContainEqual({
      level: "mandatory",
      rule: "posthog-domain-verified",
      resource: "Domain: corp",
    });
    expect(
      (await writesSince()).filter((w) => w.startsWith("POST ") && w.endsWith("/domains/")),
    ).toHaveLength(1);
  }, 600_000);
});

/**
 * The YAML program of the `up` cases (written once): a second program of the fixture's project, its own stacks. Its
 * owner invite breaks posthog-invite-not-owner; its public sharing of "Sales" breaks posthog-sharing-allow-list when
 * only the tag "public" is allowed.
 */
function yamlUpProgram(): string {
  const dir = join(fx.work, "yaml-up");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "Pulumi.yaml"),
    `${pluginProject("policy-fx")}resources:
  olga:
    type: posthog:index:Invite
    properties:
      targetEmail: olga.yaml@example.com
      level: owner
      sendEmail: false
  sales:
    type: posthog:index:Dashboard
    properties:
      name: Sales YAML
  salesSharing:
    type: posthog:index:DashboardSharing
    properties:
      dashboardId: \${sales.id}
`,
  );
  return dir;
}

describe("up --skip-preview of the provider plugin's resources (a Pulumi YAML program)", () => {
  it.each([
    { rule: "posthog-invite-not-owner", resource: "Invite: olga", forbidden: /\/invites\// },
    {
      rule: "posthog-sharing-allow-list",
      keys: { allowedTags: ["public"] },
      resource: "DashboardSharing: salesSharing",
      forbidden: /\/sharing\/$/,
    },
  ])(
    "$rule alone mandatory: the up fails naming $resource, and sends no write it forbids",
    async (c) => {
      await requestsSince(fx.emu());
      const config = policyConfig({
        all: "disabled",
        [c.rule]: { enforcementLevel: "mandatory", ...c.keys },
      });
      const r = await upWithPack(`yaml-up-${c.rule.replace(/^posthog-/, "")}`, config, {
        projectDir: yamlUpProgram(),
      });
      expect(r.ok, why(r)).toBe(false);
      expect(r.output).toMatch(
        new RegExp(`- \\[mandatory\\]\\s+${c.rule}\\s+\\(posthog:index:${c.resource.replace(": ", ": ")}\\)`),
      );
      const writes = await writesSince();
      expect(writes.filter((w) => c.forbidden.test(w.split(" ")[1] ?? ""))).toEqual([]);
    },
    600_000,
  );
});

describe("the Automation API's up (what pulumi/actions' `command: up` runs: `up --yes --skip-preview`)", () => {
  it("a mandatory rule stops the write: the owner invite is never sent, the up fails naming the rule", async () => {
    // A user's project: the fixture program, with the package and @pulumi/pulumi installed (linked from here).
    const project = join(fx.work, "automation");
    mkdirSync(join(project, "node_modules", "@pulumi"), { recursive: true });
    copyFileSync(join(programDir, "index.js"), join(project, "index.js"));
    copyFileSync(join(programDir, "Pulumi.yaml"), join(project, "Pulumi.yaml"));
    linkPackage(project);
    symlinkSync(
      join(root, "node_modules", "@pulumi", "pulumi"),
      join(project, "node_modules", "@pulumi", "pulumi"),
      "dir",
    );
    const stateDir = join(fx.work, "automation-state");
    const { LocalWorkspace, PulumiCommand } = await import("@pulumi/pulumi/automation/index.js");
    const pulumiCommand = await PulumiCommand.get({
      root: join(root, ".pulumi-cli"),
      skipVersionCheck: true,
    });
    const stack = await LocalWorkspace.createOrSelectStack(
      { stackName: "automation", workDir: project },
      { envVars: pulumiEnv(stateDir, fx.stack("automation").env()) as Record<string, string>, pulumiCommand },
    );
    await stack.setConfig("pf:only", { value: JSON.stringify(["Invite:olga", "Member:adam"]) });
    const config = policyConfig({ all: "disabled", "posthog-invite-not-owner": "mandatory" });
    await requestsSince(fx.emu());
    let output = "";
    const failed = await stack
      .up({ policyPacks: [PACK], policyPackConfigs: [config], onOutput: (o: string) => (output += o) })
      .then(
        () => undefined,
        (e: Error) => e,
      );
    expect(failed, output).toBeInstanceOf(Error);
    expect(output).toMatch(
      /- \[mandatory\]\s+posthog-invite-not-owner\s+\(pulumi-nodejs:dynamic\/posthog:Invite: olga\)/,
    );
    expect((await writesSince()).filter((w) => /\/invites\//.test(w))).toEqual([]);
  }, 600_000);
});
