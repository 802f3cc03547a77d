/**
 * Issue 37: the policy pack's model of a stack (provider/governance/pack.ts `modelFromResources`), over resources
 * shaped as @pulumi/policy hands them to a stack policy: both type-token families, references through property
 * dependencies, literal ids, and values not known in a preview (reading them throws, as @pulumi/policy's
 * unknown-checking proxy does). The pack's version and the error without @pulumi/policy. The pack through the real
 * CLI: test/stack/policy-pack.test.ts.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  modelFromResources,
  posthogKind,
  ruleConfig,
  type StackResource,
} from "../../provider/governance/pack";
import {
  evaluate,
  GovernanceConfigError,
  parseGovernanceConfig,
  RULES,
} from "../../provider/governance/rules";

/** A resource of `type` (a token), name and props. */
function res(
  type: string,
  name: string,
  props: Record<string, unknown>,
  deps: Record<string, StackResource[]> = {},
) {
  return { type, urn: `urn:pulumi:dev::p::${type}::${name}`, name, props, propertyDependencies: deps };
}
const dyn = (kind: string) => `pulumi-nodejs:dynamic/posthog:${kind}`;
const plug = (kind: string) => `posthog:index:${kind}`;

/** Props whose `key` is unknown: reading it throws as @pulumi/policy's proxy does in a preview. */
function withUnknown(props: Record<string, unknown>, key: string): Record<string, unknown> {
  return new Proxy(props, {
    has: (t, k) => k === key || k in t,
    get(t, k) {
      if (k === key) {
        // as @pulumi/policy's UnknownValueError reads (an Error subclass that keeps the name "Error")
        throw new Error(`string value at .${key} can't be known during preview`);
      }
      return t[k as string];
    },
  });
}

describe("posthogKind", () => {
  it("reads both families and nothing else", () => {
    expect(posthogKind(dyn("Dashboard"))).toBe("Dashboard");
    expect(posthogKind(plug("DashboardSharing"))).toBe("DashboardSharing");
    expect(posthogKind("aws:s3/bucket:Bucket")).toBeUndefined();
    expect(posthogKind("pulumi-nodejs:dynamic/other:Dashboard")).toBeUndefined();
  });
});

describe("modelFromResources", () => {
  it.each([
    ["the dynamic SDK", dyn],
    ["the plugin", plug],
  ])("%s: references through property dependencies (verification, sharing, collaborators)", (_n, t) => {
    const domain = res(t("Domain"), "corp", { domain: "corp.example.com", ssoEnforcement: "saml" });
    const sales = res(t("Dashboard"), "sales", { name: "Sales", tags: ["public"], restrictionLevel: 21 });
    const fin = res(t("Dashboard"), "fin", { name: "Finance", tags: ["restricted"], restrictionLevel: 37 });
    const model = modelFromResources([
      domain,
      res(t("DomainVerification"), "corp", {}, { domainId: [domain] }),
      sales,
      fin,
      res(t("DashboardSharing"), "sales", { enabled: true }, { dashboardId: [sales] }),
      res(t("DashboardCollaborator"), "fin-max", { level: 37 }, { dashboardId: [fin] }),
      res(t("Invite"), "olga", { targetEmail: "olga@example.com", level: 15 }),
      res(t("Member"), "max", { userUuid: "u-1", level: 8 }),
      res(t("BatchExportPause"), "events", { batchExportId: "e-1", paused: true }),
      res(t("Project"), "web", { name: "Web" }),
      res("aws:s3/bucket:Bucket", "b", { name: "x" }),
    ]);
    expect(model.domains).toMatchObject([{ domain: "corp.example.com", verified: true, samlX509Cert: null }]);
    expect(model.sharing).toMatchObject([{ enabled: true, dashboard: { name: "Sales", tags: ["public"] } }]);
    expect(model.dashboards.map((d) => [d.name, d.collaborators])).toEqual([
      ["Sales", 0],
      ["Finance", 1],
    ]);
    expect(model.invites).toMatchObject([
      { email: "olga@example.com", level: 15, label: 'Invite "olga@example.com"' },
    ]);
    expect(model.members).toMatchObject([{ userUuid: "u-1", level: 8 }]);
    expect(model.exportPauses).toMatchObject([{ paused: true, label: 'BatchExportPause "events"' }]);
    expect(model.projects).toMatchObject([{ name: "Web", timezone: null }]);
    const found = evaluate(model, parseGovernanceConfig({}));
    // With the defaults: SAML without its settings, a sharing no allow list names, an owner invite, an admin no
    // list names, a project without timezone; the verified domain and the restricted dashboard with a collaborator pass.
    expect(found.map((v) => v.rule).sort()).toEqual(
      [
        "posthog-admin-allow-list",
        "posthog-domain-sso-enforced",
        "posthog-invite-not-owner",
        "posthog-project-timezone",
        "posthog-sharing-allow-list",
      ].sort(),
    );
    expect(found.find((v) => v.rule === "posthog-invite-not-owner")?.ref).toBe(
      `urn:pulumi:dev::p::${t("Invite")}::olga`,
    );
  });

  it("no DomainVerification: not verified; one naming a domain id literally: unknown (never reported)", () => {
    const domain = res(dyn("Domain"), "corp", { domain: "corp.example.com" });
    expect(modelFromResources([domain]).domains[0]?.verified).toBe(false);
    const literal = res(dyn("DomainVerification"), "v", { domainId: "0190-…" });
    expect(modelFromResources([domain, literal]).domains[0]?.verified).toBeUndefined();
  });

  it("values not known in a preview are unknown, and no rule reports them", () => {
    const model = modelFromResources([
      res(dyn("Invite"), "olga", withUnknown({ level: 15 }, "targetEmail")),
      res(dyn("Project"), "web", withUnknown({ name: "Web" }, "timezone")),
      res(dyn("Dashboard"), "d", withUnknown({ name: "D", restrictionLevel: 21 }, "tags")),
      res(dyn("DashboardSharing"), "s", withUnknown({}, "enabled")),
    ]);
    expect(model.invites[0]?.email).toBeUndefined();
    expect(model.projects[0]?.timezone).toBeUndefined();
    expect(model.dashboards[0]?.tags).toBeUndefined();
    expect(model.sharing[0]?.enabled).toBeUndefined();
    const config = parseGovernanceConfig({
      "posthog-invite-company-domain": { companyDomains: ["example.com"] },
    });
    expect(evaluate(model, config).map((v) => v.rule)).toEqual(["posthog-invite-not-owner"]);
  });

  it("a sharing of a dashboard by literal id: the adopted Dashboard of that id, else the id alone", () => {
    const adopted = res(dyn("Dashboard"), "kpis", { name: "KPIs", dashboardId: 12, tags: [] });
    const model = modelFromResources([
      adopted,
      res(dyn("DashboardSharing"), "kpis", { dashboardId: 12, enabled: true }),
      res(dyn("DashboardSharing"), "other", { dashboardId: 99, enabled: true }),
    ]);
    expect(model.sharing.map((s) => [s.dashboard?.name, s.dashboardId])).toEqual([
      ["KPIs", 12],
      [undefined, 99],
    ]);
  });
});

describe("ruleConfig (the pack's per-rule configuration)", () => {
  const maxOwners = RULES.find((r) => r.id === "posthog-max-owners");
  it("applies the defaults and ignores enforcementLevel", () => {
    expect(ruleConfig(maxOwners as never, { enforcementLevel: "mandatory" })).toEqual({ maxOwners: 3 });
  });
  it("an unknown or ill-typed key: GovernanceConfigError naming the rule and the key, as the audit's config", () => {
    const unknownKey =
      'policy config "posthog-max-owners": unknown key "maxOwner"; accepted: enforcementLevel, maxOwners';
    expect(() => ruleConfig(maxOwners as never, { maxOwner: 2 })).toThrow(
      new GovernanceConfigError(unknownKey),
    );
    expect(() => parseGovernanceConfig({ "posthog-max-owners": { maxOwner: 2 } })).toThrow(unknownKey);
    expect(() => ruleConfig(maxOwners as never, { maxOwners: -1 })).toThrow(
      /"posthog-max-owners": maxOwners: expected 0 or more/,
    );
  });
});

const root = join(__dirname, "..", "..");
const readJson = (...parts: string[]) =>
  JSON.parse(readFileSync(join(root, ...parts), "utf8")) as { version?: string; private?: boolean };

describe("the pack's package", () => {
  it("one version: policy/package.json carries none, and index.js serves the pack from the package's root, whose package.json @pulumi/policy reads (posthog-governance@v<version>)", () => {
    const folder = readJson("policy", "package.json");
    expect(folder.private).toBe(true);
    expect(folder.version).toBeUndefined();
    const index = readFileSync(join(root, "policy", "index.js"), "utf8");
    expect(index).toContain('const root = join(__dirname, "..");');
    expect(index).toContain("process.chdir(root);");
  });

  it("without @pulumi/policy installed, serving the pack fails naming `npm install --save-dev @pulumi/policy`", () => {
    // The built pack and rules in a folder whose node_modules holds zod only (what the rules need).
    const dir = mkdtempSync(join(tmpdir(), "pack-no-policy-"));
    try {
      for (const f of ["pack.js", "rules.js"])
        copyFileSync(join(root, "dist", "provider", "governance", f), join(dir, f));
      mkdirSync(join(dir, "node_modules"));
      symlinkSync(join(root, "node_modules", "zod"), join(dir, "node_modules", "zod"));
      const r = spawnSync(process.execPath, ["-e", "require('./pack.js').servePolicyPack()"], {
        cwd: dir,
        encoding: "utf8",
        // Were @pulumi/policy found, the pack would serve until stopped.
        timeout: 30_000,
      });
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(
        "the posthog policy pack needs @pulumi/policy beside pulumi-posthog: run `npm install --save-dev @pulumi/policy` in the project",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
