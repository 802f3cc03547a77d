import { request } from "undici";
import { describe, expect, it } from "vitest";
import { useEmulator, withEmulator } from "../support/emulator";

const emu = useEmulator();

const shape = (type: string, code: string, detail: string, attr: string | null = null) => ({
  type,
  code,
  detail,
  attr,
});

describe("routing and error shapes", () => {
  it("accepts paths with and without the trailing slash", async () => {
    const e = emu();
    expect((await e.call("GET", `${e.org}/members/`)).status).toBe(200);
    expect((await e.call("GET", `${e.org}/members`)).status).toBe(200);
    expect((await e.call("GET", `${e.project}/dashboards`)).status).toBe(200);
  });

  it("answers unknown routes 404 and wrong methods 405, with the error shape", async () => {
    const e = emu();
    const unknown = await e.call("GET", "/api/nothing/here/");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(shape("invalid_request", "not_found", "Endpoint not found."));
    const wrong = await e.call("PUT", `${e.org}/members/`);
    expect(wrong.status).toBe(405);
    expect(wrong.body).toEqual(shape("invalid_request", "method_not_allowed", 'Method "PUT" not allowed.'));
    expect((await e.call("DELETE", `${e.org}/domains/`)).body.code).toBe("method_not_allowed");
    // Authentication comes first, as in the real service.
    expect((await e.call("PUT", `${e.org}/members/`, { key: null })).status).toBe(401);
  });

  it("rejects malformed JSON, non-JSON media types and oversized bodies with 4xx shapes; keeps serving", async () => {
    const e = emu();
    const url = `${e.org}/domains/`;
    const malformed = await e.call("POST", url, { raw: '{"domain": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ type: "invalid_request", code: "parse_error", attr: null });
    expect(malformed.body.detail).toMatch(/^JSON parse error/);
    const media = await e.call("POST", url, {
      raw: "domain=x.com",
      headers: { "content-type": "text/plain" },
    });
    expect(media.status).toBe(415);
    expect(media.body).toMatchObject({ type: "invalid_request", code: "unsupported_media_type", attr: null });
    const big = await e.call("POST", url, { body: { domain: "a.com", pad: "x".repeat(1024 * 1024 + 10) } });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ type: "invalid_request", code: "request_too_large", attr: null });
    // A prototype key is refused, not dropped (test/emulator/reserved-keys.test.ts has the rest).
    const proto = await e.call("POST", url, {
      raw: '{"__proto__": {"domain": "evil.com"}, "domain": "proto.com"}',
    });
    expect(proto.status).toBe(400);
    expect(proto.body).toMatchObject({ type: "validation_error", code: "invalid_input", attr: "__proto__" });
    const charset = await e.call("POST", url, {
      raw: JSON.stringify({ domain: "charset.example.com" }),
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    expect(charset.status).toBe(201);
    const scalar = await e.call("POST", url, { body: "just a string" });
    expect(scalar.body).toEqual(
      shape("validation_error", "invalid_input", "Invalid data. Expected a dictionary, but got str."),
    );
    expect((await e.call("GET", `${e.org}/members/`)).status).toBe(200);
  });

  it("resolves @current and refuses non-integer or unknown project ids with 'Project not found.'", async () => {
    const e = emu();
    expect((await e.call("GET", "/api/organizations/@current/members/")).status).toBe(200);
    expect((await e.call("GET", "/api/projects/@current/dashboards/")).status).toBe(200);
    for (const id of ["abc", "12.5", "999999"]) {
      const res = await e.call("GET", `/api/projects/${id}/dashboards/`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(shape("invalid_request", "not_found", "Project not found."));
    }
    const org = await e.call("GET", "/api/organizations/00000000-0000-4000-8000-000000000000/members/");
    expect(org.body).toEqual(shape("invalid_request", "not_found", "Organization not found."));
  });
});

describe("pagination", () => {
  it("uses limit/offset with absolute next/previous URLs built like the real service", async () => {
    await withEmulator(async (e) => {
      for (let i = 0; i < 5; i++)
        await e.call("POST", `${e.project}/dashboards/`, { body: { name: `D${i}` } });
      const base = `${e.url}${e.project}/dashboards/`;
      const first = await e.call("GET", `${e.project}/dashboards/?limit=2`);
      expect(first.body.count).toBe(5);
      expect(first.body.results).toHaveLength(2);
      expect(first.body.previous).toBeNull();
      expect(first.body.next).toBe(`${base}?limit=2&offset=2`);
      const second = await e.call("GET", first.body.next);
      expect(second.body.results.map((d: { name: string }) => d.name)).toEqual(["D2", "D3"]);
      expect(second.body.previous).toBe(`${base}?limit=2`);
      const third = await e.call("GET", second.body.next);
      expect(third.body.results).toHaveLength(1);
      expect(third.body.next).toBeNull();
      expect(third.body.previous).toBe(`${base}?limit=2&offset=2`);
      // Other query params are kept (sorted); bad values fall back to the defaults (limit 100, offset 0).
      const extra = await e.call("GET", `${e.project}/dashboards/?zeta=1&limit=1&alpha=x`);
      expect(extra.body.next).toBe(`${base}?alpha=x&limit=1&offset=1&zeta=1`);
      const fallback = await e.call("GET", `${e.project}/dashboards/?limit=abc&offset=-3`);
      expect(fallback.body.results).toHaveLength(5);
      expect(fallback.body.next).toBeNull();
      expect(fallback.body.previous).toBeNull();
      const noSlash = await e.call("GET", `${e.project}/dashboards?limit=4`);
      expect(noSlash.body.next).toBe(`${e.url}${e.project}/dashboards?limit=4&offset=4`);
    });
  });
});

describe("authentication and scopes", () => {
  it("answers 401 for a missing or unknown key, with WWW-Authenticate", async () => {
    const e = emu();
    const none = await e.call("GET", `${e.org}/members/`, { key: null });
    expect(none.status).toBe(401);
    expect(none.body).toEqual(
      shape("authentication_error", "not_authenticated", "Authentication credentials were not provided."),
    );
    expect(String(none.headers["www-authenticate"])).toMatch(/^Bearer /);
    const unknown = await e.call("GET", `${e.org}/members/`, { key: "phx_unknownunknownunknown" });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(
      shape(
        "authentication_error",
        "authentication_failed",
        "Personal API key found in request Authorization header is invalid.",
      ),
    );
  });

  it("enforces the scope of each operation; :write satisfies :read; missing scope is named", async () => {
    const e = emu();
    const readOnly = await e.createKey({ scopes: ["dashboard:read"] });
    expect((await e.call("GET", `${e.project}/dashboards/`, { key: readOnly })).status).toBe(200);
    const denied = await e.call("POST", `${e.project}/dashboards/`, { key: readOnly, body: {} });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual(
      shape("authentication_error", "permission_denied", "API key missing required scope 'dashboard:write'"),
    );
    const writer = await e.createKey({ scopes: ["dashboard:write"] });
    expect((await e.call("GET", `${e.project}/dashboards/`, { key: writer })).status).toBe(200);
    expect((await e.call("GET", `${e.org}/members/`, { key: writer })).body.detail).toBe(
      "API key missing required scope 'organization_member:read'",
    );
    const cases: [string, string, string][] = [
      ["GET", `${e.org}/domains/`, "organization:read"],
      ["POST", `${e.org}/domains/`, "organization:write"],
      ["GET", `${e.org}/invites/`, "organization_member:read"],
      ["POST", `${e.org}/invites/bulk/`, "organization_member:write"],
      ["GET", `${e.org}/projects/`, "project:read"],
      ["POST", `${e.org}/projects/`, "project:write"],
      ["POST", `${e.org}/batch_exports/00000000-0000-4000-8000-000000000000/pause/`, "batch_export:write"],
      ["GET", `${e.org}/batch_exports/`, "batch_export:read"],
      ["GET", `${e.project}/dashboards/1/sharing/`, "sharing_configuration:read"],
      ["PATCH", `${e.project}/dashboards/1/sharing/`, "sharing_configuration:write"],
      ["GET", `${e.project}/dashboards/1/access_controls/`, "access_control:read"],
      ["GET", `${e.project}/dashboards/1/collaborators/`, "dashboard:read"],
    ];
    const nothing = await e.createKey({ scopes: ["feature_flag:read"] });
    for (const [method, path, scope] of cases) {
      const res = await e.call(method, path, { key: nothing, body: {} });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.detail).toBe(`API key missing required scope '${scope}'`);
    }
  });

  it("refuses verify, move_tile and create_from_template_json to scoped keys (even '*'), allows legacy keys", async () => {
    const e = emu();
    const star = await e.createKey({ scopes: ["*"] });
    expect((await e.call("GET", `${e.org}/members/`, { key: star })).status).toBe(200);
    for (const [method, path] of [
      ["POST", `${e.org}/domains/00000000-0000-4000-8000-000000000000/verify/`],
      ["PATCH", `${e.project}/dashboards/1/move_tile/`],
      ["POST", `${e.project}/dashboards/create_from_template_json/`],
    ] as const) {
      const res = await e.call(method, path, { key: star, body: {} });
      expect(res.body).toEqual(
        shape(
          "authentication_error",
          "permission_denied",
          "This action does not support Personal API Key access",
        ),
      );
    }
    const legacy = await e.createKey({ scopes: null });
    const res = await e.call("POST", `${e.project}/dashboards/create_from_template_json/`, {
      key: legacy,
      body: {},
    });
    expect(res.status).toBe(400);
  });

  it("limits keys to organizations and projects", async () => {
    const e = emu();
    const projectKey = await e.createKey({ projects: [e.projectId] });
    expect((await e.call("GET", `${e.project}/dashboards/`, { key: projectKey })).status).toBe(200);
    expect((await e.call("GET", `${e.org}/members/`, { key: projectKey })).body.detail).toBe(
      "API keys with scoped projects are only supported on project-based endpoints.",
    );
    const otherProject = await e.createKey({ projects: [424242] });
    expect((await e.call("GET", `${e.project}/dashboards/`, { key: otherProject })).body.detail).toBe(
      `API key does not have access to the requested project: ID ${e.projectId}.`,
    );
    const otherOrg = await e.createKey({ organizations: ["11111111-1111-4111-8111-111111111111"] });
    const res = await e.call("GET", `${e.org}/domains/`, { key: otherOrg });
    expect(res.status).toBe(403);
    expect(res.body.detail).toBe(
      `API key does not have access to the requested organization: ID ${e.organizationId}.`,
    );
    expect((await e.call("GET", "/api/projects/", { key: otherOrg })).body.count).toBe(0);
    const ownOrg = await e.createKey({ organizations: [e.organizationId] });
    expect((await e.call("GET", "/api/projects/", { key: ownOrg })).body.count).toBe(1);
    expect((await e.call("GET", `${e.org}/domains/`, { key: ownOrg })).status).toBe(200);
  });

  it("a user outside the organization gets 403 (not a member)", async () => {
    const e = emu();
    await e.control("POST", "/users", { email: "stranger@example.com" });
    const key = await e.createKey({ userEmail: "stranger@example.com" });
    const res = await e.call("GET", `${e.org}/members/`, { key });
    expect(res.status).toBe(403);
    expect(res.body.type).toBe("authentication_error");
  });
});

describe("rate limits", () => {
  it("throttles per key with the real 429 body, the hour window too, and recovers as the clock moves", async () => {
    await withEmulator(
      async (e) => {
        const other = await e.createKey();
        const path = `${e.org}/members/`;
        for (let i = 0; i < 3; i++) expect((await e.call("GET", path)).status).toBe(200);
        const limited = await e.call("GET", path);
        expect(limited.status).toBe(429);
        expect(limited.body).toEqual(
          shape("throttled_error", "throttled", "Request was throttled. Expected available in 60 seconds."),
        );
        expect(limited.headers["retry-after"]).toBeUndefined();
        // Another key has its own budget. (As in DRF, the refused request still counted for the hour.)
        expect((await e.call("GET", path, { key: other })).status).toBe(200);
        await e.control("POST", "/clock", { advanceSeconds: 61 });
        for (let i = 0; i < 2; i++) expect((await e.call("GET", path)).status).toBe(200);
        const hourly = await e.call("GET", path);
        expect(hourly.status).toBe(429);
        expect(hourly.body.detail).toMatch(/^Request was throttled\. Expected available in \d+ seconds\.$/);
        expect(Number(/in (\d+) seconds/.exec(hourly.body.detail)?.[1])).toBeGreaterThan(3000);
        const off = await e.control("POST", "/rate-limit", { enabled: false });
        expect(off.status).toBe(200);
        expect((await e.call("GET", path)).status).toBe(200);
        await e.control("POST", "/rate-limit", { perMinute: 1, perHour: 100 });
        expect((await e.call("GET", path)).status).toBe(200);
        expect((await e.call("GET", path)).status).toBe(429);
      },
      { rateLimit: { perMinute: 3, perHour: 6 } },
    );
  });

  it("is on by default at 480/minute", async () => {
    await withEmulator(
      async (e) => {
        const statuses: number[] = [];
        const path = `${e.url}${e.org}/batch_exports/`;
        const headers = { authorization: `Bearer ${e.apiKey}` };
        for (let i = 0; i < 481; i += 40) {
          const batch = await Promise.all(
            Array.from({ length: Math.min(40, 481 - i) }, () =>
              request(path, { headers }).then(async (r) => {
                await r.body.dump();
                return r.statusCode;
              }),
            ),
          );
          statuses.push(...batch);
        }
        expect(statuses.filter((s) => s === 200)).toHaveLength(480);
        expect(statuses.filter((s) => s === 429)).toHaveLength(1);
      },
      { rateLimit: { perMinute: 480, perHour: 4800 } },
    );
  });
});
