/**
 * Issue 28, item 2: text PostHog refuses, refused by `check` (so by a preview) through the real dynamic-provider
 * host over gRPC, naming the property, with no HTTP request; and the API (the emulator) refuses the same value, so
 * the check mirrors it. NUL characters and lone UTF-16 surrogates in any text (names, descriptions, tags, the text
 * and keys inside template JSON) and template JSON nested deeper than PostHog accepts. Before the fix `check`
 * passed them all and `up` got a 400.
 */
import { describe, expect, it } from "vitest";
import { MAX_INPUT_DEPTH } from "../../provider/framework/text";
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
/** Template JSON of one TEXT tile with `body`, and dashboard filters of `levels` nested objects. */
const template = (body: string, levels = 1, filterKey = "f") => {
  let filters: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) filters = { [filterKey]: filters };
  return {
    template_name: "T",
    dashboard_description: "",
    dashboard_filters: filters,
    tiles: [{ type: "TEXT", body }],
  };
};

async function check(type: string, inputs: Record<string, unknown>) {
  const provider = await serializeProvider(type);
  return host.check(urnOf(type, "text"), {}, { ...inputs, __provider: provider });
}

interface Case {
  what: string;
  type: string;
  inputs: Record<string, unknown>;
  property: string;
  reason: RegExp;
  /** The request `up` would send, which the API refuses with a 400. */
  api: { method: string; path: () => string; body: unknown };
}

const cases: Case[] = [
  {
    what: "a NUL in a project's name",
    type: "Project",
    inputs: { name: "We\u0000b" },
    property: "name",
    reason: /NUL character \(U\+0000\) at position 2/,
    api: { method: "POST", path: () => `${org()}/projects/`, body: { name: "We\u0000b" } },
  },
  {
    what: "a lone surrogate in a dashboard's description",
    type: "Dashboard",
    inputs: { name: "D", description: "the first half \ud83d" },
    property: "description",
    reason: /lone surrogate U\+D83D at position 15/,
    api: {
      method: "POST",
      path: () => `${dash()}/`,
      body: { name: "D", description: "the first half \ud83d" },
    },
  },
  {
    what: "a NUL in a tag",
    type: "Dashboard",
    inputs: { name: "D", tags: ["ok", "t\u0000"] },
    property: "tags.1",
    reason: /NUL character/,
    api: { method: "POST", path: () => `${dash()}/`, body: { name: "D", tags: ["ok", "t\u0000"] } },
  },
  {
    what: "a lone surrogate in an invite's first name",
    type: "Invite",
    inputs: { targetEmail: "sur@example.com", firstName: "J\udc00", sendEmail: false },
    property: "firstName",
    reason: /lone surrogate U\+DC00/,
    api: {
      method: "POST",
      path: () => `${org()}/invites/`,
      body: { target_email: "sur@example.com", first_name: "J\udc00", send_email: false },
    },
  },
  {
    what: "a NUL in the text of template JSON given as a string",
    type: "Dashboard",
    inputs: { name: "T", templateJson: JSON.stringify(template("a\u0000b")) },
    property: "templateJson.tiles.0.body",
    reason: /NUL character/,
    api: {
      method: "POST",
      path: () => `${dash()}/create_from_template_json/`,
      body: { template: template("a\u0000b") },
    },
  },
  {
    what: "a lone surrogate in a key of template JSON",
    type: "Dashboard",
    inputs: { name: "T", templateJson: JSON.stringify(template("ok", 2, "k\udfff")) },
    property: 'templateJson.dashboard_filters."k\\udfff"',
    reason: /the key contains a lone surrogate U\+DFFF/,
    api: {
      method: "POST",
      path: () => `${dash()}/create_from_template_json/`,
      body: { template: template("ok", 2, "k\udfff") },
    },
  },
  {
    what: "a lone surrogate in the text of template JSON given as a string",
    type: "Dashboard",
    inputs: { name: "T", templateJson: JSON.stringify(template("x\udfffy")) },
    property: "templateJson.tiles.0.body",
    reason: /lone surrogate U\+DFFF at position 1/,
    api: {
      method: "POST",
      path: () => `${dash()}/create_from_template_json/`,
      body: { template: template("x\udfffy") },
    },
  },
  {
    what: "template JSON given as a string nested one level deeper than PostHog accepts",
    type: "Dashboard",
    inputs: { name: "T", templateJson: JSON.stringify(template("ok", MAX_INPUT_DEPTH)) },
    property: "templateJson",
    reason: new RegExp(
      `nested deeper than PostHog accepts: templateJson\\.dashboard_filters(\\.f)+ is at level ${MAX_INPUT_DEPTH + 1}`,
    ),
    api: {
      method: "POST",
      path: () => `${dash()}/create_from_template_json/`,
      body: { template: template("ok", MAX_INPUT_DEPTH) },
    },
  },
  {
    what: "template JSON nested one level deeper than PostHog accepts",
    type: "Dashboard",
    inputs: { name: "T", templateJson: template("ok", MAX_INPUT_DEPTH) },
    property: "templateJson",
    reason: new RegExp(
      `nested deeper than PostHog accepts: templateJson\\.dashboard_filters(\\.f)+ is at level ${MAX_INPUT_DEPTH + 1}`,
    ),
    api: {
      method: "POST",
      path: () => `${dash()}/create_from_template_json/`,
      body: { template: template("ok", MAX_INPUT_DEPTH) },
    },
  },
];

describe("check refuses the text PostHog refuses (no request), naming the property; the API refuses it too", () => {
  for (const c of cases) {
    it(c.what, async () => {
      await emu.control("DELETE", "/requests");
      const r = await check(c.type, c.inputs);
      expect(r.failures).toEqual([{ property: c.property, reason: expect.stringMatching(c.reason) }]);
      expect(await emu.requests()).toEqual([]);
      // What `up` met before: the API refuses the same value.
      const answer = await emu.api(c.api.method, c.api.path(), c.api.body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    });
  }
});

describe("at the limits: check passes and the API accepts", () => {
  it("template JSON nested as deep as PostHog accepts; surrogate pairs (emoji) and other control characters", async () => {
    const deep = template("ok", MAX_INPUT_DEPTH - 1);
    expect((await check("Dashboard", { name: "Deep", templateJson: deep })).failures ?? []).toEqual([]);
    const d = await create(host, "Dashboard", "deep", { name: "Deep", templateJson: deep });
    expect(d.outs.name).toBe("Deep");
    const text = "📈 tabs\tand\u0001control";
    const e = await create(host, "Dashboard", "emoji", { name: text, tags: [text], description: text });
    expect(e.outs.name).toBe(text);
    await destroy(host, d);
    await destroy(host, e);
  });
});
