import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderHost } from "../../tools/provider-host";
import {
  create,
  destroy,
  failure,
  plan,
  refresh,
  serializeProvider,
  startConfiguredHost,
  startTestEmulator,
  type TestEmulator,
  update,
  urnOf,
} from "./harness";

let emu: TestEmulator;
let host: ProviderHost;

let hostOutput = "";

beforeAll(async () => {
  emu = await startTestEmulator();
  host = await startConfiguredHost(emu, (text) => {
    hostOutput += text;
  });
});
afterAll(async () => {
  await host?.close();
  await emu?.close();
});

type Domain = { id: string; domain: string; jit_provisioning_enabled: boolean; sso_enforcement: string };
const org = () => `/api/organizations/${emu.organizationId}`;

describe("Domain provider (real host over gRPC)", () => {
  it("runs the whole lifecycle: check, create, read, diff, update, delete", async () => {
    const d = await create(host, "Domain", "corp", {
      domain: "lifecycle.example.com",
      samlEntityId: "idp-1",
    });
    expect(d.outs).toMatchObject({
      domain: "lifecycle.example.com",
      isVerified: false,
      verifiedAt: null,
      challengeRecordName: "_posthog-challenge.lifecycle.example.com",
      samlEntityId: "idp-1",
      jitProvisioningEnabled: false,
      ssoEnforcement: "",
      pendingSettings: null,
    });
    expect(String(d.outs.verificationChallenge).length).toBeGreaterThan(20);

    // up followed by preview: no changes, and preview makes no request
    await emu.control("DELETE", "/requests");
    const same = { domain: "lifecycle.example.com", samlEntityId: "idp-1" };
    expect((await plan(host, d, same)).diff.changes).toBe(false);
    expect((await plan(host, d, { ...same, samlEntityId: "idp-9" })).diff.changes).toBe(true);
    expect(await emu.requests()).toEqual([]);

    const read = await refresh(host, d);
    expect(read.id).toBe(d.id);
    expect(read.inputs).toMatchObject({ domain: "lifecycle.example.com", samlEntityId: "idp-1" });

    const updated = await update(host, read, { domain: "lifecycle.example.com", samlEntityId: "idp-2" });
    expect(updated.outs.samlEntityId).toBe("idp-2");
    const live = await emu.api("GET", `${org()}/domains/${d.id}/`);
    expect(live.body).toMatchObject({ saml_entity_id: "idp-2" });

    await destroy(host, updated);
    expect((await emu.api("GET", `${org()}/domains/${d.id}/`)).status).toBe(404);
    expect((await refresh(host, updated)).id).toBe("");
    await destroy(host, updated); // 404 counts as done
  });

  it("replaces (delete first) when the domain name changes", async () => {
    const d = await create(host, "Domain", "rename", { domain: "old.example.com", samlAcsUrl: "" });
    expect((await plan(host, d, { domain: "old.example.com", samlAcsUrl: "" })).diff.changes).toBe(false);
    const { diff } = await plan(host, d, { domain: "new.example.com" });
    expect(diff).toEqual({ changes: true, replaces: ["domain"], deleteBeforeReplace: true });
    await destroy(host, d);
  });

  it("rejects bad inputs in check, naming the property and the accepted values, with no request", async () => {
    await emu.control("DELETE", "/requests");
    const provider = await serializeProvider("Domain");
    const { failures } = await host.check(
      urnOf("Domain", "bad"),
      {},
      {
        domain: "Example.COM",
        ssoEnforcement: "okta",
        typo: 1,
        __provider: provider,
      },
    );
    expect(failures).toEqual([
      { property: "domain", reason: expect.stringContaining("lowercase domain") },
      { property: "ssoEnforcement", reason: expect.stringContaining('"google-oauth2"') },
      { property: "typo", reason: expect.stringContaining("accepted properties: domain,") },
    ]);
    expect(await emu.requests()).toEqual([]);
  });

  it("keeps JIT/SSO pending while unverified without a perpetual diff, applies them once verified", async () => {
    const want = { domain: "sso.example.com", jitProvisioningEnabled: true, ssoEnforcement: "google-oauth2" };
    const d = await create(host, "Domain", "sso", want);
    expect(hostOutput).toContain("warning: Domain sso.example.com: jitProvisioningEnabled=true");
    expect(d.outs.pendingSettings).toMatch(
      /jitProvisioningEnabled=true.*will be applied once sso\.example\.com is verified/,
    );
    const live = (await emu.api("GET", `${org()}/domains/${d.id}/`)).body as Domain;
    expect(live.jit_provisioning_enabled).toBe(false); // nothing applied on the server yet

    // preview, refresh, preview: still no changes while unverified
    expect((await plan(host, d, want)).diff.changes).toBe(false);
    const refreshed = await refresh(host, d);
    expect((await plan(host, refreshed, want)).diff.changes).toBe(false);

    // The DNS record is published and DomainVerification verifies it.
    await emu.control("POST", "/dns", {
      name: "_posthog-challenge.sso.example.com",
      txt: d.outs.verificationChallenge,
    });
    const v = await create(host, "DomainVerification", "sso", { domainId: d.id, timeoutSeconds: 5 });
    expect(v.outs).toMatchObject({ isVerified: true, domain: "sso.example.com" });
    expect(v.id).toBe(d.id);

    // up --refresh: refresh sees verified, diff wants the settings, update applies them.
    const afterVerify = await refresh(host, refreshed);
    expect(afterVerify.outs.isVerified).toBe(true);
    const applied = await update(host, afterVerify, want);
    expect(applied.outs).toMatchObject({
      jitProvisioningEnabled: true,
      ssoEnforcement: "google-oauth2",
      pendingSettings: null,
    });
    expect((await emu.api("GET", `${org()}/domains/${d.id}/`)).body).toMatchObject({
      jit_provisioning_enabled: true,
      sso_enforcement: "google-oauth2",
    });
    expect((await plan(host, applied, want)).diff.changes).toBe(false);

    // Drift: someone turns SSO off; refresh shows it, the next up heals it.
    await emu.api("PATCH", `${org()}/domains/${d.id}/`, { sso_enforcement: "" });
    const drifted = await refresh(host, applied);
    expect(drifted.outs.ssoEnforcement).toBe("");
    expect(drifted.inputs.ssoEnforcement).toBe("");
    const healed = await update(host, drifted, want);
    expect(healed.outs.ssoEnforcement).toBe("google-oauth2");
    await destroy(host, v);
    await destroy(host, healed);
  });

  it("adopts an existing domain by name with adopt: true, and explains the conflict without it", async () => {
    const pre = await emu.api("POST", `${org()}/domains/`, { domain: "adopt.example.com" });
    expect(pre.status).toBe(201);
    const preId = (pre.body as Domain).id;

    const provider = await serializeProvider("Domain");
    const urn = urnOf("Domain", "adopt");
    const checked = await host.check(urn, {}, { domain: "adopt.example.com", __provider: provider });
    const msg = await failure(host.create(urn, checked.inputs));
    expect(msg).toContain(`already exists in this organization (id ${preId}); set adopt: true`);

    const adopted = await create(host, "Domain", "adopt", {
      domain: "adopt.example.com",
      adopt: true,
      samlAcsUrl: "https://idp.example.com/acs",
    });
    expect(adopted.id).toBe(preId);
    expect((await emu.api("GET", `${org()}/domains/`)).body).toMatchObject({ count: expect.any(Number) });
    const all = ((await emu.api("GET", `${org()}/domains/`)).body as { results: Domain[] }).results;
    expect(all.filter((x) => x.domain === "adopt.example.com")).toHaveLength(1);
    expect(adopted.outs.samlAcsUrl).toBe("https://idp.example.com/acs");
    await destroy(host, adopted);
  });
});

describe("Domain create whose answer was lost", () => {
  it("reconciles by name: adopts the domain the server created, no duplicate, no error", async () => {
    await emu.control("POST", "/faults", {
      method: "POST",
      path: "/domains/$",
      dropResponse: true,
      times: 1,
    });
    await emu.control("DELETE", "/requests");
    const d = await create(host, "Domain", "lost", { domain: "lost.example.com" });
    // the provider listed the domains first (none of that name: a domain found afterwards is the one it made);
    // the write went through but its answer was lost; the provider then listed the domains to reconcile
    const calls = await emu.requests();
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      `GET ${org()}/domains/`,
      `POST ${org()}/domains/`,
      `GET ${org()}/domains/`,
    ]);
    const all = ((await emu.api("GET", `${org()}/domains/`)).body as { results: Domain[] }).results;
    const matching = all.filter((x) => x.domain === "lost.example.com");
    expect(matching.map((x) => x.id)).toEqual([d.id]);
    await destroy(host, d);
  });
});

describe("DomainVerification provider", () => {
  it("waits with backoff until the TXT record appears", async () => {
    const d = await create(host, "Domain", "late-dns", { domain: "late.example.com" });
    // The emulator holds the first two verify requests until the test releases them: the first is answered
    // before the TXT record exists, the second after it was published. The order is the test's, never the
    // machine's speed (the provider's own backoff, 1 s, passes in between; the timeout is never reached).
    const verify = `/domains/${d.id}/verify/$`;
    const hold = (await emu.control("POST", "/holds", { method: "POST", path: verify, times: 2 })) as {
      id: string;
    };
    const hits = async () => ((await emu.control("GET", `/holds/${hold.id}`)) as { hits: number }).hits;
    await emu.control("DELETE", "/requests");
    const verifying = create(host, "DomainVerification", "late-dns", {
      domainId: d.id,
      timeoutSeconds: 3600,
    });
    let ended: unknown;
    verifying.then(
      () => (ended = "verified"),
      (e: unknown) => (ended = e),
    );
    /** Resolves once the hold has met its `n`th verify request; throws if the create ended before. */
    const heldAt = async (n: number) => {
      while ((await hits()) < n) {
        if (ended !== undefined)
          throw new Error(`the create ended before verify request ${n}: ${String(ended)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    try {
      await heldAt(1);
      await emu.control("POST", `/holds/${hold.id}/release`); // answered: not verified (no TXT record yet)
      await heldAt(2);
      await emu.control("POST", "/dns", {
        name: "_posthog-challenge.late.example.com",
        txt: d.outs.verificationChallenge,
      });
      await emu.control("POST", `/holds/${hold.id}/release`); // answered: verified
    } finally {
      await emu.control("DELETE", `/holds/${hold.id}`);
    }
    const v = await verifying;
    expect(v.outs.isVerified).toBe(true);
    const verifyCalls = (await emu.requests()).filter(
      (r) => r.method === "POST" && r.path.endsWith(`/domains/${d.id}/verify/`),
    );
    expect(verifyCalls.map((r) => r.status)).toEqual([200, 200]);
    expect((await plan(host, v, { domainId: d.id, timeoutSeconds: 3600 })).diff.changes).toBe(false);
    await destroy(host, v);
    await destroy(host, d);
  });

  it("fails after the timeout with the TXT record to publish", async () => {
    const d = await create(host, "Domain", "no-dns", { domain: "nodns.example.com" });
    const provider = await serializeProvider("DomainVerification");
    const urn = urnOf("DomainVerification", "no-dns");
    const checked = await host.check(urn, {}, { domainId: d.id, timeoutSeconds: 0, __provider: provider });
    const msg = await failure(host.create(urn, checked.inputs));
    expect(msg).toContain("_posthog-challenge.nodns.example.com");
    expect(msg).toContain(String(d.outs.verificationChallenge));
    await destroy(host, d);
  });

  it("names the property and the accepted range for a bad timeout", async () => {
    const provider = await serializeProvider("DomainVerification");
    const { failures } = await host.check(
      urnOf("DomainVerification", "x"),
      {},
      {
        domainId: "",
        timeoutSeconds: -1,
        __provider: provider,
      },
    );
    expect(failures.map((f) => f.property)).toEqual(["domainId", "timeoutSeconds"]);
    expect(failures[1]?.reason).toContain("between 0 and 3600");
  });
});
