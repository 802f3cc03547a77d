import { describe, expect, it } from "vitest";
import { parseCli } from "../../emulator/cli";
import { type TestEmulator, useEmulator, withEmulator } from "../support/emulator";

const emu = useEmulator();

const errorShape = (type: string, code: string, detail: string, attr: string | null = null) => ({
  type,
  code,
  detail,
  attr,
});

const seededMembers = async (e: TestEmulator) => {
  const res = await e.call("GET", `${e.org}/members/`);
  const byEmail = new Map<string, { user: { uuid: string }; level: number }>();
  for (const m of res.body.results) byEmail.set(m.user.email, m);
  const get = (email: string) => {
    const member = byEmail.get(email);
    if (!member) throw new Error(`no member ${email}`);
    return member;
  };
  return {
    owner: get("olivia.owner@example.com"),
    admin: get("adam.admin@example.com"),
    mia: get("mia.member@example.com"),
    max: get("max.member@example.com"),
  };
};

describe("batch exports", () => {
  it("lists and retrieves the two seeded exports of the organization with the fields of §2.2", async () => {
    const e = emu();
    const list = await e.call("GET", `${e.org}/batch_exports/`);
    expect(list.status).toBe(200);
    expect(list.body.count).toBe(2);
    const first = list.body.results[0];
    expect(Object.keys(first).sort()).toEqual(
      [
        "id",
        "name",
        "model",
        "destination",
        "interval",
        "paused",
        "last_paused_at",
        "start_at",
        "end_at",
        "native_query",
      ].sort(),
    );
    expect(first.paused).toBe(false);
    const one = await e.call("GET", `${e.org}/batch_exports/${first.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(first);
    expect((await e.call("GET", `${e.org}/batch_exports/not-a-uuid/`)).status).toBe(404);
    expect(
      (await e.call("GET", `${e.org}/batch_exports/00000000-0000-4000-8000-000000000000/`)).body,
    ).toEqual(errorShape("invalid_request", "not_found", "Not found."));
  });

  it("pause and unpause answer 200 {paused} as PostHog does, are idempotent and keep last_paused_at", async () => {
    const e = emu();
    const id = (await e.call("GET", `${e.org}/batch_exports/`)).body.results[1].id;
    const pause = await e.call("POST", `${e.org}/batch_exports/${id}/pause/`);
    expect(pause.status).toBe(200);
    expect(pause.body).toStrictEqual({ paused: true });
    const paused = (await e.call("GET", `${e.org}/batch_exports/${id}/`)).body;
    expect(paused.paused).toBe(true);
    expect(paused.last_paused_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    await e.control("POST", "/clock", { advanceSeconds: 60 });
    const again = await e.call("POST", `${e.org}/batch_exports/${id}/pause/`, { body: {} });
    expect([again.status, again.body]).toStrictEqual([200, { paused: true }]);
    expect((await e.call("GET", `${e.org}/batch_exports/${id}/`)).body.last_paused_at).toBe(
      paused.last_paused_at,
    );
    for (let i = 0; i < 2; i++) {
      const unpause = await e.call("POST", `${e.org}/batch_exports/${id}/unpause/`);
      expect([unpause.status, unpause.body]).toStrictEqual([200, { paused: false }]);
    }
    const unpaused = (await e.call("GET", `${e.org}/batch_exports/${id}/`)).body;
    expect(unpaused.paused).toBe(false);
    expect(unpaused.last_paused_at).toBe(paused.last_paused_at);
    const bad = await e.call("POST", `${e.org}/batch_exports/${id}/pause/`, { body: { model: "cats" } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: "validation_error", code: "invalid_choice", attr: "model" });
  });
});

describe("domains", () => {
  it("creates with lowercase validation, drops jit/sso on create, and is unique across the instance", async () => {
    const e = emu();
    for (const domain of ["Example.COM", "one.two.c", "--alpha.com", "a@b.com", ""]) {
      const res = await e.call("POST", `${e.org}/domains/`, { body: { domain } });
      expect(res.status).toBe(400);
      expect(res.body.attr).toBe("domain");
    }
    expect((await e.call("POST", `${e.org}/domains/`, { body: { domain: "UPPER.com" } })).body).toEqual(
      errorShape(
        "validation_error",
        "invalid_input",
        "Please enter a valid domain or subdomain name.",
        "domain",
      ),
    );
    const res = await e.call("POST", `${e.org}/domains/`, {
      body: { domain: "acme.example.com", jit_provisioning_enabled: true, sso_enforcement: "google-oauth2" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      domain: "acme.example.com",
      is_verified: false,
      verified_at: null,
      jit_provisioning_enabled: false,
      sso_enforcement: "",
      has_saml: false,
    });
    expect(res.body.verification_challenge).toMatch(/^[0-9A-Za-z_-]{32,}$/);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        "id",
        "domain",
        "is_verified",
        "verified_at",
        "verification_challenge",
        "jit_provisioning_enabled",
        "sso_enforcement",
        "has_saml",
        "saml_entity_id",
        "saml_acs_url",
        "saml_x509_cert",
      ].sort(),
    );
    const dup = await e.call("POST", `${e.org}/domains/`, { body: { domain: "acme.example.com" } });
    expect(dup.body).toEqual(
      errorShape("validation_error", "unique", "domain with this domain already exists.", "domain"),
    );
    const got = await e.call("GET", `${e.org}/domains/${res.body.id}/`);
    expect(got.body).toEqual(res.body);
  });

  it("refuses jit/sso on an unverified domain, verifies via the DNS TXT table, then allows them", async () => {
    const e = emu();
    const created = (await e.call("POST", `${e.org}/domains/`, { body: { domain: "verify.example.org" } }))
      .body;
    const path = `${e.org}/domains/${created.id}/`;
    const refused = await e.call("PATCH", path, { body: { sso_enforcement: "saml" } });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(
      errorShape(
        "validation_error",
        "verification_required",
        "This attribute cannot be updated until the domain is verified.",
        "sso_enforcement",
      ),
    );
    const saml = await e.call("PATCH", path, {
      body: { saml_entity_id: "urn:x", saml_acs_url: "https://idp.example.org/acs", saml_x509_cert: "CERT" },
    });
    expect(saml.status).toBe(200);
    expect(saml.body.has_saml).toBe(true);
    // Without a matching TXT record verify answers 200 with the domain, as PostHog does, still unverified.
    const miss = await e.call("POST", `${path}verify/`);
    expect(miss.status).toBe(200);
    expect(miss.body).toStrictEqual((await e.call("GET", path)).body);
    expect(miss.body).toMatchObject({ id: created.id, is_verified: false, verified_at: null });
    await e.control("POST", "/dns", { name: "_posthog-challenge.verify.example.org", txt: "wrong" });
    await e.call("POST", `${path}verify/`);
    expect((await e.call("GET", path)).body.is_verified).toBe(false);
    expect(
      (
        await e.control("POST", "/dns", {
          name: "_posthog-challenge.verify.example.org",
          txt: created.verification_challenge,
        })
      ).status,
    ).toBe(204);
    const hit = await e.call("POST", `${path}verify/`);
    expect(hit.status).toBe(200);
    const verified = (await e.call("GET", path)).body;
    expect(hit.body).toStrictEqual(verified);
    expect(verified.is_verified).toBe(true);
    expect(verified.verified_at).not.toBeNull();
    const again = await e.call("POST", `${path}verify/`);
    expect(again.body).toEqual(
      errorShape("validation_error", "already_verified", "This domain has already been verified."),
    );
    const sso = await e.call("PATCH", path, {
      body: { sso_enforcement: "saml", jit_provisioning_enabled: true, domain: "ignored.example.org" },
    });
    expect(sso.status).toBe(200);
    expect(sso.body).toMatchObject({
      domain: "verify.example.org",
      sso_enforcement: "saml",
      jit_provisioning_enabled: true,
    });
    expect((await e.call("DELETE", path)).status).toBe(204);
    expect((await e.call("GET", path)).status).toBe(404);
  });

  it("lists ordered by domain with pagination and needs admin to write", async () => {
    await withEmulator(async (e) => {
      for (const d of ["b.example.com", "a.example.com", "c.example.com"]) {
        await e.call("POST", `${e.org}/domains/`, { body: { domain: d } });
      }
      const page = await e.call("GET", `${e.org}/domains/?limit=2`);
      expect(page.body.count).toBe(3);
      expect(page.body.results.map((d: { domain: string }) => d.domain)).toEqual([
        "a.example.com",
        "b.example.com",
      ]);
      const memberKey = await e.createKey({ userEmail: "mia.member@example.com" });
      const read = await e.call("GET", `${e.org}/domains/`, { key: memberKey });
      expect(read.status).toBe(200);
      const write = await e.call("POST", `${e.org}/domains/`, {
        key: memberKey,
        body: { domain: "z.example.com" },
      });
      expect(write.body).toEqual(
        errorShape(
          "authentication_error",
          "permission_denied",
          "Your organization access level is insufficient.",
        ),
      );
      const id = page.body.results[0].id;
      for (const [method, path] of [
        ["PATCH", `${e.org}/domains/${id}/`],
        ["DELETE", `${e.org}/domains/${id}/`],
        ["POST", `${e.org}/domains/${id}/verify/`],
      ] as const) {
        const res = await e.call(method, path, { key: memberKey, body: {} });
        expect(res.status, `${method} ${path}`).toBe(403);
      }
    });
  });
});

describe("domains as current PostHog serves them (samlOnDomain: false)", () => {
  // posthog/api/organization_domain.py OrganizationDomainSerializer: SAML in identity_provider_config.
  const NEWEST_FIELDS = [
    "domain",
    "has_id_jag",
    "has_saml",
    "has_scim",
    "id",
    "identity_provider_config",
    "is_verified",
    "jit_provisioning_enabled",
    "scim_base_url",
    "sso_enforcement",
    "verification_challenge",
    "verified_at",
  ];

  it("answers no saml_* field anywhere and ignores them when sent", async () => {
    await withEmulator(
      async (e) => {
        const saml = {
          saml_entity_id: "urn:x",
          saml_acs_url: "https://idp.example.org/acs",
          saml_x509_cert: "C",
        };
        const created = await e.call("POST", `${e.org}/domains/`, {
          body: { domain: "new.example.org", ...saml },
        });
        expect(created.status).toBe(201);
        expect(Object.keys(created.body).sort()).toEqual(NEWEST_FIELDS);
        expect(created.body).toMatchObject({
          has_saml: false,
          identity_provider_config: null,
          scim_base_url: null,
        });
        const path = `${e.org}/domains/${created.body.id}/`;
        const patched = await e.call("PATCH", path, { body: saml });
        expect(patched.status).toBe(200);
        expect(patched.body).toStrictEqual(created.body);
        expect((await e.call("GET", path)).body).toStrictEqual(created.body);
        expect((await e.call("GET", `${e.org}/domains/`)).body.results).toStrictEqual([created.body]);
        const verify = await e.call("POST", `${path}verify/`);
        expect(Object.keys(verify.body).sort()).toEqual(NEWEST_FIELDS);
      },
      { samlOnDomain: false },
    );
  });

  it("is the command line's --no-saml-on-domain", () => {
    expect(parseCli(["--no-saml-on-domain"])).toEqual({ samlOnDomain: false });
    expect(parseCli([])).toEqual({});
  });
});

describe("invites", () => {
  it("creates an invite with the documented fields and defaults; a new invite replaces earlier ones", async () => {
    await withEmulator(async (e) => {
      const res = await e.call("POST", `${e.org}/invites/`, {
        body: { target_email: "New.Person@Example.COM", first_name: "New", level: 8, message: "hi" },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        target_email: "New.Person@example.com",
        first_name: "New",
        level: 8,
        is_expired: false,
        message: "hi",
        private_project_access: [],
        emailing_attempt_made: true,
      });
      expect(res.body.created_by.email).toBe("olivia.owner@example.com");
      expect(Object.keys(res.body)).not.toContain("send_email");
      const again = await e.call("POST", `${e.org}/invites/`, {
        body: { target_email: "New.Person@example.com", send_email: false },
      });
      expect(again.status).toBe(201);
      expect(again.body.level).toBe(1);
      expect(again.body.emailing_attempt_made).toBe(false);
      const list = await e.call("GET", `${e.org}/invites/`);
      expect(list.body.count).toBe(1);
      expect(list.body.results[0].id).toBe(again.body.id);
    });
  });

  it("combine_pending_invites keeps the highest level and merges project access", async () => {
    await withEmulator(async (e) => {
      await e.call("POST", `${e.org}/invites/`, {
        body: {
          target_email: "c@example.com",
          level: 8,
          private_project_access: [{ id: e.projectId, level: "admin" }],
        },
      });
      const combined = await e.call("POST", `${e.org}/invites/`, {
        body: { target_email: "c@example.com", level: 1, combine_pending_invites: true },
      });
      expect(combined.body.level).toBe(8);
      expect(combined.body.private_project_access).toEqual([{ id: e.projectId, level: "admin" }]);
    });
  });

  it('accepts project access level "none", as PostHog does; combining keeps the higher level', async () => {
    await withEmulator(async (e) => {
      /** Invites `email` with `level` on the seeded project (combining with pending invites when `combine`). */
      const invite = (email: string, level: string, combine = false) =>
        e.call("POST", `${e.org}/invites/`, {
          body: {
            target_email: email,
            private_project_access: [{ id: e.projectId, level }],
            ...(combine ? { combine_pending_invites: true } : {}),
          },
        });
      const none = await invite("n@example.com", "none");
      expect(none.status).toBe(201);
      expect(none.body.private_project_access).toEqual([{ id: e.projectId, level: "none" }]);
      expect((await e.call("GET", `${e.org}/invites/`)).body.results[0].private_project_access).toEqual([
        { id: e.projectId, level: "none" },
      ]);
      const member = await invite("n@example.com", "member", true);
      expect(member.body.private_project_access).toEqual([{ id: e.projectId, level: "member" }]);
      const kept = await invite("n@example.com", "none", true);
      expect(kept.body.private_project_access).toEqual([{ id: e.projectId, level: "member" }]);
      const viewer = await invite("v@example.com", "viewer");
      expect(viewer.status).toBe(400);
      expect(viewer.body).toMatchObject({ code: "invalid_choice", attr: "private_project_access__0__level" });
    });
  });

  it("validates email, level, project access, existing members and the inviter's level", async () => {
    const e = emu();
    const missing = await e.call("POST", `${e.org}/invites/`, { body: { first_name: "x" } });
    expect(missing.body).toEqual(
      errorShape("validation_error", "required", "This field is required.", "target_email"),
    );
    const badEmail = await e.call("POST", `${e.org}/invites/`, { body: { target_email: "nope" } });
    expect(badEmail.body).toMatchObject({ code: "invalid_input", attr: "target_email" });
    const badLevel = await e.call("POST", `${e.org}/invites/`, {
      body: { target_email: "l@example.com", level: 5 },
    });
    expect(badLevel.body).toEqual(
      errorShape("validation_error", "invalid_choice", '"5" is not a valid choice.', "level"),
    );
    const member = await e.call("POST", `${e.org}/invites/`, {
      body: { target_email: "mia.member@example.com" },
    });
    expect(member.body).toEqual(
      errorShape(
        "validation_error",
        "invalid_input",
        "A user with this email address already belongs to the organization.",
      ),
    );
    const project = await e.call("POST", `${e.org}/invites/`, {
      body: { target_email: "p@example.com", private_project_access: [{ id: 999999, level: "member" }] },
    });
    expect(project.body.attr).toBe("private_project_access");
    const memberKey = await e.createKey({ userEmail: "mia.member@example.com" });
    const higher = await e.call("POST", `${e.org}/invites/`, {
      key: memberKey,
      body: { target_email: "h@example.com", level: 8 },
    });
    expect(higher.status).toBe(403);
    expect(higher.body.detail).toBe("You cannot invite a user with a higher permission level than your own.");
  });

  it("expires after 3 days of the emulator clock; delete needs admin", async () => {
    await withEmulator(async (e) => {
      const invite = (
        await e.call("POST", `${e.org}/invites/`, { body: { target_email: "exp@example.com" } })
      ).body;
      await e.control("POST", "/clock", { advanceSeconds: 3 * 24 * 3600 - 60 });
      expect((await e.call("GET", `${e.org}/invites/`)).body.results[0].is_expired).toBe(false);
      await e.control("POST", "/clock", { advanceSeconds: 120 });
      expect((await e.call("GET", `${e.org}/invites/`)).body.results[0].is_expired).toBe(true);
      const memberKey = await e.createKey({ userEmail: "max.member@example.com" });
      const denied = await e.call("DELETE", `${e.org}/invites/${invite.id}/`, { key: memberKey });
      expect(denied.status).toBe(403);
      const deleted = await e.call("DELETE", `${e.org}/invites/${invite.id}/`);
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe("");
      expect((await e.call("DELETE", `${e.org}/invites/${invite.id}/`)).status).toBe(404);
    });
  });

  it("bulk: JSON array of at most 20, all or nothing, 201 with the invites as PostHog answers", async () => {
    await withEmulator(async (e) => {
      const notArray = await e.call("POST", `${e.org}/invites/bulk/`, {
        body: { target_email: "a@example.com" },
      });
      expect(notArray.body).toEqual(
        errorShape(
          "validation_error",
          "invalid_input",
          "This endpoint needs an array of data for bulk invite creation.",
        ),
      );
      const many = Array.from({ length: 21 }, (_, i) => ({ target_email: `b${i}@example.com` }));
      const tooMany = await e.call("POST", `${e.org}/invites/bulk/`, { body: many });
      expect(tooMany.body).toEqual(
        errorShape(
          "validation_error",
          "max_length",
          "A maximum of 20 invites can be sent in a single request.",
        ),
      );
      const oneBad = await e.call("POST", `${e.org}/invites/bulk/`, {
        body: [{ target_email: "ok@example.com" }, { target_email: "not-an-email" }],
      });
      expect(oneBad.status).toBe(400);
      expect(oneBad.body.attr).toBe("1__target_email");
      expect((await e.call("GET", `${e.org}/invites/`)).body.count).toBe(0);
      const ok = await e.call("POST", `${e.org}/invites/bulk/`, { body: many.slice(0, 20) });
      expect(ok.status).toBe(201);
      expect(ok.body.map((i: { target_email: string }) => i.target_email)).toEqual(
        many.slice(0, 20).map((i) => i.target_email),
      );
      const listed = (await e.call("GET", `${e.org}/invites/?limit=20`)).body;
      expect(listed.count).toBe(20);
      for (const invite of ok.body) expect(listed.results).toContainEqual(invite);
    });
  });
});

describe("members", () => {
  it("lists members with full user objects and levels 1/8/15", async () => {
    const e = emu();
    const res = await e.call("GET", `${e.org}/members/`);
    expect(res.body.count).toBeGreaterThanOrEqual(4);
    const m = res.body.results[0];
    expect(Object.keys(m).sort()).toEqual(
      [
        "id",
        "user",
        "level",
        "joined_at",
        "updated_at",
        "last_login",
        "is_2fa_enabled",
        "has_social_auth",
      ].sort(),
    );
    expect(Object.keys(m.user).sort()).toEqual(
      [
        "id",
        "uuid",
        "distinct_id",
        "first_name",
        "last_name",
        "email",
        "is_email_verified",
        "mascot_config",
        "role_at_organization",
      ].sort(),
    );
    const levels = res.body.results
      .map((r: { level: number }) => r.level)
      .sort((a: number, b: number) => a - b);
    expect(levels).toEqual([1, 1, 8, 15]);
  });

  it("applies the real permission rules relative to the key's user", async () => {
    await withEmulator(async (e) => {
      const { owner, admin, mia, max } = await seededMembers(e);
      const adminKey = await e.createKey({ userEmail: "adam.admin@example.com" });
      const miaKey = await e.createKey({ userEmail: "mia.member@example.com" });
      const patch = (uuid: string, level: unknown, key?: string) =>
        e.call("PATCH", `${e.org}/members/${uuid}/`, key ? { key, body: { level } } : { body: { level } });
      expect((await patch(owner.user.uuid, 8)).body.detail).toBe("You can't change your own access level.");
      expect((await patch(mia.user.uuid, 15, adminKey)).body.detail).toBe(
        "You can only make another member owner if you're this organization's owner.",
      );
      expect((await patch(max.user.uuid, 8, miaKey)).body.detail).toBe(
        "You can only change access level of others to lower or equal to your current one.",
      );
      expect((await patch(max.user.uuid, 1, miaKey)).body.detail).toBe(
        "You can only edit others if you are an admin.",
      );
      expect((await patch(owner.user.uuid, 8, adminKey)).body.detail).toBe(
        "You can only edit others with level lower or equal to you.",
      );
      const noChange = await e.call("PATCH", `${e.org}/members/${mia.user.uuid}/`, { body: {} });
      expect(noChange.status).toBe(200);
      expect(noChange.body.level).toBe(1);
      const invalidLevel = await patch(mia.user.uuid, 5);
      expect(invalidLevel.body).toEqual(
        errorShape("validation_error", "invalid_choice", '"5" is not a valid choice.', "level"),
      );
      const promoted = await patch(mia.user.uuid, 8, adminKey);
      expect(promoted.status).toBe(200);
      expect(promoted.body.level).toBe(8);
      expect((await patch(admin.user.uuid, 15)).body.level).toBe(15);
      // Owners cannot be removed, not even by another owner.
      const removeOwner = await e.call("DELETE", `${e.org}/members/${admin.user.uuid}/`);
      expect(removeOwner.body).toEqual(
        errorShape("validation_error", "invalid_input", "Cannot leave the organization as its owner!"),
      );
      expect((await e.call("DELETE", `${e.org}/members/${owner.user.uuid}/`)).status).toBe(400);
      const maxKey = await e.createKey({ userEmail: "max.member@example.com" });
      expect((await e.call("DELETE", `${e.org}/members/${mia.user.uuid}/`, { key: maxKey })).status).toBe(
        403,
      );
      // A member may leave (delete themselves).
      expect((await e.call("DELETE", `${e.org}/members/@me/`, { key: maxKey })).status).toBe(204);
      expect((await e.call("GET", `${e.org}/members/`)).body.count).toBe(3);
      expect((await e.call("DELETE", `${e.org}/members/${max.user.uuid}/`)).status).toBe(404);
    });
  });
});

describe("projects", () => {
  const LIST_FIELDS = [
    "id",
    "uuid",
    "organization",
    "api_token",
    "name",
    "completed_snippet_onboarding",
    "has_completed_onboarding_for",
    "ingested_event",
    "is_demo",
    "timezone",
    "access_control",
  ];

  const FULL_FIELDS = `id uuid organization api_token name product_description created_at updated_at
    effective_membership_level has_group_types live_events_token app_urls slack_incoming_webhook anonymize_ips
    completed_snippet_onboarding ingested_event test_account_filters test_account_filters_default_checked
    path_cleaning_filters is_demo timezone data_attributes person_display_name_properties correlation_config
    autocapture_opt_out autocapture_exceptions_opt_in autocapture_web_vitals_opt_in
    autocapture_web_vitals_allowed_metrics autocapture_exceptions_errors_to_ignore capture_console_log_opt_in
    capture_performance_opt_in session_recording_opt_in session_recording_sample_rate
    session_recording_minimum_duration_milliseconds session_recording_linked_flag
    session_recording_network_payload_capture_config session_replay_config survey_config access_control
    week_start_day primary_dashboard live_events_columns recording_domains person_on_events_querying_enabled
    inject_web_apps extra_settings modifiers default_modifiers has_completed_onboarding_for surveys_opt_in
    heatmaps_opt_in product_intents`.split(/\s+/);

  it("lists the subset and creates (201) / retrieves the full object", async () => {
    await withEmulator(async (e) => {
      const list = await e.call("GET", `${e.org}/projects/`);
      expect(list.body.count).toBe(1);
      expect(Object.keys(list.body.results[0]).sort()).toEqual([...LIST_FIELDS].sort());
      const created = await e.call("POST", `${e.org}/projects/`, {
        body: {
          name: "Second",
          timezone: "Europe/Berlin",
          week_start_day: 1,
          app_urls: ["https://a.example"],
        },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        name: "Second",
        timezone: "Europe/Berlin",
        week_start_day: 1,
        organization: e.organizationId,
        effective_membership_level: 15,
      });
      expect(Object.keys(created.body).sort()).toEqual([...FULL_FIELDS].sort());
      expect(created.body.api_token).toMatch(/^phc_/);
      expect(typeof created.body.live_events_token).toBe("string");
      const got = await e.call("GET", `${e.org}/projects/${created.body.id}/`);
      expect(got.body).toEqual(created.body);
      const current = await e.call("GET", `${e.org}/projects/@current/`);
      expect(current.body.id).toBe(e.projectId);
      expect((await e.call("GET", "/api/projects/")).body.count).toBe(2);
    });
  });

  it("validates, updates with PATCH and deletes with 204", async () => {
    await withEmulator(async (e) => {
      const tz = await e.call("POST", `${e.org}/projects/`, {
        body: { name: "x", timezone: "Mars/Olympus" },
      });
      expect(tz.body).toEqual(
        errorShape("validation_error", "invalid_choice", '"Mars/Olympus" is not a valid choice.', "timezone"),
      );
      // PostHog's choices are pytz's all_timezones: aliases such as Asia/Kolkata, US/Eastern and Etc/GMT+5 too;
      // names are case-sensitive.
      for (const alias of ["Asia/Kolkata", "US/Eastern", "Etc/GMT+5", "UTC"]) {
        const ok = await e.call("POST", `${e.org}/projects/`, { body: { name: alias, timezone: alias } });
        expect(ok.status, alias).toBe(201);
        expect(ok.body.timezone).toBe(alias);
      }
      const cased = await e.call("POST", `${e.org}/projects/`, {
        body: { name: "x", timezone: "europe/berlin" },
      });
      expect(cased.body).toEqual(
        errorShape(
          "validation_error",
          "invalid_choice",
          '"europe/berlin" is not a valid choice.',
          "timezone",
        ),
      );
      const blank = await e.call("POST", `${e.org}/projects/`, { body: { name: "" } });
      expect(blank.body).toEqual(
        errorShape("validation_error", "blank", "This field may not be blank.", "name"),
      );
      const wrong = await e.call("POST", `${e.org}/projects/`, { body: { anonymize_ips: "yes" } });
      expect(wrong.body).toEqual(
        errorShape("validation_error", "invalid_input", "Must be a valid boolean.", "anonymize_ips"),
      );
      const id = (await e.call("POST", `${e.org}/projects/`, { body: { name: "P" } })).body.id;
      const patched = await e.call("PATCH", `${e.org}/projects/${id}/`, {
        body: { name: "Renamed", anonymize_ips: true, id: 5, api_token: "ignored" },
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ id, name: "Renamed", anonymize_ips: true });
      expect(patched.body.api_token).not.toBe("ignored");
      const memberKey = await e.createKey({ userEmail: "mia.member@example.com" });
      expect(
        (await e.call("PATCH", `${e.org}/projects/${id}/`, { key: memberKey, body: { name: "n" } })).status,
      ).toBe(403);
      expect(
        (await e.call("POST", `${e.org}/projects/`, { key: memberKey, body: { name: "n" } })).status,
      ).toBe(403);
      expect(
        (await e.call("POST", `${e.org}/projects/`, { key: memberKey, body: { name: "d", is_demo: true } }))
          .status,
      ).toBe(201);
      expect((await e.call("DELETE", `${e.org}/projects/${id}/`)).status).toBe(204);
      expect((await e.call("GET", `${e.org}/projects/${id}/`)).status).toBe(404);
      expect((await e.call("GET", `/api/projects/${id}/dashboards/`)).body).toEqual(
        errorShape("invalid_request", "not_found", "Project not found."),
      );
    });
  });

  it("without paid features allows only one non-demo project", async () => {
    await withEmulator(
      async (e) => {
        const res = await e.call("POST", `${e.org}/projects/`, { body: { name: "Two" } });
        expect(res.status).toBe(403);
        expect(res.body.detail).toMatch(/maximum limit of allowed projects/);
      },
      { paidFeatures: false },
    );
  });
});
