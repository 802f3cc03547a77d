import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../support/emulator";

// Issue 49, item 10: keys named __proto__, constructor or prototype, at any depth of a request body, are refused
// with PostHog's 400 validation shape on every endpoint that takes a body, and nothing is stored. Bodies are sent
// as raw text: a JavaScript object literal would turn `__proto__` into a prototype, not a key.

const RESERVED = ["__proto__", "constructor", "prototype"];

const refused = (key: string, attr: string) => ({
  type: "validation_error",
  code: "invalid_input",
  detail: `The key "${key}" is not accepted: keys named __proto__, constructor and prototype are refused at any depth of a request body (remove or rename it).`,
  attr,
});

let e: TestEmulator;
let dir: string;
let stateFile: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "posthog-emulator-reserved-"));
  stateFile = join(dir, "state.json");
  e = await startTestEmulator({ stateFile });
});
afterAll(async () => {
  await e?.close();
  rmSync(dir, { recursive: true, force: true });
});

const dashboards = async () => (await e.call("GET", `${e.project}/dashboards/`)).body.results;
const saved = () => readFileSync(stateFile, "utf8");

describe("keys named __proto__, constructor or prototype", () => {
  it("refuses the issue's two dashboard bodies with PostHog's 400 shape and stores nothing", async () => {
    const url = `${e.project}/dashboards/`;
    const top = await e.call("POST", url, { raw: '{"name": "x", "__proto__": {"polluted": true}}' });
    expect(top.status).toBe(400);
    expect(top.body).toEqual(refused("__proto__", "__proto__"));
    const nested = await e.call("POST", url, {
      raw: '{"name": "y", "filters": {"constructor": {"prototype": {"polluted": true}}}}',
    });
    expect(nested.status).toBe(400);
    expect(nested.body).toEqual(refused("constructor", "filters__constructor"));
    expect(await dashboards()).toEqual([]);
    expect(saved()).not.toMatch(/polluted|__proto__|"constructor"|"prototype"/);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("refuses each of the three keys at the top, nested in objects and inside arrays, naming its path", async () => {
    const url = `${e.project}/dashboards/`;
    for (const key of RESERVED) {
      const cases: [string, string][] = [
        [`{"name": "top", "${key}": 1}`, key],
        [`{"name": "deep", "filters": {"a": {"b": {"${key}": null}}}}`, `filters__a__b__${key}`],
        [
          `{"name": "array", "filters": {"list": [1, {"ok": 2}, {"${key}": []}]}}`,
          `filters__list__2__${key}`,
        ],
        [`{"name": "ignored field", "unknown": {"${key}": "x"}}`, `unknown__${key}`],
      ];
      for (const [raw, attr] of cases) {
        const res = await e.call("POST", url, { raw });
        expect(res.status, raw).toBe(400);
        expect(res.body, raw).toEqual(refused(key, attr));
      }
    }
    // The first such key in document order is named.
    const first = await e.call("POST", url, {
      raw: '{"filters": {"a": {"prototype": 1}}, "constructor": 2, "__proto__": 3}',
    });
    expect(first.body.attr).toBe("filters__a__prototype");
    expect(await dashboards()).toEqual([]);
  });

  it("refuses them on every endpoint that takes a body, the control plane included, before anything changes", async () => {
    const created = await e.call("POST", `${e.project}/dashboards/`, { body: { name: "Kept" } });
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    const requests: [string, string, string, string, string][] = [
      [
        "PATCH",
        `${e.project}/dashboards/${id}/`,
        '{"name": "Renamed", "filters": {"prototype": 1}}',
        "prototype",
        "filters__prototype",
      ],
      [
        "POST",
        `${e.org}/domains/`,
        '{"domain": "proto.example.com", "__proto__": {}}',
        "__proto__",
        "__proto__",
      ],
      [
        "POST",
        `${e.org}/invites/`,
        '{"target_email": "one@example.com", "constructor": {}}',
        "constructor",
        "constructor",
      ],
      [
        "POST",
        `${e.org}/invites/bulk/`,
        '[{"target_email": "two@example.com"}, {"target_email": "three@example.com", "prototype": 1}]',
        "prototype",
        "1__prototype",
      ],
      [
        "PATCH",
        `${e.org}/projects/${e.projectId}/`,
        '{"name": "Renamed", "__proto__": {"is_demo": true}}',
        "__proto__",
        "__proto__",
      ],
      [
        "POST",
        `${e.org}/projects/`,
        '{"name": "Proto", "constructor": {"prototype": {}}}',
        "constructor",
        "constructor",
      ],
      [
        "POST",
        "/_emulator/users",
        '{"email": "proto@example.com", "__proto__": {"level": 15}}',
        "__proto__",
        "__proto__",
      ],
      [
        "POST",
        "/_emulator/dns",
        '{"name": "_posthog-challenge.x.com", "txt": "t", "prototype": 1}',
        "prototype",
        "prototype",
      ],
    ];
    const before = saved();
    for (const [method, path, raw, key, attr] of requests) {
      const res = await e.call(method, path, { raw });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body, `${method} ${path}`).toEqual(refused(key, attr));
    }
    expect(saved()).toBe(before);
    expect((await dashboards()).map((d: { name: string }) => d.name)).toEqual(["Kept"]);
    expect((await e.call("GET", `${e.org}/domains/`)).body.count).toBe(0);
    expect((await e.call("GET", `${e.org}/invites/`)).body.count).toBe(0);
    const projects = (await e.call("GET", `${e.org}/projects/`)).body.results;
    expect(projects.map((p: { name: string }) => p.name)).toEqual(["Default project"]);
  });

  it("authenticates first, as PostHog validates after authentication: no key is 401", async () => {
    const res = await e.call("POST", `${e.project}/dashboards/`, { raw: '{"__proto__": {}}', key: null });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("not_authenticated");
  });

  it("accepts look-alike keys and these words as values", async () => {
    const res = await e.call("POST", `${e.project}/dashboards/`, {
      raw: '{"name": "constructor", "description": "__proto__", "filters": {"Constructor": 1, "__proto": 2, "prototypes": 3, "x": ["prototype"]}}',
    });
    expect(res.status).toBe(201);
    expect(res.body.filters).toEqual({ Constructor: 1, __proto: 2, prototypes: 3, x: ["prototype"] });
  });
});
