/**
 * Issue 49, item 9: a 404 on a delete is confirmed by a read of that object before the resource leaves the state.
 * Through the real dynamic-provider host against the emulator, whose status fault makes the delete answer PostHog's
 * 404 body ("Injected fault.": the object's own 404, as a proxy or a lagging replica would answer it) while the
 * object exists: destroy fails naming the object, the object is still in PostHog, and the emulator's request log
 * shows the one read that found it after the 404; the next destroy (the fault spent) deletes it. Before, every one of
 * these destroys succeeded after the 404 and left the object in PostHog, unmanaged. A 404 of an object really gone
 * still counts as done, after that one read. The real CLI's destroy of an Invite: test/stack/one-owner.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { ProviderHost } from "../../tools/provider-host";
import { create, destroy, failure, type Managed, type TestEmulator, useProviderHost } from "./harness";

let emu: TestEmulator;
let host: ProviderHost;
useProviderHost((e, h) => {
  emu = e;
  host = h;
});

const org = () => `/api/organizations/${emu.organizationId}`;
const dash = () => `/api/projects/${emu.projectId}/dashboards`;
const MIA = "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03";
const MAX = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04", email: "max.member@example.com" };

/** The requests since the log was last cleared, as `METHOD path status`; clears it. */
async function requestsSince(): Promise<string[]> {
  const log = (await emu.requests()).map((r) => `${r.method} ${r.path} ${r.status}`);
  await emu.control("DELETE", "/requests");
  return log;
}

/** Arms a fault answering the first `method` request to exactly `path` with `status` (PostHog's error body). */
const fault = (method: string, path: string, status = 404) =>
  emu.control("POST", "/faults", {
    method,
    path: `^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`,
    status,
    times: 1,
  });

/**
 * Destroy of `r` whose `method path` answers 404 while the object exists: fails naming it after one read (`read`,
 * the request that found it), keeps the object (`stillThere`), and the next destroy deletes it.
 */
async function refusedThenDeleted(
  r: Managed,
  write: { method: string; path: string },
  read: string,
  stillThere: () => Promise<boolean>,
): Promise<void> {
  await fault(write.method, write.path);
  await requestsSince();
  const message = await failure(destroy(host, r));
  expect(message).toContain(
    `${r.name} ${r.id} still exists: PostHog answered 404 to ${write.method} ${write.path}, but a read right after finds the object`,
  );
  expect(message).toContain("it stays in the state");
  expect(await requestsSince()).toEqual([`${write.method} ${write.path} 404`, read]);
  expect(await stillThere()).toBe(true);
  // The fault is spent: the next destroy deletes it.
  await destroy(host, r);
  expect(await stillThere()).toBe(false);
}

describe("destroy after a 404 on the delete: the object still there fails destroy naming it", () => {
  it("Invite (DELETE answered 404, the invite still pending)", async () => {
    const r = await create(host, "Invite", "jane", { targetEmail: "jane@example.com" });
    const pending = async () =>
      ((await emu.api("GET", `${org()}/invites/`)).body as { results: { id: string }[] }).results.some(
        (i) => i.id === r.id,
      );
    await refusedThenDeleted(
      r,
      { method: "DELETE", path: `${org()}/invites/${r.id}/` },
      `GET ${org()}/invites/ 200`,
      pending,
    );
  });

  it("Domain (DELETE answered 404, the domain still there)", async () => {
    const r = await create(host, "Domain", "corp", { domain: "confirm.example.com" });
    const there = async () => (await emu.api("GET", `${org()}/domains/${r.id}/`)).status === 200;
    await refusedThenDeleted(
      r,
      { method: "DELETE", path: `${org()}/domains/${r.id}/` },
      `GET ${org()}/domains/${r.id}/ 200`,
      there,
    );
  });

  it("Member with removeFromOrganizationOnDestroy (DELETE answered 404, the person still a member)", async () => {
    const r = await create(host, "Member", "max", {
      email: MAX.email,
      level: "member",
      removeFromOrganizationOnDestroy: true,
    });
    const member = async () =>
      (
        (await emu.api("GET", `${org()}/members/`)).body as { results: { user: { uuid: string } }[] }
      ).results.some((m) => m.user.uuid === MAX.uuid);
    await refusedThenDeleted(
      r,
      { method: "DELETE", path: `${org()}/members/${MAX.uuid}/` },
      `GET ${org()}/members/ 200`,
      member,
    );
  });

  it("DashboardCollaborator (DELETE answered 404, still a collaborator)", async () => {
    const d = await create(host, "Dashboard", "restricted", { name: "Restricted", restrictionLevel: 37 });
    const r = await create(host, "DashboardCollaborator", "mia", {
      dashboardId: Number(d.id),
      userUuid: MIA,
    });
    const collaborator = async () =>
      ((await emu.api("GET", `${dash()}/${d.id}/collaborators/`)).body as { user: { uuid: string } }[]).some(
        (c) => c.user.uuid === MIA,
      );
    await refusedThenDeleted(
      r,
      { method: "DELETE", path: `${dash()}/${d.id}/collaborators/${MIA}/` },
      `GET ${dash()}/${d.id}/collaborators/ 200`,
      collaborator,
    );
    await destroy(host, d);
  });

  it("Project (DELETE answered 404, the project still there)", async () => {
    const r = await create(host, "Project", "web", { name: "Confirm web" });
    const there = async () => (await emu.api("GET", `${org()}/projects/${r.id}/`)).status === 200;
    await refusedThenDeleted(
      r,
      { method: "DELETE", path: `${org()}/projects/${r.id}/` },
      `GET ${org()}/projects/${r.id}/ 200`,
      there,
    );
  });

  it("Dashboard (the soft delete's PATCH answered 404, the dashboard still there)", async () => {
    const r = await create(host, "Dashboard", "kpis", { name: "Confirm KPIs" });
    const there = async () => (await emu.api("GET", `${dash()}/${r.id}/`)).status === 200;
    await refusedThenDeleted(
      r,
      { method: "PATCH", path: `${dash()}/${r.id}/` },
      `GET ${dash()}/${r.id}/ 200`,
      there,
    );
  });
});

describe("destroy after a 404 on the delete: an object really gone, or a read that fails", () => {
  it("an invite revoked outside Pulumi: its DELETE answers 404, one list read confirms it, destroy succeeds", async () => {
    const r = await create(host, "Invite", "gone", { targetEmail: "gone@example.com" });
    expect((await emu.api("DELETE", `${org()}/invites/${r.id}/`)).status).toBe(204);
    await requestsSince();
    await destroy(host, r);
    expect(await requestsSince()).toEqual([
      `DELETE ${org()}/invites/${r.id}/ 404`,
      `GET ${org()}/invites/ 200`,
    ]);
  });

  it("a domain deleted outside Pulumi: its DELETE answers 404, one GET (404) confirms it, destroy succeeds", async () => {
    const r = await create(host, "Domain", "gone-domain", { domain: "gone.example.com" });
    expect((await emu.api("DELETE", `${org()}/domains/${r.id}/`)).status).toBe(204);
    await requestsSince();
    await destroy(host, r);
    expect(await requestsSince()).toEqual([
      `DELETE ${org()}/domains/${r.id}/ 404`,
      `GET ${org()}/domains/${r.id}/ 404`,
    ]);
  });

  it("the read after the 404 fails (403): destroy fails naming the 404 it could not confirm; the invite stays", async () => {
    const r = await create(host, "Invite", "unconfirmed", { targetEmail: "unconfirmed@example.com" });
    await fault("DELETE", `${org()}/invites/${r.id}/`);
    await fault("GET", `${org()}/invites/`, 403);
    await requestsSince();
    const message = await failure(destroy(host, r));
    expect(message).toContain(
      `Invite ${r.id}: PostHog answered 404 to DELETE ${org()}/invites/${r.id}/, and the read that would confirm the object is gone failed`,
    );
    expect(message).toContain("it stays in the state");
    expect(await requestsSince()).toEqual([
      `DELETE ${org()}/invites/${r.id}/ 404`,
      `GET ${org()}/invites/ 403`,
    ]);
    await destroy(host, r);
  });
});
