// Every client operation against the emulator over real HTTP, and every error class the server can cause.
import { inspect } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AmbiguousWriteError,
  createClient,
  ForbiddenError,
  InvalidInputError,
  MethodNotAllowedError,
  NotFoundError,
  type PostHogClient,
  type PostHogError,
  UnauthenticatedError,
  ValidationError,
} from "../../provider/client";
import { clearLog, clientFor, control, type Emulator, startTestEmulator } from "./helpers";

let emu: Emulator;
let client: PostHogClient;

beforeAll(async () => {
  emu = await startTestEmulator();
  client = clientFor(emu);
});
afterAll(async () => {
  await emu?.close();
});

describe("settings sources", () => {
  it("uses the explicit key over the config over the environment (a wrong key answers 401)", async () => {
    const base = { host: emu.url, organizationId: emu.organizationId, rateLimit: false as const };
    const cfgRight = { get: (k: string) => (k === "posthog:apiKey" ? emu.apiKey : undefined) };
    const cfgWrong = { get: (k: string) => (k === "posthog:apiKey" ? "phx_wrong_config" : undefined) };
    const env = { ...process.env };
    try {
      process.env.POSTHOG_API_KEY = "phx_wrong_env";
      await expect(createClient(base, cfgRight).projects.list()).resolves.toHaveProperty("count");
      await expect(createClient(base).projects.list()).rejects.toBeInstanceOf(UnauthenticatedError);
      await expect(
        createClient({ ...base, apiKey: emu.apiKey }, cfgWrong).projects.list(),
      ).resolves.toHaveProperty("count");
      process.env.POSTHOG_API_KEY = emu.apiKey;
      await expect(createClient(base).projects.list()).resolves.toHaveProperty("count");
    } finally {
      process.env = env;
    }
  });
});

describe("batch exports", () => {
  it("list, all, retrieve, pause, unpause", async () => {
    const page = await client.batchExports.list();
    expect(page.count).toBeGreaterThanOrEqual(2);
    const all = await client.batchExports.all();
    expect(all.map((b) => b.id)).toEqual(page.results.map((b) => b.id));
    const first = all[0];
    if (!first) throw new Error("seeded batch export missing");
    expect(first.paused).toBe(false);
    expect(await client.batchExports.pause({ id: first.id })).toEqual({ paused: true });
    const paused = await client.batchExports.retrieve({ id: first.id });
    expect(paused.paused).toBe(true);
    expect(paused.last_paused_at).toEqual(expect.any(String));
    expect(await client.batchExports.unpause({ id: first.id })).toEqual({ paused: false });
    expect((await client.batchExports.retrieve({ id: first.id })).paused).toBe(false);
    await expect(
      client.batchExports.pause({ id: "00000000-0000-4000-8000-000000000000" }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("domains", () => {
  it("create, retrieve, list/all, update, verify, delete", async () => {
    const created = await client.domains.create({ body: { domain: "ops-one.example.com" } });
    expect(created).toMatchObject({ domain: "ops-one.example.com", is_verified: false });
    expect(created.verification_challenge).toEqual(expect.any(String));
    expect(await client.domains.retrieve({ id: created.id })).toMatchObject({ id: created.id });
    expect((await client.domains.all()).map((d) => d.domain)).toContain("ops-one.example.com");
    expect((await client.domains.list({ limit: 1 })).results).toHaveLength(1);

    const updated = await client.domains.update({
      id: created.id,
      body: { saml_entity_id: "urn:e", saml_acs_url: "https://idp.example.com/acs", saml_x509_cert: "CERT" },
    });
    expect(updated).toMatchObject({ saml_entity_id: "urn:e", has_saml: true });

    // verification fails without the TXT record, succeeds with it; verify answers the domain, as PostHog does
    const unverified = await client.domains.verify({ id: created.id });
    expect(unverified).toMatchObject({ id: created.id, is_verified: false });
    await control(emu, "POST", "/_emulator/dns", {
      name: "_posthog-challenge.ops-one.example.com",
      txt: created.verification_challenge,
    });
    const verified = await client.domains.verify({ id: created.id });
    expect(verified).toMatchObject({ id: created.id, is_verified: true });
    expect(await client.domains.retrieve({ id: created.id })).toStrictEqual(verified);

    await client.domains.delete({ id: created.id });
    await expect(client.domains.retrieve({ id: created.id })).rejects.toBeInstanceOf(NotFoundError);
  });

  it("a duplicate is a ValidationError with code and attr in the message", async () => {
    await client.domains.create({ body: { domain: "dup.example.com" } });
    const err = await client.domains.create({ body: { domain: "dup.example.com" } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    const v = err as ValidationError;
    expect(v.status).toBe(400);
    expect(v.attr).toBe("domain");
    expect(v.code).toBe("unique");
    expect(v.message).toContain("POST /api/organizations/");
    expect(v.message).toContain("/domains/");
    expect(v.message).toContain("400 unique");
    expect(v.message).toContain("attr: domain");
    expect(v.message).not.toContain(emu.apiKey);
  });

  it("bad input is refused before any request, naming the property", async () => {
    await clearLog(emu);
    const err = await client.domains
      .create({ body: { domain: "UPPER.example.com" } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).property).toBe("body.domain");
    await expect(client.domains.retrieve({ id: "" })).rejects.toBeInstanceOf(InvalidInputError);
    expect(await emu.requests()).toEqual([]);
  });
});

describe("invites", () => {
  it("create, list/all, find by id and e-mail, bulkCreate, delete", async () => {
    const inv = await client.invites.create({ body: { target_email: "new.person@example.com", level: 1 } });
    expect(inv).toMatchObject({ target_email: "new.person@example.com", level: 1 });
    expect((await client.invites.find({ email: "NEW.person@example.com" }))?.id).toBe(inv.id);
    expect((await client.invites.find({ id: inv.id }))?.target_email).toBe("new.person@example.com");
    expect((await client.invites.all()).map((i) => i.id)).toContain(inv.id);

    const bulk = await client.invites.bulkCreate({
      body: [{ target_email: "bulk.a@example.com" }, { target_email: "bulk.b@example.com", level: 8 }],
    });
    const emails = (await client.invites.all()).map((i) => i.target_email);
    expect(emails).toEqual(expect.arrayContaining(["bulk.a@example.com", "bulk.b@example.com"]));
    // the invites made, as PostHog answers (201 with the array)
    expect(bulk?.map((i) => [i.target_email, i.level])).toEqual([
      ["bulk.a@example.com", 1],
      ["bulk.b@example.com", 8],
    ]);

    await client.invites.delete({ id: inv.id });
    expect(await client.invites.find({ id: inv.id })).toBeUndefined();
    await expect(client.invites.delete({ id: inv.id })).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("members", () => {
  it("list/all, find, update level, delete", async () => {
    const all = await client.members.all();
    expect(all.length).toBeGreaterThanOrEqual(4);
    const plain = all.filter((m) => m.level === 1);
    const [a, b] = plain;
    if (!a || !b) throw new Error("seed has fewer than two plain members");
    expect((await client.members.find({ email: a.user.email.toUpperCase() }))?.user.uuid).toBe(a.user.uuid);

    const promoted = await client.members.update({ userUuid: a.user.uuid, body: { level: 8 } });
    expect(promoted.level).toBe(8);
    expect((await client.members.find({ userUuid: a.user.uuid }))?.level).toBe(8);

    await client.members.delete({ userUuid: b.user.uuid });
    expect(await client.members.find({ userUuid: b.user.uuid })).toBeUndefined();
    await expect(client.members.update({ userUuid: b.user.uuid, body: { level: 1 } })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it("the server's refusals: own level → ForbiddenError; bad level → InvalidInputError before sending", async () => {
    const owner = (await client.members.all()).find((m) => m.level === 15);
    if (!owner) throw new Error("no owner");
    await expect(
      client.members.update({ userUuid: owner.user.uuid, body: { level: 8 } }),
    ).rejects.toBeInstanceOf(ForbiddenError);
    await expect(
      client.members.update({ userUuid: owner.user.uuid, body: { level: 5 as 1 } }),
    ).rejects.toBeInstanceOf(InvalidInputError);
  });
});

describe("projects", () => {
  it("list/all, retrieve, create, update, delete", async () => {
    const page = await client.projects.list();
    expect(page.results.map((p) => p.id)).toContain(emu.projectId);
    const seeded = await client.projects.retrieve({ id: emu.projectId });
    expect(seeded).toMatchObject({ id: emu.projectId, organization: emu.organizationId });
    const created = await client.projects.create({
      body: { name: "Ops project", timezone: "Europe/Berlin" },
    });
    expect(created).toMatchObject({ name: "Ops project", timezone: "Europe/Berlin" });
    expect((await client.projects.all()).map((p) => p.id)).toContain(created.id);
    const renamed = await client.projects.update({ id: created.id, body: { name: "Ops renamed" } });
    expect(renamed.name).toBe("Ops renamed");
    await client.projects.delete({ id: created.id });
    await expect(client.projects.retrieve({ id: created.id })).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("dashboards, collaborators, sharing", () => {
  it("create, retrieve, list/all, update, hard delete refused (405), soft delete", async () => {
    const d = await client.dashboards.create({ body: { name: "Ops board", description: "d", tags: ["x"] } });
    expect(d).toMatchObject({ name: "Ops board", deleted: false });
    expect((await client.dashboards.retrieve({ id: d.id })).id).toBe(d.id);
    expect((await client.dashboards.all()).map((x) => x.id)).toContain(d.id);
    expect((await client.dashboards.update({ id: d.id, body: { pinned: true } })).pinned).toBe(true);

    const err = await client.dashboards.delete({ id: d.id }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MethodNotAllowedError);
    expect((err as PostHogError).message).toContain(
      `DELETE /api/projects/${emu.projectId}/dashboards/${d.id}/ → 405`,
    );

    await client.dashboards.update({ id: d.id, body: { deleted: true } });
    await expect(client.dashboards.retrieve({ id: d.id })).rejects.toBeInstanceOf(NotFoundError);
  });

  it("access controls, global access controls, move tile, create from template JSON", async () => {
    const a = await client.dashboards.create({ body: { name: "A" } });
    const b = await client.dashboards.create({ body: { name: "B" } });
    expect(await client.dashboards.accessControls({ id: a.id })).toBeTypeOf("object");
    expect(await client.dashboards.globalAccessControls({ id: a.id })).toBeTypeOf("object");

    const withTile = await client.dashboards.update({
      id: a.id,
      body: { tiles: [{ text: { body: "hello" }, layouts: {} }] } as never,
    });
    const tileId = (withTile.tiles?.[0] as { id?: number } | undefined)?.id;
    expect(tileId).toEqual(expect.any(Number));
    await client.dashboards.moveTile({
      id: a.id,
      body: { tile: { id: tileId as number }, toDashboard: b.id },
    });
    expect((await client.dashboards.retrieve({ id: b.id })).tiles).toHaveLength(1);
    expect((await client.dashboards.retrieve({ id: a.id })).tiles ?? []).toHaveLength(0);

    const fromTemplate = await client.dashboards.createFromTemplateJson({
      body: {
        template: {
          template_name: "From JSON",
          dashboard_description: "made from a template",
          dashboard_filters: {},
          tiles: [{ type: "TEXT", body: "hi", layouts: {} }],
        },
      },
    });
    // The emulator (as PostHog) answers with the new dashboard: the client hands it back, not undefined.
    expect(fromTemplate).toMatchObject({ name: "From JSON", deleted: false });
    const listed = (await client.dashboards.all()).filter((x) => x.name === "From JSON");
    expect(listed.map((x) => x.id)).toEqual([fromTemplate?.id]);
  });

  it("collaborators: add, list, find, remove; sharing: retrieve, update", async () => {
    const d = await client.dashboards.create({ body: { name: "Restricted", restriction_level: 37 } });
    await control(emu, "POST", "/_emulator/users", { email: "collab@example.com", level: 1 });
    // the member was added out of band: do not reuse an earlier shared list read
    const member = await clientFor(emu, { coalescing: { findCacheMs: 0 } }).members.find({
      email: "collab@example.com",
    });
    if (!member) throw new Error("the created member is not listed");
    const added = await client.collaborators.add({
      dashboardId: d.id,
      body: { user_uuid: member.user.uuid, level: 37 },
    });
    expect(added).toMatchObject({ level: 37, user: { uuid: member.user.uuid } });
    expect((await client.collaborators.list({ dashboardId: d.id })).map((c) => c.user.uuid)).toEqual([
      member.user.uuid,
    ]);
    expect((await client.collaborators.find({ dashboardId: d.id, userUuid: member.user.uuid }))?.level).toBe(
      37,
    );
    const dup = await client.collaborators
      .add({ dashboardId: d.id, body: { user_uuid: member.user.uuid, level: 37 } })
      .catch((e: unknown) => e);
    expect(dup).toBeInstanceOf(ValidationError);
    await client.collaborators.remove({ dashboardId: d.id, userUuid: member.user.uuid });
    expect(
      await client.collaborators.find({ dashboardId: d.id, userUuid: member.user.uuid }),
    ).toBeUndefined();

    const sharing = await client.sharing.retrieve({ dashboardId: d.id });
    expect(sharing.enabled).toBe(false);
    const enabled = await client.sharing.update({ dashboardId: d.id, body: { enabled: true } });
    expect(enabled.enabled).toBe(true);
    expect((await client.sharing.retrieve({ dashboardId: d.id })).access_token).toBe(enabled.access_token);
  });
});

describe("errors", () => {
  it("UnauthenticatedError for an unknown key; the key never appears in the error", async () => {
    const bad = clientFor(emu, { apiKey: "phx_not_a_real_key_0123456789" });
    const err = await bad.members.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnauthenticatedError);
    expect((err as PostHogError).status).toBe(401);
    for (const text of [
      String(err),
      (err as Error).message,
      inspect(err, { depth: 5 }),
      JSON.stringify(err),
    ]) {
      expect(text).not.toContain("phx_not_a_real_key_0123456789");
    }
  });

  it("ForbiddenError names the missing scope", async () => {
    const { key } = (await control(emu, "POST", "/_emulator/api-keys", { scopes: ["dashboard:read"] })) as {
      key: string;
    };
    const scoped = clientFor(emu, { apiKey: key });
    await expect(scoped.dashboards.list()).resolves.toHaveProperty("results");
    const err = await scoped.dashboards.create({ body: { name: "nope" } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForbiddenError);
    expect((err as ForbiddenError).missingScope).toBe("dashboard:write");
    expect((err as Error).message).toContain("403 permission_denied");
    expect((err as Error).message).not.toContain(key);
  });

  it("NotFoundError for an unknown dashboard; a 4xx on POST is definite, never ambiguous", async () => {
    const err = await client.dashboards.retrieve({ id: 987654 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).code).toBe("not_found");
    const post = await client.collaborators
      .add({ dashboardId: 987654, body: { user_uuid: "x", level: 37 } })
      .catch((e: unknown) => e);
    expect(post).toBeInstanceOf(NotFoundError);
    expect(post).not.toBeInstanceOf(AmbiguousWriteError);
  });
});
