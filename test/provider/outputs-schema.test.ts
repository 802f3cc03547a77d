/**
 * Issue 35: each resource's `<Name>OutputsSchema` (provider/resources/<kebab>.ts) is what schema.json's `properties`
 * and `required`, the SDK classes' output declarations and the docs' outputs tables come from. These run every
 * resource through the real dynamic-provider host over gRPC against the emulator (create, refresh, update where
 * there is one), and through the provider plugin's own `read` of `pulumi import`, and parse every outputs object
 * with its schema: an output the schema says is always set (required) that the provider returns missing or null, a
 * value of another type, or an output the schema does not declare, fails naming the resource and the property.
 */
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { pluginProvider, reveal, typeToken } from "../../provider/adapters/plugin/index";
import * as resources from "../../provider/index";
import type { ProviderHost } from "../../tools/provider-host";
import {
  create,
  type Managed,
  refresh,
  stackConfigOf,
  type TestEmulator,
  update,
  useProviderHost,
} from "./harness";

let emu: TestEmulator;
let host: ProviderHost;

useProviderHost((e, h) => {
  emu = e;
  host = h;
});

const MIA = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03", email: "mia.member@example.com" };

/**
 * What the providers record for themselves, not outputs of the package schema (`_policy`: the policy pack's facts a
 * DashboardSharing's check recorded, kept for a refresh: provider/framework/policy-facts.ts).
 */
const BOOKKEEPING = new Set(["__provider", "__inputs", "_policy", "adopted", "identifiedBy"]);

/** The outputs schema of resource `name`. */
function outputsSchema(name: string): z.ZodObject {
  return (resources as unknown as Record<string, z.ZodObject>)[`${name}OutputsSchema`] as z.ZodObject;
}

/**
 * The problems of outputs `outs` of resource `name` (what `when` did) against its OutputsSchema: each issue of the
 * parse, named by its property, and each output the schema does not declare.
 */
function problems(name: string, when: string, outs: Record<string, unknown>): string[] {
  const schema = outputsSchema(name);
  const plain = Object.fromEntries(
    Object.entries(reveal(outs) as Record<string, unknown>).filter(([k]) => !BOOKKEEPING.has(k)),
  );
  const parsed = schema.safeParse(plain);
  const issues = parsed.success
    ? []
    : parsed.error.issues.map((i) => `${name}.${i.path.join(".")} (${when}): ${i.message}`);
  const undeclared = Object.keys(plain)
    .filter((k) => !(k in schema.shape))
    .map((k) => `${name}.${k} (${when}): returned, but not in ${name}OutputsSchema`);
  return [...issues, ...undeclared];
}

describe("every resource's outputs match its OutputsSchema (schema.json's properties and required)", () => {
  const made: Managed[] = [];
  const found: string[] = [];
  const check = (r: Managed, when: string) => found.push(...problems(r.name, when, r.outs));

  it("create, refresh and update return what the schemas declare, required outputs set", async () => {
    const project = await create(host, "Project", "outputs-web", { name: "Outputs web" });
    const dashboard = await create(host, "Dashboard", "outputs-kpis", {
      name: "Outputs KPIs",
      restrictionLevel: 37,
    });
    const fromTemplate = await create(host, "Dashboard", "outputs-template", {
      name: "Outputs template",
      useTemplate: "DEFAULT_APP",
    });
    const sharing = await create(host, "DashboardSharing", "outputs-sharing", {
      dashboardId: dashboard.id,
    });
    const collaborator = await create(host, "DashboardCollaborator", "outputs-mia", {
      dashboardId: dashboard.id,
      userUuid: MIA.uuid,
    });
    const domain = await create(host, "Domain", "outputs-domain", { domain: "outputs.example.com" });
    await emu.control("POST", "/dns", {
      name: "_posthog-challenge.outputs.example.com",
      txt: domain.outs.verificationChallenge,
    });
    const verification = await create(host, "DomainVerification", "outputs-domain", {
      domainId: domain.id,
      timeoutSeconds: 5,
    });
    const invite = await create(host, "Invite", "outputs-invite", {
      targetEmail: "outputs@example.com",
      privateProjectAccess: [{ id: project.id, level: "member" }],
    });
    const member = await create(host, "Member", "outputs-mia", { email: MIA.email, level: 8 });
    const exports = (await emu.api("GET", `/api/organizations/${emu.organizationId}/batch_exports/`))
      .body as {
      results: { id: string }[];
    };
    const pause = await create(host, "BatchExportPause", "outputs-pause", {
      batchExportId: exports.results[0]?.id,
    });
    made.push(
      project,
      dashboard,
      fromTemplate,
      sharing,
      collaborator,
      domain,
      verification,
      invite,
      member,
      pause,
    );
    // every resource, so a new one cannot be left out
    expect(new Set(made.map((r) => r.name))).toEqual(new Set(resources.resourceNames));
    for (const r of made) check(r, "create");
    for (const r of made) check(await refresh(host, r), "refresh");
    check(await update(host, project, { name: "Outputs web 2" }), "update");
    check(await update(host, dashboard, { name: "Outputs KPIs 2", restrictionLevel: 37 }), "update");
    check(await update(host, sharing, { dashboardId: dashboard.id, enabled: false }), "update");
    check(await update(host, member, { email: MIA.email, level: 1 }), "update");
    check(await update(host, pause, { batchExportId: pause.id, paused: false }), "update");
    expect(found).toEqual([]);
  }, 120_000);

  it("`pulumi import`'s read through the plugin returns what the schemas declare", async () => {
    expect(made.length).toBeGreaterThan(0);
    found.length = 0;
    const plugin = pluginProvider();
    await plugin.configure({
      get: (k) => stackConfigOf(emu)[k],
    });
    const project = String(emu.projectId);
    // Import ids: <projectId>/<dashboardId>(/<userUuid>) for what lives in a project (its card's form says so),
    // else the resource id.
    const inProject = (name: string) =>
      resources.resourceOf(name)?.card.importId.form.startsWith("<projectId>/") === true;
    const importId = (r: Managed) => (inProject(r.name) ? `${project}/${r.id}` : r.id);
    for (const r of made) {
      const read = await plugin.read?.(
        importId(r),
        `urn:pulumi:test::outputs::${typeToken(r.name)}::${r.name}`,
        {},
      );
      expect(read?.id, `${r.name} imported`).toBeTruthy();
      found.push(...problems(r.name, "import", (read?.props ?? {}) as Record<string, unknown>));
    }
    expect(found).toEqual([]);
  }, 60_000);

  it("names the resource and the property when a required output is missing or null (the check is not blind)", () => {
    expect(problems("Dashboard", "create", { name: "x" })).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Dashboard\.projectId \(create\): /)]),
    );
    const outs = {
      domain: "a.example.com",
      jitProvisioningEnabled: false,
      ssoEnforcement: "",
      samlEntityId: "",
      samlAcsUrl: "",
      samlX509Cert: "",
      adopt: false,
      isVerified: true,
      verifiedAt: null,
      verificationChallenge: "c",
      challengeRecordName: "_posthog-challenge.a.example.com",
      hasSaml: false,
      pendingSettings: null,
    };
    expect(problems("Domain", "read", outs)).toEqual([]);
    expect(problems("Domain", "read", { ...outs, isVerified: null })).toEqual([
      expect.stringMatching(/^Domain\.isVerified \(read\): /),
    ]);
    expect(problems("Domain", "read", { ...outs, surprise: 1 })).toEqual([
      "Domain.surprise (read): returned, but not in DomainOutputsSchema",
    ]);
  });
});
