/**
 * Issue 21 through the REAL dynamic-provider host over gRPC, pointed at a fake PostHog (node:http,
 * test/support/fake-posthog.ts) answering the real service's bodies (test/support/real-bodies.ts), where the
 * emulator follows the API reference instead:
 * - item 1: a Dashboard whose tiles have no ids, with a button tile and a free-form tile, refreshes; an Invite in
 *   a list holding legacy integer project levels, a level "none" and an invite without e-mail refreshes, its
 *   legacy level read as the name a program declares (no change in the next preview);
 * - item 3: a Domain of current PostHog (no `saml_*` fields, SAML in `identity_provider_config`) refreshes from
 *   state recorded with SAML inputs, and the next preview fails, saying where SAML lives and what to do.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProviderHost, startProviderHost } from "../../tools/provider-host";
import { type FakePostHog, startFakePostHog } from "../support/fake-posthog";
import { domain, invites, ORG, PROJECT, realRoutes } from "../support/real-bodies";
import { failure, inState, plan, refresh, repoRoot } from "./harness";

let fake: FakePostHog;
let host: ProviderHost;

beforeAll(async () => {
  fake = await startFakePostHog(realRoutes());
  host = await startProviderHost({ cwd: repoRoot, project: "posthog-test", deadlineMs: 30_000 });
  await host.configure(
    {
      "posthog:apiKey": "phx_fakefakefakefakefakefake",
      "posthog:host": fake.url,
      "posthog:organizationId": ORG,
      "posthog:projectId": String(PROJECT),
    },
    ["posthog:apiKey"],
  );
});
afterAll(async () => {
  await host?.close();
  await fake?.close();
});

describe("item 1: bodies the live PostHog returns never fail a read", () => {
  it("a Dashboard with id-less, button and free-form tiles refreshes, and shows no change", async () => {
    const want = { name: "Launch", description: "", pinned: false, tags: [], restrictionLevel: 21 };
    const d = await inState("Dashboard", "launch", "7", want, {
      ...want,
      projectId: String(PROJECT),
      deleteInsights: false,
      deleted: false,
      creationMode: "default",
      effectiveRestrictionLevel: 21,
      isShared: false,
      createdAt: "2026-01-05T10:00:00Z",
      adopted: false,
    });
    const read = await refresh(host, d);
    expect(read.id).toBe("7");
    expect(read.outs).toMatchObject({ name: "Launch", deleted: false, creationMode: "default" });
    expect((await plan(host, read, want)).diff.changes).toBe(false);
  });

  it.each([
    ["legacy 8", invites.legacyAdmin, "admin"],
    ["legacy 1", invites.legacyMember, "member"],
    ["none", invites.noAccess, "none"],
  ])(
    "an Invite refreshes from a list with legacy levels, none and no e-mail: %s reads as %s",
    async (_, invite, level) => {
      const want = {
        targetEmail: invite.target_email,
        privateProjectAccess: [{ id: PROJECT, level }],
      };
      const i = await inState("Invite", "legacy", invite.id, want, {
        ...want,
        firstName: "",
        level: 1,
        message: "",
        sendEmail: true,
        combinePendingInvites: false,
        adopt: false,
        isExpired: false,
        accepted: false,
        emailingAttemptMade: true,
        createdAt: "2026-01-05T10:00:00Z",
        adopted: false,
      });
      const read = await refresh(host, i);
      expect(read.id).toBe(invite.id);
      expect(read.outs.privateProjectAccess).toEqual([{ id: PROJECT, level }]);
      expect((await plan(host, read, want)).diff.changes).toBe(false);
    },
  );
});

describe("item 3: a Domain of current PostHog, whose SAML settings live in identity_provider_config", () => {
  it("refreshes from state recorded with SAML inputs; the next preview fails saying what to do, with no request", async () => {
    const want = {
      domain: "corp.example.com",
      ssoEnforcement: "saml",
      samlEntityId: "https://idp.example.com/entity",
      samlAcsUrl: "https://idp.example.com/acs",
    };
    const d = await inState("Domain", "corp", domain.id, want, {
      ...want,
      jitProvisioningEnabled: false,
      samlX509Cert: "",
      adopt: false,
      isVerified: true,
      verifiedAt: domain.verified_at,
      verificationChallenge: domain.verification_challenge,
      challengeRecordName: "_posthog-challenge.corp.example.com",
      hasSaml: true,
      pendingSettings: null,
      adopted: false,
    });
    const read = await refresh(host, d);
    expect(read.outs).toMatchObject({ samlOnDomain: false, samlEntityId: "", samlAcsUrl: "", hasSaml: true });
    const before = fake.requests.length;
    const message = await failure(plan(host, read, want));
    expect(message).toContain(
      "Domain corp.example.com declares samlEntityId, samlAcsUrl, but this PostHog keeps SAML settings in the " +
        "domain's identity_provider_config (its SSO configuration), not on the domain",
    );
    expect(message).toContain(
      "Remove samlEntityId, samlAcsUrl from the Domain and configure SAML for corp.example.com in PostHog's SSO settings",
    );
    const { samlEntityId: _e, samlAcsUrl: _a, ...withoutSaml } = want;
    expect((await plan(host, read, withoutSaml)).diff.changes).toBe(false);
    expect(fake.requests.length).toBe(before);
  });
});
