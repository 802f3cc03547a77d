/**
 * Integration tests against the PostHog API emulator (`pulumi-posthog/emulator`, over real HTTP on
 * 127.0.0.1): the lookups the program relies on find what the organization really holds, and a resource as
 * the program declares it goes through its provider's check → create → read → delete, checked with the client.
 * Needs `fastify` (the emulator's server, an optional peer dependency): `npm install --save-dev fastify@5`.
 */

import * as posthog from "pulumi-posthog";
import { createClient } from "pulumi-posthog/client";
import { type RunningEmulator, startEmulator } from "pulumi-posthog/emulator";
import { Dashboard } from "pulumi-posthog/provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let emu: RunningEmulator;
let connection: { apiKey: string; host: string; organizationId: string; projectId: number };

beforeAll(async () => {
  emu = await startEmulator({ rateLimit: false });
  connection = {
    apiKey: emu.apiKey,
    host: emu.url,
    organizationId: emu.organizationId,
    projectId: emu.projectId,
  };
  // The providers read their settings from the environment when no stack config is given (as in a test).
  process.env.POSTHOG_API_KEY = emu.apiKey;
  process.env.POSTHOG_HOST = emu.url;
  process.env.POSTHOG_PROJECT_ID = String(emu.projectId);
});
afterAll(async () => {
  await emu?.close();
});

describe("against the emulator", () => {
  it("the lookups find the seeded members and batch exports", async () => {
    const mia = await posthog.getMember({ email: "mia.member@example.com" }, connection);
    expect(mia).toMatchObject({ level: 1, firstName: "Mia" });
    const exports = await posthog.getBatchExports({}, connection);
    expect(exports.map((b) => b.name)).toEqual(expect.arrayContaining(["Persons to BigQuery"]));
  });

  it("a KPI dashboard goes through check, create, read and delete", async () => {
    const checked = await Dashboard.check({}, { name: "KPIs", restrictionLevel: 37 });
    expect(checked.failures).toBeUndefined();
    const { id, outs } = await Dashboard.create(checked.inputs);
    expect(outs).toMatchObject({ name: "KPIs", restrictionLevel: 37, projectId: String(emu.projectId) });

    const client = createClient(connection);
    const live = await client.dashboards.retrieve({ id: Number(id) });
    expect(live).toMatchObject({ name: "KPIs", restriction_level: 37 });
    expect((await Dashboard.read(id, outs)).props).toMatchObject({ name: "KPIs" });

    await Dashboard.delete(id, outs);
    await expect(client.dashboards.retrieve({ id: Number(id) })).rejects.toThrow(/404|not found/i);
  });
});
