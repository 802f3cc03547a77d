import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../emulator/index";
import { startTestEmulator, type TestEmulator, withEmulator } from "../support/emulator";

// Issue 12, point 10: the emulator never half-applies a write, refuses what the real service cannot
// store (deep nesting, invalid UTF-8, NUL, lone surrogates) and malformed URLs with the error shape,
// and builds pagination links that stay exact for any offset.

const shape = (type: string, code: string, detail: string, attr: string | null = null) => ({
  type,
  code,
  detail,
  attr,
});

const serverError = shape("server_error", "error", "A server error occurred.");
const badUrl = shape(
  "invalid_request",
  "bad_request",
  "Malformed percent-encoding or invalid UTF-8 in the URL.",
);

/** `{"a":{"a":…{}…}}` nesting `levels` objects (built as text: JSON.stringify of it may overflow). */
const nestedObjects = (levels: number): string => `${'{"a":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`;

const dashboardNames = async (e: TestEmulator): Promise<string[]> =>
  (await e.call("GET", `${e.project}/dashboards/`)).body.results.map((d: { name: string }) => d.name);

/** Sends raw bytes as an application/json body (the helper's `raw` is a JS string, always valid UTF-8). */
const sendBytes = async (e: TestEmulator, method: "POST" | "PATCH", path: string, bytes: Buffer) => {
  const response = await request(`${e.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${e.apiKey}`, "content-type": "application/json" },
    body: bytes,
  });
  return { status: response.statusCode, body: (await response.body.json()) as unknown };
};

/** Runs `fn` with a fresh emulator that saves to a state file in its own temporary directory. */
const withStateFile = async (fn: (e: TestEmulator, dir: string, stateFile: string) => Promise<void>) => {
  const dir = mkdtempSync(join(tmpdir(), "posthog-emulator-integrity-"));
  const stateFile = join(dir, "state.json");
  const e = await startTestEmulator({ stateFile });
  try {
    await fn(e, dir, stateFile);
  } finally {
    await e.close();
    rmSync(dir, { recursive: true, force: true });
  }
};

const savedNames = (stateFile: string): string[] =>
  (JSON.parse(readFileSync(stateFile, "utf8")) as { dashboards: { name: string }[] }).dashboards.map(
    (d) => d.name,
  );

describe("nesting depth", () => {
  it("answers a body nested beyond MAX_JSON_DEPTH 400 parse_error, stores nothing, and later writes reach the state file", async () => {
    await withStateFile(async (e, _dir, stateFile) => {
      const url = `${e.project}/dashboards/`;
      // The body: filters nested 4,500 levels deep (27 KB).
      const deep = await e.call("POST", url, { raw: `{"name":"Deep","filters":${nestedObjects(4500)}}` });
      expect(deep.status).toBe(400);
      expect(deep.body).toEqual(
        shape(
          "invalid_request",
          "parse_error",
          `JSON parse error - Nesting deeper than ${MAX_JSON_DEPTH} levels.`,
        ),
      );
      // One level over the limit, in a field the serializer would drop, is refused as well.
      const over = await e.call("POST", url, {
        raw: `{"name":"Over","unknown":${nestedObjects(MAX_JSON_DEPTH)}}`,
      });
      expect(over.status).toBe(400);
      expect(over.body.code).toBe("parse_error");
      const arrays = await e.call("POST", url, {
        raw: `${"[".repeat(MAX_JSON_DEPTH + 1)}${"]".repeat(MAX_JSON_DEPTH + 1)}`,
      });
      expect(arrays.status).toBe(400);
      expect(arrays.body.code).toBe("parse_error");
      expect(await dashboardNames(e)).toEqual([]);
      // The next writes are applied and saved.
      const next = await e.call("POST", url, { body: { name: "After" } });
      expect(next.status).toBe(201);
      expect(savedNames(stateFile)).toEqual(["After"]);
      const patched = await e.call("PATCH", `${url}${next.body.id}/`, { body: { description: "saved" } });
      expect(patched.status).toBe(200);
      expect(readFileSync(stateFile, "utf8")).toContain('"description":"saved"');
    });
  });

  it("accepts a body exactly MAX_JSON_DEPTH levels deep: stored, served, patched and soft-deleted", async () => {
    await withStateFile(async (e, _dir, stateFile) => {
      const url = `${e.project}/dashboards/`;
      // The body object is level 1, so filters may nest MAX_JSON_DEPTH - 1 levels.
      const filters = nestedObjects(MAX_JSON_DEPTH - 1);
      const created = await e.call("POST", url, { raw: `{"name":"AtLimit","filters":${filters}}` });
      expect(created.status).toBe(201);
      const got = await e.call("GET", `${url}${created.body.id}/`);
      expect(got.status).toBe(200);
      expect(JSON.stringify(got.body.filters)).toBe(filters);
      const deleted = await e.call("PATCH", `${url}${created.body.id}/`, { body: { deleted: true } });
      expect(deleted.status).toBe(200);
      expect(deleted.body.deleted).toBe(true);
      expect(readFileSync(stateFile, "utf8")).toContain(filters);
    });
  });
});

describe("atomic writes", () => {
  it("a write whose state file cannot be saved answers 500 and is applied nowhere; the next write is applied everywhere", async () => {
    await withStateFile(async (e, dir, stateFile) => {
      const url = `${e.project}/dashboards/`;
      expect((await e.call("POST", url, { body: { name: "A" } })).status).toBe(201);
      const a = (await e.call("GET", url)).body.results[0];
      rmSync(dir, { recursive: true, force: true }); // saving now fails (ENOENT)
      const lost = await e.call("POST", url, { body: { name: "B" } });
      expect(lost.status).toBe(500);
      expect(lost.body).toEqual(serverError);
      const patch = await e.call("PATCH", `${url}${a.id}/`, { body: { name: "A2", deleted: true } });
      expect(patch.status).toBe(500);
      // Control-plane writes to the world follow the same rule.
      const user = await e.control("POST", "/users", { email: "lost@example.com", level: 1 });
      expect(user.status).toBe(500);
      expect(user.body).toEqual(serverError);
      expect(await dashboardNames(e)).toEqual(["A"]);
      const members = (await e.call("GET", `${e.org}/members/`)).body.results;
      expect(members.map((m: { user: { email: string } }) => m.user.email)).not.toContain("lost@example.com");
      mkdirSync(dir); // saving works again
      expect((await e.call("POST", url, { body: { name: "C" } })).status).toBe(201);
      expect(await dashboardNames(e)).toEqual(["A", "C"]);
      expect(savedNames(stateFile)).toEqual(["A", "C"]);
      expect(readFileSync(stateFile, "utf8")).not.toContain("lost@example.com");
    });
  });
});

describe("text the real service refuses", () => {
  it("answers a body that is not valid UTF-8 400 parse_error and stores nothing", async () => {
    await withEmulator(async (e) => {
      const url = `${e.project}/dashboards/`;
      const invalid = [
        [0xff], // never valid
        [0xc0, 0x80], // overlong NUL
        [0xed, 0xa0, 0x80], // an encoded surrogate
        [0xe2, 0x82], // truncated sequence
      ];
      for (const bytes of invalid) {
        const body = Buffer.concat([Buffer.from('{"name":"x'), Buffer.from(bytes), Buffer.from('"}')]);
        const res = await sendBytes(e, "POST", url, body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(
          shape("invalid_request", "parse_error", "JSON parse error - Request body is not valid UTF-8."),
        );
      }
      expect(await dashboardNames(e)).toEqual([]);
      // Valid multi-byte UTF-8 is accepted; a byte order mark stays a parse error, as in Python.
      const ok = await sendBytes(e, "POST", url, Buffer.from('{"name":"Grüße 📊"}', "utf8"));
      expect(ok.status).toBe(201);
      const bom = await sendBytes(e, "POST", url, Buffer.from('\ufeff{"name":"bom"}', "utf8"));
      expect(bom.status).toBe(400);
      expect(await dashboardNames(e)).toEqual(["Grüße 📊"]);
    });
  });

  it("refuses NUL characters in every accepted string and JSON key with null_characters_not_allowed", async () => {
    await withEmulator(async (e) => {
      const nul = (attr: string) =>
        shape("validation_error", "null_characters_not_allowed", "Null characters are not allowed.", attr);
      const dash = `${e.project}/dashboards/`;
      const cases: [string, string, unknown, string][] = [
        ["POST", dash, { name: "a\u0000b" }, "name"],
        ["POST", dash, { name: "ok", filters: { date: ["-7d", "x\u0000"] } }, "filters__date__1"],
        ["POST", dash, { name: "ok", filters: { "k\u0000": 1 } }, "filters__k\u0000"],
        ["POST", `${e.org}/invites/`, { target_email: "n@example.com", first_name: "\u0000" }, "first_name"],
        [
          "POST",
          `${e.org}/invites/bulk/`,
          [{ target_email: "m@example.com" }, { target_email: "o@example.com", message: "\u0000" }],
          "1__message",
        ],
        ["POST", `${e.org}/projects/`, { name: "P\u0000" }, "name"],
      ];
      for (const [method, path, body, attr] of cases) {
        const res = await e.call(method, path, { body });
        expect(res.status, `${path} ${attr}`).toBe(400);
        expect(res.body).toEqual(nul(attr));
      }
      expect(await dashboardNames(e)).toEqual([]);
      expect((await e.call("GET", `${e.org}/invites/`)).body.count).toBe(0);
      // A PATCH with NUL leaves the dashboard as it was.
      const created = await e.call("POST", dash, { body: { name: "Kept" } });
      const patch = await e.call("PATCH", `${dash}${created.body.id}/`, { body: { description: "\u0000" } });
      expect(patch.body).toEqual(nul("description"));
      expect((await e.call("GET", `${dash}${created.body.id}/`)).body.description).toBe("");
      // Fields the serializer ignores are not checked, as in the real service.
      expect((await e.call("POST", dash, { body: { name: "Other", ignored: "\u0000" } })).status).toBe(201);
    });
  });

  it("refuses lone UTF-16 surrogates with DRF's surrogate_characters_not_allowed; pairs are fine", async () => {
    await withEmulator(async (e) => {
      const url = `${e.project}/dashboards/`;
      const lone = await e.call("POST", url, { raw: '{"name":"a\\ud800b"}' });
      expect(lone.status).toBe(400);
      expect(lone.body).toEqual(
        shape(
          "validation_error",
          "surrogate_characters_not_allowed",
          "Surrogate characters are not allowed: U+D800.",
          "name",
        ),
      );
      const low = await e.call("POST", url, { raw: '{"name":"x","tags":["\\udc00"]}' });
      expect(low.body.code).toBe("surrogate_characters_not_allowed");
      expect(low.body.attr).toBe("tags__0");
      const pair = await e.call("POST", url, { raw: '{"name":"\\ud83d\\udcca"}' });
      expect(pair.status).toBe(201);
      expect(await dashboardNames(e)).toEqual(["📊"]);
    });
  });
});

describe("malformed URLs", () => {
  it("answers malformed percent-encoding and percent-encoded invalid UTF-8 400 with the error shape", async () => {
    await withEmulator(async (e) => {
      const paths = [
        "/api/projects/%E0%A4%A/dashboards/",
        "/api/projects/1001/dashboards/%ZZ/",
        "/api/projects/%FF/dashboards/",
        `${e.org}/members/%ED%A0%80/`,
        "/api/nothing/%/",
        `${e.project}/dashboards/?limit=%ZZ`,
        `${e.project}/dashboards/?name=%FF`,
        `${e.org}/members/?q=%E0%A4`,
        "/_emulator/requests?x=%",
      ];
      for (const path of paths) {
        for (const method of ["GET", "POST"]) {
          const res = await e.call(method, path, method === "POST" ? { body: { name: "x" } } : {});
          expect(res.status, `${method} ${path}`).toBe(400);
          expect(res.body, `${method} ${path}`).toEqual(badUrl);
        }
      }
      expect(await dashboardNames(e)).toEqual([]);
      // Well-formed encodings keep working.
      expect((await e.call("GET", "/api/projects/%40current/dashboards/?name=%C3%A9+x")).status).toBe(200);
      // An over-long id reaches its handler (no router limit of its own): the real 404.
      const long = await e.call("GET", `/api/projects/${"1".repeat(300)}/dashboards/`);
      expect(long.status).toBe(404);
      expect(long.body).toEqual(shape("invalid_request", "not_found", "Project not found."));
    });
  });
});

describe("pagination links for any offset", () => {
  const params = (link: string): { limit: string | null; offset: string | null } => {
    const url = new URL(link);
    return { limit: url.searchParams.get("limit"), offset: url.searchParams.get("offset") };
  };

  it("keeps limit and offset exact past the end and for huge numbers, and the links can be followed", async () => {
    await withEmulator(async (e) => {
      for (const name of ["D0", "D1", "D2"])
        await e.call("POST", `${e.project}/dashboards/`, { body: { name } });
      const base = `${e.url}${e.project}/dashboards/`;
      const page = async (query: string) => (await e.call("GET", `${e.project}/dashboards/?${query}`)).body;

      const past = await page("limit=2&offset=10");
      expect(past).toMatchObject({ count: 3, next: null, results: [] });
      expect(past.previous).toBe(`${base}?limit=2&offset=8`);
      const back = (await e.call("GET", past.previous)).body;
      expect(back.previous).toBe(`${base}?limit=2&offset=6`);

      const huge = await page("limit=2&offset=99999999999999999999999");
      expect(huge).toMatchObject({ count: 3, next: null, results: [] });
      expect(huge.previous).toBe(`${base}?limit=2&offset=99999999999999999999997`);
      expect((await e.call("GET", huge.previous)).body.previous).toBe(
        `${base}?limit=2&offset=99999999999999999999995`,
      );
      // Just past 2^53: no rounding.
      expect((await page("limit=2&offset=9007199254740993")).previous).toBe(
        `${base}?limit=2&offset=9007199254740991`,
      );
      const hugeLimit = await page("limit=99999999999999999999999&offset=1");
      expect(hugeLimit.results.map((d: { name: string }) => d.name)).toEqual(["D1", "D2"]);
      expect(hugeLimit.next).toBeNull();
      expect(hugeLimit.previous).toBe(`${base}?limit=99999999999999999999999`);
      // Leading zeros are read as the number and written canonically.
      expect((await page("limit=002&offset=0005")).previous).toBe(`${base}?limit=2&offset=3`);
    });
  });

  it("property: for any limit and offset, next/previous carry exactly offset ± limit as plain decimals", async () => {
    await withEmulator(async (e) => {
      for (const name of ["D0", "D1", "D2", "D3", "D4"])
        await e.call("POST", `${e.project}/dashboards/`, { body: { name } });
      const count = 5n;
      const big = fc.oneof(fc.bigInt({ min: 0n, max: 12n }), fc.bigInt({ min: 0n, max: 10n ** 40n }));
      await fc.assert(
        fc.asyncProperty(
          big.filter((n) => n > 0n),
          big,
          async (limit, offset) => {
            const res = await e.call("GET", `${e.project}/dashboards/?limit=${limit}&offset=${offset}`);
            expect(res.status).toBe(200);
            const body = res.body;
            const expectedResults =
              offset >= count ? 0 : Number((offset + limit > count ? count : offset + limit) - offset);
            expect(body.results).toHaveLength(expectedResults);
            if (offset + limit < count) {
              expect(params(body.next)).toEqual({ limit: String(limit), offset: String(offset + limit) });
            } else {
              expect(body.next).toBeNull();
            }
            if (offset === 0n) expect(body.previous).toBeNull();
            else if (offset - limit <= 0n)
              expect(params(body.previous)).toEqual({ limit: String(limit), offset: null });
            else
              expect(params(body.previous)).toEqual({ limit: String(limit), offset: String(offset - limit) });
            for (const link of [body.next, body.previous]) {
              if (link === null) continue;
              const { limit: l, offset: o } = params(link);
              expect(l).toMatch(/^[1-9]\d*$/);
              if (o !== null) expect(o).toMatch(/^[1-9]\d*$/);
              expect((await e.call("GET", link)).status).toBe(200);
            }
          },
        ),
        { numRuns: 60 },
      );
    });
  });
});
