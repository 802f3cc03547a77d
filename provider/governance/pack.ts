/**
 * The governance policy pack (`pulumi preview --policy-pack …/policy/posthog-policy`): the rules of
 * provider/governance/rules.ts over the resources of a stack, as `@pulumi/policy` stack policies. Both resource
 * families are read: the dynamic SDK's (`pulumi-nodejs:dynamic/posthog:<Kind>`) and the provider plugin's
 * (`posthog:index:<Kind>`). A resource's `props` are its inputs after the provider's Check (levels 1/8/15,
 * restriction levels 21/37). A value not known in a preview (reading it throws @pulumi/policy's
 * UnknownValueError) is unknown in the model: no rule reports it.
 */
import { type GovDashboard, type GovDomain, type GovModel, parseRuleKeys, RULES, type Rule } from "./rules";

/** What the pack reads of a resource of the stack (a subset of @pulumi/policy's PolicyResource). */
export interface StackResource {
  type: string;
  urn: string;
  name: string;
  props: Record<string, unknown>;
  propertyDependencies: Record<string, StackResource[]>;
}

/** The posthog resource kind of a type token of either family, or undefined for another provider's. */
export function posthogKind(type: string): string | undefined {
  return /^(?:pulumi-nodejs:dynamic\/posthog|posthog:index):([A-Za-z]+)$/.exec(type)?.[1];
}

/** `read()` of a value that may be unknown in a preview: undefined when reading it throws (an unknown). */
function known<T>(read: () => T): T | undefined {
  try {
    const v = read();
    // Touch arrays' items: an unknown item throws too.
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) void v[i];
    return v;
  } catch (e) {
    // @pulumi/policy's UnknownValueError (an internal class; its name is plain "Error"): told by its message.
    if (e instanceof Error && /can't be known during preview/.test(e.message)) return undefined;
    throw e;
  }
}

/** A string input: its value; null when unset or ""; undefined when unknown. */
function text(r: StackResource, key: string): string | null | undefined {
  if (!(key in r.props)) return null;
  const v = known(() => r.props[key]);
  if (v === undefined) return undefined;
  if (v === null || v === "") return null;
  return typeof v === "string" ? v : String(v);
}

/** A number input (a numeric string counts): its value, or undefined when unset, unknown or not a number. */
function num(r: StackResource, key: string): number | undefined {
  const v = known(() => r.props[key]);
  if (typeof v === "number") return v;
  if (typeof v === "string" && /^\d+$/.test(v)) return Number(v);
  return undefined;
}

/** A boolean input, or undefined when unset or unknown. */
function bool(r: StackResource, key: string): boolean | undefined {
  const v = known(() => r.props[key]);
  return typeof v === "boolean" ? v : undefined;
}

/** The resources `r`'s property `key` was computed from (e.g. the Dashboard a sharing's `dashboardId` is of). */
function sources(r: StackResource, key: string): StackResource[] {
  return r.propertyDependencies?.[key] ?? [];
}

/**
 * The model of the rules from a stack's resources: other providers' resources are ignored. A Domain is verified
 * when a DomainVerification takes its `domainId` from it (unknown when a DomainVerification names a domain id
 * literally); a Dashboard's collaborators are the DashboardCollaborators taking their `dashboardId` from it (or
 * naming its adopted id); a sharing's dashboard is the Dashboard its `dashboardId` comes from.
 */
export function modelFromResources(resources: readonly StackResource[]): GovModel {
  const of = (kind: string) => resources.filter((r) => posthogKind(r.type) === kind);
  const verifications = of("DomainVerification");
  const literalVerification = verifications.some((v) => sources(v, "domainId").length === 0);
  const domains: GovDomain[] = of("Domain").map((r) => {
    const domain = text(r, "domain") ?? undefined;
    const verified = verifications.some((v) => sources(v, "domainId").some((s) => s.urn === r.urn));
    return {
      ref: r.urn,
      label: `Domain "${domain ?? r.name}"`,
      domain,
      ssoEnforcement: text(r, "ssoEnforcement"),
      samlEntityId: text(r, "samlEntityId"),
      samlAcsUrl: text(r, "samlAcsUrl"),
      samlX509Cert: text(r, "samlX509Cert"),
      verified: verified ? true : literalVerification ? undefined : false,
    };
  });
  const collaborators = of("DashboardCollaborator");
  const dashboardResources = of("Dashboard");
  const unresolvedCollaborator = collaborators.some(
    (c) =>
      sources(c, "dashboardId").length === 0 &&
      !dashboardResources.some(
        (d) => num(d, "dashboardId") !== undefined && num(d, "dashboardId") === num(c, "dashboardId"),
      ),
  );
  const dashboards = new Map<string, GovDashboard>();
  for (const r of dashboardResources) {
    const id = num(r, "dashboardId");
    const name = text(r, "name") ?? undefined;
    const tags = known(() => r.props.tags);
    const count = collaborators.filter(
      (c) =>
        sources(c, "dashboardId").some((s) => s.urn === r.urn) ||
        (id !== undefined && sources(c, "dashboardId").length === 0 && num(c, "dashboardId") === id),
    ).length;
    dashboards.set(r.urn, {
      ref: r.urn,
      label: `Dashboard "${name ?? r.name}"`,
      id,
      name,
      // No tags input: none. An unknown list: unknown.
      tags: Array.isArray(tags) ? tags.map(String) : "tags" in r.props && tags === undefined ? undefined : [],
      restrictionLevel: num(r, "restrictionLevel"),
      collaborators: count === 0 && unresolvedCollaborator ? undefined : count,
    });
  }
  return {
    domains,
    invites: of("Invite").map((r) => {
      const email = text(r, "targetEmail") ?? undefined;
      return { ref: r.urn, label: `Invite "${email ?? r.name}"`, email, level: num(r, "level") };
    }),
    members: of("Member").map((r) => {
      const email = text(r, "email") ?? undefined;
      const userUuid = text(r, "userUuid") ?? undefined;
      return {
        ref: r.urn,
        label: `Member "${email ?? userUuid ?? r.name}"`,
        email,
        userUuid,
        level: num(r, "level"),
      };
    }),
    dashboards: [...dashboards.values()],
    sharing: of("DashboardSharing").map((r) => {
      const from = sources(r, "dashboardId").find((s) => dashboards.has(s.urn));
      const dashboardId = from === undefined ? num(r, "dashboardId") : undefined;
      const adopted =
        dashboardId === undefined ? undefined : [...dashboards.values()].find((d) => d.id === dashboardId);
      return {
        ref: r.urn,
        label: `DashboardSharing "${r.name}"`,
        enabled: bool(r, "enabled"),
        dashboard: from !== undefined ? dashboards.get(from.urn) : adopted,
        dashboardId,
      };
    }),
    exportPauses: of("BatchExportPause").map((r) => ({
      ref: r.urn,
      label: `BatchExportPause "${r.name}"`,
      batchExportId: text(r, "batchExportId") ?? undefined,
      paused: bool(r, "paused"),
    })),
    projects: of("Project").map((r) => {
      const name = text(r, "name") ?? undefined;
      return { ref: r.urn, label: `Project "${name ?? r.name}"`, name, timezone: text(r, "timezone") };
    }),
  };
}

/**
 * One rule's configuration from the pack's config (@pulumi/policy's `getConfig()`: the rule's keys, after the
 * CLI checked them against its JSON schema), with the rule's defaults. It is parsed as the rule's entry of
 * `audit --config` is ({@link parseRuleKeys}), so that both name a wrong key or value alike.
 * @throws GovernanceConfigError naming the rule and the key, e.g. `policy config "posthog-max-owners": unknown key
 * "maxOwner"; accepted: enforcementLevel, maxOwners`.
 */
export function ruleConfig(rule: Rule, raw: Record<string, unknown>): unknown {
  // The enforcement level is the CLI's to apply (it reads the config file's level itself).
  const { enforcementLevel: _, ...keys } = raw ?? {};
  return parseRuleKeys(rule, keys);
}

/** The policies of the pack: one stack policy per rule, advisory unless the config says otherwise. */
export function policies() {
  return RULES.map((rule) => ({
    name: rule.id,
    description: rule.description,
    enforcementLevel: "advisory" as const,
    configSchema: { properties: rule.configSchema as Record<string, never> },
    validateStack: (
      args: { resources: StackResource[]; getConfig<T extends object>(): T },
      report: (message: string, urn?: string) => void,
    ) => {
      const config = ruleConfig(rule, args.getConfig<Record<string, unknown>>());
      for (const f of rule.check(modelFromResources(args.resources), config)) {
        report(`${f.message}. Fix: ${f.fix}`, f.ref);
      }
    },
  }));
}

/**
 * Serves the pack to the Pulumi CLI (policy/index.js calls it, the working directory policy/: the PolicyPack reads
 * its version from `./package.json`, which is the package's version). Prints the gRPC port on stdout, as the CLI
 * expects.
 * @throws Error naming `npm install --save-dev @pulumi/policy` when @pulumi/policy is not installed.
 */
export function servePolicyPack(): void {
  let policy: typeof import("@pulumi/policy");
  try {
    policy = require("@pulumi/policy") as typeof import("@pulumi/policy");
  } catch (e) {
    throw new Error(
      `the posthog policy pack needs @pulumi/policy beside pulumi-posthog: run \`npm install --save-dev @pulumi/policy\` in the project (${(e as Error).message.split("\n")[0]})`,
    );
  }
  new policy.PolicyPack("posthog-governance", {
    enforcementLevel: "advisory",
    policies: policies() as never,
  });
}
