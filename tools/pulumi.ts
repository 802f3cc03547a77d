/**
 * Runs programs through the real Pulumi CLI: the `pulumi` that `npm run pulumi-cli` readied in `.pulumi-cli/bin`
 * (tools/pulumi-cli.mts), always on a local file backend with a passphrase, never Pulumi Cloud. Used by the stack
 * tests, `npm start` and the benchmarks; not part of the published package.
 *
 * {@link runStack} runs one operation (`pulumi preview`, `up`, `refresh` or `destroy`) the way a user types it,
 * with `--event-log` (the engine's own JSON events, as the Automation API reads them; the CLI accepts the flag
 * when `PULUMI_DEBUG_COMMANDS` is set), and returns the steps, diagnostics, stack outputs and the CLI's exit
 * code and printed text. {@link pulumi} runs any other command (config, stack export/import, import) in the same
 * environment.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  appendFileSync,
  closeSync,
  copyFileSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";

/** The repository: this file runs from tools/ (vitest) or dist/tools/ (built). */
const root = existsSync(join(__dirname, "..", "package.json"))
  ? resolve(__dirname, "..")
  : resolve(__dirname, "..", "..");

/** The folder holding `pulumi`, its Node.js language host and the dynamic-provider plugin. */
export const PULUMI_BIN = join(root, ".pulumi-cli", "bin");

/** The passphrase of every stack these tools make (`PULUMI_CONFIG_PASSPHRASE`): test stacks guard no secret. */
export const PASSPHRASE = "pulumi-posthog-local-stacks";

export type Operation = "preview" | "up" | "refresh" | "destroy";

/** What happened (or, in a preview, would happen) to one resource. */
export type StepOp = "create" | "update" | "replace" | "delete" | "same";

export interface Step {
  op: StepOp;
  urn: string;
  /** The resource type, e.g. `pulumi-nodejs:dynamic/posthog:Dashboard`. */
  type: string;
  name: string;
  /**
   * Top-level properties that differ: the engine's diff of inputs for update and replace; for a refresh, the
   * outputs that drifted (compared as the CLI shows them).
   */
  diffs: string[];
  /** Properties forcing the replacement (replace only). */
  replaces?: string[];
  /** The error the engine reported for this resource when its operation failed. */
  error?: string;
  /** The resource's outputs after the step (secrets as `"[secret]"`); absent for a delete. */
  outputs?: Record<string, unknown>;
}

export interface Diagnostic {
  severity: "debug" | "info" | "info#err" | "warning" | "error";
  message: string;
  urn?: string;
}

/** One engine event as the CLI writes it to `--event-log` (only the fields read here are typed). */
export interface EngineEvent {
  sequence: number;
  timestamp: number;
  diagnosticEvent?: { urn?: string; message: string; severity: Diagnostic["severity"]; ephemeral?: boolean };
  resourcePreEvent?: { metadata: StepMetadata; planning?: boolean };
  resOutputsEvent?: { metadata: StepMetadata; planning?: boolean };
  resOpFailedEvent?: { metadata: StepMetadata; status: number; steps: number };
  summaryEvent?: { resourceChanges: Record<string, number>; durationSeconds: number; result?: string };
  [other: string]: unknown;
}

interface StepMetadata {
  op: string;
  urn: string;
  type: string;
  old?: { id?: string; inputs?: Record<string, unknown>; outputs?: Record<string, unknown> } | null;
  new?: { id?: string; inputs?: Record<string, unknown>; outputs?: Record<string, unknown> } | null;
  keys?: string[] | null;
  diffs?: string[] | null;
}

export type Counts = Record<StepOp, number>;

export interface RunOptions {
  operation: Operation;
  /** The directory holding Pulumi.yaml (the CLI runs there, as a user does). */
  projectDir: string;
  stack: string;
  /**
   * The stack settings file (`--config-file`). Default: `<stateDir>/Pulumi.<stack>.yaml`, copied at the stack's
   * creation from the project's (in its `stackConfigDir`), so the CLI writes the passphrase's salt and any
   * `config set` there and never into the repository.
   */
  configFile?: string;
  /** The local backend's directory (`PULUMI_BACKEND_URL=file://…`). Default `<projectDir>/.stack-state`. */
  stateDir?: string;
  /** Environment of the CLI, the program and the provider host, over process.env: POSTHOG_HOST, … */
  env?: NodeJS.ProcessEnv;
  /** preview/up: `--refresh`. */
  refresh?: boolean;
  /** refresh/destroy (and preview/up with refresh): `--run-program`. */
  runProgram?: boolean;
  /** `--expect-no-changes`. */
  expectNoChanges?: boolean;
  /** `--parallel N`. */
  parallel?: number;
  /** `--target URN` for each. */
  targets?: string[];
  /** More flags, as typed after the operation. */
  args?: string[];
  /**
   * up/destroy: run the CLI's own preview first, as a user's `pulumi up --yes` does (no `--skip-preview`): a plan
   * that fails in that preview applies nothing. Default false (`--skip-preview`, one engine pass per run).
   */
  withPreview?: boolean;
  /** Sends SIGINT to the CLI, as a first Ctrl-C does: no new step starts, those under way finish. */
  signal?: AbortSignal;
  /** Each engine event, as the CLI logs it (read from the event log while the CLI runs). */
  onEvent?: (event: EngineEvent) => void;
  /** The CLI's own output (stdout and stderr) as it prints it. */
  echo?: (text: string) => void;
  /** Give up (SIGKILL to the CLI and its children) after this long; default 10 minutes. */
  timeoutMs?: number;
}

export interface RunResult {
  operation: Operation;
  stack: string;
  /** The CLI exited 0. */
  ok: boolean;
  exitCode: number | null;
  counts: Counts;
  /** One per resource of the program (not the stack or its providers), in the order they completed. */
  steps: Step[];
  /** Stack outputs after the operation (secret values as `"[secret]"`; empty for preview and destroy). */
  outputs: Record<string, unknown>;
  diagnostics: Diagnostic[];
  /** What the CLI printed (stdout then stderr), as a user sees it with `--color never`. */
  output: string;
  /** Wall time of the CLI process, ms. */
  wallMs: number;
}

/** The CLI, or an error saying how to get it. */
export function pulumiExecutable(): string {
  if (process.env.POSTHOG_TEST_QUICK === "1") {
    throw new Error(
      "`npm run test:quick` runs no Pulumi CLI: add this test file to CLI_FILES in vitest.config.ts (`npm test` runs it)",
    );
  }
  const bin = join(PULUMI_BIN, "pulumi");
  if (!existsSync(bin)) {
    throw new Error(`${bin} is missing: run \`npm run pulumi-cli\` (it builds or links the Pulumi CLI)`);
  }
  return bin;
}

/**
 * The local backend's URL for `stateDir`: `file://<stateDir>?metadata=skip`. `metadata=skip` (a query parameter of
 * the Go CDK's fileblob, which the file backend passes through: pkg/backend/diy/backend.go `massageBlobPath`)
 * stops the backend writing a `.attrs` sidecar beside each file. fileblob writes that sidecar in place
 * (gocloud.dev blob/fileblob/attrs.go `setAttrs`: create, then encode), so a CLI killed between the two leaves it
 * empty, and every later command on the stack fails with `failed to load checkpoint: EOF` (measured: an emptied
 * `<stack>.json.attrs` gives exactly that on `stack export` and `up`). The sidecar holds only a content type and an
 * MD5, which the backend does not use.
 */
export function backendUrl(stateDir: string): string {
  return `file://${resolve(stateDir)}?metadata=skip`;
}

/**
 * The environment for the CLI on the local backend `stateDir`: `PULUMI_BACKEND_URL` is {@link backendUrl},
 * `PULUMI_HOME` inside it, the passphrase ({@link PASSPHRASE} unless `env` sets one), no update check, no plugin
 * download, no plugin from PATH, our bin folder and Node 24 first on PATH (the language host and the plugin run
 * the `node` they find there), and Node's compile cache (`NODE_COMPILE_CACHE`, one folder under the system's
 * temporary folder unless `env` sets it): every run's program and dynamic-provider host load `@pulumi/pulumi`
 * (762 modules, about 1.25 s), and the cache cuts that by about a quarter. Pulumi Cloud credentials in the
 * caller's environment are removed.
 * @throws when `env` names another backend than the local one, or removes the passphrase (a test error, never
 * a login to Pulumi Cloud).
 */
export function pulumiEnv(stateDir: string, env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const backend = backendUrl(stateDir);
  if (env.PULUMI_BACKEND_URL !== undefined && env.PULUMI_BACKEND_URL !== backend) {
    throw new Error(`PULUMI_BACKEND_URL is ${env.PULUMI_BACKEND_URL}: these tools only use ${backend}`);
  }
  const merged: NodeJS.ProcessEnv = {
    ...process.env,
    PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
    NODE_COMPILE_CACHE: join(tmpdir(), "pulumi-posthog-node-compile-cache"),
    ...env,
    PULUMI_BACKEND_URL: backend,
    PULUMI_HOME: join(resolve(stateDir), ".pulumi-home"),
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_IGNORE_AMBIENT_PLUGINS: "true",
    PULUMI_DEBUG_COMMANDS: "true",
    PATH: [PULUMI_BIN, join(root, "node_modules", ".bin"), process.env.PATH ?? ""].join(delimiter),
  };
  delete merged.PULUMI_ACCESS_TOKEN;
  // A variable given as undefined in `env` is removed, not inherited.
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete merged[k];
  if (!merged.PULUMI_CONFIG_PASSPHRASE && !merged.PULUMI_CONFIG_PASSPHRASE_FILE) {
    throw new Error(
      "no PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE): the local backend's secrets need one; " +
        "leave it unset to use these tools' own",
    );
  }
  return merged;
}

export interface CommandResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  wallMs: number;
}

/** Processes of commands under way: killed with their children if the caller's process exits first. */
const running = new Set<ChildProcess>();
let exitHook = false;

/** SIGKILL to a command's process group: the CLI, its language host, the program and the provider hosts. */
export function killTree(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL"): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // ESRCH: nothing of it is left.
  }
}

/**
 * Starts `pulumi <args>` in `cwd` with {@link pulumiEnv}, in its own process group (so {@link killTree} ends it
 * with its children). Resolves when it exits; never rejects for a non-zero exit.
 */
export function startPulumi(
  args: string[],
  opts: {
    cwd: string;
    stateDir: string;
    env?: NodeJS.ProcessEnv;
    echo?: (text: string) => void;
    input?: string;
    timeoutMs?: number;
    /** The whole PATH of the run instead of ours (e.g. one without any `node`); the CLI itself is run by path. */
    path?: string;
  },
): { child: ChildProcess; done: Promise<CommandResult> } {
  if (!exitHook) {
    exitHook = true;
    process.on("exit", () => {
      for (const c of running) killTree(c);
    });
  }
  const started = Date.now();
  const caller = process.env.POSTHOG_CLI_CENSUS ? new Error().stack : undefined;
  const child = spawn(pulumiExecutable(), args, {
    cwd: opts.cwd,
    env: {
      ...pulumiEnv(opts.stateDir, opts.env),
      ...(opts.path !== undefined ? { PATH: opts.path } : {}),
    },
    stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    detached: true,
  });
  running.add(child);
  if (opts.input !== undefined) child.stdin?.end(opts.input);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
    opts.echo?.(d.toString());
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
    opts.echo?.(d.toString());
  });
  const timer = setTimeout(() => killTree(child), opts.timeoutMs ?? 600_000);
  const done = new Promise<CommandResult>((resolveDone, reject) => {
    child.on("error", reject);
    child.on("close", (exitCode, signal) => {
      clearTimeout(timer);
      running.delete(child);
      census(caller, args, Date.now() - started);
      resolveDone({ exitCode, signal, stdout, stderr, wallMs: Date.now() - started });
    });
  });
  return { child, done };
}

/**
 * With `POSTHOG_CLI_CENSUS` naming a file, appends one JSON line per CLI run: the test file that ran it (from the
 * call stack), the command (`up`, `preview`, …) and its wall time (ms). How the slowest files spend their time.
 */
function census(caller: string | undefined, args: string[], wallMs: number): void {
  const file = process.env.POSTHOG_CLI_CENSUS;
  if (!file || caller === undefined) return;
  const from = /[\w./-]*\/(test|examples)\/[\w./-]+\.test\.ts/.exec(
    caller.split("\n").find((l) => /\.test\.ts/.test(l)) ?? "",
  );
  const command = args.find((a) => !a.startsWith("-")) ?? "";
  appendFileSync(file, `${JSON.stringify({ file: from?.[0] ?? "?", command, wallMs })}\n`);
}

/** Runs `pulumi <args>` to its end (see {@link startPulumi}); rejects when the environment is refused. */
export async function pulumi(
  args: string[],
  opts: {
    cwd: string;
    stateDir: string;
    env?: NodeJS.ProcessEnv;
    input?: string;
    timeoutMs?: number;
    path?: string;
  },
): Promise<CommandResult> {
  return startPulumi(args, opts).done;
}

/** Like {@link pulumi}, but throws with the CLI's output when it exits non-zero. */
export async function pulumiOk(
  args: string[],
  opts: { cwd: string; stateDir: string; env?: NodeJS.ProcessEnv; input?: string },
): Promise<string> {
  const r = await pulumi(args, opts);
  if (r.exitCode !== 0) {
    throw new Error(`pulumi ${args.join(" ")} exited ${r.exitCode ?? r.signal}:\n${r.stdout}${r.stderr}`);
  }
  return r.stdout;
}

/** `name` and `stackConfigDir` of the project in `projectDir`. */
export function readProject(projectDir: string): { name: string; stackConfigDir: string } {
  const doc = parseYaml(readFileSync(join(projectDir, "Pulumi.yaml"), "utf8")) as {
    name?: unknown;
    stackConfigDir?: unknown;
  };
  if (typeof doc.name !== "string") throw new Error(`${projectDir}/Pulumi.yaml has no name`);
  return {
    name: doc.name,
    stackConfigDir: join(projectDir, typeof doc.stackConfigDir === "string" ? doc.stackConfigDir : "."),
  };
}

/** The default stack settings file of a run: a copy kept beside the backend. */
export function defaultConfigFile(stateDir: string, stack: string): string {
  return join(resolve(stateDir), `Pulumi.${stack}.yaml`);
}

/** The passphrase's salt line of a stack settings file (`encryptionsalt: v1:…`), which the CLI writes there. */
const SALT_LINE = /^encryptionsalt: .*$/m;

/** The salt line of the settings file `file`, or undefined (no file, or no salt in it). */
function saltLineOf(file: string): string | undefined {
  return existsSync(file) ? SALT_LINE.exec(readFileSync(file, "utf8"))?.[0] : undefined;
}

/**
 * Writes the stack settings file `file` with `body` (YAML, e.g. `config:\n  fx:resources: …\n`), keeping its
 * passphrase salt line: without it the stack's secrets could not be read.
 */
export function writeStackSettings(file: string, body: string): void {
  const salt = saltLineOf(file);
  writeFileSync(file, salt ? `${salt}\n${body}` : body);
}

/**
 * Creates `stack` on the local backend in `stateDir` unless it exists (`pulumi stack init`), leaving the
 * repository as it was: the CLI writes the passphrase's salt into the project's `Pulumi.<stack>.yaml`; this
 * moves it into `configFile` (created from the project's settings when absent) and restores the project's file.
 */
export async function ensureStack(opts: {
  projectDir: string;
  stack: string;
  stateDir: string;
  configFile?: string;
  env?: NodeJS.ProcessEnv;
}): Promise<string> {
  const { name, stackConfigDir } = readProject(opts.projectDir);
  const stateDir = resolve(opts.stateDir);
  // `organization/<project>/<stack>` or `<stack>`: the files are named after the stack's own name.
  const short = opts.stack.split("/").at(-1) ?? opts.stack;
  const configFile = opts.configFile ?? defaultConfigFile(stateDir, short);
  mkdirSync(stateDir, { recursive: true });
  const projectFile = join(stackConfigDir, `Pulumi.${short}.yaml`);
  if (!existsSync(configFile)) {
    if (existsSync(projectFile)) copyFileSync(projectFile, configFile);
    else writeFileSync(configFile, "config: {}\n");
  }
  if (existsSync(checkpointFile(stateDir, name, short))) return configFile;
  // Stack creations in one project are serialized (tests run in parallel processes): each borrows the project's
  // settings file for a moment.
  const lock = `${projectFile}.init-lock`;
  const waitUntil = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > waitUntil) throw new Error(`${lock} stayed for 2 minutes: remove it if no test runs`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const before = existsSync(projectFile) ? readFileSync(projectFile) : undefined;
  try {
    await pulumiOk(["stack", "init", opts.stack, "--non-interactive"], {
      cwd: opts.projectDir,
      stateDir,
      ...(opts.env ? { env: opts.env } : {}),
    });
    const salt = saltLineOf(projectFile);
    const settings = readFileSync(configFile, "utf8").replace(/^encryptionsalt: .*\n?/m, "");
    if (salt) writeFileSync(configFile, `${salt}\n${settings}`);
  } finally {
    if (before === undefined) rmSync(projectFile, { force: true });
    else writeFileSync(projectFile, before);
    rmSync(lock, { recursive: true, force: true });
  }
  return configFile;
}

/** `<{%reset%}>`-style colour directives the engine may leave in messages. */
const COLOR_TAGS = /<\{%[^%]*%\}>/g;

/** The engine's mark of a secret in a serialized property value. */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/** Replaces each secret (`{"<sig>": "1b47…", "ciphertext": "[secret]"}` in events) with `"[secret]"`. */
function maskSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskSecrets);
  if (value === null || typeof value !== "object") return value;
  const o = value as Record<string, unknown>;
  if (SECRET_SIG in o) return "[secret]";
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, maskSecrets(v)]));
}

/** The top-level keys whose values differ between two property maps (`__provider` aside). */
function changedKeys(a: Record<string, unknown> = {}, b: Record<string, unknown> = {}): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  keys.delete("__provider");
  return [...keys].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])).sort();
}

const REPLACE_OPS = new Set(["replace", "create-replacement", "delete-replaced", "discard-replaced"]);

/** Our view of one engine step: the resource's op in the plan or the operation (a refresh's is set apart). */
function stepOf(m: StepMetadata): StepOp {
  if (REPLACE_OPS.has(m.op)) return "replace";
  if (m.op === "create" || m.op === "import") return "create";
  if (m.op === "update") return "update";
  if (m.op === "delete" || m.op === "discard") return "delete";
  return "same";
}

/** Whether a URN is one of the program's resources (not the stack, a provider or a component). */
const isResourceUrn = (type: string) =>
  type !== "pulumi:pulumi:Stack" && !type.startsWith("pulumi:providers:");

/**
 * Reads the event log's complete lines from byte `offset` on (only what the CLI appended since the last read);
 * returns the events and the new offset.
 */
function readEvents(path: string, offset: number): { events: EngineEvent[]; offset: number } {
  if (!existsSync(path)) return { events: [], offset };
  const fd = openSync(path, "r");
  let added: Buffer;
  try {
    const size = fstatSync(fd).size;
    if (size <= offset) return { events: [], offset };
    added = Buffer.alloc(size - offset);
    readSync(fd, added, 0, added.length, offset);
  } finally {
    closeSync(fd);
  }
  const end = added.lastIndexOf(0x0a) + 1;
  const events = added
    .subarray(0, end)
    .toString("utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as EngineEvent);
  return { events, offset: offset + end };
}

/** Steps, diagnostics, counts and outputs from the events of one operation. */
export function summarize(
  events: EngineEvent[],
  operation: Operation,
): Pick<RunResult, "steps" | "diagnostics" | "counts" | "outputs"> {
  const steps = new Map<string, Step>();
  const diagnostics: Diagnostic[] = [];
  let outputs: Record<string, unknown> = {};
  for (const e of events) {
    const d = e.diagnosticEvent;
    if (d && !d.ephemeral) {
      diagnostics.push({
        severity: d.severity,
        message: d.message.replace(COLOR_TAGS, "").trimEnd(),
        ...(d.urn ? { urn: d.urn } : {}),
      });
    }
    const done = e.resOutputsEvent?.metadata;
    if (done?.type === "pulumi:pulumi:Stack" && operation !== "destroy")
      outputs = maskSecrets(done.new?.outputs ?? {}) as Record<string, unknown>;
    const failed = e.resOpFailedEvent?.metadata;
    const m = done ?? failed;
    if (!m || !isResourceUrn(m.type)) continue;
    const previous = steps.get(m.urn);
    let op = stepOf(m);
    // The event log carries no `diffs` for dynamic providers: the changed inputs are what the CLI shows.
    let diffs =
      m.diffs ?? (op === "update" || op === "replace" ? changedKeys(m.old?.inputs, m.new?.inputs) : []);
    if (operation === "refresh" || m.op === "refresh") {
      // A refresh reports what it found: gone (no new state), drifted (outputs differ) or the same.
      diffs = m.new ? changedKeys(m.old?.outputs, m.new.outputs) : [];
      op = !m.new ? "delete" : diffs.length > 0 ? "update" : "same";
    }
    if (previous?.op === "replace" && op !== "replace") continue;
    // `refresh --run-program`: after the read of a resource, the program's registration of it yields a "same"
    // step too, even when the read found it gone (the state no longer holds it) or drifted: the read's verdict stands.
    if (operation === "refresh" && m.op === "same" && previous !== undefined && previous.op !== "same")
      continue;
    const name = m.urn.slice(m.urn.lastIndexOf("::") + 2);
    steps.set(m.urn, {
      op,
      urn: m.urn,
      type: m.type,
      name,
      diffs: previous?.op === "replace" && diffs.length === 0 ? previous.diffs : diffs,
      ...(op === "replace" && (m.keys ?? previous?.replaces)
        ? { replaces: m.keys ?? previous?.replaces ?? [] }
        : {}),
      ...(failed ? { error: "" } : {}),
      ...(m.new?.outputs && op !== "delete"
        ? { outputs: maskSecrets(m.new.outputs) as Record<string, unknown> }
        : {}),
    });
  }
  for (const step of steps.values()) {
    if (step.error === undefined) continue;
    step.error =
      diagnostics
        .filter((d) => d.urn === step.urn && d.severity === "error")
        .map((d) => d.message)
        .join("\n") || "failed";
  }
  const counts: Counts = { create: 0, update: 0, replace: 0, delete: 0, same: 0 };
  for (const s of steps.values()) counts[s.op]++;
  return { steps: [...steps.values()], diagnostics, counts, outputs };
}

/**
 * The command line of one operation as a user types it in CI: `<operation> --stack <stack> --config-file <file>
 * --non-interactive --color never --event-log <log>`, with `--yes --skip-preview` but for preview (`--yes` alone
 * with `withPreview`: the CLI previews first, as a user's `pulumi up --yes` does).
 */
export function operationArgs(
  operation: Operation,
  stack: string,
  configFile: string,
  eventLog: string,
  withPreview = false,
): string[] {
  return [
    operation,
    "--stack",
    stack,
    "--config-file",
    configFile,
    "--non-interactive",
    "--color",
    "never",
    "--event-log",
    eventLog,
    ...(operation === "preview" ? [] : withPreview ? ["--yes"] : ["--yes", "--skip-preview"]),
  ];
}

/**
 * Runs one operation of `stack` through the real CLI, as `pulumi <operation> --stack <stack>
 * --config-file <file> --non-interactive` (with `--yes --skip-preview` but for preview), creating the stack
 * first if needed ({@link ensureStack}). Resolves when the CLI exits, whatever its exit code.
 * @throws when the CLI is missing or the stack cannot be created.
 */
export async function runStack(opts: RunOptions): Promise<RunResult> {
  const stateDir = resolve(opts.stateDir ?? join(opts.projectDir, ".stack-state"));
  const configFile = await ensureStack({
    projectDir: opts.projectDir,
    stack: opts.stack,
    stateDir,
    ...(opts.configFile ? { configFile: opts.configFile } : {}),
    ...(opts.env ? { env: opts.env } : {}),
  });
  const eventLog = join(
    stateDir,
    `events-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.json`,
  );
  const args = operationArgs(opts.operation, opts.stack, configFile, eventLog, opts.withPreview === true);
  if (opts.refresh) args.push("--refresh");
  if (opts.runProgram) args.push("--run-program");
  if (opts.expectNoChanges) args.push("--expect-no-changes");
  if (opts.parallel !== undefined) args.push("--parallel", String(opts.parallel));
  for (const t of opts.targets ?? []) args.push("--target", t);
  args.push(...(opts.args ?? []));

  const started = startPulumi(args, {
    cwd: opts.projectDir,
    stateDir,
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.echo ? { echo: opts.echo } : {}),
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
  });
  const onAbort = () => killTree(started.child, "SIGINT");
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  let offset = 0;
  const events: EngineEvent[] = [];
  const drain = () => {
    const next = readEvents(eventLog, offset);
    offset = next.offset;
    for (const e of next.events) {
      events.push(e);
      opts.onEvent?.(e);
    }
  };
  const poll = opts.onEvent ? setInterval(drain, 50) : undefined;
  let result: CommandResult;
  try {
    result = await started.done;
  } finally {
    if (poll) clearInterval(poll);
    opts.signal?.removeEventListener("abort", onAbort);
  }
  drain();
  if (existsSync(eventLog) && statSync(eventLog).isFile()) rmSync(eventLog, { force: true });
  return {
    operation: opts.operation,
    stack: opts.stack,
    ok: result.exitCode === 0,
    exitCode: result.exitCode,
    ...summarize(events, opts.operation),
    output: `${result.stdout}${result.stderr}`,
    wallMs: result.wallMs,
  };
}

/** Each step's op by resource name (`{ web: "same", kpis: "update" }`), of a run or of a {@link summarize}d part of one. */
export function opsByName(r: Pick<RunResult, "steps">): Record<string, StepOp> {
  return Object.fromEntries(r.steps.map((s) => [s.name, s.op]));
}

/**
 * The refresh part of a run with `--refresh` (`up --refresh`, `preview --refresh`), from the events it streamed
 * (`onEvent`): each resource's refresh step and their counts, as {@link summarize} gives them.
 */
export function refreshOf(
  events: EngineEvent[],
): Pick<RunResult, "steps" | "diagnostics" | "counts" | "outputs"> {
  return summarize(
    events.filter((e) => e.resOutputsEvent?.metadata.op === "refresh"),
    "refresh",
  );
}

/**
 * The errors of a run, each as `<resource name>: <message>`: those of failed steps, and the engine's error
 * diagnostics on a resource (a Check failure is one: the real engine reports it with no step).
 */
export function errorsOf(r: Pick<RunResult, "steps" | "diagnostics">): string[] {
  return [
    ...new Set([
      ...r.steps.filter((s) => s.error).map((s) => `${s.name}: ${s.error}`),
      ...r.diagnostics
        .filter((d) => d.severity === "error" && d.urn)
        .map((d) => `${d.urn?.slice(d.urn.lastIndexOf("::") + 2)}: ${d.message}`),
    ]),
  ];
}

/**
 * Live processes (not zombies, not this one) whose environment holds `marker` (`/proc/<pid>/environ`), with
 * their command lines (without inline `data:` modules, cut at 200 characters): what is left of a run whose
 * environment carried the marker, since the CLI starts its plugins in process groups of their own. Empty where
 * there is no procfs.
 */
export function processesWithMarker(marker: string): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  } catch {
    return out; // no procfs: nothing can be checked
  }
  for (const p of pids) {
    const pid = Number(p);
    if (pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      if (/^\d+ \(.*\) Z/s.test(stat)) continue; // a zombie runs nothing
      if (!readFileSync(`/proc/${p}/environ`).includes(marker)) continue;
      const cmd = readFileSync(`/proc/${p}/cmdline`, "utf8")
        .split("\0")
        .filter((a) => !a.startsWith("data:"))
        .join(" ")
        .trim();
      out.push({ pid, cmd: cmd.length > 200 ? `${cmd.slice(0, 200)}…` : cmd });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

/** `pulumi stack export` of `stack` (add `--show-secrets` to `extra` to decrypt), parsed. */
export async function exportStack(opts: {
  projectDir: string;
  stack: string;
  stateDir: string;
  env?: NodeJS.ProcessEnv;
  extra?: string[];
}): Promise<{
  version: number;
  deployment: { resources?: Record<string, unknown>[]; pending_operations?: unknown[] };
}> {
  const out = await pulumiOk(["stack", "export", "--stack", opts.stack, ...(opts.extra ?? [])], {
    cwd: opts.projectDir,
    stateDir: opts.stateDir,
    ...(opts.env ? { env: opts.env } : {}),
  });
  return JSON.parse(out);
}

/** The file backend's checkpoint of `stack` of project `project`: `<stateDir>/.pulumi/stacks/<project>/<stack>.json`. */
export function checkpointFile(stateDir: string, project: string, stack: string): string {
  return join(resolve(stateDir), ".pulumi", "stacks", project, `${stack}.json`);
}

/**
 * The stack's state as the local backend holds it, read without a CLI run: its checkpoint ({@link checkpointFile}),
 * whose `latest` deployment is what `pulumi stack export` prints (secrets encrypted as there), in the same shape as
 * {@link exportStack}'s. For tests where the export itself is not what is tested: a `stack export` is a CLI run of
 * its own.
 * @throws when the stack has no checkpoint there.
 */
export function savedState(opts: { projectDir: string; stack: string; stateDir: string }): {
  version: number;
  deployment: { resources?: Record<string, unknown>[]; pending_operations?: unknown[] };
} {
  const { name } = readProject(opts.projectDir);
  const file = checkpointFile(opts.stateDir, name, opts.stack);
  if (!existsSync(file)) throw new Error(`${file} is missing: the stack ${opts.stack} has no checkpoint`);
  const saved = JSON.parse(readFileSync(file, "utf8")) as {
    version: number;
    checkpoint: { latest?: { resources?: Record<string, unknown>[]; pending_operations?: unknown[] } | null };
  };
  return { version: saved.version, deployment: saved.checkpoint.latest ?? {} };
}

/**
 * `<op> <resource name>` of each operation the engine has begun and not ended (`creating kpis`): the pending
 * operations of a state ({@link savedState}, or `pulumi stack export`'s output). The engine writes one there before it
 * sends the operation to the provider (pulumi/pulumi pkg/engine/update.go, `OnResourceStepPre` ends with
 * `SnapshotManager.BeginMutation`; pkg/resource/deploy/step_executor.go, `executeStep` then calls `step.Apply`).
 */
export function pendingOf(state: { deployment: { pending_operations?: unknown[] } }): string[] {
  return ((state.deployment.pending_operations ?? []) as { type: string; resource: { urn: string } }[]).map(
    (p) => `${p.type} ${p.resource.urn.slice(p.resource.urn.lastIndexOf("::") + 2)}`,
  );
}

/**
 * Installs this checkout as `<projectDir>/node_modules/pulumi-posthog` the way npm installs its tarball, but linked:
 * a directory holding links to `package.json` and to each entry of its `files` that exists (dist/sdk, docs, …), so
 * that a program's `require("pulumi-posthog")` runs this checkout's build. Not a link to the whole checkout: the
 * Node.js language host reads every package.json below node_modules, and the checkout's own (the generated SDKs'
 * in sdk-gen/, whose version is the generator's `${VERSION}` placeholder) would fail the CLI's discovery of the
 * program's plugins, which no installed package has. Returns the package's directory.
 */
export function linkPackage(projectDir: string): string {
  const pkgDir = join(projectDir, "node_modules", "pulumi-posthog");
  mkdirSync(pkgDir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { files?: string[] };
  for (const entry of ["package.json", ...(manifest.files ?? [])]) {
    const from = join(root, entry);
    if (!existsSync(from)) continue;
    mkdirSync(join(pkgDir, entry, ".."), { recursive: true });
    symlinkSync(from, join(pkgDir, entry), statSync(from).isDirectory() ? "dir" : "file");
  }
  return pkgDir;
}
