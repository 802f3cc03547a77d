/**
 * Governance rules for a PostHog organization: one implementation for the policy pack (`pulumi preview
 * --policy-pack`, provider/apps/governance/pack.ts, over the resources of a stack) and the audit (`pulumi-posthog
 * audit`, provider/apps/governance/audit.ts, over the live organization). Each adapter builds a {@link GovModel}; the
 * rules here read only that model, never a stack or the API.
 *
 * In the model, `undefined` means unknown (e.g. an output not known in a preview, or an object the audit could
 * not read): a rule never reports a violation from an unknown value. `null` means known to be unset.
 *
 * The configuration is the JSON `pulumi preview --policy-pack-config <file>` takes, and `audit --config <file>`
 * reads the same file: `{"all": "mandatory", "posthog-max-owners": {"enforcementLevel": "mandatory", "maxOwners":
 * 2}, "posthog-project-timezone": "disabled"}`. Every rule is advisory unless configured otherwise.
 */
import { z } from "zod";
import { linearMatcher, linearPatternProblem } from "./pattern";

/** How a violation counts: advisory warns, mandatory fails the preview (or the audit's exit code). */
export type Enforcement = "advisory" | "mandatory";
/** The levels the configuration accepts; `disabled` turns the rule off. */
export const ENFORCEMENT_LEVELS = ["advisory", "mandatory", "disabled"] as const;
export type EnforcementLevel = (typeof ENFORCEMENT_LEVELS)[number];

/** Organization levels (PostHog's `level`). */
export const LEVEL = { member: 1, admin: 8, owner: 15 } as const;
/** Dashboard restriction levels: 21 everyone in the project can edit, 37 only collaborators can edit. */
export const RESTRICTION = { everyoneCanEdit: 21, onlyCollaboratorsCanEdit: 37 } as const;

/** What every object of the model carries: where it is and how to name it. */
export interface Subject {
  /** A stack resource's URN; in the audit `<kind>/<id>` (e.g. `dashboard/12`, `domain/<uuid>`). */
  ref: string;
  /** How a person names it, e.g. `Dashboard "Sales"`, `Domain "example.com"`. */
  label: string;
  /** Audit only: true when a Pulumi stack manages it, false when not, undefined when not known. */
  managed?: boolean | undefined;
}

/** A verified domain and its SSO settings. */
export interface GovDomain extends Subject {
  domain?: string | undefined;
  /** `sso_enforcement`: "saml", "google-oauth2", … or null/"" for none. */
  ssoEnforcement?: string | null | undefined;
  samlEntityId?: string | null | undefined;
  samlAcsUrl?: string | null | undefined;
  samlX509Cert?: string | null | undefined;
  /** Stack: a DomainVerification for it is declared; audit: PostHog says it is verified. */
  verified?: boolean | undefined;
}

/** A pending invitation. */
export interface GovInvite extends Subject {
  email?: string | undefined;
  /** 1 member, 8 admin, 15 owner. */
  level?: number | undefined;
}

/** A member of the organization. */
export interface GovMember extends Subject {
  email?: string | undefined;
  userUuid?: string | undefined;
  /** 1 member, 8 admin, 15 owner. */
  level?: number | undefined;
}

/** A dashboard. */
export interface GovDashboard extends Subject {
  id?: number | undefined;
  name?: string | undefined;
  tags?: string[] | undefined;
  /** 21 everyone in the project can edit, 37 only collaborators can edit. */
  restrictionLevel?: number | undefined;
  /** How many collaborators it has (stack: DashboardCollaborator resources for it). */
  collaborators?: number | undefined;
}

/** The public sharing of one dashboard. */
export interface GovSharing extends Subject {
  enabled?: boolean | undefined;
  /** The dashboard shared, when known (in a stack: the Dashboard resource its `dashboardId` comes from). */
  dashboard?: GovDashboard | undefined;
  /** The dashboard's id when the dashboard itself is not in the model. */
  dashboardId?: number | undefined;
}

/** A batch export's pause (stack: a BatchExportPause; audit: every batch export). */
export interface GovExportPause extends Subject {
  batchExportId?: string | undefined;
  name?: string | undefined;
  paused?: boolean | undefined;
}

/** A project. */
export interface GovProject extends Subject {
  name?: string | undefined;
  /** null or "" when unset. */
  timezone?: string | null | undefined;
}

/** What the rules read: built from a stack's resources or from the live organization. */
export interface GovModel {
  domains: GovDomain[];
  invites: GovInvite[];
  members: GovMember[];
  dashboards: GovDashboard[];
  sharing: GovSharing[];
  exportPauses: GovExportPause[];
  projects: GovProject[];
}

/** One finding of a rule. */
export interface Finding {
  /** The offending object's {@link Subject.ref}. */
  ref: string;
  label: string;
  /** What is wrong, naming the object. */
  message: string;
  /** What to change, in the program or in PostHog. */
  fix: string;
}

/** A finding with its rule and enforcement. */
export interface Violation extends Finding {
  rule: string;
  enforcement: Enforcement;
}

/**
 * What the policy pack needs to judge a rule (provider/apps/governance/pack.ts), and so when it can stop a write:
 * - `resource`: the inputs of the one resource judged. A resource policy: the engine runs it when it registers the
 *   resource, before it creates or updates it, in `pulumi preview` and in `pulumi up --skip-preview` alike.
 * - `run`: that resource and resources the engine registered before it in the same run (a DashboardSharing's
 *   dashboard, whose id it takes; the Members before it, for a count). A resource policy too, with the pack's memory
 *   of the run; where a value it needs is unknown then, it judges what it can and says nothing of the rest.
 * - `stack`: resources registered after the one judged (a Domain's DomainVerification, a Dashboard's
 *   collaborators). A stack policy: the engine runs it once every resource is registered, after `up` applied them:
 *   a preview fails on it, `up --skip-preview` fails after its writes (docs/governance.md says which rules).
 */
export type JudgedOn = "resource" | "run" | "stack";

/** A rule: metadata, its configuration keys (zod for parsing, JSON schema for Pulumi) and its check. */
export interface Rule<C = unknown> {
  id: string;
  /** What the rule protects, for a security reviewer. */
  description: string;
  /** What the policy pack needs to judge it ({@link JudgedOn}). */
  judgedOn: JudgedOn;
  /** The configuration keys beside `enforcementLevel` (zod; every key has a default). */
  config: z.ZodType<C>;
  /** The same keys as JSON schema `properties`, as @pulumi/policy's `configSchema` takes them. */
  configSchema: Record<string, Record<string, unknown>>;
  check(model: GovModel, config: C): Finding[];
}

const strings = z.array(z.string().min(1, { error: "expected a non-empty string" }), {
  error: "expected a list of strings",
});
const stringsSchema = { type: "array", items: { type: "string", minLength: 1 } };

/** The e-mail's domain, lower case, or undefined. */
function emailDomain(email: string | undefined): string | undefined {
  const at = email?.lastIndexOf("@") ?? -1;
  return email !== undefined && at >= 0 ? email.slice(at + 1).toLowerCase() : undefined;
}

/** Whether `domain` is `allowed` or a subdomain of it (both lower case, without a leading dot). */
function inDomain(domain: string, allowed: readonly string[]): boolean {
  return allowed.some((a) => {
    const d = a.toLowerCase().replace(/^@/, "");
    return domain === d || domain.endsWith(`.${d}`);
  });
}

/** A rule typed by its own config, stored as {@link Rule} (each rule gets only the config its zod schema parsed). */
const defineRule = <C>(r: Rule<C>): Rule => r as unknown as Rule;

const exemptDomains = z.strictObject({ exemptDomains: strings.default([]) });
/** The tags that mark a dashboard as restricted (posthog-restricted-dashboards and its collaborators rule). */
const restrictedTags = strings.default(["restricted"]);

/** Every rule, in the order reports list them. */
export const RULES: readonly Rule[] = [
  defineRule({
    id: "posthog-domain-sso-enforced",
    judgedOn: "resource",
    description:
      'Every organization domain enforces SAML single sign-on (ssoEnforcement "saml") with complete SAML settings ' +
      "(entity id, ACS URL and X.509 certificate), so that people of the company's domains can only log in through " +
      "the company's identity provider.",
    config: exemptDomains,
    configSchema: { exemptDomains: stringsSchema },
    check(model, config) {
      const out: Finding[] = [];
      for (const d of model.domains) {
        if (d.domain !== undefined && inDomain(d.domain.toLowerCase(), config.exemptDomains)) continue;
        if (d.ssoEnforcement === undefined) continue;
        if (d.ssoEnforcement !== "saml") {
          out.push({
            ref: d.ref,
            label: d.label,
            message: `${d.label} does not enforce SAML SSO (ssoEnforcement is ${d.ssoEnforcement ? `"${d.ssoEnforcement}"` : "unset"})`,
            fix: 'set ssoEnforcement: "saml" with samlEntityId, samlAcsUrl and samlX509Cert on the Domain',
          });
          continue;
        }
        const missing = (
          [
            ["samlEntityId", d.samlEntityId],
            ["samlAcsUrl", d.samlAcsUrl],
            ["samlX509Cert", d.samlX509Cert],
          ] as const
        )
          .filter(([, v]) => v === null || v === "")
          .map(([k]) => k);
        if (missing.length > 0) {
          out.push({
            ref: d.ref,
            label: d.label,
            message: `${d.label} enforces SAML SSO without ${missing.join(", ")}: nobody of the domain can log in`,
            fix: `set ${missing.join(", ")} on the Domain (from the identity provider's SAML application)`,
          });
        }
      }
      return out;
    },
  }),
  defineRule({
    id: "posthog-domain-verified",
    judgedOn: "stack",
    description:
      "Every organization domain is verified (a DomainVerification for it in the stack; in the audit, PostHog says " +
      "it is verified): an unverified domain's SSO enforcement and automatic provisioning do not apply.",
    config: exemptDomains,
    configSchema: { exemptDomains: stringsSchema },
    check(model, config) {
      return model.domains
        .filter((d) => d.verified === false)
        .filter((d) => d.domain === undefined || !inDomain(d.domain.toLowerCase(), config.exemptDomains))
        .map((d) => ({
          ref: d.ref,
          label: d.label,
          message: `${d.label} is not verified`,
          fix: "verify it: publish the domain's TXT record (the Domain's challengeRecordName and verificationChallenge) and declare a DomainVerification with domainId: <the Domain>.id (or verify it in PostHog's organization settings)",
        }));
    },
  }),
  defineRule({
    id: "posthog-sharing-allow-list",
    judgedOn: "run",
    description:
      "No dashboard is shared publicly (anyone with the link can see it) unless it is in the allow list, by name, " +
      "id or tag.",
    config: z.strictObject({
      allowedDashboards: z
        .array(z.union([z.string().min(1), z.int().positive()]), {
          error: "expected a list of dashboard names or ids",
        })
        .default([]),
      allowedTags: strings.default([]),
    }),
    configSchema: {
      allowedDashboards: {
        type: "array",
        items: { anyOf: [{ type: "string", minLength: 1 }, { type: "integer" }] },
      },
      allowedTags: stringsSchema,
    },
    check(model, config) {
      const out: Finding[] = [];
      const names = config.allowedDashboards.filter((a): a is string => typeof a === "string");
      for (const s of model.sharing) {
        if (s.enabled !== true) continue;
        const d = s.dashboard;
        const id = d?.id ?? s.dashboardId;
        const allowed =
          (id !== undefined && config.allowedDashboards.some((a) => String(a) === String(id))) ||
          (d?.name !== undefined && names.includes(d.name)) ||
          (d?.tags ?? []).some((t) => config.allowedTags.includes(t));
        if (allowed) continue;
        // What could still allow it is unknown (a preview's unknown output): never reported. A dashboard known only
        // by its id (none of the stack's, and nothing recorded its name and tags) is reported: the allow list then
        // has to name its id.
        const ids = config.allowedDashboards.filter((a) => typeof a === "number" || /^\d+$/.test(a));
        const unknownId = id === undefined && ids.length > 0;
        const unknownName = d !== undefined && d.name === undefined && names.length > 0;
        const unknownTags = d !== undefined && d.tags === undefined && config.allowedTags.length > 0;
        if (d === undefined ? id === undefined : unknownId || unknownName || unknownTags) continue;
        const which =
          d?.name !== undefined
            ? `dashboard "${d.name}"`
            : id !== undefined
              ? `dashboard ${id}`
              : "a dashboard";
        out.push({
          ref: s.ref,
          label: s.label,
          message: `${s.label} shares ${which} publicly, and it is not in the allow list`,
          fix:
            d === undefined
              ? `set enabled: false on the sharing, or add its id ${id} to allowedDashboards in the posthog-sharing-allow-list config (a dashboard the program does not declare is known to the policy pack by its id alone)`
              : `set enabled: false on the sharing, or add the dashboard's name to allowedDashboards (or one of its tags to allowedTags) in the posthog-sharing-allow-list config`,
        });
      }
      return out;
    },
  }),
  defineRule({
    id: "posthog-invite-not-owner",
    judgedOn: "resource",
    description: "No invitation grants the owner level: owners are made from existing members, deliberately.",
    config: z.strictObject({}),
    configSchema: {},
    check(model) {
      return model.invites
        .filter((i) => i.level === LEVEL.owner)
        .map((i) => ({
          ref: i.ref,
          label: i.label,
          message: `${i.label} invites at owner level`,
          fix: 'invite at level "member" or "admin"; raise the level once the person joined (a Member)',
        }));
    },
  }),
  defineRule({
    id: "posthog-invite-admin-domains",
    judgedOn: "resource",
    description:
      "Admin-level invitations go only to e-mail addresses of the configured domains (none configured: no admin " +
      "invitation).",
    config: z.strictObject({ adminDomains: strings.default([]) }),
    configSchema: { adminDomains: stringsSchema },
    check(model, config) {
      const out: Finding[] = [];
      for (const i of model.invites) {
        if (i.level !== LEVEL.admin) continue;
        const domain = emailDomain(i.email);
        if (domain === undefined || inDomain(domain, config.adminDomains)) continue;
        out.push({
          ref: i.ref,
          label: i.label,
          message: `${i.label} invites ${i.email} at admin level; admin invitations are allowed for ${config.adminDomains.length > 0 ? config.adminDomains.join(", ") : "no domain"}`,
          fix: 'invite at level "member", or add the domain to adminDomains in the posthog-invite-admin-domains config',
        });
      }
      return out;
    },
  }),
  defineRule({
    id: "posthog-invite-company-domain",
    judgedOn: "resource",
    description:
      "Every invitation goes to an e-mail address of a company domain (not evaluated until companyDomains is " +
      "configured).",
    config: z.strictObject({ companyDomains: strings.default([]) }),
    configSchema: { companyDomains: stringsSchema },
    check(model, config) {
      if (config.companyDomains.length === 0) return [];
      const out: Finding[] = [];
      for (const i of model.invites) {
        const domain = emailDomain(i.email);
        if (domain === undefined || inDomain(domain, config.companyDomains)) continue;
        out.push({
          ref: i.ref,
          label: i.label,
          message: `${i.label} invites ${i.email}, outside the company domains (${config.companyDomains.join(", ")})`,
          fix: "invite the person's company address, or add the domain to companyDomains in the posthog-invite-company-domain config",
        });
      }
      return out;
    },
  }),
  defineRule({
    id: "posthog-max-owners",
    judgedOn: "run",
    description:
      "At most maxOwners members are owners (stack: among the managed Members; audit: in the organization).",
    config: z.strictObject({
      maxOwners: z.int({ error: "expected an integer" }).min(0, { error: "expected 0 or more" }).default(3),
    }),
    configSchema: { maxOwners: { type: "integer", minimum: 0 } },
    check(model, config) {
      const owners = model.members.filter((m) => m.level === LEVEL.owner);
      if (owners.length <= config.maxOwners) return [];
      return owners.map((m) => ({
        ref: m.ref,
        label: m.label,
        message: `${m.label} is one of ${owners.length} owners; at most ${config.maxOwners} are allowed`,
        fix: `lower owners to level "admin" until at most ${config.maxOwners} remain, or raise maxOwners in the posthog-max-owners config`,
      }));
    },
  }),
  defineRule({
    id: "posthog-admin-allow-list",
    judgedOn: "resource",
    description:
      "Only the listed people (e-mail or user UUID) are admins (none listed: nobody is an admin; owners are counted " +
      "by posthog-max-owners).",
    config: z.strictObject({ admins: strings.default([]) }),
    configSchema: { admins: stringsSchema },
    check(model, config) {
      const listed = new Set(config.admins.map((a) => a.toLowerCase()));
      const out: Finding[] = [];
      for (const m of model.members) {
        if (m.level !== LEVEL.admin) continue;
        if (m.email === undefined && m.userUuid === undefined) continue;
        if (listed.has(m.email?.toLowerCase() ?? "") || listed.has(m.userUuid?.toLowerCase() ?? "")) continue;
        out.push({
          ref: m.ref,
          label: m.label,
          message: `${m.label} is an admin and not in the admin allow list`,
          fix: 'set level: "member", or add the person to admins in the posthog-admin-allow-list config',
        });
      }
      return out;
    },
  }),
  defineRule({
    id: "posthog-restricted-dashboards",
    judgedOn: "resource",
    description:
      "Dashboards tagged as restricted can be edited only by their collaborators (restrictionLevel " +
      '"only-collaborators-can-edit"); their collaborators are counted by posthog-restricted-dashboard-collaborators.',
    config: z.strictObject({ tags: restrictedTags }),
    configSchema: { tags: stringsSchema },
    check(model, config) {
      const out: Finding[] = [];
      for (const d of model.dashboards) {
        const tag = d.tags?.find((t) => config.tags.includes(t));
        if (tag === undefined) continue;
        if (d.restrictionLevel !== undefined && d.restrictionLevel !== RESTRICTION.onlyCollaboratorsCanEdit) {
          out.push({
            ref: d.ref,
            label: d.label,
            message: `${d.label} is tagged "${tag}" but everyone in the project can edit it`,
            fix: 'set restrictionLevel: "only-collaborators-can-edit" on the Dashboard',
          });
        }
      }
      return out;
    },
  }),
  defineRule({
    id: "posthog-restricted-dashboard-collaborators",
    judgedOn: "stack",
    description:
      "Dashboards tagged as restricted have at least minCollaborators collaborators (stack: the " +
      "DashboardCollaborators declared for them; audit: their collaborator list).",
    config: z.strictObject({
      tags: restrictedTags,
      minCollaborators: z
        .int({ error: "expected an integer" })
        .min(0, { error: "expected 0 or more" })
        .default(1),
    }),
    configSchema: { tags: stringsSchema, minCollaborators: { type: "integer", minimum: 0 } },
    check(model, config) {
      const out: Finding[] = [];
      for (const d of model.dashboards) {
        const tag = d.tags?.find((t) => config.tags.includes(t));
        if (
          tag === undefined ||
          d.collaborators === undefined ||
          d.collaborators >= config.minCollaborators
        ) {
          continue;
        }
        out.push({
          ref: d.ref,
          label: d.label,
          message: `${d.label} is tagged "${tag}" and has ${d.collaborators} collaborator(s); at least ${config.minCollaborators} required`,
          fix: "add a collaborator: a DashboardCollaborator with dashboardId: <the Dashboard>.id, userUuid and level (or in the dashboard's access settings in PostHog)",
        });
      }
      return out;
    },
  }),
  defineRule({
    id: "posthog-production-exports-unpaused",
    judgedOn: "resource",
    description:
      "In production (production: true in this rule's config, e.g. the production stack's policy config), no batch " +
      "export is left paused: a paused export silently stops the data the company relies on.",
    config: z.strictObject({ production: z.boolean({ error: "expected true or false" }).default(false) }),
    configSchema: { production: { type: "boolean" } },
    check(model, config) {
      if (!config.production) return [];
      return model.exportPauses
        .filter((p) => p.paused === true)
        .map((p) => ({
          ref: p.ref,
          label: p.label,
          message: `${p.label}: a batch export paused in production`,
          fix: "unpause the export (paused: false on its BatchExportPause, or resume it in PostHog); outside production, set production: false in this rule's config",
        }));
    },
  }),
  defineRule({
    id: "posthog-project-timezone",
    judgedOn: "resource",
    description:
      "Every project sets its timezone, so that dashboards and exports cut days where the company does.",
    config: z.strictObject({}),
    configSchema: {},
    check(model) {
      return model.projects
        .filter((p) => p.timezone === null || p.timezone === "")
        .map((p) => ({
          ref: p.ref,
          label: p.label,
          message: `${p.label} sets no timezone`,
          fix: 'set timezone on the Project (an IANA name, e.g. "Europe/Berlin")',
        }));
    },
  }),
  defineRule({
    id: "posthog-project-name-pattern",
    judgedOn: "resource",
    description:
      "Project names match the configured pattern (a regular expression; not evaluated until set).",
    config: z.strictObject({
      namePattern: z
        .string({ error: "expected a regular expression" })
        .superRefine((source, ctx) => {
          // Refused here: neither the audit nor the pack runs a pattern RE2 cannot (governance/pattern.ts).
          const problem = linearPatternProblem(source);
          if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
        })
        .optional(),
    }),
    configSchema: { namePattern: { type: "string" } },
    check(model, config) {
      if (config.namePattern === undefined) return [];
      const matches = linearMatcher(config.namePattern); // compiled once per check, for every project
      return model.projects
        .filter((p) => p.name !== undefined && !matches(p.name))
        .map((p) => ({
          ref: p.ref,
          label: p.label,
          message: `${p.label}'s name does not match ${config.namePattern}`,
          fix: "rename the Project to match namePattern in the posthog-project-name-pattern config",
        }));
    },
  }),
];

/** Every rule id. */
export const RULE_IDS: readonly string[] = RULES.map((r) => r.id);

/** A policy configuration of the wrong shape; the message names the rule and the key. */
export class GovernanceConfigError extends Error {
  override readonly name = "GovernanceConfigError";
}

/** One rule's resolved configuration. */
export interface RuleSettings {
  enforcement: EnforcementLevel;
  config: unknown;
}

/** The configuration of every rule, resolved (defaults applied). */
export type GovernanceConfig = Record<string, RuleSettings>;

const levelSchema = z.enum(ENFORCEMENT_LEVELS);

/**
 * One rule's keys (its configuration entry without `enforcementLevel`), with the rule's defaults.
 * @throws GovernanceConfigError naming the rule and the key: an unknown key with the accepted ones, or the key's
 * problem.
 */
export function parseRuleKeys(rule: Rule, keys: Record<string, unknown>): unknown {
  const parsed = rule.config.safeParse(keys);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue?.code === "unrecognized_keys") {
    const accepted = Object.keys(rule.configSchema);
    throw new GovernanceConfigError(
      `policy config "${rule.id}": unknown key ${issue.keys.map((k) => `"${k}"`).join(", ")}; accepted: enforcementLevel${accepted.map((k) => `, ${k}`).join("")}`,
    );
  }
  throw new GovernanceConfigError(
    `policy config "${rule.id}": ${issue?.path.join(".") ?? ""}: ${issue?.message ?? "invalid"}`,
  );
}

/**
 * Parses the policy configuration (the JSON of `--policy-pack-config`, or `audit --config`): `all` and each rule's
 * entry (an enforcement level, or an object of `enforcementLevel` and the rule's keys). Missing entries take the
 * defaults (advisory, each key's default); `undefined` (no configuration) is every default, but JSON `null`, an
 * array, a number or a string is refused, as is an entry or key of the wrong type.
 * @throws GovernanceConfigError naming the rule (or "all") and the key, with the accepted values, for an unknown
 * rule or key or a value of the wrong shape.
 */
export function parseGovernanceConfig(raw: unknown): GovernanceConfig {
  if (raw === undefined) raw = {};
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    const got = raw === null ? "null" : Array.isArray(raw) ? "an array" : `a ${typeof raw}`;
    throw new GovernanceConfigError(
      `the policy config must be a JSON object of rule ids (${RULE_IDS.join(", ")}) and "all", got ${got}`,
    );
  }
  const entries = raw as Record<string, unknown>;
  for (const key of Object.keys(entries)) {
    if (key !== "all" && !RULE_IDS.includes(key)) {
      throw new GovernanceConfigError(
        `policy config: unknown rule "${key}"; accepted: all, ${RULE_IDS.join(", ")}`,
      );
    }
  }
  let all: EnforcementLevel = "advisory";
  if (entries.all !== undefined) {
    const parsed = levelSchema.safeParse(entries.all);
    if (!parsed.success) {
      throw new GovernanceConfigError(
        `policy config "all": expected one of ${ENFORCEMENT_LEVELS.join(", ")}, got ${JSON.stringify(entries.all)}`,
      );
    }
    all = parsed.data;
  }
  const out: GovernanceConfig = {};
  for (const rule of RULES) {
    let entry = entries[rule.id];
    let enforcement = all;
    if (typeof entry === "string") entry = { enforcementLevel: entry };
    if (entry !== undefined && (typeof entry !== "object" || entry === null || Array.isArray(entry))) {
      throw new GovernanceConfigError(
        `policy config "${rule.id}": expected ${ENFORCEMENT_LEVELS.join(", ")} or an object of enforcementLevel and the rule's keys, got ${JSON.stringify(entry)}`,
      );
    }
    const { enforcementLevel, ...keys } = (entry ?? {}) as Record<string, unknown>;
    if (enforcementLevel !== undefined) {
      const parsed = levelSchema.safeParse(enforcementLevel);
      if (!parsed.success) {
        throw new GovernanceConfigError(
          `policy config "${rule.id}": enforcementLevel: expected one of ${ENFORCEMENT_LEVELS.join(", ")}, got ${JSON.stringify(enforcementLevel)}`,
        );
      }
      enforcement = parsed.data;
    }
    out[rule.id] = { enforcement, config: parseRuleKeys(rule, keys) };
  }
  return out;
}

/**
 * Runs every rule not disabled over `model`: its findings, each with the rule and its enforcement, in rule order.
 * Never throws for the model's content (unknown values are skipped by each rule).
 */
export function evaluate(model: GovModel, config: GovernanceConfig = parseGovernanceConfig({})): Violation[] {
  const out: Violation[] = [];
  for (const rule of RULES) {
    const settings = config[rule.id] ?? { enforcement: "advisory", config: rule.config.parse({}) };
    if (settings.enforcement === "disabled") continue;
    for (const f of rule.check(model, settings.config)) {
      out.push({ ...f, rule: rule.id, enforcement: settings.enforcement });
    }
  }
  return out;
}
