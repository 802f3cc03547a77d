import { type ChildProcess, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadCheckpoint } from "../../tools/stack/checkpoint";
import { type RunOptions, type RunResult, runStack } from "../../tools/stack/engine";

// The stand-in engine does what pulumi/pulumi's engine does, point by point (issue 11). Each test names the
// engine source of the behaviour; each fails on the stand-in as it was before (noted per test). The fixture
// (test/stack/fixtures/tiny) is a dynamic provider storing items as files, run by the real Node runtime and the
// real dynamic-provider host.
const projectDir = join(__dirname, "fixtures", "tiny");
const root = join(__dirname, "..", "..");
const cli = join(root, "dist", "tools", "stack", "cli.js");
const work = mkdtempSync(join(tmpdir(), "stack-fidelity-"));
const env = { TINY_TOKEN: "fidelity-token" };
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

type Spec = Record<string, unknown>;
interface Case {
  stack: string;
  dir: string;
  db: string;
  statePath: string;
  /** Writes the stack file declaring exactly `items` (and extra `tiny:` settings). */
  declare(items: Record<string, Spec>, extra?: Record<string, string | number>, db?: string): void;
  run(operation: RunOptions["operation"], more?: Partial<RunOptions>): Promise<RunResult>;
  log(): string[];
  files(): string[];
}

let counter = 0;
function newCase(): Case {
  counter += 1;
  const stack = `f${process.pid}x${counter}`;
  const dir = join(work, stack);
  const db = join(dir, "db");
  mkdirSync(db, { recursive: true });
  // The stack's settings live in the test's own directory (`--config-file`), never beside the fixture.
  const stackFile = join(dir, "stack.yaml");
  const statePath = join(dir, "state.json");
  return {
    stack,
    dir,
    db,
    statePath,
    declare(items, extra = {}, dbDir = db) {
      const lines = ["config:", `  tiny:dir: ${dbDir}`, "  tiny:token:", "    secure: v1:x"];
      for (const [k, v] of Object.entries(extra)) lines.push(`  tiny:${k}: ${JSON.stringify(v)}`);
      lines.push(`  tiny:items: ${JSON.stringify(items)}`);
      writeFileSync(stackFile, lines.join("\n"));
    },
    run: (operation, more = {}) =>
      runStack({ operation, projectDir, stack, statePath, configFile: stackFile, env, ...more }),
    log: () => {
      const f = join(dir, "ops.log");
      return existsSync(f) ? readFileSync(f, "utf8").trim().split("\n") : [];
    },
    files: () => readdirSync(db).sort(),
  };
}

const ops = (r: RunResult) => Object.fromEntries(r.steps.map((s) => [s.name, s.op]));
const errors = (r: RunResult) => r.steps.filter((s) => s.error).map((s) => `${s.name}: ${s.error}`);

/** The most `<what>-start` lines of `log` not yet followed by their `<what> ` line. */
function mostAtOnce(log: string[], what: string): number {
  let open = 0;
  let most = 0;
  for (const l of log) {
    if (l.startsWith(`${what}-start `)) most = Math.max(most, ++open);
    else if (l.startsWith(`${what} `)) open -= 1;
  }
  return most;
}

/** Resolves when `check()` holds (polled every 50 ms), rejects after `ms`. */
async function until(check: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting for a condition");
    await new Promise((r) => setTimeout(r, 50));
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** `npm run stack` as a child process (the CLI), so it can be signalled. */
function spawnCli(c: Case, operation: string): { child: ChildProcess; done: Promise<number | null> } {
  const child = spawn(
    process.execPath,
    [
      cli,
      operation,
      ...["--cwd", projectDir, "--stack", c.stack, "--state", c.statePath],
      ...["--config-file", join(c.dir, "stack.yaml"), "--json"],
    ],
    { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout?.resume();
  child.stderr?.resume();
  const done = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  return { child, done };
}

describe("the stand-in engine behaves as the engine does", () => {
  // pkg/engine/project.go (ProgramInfo) and pulumi-language-nodejs main.go: the program runs from dirname(main)
  // with its file as the entry point; runtime.options.tsconfig becomes PULUMI_NODEJS_TSCONFIG_PATH.
  // Before: the program ran from the project directory, with no tsconfig setting.
  it("runs the program from the directory of `main`, with runtime.options.tsconfig passed as the language host does", async () => {
    const c = newCase();
    const proj = join(__dirname, "fixtures", "nested");
    const stackFile = join(c.dir, "nested.yaml");
    writeFileSync(stackFile, `config:\n  tiny:dir: ${c.db}\n  tiny:token: plain\n  tiny:items: {}\n`);
    const r = await runStack({
      operation: "up",
      projectDir: proj,
      stack: c.stack,
      statePath: c.statePath,
      configFile: stackFile,
      env,
    });
    expect(r.ok, JSON.stringify(r.diagnostics)).toBe(true);
    expect(r.outputs.cwd).toBe(join(proj, "program"));
    expect(r.outputs.tsconfigPath).toBe("tsconfig.pulumi.json");
  }, 60_000);

  // provider_plugin.go (Update with preview): the dynamic host does not preview, so an updated resource's preview
  // outputs are its new inputs and every output that is not an input is unknown to dependents; Check and Diff of
  // dependents run with those unknowns (step_generator.go). Before: old outputs stayed known in preview and
  // Check/Diff were skipped for unknown inputs, so `b` previewed as "same" and the Check failure showed only at up.
  it("previews an update's dependents with unknown outputs: Check and Diff run with them", async () => {
    const c = newCase();
    c.declare({
      a: { label: "alpha" },
      b: { label: "beta", noteFromStamp: "a" },
      c: { label: "gamma", noteFromId: "a" },
    });
    expect((await c.run("up")).ok).toBe(true);
    c.declare({
      a: { label: "alpha2" },
      b: { label: "beta", noteFromStamp: "a" },
      c: { label: "gamma", noteFromId: "a" },
    });
    const preview = await c.run("preview");
    expect(preview.ok).toBe(true);
    // b takes a's output-only `stamp`: unknown in preview, so Diff sees a change; c takes a's id: known.
    expect(ops(preview)).toEqual({ a: "update", b: "update", c: "same" });
    const up = await c.run("up");
    expect(ops(up)).toEqual({ a: "update", b: "same", c: "same" }); // the stamp did not change after all
    // A Check failure of a resource that also has an unknown input is reported by the preview.
    c.declare({ a: { label: "alpha3" }, b: { label: "", noteFromStamp: "a" } });
    const bad = await c.run("preview");
    expect(bad.ok).toBe(false);
    expect(errors(bad)).toEqual(["b: invalid inputs: label: label must be a non-empty string"]);
  }, 90_000);

  // step_generator.go / deployment.go / registry.go: standalone refresh and destroy configure providers from the
  // snapshot (the configuration of the last up); `--run-program` uses the current one. Before: the stand-in
  // always read the current stack file.
  it("standalone refresh and destroy use the provider configuration stored at the last up", async () => {
    const c = newCase();
    c.declare({ a: { label: "alpha" } });
    expect((await c.run("up")).ok).toBe(true);
    const elsewhere = join(c.dir, "elsewhere");
    mkdirSync(elsewhere);
    c.declare({ a: { label: "alpha" } }, {}, elsewhere); // only the provider setting changed
    const refresh = await c.run("refresh");
    expect(refresh.ok).toBe(true);
    expect(ops(refresh)).toEqual({ a: "same" }); // read through the stored tiny:dir
    // With --run-program the current setting is used: the item is not found there.
    cpSync(c.statePath, join(c.dir, "copy.json"));
    cpSync(`${c.statePath}.key`, join(c.dir, "copy.json.key"));
    const current = await c.run("refresh", { runProgram: true, statePath: join(c.dir, "copy.json") });
    expect(ops(current)).toEqual({ a: "delete" });
    const destroy = await c.run("destroy");
    expect(destroy.ok).toBe(true);
    expect(c.files()).toEqual([]); // deleted in the stored directory
  }, 90_000);

  // step_executor.go (cancelDueToError): after a failure no new step starts; steps already running finish and
  // are recorded. Before: the program was killed a second after the failure and the provider host closed while
  // the slow create ran, so the object existed and the checkpoint did not know it.
  it("lets operations under way finish and records them when another fails", async () => {
    const c = newCase();
    c.declare({ slow: { label: "slow-a" }, boom: { label: "boom" } }, { slowMs: 2500 });
    const r = await c.run("up");
    expect(r.ok).toBe(false);
    expect(errors(r)).toEqual(["boom: boom: cannot create boom"]);
    expect(c.files()).toHaveLength(1);
    const cp = loadCheckpoint(c.statePath, "tiny", c.stack);
    const slow = cp.resources.find((x) => x.name === "slow");
    expect(`${slow?.id}.json`).toBe(c.files()[0]);
    expect(cp.pendingOperations).toEqual([]);
  }, 60_000);

  // pkg/backend/snapshot.go: the snapshot is saved after every step, with pending operations; plugins end with
  // the CLI. Before: the checkpoint was written only when the run ended (a killed up left none) and the program
  // and provider host outlived a killed engine.
  it("a SIGKILLed up leaves a checkpoint of what it made and its pending create; no child outlives it", async () => {
    const c = newCase();
    c.declare(
      { a: { label: "alpha" }, b: { label: "beta" }, slow: { label: "slow-k", noteFromId: "a" } },
      { slowMs: 60_000 },
    );
    const { child, done } = spawnCli(c, "up");
    await until(() => c.log().some((l) => l.startsWith("create-start slow-k")));
    const hostPid = Number(readFileSync(join(c.dir, "host.pid"), "utf8"));
    const programPid = Number(readFileSync(join(c.dir, "program.pid"), "utf8"));
    child.kill("SIGKILL");
    await done;
    await until(() => !alive(hostPid) && !alive(programPid), 10_000);
    const cp = loadCheckpoint(c.statePath, "tiny", c.stack);
    expect(
      cp.resources
        .filter((x) => x.custom)
        .map((x) => x.name)
        .sort(),
    ).toEqual(["a", "b"]);
    expect(cp.pendingOperations.map((p) => `${p.operation} ${p.name}`)).toEqual(["creating slow"]);
    // The next up warns as the engine does and keeps the pending create for the user to resolve.
    c.declare(
      { a: { label: "alpha" }, b: { label: "beta" }, slow: { label: "slow-k", noteFromId: "a" } },
      { slowMs: 10 },
    );
    const again = await c.run("up");
    expect(again.ok).toBe(true);
    expect(ops(again)).toEqual({ a: "same", b: "same", slow: "create" });
    expect(again.diagnostics.some((d) => d.message.includes("interrupted while creating"))).toBe(true);
    expect(loadCheckpoint(c.statePath, "tiny", c.stack).pendingOperations).toHaveLength(1);
  }, 90_000);

  // pkg/backend/cancellation_scope.go: the first SIGINT/SIGTERM cancels; operations under way finish and are
  // recorded. Before: the CLI had no handler, so it died at once and left its children running.
  it("SIGTERM cancels: the create under way finishes and is recorded, nothing new starts, exit 1", async () => {
    const c = newCase();
    c.declare({ slow: { label: "slow-t" }, after: { label: "after", noteFromId: "slow" } }, { slowMs: 2000 });
    const { child, done } = spawnCli(c, "up");
    await until(() => c.log().some((l) => l.startsWith("create-start slow-t")));
    const hostPid = Number(readFileSync(join(c.dir, "host.pid"), "utf8"));
    child.kill("SIGTERM");
    expect(await done).toBe(1);
    const cp = loadCheckpoint(c.statePath, "tiny", c.stack);
    expect(cp.resources.filter((x) => x.custom).map((x) => x.name)).toEqual(["slow"]);
    expect(cp.pendingOperations).toEqual([]);
    expect(c.files()).toHaveLength(1); // "after" never started
    await until(() => !alive(hostPid), 10_000);
  }, 60_000);

  // The engine sets no deadline on provider calls beyond customTimeouts (step.go passes the custom timeout).
  // Before: every call had a 60 s gRPC deadline and customTimeouts were ignored.
  it("customTimeouts is the only deadline of a provider call", async () => {
    const c = newCase();
    c.declare(
      {
        short: { label: "slow-s", timeouts: { create: "1s" } },
        long: { label: "slow-l", timeouts: { create: "10s" } },
      },
      { slowMs: 2000 },
    );
    const r = await c.run("up");
    expect(r.ok).toBe(false);
    expect(r.steps.find((s) => s.name === "short")?.error).toMatch(/deadline/i);
    expect(r.steps.find((s) => s.name === "long")).toMatchObject({ op: "create" });
    expect(r.steps.find((s) => s.name === "long")?.error).toBeUndefined();
  }, 60_000);

  // step_generator.go ~1957: replacing a protected resource is an error in preview too, unless the same run
  // removes `protect` (`new.Protect && old.Protect`). Before: the preview showed the replacement.
  it("refuses to replace a protected resource already in preview, and allows it when the run lifts protect", async () => {
    const c = newCase();
    c.declare({ p: { label: "alpha", protect: true } });
    expect((await c.run("up")).ok).toBe(true);
    c.declare({ p: { label: "alpha", kind: "fancy", protect: true } });
    const refused = await c.run("preview");
    expect(refused.ok).toBe(false);
    expect(errors(refused)[0]).toMatch(
      /unable to replace resource ".*::p"\nas it is currently marked for protection/,
    );
    c.declare({ p: { label: "alpha", kind: "fancy", protect: false } });
    const lifted = await c.run("up");
    expect(lifted.ok).toBe(true);
    expect(ops(lifted)).toEqual({ p: "replace" });
  }, 90_000);

  // step_generator.go ~2043: the deleteBeforeReplace resource option overrides the provider both ways. Before:
  // `false` could not override a provider asking for delete-before-replace.
  it("the deleteBeforeReplace option overrides the provider's answer, false too", async () => {
    const c = newCase();
    c.declare({
      d: { label: "dbr-x", deleteBeforeReplace: false },
      e: { label: "plain-e", deleteBeforeReplace: true },
    });
    expect((await c.run("up")).ok).toBe(true);
    c.declare({
      d: { label: "dbr-x", kind: "fancy", deleteBeforeReplace: false },
      e: { label: "plain-e", kind: "fancy", deleteBeforeReplace: true },
    });
    writeFileSync(join(c.dir, "ops.log"), "");
    const r = await c.run("up");
    expect(ops(r)).toEqual({ d: "replace", e: "replace" });
    const lines = c.log();
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    expect(at(/^create dbr-x-/)).toBeLessThan(at(/^delete dbr-x-/)); // the provider asked dbr; the option said no
    expect(at(/^delete plain-e-/)).toBeLessThan(at(/^create plain-e-/)); // the option asked dbr
  }, 90_000);

  // properties_path.go (PropertyPath.Reset): ignoreChanges keeps the old value; a path absent from the old inputs
  // is removed from the new ones. Before: a key absent from the old inputs kept its new value (an update).
  it("ignoreChanges keeps old values and removes paths the old inputs lack", async () => {
    const c = newCase();
    c.declare({
      kept: { label: "k", note: "n1", ignoreChanges: ["note"] },
      added: { label: "a", ignoreChanges: ["note"] },
    });
    expect((await c.run("up")).ok).toBe(true);
    c.declare({
      kept: { label: "k", note: "n2", ignoreChanges: ["note"] },
      added: { label: "a", note: "new", ignoreChanges: ["note"] },
    });
    const r = await c.run("preview");
    expect(ops(r)).toEqual({ kept: "same", added: "same" });
  }, 60_000);

  // deployment_executor.go: refresh steps run in parallel (no ordering); ScheduleDeletes runs each antichain of
  // deletes in parallel. Before: one resource at a time.
  it("refreshes and destroys in parallel, dependents still deleted first", async () => {
    const c = newCase();
    c.declare(
      // all three slow: a fast read could end before the last read started on a busy machine (a run saw it)
      { s1: { label: "slow-1" }, s2: { label: "slow-2" }, dep: { label: "slow-dep", noteFromId: "s1" } },
      { slowMs: 800 },
    );
    expect((await c.run("up")).ok).toBe(true);
    writeFileSync(join(c.dir, "ops.log"), "");
    expect((await c.run("refresh")).ok).toBe(true);
    const reads = c.log();
    const firstEnd = reads.findIndex((l) => l.startsWith("read-end"));
    expect(reads.slice(0, firstEnd).filter((l) => l.startsWith("read-start"))).toHaveLength(3);
    writeFileSync(join(c.dir, "ops.log"), "");
    expect((await c.run("destroy")).ok).toBe(true);
    const dels = c.log();
    const at = (re: RegExp) => dels.findIndex((l) => re.test(l));
    expect(at(/^delete slow-dep-/)).toBeLessThan(at(/^delete-start slow-1-/)); // dependents first
    expect(at(/^delete-start slow-2-/)).toBeLessThan(at(/^delete slow-1-/)); // both slow deletes overlap
    expect(c.files()).toEqual([]);
  }, 90_000);

  // step_executor.go (newStepExecutor): every step of an up runs on one of `--parallel` workers (default 4 × CPUs,
  // pkg/cmd/pulumi/up.go defaultParallel), creates too. Before: every create of an up started at once.
  it("runs at most 4 × CPUs creates of an up at once", async () => {
    const parallel = 4 * availableParallelism();
    const c = newCase();
    const items: Record<string, Spec> = {};
    for (let i = 0; i < parallel + 2; i++) items[`s${i}`] = { label: `slow-${i}` };
    c.declare(items, { slowMs: 600 });
    expect((await c.run("up")).ok).toBe(true);
    const log = c.log();
    const firstEnd = log.findIndex((l) => l.startsWith("create "));
    expect(log.slice(0, firstEnd).filter((l) => l.startsWith("create-start"))).toHaveLength(parallel);
    expect(log.filter((l) => l.startsWith("create "))).toHaveLength(parallel + 2);
    expect(c.files()).toHaveLength(parallel + 2);
  }, 90_000);

  // deployment_executor.go (handleSingleEvent) and step_generator.go (generateSteps): the main loop handles one
  // registration at a time and calls the provider's Check inline; only the steps it yields run on the workers.
  // Before: the Check of every registration ran at once.
  it("checks one registration at a time, while the steps already generated run", async () => {
    const c = newCase();
    c.declare(
      { s: { label: "slow-s" }, a: { label: "chk-a" }, b: { label: "chk-b" }, c: { label: "chk-c" } },
      { slowMs: 400 },
    );
    expect((await c.run("up")).ok).toBe(true);
    const log = c.log();
    expect(log.filter((l) => l.startsWith("check-start "))).toHaveLength(3);
    expect(mostAtOnce(log, "check")).toBe(1);
    // slow-s was checked first; its create runs while chk-a is checked
    const created = log.findIndex((l) => l.startsWith("create slow-s-"));
    expect(log.indexOf("check-start chk-a")).toBeLessThan(created);
  }, 60_000);

  // step_generator.go (diff): Diff runs inline too, unless PULUMI_PARALLEL_DIFF (`ParallelDiff`,
  // sdk/go/common/env/env.go, off by default) lets the step generator wait for it on a goroutine. Before: every
  // registration's Diff ran at once, with or without the setting.
  it("diffs one registration at a time, and in parallel with PULUMI_PARALLEL_DIFF", async () => {
    const c = newCase();
    const items = (note?: string) =>
      Object.fromEntries(
        ["d1", "d2", "d3"].map((n) => [n, { label: `dif-${n}`, ...(note ? { note } : {}) }]),
      );
    c.declare(items(), { slowMs: 400 });
    expect((await c.run("up")).ok).toBe(true);
    c.declare(items("one"), { slowMs: 400 });
    expect((await c.run("up")).ok).toBe(true);
    const serial = c.log();
    expect(serial.filter((l) => l.startsWith("diff-start "))).toHaveLength(3);
    expect(mostAtOnce(serial, "diff")).toBe(1);
    c.declare(items("two"), { slowMs: 400 });
    const r = await c.run("up", { env: { ...env, PULUMI_PARALLEL_DIFF: "true" } });
    expect(r.ok).toBe(true);
    expect(mostAtOnce(c.log().slice(serial.length), "diff")).toBeGreaterThan(1);
  }, 90_000);

  // step.go (DeleteStep.Apply, isDeletedWith): a resource deleted with another that is deleted in the same run is
  // removed from the state without the provider's Delete. Before: the option was ignored (Delete was called).
  it("skips the provider's Delete of a resource whose deletedWith resource is deleted too", async () => {
    const c = newCase();
    c.declare({ owner: { label: "owner" }, part: { label: "part", deletedWith: "owner" } });
    expect((await c.run("up")).ok).toBe(true);
    const r = await c.run("destroy");
    expect(r.ok).toBe(true);
    expect(ops(r)).toEqual({ owner: "delete", part: "delete" });
    expect(c.log().some((l) => l.startsWith("delete-start part-"))).toBe(false);
    expect(c.files().map((f) => f.split("-")[0])).toEqual(["part"]); // gone with its owner in real life
    expect(loadCheckpoint(c.statePath, "tiny", c.stack).resources).toEqual([]);
  }, 60_000);
});
