import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RunResult } from "../../tools/stack/engine";
import { useExampleStack } from "./example-stack";

// The example (examples/gitops, dev stack) through the stand-in engine, which previews as the engine does: an
// updated resource's preview outputs are its new inputs, so dependents wired to output-only properties would
// preview as replacements (issue 11). Also: standalone refresh uses the provider settings stored at the last up.
const root = join(__dirname, "..", "..");
const { work, statePath, run } = useExampleStack("gitops-preview");
const stackFile = readFileSync(join(root, "examples", "gitops", "Pulumi.dev.yaml"), "utf8");

/** The dev stack's settings with `edit` applied, written to a file of its own (like `--config-file`). */
function settings(name: string, edit: (text: string) => string): string {
  const file = join(work, `${name}.yaml`);
  const text = edit(stackFile);
  expect(text).not.toBe(stackFile);
  writeFileSync(file, text);
  return file;
}
const changes = (r: RunResult) => r.steps.filter((s) => s.op !== "same").map((s) => `${s.op} ${s.name}`);

describe("examples/gitops previews as the engine does", () => {
  it("a project timezone change previews as exactly one update, no replacement", async () => {
    const configFile = settings("timezone", (t) =>
      t.replace("timezone: Europe/Berlin", "timezone: Asia/Tokyo"),
    );
    const r = await run("preview", { configFile });
    expect(r.ok).toBe(true);
    expect(changes(r)).toEqual(["update web"]);
    expect(r.counts).toMatchObject({ update: 1, replace: 0, create: 0, delete: 0 });
  }, 60_000);

  it("a member level change previews as exactly one update, no replacement of the collaborator", async () => {
    const configFile = settings("level", (t) =>
      t.replace("mia.member@example.com: member", "mia.member@example.com: admin"),
    );
    const r = await run("preview", { configFile });
    expect(r.ok).toBe(true);
    expect(changes(r)).toEqual(["update member-mia.member@example.com"]);
    expect(r.counts).toMatchObject({ update: 1, replace: 0 });
  }, 60_000);

  it("refresh after only posthog:apiKey changed in the stack file uses the key stored at the last up", async () => {
    const configFile = settings("rotated", (t) =>
      t.replace("config:\n", "config:\n  posthog:apiKey: phx_revoked\n"),
    );
    const refresh = await run("refresh", { configFile });
    expect(refresh.ok, JSON.stringify(refresh.steps.filter((s) => s.error))).toBe(true);
    // All 13 resources read with the stored key (none lost; drift, if any, is the domain's SSO enforcement,
    // applied once the domain is verified).
    expect(refresh.steps.filter((s) => s.op !== "delete")).toHaveLength(13);
    // With --run-program the current settings are used: the revoked key is refused (on a copy of the state, so
    // a failed read cannot change the stack).
    const copy = join(work, "copy.json");
    cpSync(statePath, copy);
    cpSync(`${statePath}.key`, `${copy}.key`);
    const current = await run("refresh", { configFile, runProgram: true, statePath: copy });
    expect(current.ok).toBe(false);
    expect(current.steps.filter((s) => s.error).length).toBeGreaterThan(0);
    expect(current.steps.find((s) => s.error)?.error).toMatch(/401|API key/i);
  }, 90_000);
});
