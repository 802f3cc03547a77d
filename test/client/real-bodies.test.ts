/**
 * Issue 21, item 1: the client reads every body the live PostHog returns; a field the provider does not manage
 * never fails a response. A fake PostHog (node:http, test/support/fake-posthog.ts) answers the real bodies of
 * test/support/real-bodies.ts: tiles without ids (and their insight and text without ids), a button tile, a tile
 * as the API reference allows it; invites with legacy integer project levels (1, 8), a level "none" and a null
 * `target_email`. The client, and the exporter through its command line, read them over real HTTP.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { main } from "../../provider/cli";
import {
  createClient,
  DashboardTileSchema,
  InvalidInputError,
  type PostHogClient,
} from "../../provider/client";
import { type FakePostHog, startFakePostHog } from "../support/fake-posthog";
import { dashboardDetail, invites, ORG, PROJECT, realRoutes, tiles } from "../support/real-bodies";

let fake: FakePostHog;
let client: PostHogClient;
const work = mkdtempSync(join(tmpdir(), "real-bodies-"));
const API_KEY = "phx_fakefakefakefakefakefake";

beforeAll(async () => {
  fake = await startFakePostHog(realRoutes());
  client = createClient({
    apiKey: API_KEY,
    host: fake.url,
    organizationId: ORG,
    projectId: PROJECT,
    rateLimit: false,
    retry: { maxAttempts: 1 },
  });
});
afterAll(async () => {
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

describe("dashboard tiles are free-form objects", () => {
  it("a detail with id-less tiles, a button tile and a free-form tile is read, every tile unchanged", async () => {
    const d = await client.dashboards.retrieve({ id: 7 });
    expect(d.tiles).toStrictEqual(tiles);
    expect(d).toStrictEqual(dashboardDetail);
  });

  it("the typed view reads PostHog's tiles, ids or not, and refuses the free-form one naming the field", async () => {
    const views = tiles.map((t) => DashboardTileSchema.safeParse(t));
    expect(views.map((v) => v.success)).toEqual([true, true, true, false]);
    expect(views[0]?.data?.insight?.name).toBe("Weekly signups");
    expect(views[0]?.data?.id).toBeUndefined();
    expect(views[1]?.data?.text?.body).toBe("Read me first");
    expect(views[3]?.error?.issues[0]?.path).toEqual(["text"]);
  });
});

describe("invites: legacy project levels, level none, no e-mail", () => {
  it("the list is read whole and unchanged", async () => {
    expect(await client.invites.all()).toStrictEqual(Object.values(invites));
  });

  it("find by e-mail skips the invite without an address; find by id still finds it", async () => {
    expect((await client.invites.find({ email: "LEGACY.admin@example.com" }))?.id).toBe(
      invites.legacyAdmin.id,
    );
    expect(await client.invites.find({ email: "nobody@example.com" })).toBeUndefined();
    expect((await client.invites.find({ id: invites.noEmail.id }))?.target_email).toBeNull();
  });

  it("what is sent stays strict: a legacy level or an unknown name is refused before any request", async () => {
    const before = fake.requests.length;
    for (const level of [8, "viewer"]) {
      const err = await client.invites
        .create({
          body: {
            target_email: "x@example.com",
            private_project_access: [{ id: PROJECT, level: level as "member" }],
          },
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).property).toBe("body.private_project_access.0.level");
    }
    expect(fake.requests.length).toBe(before);
  });
});

describe("pulumi-posthog export reads them and says what it left out", () => {
  it("exports the invites with an address and the templatable tiles, listing the rest as skipped", async () => {
    const out = join(work, "program");
    const lines: string[] = [];
    const code = await main(["export", "--out", out, "--only", "invites,dashboards"], {
      stderr: (l) => lines.push(l),
      stdout: (l) => lines.push(l),
      env: {
        POSTHOG_HOST: fake.url,
        POSTHOG_API_KEY: API_KEY,
        POSTHOG_ORGANIZATION_ID: ORG,
        POSTHOG_PROJECT_ID: String(PROJECT),
      },
      cwd: work,
    });
    expect(code, lines.join("\n")).toBe(0);
    const text = lines.join("\n");
    expect(text).toContain(
      `invites: invite ${invites.noEmail.id}: it has no e-mail address (target_email is null), and an Invite is declared by its e-mail`,
    );
    expect(text).toContain(
      "dashboard tiles: dashboard 7: tile 31: a button tile: template JSON carries only INSIGHT and TEXT tiles",
    );
    expect(text).toMatch(/dashboard tiles: dashboard 7: tile 32: not a tile in PostHog's shape \(text: .+\)/);

    const stack = parseYaml(readFileSync(join(out, "Pulumi.dev.yaml"), "utf8")) as {
      config: Record<string, unknown>;
    };
    expect(stack.config["posthog-org:invites"]).toEqual([
      { targetEmail: "legacy.admin@example.com", level: 1 },
      { targetEmail: "legacy.member@example.com", level: 1 },
      { targetEmail: "no.access@example.com", level: 1 },
    ]);
    const template = JSON.parse(readFileSync(join(out, "dashboards", "launch.json"), "utf8")) as {
      tiles: { type: string; name?: string; body?: string }[];
    };
    expect(template.tiles.map((t) => [t.type, t.name ?? t.body])).toEqual([
      ["INSIGHT", "Weekly signups"],
      ["TEXT", "Read me first"],
    ]);
  });
});
