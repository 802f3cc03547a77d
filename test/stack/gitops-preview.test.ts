import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type RunResult, savedState } from "../../tools/pulumi";
import { useExampleStack } from "./example-stack";

// The example (examples/gitops, dev stack) through the real Pulumi CLI. An updated resource's preview outputs are
// its new inputs, so dependents wired to output-only properties would preview as replacements (issue 11): a setting
// change must preview as exactly the one update it is. And a standalone `pulumi refresh` uses the provider settings
// stored at the last `up`, not the stack file's current ones.
//
// The example is applied once by test/stack/example-stack.ts, and not destroyed afterwards (the emulator ends with
// the file): the example's destroy is test/stack/gitops.test.ts's.
const root = join(__dirname, "..", "..");
const example = useExampleStack("gitops-preview", { destroy: false });
const { work, stateDir, configFile, run } = example;

/**
 * The dev stack's settings file (as the stack's creation left it: with the passphrase's salt) with `edit`
 * applied, written to a file of its own and passed as `--config-file`.
 */
function settings(name: string, edit: (text: string) => string): string {
  const current = readFileSync(configFile, "utf8");
  const file = join(work, `${name}.yaml`);
  const text = edit(current);
  expect(text).not.toBe(current);
  writeFileSync(file, text);
  return file;
}

/**
 * The URNs of the resources the local backend in `dir` holds for the dev stack: its checkpoint
 * (`<dir>/.pulumi/stacks/posthog-gitops/dev.json`, what `pulumi stack export` prints), read without a CLI run.
 */
function urnsIn(dir: string): string[] {
  return (savedState({ projectDir: root, stack: "dev", stateDir: dir }).deployment.resources ?? []).map((r) =>
    String(r.urn),
  );
}
const changes = (r: RunResult) => r.steps.filter((s) => s.op !== "same").map((s) => `${s.op} ${s.name}`);
/** The steps that failed, with their errors, for a failure message. */
const failed = (r: RunResult) => JSON.stringify(r.steps.filter((s) => s.error !== undefined)) + r.output;

describe("examples/gitops previews as the engine does", () => {
  // The engine diffs each resource on its own: both setting changes share one preview, and each must show as
  // exactly its own update (a replacement of a dependent, e.g. the collaborator, would be a step of its own).
  it("a project timezone change and a member level change preview as exactly one update each, no replacement", async () => {
    const edited = settings("timezone-and-level", (t) =>
      t
        .replace("timezone: Europe/Berlin", "timezone: Asia/Tokyo")
        .replace("mia.member@example.com: member", "mia.member@example.com: admin"),
    );
    expect(readFileSync(edited, "utf8")).toContain("timezone: Asia/Tokyo");
    expect(readFileSync(edited, "utf8")).toContain("mia.member@example.com: admin");
    const r = await run("preview", { configFile: edited });
    expect(r.ok, r.output).toBe(true);
    expect(changes(r).sort(), r.output).toEqual(["update member-mia.member@example.com", "update web"]);
    expect(r.steps.find((s) => s.name === "web")?.diffs).toEqual(["timezone"]);
    expect(r.steps.find((s) => s.name === "member-mia.member@example.com")?.diffs).toEqual(["level"]);
    // As the CLI shows it (a dynamic provider's Diff answers only "some changes"; the CLI names the changed
    // inputs).
    expect(r.output).toMatch(/~ +pulumi-nodejs:dynamic\/posthog:Project web update \[diff: ~timezone\]/);
    expect(r.output).toMatch(
      /~ +pulumi-nodejs:dynamic\/posthog:Member member-mia\.member@example\.com update \[diff: ~level\]/,
    );
    expect(r.counts).toMatchObject({ update: 2, replace: 0, create: 0, delete: 0 });
  }, 300_000);

  it("refresh after only posthog:apiKey changed in the stack file uses the key stored at the last up", async () => {
    const rotatedFile = settings("rotated", (t) =>
      t.replace("config:\n", "config:\n  posthog:apiKey: phx_revoked\n"),
    );
    // On a copy of the stack (its whole local backend and settings file), so that whatever a refresh does here
    // leaves the stack of the other tests as it was.
    const rotated = join(work, "state-rotated");
    cpSync(stateDir, rotated, { recursive: true });
    const urns = urnsIn(rotated);
    expect(urns.length).toBeGreaterThan(13);
    const refresh = await run("refresh", { configFile: rotatedFile, stateDir: rotated });
    expect(refresh.ok, failed(refresh)).toBe(true);
    // All 13 resources read with the stored key, none lost (drift, if any, is the Domain verified by its
    // DomainVerification: see provider/resources/domain.ts).
    expect(refresh.steps.filter((s) => s.op !== "delete")).toHaveLength(13);
    const drifted = refresh.steps.filter((s) => s.op !== "same").map((s) => `${s.op} ${s.type}`);
    expect(
      drifted.every((d) => d === "update pulumi-nodejs:dynamic/posthog:Domain"),
      refresh.output,
    ).toBe(true);
    expect(urnsIn(rotated)).toEqual(urns);

    // With --run-program the current settings are used: the revoked key is refused (on another copy, so that a
    // failed read cannot change the stack).
    const copy = join(work, "state-run-program");
    cpSync(stateDir, copy, { recursive: true });
    const current = await run("refresh", { configFile: rotatedFile, runProgram: true, stateDir: copy });
    expect(current.ok).toBe(false);
    const errors = current.steps.filter((s) => s.error !== undefined);
    expect(errors.length, current.output).toBeGreaterThan(0);
    for (const s of errors) expect(s.error).toMatch(/401|API key/i);
  }, 300_000);
});
