// The wire schemas accept both the seed's shapes (what the emulator serves) and the real service's shapes
// (which the emulator does not produce), so the latter are checked here on documents shaped as PostHog sends them.
import { describe, expect, it } from "vitest";
import {
  CollaboratorListSchema,
  DashboardBodySchema,
  DomainCreateBodySchema,
  ForbiddenError,
  fromResponse,
  InviteBulkResponseSchema,
  InviteCreateBodySchema,
  InviteSchema,
  MemberSchema,
  MethodNotAllowedError,
  PauseResponseSchema,
  ProjectSchema,
  pageSchema,
  parseExpectedAvailable,
  parseRetryAfter,
  RateLimitedError,
  ServerError,
  SharingResponseSchema,
  UnexpectedResponseError,
  UserSchema,
  ValidationError,
  VerifyResponseSchema,
} from "../../provider/client";
import { parseResponse } from "../../provider/client/common";

const user = {
  id: 1,
  uuid: "0190b1a8-0000-7000-8000-000000000001",
  distinct_id: "d1",
  first_name: "Ada",
  last_name: "L",
  email: "ada@example.com",
  is_email_verified: null,
  role_at_organization: null,
};
const invite = {
  id: "0190b1a8-0000-7000-8000-0000000000aa",
  target_email: "x@x.com",
  first_name: "",
  emailing_attempt_made: true,
  level: 1,
  is_expired: false,
  created_by: { ...user, hedgehog_config: null },
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
  message: null,
  private_project_access: [],
};

describe("wire schemas accept the seed's and the real service's shapes", () => {
  it("user object with mascot_config (seed) or hedgehog_config (real), and unknown extra fields", () => {
    expect(UserSchema.parse({ ...user, mascot_config: { a: 1 } }).mascot_config).toEqual({ a: 1 });
    const real = UserSchema.parse({ ...user, hedgehog_config: null, new_field: "kept" });
    expect(real.hedgehog_config).toBeNull();
    expect((real as Record<string, unknown>).new_field).toBe("kept");
    expect(InviteSchema.parse(invite).created_by?.email).toBe("ada@example.com");
  });

  it("pause/unpause: no body (seed) or {paused} (real)", () => {
    expect(PauseResponseSchema.parse(undefined)).toBeUndefined();
    expect(PauseResponseSchema.parse({ paused: true })).toEqual({ paused: true });
    expect(PauseResponseSchema.safeParse({ paused: "yes" }).success).toBe(false);
  });

  it("bulk invite: no body (seed) or an array of invites (real)", () => {
    expect(InviteBulkResponseSchema.parse(undefined)).toBeUndefined();
    expect(InviteBulkResponseSchema.parse([invite])?.[0]?.target_email).toBe("x@x.com");
  });

  it("verify: no body (seed) or the domain (real)", () => {
    expect(VerifyResponseSchema.parse(undefined)).toBeUndefined();
    const d = VerifyResponseSchema.parse({
      id: "d",
      domain: "example.com",
      is_verified: false,
      verified_at: null,
    });
    expect(d?.is_verified).toBe(false);
  });

  it("collaborators list: one object (seed), an array (real) or a page, always an array", () => {
    const c = { id: "c1", dashboard_id: 3, user, level: 37, added_at: "t", updated_at: "t" };
    expect(CollaboratorListSchema.parse(c)).toEqual([c]);
    expect(CollaboratorListSchema.parse([c, c])).toHaveLength(2);
    expect(CollaboratorListSchema.parse([])).toEqual([]);
    expect(CollaboratorListSchema.parse({ count: 1, next: null, previous: null, results: [c] })).toEqual([c]);
  });

  it("sharing: one object (real and seed) or an array of one (OpenAPI)", () => {
    const s = {
      created_at: null,
      enabled: false,
      access_token: "tok",
      settings: null,
      password_required: false,
    };
    expect(SharingResponseSchema.parse(s).enabled).toBe(false);
    expect(SharingResponseSchema.parse([s]).access_token).toBe("tok");
  });
});

describe("request bodies are validated before sending", () => {
  it("names the property and the accepted values", () => {
    const domain = DomainCreateBodySchema.safeParse({ domain: "Example.COM" });
    expect(domain.success).toBe(false);
    expect(domain.error?.issues[0]?.path).toEqual(["domain"]);
    const level = InviteCreateBodySchema.safeParse({ target_email: "a@b.co", level: 5 });
    expect(level.error?.issues[0]?.path).toEqual(["level"]);
    expect(level.error?.issues[0]?.message).toMatch(/1.*8.*15/);
    const both = DashboardBodySchema.safeParse({ use_template: "X", use_dashboard: 1 });
    expect(both.error?.issues[0]?.message).toContain("cannot be used together");
  });
});

describe("429 waits", () => {
  it("prefer Retry-After, else the body's 'Expected available in N seconds'", () => {
    expect(parseRetryAfter("7")).toBe(7);
    expect(
      parseRetryAfter(new Date(Date.UTC(2030, 0, 1, 0, 0, 30)).toUTCString(), Date.UTC(2030, 0, 1)),
    ).toBe(30);
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseExpectedAvailable("Request was throttled. Expected available in 62 seconds.")).toBe(62);
    const body = {
      type: "throttled_error",
      code: "throttled",
      detail: "Request was throttled. Expected available in 62 seconds.",
      attr: null,
    };
    const noHeader = fromResponse({ method: "GET", path: "/p/", status: 429, headers: {}, body });
    expect(noHeader).toBeInstanceOf(RateLimitedError);
    expect((noHeader as RateLimitedError).retryAfterSeconds).toBe(62);
    const header = fromResponse({
      method: "GET",
      path: "/p/",
      status: 429,
      headers: { "retry-after": "3" },
      body,
    });
    expect((header as RateLimitedError).retryAfterSeconds).toBe(3);
  });
});

describe("response parsing keeps unknown fields at every depth (fast path equals the loose parse)", () => {
  it("pages of members with extra fields in the page, the member and the nested user", () => {
    const doc = {
      count: 1,
      next: null,
      previous: null,
      extra_page: 1,
      results: [
        {
          id: "m1",
          level: 8,
          user: { ...user, hedgehog_config: { color: "blue" }, new_user_field: [1, 2] },
          joined_at: "t",
          search_match_type: "email",
        },
      ],
    };
    const schema = pageSchema(MemberSchema);
    const fast = parseResponse(schema, { status: 200, body: doc }, "GET", "/p/");
    expect(fast).toEqual(schema.parse(doc));
    expect(fast).toEqual(doc);
    expect((fast.results[0]?.user as Record<string, unknown> | undefined)?.new_user_field).toEqual([1, 2]);
  });

  it("a full project with undeclared structured settings; a wrong type still fails with the field named", () => {
    const project = {
      id: 1,
      name: "P",
      modifiers: { a: { b: 1 } },
      app_urls: ["https://x"],
      unknown_flag: true,
    };
    expect(parseResponse(ProjectSchema, { status: 200, body: project }, "GET", "/p/")).toEqual(project);
    const bad = () =>
      parseResponse(ProjectSchema, { status: 200, body: { ...project, id: "1" } }, "GET", "/p/1/");
    expect(bad).toThrow(UnexpectedResponseError);
    expect(bad).toThrow(/id: .*expected number/i);
  });
});

describe("fromResponse", () => {
  it("maps statuses to classes, keeps code/detail/attr, and scrubs the key from echoed text", () => {
    const key = "phx_echoedSecretKey123";
    const err = fromResponse({
      method: "POST",
      path: "/api/x/",
      status: 400,
      headers: {},
      body: { type: "validation_error", code: "invalid_input", detail: `bad key ${key}`, attr: "name" },
      secret: key,
    });
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toBe(
      "POST /api/x/ → 400 invalid_input: bad key [redacted] (attr: name) (see docs/troubleshooting/errors.md#reading-an-error)",
    );
    const raw = fromResponse({
      method: "PATCH",
      path: "/s/",
      status: 403,
      headers: {},
      body: { error: "No." },
    });
    expect(raw).toBeInstanceOf(ForbiddenError);
    expect(raw.detail).toBe("No.");
    const empty = fromResponse({
      method: "DELETE",
      path: "/d/1/",
      status: 405,
      headers: {},
      body: undefined,
    });
    expect(empty).toBeInstanceOf(MethodNotAllowedError);
    expect(empty.message).toBe(
      "DELETE /d/1/ → 405 (see docs/troubleshooting/gone-and-interrupted.md#objects-gone-and-objects-not-found)",
    );
    const server = fromResponse({
      method: "GET",
      path: "/g/",
      status: 503,
      headers: { "retry-after": "1" },
      body: "",
    });
    expect(server).toBeInstanceOf(ServerError);
    expect((server as ServerError).retryAfterSeconds).toBe(1);
  });
});
