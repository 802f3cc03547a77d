import { describe, expect, it } from "vitest";
import type { ProviderHost } from "../../tools/provider-host";
import {
  create,
  destroy,
  failure,
  plan,
  refresh,
  serializeProvider,
  type TestEmulator,
  update,
  urnOf,
  useProviderHost,
} from "./harness";

let emu: TestEmulator;
let host: ProviderHost;

useProviderHost((e, h) => {
  emu = e;
  host = h;
});

const org = () => `/api/organizations/${emu.organizationId}`;
type BatchExport = { id: string; paused: boolean; name: string };
const batchExports = async () =>
  ((await emu.api("GET", `${org()}/batch_exports/`)).body as { results: BatchExport[] }).results;

describe("Project provider (real host over gRPC)", () => {
  it("runs the lifecycle: create, read, PATCH update, DELETE; unset settings keep server defaults", async () => {
    const want = { name: "Web", timezone: "Europe/Berlin", productDescription: "", appUrls: [] };
    const p = await create(host, "Project", "web", want);
    expect(p.outs).toMatchObject({ name: "Web", timezone: "Europe/Berlin", projectId: p.id });
    expect(typeof p.outs.apiToken).toBe("string");
    expect(typeof p.outs.liveEventsToken).toBe("string");
    // the server filled in defaults for what was not declared: no diff from them
    expect(p.outs.anonymizeIps).toBeDefined();
    expect((await plan(host, p, want)).diff.changes).toBe(false);

    const read = await refresh(host, p);
    expect(read.id).toBe(p.id);
    await emu.control("DELETE", "/requests");
    const moved = await update(host, read, { ...want, timezone: "UTC", anonymizeIps: true });
    // one request: a PATCH of what differs
    expect((await emu.requests()).map((r) => r.method)).toEqual(["PATCH"]);
    expect((await emu.api("GET", `${org()}/projects/${p.id}/`)).body).toMatchObject({
      timezone: "UTC",
      anonymize_ips: true,
    });

    // Drift: renamed outside Pulumi; refresh shows it, up heals it.
    await emu.api("PATCH", `${org()}/projects/${p.id}/`, { name: "Renamed by hand" });
    const drifted = await refresh(host, moved);
    expect(drifted.inputs.name).toBe("Renamed by hand");
    const healed = await update(host, drifted, { ...want, timezone: "UTC", anonymizeIps: true });
    expect(healed.outs.name).toBe("Web");

    // isDemo is create-only: it replaces
    expect((await plan(host, healed, { ...want, isDemo: true })).diff.replaces).toEqual(["isDemo"]);

    await destroy(host, healed);
    expect((await emu.api("GET", `${org()}/projects/${p.id}/`)).status).toBe(404);
    expect((await refresh(host, healed)).id).toBe("");
    await destroy(host, healed);
  });

  it("shows no diff after up with every setting declared (no perpetual diff)", async () => {
    const want = {
      name: "Everything",
      productDescription: "a shop",
      timezone: "America/New_York",
      appUrls: ["https://shop.example.com"],
      anonymizeIps: true,
      autocaptureOptOut: true,
      sessionRecordingOptIn: true,
      heatmapsOptIn: false,
      surveysOptIn: true,
      weekStartDay: 0,
      recordingDomains: ["https://shop.example.com"],
      isDemo: false,
    };
    const p = await create(host, "Project", "everything", want);
    expect((await plan(host, p, want)).diff.changes).toBe(false);
    const read = await refresh(host, p);
    expect((await plan(host, read, want)).diff.changes).toBe(false);
    expect(read.inputs).toMatchObject(want);
    await destroy(host, read);
  });

  it("adopts an existing project by id and converges it, without creating one", async () => {
    const before = ((await emu.api("GET", `${org()}/projects/`)).body as { count: number }).count;
    const p = await create(host, "Project", "seed", {
      projectId: emu.projectId,
      name: "Main",
      timezone: "Asia/Tokyo",
    });
    expect(p.id).toBe(String(emu.projectId));
    expect(((await emu.api("GET", `${org()}/projects/`)).body as { count: number }).count).toBe(before);
    expect((await emu.api("GET", `${org()}/projects/${emu.projectId}/`)).body).toMatchObject({
      name: "Main",
      timezone: "Asia/Tokyo",
    });
    expect(
      (await plan(host, p, { projectId: String(emu.projectId), name: "Main", timezone: "Asia/Tokyo" })).diff
        .changes,
    ).toBe(false);
  });

  it("rejects bad inputs naming the property, with no request", async () => {
    await emu.control("DELETE", "/requests");
    const provider = await serializeProvider("Project");
    const { failures } = await host.check(
      urnOf("Project", "bad"),
      {},
      {
        name: "   ",
        weekStartDay: 3,
        projectId: "abc",
        __provider: provider,
      },
    );
    expect(failures).toEqual([
      { property: "name", reason: "expected a project name (1..200 characters)" },
      {
        property: "projectId",
        reason:
          "expected a project id (a positive integer, or a string of its digits such as a Project's id: " +
          '`projectId: web.id`; or "@current"), got the string "abc"',
      },
      { property: "weekStartDay", reason: "expected 0 (Sunday) or 1 (Monday)" },
    ]);
    expect(await emu.requests()).toEqual([]);
  });
});

describe("BatchExportPause provider (real host over gRPC)", () => {
  it("pauses, shows unpausing as drift, heals it, and restores the state found before on delete", async () => {
    const target = (await batchExports())[0] as BatchExport;
    expect(target.paused).toBe(false);
    const b = await create(host, "BatchExportPause", "s3", { batchExportId: target.id });
    expect(b.id).toBe(target.id);
    expect(b.outs).toMatchObject({ paused: true, pausedBefore: false, name: target.name });
    expect((await batchExports()).find((x) => x.id === target.id)?.paused).toBe(true);
    expect((await plan(host, b, { batchExportId: target.id })).diff.changes).toBe(false);

    await emu.api("POST", `${org()}/batch_exports/${target.id}/unpause/`, {});
    const drifted = await refresh(host, b);
    expect(drifted.outs.paused).toBe(false);
    expect(drifted.inputs.paused).toBe(false);
    const healed = await update(host, drifted, { batchExportId: target.id });
    expect(healed.outs.paused).toBe(true);

    await emu.control("DELETE", "/requests");
    const running = await update(host, healed, { batchExportId: target.id, paused: false });
    const calls = await emu.requests();
    expect(calls.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST ${org()}/batch_exports/${target.id}/unpause/`,
    ]);
    expect(running.outs.paused).toBe(false);
    expect((await plan(host, running, { batchExportId: "another" })).diff.replaces).toEqual([
      "batchExportId",
    ]);

    const repaused = await update(host, running, { batchExportId: target.id, paused: true });
    await destroy(host, repaused);
    expect((await batchExports()).find((x) => x.id === target.id)?.paused).toBe(false);
  });

  it("keeps an export paused on delete when it was paused before", async () => {
    const target = (await batchExports())[1] as BatchExport;
    await emu.api("POST", `${org()}/batch_exports/${target.id}/pause/`, {});
    const b = await create(host, "BatchExportPause", "bq", { batchExportId: target.id });
    expect(b.outs.pausedBefore).toBe(true);
    await destroy(host, b);
    expect((await batchExports()).find((x) => x.id === target.id)?.paused).toBe(true);
  });

  it("fails clearly for an unknown export and rejects a bad paused value", async () => {
    const provider = await serializeProvider("BatchExportPause");
    const urn = urnOf("BatchExportPause", "ghost");
    const checked = await host.check(
      urn,
      {},
      { batchExportId: "00000000-0000-4000-8000-000000000000", __provider: provider },
    );
    expect(await failure(host.create(urn, checked.inputs))).toContain("404");
    const bad = await host.check(urn, {}, { batchExportId: "x", paused: "yes", __provider: provider });
    expect(bad.failures).toEqual([{ property: "paused", reason: "expected true or false" }]);
  });
});
