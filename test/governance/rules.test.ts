/**
 * The governance rules (provider/apps/governance/rules.ts, issue 37) over literal models: each rule failing and
 * passing, an unknown value (undefined) never reported, each rule's config defaults and tuning, enforcement levels
 * (advisory by default, `all`, per rule, disabled), and a configuration of the wrong shape refused naming the rule
 * and the key. The pack and the audit build these models; here the rules alone.
 */
import { describe, expect, it } from "vitest";
import {
  evaluate,
  type GovernanceConfig,
  GovernanceConfigError,
  type GovModel,
  parseGovernanceConfig,
  RULE_IDS,
  RULES,
} from "../../provider/apps/governance/rules";

/** A model of the given objects (the other lists empty). */
const model = (objects: Partial<GovModel>): GovModel => ({
  domains: [],
  invites: [],
  members: [],
  dashboards: [],
  sharing: [],
  exportPauses: [],
  projects: [],
  ...objects,
});

/** The `[rule, ref]` of each violation of `objects` under the raw `config`. */
const found = (objects: Partial<GovModel>, config: unknown = {}) =>
  evaluate(model(objects), parseGovernanceConfig(config)).map((v) => [v.rule, v.ref]);

/** The error `parseGovernanceConfig(raw)` throws (fails the test when it throws none). */
function configError(raw: unknown): GovernanceConfigError {
  try {
    parseGovernanceConfig(raw);
  } catch (e) {
    expect(e).toBeInstanceOf(GovernanceConfigError);
    return e as GovernanceConfigError;
  }
  throw new Error(`parseGovernanceConfig accepted ${JSON.stringify(raw)}`);
}

const SAML = { samlEntityId: "https://idp/e", samlAcsUrl: "https://ph/acs", samlX509Cert: "MIIC" };

describe("the rules", () => {
  it("has the rules of issue 37 (restricted dashboards split in two by issue 49), each with a description, its config schema and what the pack judges it on", () => {
    expect(RULE_IDS).toEqual([
      "posthog-domain-sso-enforced",
      "posthog-domain-verified",
      "posthog-sharing-allow-list",
      "posthog-invite-not-owner",
      "posthog-invite-admin-domains",
      "posthog-invite-company-domain",
      "posthog-max-owners",
      "posthog-admin-allow-list",
      "posthog-restricted-dashboards",
      "posthog-restricted-dashboard-collaborators",
      "posthog-production-exports-unpaused",
      "posthog-project-timezone",
      "posthog-project-name-pattern",
    ]);
    // Only the rules that need resources registered after the one judged wait for the whole stack (issue 49).
    expect(RULES.filter((r) => r.judgedOn === "stack").map((r) => r.id)).toEqual([
      "posthog-domain-verified",
      "posthog-restricted-dashboard-collaborators",
    ]);
    for (const rule of RULES) {
      expect(rule.description.length, rule.id).toBeGreaterThan(40);
      // Every key the zod config takes is in the JSON schema Pulumi gets, and the other way round.
      const parsed = rule.config.parse({}) as Record<string, unknown>;
      for (const key of Object.keys(parsed)) expect(Object.keys(rule.configSchema), rule.id).toContain(key);
    }
  });

  describe("posthog-domain-sso-enforced", () => {
    const domain = (ref: string, fields: object) => ({
      ref,
      label: `Domain "${ref}"`,
      domain: ref,
      ...fields,
    });
    it("fails a domain without SAML enforcement or with an incomplete SAML setup; passes a complete one", () => {
      const v = evaluate(
        model({
          domains: [
            domain("none.example.com", { ...SAML, ssoEnforcement: "" }),
            domain("google.example.com", { ...SAML, ssoEnforcement: "google-oauth2" }),
            domain("nocert.example.com", { ...SAML, ssoEnforcement: "saml", samlX509Cert: null }),
            domain("ok.example.com", { ...SAML, ssoEnforcement: "saml" }),
          ],
        }),
      ).filter((x) => x.rule === "posthog-domain-sso-enforced");
      expect(v.map((x) => x.ref)).toEqual(["none.example.com", "google.example.com", "nocert.example.com"]);
      expect(v[0]?.message).toBe(
        'Domain "none.example.com" does not enforce SAML SSO (ssoEnforcement is unset)',
      );
      expect(v[1]?.message).toContain('(ssoEnforcement is "google-oauth2")');
      expect(v[2]?.message).toBe(
        'Domain "nocert.example.com" enforces SAML SSO without samlX509Cert: nobody of the domain can log in',
      );
      expect(v[2]?.fix).toContain("set samlX509Cert on the Domain");
    });

    it("reports nothing from unknown values (an output not known in a preview, a field PostHog did not send)", () => {
      expect(
        found({
          domains: [
            domain("a.example.com", { ssoEnforcement: undefined }),
            domain("b.example.com", { ssoEnforcement: "saml" }),
          ],
        }),
      ).toEqual([]);
    });

    it("exemptDomains skips a domain and its subdomains", () => {
      const domains = [
        domain("partner.example.com", { ssoEnforcement: "" }),
        domain("eu.partner.example.com", { ssoEnforcement: "" }),
        domain("other.example.com", { ssoEnforcement: "" }),
      ];
      const config = { "posthog-domain-sso-enforced": { exemptDomains: ["partner.example.com"] } };
      expect(found({ domains }, config).filter(([r]) => r === "posthog-domain-sso-enforced")).toEqual([
        ["posthog-domain-sso-enforced", "other.example.com"],
      ]);
    });
  });

  describe("posthog-domain-verified", () => {
    it("fails an unverified domain; passes a verified one and one whose verification is unknown", () => {
      const domains = [
        { ref: "d/1", label: 'Domain "a.example.com"', domain: "a.example.com", verified: false },
        { ref: "d/2", label: 'Domain "b.example.com"', domain: "b.example.com", verified: true },
        { ref: "d/3", label: 'Domain "c.example.com"', domain: "c.example.com" },
      ];
      expect(found({ domains })).toEqual([["posthog-domain-verified", "d/1"]]);
      expect(found({ domains }, { "posthog-domain-verified": { exemptDomains: ["example.com"] } })).toEqual(
        [],
      );
    });
  });

  describe("posthog-sharing-allow-list", () => {
    const dashboard = (id: number, name: string, tags: string[]) => ({
      ref: `dashboard/${id}`,
      label: `Dashboard "${name}"`,
      id,
      name,
      tags,
    });
    const share = (ref: string, enabled: boolean | undefined, d: ReturnType<typeof dashboard>) => ({
      ref,
      label: `Sharing ${ref}`,
      enabled,
      dashboard: d,
    });
    const sharing = [
      share("s/1", true, dashboard(1, "Sales", [])),
      share("s/2", true, dashboard(2, "Public KPIs", [])),
      share("s/3", true, dashboard(3, "Status", ["public"])),
      share("s/4", true, dashboard(4, "By id", [])),
      share("s/5", false, dashboard(5, "Private", [])),
      share("s/6", undefined, dashboard(6, "Unknown", [])),
    ];

    it("by default, every enabled sharing fails; disabled and unknown ones pass", () => {
      expect(found({ sharing })).toEqual(
        ["s/1", "s/2", "s/3", "s/4"].map((ref) => ["posthog-sharing-allow-list", ref]),
      );
    });

    it("the allow list by name, id and tag lets those through", () => {
      const config = {
        "posthog-sharing-allow-list": { allowedDashboards: ["Public KPIs", 4], allowedTags: ["public"] },
      };
      expect(found({ sharing }, config)).toEqual([["posthog-sharing-allow-list", "s/1"]]);
      const [v] = evaluate(model({ sharing }), parseGovernanceConfig(config));
      expect(v?.message).toBe(
        'Sharing s/1 shares dashboard "Sales" publicly, and it is not in the allow list',
      );
    });

    it("what could allow a sharing is unknown (a preview's unknown output): never reported", () => {
      const unknownName = [
        {
          ref: "s/7",
          label: "Sharing s/7",
          enabled: true,
          dashboard: { ref: "d/7", label: "D", id: 7, tags: [] },
        },
      ];
      const byName = { "posthog-sharing-allow-list": { allowedDashboards: ["Public KPIs"] } };
      expect(found({ sharing: unknownName }, byName)).toEqual([]);
      // Known to be allowed by nothing the list names (no names listed): reported.
      expect(found({ sharing: unknownName })).toEqual([["posthog-sharing-allow-list", "s/7"]]);
      const unknownTags = [
        {
          ref: "s/8",
          label: "Sharing s/8",
          enabled: true,
          dashboard: { ref: "d/8", label: "D", name: "Sales" },
        },
      ];
      const byTag = { "posthog-sharing-allow-list": { allowedTags: ["public"] } };
      expect(found({ sharing: unknownTags }, byTag)).toEqual([]);
      const noDashboard = [{ ref: "s/9", label: "Sharing s/9", enabled: true }];
      expect(found({ sharing: noDashboard })).toEqual([]);
      // An unknown id matters only to an allow list that names ids.
      const unknownId = [
        {
          ref: "s/10",
          label: "Sharing s/10",
          enabled: true,
          dashboard: { ref: "d/10", label: "D", name: "Sales", tags: [] },
        },
      ];
      expect(found({ sharing: unknownId }, byName)).toEqual([["posthog-sharing-allow-list", "s/10"]]);
      const byId = { "posthog-sharing-allow-list": { allowedDashboards: ["Public KPIs", 12] } };
      expect(found({ sharing: unknownId }, byId)).toEqual([]);
    });

    it("a sharing known only by its dashboard's id is judged by that id", () => {
      const byId = [{ ref: "s/9", label: "Sharing s/9", enabled: true, dashboardId: 9 }];
      expect(found({ sharing: byId })).toEqual([["posthog-sharing-allow-list", "s/9"]]);
      expect(found({ sharing: byId }, { "posthog-sharing-allow-list": { allowedDashboards: [9] } })).toEqual(
        [],
      );
    });
  });

  describe("the invite rules", () => {
    const invite = (ref: string, email: string | undefined, level: number | undefined) => ({
      ref,
      label: `Invite of "${email}"`,
      email,
      level,
    });
    const invites = [
      invite("i/owner", "olga@example.com", 15),
      invite("i/admin-ok", "ada@example.com", 8),
      invite("i/admin-out", "carl@contractor.io", 8),
      invite("i/member-out", "someone@gmail.com", 1),
      invite("i/member", "nora@example.com", 1),
      invite("i/unknown", undefined, undefined),
    ];

    it("posthog-invite-not-owner: fails an owner-level invite only", () => {
      expect(found({ invites }).filter(([r]) => r === "posthog-invite-not-owner")).toEqual([
        ["posthog-invite-not-owner", "i/owner"],
      ]);
    });

    it("posthog-invite-admin-domains: no admin invite by default; the configured domains (and subdomains) pass", () => {
      const rule = "posthog-invite-admin-domains";
      expect(found({ invites }).filter(([r]) => r === rule)).toEqual([
        [rule, "i/admin-ok"],
        [rule, "i/admin-out"],
      ]);
      expect(
        found({ invites }, { [rule]: { adminDomains: ["example.com"] } }).filter(([r]) => r === rule),
      ).toEqual([[rule, "i/admin-out"]]);
      const sub = [invite("i/sub", "x@eu.example.com", 8)];
      expect(found({ invites: sub }, { [rule]: { adminDomains: ["@example.com"] } })).toEqual([]);
    });

    it("posthog-invite-company-domain: not evaluated until configured; then every invite outside fails", () => {
      const rule = "posthog-invite-company-domain";
      expect(found({ invites }).filter(([r]) => r === rule)).toEqual([]);
      const v = evaluate(
        model({ invites }),
        parseGovernanceConfig({ [rule]: { companyDomains: ["Example.com"] } }),
      );
      expect(v.filter((x) => x.rule === rule).map((x) => x.ref)).toEqual(["i/admin-out", "i/member-out"]);
      expect(v.find((x) => x.ref === "i/member-out" && x.rule === rule)?.message).toBe(
        'Invite of "someone@gmail.com" invites someone@gmail.com, outside the company domains (Example.com)',
      );
    });
  });

  describe("the member rules", () => {
    const member = (email: string, level: number | undefined, userUuid = `uuid-${email}`) => ({
      ref: `member/${userUuid}`,
      label: `Member "${email}"`,
      email,
      userUuid,
      level,
    });

    it("posthog-max-owners: at most 3 owners by default, every owner named when more; tuned by maxOwners", () => {
      const rule = "posthog-max-owners";
      const three = ["a", "b", "c"].map((n) => member(`${n}@example.com`, 15));
      expect(found({ members: three }).filter(([r]) => r === rule)).toEqual([]);
      const four = [...three, member("d@example.com", 15), member("m@example.com", 1)];
      expect(found({ members: four }).filter(([r]) => r === rule)).toHaveLength(4);
      const v = evaluate(model({ members: three }), parseGovernanceConfig({ [rule]: { maxOwners: 2 } }));
      expect(v.filter((x) => x.rule === rule).map((x) => x.ref)).toEqual(three.map((m) => m.ref));
      expect(v[0]?.message).toBe('Member "a@example.com" is one of 3 owners; at most 2 are allowed');
    });

    it("posthog-admin-allow-list: nobody by default; listed by e-mail (any case) or user UUID pass", () => {
      const rule = "posthog-admin-allow-list";
      const members = [
        member("adam@example.com", 8),
        member("ada@example.com", 8, "ada-uuid"),
        member("olivia@example.com", 15),
        member("mia@example.com", 1),
        member("who@example.com", undefined),
      ];
      expect(found({ members }).filter(([r]) => r === rule)).toEqual([
        [rule, "member/uuid-adam@example.com"],
        [rule, "member/ada-uuid"],
      ]);
      expect(
        found({ members }, { [rule]: { admins: ["ADAM@example.com", "ada-uuid"] } }).filter(
          ([r]) => r === rule,
        ),
      ).toEqual([]);
    });
  });

  describe("posthog-restricted-dashboards and posthog-restricted-dashboard-collaborators", () => {
    const rule = "posthog-restricted-dashboards";
    const collaborators = "posthog-restricted-dashboard-collaborators";
    const dashboard = (
      id: number,
      tags: string[] | undefined,
      restrictionLevel?: number,
      collaborators?: number,
    ) => ({
      ref: `dashboard/${id}`,
      label: `Dashboard ${id}`,
      id,
      tags,
      restrictionLevel,
      collaborators,
    });

    it("a dashboard tagged restricted fails when everyone can edit it and when it has no collaborator", () => {
      const dashboards = [
        dashboard(1, ["restricted"], 21, 1),
        dashboard(2, ["restricted"], 37, 0),
        dashboard(3, ["restricted", "finance"], 37, 1),
        dashboard(4, ["finance"], 21, 0),
        dashboard(5, ["restricted"], undefined, undefined),
        dashboard(6, undefined, 21, 0),
      ];
      const v = evaluate(model({ dashboards })).filter((x) => x.rule === rule || x.rule === collaborators);
      expect(v.map((x) => [x.rule, x.ref])).toEqual([
        [rule, "dashboard/1"],
        [collaborators, "dashboard/2"],
      ]);
      expect(v[0]?.message).toBe(
        'Dashboard 1 is tagged "restricted" but everyone in the project can edit it',
      );
      expect(v[1]?.message).toBe(
        'Dashboard 2 is tagged "restricted" and has 0 collaborator(s); at least 1 required',
      );
    });

    it("tuned: other tags and a minimum of collaborators", () => {
      const dashboards = [dashboard(3, ["finance"], 37, 1), dashboard(4, ["restricted"], 21, 0)];
      const config = {
        [rule]: { tags: ["finance"] },
        [collaborators]: { tags: ["finance"], minCollaborators: 2 },
      };
      expect(found({ dashboards }, config)).toEqual([[collaborators, "dashboard/3"]]);
      expect(found({ dashboards }, { [collaborators]: { minCollaborators: 0 } })).toEqual([
        [rule, "dashboard/4"],
      ]);
    });
  });

  describe("posthog-production-exports-unpaused", () => {
    const rule = "posthog-production-exports-unpaused";
    const exportPauses = [
      { ref: "p/1", label: 'Batch export "A"', paused: true },
      { ref: "p/2", label: 'Batch export "B"', paused: false },
      { ref: "p/3", label: 'Batch export "C"' },
    ];
    it("nothing unless production; in production a paused export fails", () => {
      expect(found({ exportPauses })).toEqual([]);
      expect(found({ exportPauses }, { [rule]: { production: true } })).toEqual([[rule, "p/1"]]);
    });
  });

  describe("the project rules", () => {
    const project = (id: number, name: string | undefined, timezone?: string | null) => ({
      ref: `project/${id}`,
      label: `Project ${id}`,
      name,
      timezone,
    });
    const projects = [
      project(1, "Web", "Europe/Berlin"),
      project(2, "Legacy", null),
      project(3, "scratch-42", ""),
      project(4, undefined, undefined),
    ];

    it("posthog-project-timezone: null or empty fails; set or unknown passes", () => {
      expect(found({ projects }).filter(([r]) => r === "posthog-project-timezone")).toEqual([
        ["posthog-project-timezone", "project/2"],
        ["posthog-project-timezone", "project/3"],
      ]);
    });

    it("posthog-project-name-pattern: not evaluated until set; then names not matching fail", () => {
      const rule = "posthog-project-name-pattern";
      expect(found({ projects }).filter(([r]) => r === rule)).toEqual([]);
      const v = evaluate(
        model({ projects }),
        parseGovernanceConfig({ [rule]: { namePattern: "^[A-Z][a-z]+$" } }),
      );
      expect(v.filter((x) => x.rule === rule).map((x) => x.ref)).toEqual(["project/3"]);
      expect(v.find((x) => x.rule === rule)?.message).toBe("Project 3's name does not match ^[A-Z][a-z]+$");
    });
  });
});

describe("the configuration", () => {
  const owners = model({
    invites: [{ ref: "i/1", label: "Invite 1", email: "o@example.com", level: 15 }],
    projects: [{ ref: "p/1", label: "Project 1", name: "x", timezone: null }],
  });
  const levels = (config: GovernanceConfig) =>
    Object.fromEntries(evaluate(owners, config).map((v) => [v.rule, v.enforcement]));

  it("defaults: every rule advisory, each key at its default", () => {
    const config = parseGovernanceConfig({});
    expect(Object.keys(config)).toEqual(RULE_IDS);
    for (const id of RULE_IDS) expect(config[id]?.enforcement).toBe("advisory");
    expect(config["posthog-max-owners"]?.config).toEqual({ maxOwners: 3 });
    expect(config["posthog-restricted-dashboards"]?.config).toEqual({ tags: ["restricted"] });
    expect(config["posthog-restricted-dashboard-collaborators"]?.config).toEqual({
      tags: ["restricted"],
      minCollaborators: 1,
    });
    expect(config["posthog-sharing-allow-list"]?.config).toEqual({ allowedDashboards: [], allowedTags: [] });
    expect(parseGovernanceConfig(undefined)).toEqual(config);
    // JSON null is not "no configuration": refused (issue 49, item 4)
    expect(() => parseGovernanceConfig(null)).toThrow(GovernanceConfigError);
    expect(levels(config)).toEqual({
      "posthog-invite-not-owner": "advisory",
      "posthog-project-timezone": "advisory",
    });
    // evaluate without a config: the same defaults.
    expect(evaluate(owners)).toEqual(evaluate(owners, config));
  });

  it("all sets every rule's level; a rule's own entry (a level, or an object) wins; disabled turns it off", () => {
    expect(levels(parseGovernanceConfig({ all: "mandatory" }))).toEqual({
      "posthog-invite-not-owner": "mandatory",
      "posthog-project-timezone": "mandatory",
    });
    expect(
      levels(
        parseGovernanceConfig({
          all: "mandatory",
          "posthog-invite-not-owner": "advisory",
          "posthog-project-timezone": { enforcementLevel: "disabled" },
        }),
      ),
    ).toEqual({ "posthog-invite-not-owner": "advisory" });
    expect(
      levels(parseGovernanceConfig({ all: "disabled", "posthog-project-timezone": "mandatory" })),
    ).toEqual({
      "posthog-project-timezone": "mandatory",
    });
    // An object without enforcementLevel tunes the rule and keeps the level of `all`.
    const tuned = parseGovernanceConfig({ all: "mandatory", "posthog-max-owners": { maxOwners: 5 } });
    expect(tuned["posthog-max-owners"]).toEqual({ enforcement: "mandatory", config: { maxOwners: 5 } });
  });

  it.each([
    [[], "the policy config must be a JSON object of rule ids"],
    ["mandatory", "the policy config must be a JSON object of rule ids"],
    [
      { "posthog-no-such-rule": "mandatory" },
      'policy config: unknown rule "posthog-no-such-rule"; accepted: all, ',
    ],
    [{ all: "strict" }, 'policy config "all": expected one of advisory, mandatory, disabled, got "strict"'],
    [
      { "posthog-max-owners": 3 },
      'policy config "posthog-max-owners": expected advisory, mandatory, disabled or an object of enforcementLevel and the rule\'s keys, got 3',
    ],
    [
      { "posthog-max-owners": { enforcementLevel: "warn" } },
      'policy config "posthog-max-owners": enforcementLevel: expected one of advisory, mandatory, disabled, got "warn"',
    ],
    [
      { "posthog-max-owners": { maxOwners: "two" } },
      'policy config "posthog-max-owners": maxOwners: expected an integer',
    ],
    [
      { "posthog-max-owners": { maxOwners: -1 } },
      'policy config "posthog-max-owners": maxOwners: expected 0 or more',
    ],
    [
      { "posthog-max-owners": { owners: 2 } },
      'policy config "posthog-max-owners": unknown key "owners"; accepted: enforcementLevel, maxOwners',
    ],
    [
      { "posthog-invite-company-domain": { companyDomains: "example.com" } },
      'policy config "posthog-invite-company-domain": companyDomains: expected a list of strings',
    ],
    [
      { "posthog-admin-allow-list": { admins: [""] } },
      'policy config "posthog-admin-allow-list": admins.0: expected a non-empty string',
    ],
    [
      { "posthog-sharing-allow-list": { allowedDashboards: [true] } },
      'policy config "posthog-sharing-allow-list": allowedDashboards.0: ',
    ],
    [
      { "posthog-production-exports-unpaused": { production: "yes" } },
      'policy config "posthog-production-exports-unpaused": production: expected true or false',
    ],
    [
      { "posthog-project-name-pattern": { namePattern: "([a-z" } },
      'policy config "posthog-project-name-pattern": namePattern: "([a-z" is not a valid regular expression',
    ],
    [
      { "posthog-invite-not-owner": { level: 15 } },
      'policy config "posthog-invite-not-owner": unknown key "level"; accepted: enforcementLevel',
    ],
    [null, "the policy config must be a JSON object of rule ids"],
    [42, "the policy config must be a JSON object of rule ids"],
  ])("wrong shape %j: refused naming the rule and the key", (raw, message) => {
    expect(configError(raw).message.startsWith(message), configError(raw).message).toBe(true);
  });
});
