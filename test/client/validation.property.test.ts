/**
 * What the client's validation (zod's `safeParse`, once per response and request body, in
 * `provider/client/common.ts`) guarantees, on real bodies the emulator serves (a full project, a page of
 * members, a dashboard with a tile, the typed view of a tile, a page of dashboards, a sharing configuration):
 * - reads through the client give back every field the API sent, unchanged, including fields the schemas
 *   do not declare;
 * - an unknown key added anywhere in a body survives, through transforms too;
 * - a body with one defect (a field of another JSON type, or missing) is either refused with an
 *   UnexpectedResponseError naming that field (method, path, status kept), or, when the schema does not
 *   check that field, given back as sent;
 * - request bodies keep unknown keys and a wrong property is named in an InvalidInputError.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  CollaboratorListSchema,
  DashboardBodySchema,
  DashboardSchema,
  DashboardTileSchema,
  InvalidInputError,
  MemberSchema,
  type PostHogClient,
  ProjectSchema,
  pageSchema,
  SharingResponseSchema,
  SharingSchema,
  UnexpectedResponseError,
} from "../../provider/client";
import { parseBody, parseResponse } from "../../provider/client/common";
import { useEmulator } from "../support/emulator";
import { clientFor } from "./helpers";

const emu = useEmulator();

type Path = (string | number)[];
type Json = unknown;

/** Every node of `v` below the root, with its path (array indices as numbers, as zod reports them). */
function nodes(v: Json, at: Path = []): [Path, Json][] {
  if (typeof v !== "object" || v === null) return [];
  const entries: [string | number, Json][] = Array.isArray(v)
    ? v.map((x, i) => [i, x])
    : Object.entries(v as Record<string, Json>);
  return entries.flatMap(([k, x]) => [[[...at, k], x] as [Path, Json], ...nodes(x, [...at, k])]);
}

/** The objects (not arrays) of `v`, the root included, with their paths. */
function objects(v: Json): Path[] {
  const isObject = (x: Json) => typeof x === "object" && x !== null && !Array.isArray(x);
  return [...(isObject(v) ? [[] as Path] : []), ...nodes(v).flatMap(([p, x]) => (isObject(x) ? [p] : []))];
}

/** A deep copy of `root` with the node at `path` replaced (`value`) or, with `remove`, deleted. */
function edit(root: Json, path: Path, value: Json, remove = false): Json {
  const copy = structuredClone(root);
  let parent = copy as Record<string | number, Json>;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, Json>;
  const last = path[path.length - 1] as string | number;
  if (remove) delete parent[last];
  else parent[last] = value;
  return copy;
}

/** The JSON type of a value: another type is what a defect puts in its place. */
const jsonType = (v: Json) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
const replacements: Json[] = ["text", 12345, 1.5, true, null, {}, [], [1], { a: 1 }];

/** An arbitrary JSON value as an unknown field might carry. */
const anyJson = fc.jsonValue({ maxDepth: 2 });

interface Case {
  name: string;
  schema: z.ZodType;
  body: Json;
  path: string;
}
const cases: Case[] = [];
let client: PostHogClient;
let raw: { project: Json; members: Json; dashboard: Json; sharing: Json };
let ids: { dashboard: number };

beforeAll(async () => {
  const e = emu();
  client = clientFor(e);
  for (let i = 0; i < 12; i++) {
    const r = await e.control("POST", "/users", { email: `v${i}@example.com`, level: 1 });
    expect(r.status).toBeLessThan(300);
  }
  const dashboardsPath = `${e.project}/dashboards/`;
  const created = await e.call("POST", dashboardsPath, {
    body: { name: "Validation", tags: ["a"], use_template: "DEFAULT_APP" },
  });
  expect(created.status).toBe(201);
  ids = { dashboard: created.body.id };
  const get = async (path: string) => {
    const r = await e.call("GET", path);
    expect(r.status).toBe(200);
    return r.body as Json;
  };
  const projectPath = `${e.org}/projects/${e.projectId}/`;
  const membersPath = `${e.org}/members/`;
  const dashboardPath = `${dashboardsPath}${ids.dashboard}/`;
  const sharingPath = `${dashboardPath}sharing/`;
  raw = {
    project: await get(projectPath),
    members: await get(`${membersPath}?limit=100`),
    dashboard: await get(dashboardPath),
    sharing: await get(sharingPath),
  };
  cases.push(
    { name: "a full project", schema: ProjectSchema, body: raw.project, path: projectPath },
    { name: "a page of members", schema: pageSchema(MemberSchema), body: raw.members, path: membersPath },
    // Tiles are free-form objects (a defect in one is given back as sent): one tile keeps the dashboard's own
    // fields a large share of the defects; the tile's typed view is checked on its own.
    {
      name: "a dashboard with a tile",
      schema: DashboardSchema,
      body: { ...(raw.dashboard as object), tiles: (raw.dashboard as { tiles: Json[] }).tiles.slice(0, 1) },
      path: dashboardPath,
    },
    {
      name: "a dashboard tile (its typed view)",
      schema: DashboardTileSchema,
      body: (raw.dashboard as { tiles: Json[] }).tiles[0],
      path: dashboardPath,
    },
    {
      name: "a page of dashboards",
      schema: pageSchema(DashboardSchema),
      body: await get(dashboardsPath),
      path: dashboardsPath,
    },
    { name: "a sharing configuration", schema: SharingSchema, body: raw.sharing, path: sharingPath },
  );
});

describe("responses through the client", () => {
  it("give back every field the API sent, unchanged, including fields the schemas do not declare", async () => {
    expect((raw.dashboard as { tiles: unknown[] }).tiles.length).toBeGreaterThan(0);
    expect((raw.members as { results: unknown[] }).results.length).toBeGreaterThan(12);
    const project = await client.projects.retrieve({ id: emu().projectId });
    expect(project).toStrictEqual(raw.project);
    const undeclared = Object.keys(raw.project as object).filter((k) => !(k in ProjectSchema.shape));
    expect(undeclared.length).toBeGreaterThan(0);
    for (const k of undeclared) expect(project).toHaveProperty([k], (raw.project as Record<string, Json>)[k]);
    expect(await client.members.list({ limit: 100 })).toStrictEqual(raw.members);
    expect(await client.dashboards.retrieve({ id: ids.dashboard })).toStrictEqual(raw.dashboard);
    // a never-enabled dashboard's access_token changes on every read (as in PostHog)
    expect(await client.sharing.retrieve({ dashboardId: ids.dashboard })).toStrictEqual({
      ...(raw.sharing as object),
      access_token: expect.any(String),
    });
  });
});

describe("parseResponse on the emulator's bodies", () => {
  it("keeps an unknown key added at any depth", () => {
    for (const c of cases) {
      const at = objects(c.body);
      expect(at.length).toBeGreaterThan(0);
      fc.assert(
        fc.property(fc.constantFrom(...at), fc.string({ minLength: 1, maxLength: 8 }), anyJson, (p, k, v) => {
          const key = `x_${k}`; // never a declared field, never `__proto__`
          const body = edit(c.body, [...p, key], v);
          const out = parseResponse(c.schema, { status: 200, body }, "GET", c.path);
          expect(out, c.name).toStrictEqual(body);
        }),
        { numRuns: 100 },
      );
    }
  });

  it("names the field of a one-defect body, or gives the body back when the schema does not check that field", () => {
    for (const c of cases) {
      const at = nodes(c.body);
      let refused = 0;
      let kept = 0;
      fc.assert(
        fc.property(
          fc.constantFrom(...at),
          fc.constantFrom(...replacements),
          fc.boolean(),
          ([p, old], replacement, remove) => {
            const removable = remove && typeof p[p.length - 1] === "string";
            if (!removable && jsonType(replacement) === jsonType(old)) return; // not a defect
            const body = edit(c.body, p, replacement, removable);
            let out: unknown;
            try {
              out = parseResponse(c.schema, { status: 200, body }, "GET", c.path);
            } catch (err) {
              expect(err).toBeInstanceOf(UnexpectedResponseError);
              const e = err as UnexpectedResponseError;
              expect([e.method, e.path, e.status]).toEqual(["GET", c.path, 200]);
              // the named field is the edited one, the object or union that holds it, or (when an object
              // replaced null or a scalar) a field of the object put there
              const named = /unexpected response shape: ([^:]*):/.exec(e.message)?.[1];
              expect(named, e.message).toBeDefined();
              const edited = p.join(".");
              const holds =
                named === "(body)" ||
                edited === named ||
                edited.startsWith(`${named}.`) ||
                `${named}`.startsWith(`${edited}.`);
              expect(holds, `${e.message} (edited: ${edited})`).toBe(true);
              refused++;
              return;
            }
            expect(out).toStrictEqual(body);
            kept++;
          },
        ),
        { numRuns: 300 },
      );
      // both outcomes are reached: the schema checks fields, and leaves others (unknown ones) alone
      expect(refused, c.name).toBeGreaterThan(10);
      expect(kept, c.name).toBeGreaterThan(0);
    }
  });

  it("applies transforms, keeping unknown keys through them", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 8 }), anyJson, (k, v) => {
        const sharing = { ...(raw.sharing as object), [`x_${k}`]: v };
        // an array of one (the OpenAPI's shape) becomes the object
        expect(
          parseResponse(SharingResponseSchema, { status: 200, body: [sharing] }, "GET", "/s/"),
        ).toStrictEqual(sharing);
        // one collaborator object (the seed's shape) becomes a list of one
        const collaborator = {
          id: "c1",
          dashboard_id: ids.dashboard,
          level: 37,
          [`x_${k}`]: v,
          user: {
            ...((raw.members as { results: { user: object }[] }).results[0]?.user ?? {}),
          },
        };
        const list = parseResponse(CollaboratorListSchema, { status: 200, body: collaborator }, "GET", "/c/");
        expect(list).toStrictEqual([collaborator]);
      }),
      { numRuns: 50 },
    );
  });
});

describe("request bodies (parseBody)", () => {
  it("keep unknown keys, and a wrong property is named before any request", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 8 }),
        anyJson,
        fc.constantFrom(...replacements),
        (k, v, bad) => {
          const body = { name: "Dashboard", tags: ["a"], pinned: true, [`x_${k}`]: v };
          expect(parseBody(DashboardBodySchema, body, "body")).toStrictEqual(body);
          if (typeof bad === "string" || bad === null) return; // a name may be a string or null
          const wrong = { ...body, name: bad };
          expect(() => parseBody(DashboardBodySchema, wrong, "body")).toThrow(InvalidInputError);
          try {
            parseBody(DashboardBodySchema, wrong, "body");
          } catch (err) {
            expect((err as InvalidInputError).property).toBe("body.name");
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});
