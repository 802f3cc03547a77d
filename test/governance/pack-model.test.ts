/**
 * Issue 37: the policy pack's model of a stack (provider/apps/governance/pack.ts `modelFromResources`), over resources
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
  judgeResource,
  modelFromResources,
  newRunMemory,
  posthogKind,
  type RunMemory,
  ruleConfig,
  type StackResource,
} from "../../provider/apps/governance/pack";
import {
  evaluate,
  GovernanceConfigError,
  parseGovernanceConfig,
  RULES,
} from "../../provider/apps/governance/rules";

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

describe("judgeResource (a resource policy, before the resource's write: issue 49)", () => {
  const rule = (id: string) => {
    const r = RULES.find((x) => x.id === id);
    if (!r) throw new Error(id);
    return r;
  };
  const judge = (id: string, args: ReturnType<typeof res>, memory: RunMemory, keys: object = {}) =>
    judgeResource(rule(id), rule(id).config.parse(keys), args, memory).map((f) => f.message);

  it("a rule judged on one resource reads that resource alone", () => {
    const memory = newRunMemory();
    const olga = res(dyn("Invite"), "olga", { targetEmail: "olga@example.com", level: 15 });
    expect(judge("posthog-invite-not-owner", olga, memory)).toEqual([
      'Invite "olga@example.com" invites at owner level',
    ]);
    const jane = res(plug("Invite"), "jane", { targetEmail: "jane@example.com", level: 1 });
    expect(judge("posthog-invite-not-owner", jane, memory)).toEqual([]);
    // Another provider's resource is never judged, nor remembered.
    expect(
      judge("posthog-invite-not-owner", res("aws:s3/bucket:Bucket", "b", { level: 15 }), memory),
    ).toEqual([]);
    expect([...memory.resources.keys()]).toEqual([olga.urn, jane.urn]);
  });

  it("posthog-max-owners: the owner past the limit is reported (the ones before it were within it); a resource judged again replaces itself", () => {
    const memory = newRunMemory();
    const owner = (name: string) => res(dyn("Member"), name, { email: `${name}@example.com`, level: 15 });
    expect(judge("posthog-max-owners", owner("a"), memory, { maxOwners: 2 })).toEqual([]);
    expect(judge("posthog-max-owners", owner("b"), memory, { maxOwners: 2 })).toEqual([]);
    expect(judge("posthog-max-owners", owner("b"), memory, { maxOwners: 2 })).toEqual([]);
    expect(judge("posthog-max-owners", owner("c"), memory, { maxOwners: 2 })).toEqual([
      'Member "c@example.com" is one of 3 owners; at most 2 are allowed',
    ]);
  });

  it("posthog-sharing-allow-list: by the dashboard its check recorded (`_policy`), before the write", () => {
    const memory = newRunMemory();
    const sharing = (name: string, dashboard: object) =>
      res(dyn("DashboardSharing"), name, { dashboardId: 7, enabled: true, _policy: { dashboard } });
    const keys = { allowedDashboards: ["Public KPIs"], allowedTags: ["public"] };
    expect(
      judge("posthog-sharing-allow-list", sharing("s", { id: 7, name: "Sales", tags: [] }), memory, keys),
    ).toEqual(['DashboardSharing "s" shares dashboard "Sales" publicly, and it is not in the allow list']);
    for (const allowed of [
      { id: 7, name: "Public KPIs", tags: [] },
      { id: 7, name: "Status", tags: ["public"] },
    ])
      expect(judge("posthog-sharing-allow-list", sharing("s", allowed), memory, keys)).toEqual([]);
  });

  it("posthog-sharing-allow-list in a preview of a dashboard the run creates (its id unknown): reported when every dashboard of the run that may be it breaks the rule", () => {
    const keys = { allowedTags: ["public"] };
    const unknownId = res(dyn("DashboardSharing"), "s", withUnknown({ enabled: true }, "dashboardId"));
    const dashboard = (name: string, tags: string[]) => res(dyn("Dashboard"), name, { name, tags });
    // No dashboard registered before it: nothing to judge by.
    expect(judge("posthog-sharing-allow-list", unknownId, newRunMemory(), keys)).toEqual([]);
    const one = newRunMemory();
    judge("posthog-sharing-allow-list", dashboard("Sales", []), one, keys);
    expect(judge("posthog-sharing-allow-list", unknownId, one, keys)).toEqual([
      'DashboardSharing "s" shares dashboard "Sales" publicly, and it is not in the allow list',
    ]);
    judge("posthog-sharing-allow-list", dashboard("Finance", ["restricted"]), one, keys);
    expect(judge("posthog-sharing-allow-list", unknownId, one, keys)).toEqual([
      'DashboardSharing "s" shares publicly a dashboard this run creates (one of Dashboard "Sales", Dashboard "Finance"), and none of them is in the allow list',
    ]);
    // One of them is allowed: it may be that one; `up` judges it once the id is known.
    judge("posthog-sharing-allow-list", dashboard("Status", ["public"]), one, keys);
    expect(judge("posthog-sharing-allow-list", unknownId, one, keys)).toEqual([]);
  });

  it("...the dashboards its check lists as the ones the run creates (`_policy.candidates`), when it lists them", () => {
    const keys = { allowedDashboards: ["Sales"] };
    const memory = newRunMemory();
    // Sales is registered before it but not created by the run (its id is known): not listed.
    judge("posthog-sharing-allow-list", res(dyn("Dashboard"), "sales", { name: "Sales" }), memory, keys);
    const listed = (candidates: object[]) =>
      res(
        dyn("DashboardSharing"),
        "finance",
        withUnknown({ enabled: true, _policy: { candidates } }, "dashboardId"),
      );
    expect(
      judge("posthog-sharing-allow-list", listed([{ name: "Finance", tags: [] }]), memory, keys),
    ).toEqual([
      'DashboardSharing "finance" shares dashboard "Finance" publicly, and it is not in the allow list',
    ]);
    expect(
      judge("posthog-sharing-allow-list", listed([{ name: "Finance" }, { name: "Sales" }]), memory, keys),
    ).toEqual([]);
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
    // The pack's message ends with where the configuration is documented; the audit's names its own page.
    expect(() => ruleConfig(maxOwners as never, { maxOwner: 2 })).toThrow(
      new GovernanceConfigError(`${unknownKey} (see docs/governance.md#the-configuration)`),
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
    // The built pack and rules (and the docs pointer they name) in a folder whose node_modules holds zod and re2js
    // only (what the rules need), laid out as under dist/provider.
    const dir = mkdtempSync(join(tmpdir(), "pack-no-policy-"));
    const governance = join(dir, "apps", "governance");
    try {
      mkdirSync(governance, { recursive: true });
      for (const f of ["pack.js", "rules.js", "pattern.js"])
        copyFileSync(join(root, "dist", "provider", "apps", "governance", f), join(governance, f));
      mkdirSync(join(dir, "client"));
      copyFileSync(
        join(root, "dist", "provider", "client", "docs-link.js"),
        join(dir, "client", "docs-link.js"),
      );
      mkdirSync(join(dir, "node_modules"));
      for (const m of ["zod", "re2js"])
        symlinkSync(join(root, "node_modules", m), join(dir, "node_modules", m));
      const r = spawnSync(process.execPath, ["-e", "require('./pack.js').servePolicyPack()"], {
        cwd: governance,
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
