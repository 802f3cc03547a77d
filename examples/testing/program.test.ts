/**
 * Unit tests of program.ts under `pulumi.runtime.setMocks`: no engine, no network, a few milliseconds. They
 * assert what the program declares (inputs), what it derives (outputs), which values are secret, and that
 * every declared resource passes its provider's `check`.
 */
import * as pulumi from "@pulumi/pulumi";
import {
  BatchExportPause,
  Dashboard,
  DashboardCollaborator,
  DashboardSharing,
  Project,
} from "pulumi-posthog/provider";
import { beforeAll, describe, expect, it } from "vitest";
import { posthogMocks, settled } from "./mocks";
import { analytics } from "./program";

const uuids: Record<string, string> = {
  "mia.member@example.com": "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03",
  "max.member@example.com": "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d04",
};

/** The providers of the resources the program declares; their `check` validates inputs without a request. */
const checkers: Record<string, typeof Project> = {
  Project,
  Dashboard,
  DashboardCollaborator,
  DashboardSharing,
  BatchExportPause,
};

let mocks: Awaited<ReturnType<typeof posthogMocks>>;
let made: ReturnType<typeof analytics>;

beforeAll(async () => {
  mocks = await posthogMocks({
    "posthog:index:getMember": ({ email }) => ({ userUuid: uuids[String(email)], email, level: 1 }),
    "posthog:index:getBatchExports": () => ({
      batchExports: [
        { id: "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c01", name: "Events to S3", paused: false },
        { id: "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c02", name: "Persons to BigQuery", paused: false },
      ],
    }),
  });
  made = await mocks.runProgram(() =>
    analytics({
      projectName: "Web",
      kpiEditors: ["mia.member@example.com", "max.member@example.com"],
      publicKpis: true,
      pausedExport: "Persons to BigQuery",
      host: "https://eu.posthog.com",
    }),
  );
  await settled(pulumi.all([made.publicUrl, made.pause?.id, ...made.editors.map((e) => e.id)]));
});

describe("the analytics program", () => {
  it("restricts the KPI dashboard to collaborators, in the program's project", async () => {
    const projectId = await settled(made.project.id);
    expect(mocks.inputsOf("Dashboard", "kpis")).toMatchObject({
      name: "KPIs",
      restrictionLevel: 37,
      projectId,
    });
  });

  it("makes each editor a collaborator of the KPI dashboard, found by e-mail with getMember", async () => {
    expect(mocks.calls.filter((c) => c.token === "posthog:index:getMember").map((c) => c.inputs)).toEqual([
      { email: "mia.member@example.com" },
      { email: "max.member@example.com" },
    ]);
    expect(mocks.inputsOf("DashboardCollaborator", "kpis-mia.member@example.com")).toMatchObject({
      userUuid: uuids["mia.member@example.com"],
      dashboardId: await settled(made.kpis.id),
    });
  });

  it("pauses the batch export it finds by name", () => {
    expect(mocks.inputsOf("BatchExportPause", "paused-export")).toMatchObject({
      batchExportId: "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c02",
      paused: true,
    });
  });

  it("keeps the project token, the sharing token and the link built from it secret", async () => {
    expect(mocks.secretOutputs.get("pulumi-nodejs:dynamic/posthog:Project::web")).toContain("apiToken");
    expect(mocks.secretOutputs.get("pulumi-nodejs:dynamic/posthog:DashboardSharing::kpis")).toEqual([
      "accessToken",
    ]);
    expect(await pulumi.isSecret(made.apiToken)).toBe(true);
    expect(await pulumi.isSecret(made.sharing.accessToken)).toBe(true);
    expect(await pulumi.isSecret(made.publicUrl)).toBe(true);
    expect(await settled(made.publicUrl)).toMatch(/^https:\/\/eu\.posthog\.com\/shared\/share_\d+$/);
    expect(await pulumi.isSecret(made.project.name)).toBe(false);
  });

  it("declares only inputs its providers' check accepts", async () => {
    for (const r of mocks.resources.filter((x) => x.type.startsWith("pulumi-nodejs:dynamic/posthog:"))) {
      const provider = checkers[r.type.split(":").pop() ?? ""];
      if (!provider) throw new Error(`no provider for ${r.type}`);
      const result = await provider.check({}, r.inputs);
      expect({ resource: r.name, failures: result.failures ?? [] }).toEqual({
        resource: r.name,
        failures: [],
      });
    }
  });
});
