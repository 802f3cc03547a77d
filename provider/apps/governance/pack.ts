/**
 * The governance policy pack (`pulumi preview --policy-pack …/policy/posthog-policy`, and `pulumi up` with the same
 * flag): the rules of provider/apps/governance/rules.ts over the resources of a stack, as `@pulumi/policy` policies. Both
 * resource families are read: the dynamic SDK's (`pulumi-nodejs:dynamic/posthog:<Kind>`) and the provider plugin's
 * (`posthog:index:<Kind>`). A resource's `props` are its inputs after the provider's Check (levels 1/8/15,
 * restriction levels 21/37, and the `_policy` facts a DashboardSharing's check adds: its dashboard's name and tags).
 * A value not known in a preview (reading it throws @pulumi/policy's UnknownValueError) is unknown in the model: no
 * rule reports it.
 *
 * Each rule is one policy, of the kind its `judgedOn` says (rules.ts `JudgedOn`): a resource policy for the
 * rules judged from one resource (`resource`) or from it and the resources the engine registered before it in the
 * same run (`run`: the pack keeps a memory of the run, {@link RunMemory}), which the engine runs before it creates
 * or updates that resource, so a mandatory violation stops the write even under `pulumi up --skip-preview`; a stack
 * policy for the rules that need resources registered later (`stack`), which the engine runs once every resource
 * is registered: after `up` applied them.
 */
import { docsLink, withDocsLink } from "../../client/docs-link";
import {
  type GovDashboard,
  type GovDomain,
  GovernanceConfigError,
  type GovModel,
  parseRuleKeys,
  RULES,
  type Rule,
} from "./rules";

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
 * What the provider's check recorded for the policy pack in a resource's inputs (`_policy`): for a DashboardSharing,
 * its dashboard as this run leaves it (`dashboard`: id, name, tags; a value this run cannot know yet is absent), or, in
 * a preview that cannot know its id, the dashboards the run creates (`candidates`).
 */
interface PolicyFacts {
  dashboard?: { id?: unknown; name?: unknown; tags?: unknown };
  /** A sharing whose dashboard's id is unknown (a preview): the dashboards the run creates (name, tags), one is it. */
  candidates?: unknown;
}

/** The dashboard a DashboardSharing's check recorded (`_policy.dashboard`), as the model's dashboard; else undefined. */
function dashboardFacts(r: StackResource): GovDashboard | undefined {
  const facts = known(() => r.props._policy) as PolicyFacts | undefined;
  const d = facts?.dashboard;
  if (d === undefined || d === null || typeof d !== "object") return undefined;
  const id = typeof d.id === "number" ? d.id : undefined;
  const name = typeof d.name === "string" ? d.name : undefined;
  const tags = Array.isArray(d.tags) ? d.tags.map(String) : undefined;
  return { ref: `dashboard/${id ?? "?"}`, label: `Dashboard "${name ?? id ?? "?"}"`, id, name, tags };
}

/**
 * The model of the rules from a stack's resources: other providers' resources are ignored. A Domain is verified
 * when a DomainVerification takes its `domainId` from it (unknown when a DomainVerification names a domain id
 * literally); a Dashboard's collaborators are the DashboardCollaborators taking their `dashboardId` from it (or
 * naming its adopted id); a sharing's dashboard is the Dashboard its `dashboardId` comes from (a stack policy sees
 * property dependencies), else the adopted Dashboard of that id, else the dashboard the sharing's check recorded
 * (`_policy`), else only its id.
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
  const dashboards = dashboardsOf(of("Dashboard"), of("DashboardCollaborator"));
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
        dashboard: from !== undefined ? dashboards.get(from.urn) : (adopted ?? dashboardFacts(r)),
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

/** The model's dashboards of `resources` (Dashboards), by URN, with the collaborators `collaborators` declare. */
function dashboardsOf(
  resources: readonly StackResource[],
  collaborators: readonly StackResource[],
): Map<string, GovDashboard> {
  const unresolvedCollaborator = collaborators.some(
    (c) =>
      sources(c, "dashboardId").length === 0 &&
      !resources.some(
        (d) => num(d, "dashboardId") !== undefined && num(d, "dashboardId") === num(c, "dashboardId"),
      ),
  );
  const dashboards = new Map<string, GovDashboard>();
  for (const r of resources) {
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
  return dashboards;
}

/**
 * The pack's memory of one run: every posthog resource the engine registered so far, as the resource policies saw
 * it (by URN: a resource analysed again, e.g. by `up` after its own preview in one pack process, replaces itself).
 * One per pack process ({@link policies}); the engine starts the pack for each run and registers a resource only
 * once the resources its inputs come from are registered, so those are in the memory when it is judged.
 */
export interface RunMemory {
  resources: Map<string, StackResource>;
}

/** A new, empty {@link RunMemory}. */
export function newRunMemory(): RunMemory {
  return { resources: new Map() };
}

/** What a resource policy is handed (a subset of @pulumi/policy's ResourceValidationArgs). */
export interface ResourceArgs {
  type: string;
  urn: string;
  name: string;
  props: Record<string, unknown>;
}

/**
 * The findings of `rule` (judged on `resource` or `run`) about the one resource `args`, as a resource policy reports
 * them before the engine writes it: the rule over the model of that resource alone (`resource`) or of it and the
 * resources of the run registered before it (`run`, from `memory`, which this call adds `args` to). A sharing whose
 * dashboard id is unknown (a dashboard this run creates, in a preview) is judged against every dashboard the run
 * creates (its check lists them; else every dashboard registered before it), and reported only when each of them
 * breaks the rule.
 */
export function judgeResource(
  rule: Rule,
  config: unknown,
  args: ResourceArgs,
  memory: RunMemory,
): { message: string; fix: string }[] {
  const kind = posthogKind(args.type);
  if (kind === undefined) return [];
  const self: StackResource = { ...args, propertyDependencies: {} };
  memory.resources.set(args.urn, self);
  const mine = (model: GovModel) => rule.check(model, config).filter((f) => f.ref === args.urn);
  if (rule.judgedOn === "resource") return mine(modelFromResources([self]));
  // The resources of its kind registered before it (the Members before a Member), and a sharing's dashboards.
  const before = [...memory.resources.values()].filter((r) => posthogKind(r.type) === kind);
  const dashboards =
    kind === "DashboardSharing"
      ? [...memory.resources.values()].filter((r) => posthogKind(r.type) === "Dashboard")
      : [];
  if (!dashboardUnknown(self)) return mine(modelFromResources([...before, ...dashboards]));
  // The dashboard's id is unknown: it is one of the dashboards this run creates, which the sharing's check lists
  // (`_policy.candidates`); without that list, any dashboard of the run registered before it.
  const listed = (known(() => self.props._policy) as PolicyFacts | undefined)?.candidates;
  const candidates: StackResource[] = Array.isArray(listed)
    ? listed.map((facts, i) => ({
        type: "posthog:index:Dashboard",
        urn: `${args.urn}::candidate-${i}`,
        name: String((facts as { name?: unknown })?.name ?? `dashboard ${i + 1}`),
        props: { ...(facts as object) },
        propertyDependencies: {},
      }))
    : dashboards;
  if (candidates.length === 0) return [];
  const each = candidates.map((d) =>
    mine(modelFromResources([{ ...self, propertyDependencies: { dashboardId: [d] } }, d])),
  );
  if (each.some((found) => found.length === 0)) return []; // one of them may be allowed: up judges it, knowing the id
  if (candidates.length === 1) return each[0] ?? [];
  const names = candidates.map((d) => `Dashboard "${text(d, "name") ?? d.name}"`).join(", ");
  return [
    {
      message: `DashboardSharing "${args.name}" shares publicly a dashboard this run creates (one of ${names}), and none of them is in the allow list`,
      fix: each[0]?.[0]?.fix ?? "",
    },
  ];
}

/** Whether `r` is a DashboardSharing whose `dashboardId` is not known yet (a preview of a dashboard the run creates). */
function dashboardUnknown(r: StackResource): boolean {
  return (
    posthogKind(r.type) === "DashboardSharing" &&
    "dashboardId" in r.props &&
    known(() => r.props.dashboardId) === undefined &&
    dashboardFacts(r) === undefined
  );
}

/**
 * One rule's configuration from the pack's config (@pulumi/policy's `getConfig()`: the rule's keys, after the
 * CLI checked them against its JSON schema), with the rule's defaults. It is parsed as the rule's entry of
 * `audit --config` is ({@link parseRuleKeys}), so that both name a wrong key or value alike.
 * @throws GovernanceConfigError naming the rule and the key, e.g. `policy config "posthog-max-owners": unknown key
 * "maxOwner"; accepted: enforcementLevel, maxOwners`, ending with the pointer to docs/governance.md's configuration.
 */
export function ruleConfig(rule: Rule, raw: Record<string, unknown>): unknown {
  // The enforcement level is the CLI's to apply (it reads the config file's level itself).
  const { enforcementLevel: _, ...keys } = raw ?? {};
  try {
    return parseRuleKeys(rule, keys);
  } catch (e) {
    if (!(e instanceof GovernanceConfigError)) throw e;
    throw new GovernanceConfigError(withDocsLink(e.message, CONFIG_DOCS));
  }
}

/** Where a preview's wrong policy config points: the configuration's section of the governance page. */
const CONFIG_DOCS = docsLink("governance.md", "the-configuration");

/** One violation as the pack reports it: the finding's message and its fix, in one line. */
const reportLine = (f: { message: string; fix: string }) => `${f.message}. Fix: ${f.fix}`;

/**
 * The policies of the pack, one per rule, advisory unless the config says otherwise: a resource policy for the rules
 * judged on one resource or the run so far (`validateResource`, run before the resource's write), a stack policy
 * for the rest (`validateStack`). One {@link RunMemory} serves the resource policies of this pack process.
 */
export function policies(memory: RunMemory = newRunMemory()) {
  return RULES.map((rule) => {
    const common = {
      name: rule.id,
      description: rule.description,
      enforcementLevel: "advisory" as const,
      configSchema: { properties: rule.configSchema as Record<string, never> },
    };
    if (rule.judgedOn === "stack") {
      return {
        ...common,
        validateStack: (
          args: { resources: StackResource[]; getConfig<T extends object>(): T },
          report: (message: string, urn?: string) => void,
        ) => {
          const config = ruleConfig(rule, args.getConfig<Record<string, unknown>>());
          for (const f of rule.check(modelFromResources(args.resources), config))
            report(reportLine(f), f.ref);
        },
      };
    }
    return {
      ...common,
      validateResource: (
        args: ResourceArgs & { getConfig<T extends object>(): T },
        report: (message: string) => void,
      ) => {
        const config = ruleConfig(rule, args.getConfig<Record<string, unknown>>());
        for (const f of judgeResource(rule, config, args, memory)) report(reportLine(f));
      },
    };
  });
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
