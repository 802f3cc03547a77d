/**
 * Issue 21, item 3, through the REAL dynamic-provider host over gRPC against the emulator serving domains as
 * current PostHog does (`samlOnDomain: false`: no `saml_*` fields, SAML in `identity_provider_config`,
 * posthog/api/organization_domain.py). A Domain declaring SAML inputs there fails, saying where SAML lives and what
 * to do, never as a perpetual diff:
 * - in preview (diff, no request) once a create, read or update recorded `samlOnDomain: false`;
 * - at create, before any write, when the organization's domain list shows it; else after the POST, the domain
 *   it made deleted again;
 * - at update of state written before the marker existed (the answer shows it); a refresh records it.
 * A Domain without SAML inputs works as before.
 */
import { describe, expect, it } from "vitest";
import { UNKNOWN } from "../../provider/framework/values";
import type { ProviderHost } from "../../tools/provider-host";
import {
  create,
  createFails,
  destroy,
  failure,
  inState,
  plan,
  refresh,
  type TestEmulator,
  updateFails,
  useProviderHost,
} from "./harness";

let emu: TestEmulator;
let host: ProviderHost;
useProviderHost(
  (e, h) => {
    emu = e;
    host = h;
  },
  { samlOnDomain: false },
);

const org = () => `/api/organizations/${emu.organizationId}`;
const requests = async () => (await emu.requests()).map((r) => `${r.method} ${r.path} ${r.status}`);
const domains = async () =>
  ((await emu.api("GET", `${org()}/domains/`)).body as { results: { id: string; domain: string }[] }).results;

/** What every refusal says: where SAML lives, and what to do. */
const refusal = (domain: string, names: string) =>
  new RegExp(
    `Domain ${domain.replaceAll(".", "\\.")} declares ${names}, but this PostHog keeps SAML settings in the domain's ` +
      `identity_provider_config .*Remove ${names} from the Domain and configure SAML for ${domain.replaceAll(".", "\\.")} in PostHog's SSO settings`,
  );

describe("a Domain declaring SAML inputs on a PostHog that keeps SAML elsewhere", () => {
  it("fails its create after the POST when no domain showed it, deleting the domain it made", async () => {
    expect(await domains()).toEqual([]);
    await emu.control("DELETE", "/requests");
    const message = await createFails(host, "Domain", "first", {
      domain: "first.example.com",
      samlEntityId: "idp-1",
    });
    expect(message).toMatch(refusal("first.example.com", "samlEntityId"));
    expect(message).toContain("The domain this create made was deleted again: nothing is left");
    const sent = await requests();
    expect(await domains()).toEqual([]);
    expect(sent.slice(-3)).toEqual([
      `GET ${org()}/domains/ 200`,
      `POST ${org()}/domains/ 201`,
      expect.stringMatching(new RegExp(`^DELETE ${org()}/domains/[0-9a-f-]+/ 204$`)),
    ]);
  });

  it("a Domain without SAML inputs is created and records that SAML lives elsewhere; preview then refuses SAML", async () => {
    const want = { domain: "plain.example.com", ssoEnforcement: "saml" };
    const d = await create(host, "Domain", "plain", want);
    expect(d.outs).toMatchObject({ samlOnDomain: false, samlEntityId: "", hasSaml: false });
    expect((await plan(host, d, want)).diff.changes).toBe(false);

    await emu.control("DELETE", "/requests");
    const message = await failure(
      plan(host, d, {
        ...want,
        samlEntityId: "idp-1",
        samlAcsUrl: "https://idp.example.com/acs",
        samlX509Cert: "",
      }),
    );
    expect(message).toMatch(refusal("plain.example.com", "samlEntityId, samlAcsUrl"));
    // a value unknown in preview cannot be judged: left to the update
    expect((await plan(host, d, { ...want, samlX509Cert: UNKNOWN })).diff.changes).toBe(true);
    expect(await requests()).toEqual([]); // preview sends nothing
    const refreshed = await refresh(host, d);
    await emu.control("DELETE", "/requests");
    expect(refreshed.outs.samlOnDomain).toBe(false);
    expect(await failure(plan(host, refreshed, { ...want, samlX509Cert: "PEM" }))).toMatch(
      refusal("plain.example.com", "samlX509Cert"),
    );
    // update itself refuses too, before any request
    expect(await updateFails(host, d, { ...want, samlX509Cert: "PEM" })).toMatch(
      refusal("plain.example.com", "samlX509Cert"),
    );
    expect(await requests()).toEqual([]);
  });

  it("fails a create before any write when the organization's domains show it", async () => {
    expect((await domains()).map((d) => d.domain)).toEqual(["plain.example.com"]);
    await emu.control("DELETE", "/requests");
    expect(
      await createFails(host, "Domain", "second", { domain: "second.example.com", samlX509Cert: "PEM" }),
    ).toMatch(refusal("second.example.com", "samlX509Cert"));
    expect(await requests()).toEqual([`GET ${org()}/domains/ 200`]);
    expect((await domains()).map((d) => d.domain)).toEqual(["plain.example.com"]);
  });

  it("state from before the marker: update fails on the answer, refresh records it, then preview fails", async () => {
    const [plain] = await domains();
    if (!plain) throw new Error("no domain");
    // What an older version recorded after creating the domain with SAML on a PostHog that kept it on the domain.
    const want = { domain: "plain.example.com", ssoEnforcement: "saml", samlEntityId: "idp-1" };
    const old = await inState("Domain", "plain", plain.id, want, {
      ...want,
      jitProvisioningEnabled: false,
      samlAcsUrl: "",
      samlX509Cert: "",
      adopt: false,
      isVerified: false,
      verifiedAt: null,
      verificationChallenge: "x",
      challengeRecordName: "_posthog-challenge.plain.example.com",
      hasSaml: false,
      pendingSettings: null,
      adopted: false,
    });
    // No marker: preview cannot know, and shows no change (the outputs say idp-1).
    expect((await plan(host, old, want)).diff.changes).toBe(false);
    expect(await updateFails(host, old, { ...want, samlEntityId: "idp-2" })).toMatch(
      refusal("plain.example.com", "samlEntityId"),
    );
    const refreshed = await refresh(host, old);
    expect(refreshed.outs).toMatchObject({ samlOnDomain: false, samlEntityId: "" });
    expect(await failure(plan(host, refreshed, want))).toMatch(refusal("plain.example.com", "samlEntityId"));
    // Removing the SAML inputs, as the error says: no change, no failure.
    const { samlEntityId: _, ...withoutSaml } = want;
    expect((await plan(host, refreshed, withoutSaml)).diff.changes).toBe(false);
    await destroy(host, refreshed);
    expect(await domains()).toEqual([]);
  });
});
