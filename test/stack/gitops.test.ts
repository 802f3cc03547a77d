import { existsSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type DemoResult, runDemo } from "../../tools/start";

// `npm start` in JSON mode: examples/gitops through the real Pulumi CLI (its engine, its Node.js language host,
// the dynamic-provider host, our provider) against a fresh emulator; every step is checked here again from the
// raw results and the emulator's request log, not only by the demo's own checks.
const root = join(__dirname, "..", "..");
const lines: Record<string, unknown>[] = [];
let demo: DemoResult;

beforeAll(async () => {
  if (!existsSync(join(root, "dist", "sdk", "index.js"))) {
    throw new Error(
      "dist/ is missing: the example loads the built SDK (pulumi-posthog); run `npm run build` first",
    );
  }
  demo = await runDemo({ projectDir: root, json: true, write: (l) => lines.push(JSON.parse(l)) });
}, 600_000);

const step = (label: string) => {
  const s = demo.steps.find((x) => x.label === label);
  if (!s) throw new Error(`no step ${label}`);
  return s;
};
const changes = (label: string) => (step(label).result?.steps ?? []).filter((s) => s.op !== "same");

describe("npm start: examples/gitops on the dev stack through the real Pulumi CLI", () => {
  it("runs every step in order and each does what it should", () => {
    expect(demo.steps.map((s) => s.label)).toEqual([
      "config",
      "preview",
      "up",
      "up-refresh",
      "drift-gate",
      "up-setting",
      "outside-change",
      "drift-gate-fails",
      "refresh-drift",
      "up-heal",
      "drift-gate-healed",
      "destroy",
    ]);
    expect(demo.pulumiVersion).toMatch(/^v3\.\d+\.\d+/);
    expect(demo.steps.filter((s) => s.failures.length > 0).map((s) => [s.label, s.failures])).toEqual([]);
    expect(demo.ok).toBe(true);
  });

  it("previews creates of every kind of resource without writing", () => {
    const types = new Set(
      changes("preview").map((s) => s.type.replace("pulumi-nodejs:dynamic/posthog:", "")),
    );
    expect([...types].sort()).toEqual([
      "BatchExportPause",
      "Dashboard",
      "DashboardCollaborator",
      "DashboardSharing",
      "Domain",
      "DomainVerification",
      "Invite",
      "Member",
      "Project",
    ]);
    expect(changes("preview").every((s) => s.op === "create")).toBe(true);
    expect(step("preview").requests.filter((r) => !r.startsWith("GET "))).toEqual([]);
  });

  it("creates everything on up, verifies the domain, keeps secret outputs secret", () => {
    const up = step("up").result;
    expect(up?.counts.create).toBe(step("preview").result?.counts.create);
    expect(up?.outputs.domainVerified).toBe(true);
    expect(up?.outputs.projectApiToken).toBe("[secret]");
    expect(step("up").requests).toContain(
      "POST /api/projects/@current/dashboards/create_from_template_json/".replace(
        "@current",
        String(up?.outputs.projectId),
      ),
    );
  });

  it("up --refresh applies the SSO enforcement that waited for verification; then the drift gate passes", () => {
    expect(changes("up-refresh").map((s) => [s.op, s.name])).toEqual([["update", "company-domain"]]);
    expect(
      step("up-refresh").requests.some((r) => /^PATCH \/api\/organizations\/[^/]+\/domains\//.test(r)),
    ).toBe(true);
    const gate = step("drift-gate").result;
    expect(gate?.exitCode).toBe(0);
    expect(gate?.counts).toEqual({
      create: 0,
      update: 0,
      replace: 0,
      delete: 0,
      same: step("up").result?.counts.create,
    });
  });

  it("the API key is a secret setting: encrypted in the settings file, absent from every output", () => {
    expect(step("config").failures).toEqual([]);
    for (const s of demo.steps) expect(s.result?.output ?? "").not.toMatch(/phx_[A-Za-z0-9_-]{20,}/);
  });

  it("updates exactly the changed setting's resource", () => {
    expect(changes("up-setting").map((s) => [s.op, s.type, s.name, s.diffs])).toEqual([
      ["update", "pulumi-nodejs:dynamic/posthog:DashboardSharing", "web-kpis", ["enabled"]],
    ]);
  });

  it("reports the outside change on refresh and heals it on up", () => {
    expect(
      step("outside-change").requests.some((r) => /^POST .*\/batch_exports\/[^/]+\/unpause\/$/.test(r)),
    ).toBe(true);
    const gate = step("drift-gate-fails").result;
    expect(gate?.ok).toBe(false); // --expect-no-changes: exit non-zero on drift
    expect(gate?.output).toContain("no changes were expected");
    expect(changes("drift-gate-fails").map((s) => s.name)).toContain("warehouse-export");
    expect(step("drift-gate-fails").requests.filter((r) => !r.startsWith("GET "))).toEqual([]);
    const drift = changes("refresh-drift").find((s) => s.name === "warehouse-export");
    expect(drift).toMatchObject({ op: "update", diffs: expect.arrayContaining(["paused"]) });
    expect(step("refresh-drift").requests.filter((r) => !r.startsWith("GET "))).toEqual([]); // refresh only reads
    const heal = changes("up-heal").find((s) => s.name === "warehouse-export");
    expect(heal?.op).toBe("update");
    expect(step("up-heal").requests.some((r) => /^POST .*\/batch_exports\/[^/]+\/pause\/$/.test(r))).toBe(
      true,
    );
    expect(step("drift-gate-healed").result?.exitCode).toBe(0);
  });

  it("destroys everything with soft deletes for dashboards and restores the batch export", () => {
    const destroy = step("destroy");
    expect(destroy.result?.counts.delete).toBe(step("up").result?.counts.create);
    const requests = destroy.requests;
    expect(
      requests.filter((r) => /^DELETE \/api\/(projects|environments)\/[^/]+\/dashboards\/\d+\/$/.test(r)),
    ).toEqual([]);
    const dashboards = step("up").result?.outputs.dashboards as Record<string, string>;
    const projectId = String(step("up").result?.outputs.projectId);
    for (const id of Object.values(dashboards)) {
      expect(requests).toContain(`PATCH /api/projects/${projectId}/dashboards/${id}/`);
    }
    expect(requests.some((r) => /^POST .*\/batch_exports\/[^/]+\/unpause\/$/.test(r))).toBe(true);
  });

  it("prints one JSON line per step and a summary line", () => {
    expect(lines.map((l) => l.step ?? "summary")).toEqual([...demo.steps.map((s) => s.label), "summary"]);
    const gate = lines[4] as { step: string; changes: unknown[]; passed: boolean };
    expect(gate).toMatchObject({ step: "drift-gate", changes: [], passed: true });
    expect(lines.at(-1)).toMatchObject({ ok: true, passed: 12, steps: 12 });
  });
});
