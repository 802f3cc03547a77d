import { describe, expect, it } from "vitest";
import type { RunResult } from "../../tools/pulumi";
import { type Declared, useFixtureProgram } from "./fixture-program";

// Issue 28, item 5: a preview that will adopt an existing object says which one (kind, id, name), where the engine
// only counts a "create". A program using the SDK (test/stack/fixtures/posthog) runs through the real Pulumi CLI
// against the emulator. Before the fix the preview said nothing of it. The preview writes nothing, and reads at
// most once per adopted object (plus the run's one access check).
const fx = useFixtureProgram({ prefix: "adoption-preview" });
const MIA = { uuid: "0b5e7a9c-1d2f-4a6b-8c3e-5f7a9b1c2d03", email: "mia.member@example.com" };
const EXPORT = { id: "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c01", name: "Events to S3" };

const why = (r: RunResult) => `${JSON.stringify(r.diagnostics, null, 1)}\n${r.output}`;
/** What the run printed and reported, as one text. */
const said = (r: RunResult) => `${r.output}\n${r.diagnostics.map((d) => d.message).join("\n")}`;

describe("a preview says what it will adopt", () => {
  it("Member, BatchExportPause, Domain, Dashboard, Project and Invite: kind, id and name; counted as creates; no write", async () => {
    const emu = fx.emu();
    const post = async (path: string, body: unknown) => {
      const r = await emu.call("POST", path, { body });
      expect(r.status, r.text).toBe(201);
      return r.body as { id: string | number };
    };
    const domain = await post(`${emu.org}/domains/`, { domain: "adopted.example.com" });
    const dashboard = await post(`${emu.project}/dashboards/`, { name: "Existing board" });
    const invite = await post(`${emu.org}/invites/`, {
      target_email: "pending@example.com",
      level: 1,
      send_email: false,
    });
    const program: Declared = [
      ["Member", "mia", { email: MIA.email, level: "member" }],
      ["BatchExportPause", "events", { batchExportId: EXPORT.id, paused: true }],
      ["Domain", "adopted", { domain: "adopted.example.com", adopt: true }],
      ["Dashboard", "board", { name: "Existing board", dashboardId: dashboard.id }],
      ["Project", "main", { name: "Default project", projectId: emu.projectId }],
      ["Invite", "pending", { targetEmail: "pending@example.com", adopt: true, sendEmail: false }],
      // Nothing to adopt: a plain create says nothing.
      ["Dashboard", "fresh", { name: "Fresh board" }],
    ];
    await emu.control("DELETE", "/requests");
    const s = fx.stack("adopt");
    const preview = await s.run("preview", program);
    expect(preview.ok, why(preview)).toBe(true);
    expect(preview.counts.create).toBe(7);
    const text = said(preview);
    const expected = [
      `Member "mia" adopts the existing member ${MIA.uuid} "${MIA.email} (Mia Member)"`,
      `BatchExportPause "events" adopts the existing batch export ${EXPORT.id} "${EXPORT.name}"`,
      `Domain "adopted" adopts the existing domain ${domain.id} "adopted.example.com"`,
      `Dashboard "board" adopts the existing dashboard ${dashboard.id} "Existing board"`,
      `Project "main" adopts the existing project ${emu.projectId} "`,
      `Invite "pending" adopts the existing invite ${invite.id} "pending@example.com"`,
    ];
    for (const line of expected) expect(text, why(preview)).toContain(line);
    expect(text).toContain('the engine counts it under "create"');
    expect(text).not.toContain('Dashboard "fresh" adopts');
    const log = await emu.requests();
    expect(log.filter((r) => r.method !== "GET")).toEqual([]);
    // The access check, and one read per adopted object.
    expect(log.length, JSON.stringify(log.map((r) => r.path))).toBeLessThanOrEqual(1 + 6);
  }, 300_000);
});
