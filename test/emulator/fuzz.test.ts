import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RESERVED_KEYS } from "../../emulator/runtime";
import { useEmulator } from "../support/emulator";

// The invite budget (50 invites an hour, counted before validation as DRF's throttles are) is off: these
// properties send dozens of invalid invites to one organization (test/emulator/invite-budget.test.ts covers it).
const emu = useEmulator({ inviteBudget: false });

const isErrorShape = (body: unknown): boolean => {
  if (typeof body !== "object" || body === null) return false;
  const b = body as Record<string, unknown>;
  return (
    typeof b.type === "string" &&
    typeof b.code === "string" &&
    typeof b.detail === "string" &&
    (b.attr === null || typeof b.attr === "string")
  );
};

const writeRoutes = (org: string, project: string): [string, string][] => [
  ["POST", `${org}/domains/`],
  ["POST", `${org}/invites/`],
  ["POST", `${org}/invites/bulk/`],
  ["POST", `${org}/projects/`],
  ["POST", `${project}/dashboards/`],
  ["POST", `${project}/dashboards/create_from_template_json/`],
  ["PATCH", `${project}/dashboards/999999/`],
  ["PATCH", `${project}/dashboards/1/sharing/`],
  ["POST", `${project}/dashboards/1/collaborators/`],
  ["POST", `${org}/batch_exports/00000000-0000-4000-8000-000000000000/pause/`],
];

// Values whose type is wrong for every field of every schema (no string, boolean, number or null). Their keys are
// never __proto__, constructor or prototype (fast-check makes them now and then), which are refused before the
// field's type is looked at (reserved-keys.test.ts).
const wrongTyped = fc.oneof(
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(
    fc.string().filter((key) => !RESERVED_KEYS.includes(key)),
    fc.integer(),
    { maxKeys: 2 },
  ),
);

describe("fuzz (fast-check)", () => {
  it("malformed JSON always gets 400 parse_error with the error shape", async () => {
    const e = emu();
    const routes = writeRoutes(e.org, e.project);
    const malformed = fc.string({ maxLength: 200 }).filter((s) => {
      if (s.trim() === "") return false;
      try {
        JSON.parse(s);
        return false;
      } catch {
        return true;
      }
    });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), malformed, async ([method, path], raw) => {
        const res = await e.call(method, path, { raw });
        expect(res.status).toBe(400);
        expect(isErrorShape(res.body)).toBe(true);
        expect(res.body.code).toBe("parse_error");
      }),
      { numRuns: 60 },
    );
  });

  it("arbitrary JSON bodies never crash the server: 2xx/4xx, and every 4xx has the error shape", async () => {
    const e = emu();
    const routes = writeRoutes(e.org, e.project);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.jsonValue({ maxDepth: 3 }),
        async ([method, path], body) => {
          const res = await e.call(method, path, { raw: JSON.stringify(body) });
          expect(res.status).toBeLessThan(500);
          if (res.status >= 400 && res.status !== 405) expect(isErrorShape(res.body)).toBe(true);
        },
      ),
      { numRuns: 120 },
    );
  });

  it("a wrongly typed field gets a 400 validation_error naming it, and nothing is written", async () => {
    const e = emu();
    const fields: [string, string][] = [
      [`${e.org}/domains/`, "domain"],
      [`${e.org}/invites/`, "target_email"],
      [`${e.org}/projects/`, "name"],
      [`${e.org}/projects/`, "anonymize_ips"],
      [`${e.project}/dashboards/`, "pinned"],
      [`${e.project}/dashboards/`, "restriction_level"],
    ];
    const before = (await e.call("GET", `${e.project}/dashboards/`)).body.count;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...fields), wrongTyped, async ([path, field], value) => {
        const res = await e.call("POST", path, { body: { [field]: value } });
        expect(res.status).toBe(400);
        expect(isErrorShape(res.body)).toBe(true);
        expect(res.body.type).toBe("validation_error");
        expect(res.body.attr).toBe(field);
      }),
      { numRuns: 60 },
    );
    expect((await e.call("GET", `${e.project}/dashboards/`)).body.count).toBe(before);
  });

  it("oversized bodies get 413 with the error shape; the server keeps serving", async () => {
    const e = emu();
    const routes = writeRoutes(e.org, e.project);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.integer({ min: 1024 * 1024 + 1, max: 1024 * 1024 + 4096 }),
        async ([method, path], size) => {
          const res = await e.call(method, path, { raw: `{"pad":"${"x".repeat(size)}"}` });
          expect(res.status).toBe(413);
          expect(isErrorShape(res.body)).toBe(true);
        },
      ),
      { numRuns: 8 },
    );
    expect((await e.call("GET", `${e.org}/members/`)).status).toBe(200);
  });

  it("random paths and methods under /api answer with a status < 500 and the error shape for errors", async () => {
    const e = emu();
    const segment = fc.oneof(
      fc.constantFrom(
        "dashboards",
        "domains",
        "members",
        "@current",
        "1001",
        "sharing",
        "verify",
        "..",
        "%2F",
      ),
      fc.stringMatching(/^[a-z0-9_@-]{1,12}$/),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "POST", "PATCH", "DELETE", "PUT"),
        fc.constantFrom("/api/organizations/", "/api/projects/"),
        fc.array(segment, { minLength: 1, maxLength: 5 }),
        async (method, prefix, segments) => {
          const res = await e.call(
            method,
            `${prefix}${segments.join("/")}/`,
            method === "GET" ? {} : { body: {} },
          );
          expect(res.status).toBeLessThan(500);
          if (res.status >= 400 && res.text !== "") expect(isErrorShape(res.body)).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
  });
});
