import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunResult, runStack } from "../../tools/stack/engine";

// The stand-in engine on a tiny dynamic-provider program (test/stack/fixtures/tiny): the real Node runtime
// runs the unmodified program, the real dynamic-provider host runs its provider, which keeps items as files.
const projectDir = join(__dirname, "fixtures", "tiny");
const stack = `t${process.pid}`;
const stackFile = join(projectDir, `Pulumi.${stack}.yaml`);
const work = mkdtempSync(join(tmpdir(), "stack-engine-"));
const db = join(work, "db");
const statePath = join(work, "state.json");
const env = { TINY_TOKEN: "hunter2-token" };

function settings(lines: string[]): void {
  writeFileSync(
    stackFile,
    ["config:", `  tiny:dir: ${db}`, "  tiny:token:", "    secure: v1:x", ...lines].join("\n"),
  );
}
const run = (operation: "preview" | "up" | "refresh" | "destroy") =>
  runStack({ operation, projectDir, stack, statePath, env });
const items = () => readdirSync(db).sort();
const ops = (r: RunResult) => Object.fromEntries(r.steps.map((s) => [s.name, s.op]));

beforeAll(() => mkdirSync(db));
afterAll(() => {
  rmSync(stackFile, { force: true });
  rmSync(work, { recursive: true, force: true });
});

describe("stand-in engine on a tiny dynamic-provider program", () => {
  it("previews, creates, plans and applies an update, reports and heals drift, replaces in both orders, deletes, destroys", async () => {
    settings(["  tiny:labels: [alpha, beta, delta]"]);

    const preview = await run("preview");
    expect(preview.ok).toBe(true);
    expect(preview.counts).toEqual({ create: 4, update: 0, replace: 0, delete: 0, same: 0 });
    expect(items()).toEqual([]); // preview writes nothing

    const up = await run("up");
    expect(up.ok).toBe(true);
    expect(up.counts.create).toBe(4);
    expect(items()).toHaveLength(4);
    expect(up.outputs.childLabel).toBe("child-of-alpha");
    expect(up.outputs.token).toBe("[secret]");
    const state = readFileSync(statePath, "utf8");
    expect(state).toContain("ciphertext");
    expect(state).not.toContain("hunter2-token"); // secret outputs are encrypted in the checkpoint

    settings(["  tiny:labels: [alpha, gamma, delta]"]);
    const planned = await run("preview"); // an update in a preview is not mistaken for a removal
    expect(planned.counts).toEqual({ create: 0, update: 1, replace: 0, delete: 0, same: 3 });
    const update = await run("up");
    expect(update.counts).toMatchObject({ update: 1, same: 3, create: 0, delete: 0 });
    expect(update.steps.find((s) => s.op === "update")).toMatchObject({ name: "item-1", diffs: ["label"] });

    // Drift made outside the program: refresh reports it, the next up heals it.
    const file = join(db, items().find((f) => f.startsWith("alpha")) ?? "");
    writeFileSync(
      file,
      JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), label: "changed-outside" }),
    );
    // The CI drift gate (`preview --refresh`): plans the update that undoes the drift, writes nothing.
    const gate = await runStack({ operation: "preview", refresh: true, projectDir, stack, statePath, env });
    expect(gate.ok).toBe(true);
    expect(gate.steps.filter((s) => s.op !== "same").map((s) => `${s.op} ${s.name}`)).toEqual([
      "update item-0",
    ]);
    expect(JSON.parse(readFileSync(file, "utf8")).label).toBe("changed-outside");
    const refresh = await run("refresh");
    expect(refresh.ok).toBe(true);
    expect(ops(refresh)).toEqual({ "item-0": "update", "item-1": "same", "item-2": "same", child: "same" });
    expect(refresh.steps.find((s) => s.name === "item-0")?.diffs).toEqual(["label"]);
    const heal = await run("up");
    expect(ops(heal)).toMatchObject({ "item-0": "update", "item-1": "same" });
    expect(JSON.parse(readFileSync(file, "utf8")).label).toBe("alpha");

    // Replacing changes (kind): delete-before-replace when the provider asks (labels starting "dbr"), else
    // create-before-delete; item-2 is no longer declared and is deleted.
    settings(["  tiny:labels: [dbr-alpha, gamma]", "  tiny:kind: fancy"]);
    const log = join(work, "ops.log");
    writeFileSync(log, "");
    const replace = await run("up");
    expect(replace.ok).toBe(true);
    expect(ops(replace)).toEqual({
      "item-0": "replace",
      "item-1": "replace",
      child: "update",
      "item-2": "delete",
    });
    expect(replace.steps.find((s) => s.name === "item-0")?.replaces).toEqual(["kind"]);
    const lines = readFileSync(log, "utf8").trim().split("\n");
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    expect(at(/^delete alpha-/)).toBeLessThan(at(/^create dbr-alpha-/)); // delete before replace
    // item-1 was created as "beta" and updated to "gamma": its new object is created before the old one goes.
    expect(at(/^create gamma-/)).toBeGreaterThan(-1);
    expect(at(/^create gamma-/)).toBeLessThan(at(/^delete beta-/));
    expect(at(/^delete delta-/)).toBeGreaterThan(-1);
    const kinds = items().map(
      (f) => JSON.parse(readFileSync(join(db, f), "utf8")) as { label: string; kind: string },
    );
    expect(kinds.map((k) => `${k.label}:${k.kind}`).sort()).toEqual([
      "child-of-dbr-alpha:plain",
      "dbr-alpha:fancy",
      "gamma:fancy",
    ]);

    const destroy = await run("destroy");
    expect(destroy.ok).toBe(true);
    const order = destroy.steps.map((s) => s.name);
    expect([...order].sort()).toEqual(["child", "item-0", "item-1"]);
    expect(order.indexOf("child")).toBeLessThan(order.indexOf("item-0")); // dependents first
    expect(items()).toEqual([]);
  }, 120_000);

  it("fails with the provider's Check failure, stops the program and reports non-ok", async () => {
    settings(["  tiny:labels: ['']"]);
    const r = await run("up");
    expect(r.ok).toBe(false);
    const failed = r.steps.find((s) => s.error);
    expect(failed?.error).toContain("label must be a non-empty string");
    expect(r.diagnostics.map((d) => d.message)).toContain(
      "the program was stopped after a failed or cancelled operation",
    );
  }, 30_000);

  it("refuses to destroy a protected resource until the program lifts the protection", async () => {
    settings(["  tiny:labels: [prot]", "  tiny:protect: true"]);
    const own = (operation: "up" | "destroy") =>
      runStack({ operation, projectDir, stack, statePath: join(work, "protected.json"), env });
    expect((await own("up")).ok).toBe(true);
    const refused = await own("destroy");
    expect(refused.ok).toBe(false);
    expect(refused.steps.find((s) => s.name === "item-0")?.error).toMatch(
      /resource ".*::item-0" cannot be deleted\nbecause it is protected/,
    );
    expect(items().some((f) => f.startsWith("prot-"))).toBe(true);
    settings(["  tiny:labels: [prot]", "  tiny:protect: false"]);
    expect((await own("up")).counts).toMatchObject({ same: 1, create: 1 }); // the child was destroyed, item-0 kept
    expect((await own("destroy")).ok).toBe(true);
    expect(items().some((f) => f.startsWith("prot-"))).toBe(false);
  }, 120_000);

  it("saves the checkpoint after every step, or only at the end with PULUMI_SKIP_CHECKPOINTS and PULUMI_EXPERIMENTAL", async () => {
    settings(["  tiny:labels: [ckpt]"]);
    /** Whether the checkpoint file existed when each step completed, for a fresh stack. */
    const seen = async (extra: Record<string, string>) => {
      const path = join(work, `ckpt-${Object.keys(extra).length}.json`);
      const existed: boolean[] = [];
      const r = await runStack({
        operation: "up",
        projectDir,
        stack,
        statePath: path,
        env: { ...env, ...extra },
        onEvent: (e) => {
          if (e.kind === "step") existed.push(existsSync(path));
        },
      });
      expect(r.ok).toBe(true);
      expect(existsSync(path)).toBe(true); // the final save
      const destroyed = await runStack({ operation: "destroy", projectDir, stack, statePath: path, env });
      expect(destroyed.ok).toBe(true);
      return existed;
    };
    expect(await seen({})).toEqual([true, true]);
    // only with both: the engine's flag is experimental
    expect(await seen({ PULUMI_SKIP_CHECKPOINTS: "true" })).toEqual([true, true]);
    expect(await seen({ PULUMI_SKIP_CHECKPOINTS: "true", PULUMI_EXPERIMENTAL: "true" })).toEqual([
      false,
      false,
    ]);
  }, 120_000);

  it("names the environment variable a secure setting is read from when it is unset", async () => {
    settings(["  tiny:labels: [alpha]"]);
    await expect(
      runStack({ operation: "preview", projectDir, stack, statePath, env: { TINY_TOKEN: "" } }),
    ).rejects.toThrow(/TINY_TOKEN/);
  });
});
