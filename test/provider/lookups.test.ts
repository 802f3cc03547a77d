import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  getBatchExports,
  getDashboard,
  getDashboardAccessControls,
  getDashboardSharing,
  getMember,
  getProject,
} from "../../sdk/lookups";
import { startTestEmulator, type TestEmulator } from "./harness";

let emu: TestEmulator;
let options: { apiKey: string; host: string; organizationId: string; projectId: number };

beforeAll(async () => {
  emu = await startTestEmulator();
  options = {
    apiKey: emu.apiKey,
    host: emu.url,
    organizationId: emu.organizationId,
    projectId: emu.projectId,
  };
});
afterAll(async () => {
  await emu?.close();
});

describe("lookups", () => {
  it("getMember finds a member by e-mail (any case) or user UUID", async () => {
    const mia = await getMember({ email: "MIA.member@example.com" }, options);
    expect(mia).toMatchObject({ email: "mia.member@example.com", level: 1, firstName: "Mia" });
    expect((await getMember({ userUuid: mia.userUuid }, options)).email).toBe(mia.email);
    await expect(getMember({ email: "nobody@example.com" }, options)).rejects.toThrow(
      "No member with e-mail",
    );
  });

  it("getProject finds a project by id or by name, and refuses ambiguous names", async () => {
    const byId = await getProject({ id: emu.projectId }, options);
    const byName = await getProject({ name: byId.name }, options);
    expect(byName.id).toBe(emu.projectId);
    expect(typeof byName.api_token).toBe("string");
    await expect(getProject({ name: "no such project" }, options)).rejects.toThrow(
      'No project named "no such project"',
    );
  });

  it("getDashboard, getDashboardSharing and getDashboardAccessControls read a dashboard", async () => {
    const made = await emu.api("POST", `/api/projects/${emu.projectId}/dashboards/`, { name: "Looked up" });
    const id = (made.body as { id: number }).id;
    expect((await getDashboard({ id }, options)).name).toBe("Looked up");
    expect((await getDashboardSharing({ dashboardId: id }, options)).enabled).toBe(false);
    expect(await getDashboardAccessControls({ dashboardId: id }, options)).toBeTypeOf("object");
  });

  it("getBatchExports lists the organization's batch exports; settings fall back to the environment", async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      POSTHOG_API_KEY: emu.apiKey,
      POSTHOG_HOST: emu.url,
      POSTHOG_ORGANIZATION_ID: emu.organizationId,
    });
    try {
      const all = await getBatchExports();
      expect(all.map((b) => b.name)).toEqual(expect.arrayContaining(["Events to S3", "Persons to BigQuery"]));
    } finally {
      for (const k of ["POSTHOG_API_KEY", "POSTHOG_HOST", "POSTHOG_ORGANIZATION_ID"]) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  });
});
