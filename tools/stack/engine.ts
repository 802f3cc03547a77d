/**
 * A STAND-IN for the Pulumi engine, for machines without the Pulumi CLI (tests, `npm start`). Not part of the
 * published package.
 *
 * It runs an unmodified Pulumi program through `@pulumi/pulumi`'s real Node.js runtime
 * (`cmd/run/index.js`, the process the CLI's nodejs language host starts) and serves the two gRPC services
 * that runtime calls: `pulumirpc.ResourceMonitor` and `pulumirpc.Engine`. Every `pulumi-nodejs:dynamic:*`
 * resource goes to the real dynamic-provider host (tools/provider-host.ts), as the engine sends it: Configure
 * with the stack's config (secret keys as secrets), Check, Diff against the checkpoint (olds = old outputs),
 * Create / Update / Replace (delete-before-replace when the provider or the program asks, else
 * create-before-delete), Delete of what the program no longer declares (dependents first), Read for refresh.
 * A preview performs no writes: creates resolve with unknown outputs.
 *
 * What it does not do: other providers than dynamic ones, `import`, component providers, `Resource.get`,
 * stack references, policy packs, parallel limits, targets.
 */
import { spawn } from "node:child_process";
import { join, resolve } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as engrpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import * as engproto from "@pulumi/pulumi/proto/engine_pb";
import * as resrpc from "@pulumi/pulumi/proto/resource_grpc_pb";
import * as resproto from "@pulumi/pulumi/proto/resource_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { z } from "zod";
import { type ProviderHost, startProviderHost } from "../provider-host";
import { type Checkpoint, loadCheckpoint, type ResourceState, saveCheckpoint } from "./checkpoint";
import { readProject, readStackConfig, type StackConfig, stackFilePath } from "./project";
import {
  changedKeys,
  containsUnknowns,
  deepEqual,
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

/**
 * Deletes a resource through the provider, as the engine does: refuses a protected one (resource option
 * `protect`), and only forgets one with `retainOnDelete`.
 * @throws Error for a protected resource; the provider's gRPC error when its delete fails.
 */
async function deleteResource(host: ProviderHost, r: ResourceState): Promise<void> {
  if (r.protect) {
    throw new Error(`${r.name} is protected: set protect: false and run up before deleting it`);
  }
  if (r.retainOnDelete) return;
  await host.delete(r.id ?? "", r.urn, unwrapSecrets(r.outputs).plain);
}

/** The resources that are children of, or depend on, `urn`. */
function dependents(all: ResourceState[], urn: string): ResourceState[] {
  return all.filter((r) => r.parent === urn || r.dependencies.includes(urn));
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

/**
 * Runs one operation on a stack and writes the checkpoint (not for preview).
 * - preview: runs the program with `--dry-run`; Check and Diff only.
 * - up: runs the program; creates, updates, replaces; then deletes what the program no longer declares.
 * - refresh: Reads every resource in the checkpoint; reports drift (Diff of live outputs against the inputs)
 *   and removes resources that are gone.
 * - destroy: deletes every resource, dependents first.
 * Never throws for a failed operation: `ok` is false and the step carries the error. Throws only when the
 * project or stack settings cannot be read.
 */
export async function runStack(opts: RunOptions): Promise<RunResult> {
  const projectDir = resolve(opts.projectDir);
  const project = readProject(projectDir);
  const env = { ...process.env, ...opts.env };
  const config = readStackConfig(
    opts.configFile ?? stackFilePath(projectDir, project, opts.stack),
    project.name,
    env,
  );
  const statePath = resolve(opts.statePath ?? join(projectDir, ".stack-state", `${opts.stack}.json`));
  const checkpoint = loadCheckpoint(statePath, project.name, opts.stack);
  const steps: Step[] = [];
  const diagnostics: Diagnostic[] = [];
  const emit = (event: EngineEvent) => {
    if (event.kind === "step") steps.push(event.step);
    else diagnostics.push(event.diagnostic);
    opts.onEvent?.(event);
  };
  const diag = (severity: Diagnostic["severity"], message: string, urn?: string) =>
    emit({ kind: "diagnostic", diagnostic: { severity, message, ...(urn ? { urn } : {}) } });

  let host: ProviderHost | undefined;
  let hostStarting: Promise<ProviderHost> | undefined;
  const getHost = (): Promise<ProviderHost> => {
    hostStarting ??= (async () => {
      const h = await startProviderHost({
        cwd: projectDir,
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
  let next: Checkpoint = checkpoint;
  // Start the provider host while the program boots (each takes about a second); errors surface on first use.
  getHost().catch(() => undefined);
  try {
    if (opts.operation === "refresh") {
      ({ ok, next } = await refresh(checkpoint, getHost, emit));
    } else if (opts.operation === "destroy") {
      ({ ok, next } = await destroy(checkpoint, getHost, emit));
    } else {
      let base = checkpoint;
      if (opts.refresh) {
        // Only failures of the refresh are reported (as diagnostics); its drift shows up in the plan.
        const refreshed = await refresh(checkpoint, getHost, (e) => {
          if (e.kind === "diagnostic") emit(e);
          else if (e.step.error) diag("error", `refresh of ${e.step.name}: ${e.step.error}`, e.step.urn);
        });
        if (!refreshed.ok) throw new Error("the refresh before the deployment failed");
        base = refreshed.next;
      }
      const r = await deploy({
        checkpoint: base,
        project: project.name,
        projectDir,
        main: project.main ?? ".",
        typescript:
          typeof project.runtime === "object" ? project.runtime.options?.typescript !== false : true,
        stack: opts.stack,
        config,
        dryRun: opts.operation === "preview",
        env,
        getHost,
        emit,
        diag,
      });
      ({ ok, next, outputs } = r);
    }
  } catch (e) {
    ok = false;
    diag("error", messageOf(e));
  } finally {
    if (hostStarting) await hostStarting.catch(() => undefined);
    await host?.close();
  }
  if (opts.operation !== "preview") saveCheckpoint(statePath, next);
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
  checkpoint: Checkpoint;
  project: string;
  projectDir: string;
  main: string;
  typescript: boolean;
  stack: string;
  config: StackConfig;
  dryRun: boolean;
  env: NodeJS.ProcessEnv;
  getHost: () => Promise<ProviderHost>;
  emit: (e: EngineEvent) => void;
  diag: (severity: Diagnostic["severity"], message: string, urn?: string) => void;
}

async function deploy(a: DeployArgs): Promise<{ ok: boolean; next: Checkpoint; outputs: Props }> {
  const olds = new Map(a.checkpoint.resources.map((r) => [r.urn, r]));
  const registered = new Map<string, ResourceState>();
  /** Every URN the program declared (in a preview, also those whose new state is not recorded). */
  const declared = new Set<string>();
  const order: string[] = [];
  /** Old resources replaced create-before-delete: deleted after the program finished. */
  const pendingDeletes: ResourceState[] = [];
  let rootUrn = "";
  let stackOutputs: Props = {};
  let failed = false;
  /** Like the engine, stop the program once an operation failed (pending registrations would wait forever). */
  let stopProgram: (() => void) | undefined;
  let stopRequested = false;
  const record = (r: ResourceState) => {
    if (!registered.has(r.urn)) order.push(r.urn);
    registered.set(r.urn, r);
  };
  const step = (s: Step) => a.emit({ kind: "step", step: s });

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
    const base = {
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
    };
    const oldInputs = old ? unwrapSecrets(old.inputs).plain : {};
    const oldOutputs = old ? unwrapSecrets(old.outputs).plain : {};
    const oldSecretOutputs = old ? secretKeysOf(old.outputs) : [];
    let news = plain;
    for (const k of req.getIgnorechangesList()) {
      if (old && k in oldInputs) news = { ...news, [k]: oldInputs[k] as Json };
    }

    // Preview with inputs that depend on not-yet-created resources: Check would see sentinels, so skip it.
    if (a.dryRun && containsUnknowns(news)) {
      const op: StepOp = old ? "update" : "create";
      step({ op, urn, type, name, diffs: changedKeys(withoutProvider(oldInputs), withoutProvider(news)) });
      return { id: old?.id ?? "", outs: props };
    }
    const host = await a.getHost();
    const checked = await host.check(urn, oldInputs, news);
    if (checked.failures.length > 0) {
      const list = checked.failures.map((f) => `${f.property}: ${f.reason}`).join("; ");
      throw new Error(`invalid inputs: ${list}`);
    }
    const inputs = toJson(checked.inputs);
    const storedInputs = wrapSecrets(inputs, secretKeys);
    const secretOut = [...new Set([...secretKeys, ...aso])];
    const diffs = changedKeys(withoutProvider(oldInputs), withoutProvider(inputs));

    if (!old?.id) {
      if (a.dryRun) {
        step({ op: "create", urn, type, name, diffs });
        return { id: "", outs: wrapSecrets(inputs, secretOut) };
      }
      const created = await host.create(urn, inputs);
      const outs = wrapSecrets(toJson(created.outs), secretOut);
      record({ ...base, id: created.id, inputs: storedInputs, outputs: outs });
      step({ op: "create", urn, type, name, diffs });
      return { id: created.id, outs };
    }

    const d = await host.diff(old.id, urn, oldOutputs, inputs);
    const changes = d.changes ?? !deepEqual(withoutProvider(oldInputs), withoutProvider(inputs));
    if (!changes) {
      const outs = wrapSecrets(oldOutputs, [...secretOut, ...oldSecretOutputs]);
      record({ ...base, id: old.id, inputs: storedInputs, outputs: outs });
      step({ op: "same", urn, type, name, diffs: [] });
      return { id: old.id, outs };
    }
    if (d.replaces.length > 0) {
      const replaces = [...d.replaces].sort();
      if (a.dryRun) {
        step({ op: "replace", urn, type, name, diffs, replaces });
        return { id: "", outs: wrapSecrets(inputs, secretOut) };
      }
      if (old.protect)
        throw new Error(`${name} is protected and cannot be replaced (${replaces.join(", ")} changed)`);
      const deleteFirst = d.deleteBeforeReplace || req.getDeletebeforereplace();
      if (deleteFirst) await deleteResource(host, old);
      else pendingDeletes.push(old);
      const created = await host.create(urn, inputs);
      const outs = wrapSecrets(toJson(created.outs), secretOut);
      record({ ...base, id: created.id, inputs: storedInputs, outputs: outs });
      step({ op: "replace", urn, type, name, diffs, replaces });
      return { id: created.id, outs };
    }
    if (a.dryRun) {
      step({ op: "update", urn, type, name, diffs });
      return { id: old.id, outs: wrapSecrets({ ...oldOutputs, ...inputs }, secretOut) };
    }
    const updated = await host.update(old.id, urn, oldOutputs, inputs);
    const outs = wrapSecrets(toJson(updated.outs), secretOut);
    record({ ...base, id: old.id, inputs: storedInputs, outputs: outs });
    step({ op: "update", urn, type, name, diffs });
    return { id: old.id, outs };
  }

  const monitor: grpc.UntypedServiceImplementation = {
    supportsFeature: unary(async (req: resproto.SupportsFeatureRequest) =>
      new resproto.SupportsFeatureResponse().setHassupport(req.getId() === "secrets"),
    ),
    registerResource: unary(async (req: resproto.RegisterResourceRequest) => {
      const type = req.getType();
      const name = req.getName();
      const parent = req.getParent() || undefined;
      const urn = makeUrn(a.stack, a.project, type, name, parent);
      const res = new resproto.RegisterResourceResponse().setUrn(urn);
      declared.add(urn);
      if (!req.getCustom()) {
        if (type === ROOT_TYPE) rootUrn = urn;
        const old = olds.get(urn);
        record({
          urn,
          type,
          name,
          custom: false,
          ...(parent ? { parent } : {}),
          dependencies: req.getDependenciesList(),
          inputs: {},
          outputs: old?.outputs ?? {},
          additionalSecretOutputs: [],
        });
        if (type !== ROOT_TYPE && !old)
          a.emit({ kind: "step", step: { op: "create", urn, type, name, diffs: [] } });
        else if (type !== ROOT_TYPE)
          a.emit({ kind: "step", step: { op: "same", urn, type, name, diffs: [] } });
        return res.setObject(Struct.fromJavaScript({}));
      }
      try {
        const { id, outs } = await registerCustom(req, urn);
        return res.setId(id).setObject(Struct.fromJavaScript(outs as Record<string, never>));
      } catch (e) {
        failed = true;
        const error = messageOf(e);
        a.emit({
          kind: "step",
          step: { op: olds.has(urn) ? "update" : "create", urn, type, name, diffs: [], error },
        });
        // Keep the old state of a resource whose update failed.
        const old = olds.get(urn);
        if (old) record(old);
        if (!stopRequested) {
          stopRequested = true;
          setTimeout(() => stopProgram?.(), 1_000).unref();
        }
        throw new Error(error);
      }
    }),
    registerResourceOutputs: unary(async (req: resproto.RegisterResourceOutputsRequest) => {
      const outs = toJson(req.getOutputs()?.toJavaScript() ?? {});
      const r = registered.get(req.getUrn());
      if (r) record({ ...r, outputs: outs });
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
    });
  } finally {
    server.forceShutdown();
  }
  if (exitCode !== 0) {
    failed = true;
    a.diag(
      "error",
      stopRequested
        ? "the program was stopped after a failed operation"
        : `the program exited with code ${exitCode}`,
    );
  }

  // Deletes: what the program no longer declares (only after a successful program run, as the engine does),
  // and the old halves of create-before-delete replacements. Dependents first: reverse checkpoint order.
  const undeclared = a.checkpoint.resources.filter((r) => !declared.has(r.urn));
  const kept: ResourceState[] = [];
  if (!failed) {
    const toDelete = [...pendingDeletes, ...undeclared.slice().reverse()];
    for (const r of toDelete) {
      const isPending = pendingDeletes.includes(r);
      if (!r.custom) {
        if (!isPending && r.type !== ROOT_TYPE) {
          a.emit({ kind: "step", step: { op: "delete", urn: r.urn, type: r.type, name: r.name, diffs: [] } });
        }
        continue;
      }
      if (a.dryRun) {
        if (!isPending)
          a.emit({ kind: "step", step: { op: "delete", urn: r.urn, type: r.type, name: r.name, diffs: [] } });
        continue;
      }
      try {
        await deleteResource(await a.getHost(), r);
        if (!isPending)
          a.emit({ kind: "step", step: { op: "delete", urn: r.urn, type: r.type, name: r.name, diffs: [] } });
      } catch (e) {
        failed = true;
        kept.push(r);
        a.emit({
          kind: "step",
          step: { op: "delete", urn: r.urn, type: r.type, name: r.name, diffs: [], error: messageOf(e) },
        });
      }
    }
  } else {
    kept.push(...undeclared);
  }
  const resources = [...order.map((u) => registered.get(u)).filter((r) => r !== undefined), ...kept];
  return { ok: !failed, next: { ...a.checkpoint, resources }, outputs: stackOutputs };
}

/** Spawns `@pulumi/pulumi/cmd/run` (what the CLI's nodejs language host runs) against our monitor. */
function runProgram(
  a: DeployArgs,
  address: string,
  onStart: (stop: () => void) => void,
): Promise<number | null> {
  const runJs = require.resolve("@pulumi/pulumi/cmd/run/index.js");
  const args = [
    runJs,
    `--monitor=${address}`,
    `--engine=${address}`,
    `--project=${a.project}`,
    `--stack=${a.stack}`,
    `--organization=organization`,
    `--root-directory=${a.projectDir}`,
    `--pwd=${a.projectDir}`,
    ...(a.dryRun ? ["--dry-run"] : []),
    a.main,
  ];
  const child = spawn(process.execPath, args, {
    cwd: a.projectDir,
    env: {
      ...a.env,
      PULUMI_CONFIG: JSON.stringify(a.config.values),
      PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(a.config.secretKeys),
      PULUMI_NODEJS_TYPESCRIPT: String(a.typescript),
      PULUMI_NODEJS_PROJECT: a.project,
      PULUMI_NODEJS_STACK: a.stack,
      PULUMI_NODEJS_ORGANIZATION: "organization",
    },
    stdio: ["ignore", "pipe", "pipe"],
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

/** Reads every custom resource; drift = Diff(live outputs → recorded inputs) reports changes. */
async function refresh(
  checkpoint: Checkpoint,
  getHost: () => Promise<ProviderHost>,
  emit: (e: EngineEvent) => void,
): Promise<{ ok: boolean; next: Checkpoint }> {
  let ok = true;
  const resources: ResourceState[] = [];
  for (const r of checkpoint.resources) {
    const step = (op: StepOp, diffs: string[], error?: string) =>
      emit({
        kind: "step",
        step: { op, urn: r.urn, type: r.type, name: r.name, diffs, ...(error ? { error } : {}) },
      });
    if (!r.custom) {
      resources.push(r);
      continue;
    }
    const inputs = unwrapSecrets(r.inputs);
    const outputs = unwrapSecrets(r.outputs);
    try {
      const host = await getHost();
      const read = await host.read(r.id ?? "", r.urn, outputs.plain, inputs.plain);
      if (!read.id) {
        step("delete", []);
        continue;
      }
      const props = toJson(read.props);
      const secretOut = [...new Set([...outputs.secretKeys, ...r.additionalSecretOutputs])];
      const newInputs = read.inputs ? wrapSecrets(toJson(read.inputs), inputs.secretKeys) : r.inputs;
      resources.push({ ...r, id: read.id, inputs: newInputs, outputs: wrapSecrets(props, secretOut) });
      const d = await host.diff(read.id, r.urn, props, inputs.plain);
      const drifted = d.changes ?? !deepEqual(withoutProvider(outputs.plain), withoutProvider(props));
      const diffs = changedKeys(withoutProvider(outputs.plain), withoutProvider(props));
      step(drifted ? "update" : "same", drifted ? diffs : []);
    } catch (e) {
      ok = false;
      resources.push(r);
      step("same", [], messageOf(e));
    }
  }
  return { ok, next: { ...checkpoint, resources } };
}

/** Deletes every resource, dependents before what they depend on. */
async function destroy(
  checkpoint: Checkpoint,
  getHost: () => Promise<ProviderHost>,
  emit: (e: EngineEvent) => void,
): Promise<{ ok: boolean; next: Checkpoint }> {
  let ok = true;
  const remaining = [...checkpoint.resources];
  const failedUrns = new Set<string>();
  for (const r of checkpoint.resources.slice().reverse()) {
    const blocked = dependents(remaining, r.urn).some((d) => failedUrns.has(d.urn));
    const step = (error?: string) =>
      emit({
        kind: "step",
        step: {
          op: "delete",
          urn: r.urn,
          type: r.type,
          name: r.name,
          diffs: [],
          ...(error ? { error } : {}),
        },
      });
    if (blocked) {
      failedUrns.add(r.urn);
      step("not deleted: a resource depending on it could not be deleted");
      continue;
    }
    try {
      if (r.custom) await deleteResource(await getHost(), r);
      remaining.splice(remaining.indexOf(r), 1);
      if (r.type !== ROOT_TYPE) step();
    } catch (e) {
      ok = false;
      failedUrns.add(r.urn);
      step(messageOf(e));
    }
  }
  return { ok, next: { ...checkpoint, resources: remaining } };
}
