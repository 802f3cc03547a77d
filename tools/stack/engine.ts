/**
 * A STAND-IN for the Pulumi engine, for machines without the Pulumi CLI (tests, `npm start`). Not part of the
 * published package.
 *
 * It runs an unmodified Pulumi program through `@pulumi/pulumi`'s real Node.js runtime
 * (`cmd/run/index.js`, the process the CLI's nodejs language host starts, from the directory of `main`) and
 * serves the two gRPC services that runtime calls: `pulumirpc.ResourceMonitor` and `pulumirpc.Engine`. Every
 * `pulumi-nodejs:dynamic:*` resource goes to the real dynamic-provider host (tools/provider-host.ts), as the
 * engine sends it. Each behaviour follows pulumi/pulumi's engine; the source of each is named where it is
 * implemented and in README "The stand-in engine": Check and Diff with unknowns, an update's preview outputs
 * being its new inputs, stored provider configuration for standalone refresh/destroy, a checkpoint saved after
 * every step with pending operations, running operations finished after a failure or a cancel, no deadline but
 * `customTimeouts`, `protect`, `deleteBeforeReplace`, `ignoreChanges` paths, `deletedWith`, steps run on the
 * default `--parallel` workers (4 × CPUs) in up, refresh and destroy.
 *
 * What it does not do: other providers than dynamic ones, `import`, component providers, `Resource.get`,
 * stack references, policy packs, `--target`, `--parallel`, `--continue-on-error`, secrets providers.
 */
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as engrpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import * as engproto from "@pulumi/pulumi/proto/engine_pb";
import * as resrpc from "@pulumi/pulumi/proto/resource_grpc_pb";
import * as resproto from "@pulumi/pulumi/proto/resource_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { z } from "zod";
import { PARENT_WATCH, type ProviderHost, startProviderHost } from "../provider-host";
import {
  type Checkpoint,
  loadCheckpoint,
  type PendingOperation,
  type ResourceState,
  saveCheckpoint,
} from "./checkpoint";
import { readProject, readStackConfig, type StackConfig, stackFilePath } from "./project";
import {
  applyIgnoreChanges,
  changedKeys,
  deepEqual,
  durationMs,
  type Json,
  type Props,
  toJson,
  unwrapSecrets,
  wrapSecrets,
} from "./values";

export const OperationSchema = z.enum(["preview", "up", "refresh", "destroy"]);
export type Operation = z.output<typeof OperationSchema>;

/** What happened (or, in a preview, would happen) to one resource. */
export const StepOpSchema = z.enum(["create", "update", "replace", "delete", "same"]);
export type StepOp = z.output<typeof StepOpSchema>;

export interface Step {
  op: StepOp;
  urn: string;
  type: string;
  name: string;
  /** Top-level properties that differ (inputs for create/update/replace, outputs for refresh drift). */
  diffs: string[];
  /** Properties forcing the replacement (replace only). */
  replaces?: string[];
  /** The provider's or the engine's error when the operation failed. */
  error?: string;
}

export interface Diagnostic {
  severity: "debug" | "info" | "warning" | "error";
  message: string;
  urn?: string;
}

export type EngineEvent = { kind: "step"; step: Step } | { kind: "diagnostic"; diagnostic: Diagnostic };

export interface RunOptions {
  operation: Operation;
  /** The directory holding Pulumi.yaml and Pulumi.<stack>.yaml (the program's `main` is relative to it). */
  projectDir: string;
  stack: string;
  /** Stack settings file; default `Pulumi.<stack>.yaml` in the project's `stackConfigDir` (like `--config-file`). */
  configFile?: string;
  /** Checkpoint file; default `<projectDir>/.stack-state/<stack>.json`. */
  statePath?: string;
  /** Environment of the program and the provider host (merged over process.env): POSTHOG_HOST, POSTHOG_API_KEY… */
  env?: NodeJS.ProcessEnv;
  /**
   * preview/up only: refresh first (like `pulumi preview --refresh` / `pulumi up --refresh`), so the plan is
   * made against the live objects. The refresh's own steps are not reported; its drift shows in the plan.
   */
  refresh?: boolean;
  /**
   * refresh/destroy only: configure the provider with the CURRENT stack settings, as `--run-program` does,
   * instead of those stored at the last `up` (the program itself is not run by this stand-in).
   */
  runProgram?: boolean;
  /** Cancels the run as the CLI's first Ctrl-C does: no new operation starts, those under way finish. */
  signal?: AbortSignal;
  /** Called for every step as it completes and every diagnostic (program logs, provider output). */
  onEvent?: (event: EngineEvent) => void;
}

export type Counts = Record<StepOp, number>;

export interface RunResult {
  operation: Operation;
  stack: string;
  /** False when any operation, the program or the provider host failed. */
  ok: boolean;
  counts: Counts;
  steps: Step[];
  /** Stack outputs (secret values shown as "[secret]"). */
  outputs: Record<string, Json>;
  diagnostics: Diagnostic[];
}

const ROOT_TYPE = "pulumi:pulumi:Stack";

/** `urn:pulumi:<stack>::<project>::<qualified type>::<name>`; the qualified type chains non-root parents' types. */
function makeUrn(
  stack: string,
  project: string,
  type: string,
  name: string,
  parent: string | undefined,
): string {
  let qualified = type;
  if (parent) {
    const parentType = parent.split("::")[2] ?? "";
    if (parentType !== ROOT_TYPE) qualified = `${parentType}$${type}`;
  }
  return `urn:pulumi:${stack}::${project}::${qualified}::${name}`;
}

function isDynamic(type: string): boolean {
  return type.startsWith("pulumi-nodejs:dynamic");
}

/** The message of a gRPC error from the provider host, else of any error. */
function messageOf(e: unknown): string {
  if (e && typeof e === "object" && "details" in e && typeof e.details === "string" && e.details)
    return e.details;
  return e instanceof Error ? e.message : String(e);
}

function withoutProvider(p: Props): Props {
  const { __provider: _ignored, ...rest } = p;
  return rest;
}

/** Which top-level properties of a stored resource are secret (wire form). */
function secretKeysOf(p: Props): string[] {
  return unwrapSecrets(p).secretKeys;
}

/** Masks secret values for display. */
function masked(p: Props): Record<string, Json> {
  const { plain, secretKeys } = unwrapSecrets(p);
  return Object.fromEntries(
    Object.entries(plain).map(([k, v]) => [k, secretKeys.includes(k) ? "[secret]" : v]),
  );
}

/** Starts a gRPC server on 127.0.0.1:0 with the given services; resolves its address. */
async function serve(
  services: [grpc.ServiceDefinition, grpc.UntypedServiceImplementation][],
): Promise<{ address: string; server: grpc.Server }> {
  const server = new grpc.Server();
  for (const [def, impl] of services) server.addService(def, impl);
  const port = await new Promise<number>((res, rej) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? rej(err) : res(p),
    ),
  );
  return { address: `127.0.0.1:${port}`, server };
}

type Callback<T> = (err: Partial<grpc.StatusObject> | null, value?: T) => void;

function unary<Req, Res>(f: (req: Req) => Promise<Res>) {
  return (call: grpc.ServerUnaryCall<Req, Res>, cb: Callback<Res>) => {
    f(call.request).then(
      (res) => cb(null, res),
      (e: unknown) => cb({ code: grpc.status.UNKNOWN, details: messageOf(e) }),
    );
  };
}

/** How many steps (provider operations that change or read state) run at once, in an up as in a refresh or a
 * destroy: the engine's default `--parallel` is 4 × the number of CPUs (pkg/cmd/pulumi/up.go, `defaultParallel`),
 * and its step executor runs every step on one of that many workers (pkg/resource/deploy/step_executor.go,
 * `newStepExecutor`: one worker goroutine per degree of parallelism). */
const PARALLEL = 4 * availableParallelism();

/**
 * A registration or step that never started: the run stopped before its turn came (not a failure of its own).
 */
class NotStarted extends Error {
  constructor(name: string) {
    super(`${name}: not started, the deployment is stopping`);
  }
}

/**
 * The step executor's workers for the steps of an up (creates, updates, replacements): `run(f)` runs `f` once
 * fewer than `size` steps are running, in the order steps arrive; a step whose turn comes after the gate
 * stopped is not started (it throws {@link NotStarted}), as the engine's workers exit once its context is
 * cancelled (step_executor.go, `worker`). Check and Diff are not steps: the step generator calls them, one
 * registration at a time (see {@link makeStepGenerator}).
 */
function makeWorkers(size: number, gate: Gate) {
  let busy = 0;
  const waiting: (() => void)[] = [];
  return async function run<T>(name: string, f: () => Promise<T>): Promise<T> {
    if (busy < size) busy += 1;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      if (gate.stopped) throw new NotStarted(name);
      return await f();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else busy -= 1;
    }
  };
}

/**
 * The step generator's turn: `run(f)` runs `f` once every `f` passed before it has finished, in the order of the
 * calls. The engine's deployment executor handles one event at a time in its main loop (`handleSingleEvent`,
 * pkg/resource/deploy/deployment_executor.go), and for a registration the step generator calls the provider's
 * Check, then its Diff, inline (`generateSteps`, step_generator.go); only the steps it yields run on the
 * executor's workers. So the Check (and Diff) of one registration never overlaps another's, while the creates
 * and updates already generated run. Diffs leave the loop only with `PULUMI_PARALLEL_DIFF` (`ParallelDiff`,
 * sdk/go/common/env/env.go; off by default): the step generator then waits for them on a goroutine.
 */
function makeStepGenerator() {
  let last: Promise<unknown> = Promise.resolve();
  return function run<T>(f: () => Promise<T>): Promise<T> {
    const turn = last.then(f);
    last = turn.catch(() => undefined);
    return turn;
  };
}

/**
 * Stops a run the way the engine's step executor does: once a step fails (or the run is cancelled), no new
 * step starts; steps already running finish and are recorded (pkg/resource/deploy/step_executor.go).
 */
interface Gate {
  readonly stopped: boolean;
  stop(): void;
  onStop(f: () => void): void;
}

function makeGate(signal?: AbortSignal): Gate {
  let stopped = false;
  const listeners: (() => void)[] = [];
  const gate: Gate = {
    get stopped() {
      return stopped;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      for (const f of listeners.splice(0)) f();
    },
    onStop(f) {
      if (stopped) f();
      else listeners.push(f);
    },
  };
  if (signal?.aborted) gate.stop();
  signal?.addEventListener("abort", () => gate.stop(), { once: true });
  return gate;
}

/** True when `r` must be deleted after `other`'s deletion (other is its child or depends on it). */
function dependsOn(other: ResourceState, r: ResourceState): boolean {
  return (
    other !== r &&
    (other.parent === r.urn || other.dependencies.includes(r.urn) || other.deletedWith === r.urn)
  );
}

/** Resources ordered so that each comes after its parent and its dependencies (stable otherwise). */
function dependencyOrder(resources: ResourceState[]): ResourceState[] {
  const byUrn = new Map<string, ResourceState[]>();
  for (const r of resources) byUrn.set(r.urn, [...(byUrn.get(r.urn) ?? []), r]);
  const out: ResourceState[] = [];
  const seen = new Set<ResourceState>();
  const visit = (r: ResourceState, path: Set<ResourceState>) => {
    if (seen.has(r) || path.has(r)) return;
    path.add(r);
    for (const u of [...(r.parent ? [r.parent] : []), ...r.dependencies]) {
      for (const d of byUrn.get(u) ?? []) if (d !== r) visit(d, path);
    }
    seen.add(r);
    out.push(r);
  };
  for (const r of resources) visit(r, new Set());
  return out;
}

/**
 * The checkpoint as a run changes it, saved after every step and around every provider operation that
 * changes something, as the engine's snapshot manager does (pkg/backend/snapshot.go): a run that is killed
 * leaves what it made in the checkpoint and what it was doing in `pendingOperations`. A preview never saves.
 * With `PULUMI_SKIP_CHECKPOINTS=true` and `PULUMI_EXPERIMENTAL=true` (the engine's experimental flag, which needs
 * the other: sdk/go/common/env/env.go `SkipCheckpoints = env.Bool("SKIP_CHECKPOINTS", …, env.Needs(Experimental))`;
 * the snapshot journaler then runs `unsafeServiceLoop`, saving only the final deployment, pkg/backend/snapshot.go),
 * only the final save is made: saving the whole checkpoint after every step costs O(n²) in the stack's size.
 */
interface Journal {
  current(): Checkpoint;
  /** Records an operation about to start; the returned function forgets it (saved with the next change). */
  begin(op: Omit<PendingOperation, "startedAt">): () => void;
  /** Records `r`, in place of `replacing` when given. */
  put(r: ResourceState, replacing?: ResourceState): void;
  remove(r: ResourceState): void;
  /** Marks the old half of a create-before-delete replacement for deletion; returns the marked entry. */
  condemn(r: ResourceState): ResourceState;
  setProviderConfig(config: Props): void;
  save(): void;
}

function makeJournal(base: Checkpoint, statePath: string | undefined, skipCheckpoints = false): Journal {
  let resources = [...base.resources];
  let pending: PendingOperation[] = [];
  let providerConfig = base.providerConfig;
  // The engine keeps an earlier run's pending CREATES (their objects are in no state: only the user can say what
  // became of them) and drops its pending updates and deletes at the first write (pkg/backend/snapshot.go Snap).
  const carried = base.pendingOperations.filter((p) => p.operation === "creating");
  const current = (): Checkpoint => ({
    ...base,
    resources: dependencyOrder(resources),
    pendingOperations: [...carried, ...pending],
    ...(providerConfig ? { providerConfig } : {}),
  });
  const final = () => {
    if (statePath) saveCheckpoint(statePath, current());
  };
  const save = skipCheckpoints ? () => undefined : final;
  return {
    current,
    save: final,
    begin(op) {
      const entry: PendingOperation = { ...op, startedAt: new Date().toISOString() };
      pending = [...pending, entry];
      save();
      return () => {
        pending = pending.filter((p) => p !== entry);
      };
    },
    put(r, replacing) {
      resources = [...resources.filter((x) => x !== replacing), r];
      save();
    },
    remove(r) {
      resources = resources.filter((x) => x !== r);
      save();
    },
    condemn(r) {
      const marked = { ...r, delete: true };
      resources = resources.map((x) => (x === r ? marked : x));
      save();
      return marked;
    },
    setProviderConfig(config) {
      providerConfig = config;
      save();
    },
  };
}

/**
 * Runs `work` on every item, at most `limit` at a time, starting an item only when `blocked(item, pending)`
 * is false (`pending`: items not finished). Stops starting items once the gate is stopped (a failure stops it);
 * resolves when nothing runs any more.
 */
function runAll<T>(
  items: T[],
  blocked: (item: T, pending: Set<T>) => boolean,
  work: (item: T) => Promise<void>,
  gate: Gate,
  limit = PARALLEL,
): Promise<void> {
  const pending = new Set(items);
  const running = new Set<T>();
  return new Promise((resolve) => {
    const pump = () => {
      if (!gate.stopped) {
        for (const item of pending) {
          if (running.size >= limit) break;
          if (running.has(item) || blocked(item, pending)) continue;
          running.add(item);
          work(item)
            .catch(() => gate.stop())
            .finally(() => {
              running.delete(item);
              pending.delete(item);
              pump();
            });
        }
      }
      if (running.size === 0) resolve();
    };
    pump();
  });
}

/** Milliseconds of one of a resource's `customTimeouts`, else undefined (no deadline, as the engine). */
function timeoutOf(
  r: { customTimeouts?: ResourceState["customTimeouts"] },
  op: "create" | "update" | "delete" | "read",
) {
  return durationMs(r.customTimeouts?.[op] ?? "");
}

/** The engine's refusal to delete a protected resource (`DeleteStep.Apply`, pkg/resource/deploy/step.go). */
function protectedDeleteError(r: ResourceState): Error {
  return new Error(
    `resource "${r.urn}" cannot be deleted\nbecause it is protected. To unprotect the resource, either remove the \`protect\` flag from the resource in your Pulumi program and run \`pulumi up\`, or use the command:\n\`pulumi state unprotect ${r.urn}\``,
  );
}

/** The engine's refusal to replace a protected resource (pkg/resource/deploy/step_generator.go ~1957). */
function protectedReplaceError(urn: string): Error {
  return new Error(
    `unable to replace resource "${urn}"\nas it is currently marked for protection. To unprotect the resource, remove the \`protect\` flag from the resource in your Pulumi program and run \`pulumi up\``,
  );
}

/**
 * Deletes a resource through the provider as the engine does: refuses a protected one; only forgets one with
 * `retainOnDelete`, or one whose `deletedWith` resource is deleted in the same run (`deleting`).
 * Records the pending operation while the provider works, and removes the resource from the journal after.
 * @throws Error for a protected resource; the provider's gRPC error when its delete fails.
 */
async function deleteOne(
  host: () => Promise<ProviderHost>,
  journal: Journal,
  r: ResourceState,
  deleting: Set<string>,
): Promise<void> {
  // The old half of a replacement is deleted even when protected (`!s.replacing && s.old.Protect`, step.go).
  if (r.protect && !r.delete) throw protectedDeleteError(r);
  const skip = !r.custom || r.retainOnDelete || (r.deletedWith !== undefined && deleting.has(r.deletedWith));
  if (!skip) {
    const h = await host();
    const end = journal.begin({
      urn: r.urn,
      type: r.type,
      name: r.name,
      operation: "deleting",
      ...(r.id ? { id: r.id } : {}),
      inputs: r.inputs,
    });
    try {
      await h.delete(r.id ?? "", r.urn, unwrapSecrets(r.outputs).plain, timeoutOf(r, "delete"));
    } finally {
      end();
    }
  }
  journal.remove(r);
}

/**
 * Deletes `targets` in parallel, each only after every other target that depends on it (dependents first), as
 * the engine's delete steps run. The first failure stops new deletes; running ones finish.
 */
async function deleteAll(
  targets: ResourceState[],
  host: () => Promise<ProviderHost>,
  journal: Journal,
  gate: Gate,
  report: (r: ResourceState, error?: string) => void,
): Promise<boolean> {
  let ok = true;
  const deleting = new Set(targets.map((r) => r.urn));
  /** Resources that stay (refused): what they depend on is not deleted either. */
  const failedHere = new Set<ResourceState>();
  /** The targets that must be deleted before each target (computed once, not on every scheduling pass). */
  const after = new Map(targets.map((r) => [r, targets.filter((o) => dependsOn(o, r))]));
  await runAll(
    targets,
    (r, pending) => (after.get(r) ?? []).some((o) => pending.has(o) || failedHere.has(o)),
    async (r) => {
      try {
        await deleteOne(host, journal, r, deleting);
        report(r);
      } catch (e) {
        ok = false;
        report(r, messageOf(e));
        // A protected resource's refusal does not stop the other deletes (step_executor.go ~447); its
        // dependencies stay, since it does.
        if (!r.protect) throw e;
        failedHere.add(r);
      }
    },
    gate,
  );
  return ok;
}

/** The warning the engine prints for pending operations left by an interrupted run (deployment_executor.go). */
function pendingWarning(pending: PendingOperation[]): string {
  return [
    `Attempting to deploy or update resources with ${pending.length} pending operations from previous deployment.`,
    ...pending.map((p) => `  * ${p.urn}, interrupted while ${p.operation}`),
    "These resources are in an unknown state because the Pulumi CLI was interrupted while waiting for changes to these resources to complete. You should confirm whether or not the operations listed completed successfully by checking the state of the appropriate provider.",
    "Once you have confirmed the status of the interrupted operations, you can repair your stack using `pulumi refresh` which will refresh the state from the provider you are using and clear the pending operations if there are any.",
    "Note that `pulumi refresh` will need to be run interactively to clear pending CREATE operations.",
  ].join("\n");
}

/**
 * Runs one operation on a stack, as the engine does (each behaviour's pulumi/pulumi source is named where it
 * is implemented, and in README "The stand-in engine"), saving the checkpoint after every step (not for
 * preview).
 * - preview: runs the program with `--dry-run`; Check and Diff only (with unknowns, as the engine calls them).
 * - up: runs the program; creates, updates, replaces; then deletes what the program no longer declares.
 * - refresh: Reads every resource in the checkpoint, in parallel; reports drift and removes resources that
 *   are gone.
 * - destroy: deletes every resource, in parallel, dependents first.
 * Standalone refresh and destroy configure the provider with the configuration stored at the last `up` (the
 * engine's providers come from the snapshot), unless `runProgram` is set.
 * Never throws for a failed operation: `ok` is false and the step carries the error. Throws only when the
 * project or stack settings cannot be read.
 */
export async function runStack(opts: RunOptions): Promise<RunResult> {
  const projectDir = resolve(opts.projectDir);
  const project = readProject(projectDir);
  const env = { ...process.env, ...opts.env };
  const statePath = resolve(opts.statePath ?? join(projectDir, ".stack-state", `${opts.stack}.json`));
  const checkpoint = loadCheckpoint(statePath, project.name, opts.stack);
  const standalone = (opts.operation === "refresh" || opts.operation === "destroy") && !opts.runProgram;
  const stored = checkpoint.providerConfig ? unwrapSecrets(checkpoint.providerConfig) : undefined;
  const config: StackConfig =
    standalone && stored
      ? { values: stored.plain as Record<string, string>, secretKeys: stored.secretKeys }
      : readStackConfig(opts.configFile ?? stackFilePath(projectDir, project, opts.stack), project.name, env);
  const steps: Step[] = [];
  const diagnostics: Diagnostic[] = [];
  const emit = (event: EngineEvent) => {
    if (event.kind === "step") steps.push(event.step);
    else diagnostics.push(event.diagnostic);
    opts.onEvent?.(event);
  };
  const diag = (severity: Diagnostic["severity"], message: string, urn?: string) =>
    emit({ kind: "diagnostic", diagnostic: { severity, message, ...(urn ? { urn } : {}) } });
  const gate = makeGate(opts.signal);
  gate.onStop(() => {
    if (opts.signal?.aborted) diag("warning", "cancelling: waiting for the operations under way to finish");
  });

  // Pending operations of an interrupted run: `up` (without --refresh) and `destroy` warn
  // (printPendingOperationsWarning, pkg/resource/deploy/deployment_executor.go); a pending create's object is
  // in no state, so `up` creates it anew; an update's or delete's resource keeps its last recorded state.
  const warnPending = opts.operation === "destroy" || (opts.operation === "up" && !opts.refresh);
  if (checkpoint.pendingOperations.length > 0 && warnPending) {
    diag("warning", pendingWarning(checkpoint.pendingOperations));
  }
  const flag = (v: string | undefined) => v === "true" || v === "1";
  const journal = makeJournal(
    checkpoint,
    opts.operation === "preview" ? undefined : statePath,
    flag(env.PULUMI_SKIP_CHECKPOINTS) && flag(env.PULUMI_EXPERIMENTAL),
  );
  const { pwd: programDir } = programLocation(projectDir, project.main ?? ".");

  let host: ProviderHost | undefined;
  let hostStarting: Promise<ProviderHost> | undefined;
  const getHost = (): Promise<ProviderHost> => {
    hostStarting ??= (async () => {
      // The engine starts provider plugins in the program's directory (ExecPlugin sets cmd.Dir = ctx.Pwd,
      // pkg/resource/plugin/plugin.go; Pwd from getPwdMain, pkg/engine/project.go).
      const h = await startProviderHost({
        cwd: programDir,
        project: project.name,
        env,
        onOutput: (text) => {
          for (const line of text.split("\n")) if (line.trim()) diag("info", `[provider] ${line}`);
        },
      });
      host = h;
      await h.configure(config.values, config.secretKeys);
      return h;
    })();
    return hostStarting;
  };

  let ok = true;
  let outputs: Props = {};
  // Start the provider host while the program boots (each takes about a second); errors surface on first use.
  // The engine starts it later, at the first registration that needs it (CONTRIBUTING, "What it does not do").
  getHost().catch(() => undefined);
  try {
    if (opts.operation === "refresh") {
      ok = await refresh(journal, getHost, emit, gate);
    } else if (opts.operation === "destroy") {
      ok = await destroy(journal, getHost, emit, gate);
    } else {
      if (opts.refresh) {
        // Only failures of the refresh are reported (as diagnostics); its drift shows up in the plan.
        const refreshed = await refresh(
          journal,
          getHost,
          (e) => {
            if (e.kind === "diagnostic") emit(e);
            else if (e.step.error) diag("error", `refresh of ${e.step.name}: ${e.step.error}`, e.step.urn);
          },
          gate,
        );
        if (!refreshed) throw new Error("the refresh before the deployment failed");
      }
      // The engine stores the provider's configuration with the deployment (the default provider's inputs).
      if (opts.operation === "up") journal.setProviderConfig(wrapSecrets(config.values, config.secretKeys));
      const r = await deploy({
        journal,
        project: project.name,
        projectDir,
        main: project.main ?? ".",
        typescript:
          typeof project.runtime === "object" ? project.runtime.options?.typescript !== false : true,
        tsconfig:
          typeof project.runtime === "object" && typeof project.runtime.options?.tsconfig === "string"
            ? project.runtime.options.tsconfig
            : undefined,
        stack: opts.stack,
        config,
        dryRun: opts.operation === "preview",
        parallelDiff: flag(env.PULUMI_PARALLEL_DIFF),
        env,
        getHost,
        emit,
        diag,
        gate,
      });
      ({ ok, outputs } = r);
    }
  } catch (e) {
    ok = false;
    diag("error", messageOf(e));
  } finally {
    if (hostStarting) await hostStarting.catch(() => undefined);
    await host?.close();
  }
  if (opts.operation !== "preview") journal.save();
  if (opts.signal?.aborted) {
    ok = false;
    diag("error", "the run was cancelled; the checkpoint records what was done");
  }
  const counts: Counts = { create: 0, update: 0, replace: 0, delete: 0, same: 0 };
  for (const s of steps) if (!s.error) counts[s.op] += 1;
  if (steps.some((s) => s.error)) ok = false;
  return {
    operation: opts.operation,
    stack: opts.stack,
    ok,
    counts,
    steps,
    outputs: masked(outputs),
    diagnostics,
  };
}

interface DeployArgs {
  journal: Journal;
  project: string;
  projectDir: string;
  main: string;
  typescript: boolean;
  tsconfig: string | undefined;
  stack: string;
  config: StackConfig;
  dryRun: boolean;
  /** `PULUMI_PARALLEL_DIFF`: Diff runs outside the step generator's turn (see makeStepGenerator). */
  parallelDiff: boolean;
  env: NodeJS.ProcessEnv;
  getHost: () => Promise<ProviderHost>;
  emit: (e: EngineEvent) => void;
  diag: (severity: Diagnostic["severity"], message: string, urn?: string) => void;
  gate: Gate;
}

async function deploy(a: DeployArgs): Promise<{ ok: boolean; outputs: Props }> {
  const base = a.journal.current();
  /** The live (not condemned) old state of each URN. */
  const olds = new Map(base.resources.filter((r) => !r.delete).map((r) => [r.urn, r]));
  /** Old halves of replacements left by an earlier run: deleted after a successful program run. */
  const condemnedBefore = base.resources.filter((r) => r.delete);
  /** Every URN the program declared (in a preview, also those whose new state is not recorded). */
  const declared = new Set<string>();
  /** Old halves of create-before-delete replacements of this run: deleted after the program finished. */
  const condemned: ResourceState[] = [];
  /** New state of components (outputs arrive with registerResourceOutputs). */
  const components = new Map<string, ResourceState>();
  const inflight = new Set<Promise<unknown>>();
  let rootUrn = "";
  let stackOutputs: Props = {};
  let failed = false;
  let stopProgram: (() => void) | undefined;
  /** Like the engine, end the program once nothing runs after a failure (its next registrations would wait). */
  const stopWhenIdle = () => {
    if (a.gate.stopped && inflight.size === 0) stopProgram?.();
  };
  a.gate.onStop(stopWhenIdle);
  const step = (s: Step) => a.emit({ kind: "step", step: s });
  const worker = makeWorkers(PARALLEL, a.gate);
  const generate = makeStepGenerator();

  async function registerCustom(
    req: resproto.RegisterResourceRequest,
    urn: string,
  ): Promise<{ id: string; outs: Props }> {
    const type = req.getType();
    const name = req.getName();
    const old = olds.get(urn);
    if (!isDynamic(type))
      throw new Error(`${urn}: only dynamic-provider resources are supported by this stand-in engine`);
    const props = toJson(req.getObject()?.toJavaScript() ?? {});
    const { plain, secretKeys } = unwrapSecrets(props);
    const aso = req.getAdditionalsecretoutputsList();
    const ct = req.getCustomtimeouts();
    const customTimeouts = {
      ...(ct?.getCreate() ? { create: ct.getCreate() } : {}),
      ...(ct?.getUpdate() ? { update: ct.getUpdate() } : {}),
      ...(ct?.getDelete() ? { delete: ct.getDelete() } : {}),
      ...(ct?.getRead() ? { read: ct.getRead() } : {}),
    };
    const base: Omit<ResourceState, "inputs" | "outputs"> = {
      urn,
      type,
      name,
      custom: true,
      ...(req.getParent() ? { parent: req.getParent() } : {}),
      dependencies: req.getDependenciesList(),
      additionalSecretOutputs: aso,
      ...(req.getDeletebeforereplacedefined() ? { deleteBeforeReplace: req.getDeletebeforereplace() } : {}),
      ...(req.getProtect() ? { protect: true } : {}),
      ...(req.getRetainondelete() ? { retainOnDelete: true } : {}),
      ...(req.getDeletedwith() ? { deletedWith: req.getDeletedwith() } : {}),
      ...(Object.keys(customTimeouts).length > 0 ? { customTimeouts } : {}),
    };
    const oldInputs = old ? unwrapSecrets(old.inputs).plain : {};
    const oldOutputs = old ? unwrapSecrets(old.outputs).plain : {};
    const oldSecretOutputs = old ? secretKeysOf(old.outputs) : [];
    // ignoreChanges: property paths; the old value is kept, a path absent from the old inputs is removed
    // (processIgnoreChanges, step_generator.go; PropertyPath.Reset, properties_path.go). Only for updates.
    const news = old ? applyIgnoreChanges(oldInputs, plain, req.getIgnorechangesList()) : plain;

    // Check always runs, unknowns included (step_generator.go: the engine calls Check in preview with
    // unknowns allowed; the dynamic host passes the unknown sentinel through to the provider). Check and Diff
    // run in the step generator's turn, one registration at a time (makeStepGenerator).
    const diffOf = (host: ProviderHost, id: string, inputs: Props) => host.diff(id, urn, oldOutputs, inputs);
    const generated = await generate(async () => {
      // After a failure the main loop has ended: no later registration is checked.
      if (a.gate.stopped) throw new NotStarted(name);
      const host = await a.getHost();
      const checked = await host.check(urn, oldInputs, news);
      if (checked.failures.length > 0) {
        const list = checked.failures.map((f) => `${f.property}: ${f.reason}`).join("; ");
        throw new Error(`invalid inputs: ${list}`);
      }
      const inputs = toJson(checked.inputs);
      // Diff always runs for an existing resource, unknowns included (diffResource, step_generator.go); olds
      // are the old outputs. With parallel diffs it runs after the turn.
      const diffed = old?.id && !a.parallelDiff ? await diffOf(host, old.id, inputs) : undefined;
      return { host, inputs, diffed };
    });
    const { host, inputs } = generated;
    const storedInputs = wrapSecrets(inputs, secretKeys);
    const secretOut = [...new Set([...secretKeys, ...aso])];
    const diffs = changedKeys(withoutProvider(oldInputs), withoutProvider(inputs));
    /** A provider call that changes something: recorded as pending while it runs. */
    const pendingOp = async <T>(
      operation: PendingOperation["operation"],
      f: () => Promise<T>,
    ): Promise<T> => {
      const end = a.journal.begin({
        urn,
        type,
        name,
        operation,
        ...(old?.id && operation !== "creating" ? { id: old.id } : {}),
        inputs: storedInputs,
      });
      try {
        return await f();
      } finally {
        end();
      }
    };

    if (!old?.id) {
      // Preview of a create: the outputs are the inputs; every other output is unknown to the program
      // (the dynamic host does not preview: provider_plugin.go, Create with preview; rpc.js resolveProperties).
      if (a.dryRun) {
        step({ op: "create", urn, type, name, diffs });
        return { id: "", outs: wrapSecrets(inputs, secretOut) };
      }
      const created = await worker(name, () =>
        pendingOp("creating", () => host.create(urn, inputs, timeoutOf(base, "create"))),
      );
      const outs = wrapSecrets(toJson(created.outs), secretOut);
      a.journal.put({ ...base, id: created.id, inputs: storedInputs, outputs: outs });
      step({ op: "create", urn, type, name, diffs });
      return { id: created.id, outs };
    }

    const d = generated.diffed ?? (await diffOf(host, old.id, inputs));
    const changes = d.changes ?? !deepEqual(withoutProvider(oldInputs), withoutProvider(inputs));
    if (!changes) {
      const outs = wrapSecrets(oldOutputs, [...secretOut, ...oldSecretOutputs]);
      if (!a.dryRun) a.journal.put({ ...base, id: old.id, inputs: storedInputs, outputs: outs }, old);
      step({ op: "same", urn, type, name, diffs: [] });
      return { id: old.id, outs };
    }
    if (d.replaces.length > 0) {
      const replaces = [...d.replaces].sort();
      // A protected resource cannot be replaced, in preview too, unless this run lifts the protection
      // (`new.Protect && old.Protect`, step_generator.go).
      if (old.protect && req.getProtect()) throw protectedReplaceError(urn);
      if (a.dryRun) {
        step({ op: "replace", urn, type, name, diffs, replaces });
        return { id: "", outs: wrapSecrets(inputs, secretOut) };
      }
      // The resource option overrides the provider's answer both ways (step_generator.go).
      const deleteFirst = req.getDeletebeforereplacedefined()
        ? req.getDeletebeforereplace()
        : d.deleteBeforeReplace;
      // One step on one worker: the delete (delete-before-replace) and the create.
      const created = await worker(name, async () => {
        if (deleteFirst) {
          await pendingOp("deleting", () =>
            host.delete(old.id ?? "", urn, oldOutputs, timeoutOf(old, "delete")),
          );
          a.journal.remove(old);
        } else {
          condemned.push(a.journal.condemn(old));
        }
        return pendingOp("creating", () => host.create(urn, inputs, timeoutOf(base, "create")));
      });
      const outs = wrapSecrets(toJson(created.outs), secretOut);
      a.journal.put({ ...base, id: created.id, inputs: storedInputs, outputs: outs });
      step({ op: "replace", urn, type, name, diffs, replaces });
      return { id: created.id, outs };
    }
    // Preview of an update: the outputs are the NEW INPUTS, not the old outputs merged (provider_plugin.go,
    // Update with preview): an output that is not an input is unknown to the program's dependents.
    if (a.dryRun) {
      step({ op: "update", urn, type, name, diffs });
      return { id: old.id, outs: wrapSecrets(inputs, secretOut) };
    }
    const updated = await worker(name, () =>
      pendingOp("updating", () =>
        host.update(old.id ?? "", urn, oldOutputs, inputs, timeoutOf(base, "update")),
      ),
    );
    const outs = wrapSecrets(toJson(updated.outs), secretOut);
    a.journal.put({ ...base, id: old.id, inputs: storedInputs, outputs: outs }, old);
    step({ op: "update", urn, type, name, diffs });
    return { id: old.id, outs };
  }

  /** Tracks a registration while it runs, so a stopping run waits for it. */
  function track<T>(p: Promise<T>): Promise<T> {
    inflight.add(p);
    const done = () => {
      inflight.delete(p);
      stopWhenIdle();
    };
    p.then(done, done);
    return p;
  }

  const monitor: grpc.UntypedServiceImplementation = {
    supportsFeature: unary(async (req: resproto.SupportsFeatureRequest) =>
      new resproto.SupportsFeatureResponse().setHassupport(["secrets", "deletedWith"].includes(req.getId())),
    ),
    registerResource: unary((req: resproto.RegisterResourceRequest) =>
      track(
        (async () => {
          const type = req.getType();
          const name = req.getName();
          const parent = req.getParent() || undefined;
          const urn = makeUrn(a.stack, a.project, type, name, parent);
          const res = new resproto.RegisterResourceResponse().setUrn(urn);
          declared.add(urn);
          if (!req.getCustom()) {
            if (type === ROOT_TYPE) rootUrn = urn;
            const old = olds.get(urn);
            const state: ResourceState = {
              urn,
              type,
              name,
              custom: false,
              ...(parent ? { parent } : {}),
              dependencies: req.getDependenciesList(),
              inputs: {},
              outputs: old?.outputs ?? {},
              additionalSecretOutputs: [],
              ...(req.getProtect() ? { protect: true } : {}),
            };
            components.set(urn, state);
            if (!a.dryRun) a.journal.put(state, old);
            if (type !== ROOT_TYPE) step({ op: old ? "same" : "create", urn, type, name, diffs: [] });
            return res.setObject(Struct.fromJavaScript({}));
          }
          // After a failure (or a cancel) the engine starts no new step.
          if (a.gate.stopped) throw new NotStarted(name);
          try {
            const { id, outs } = await registerCustom(req, urn);
            return res.setId(id).setObject(Struct.fromJavaScript(outs as Record<string, never>));
          } catch (e) {
            if (e instanceof NotStarted) throw e;
            failed = true;
            const error = messageOf(e);
            step({ op: olds.has(urn) ? "update" : "create", urn, type, name, diffs: [], error });
            a.gate.stop();
            throw new Error(error);
          }
        })(),
      ),
    ),
    registerResourceOutputs: unary(async (req: resproto.RegisterResourceOutputsRequest) => {
      const outs = toJson(req.getOutputs()?.toJavaScript() ?? {});
      const r = components.get(req.getUrn());
      if (r) {
        const next = { ...r, outputs: outs };
        components.set(r.urn, next);
        if (!a.dryRun) a.journal.put(next, r);
      }
      if (req.getUrn() === rootUrn) stackOutputs = outs;
      return new Empty();
    }),
    invoke: unary(async (req: resproto.ResourceInvokeRequest): Promise<never> => {
      throw new Error(`invoke ${req.getTok()} is not supported by this stand-in engine`);
    }),
    readResource: unary(async (req: resproto.ReadResourceRequest): Promise<never> => {
      throw new Error(
        `reading ${req.getType()} ${req.getName()} (Resource.get) is not supported by this stand-in engine`,
      );
    }),
    signalAndWaitForShutdown: unary(async () => new Empty()),
  };
  const severities: Record<number, Diagnostic["severity"]> = {
    [engproto.LogSeverity.DEBUG]: "debug",
    [engproto.LogSeverity.INFO]: "info",
    [engproto.LogSeverity.WARNING]: "warning",
    [engproto.LogSeverity.ERROR]: "error",
  };
  const engine: grpc.UntypedServiceImplementation = {
    log: unary(async (req: engproto.LogRequest) => {
      const severity = severities[req.getSeverity()] ?? "info";
      if (severity === "error") failed = true;
      if (severity !== "debug") a.diag(severity, req.getMessage(), req.getUrn() || undefined);
      return new Empty();
    }),
    getRootResource: unary(async () => new engproto.GetRootResourceResponse().setUrn(rootUrn)),
    setRootResource: unary(async (req: engproto.SetRootResourceRequest) => {
      rootUrn = req.getUrn();
      return new engproto.SetRootResourceResponse();
    }),
  };
  const { address, server } = await serve([
    [resrpc.ResourceMonitorService, monitor],
    [engrpc.EngineService, engine],
  ]);
  let exitCode: number | null;
  try {
    exitCode = await runProgram(a, address, (stop) => {
      stopProgram = stop;
      stopWhenIdle();
    });
    // Registrations still running when the program ended are finished and recorded before anything else.
    while (inflight.size > 0) await Promise.allSettled([...inflight]);
  } finally {
    server.forceShutdown();
  }
  if (a.gate.stopped) failed = true;
  if (exitCode !== 0) {
    failed = true;
    a.diag(
      "error",
      a.gate.stopped
        ? "the program was stopped after a failed or cancelled operation"
        : `the program exited with code ${exitCode}`,
    );
  }
  if (failed) return { ok: false, outputs: stackOutputs };

  // Deletes, only after a successful program run (as the engine does): what the program no longer declares,
  // and the old halves of create-before-delete replacements; dependents first, in parallel.
  const undeclared = base.resources.filter((r) => !r.delete && !declared.has(r.urn));
  const report = (r: ResourceState, error?: string) => {
    if (r.delete || r.type === ROOT_TYPE) {
      if (error) step({ op: "delete", urn: r.urn, type: r.type, name: r.name, diffs: [], error });
      return;
    }
    step({ op: "delete", urn: r.urn, type: r.type, name: r.name, diffs: [], ...(error ? { error } : {}) });
  };
  if (a.dryRun) {
    let ok = true;
    for (const r of [...undeclared].reverse()) {
      if (r.type === ROOT_TYPE) continue;
      // A protected resource cannot be deleted: already an error in preview (step_generator.go).
      if (r.protect) {
        ok = false;
        report(r, protectedDeleteError(r).message);
      } else report(r);
    }
    return { ok, outputs: stackOutputs };
  }
  // The deletes run under the same gate: a failed delete or a cancel stops new ones.
  const ok = await deleteAll(
    [...condemnedBefore, ...condemned, ...undeclared],
    a.getHost,
    a.journal,
    a.gate,
    report,
  );
  return { ok, outputs: stackOutputs };
}

/**
 * The program's working directory and entry point, as the engine and the nodejs language host derive them
 * from `main` (pkg/engine/project.go `ProgramInfo`; sdk/nodejs/cmd/pulumi-language-nodejs/main.go): a file's
 * directory and its name, or a directory and ".".
 */
export function programLocation(projectDir: string, main: string): { pwd: string; entry: string } {
  const target = resolve(projectDir, main);
  if (existsSync(target) && statSync(target).isDirectory()) return { pwd: target, entry: "." };
  return { pwd: dirname(target), entry: basename(target) };
}

/**
 * Spawns `@pulumi/pulumi/cmd/run` (what the CLI's nodejs language host runs) against our monitor, from the
 * program's directory with its entry point, with the language host's TypeScript settings
 * (`PULUMI_NODEJS_TYPESCRIPT`, `PULUMI_NODEJS_TSCONFIG_PATH` from `runtime.options.tsconfig`).
 */
function runProgram(
  a: DeployArgs,
  address: string,
  onStart: (stop: () => void) => void,
): Promise<number | null> {
  const runJs = require.resolve("@pulumi/pulumi/cmd/run/index.js");
  const { pwd, entry } = programLocation(a.projectDir, a.main);
  const args = [
    "--import",
    PARENT_WATCH,
    runJs,
    `--monitor=${address}`,
    `--engine=${address}`,
    `--project=${a.project}`,
    `--stack=${a.stack}`,
    `--organization=organization`,
    `--root-directory=${a.projectDir}`,
    `--pwd=${pwd}`,
    ...(a.dryRun ? ["--dry-run"] : []),
    entry,
  ];
  const child = spawn(process.execPath, args, {
    cwd: pwd,
    env: {
      ...a.env,
      PULUMI_CONFIG: JSON.stringify(a.config.values),
      PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(a.config.secretKeys),
      PULUMI_NODEJS_TYPESCRIPT: String(a.typescript),
      ...(a.tsconfig ? { PULUMI_NODEJS_TSCONFIG_PATH: a.tsconfig } : {}),
      PULUMI_NODEJS_PROJECT: a.project,
      PULUMI_NODEJS_STACK: a.stack,
      PULUMI_NODEJS_ORGANIZATION: "organization",
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  onStart(() => child.kill("SIGTERM"));
  // Never leave the program running after this process: a runtime whose monitor is gone does not exit.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const forward = (severity: Diagnostic["severity"]) => (chunk: Buffer) => {
    for (const line of chunk.toString().split("\n")) if (line.trim()) a.diag(severity, line);
  };
  child.stdout.on("data", forward("info"));
  child.stderr.on("data", forward("warning"));
  return new Promise((res, rej) => {
    child.once("error", rej);
    child.once("close", (code) => {
      process.off("exit", killOnExit);
      res(code);
    });
  });
}

/**
 * Reads every custom resource, all in parallel (the engine's refresh steps have no ordering); drift =
 * Diff(live outputs → recorded inputs). A resource whose Read answers id "" is removed (step.go, RefreshStep).
 */
async function refresh(
  journal: Journal,
  getHost: () => Promise<ProviderHost>,
  emit: (e: EngineEvent) => void,
  gate: Gate,
): Promise<boolean> {
  let ok = true;
  const all = journal.current().resources;
  await runAll(
    all.filter((r) => r.custom),
    () => false,
    async (r) => {
      const step = (op: StepOp, diffs: string[], error?: string) =>
        emit({
          kind: "step",
          step: { op, urn: r.urn, type: r.type, name: r.name, diffs, ...(error ? { error } : {}) },
        });
      const inputs = unwrapSecrets(r.inputs);
      const outputs = unwrapSecrets(r.outputs);
      try {
        const host = await getHost();
        const read = await host.read(r.id ?? "", r.urn, outputs.plain, inputs.plain, timeoutOf(r, "read"));
        if (!read.id) {
          journal.remove(r);
          step("delete", []);
          return;
        }
        const props = toJson(read.props);
        const secretOut = [...new Set([...outputs.secretKeys, ...r.additionalSecretOutputs])];
        const newInputs = read.inputs ? wrapSecrets(toJson(read.inputs), inputs.secretKeys) : r.inputs;
        journal.put({ ...r, id: read.id, inputs: newInputs, outputs: wrapSecrets(props, secretOut) }, r);
        const d = await host.diff(read.id, r.urn, props, inputs.plain);
        const drifted = d.changes ?? !deepEqual(withoutProvider(outputs.plain), withoutProvider(props));
        const diffs = changedKeys(withoutProvider(outputs.plain), withoutProvider(props));
        step(drifted ? "update" : "same", drifted ? diffs : []);
      } catch (e) {
        // A failed read does not stop the others (the refresh executor ignores errors,
        // deployment_executor.go ~832).
        ok = false;
        step("same", [], messageOf(e));
      }
    },
    gate,
  );
  return ok && !gate.stopped;
}

/** Deletes every resource, in parallel, each after its dependents and children (the engine's destroy). */
async function destroy(
  journal: Journal,
  getHost: () => Promise<ProviderHost>,
  emit: (e: EngineEvent) => void,
  gate: Gate,
): Promise<boolean> {
  const ok = await deleteAll(journal.current().resources, getHost, journal, gate, (r, error) => {
    if (r.type === ROOT_TYPE && !error) return;
    emit({
      kind: "step",
      step: { op: "delete", urn: r.urn, type: r.type, name: r.name, diffs: [], ...(error ? { error } : {}) },
    });
  });
  return ok && !gate.stopped;
}
