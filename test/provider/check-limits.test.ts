/**
 * "Preview passes, up fails" (issue 12, point 6): `check`, through the real dynamic-provider host over gRPC,
 * refuses every input the API refuses for its form alone, naming the property and the limit or the accepted
 * values, with no HTTP request; and the API (the emulator) does refuse the same value, so the check mirrors it.
 * Values at the limits pass `check` and are accepted by the API (full creates through the host).
 */
import { describe, expect, it } from "vitest";
import { BODY_LIMIT_BYTES as EMULATOR_BODY_LIMIT } from "../../emulator";
import { BODY_LIMIT_BYTES } from "../../provider/framework/limits";
import type { ProviderHost } from "../../tools/provider-host";
import { create, destroy, serializeProvider, type TestEmulator, urnOf, useProviderHost } from "./harness";

let emu: TestEmulator;
let host: ProviderHost;

useProviderHost((e, h) => {
  emu = e;
  host = h;
});

const org = () => `/api/organizations/${emu.organizationId}`;
const dash = () => `/api/projects/${emu.projectId}/dashboards`;
const template = {
  template_name: "T",
  dashboard_description: "",
  dashboard_filters: {},
  tiles: [{ type: "TEXT", body: "hi" }],
};
/** A valid domain name of exactly `n` characters. */
const domainOf = (n: number) => `${"a".repeat(n - 12)}.example.com`;
const MiB = 1024 * 1024;

async function check(type: string, inputs: Record<string, unknown>) {
  const provider = await serializeProvider(type);
  return host.check(urnOf(type, "limits"), {}, { ...inputs, __provider: provider });
}

interface Case {
  what: string;
  type: string;
  inputs: Record<string, unknown>;
  property: string;
  reason: RegExp;
  /** The request the API would get at `up`, and the status it answers (omitted where the emulator does not check it). */
  api?: { method: string; path: () => string; body: unknown; status: number };
}

const cases: Case[] = [
  {
    what: "templateJson without template_name",
    type: "Dashboard",
    inputs: { name: "T", templateJson: JSON.stringify({ ...template, template_name: undefined }) },
    property: "templateJson.template_name",
    reason: /required: the template's name/,
    api: {
      method: "POST",
      path: () => `${dash()}/create_from_template_json/`,
      body: { template: { ...template, template_name: undefined } },
      status: 400,
    },
  },
  {
    what: "templateJson without tiles",
    type: "Dashboard",
    inputs: { name: "T", templateJson: { ...template, tiles: [] } },
    property: "templateJson.tiles",
    reason: /at least one tile/,
    api: {
      method: "POST",
      path: () => `${dash()}/create_from_template_json/`,
      body: { template: { ...template, tiles: [] } },
      status: 400,
    },
  },
  {
    what: "a domain longer than 128 characters",
    type: "Domain",
    inputs: { domain: domainOf(129) },
    property: "domain",
    reason: /at most 128 characters/,
    api: { method: "POST", path: () => `${org()}/domains/`, body: { domain: domainOf(129) }, status: 400 },
  },
  {
    what: "a tag over 255 characters",
    type: "Dashboard",
    inputs: { name: "T", tags: ["ok", "t".repeat(256)] },
    property: "tags.1",
    reason: /at most 255 characters/,
    api: {
      method: "POST",
      path: () => `${dash()}/`,
      body: { name: "T", tags: ["t".repeat(256)] },
      status: 400,
    },
  },
  {
    what: 'timezone "Mars/Olympus"',
    type: "Project",
    inputs: { name: "P", timezone: "Mars/Olympus" },
    property: "timezone",
    reason: /"Mars\/Olympus" is not a time zone; expected an IANA time zone name such as "Europe\/Berlin"/,
    api: {
      method: "POST",
      path: () => `${org()}/projects/`,
      body: { name: "P", timezone: "Mars/Olympus" },
      status: 400,
    },
  },
  {
    what: "a time zone in the wrong case",
    type: "Project",
    inputs: { name: "P", timezone: "europe/berlin" },
    property: "timezone",
    reason: /not spelled as the IANA name "Europe\/Berlin"/,
    api: {
      method: "POST",
      path: () => `${org()}/projects/`,
      body: { name: "P", timezone: "europe/berlin" },
      status: 400,
    },
  },
  {
    what: "a 2 MiB description",
    type: "Dashboard",
    inputs: { name: "T", description: "d".repeat(2 * MiB) },
    property: "description",
    reason: /too large: .* over the API's limit of 1,048,576 bytes \(1 MiB\)/,
    api: {
      method: "POST",
      path: () => `${dash()}/`,
      body: { name: "T", description: "d".repeat(2 * MiB) },
      status: 413,
    },
  },
  {
    what: "template JSON over 1 MiB",
    type: "Dashboard",
    inputs: { name: "T", templateJson: { ...template, dashboard_description: "d".repeat(MiB) } },
    property: "templateJson",
    reason: /over the API's limit of 1,048,576 bytes/,
  },
  {
    what: "an invitee's e-mail over 254 characters",
    type: "Invite",
    inputs: { targetEmail: `${"j".repeat(250)}@example.com` },
    property: "targetEmail",
    reason: /at most 254 characters/,
    api: {
      method: "POST",
      path: () => `${org()}/invites/`,
      body: { target_email: `${"j".repeat(250)}@example.com` },
      status: 400,
    },
  },
  {
    what: "a SAML entity id over 512 characters",
    type: "Domain",
    inputs: { domain: "saml.example.com", samlEntityId: `https://idp.example.com/${"e".repeat(500)}` },
    property: "samlEntityId",
    reason: /at most 512 characters/,
    api: {
      method: "POST",
      path: () => `${org()}/domains/`,
      body: { domain: "saml.example.com", saml_entity_id: `https://idp.example.com/${"e".repeat(500)}` },
      status: 400,
    },
  },
  {
    what: "a product description over 1,000 characters",
    type: "Project",
    inputs: { name: "P", productDescription: "p".repeat(1001) },
    property: "productDescription",
    reason: /at most 1,000 characters/,
    api: {
      method: "POST",
      path: () => `${org()}/projects/`,
      body: { name: "P", product_description: "p".repeat(1001) },
      status: 400,
    },
  },
  {
    what: "an app URL over 200 characters (PostHog stores varchar(200))",
    type: "Project",
    inputs: { name: "P", appUrls: [`https://app.example.com/${"u".repeat(180)}`] },
    property: "appUrls.0",
    reason: /at most 200 characters/,
  },
  {
    what: "a TEXT tile body over 4,000 characters",
    type: "Dashboard",
    inputs: { name: "T", templateJson: { ...template, tiles: [{ type: "TEXT", body: "b".repeat(4001) }] } },
    property: "templateJson.tiles.0.body",
    reason: /at most 4,000 characters/,
  },
];

describe("check refuses what the API would refuse for its form (no request), naming the property and the limit", () => {
  for (const c of cases) {
    it(c.what, async () => {
      await emu.control("DELETE", "/requests");
      const r = await check(c.type, c.inputs);
      expect(r.failures).toEqual([{ property: c.property, reason: expect.stringMatching(c.reason) }]);
      expect(await emu.requests()).toEqual([]);
      if (c.api) {
        // What `up` met before: the API refuses the same value (the 413 names no property).
        const answer = await emu.api(c.api.method, c.api.path(), c.api.body);
        expect(answer.status).toBe(c.api.status);
      }
    });
  }
});

describe("values at the limits pass check and the API accepts them", () => {
  it("check's body limit is the one the emulator enforces", () => {
    expect(BODY_LIMIT_BYTES).toBe(EMULATOR_BODY_LIMIT);
  });

  it("a 128-character domain, a 512-character SAML entity id", async () => {
    const d = await create(host, "Domain", "edge", {
      domain: domainOf(128),
      samlEntityId: `https://idp.example.com/${"e".repeat(488)}`,
    });
    expect(d.outs.domain).toBe(domainOf(128));
    await destroy(host, d);
  });

  it("255-character tags, a description just under 1 MiB, template JSON with the four required keys", async () => {
    const plain = await create(host, "Dashboard", "edge", {
      name: "Edge",
      tags: ["t".repeat(255)],
      description: "d".repeat(MiB - 1000),
    });
    expect(plain.outs.tags).toEqual(["t".repeat(255)]);
    const fromTemplate = await create(host, "Dashboard", "edge-template", {
      name: "Edge T",
      templateJson: template,
    });
    expect(fromTemplate.outs.name).toBe("Edge T");
    // As PostHog's "save as template" writes an unnamed insight and a text card: nulls where a value is absent.
    const withNulls = await create(host, "Dashboard", "edge-nulls", {
      name: "Edge N",
      templateJson: {
        ...template,
        tiles: [
          { type: "INSIGHT", name: null, description: null, query: { kind: "TrendsQuery" }, layouts: null },
          { type: "TEXT", body: null, layouts: {}, color: null },
        ],
      },
    });
    expect(withNulls.outs.name).toBe("Edge N");
    await destroy(host, plain);
    await destroy(host, fromTemplate);
    await destroy(host, withNulls);
  });

  it('time zones: canonical names, "UTC", aliases such as "Asia/Kolkata" and "US/Eastern", "Etc/GMT+5"', async () => {
    for (const timezone of [
      "Europe/Berlin",
      "UTC",
      "Asia/Kolkata",
      "Asia/Calcutta",
      "US/Eastern",
      "Etc/GMT+5",
    ]) {
      expect((await check("Project", { name: "P", timezone })).failures, timezone).toEqual([]);
    }
    const p = await create(host, "Project", "edge", {
      name: "Edge",
      timezone: "America/New_York",
      productDescription: "p".repeat(1000),
    });
    expect(p.outs).toMatchObject({ timezone: "America/New_York" });
    await destroy(host, p);
  });
});
