/**
 * Issue 37: the governance policy pack (policy/posthog-policy, provider/governance/pack.ts) through the real Pulumi
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
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RULES } from "../../provider/governance/rules";
import { type RunResult, runStack, writeStackSettings } from "../../tools/pulumi";
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
    expect(bad.output).toContain(
      'DashboardSharing "sales" shares dashboard "Sales" publicly, and it is not in the allow list',
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
      'policy config "posthog-max-owners": unknown key "maxOwner"; accepted: enforcementLevel, maxOwners',
    );
    await onlyReads();
  }, 600_000);
});
