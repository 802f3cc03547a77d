import { describe, expect, it } from "vitest";
import { type TestEmulator, useEmulator, withEmulator } from "../support/emulator";

// Issue 49, item 11: the organization list and retrieve (`GET /api/organizations/`, `GET /api/organizations/:id/`,
// `@current`) as PostHog serves them (posthog/api/organization.py), so that a client resolving `@current` or a slug
// before every organization path, as PostHog's Go API client does (PostHog/terraform-provider-posthog,
// internal/httpclient/organization.go `ResolveOrganizationID`), gets on to members, projects and dashboards.

const emu = useEmulator();

const errorShape = (type: string, code: string, detail: string, attr: string | null = null) => ({
  type,
  code,
  detail,
  attr,
});
const notFound = (detail = "Not found.") => errorShape("invalid_request", "not_found", detail);
const forbidden = (detail: string) => errorShape("authentication_error", "permission_denied", detail);

/** The fields of PostHog's `OrganizationSerializer` (and of the OpenAPI `Organization`). */
const ORGANIZATION_FIELDS =
  `id name slug logo_media_id created_at updated_at membership_level plugins_access_level
  teams projects available_product_features is_member_join_email_enabled metadata customer_id enforce_2fa
  members_can_invite members_can_use_personal_api_keys allow_publicly_shared_resources member_count
  is_ai_data_processing_approved default_experiment_stats_method default_anonymize_ips default_role_id is_active
  is_not_active_reason`
    .split(/\s+/)
    .sort();

const featureKeys = (org: { available_product_features: { key: string }[] }) =>
  org.available_product_features.map((f) => f.key);

describe("GET /api/organizations/ and /api/organizations/:id/", () => {
  it("lists the key's organization as one paginated page with the Organization fields", async () => {
    const e = emu();
    for (const path of ["/api/organizations/", "/api/organizations"]) {
      const list = await e.call("GET", path);
      expect(list.status).toBe(200);
      expect(Object.keys(list.body).sort()).toEqual(["count", "next", "previous", "results"]);
      expect(list.body).toMatchObject({ count: 1, next: null, previous: null });
      expect(list.body.results).toHaveLength(1);
    }
    const org = (await e.call("GET", "/api/organizations/")).body.results[0];
    expect(Object.keys(org).sort()).toEqual(ORGANIZATION_FIELDS);
    const members = (await e.call("GET", `${e.org}/members/`)).body;
    const project = (await e.call("GET", `${e.org}/projects/${e.projectId}/`)).body;
    expect(org).toMatchObject({
      id: e.organizationId,
      name: "Emulated Organization",
      slug: "emulated-organization",
      membership_level: 15,
      member_count: members.count,
      allow_publicly_shared_resources: true,
      metadata: { instance_tag: "none" },
      customer_id: null,
      is_active: true,
    });
    expect(org.updated_at).toBe(org.created_at);
    expect(new Date(org.created_at).toISOString()).toBe(org.created_at);
    expect(org.projects).toEqual([
      { id: e.projectId, organization_id: e.organizationId, name: project.name },
    ]);
    expect(org.teams).toEqual([
      {
        id: e.projectId,
        uuid: project.uuid,
        organization: e.organizationId,
        project_id: e.projectId,
        api_token: project.api_token,
        name: project.name,
        completed_snippet_onboarding: project.completed_snippet_onboarding,
        has_completed_onboarding_for: project.has_completed_onboarding_for,
        ingested_event: false,
        is_demo: project.is_demo,
        timezone: project.timezone,
        access_control: project.access_control,
      },
    ]);
    expect(featureKeys(org)).toEqual(
      expect.arrayContaining(["advanced_permissions", "organizations_projects", "tagging"]),
    );
    // Pagination as on every PostHog list: past the end an empty page with a link back.
    const past = await e.call("GET", "/api/organizations/?limit=1&offset=1");
    expect(past.body).toMatchObject({ count: 1, next: null, results: [] });
    expect(past.body.previous).toBe(`${e.url}/api/organizations/?limit=1`);
  });

  it("retrieves it by id and by @current, with the acting member's level", async () => {
    const e = emu();
    const listed = (await e.call("GET", "/api/organizations/")).body.results[0];
    for (const id of [e.organizationId, "@current"]) {
      const one = await e.call("GET", `/api/organizations/${id}/`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(listed);
      expect((await e.call("GET", `/api/organizations/${id}`)).body).toEqual(listed);
    }
    const mia = await e.createKey({ userEmail: "mia.member@example.com", scopes: ["organization:read"] });
    expect((await e.call("GET", "/api/organizations/@current/", { key: mia })).body.membership_level).toBe(1);
  });

  it("follows the projects and members it counts", async () => {
    const e = emu();
    const created = await e.call("POST", `${e.org}/projects/`, { body: { name: "Listed" } });
    expect(created.status).toBe(201);
    const org = (await e.call("GET", "/api/organizations/@current/")).body;
    expect(org.projects.map((p: { name: string }) => p.name)).toContain("Listed");
    expect(org.teams.find((t: { id: number }) => t.id === created.body.id)?.project_id).toBe(created.body.id);
    expect(org.member_count).toBe((await e.call("GET", `${e.org}/members/`)).body.count);
    expect((await e.call("DELETE", `${e.org}/projects/${created.body.id}/`)).status).toBe(204);
  });

  it("answers PostHog's errors: 401, unknown ids 404, the scope, keys limited to other organizations or to projects", async () => {
    const e = emu();
    for (const path of ["/api/organizations/", "/api/organizations/@current/", `${e.org}/`]) {
      const none = await e.call("GET", path, { key: null });
      expect(none.status).toBe(401);
      expect(none.body).toEqual(
        errorShape(
          "authentication_error",
          "not_authenticated",
          "Authentication credentials were not provided.",
        ),
      );
      expect((await e.call("GET", path, { key: "phx_not_a_key_of_this_emulator" })).body.code).toBe(
        "authentication_failed",
      );
    }
    // Unknown ids, a slug in place of the id (PostHog looks up by UUID only) and a near miss.
    for (const id of ["00000000-0000-4000-8000-000000000000", "emulated-organization", "current", "@me"]) {
      const res = await e.call("GET", `/api/organizations/${id}/`);
      expect(res.status, id).toBe(404);
      expect(res.body, id).toEqual(notFound());
    }
    const noScope = await e.createKey({ scopes: ["project:read"] });
    for (const path of ["/api/organizations/", "/api/organizations/@current/"]) {
      const res = await e.call("GET", path, { key: noScope });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(forbidden("API key missing required scope 'organization:read'"));
    }
    const write = await e.createKey({ scopes: ["organization:write"] });
    expect((await e.call("GET", "/api/organizations/@current/", { key: write })).status).toBe(200);
    // A key limited to another organization sees none of this one: not listed, 404 by id, 403 for @current.
    const other = await e.createKey({
      scopes: ["*"],
      organizations: ["0d1b8f2e-6c3a-4e5f-9a7b-2c8d0e1f3a5c"],
    });
    expect((await e.call("GET", "/api/organizations/", { key: other })).body).toMatchObject({
      count: 0,
      results: [],
    });
    expect((await e.call("GET", `${e.org}/`, { key: other })).body).toEqual(notFound());
    const current = await e.call("GET", "/api/organizations/@current/", { key: other });
    expect(current.status).toBe(403);
    expect(current.body).toEqual(
      forbidden(`API key does not have access to the requested organization: ID ${e.organizationId}.`),
    );
    const projectKey = await e.createKey({ scopes: ["*"], projects: [e.projectId] });
    expect((await e.call("GET", "/api/organizations/", { key: projectKey })).body).toEqual(
      forbidden("API keys with scoped projects are only supported on project-based endpoints."),
    );
    // Only list and retrieve are served.
    expect((await e.call("POST", "/api/organizations/", { body: { name: "Second" } })).status).toBe(405);
    const patch = await e.call("PATCH", `${e.org}/`, { body: { name: "Renamed" } });
    expect(patch.body).toEqual(
      errorShape("invalid_request", "method_not_allowed", 'Method "PATCH" not allowed.'),
    );
    expect((await e.call("DELETE", "/api/organizations/@current/")).status).toBe(405);
    expect((await e.call("GET", "/api/organizations/@current/")).body.name).toBe("Emulated Organization");
  });

  it("a key whose user left the organization lists none and finds none, as PostHog answers", async () => {
    await withEmulator(async (e) => {
      const max = await e.createKey({ userEmail: "max.member@example.com" });
      const uuid = (await e.call("GET", `${e.org}/members/`)).body.results.find(
        (m: { user: { email: string } }) => m.user.email === "max.member@example.com",
      ).user.uuid;
      expect((await e.call("DELETE", `${e.org}/members/${uuid}/`)).status).toBe(204);
      expect((await e.call("GET", "/api/organizations/", { key: max })).body).toEqual({
        count: 0,
        next: null,
        previous: null,
        results: [],
      });
      const current = await e.call("GET", "/api/organizations/@current/", { key: max });
      expect(current.status).toBe(404);
      expect(current.body).toEqual(notFound("Current organization not found."));
      expect((await e.call("GET", `${e.org}/`, { key: max })).body).toEqual(notFound());
      // The organization's own paths refuse the former member, as before.
      expect((await e.call("GET", `${e.org}/members/`, { key: max })).status).toBe(403);
    });
  });

  it("without paid features: only the features the emulator then allows, and no public sharing", async () => {
    await withEmulator(
      async (e) => {
        const org = (await e.call("GET", "/api/organizations/@current/")).body;
        expect(featureKeys(org)).not.toContain("advanced_permissions");
        expect(featureKeys(org)).not.toContain("tagging");
        expect(featureKeys(org)).not.toContain("organizations_projects");
        expect(org.allow_publicly_shared_resources).toBe(false);
      },
      { paidFeatures: false },
    );
  });
});

/**
 * What PostHog's Go API client does (internal/httpclient/client.go and organization.go of
 * PostHog/terraform-provider-posthog), spelled out over real HTTP: a `doGet` of the host plus a path, a `listAll`
 * that follows each page's `next` by its path and query on the same host, and `ResolveOrganizationID` (a UUID as
 * it is; `@current` by `GET /api/organizations/@current/`; otherwise a slug, by listing organizations).
 */
const goClient = (e: TestEmulator, key: string) => {
  const doRequest = async (method: string, path: string, body?: unknown) => {
    const res = await e.call(method, `${e.url}${path}`, { key, ...(body === undefined ? {} : { body }) });
    if (res.status < 200 || res.status >= 300)
      throw new Error(`API error (status ${res.status}): ${res.text}`);
    return res.body;
  };
  const listAll = async <T>(initial: string): Promise<T[]> => {
    const all: T[] = [];
    for (let path = initial; path !== ""; ) {
      const page = (await doRequest("GET", path)) as { results: T[]; next?: string | null };
      all.push(...page.results);
      if (!page.next) break;
      const next = new URL(page.next);
      path = next.pathname + next.search;
    }
    return all;
  };
  const resolve = async (idOrSlug: string): Promise<string> => {
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrSlug)) return idOrSlug;
    if (idOrSlug === "@current")
      return ((await doRequest("GET", "/api/organizations/@current/")) as { id: string }).id;
    const orgs = await listAll<{ id: string; slug: string }>("/api/organizations/?limit=1");
    const found = orgs.find((o) => o.slug === idOrSlug);
    if (!found) throw new Error(`no organization found matching slug "${idOrSlug}"`);
    return found.id;
  };
  return { doRequest, listAll, resolve };
};

describe("a client that resolves the organization first (PostHog's Go API client)", () => {
  it("resolves @current and the slug to the id, then manages members, projects and dashboards with it", async () => {
    await withEmulator(async (e) => {
      // A scoped key with what the flow needs, as a Terraform user would make one.
      const key = await e.createKey({
        scopes: ["organization:read", "organization_member:write", "project:write", "dashboard:write"],
      });
      const go = goClient(e, key);
      const id = await go.resolve("@current");
      expect(id).toBe(e.organizationId);
      expect(await go.resolve("emulated-organization")).toBe(id);
      expect(await go.resolve(id)).toBe(id);
      await expect(go.resolve("no-such-slug")).rejects.toThrow(
        'no organization found matching slug "no-such-slug"',
      );

      // Members: listed page by page (the client follows `next`), one level changed.
      const members = await go.listAll<{ user: { uuid: string; email: string }; level: number }>(
        `/api/organizations/${id}/members/?limit=2`,
      );
      expect(members.map((m) => m.user.email).sort()).toEqual([
        "adam.admin@example.com",
        "max.member@example.com",
        "mia.member@example.com",
        "olivia.owner@example.com",
      ]);
      const mia = members.find((m) => m.user.email === "mia.member@example.com");
      const patched = (await go.doRequest("PATCH", `/api/organizations/${id}/members/${mia?.user.uuid}/`, {
        level: 8,
      })) as { level: number };
      expect(patched.level).toBe(8);

      // Projects: create, read, update.
      const project = (await go.doRequest("POST", `/api/organizations/${id}/projects/`, {
        name: "Terraform project",
        timezone: "Europe/Paris",
      })) as { id: number; organization: string; timezone: string };
      expect(project).toMatchObject({ organization: id, timezone: "Europe/Paris" });
      const read = (await go.doRequest("GET", `/api/organizations/${id}/projects/${project.id}/`)) as {
        name: string;
      };
      expect(read.name).toBe("Terraform project");
      await go.doRequest("PATCH", `/api/organizations/${id}/projects/${project.id}/`, { name: "Renamed" });
      const org = (await go.doRequest("GET", `/api/organizations/${id}/`)) as {
        projects: { name: string }[];
      };
      expect(org.projects.map((p) => p.name)).toContain("Renamed");

      // Dashboards of that project: create, read, update, soft delete.
      const dashboards = `/api/projects/${project.id}/dashboards/`;
      const dashboard = (await go.doRequest("POST", dashboards, { name: "KPIs" })) as { id: number };
      expect(((await go.doRequest("GET", `${dashboards}${dashboard.id}/`)) as { name: string }).name).toBe(
        "KPIs",
      );
      await go.doRequest("PATCH", `${dashboards}${dashboard.id}/`, { name: "KPIs v2" });
      await go.doRequest("PATCH", `${dashboards}${dashboard.id}/`, { deleted: true });
      expect(await go.listAll(dashboards)).toEqual([]);

      // The organization paths take `@current` as well (api-behaviour.md §0.1).
      const viaCurrent = await go.listAll<{ name: string }>("/api/organizations/@current/projects/");
      expect(viaCurrent.map((p) => p.name)).toContain("Renamed");
    });
  });
});
