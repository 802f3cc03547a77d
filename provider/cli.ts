#!/usr/bin/env node
/**
 * `pulumi-posthog export`: writes a live PostHog organization as a Pulumi program that adopts it.
 *
 *   pulumi-posthog export [--out DIR] [--stack NAME] [--project ID ...] [--only KINDS] [--import-file FILE]
 *   pulumi-posthog export dashboard ID [--project ID] --out FILE
 *   pulumi-posthog audit [--config FILE] [--format table|json|markdown] [--project ID ...]
 *
 * `audit` runs the governance rules (provider/apps/governance/rules.ts) against the organization export reads, with
 * the same connection settings: its report goes to stdout; exit code 0 clean (advisory findings allowed), 1 on a
 * mandatory violation, 2 when something could not be read or the input is bad (one line on stderr).
 *
 * Connection settings as the provider reads them from the environment: POSTHOG_API_KEY (required; a key with
 * `:read` scopes is enough), POSTHOG_HOST (default https://us.posthog.com), POSTHOG_ORGANIZATION_ID (default
 * the key's current organization), POSTHOG_RATE_LIMIT. Every project the key can read is exported unless
 * --project narrows it (POSTHOG_PROJECT_ID does not; it is only the project of `export dashboard`). The generated
 * package.json installs pulumi-posthog from where this copy was installed (provider/apps/export/package-source.ts).
 * `--import-file FILE` also writes the list `pulumi import --file FILE` takes (provider/apps/export/import-file.ts);
 * with `--no-program`, only that list.
 * Only GET requests are sent. Progress and the summary go to stderr; exit code 0
 * on success, 1 on an error (one line saying what to fix), 2 on bad usage, which includes an output path that
 * cannot be written (checked before the first request, see {@link outputPathProblem}).
 */
import "./client/node-version"; // first: fails early, in one line, on a Node.js too old for undici
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { dashboardTemplate, dashboardTemplateText } from "./apps/dashboard-template";
import { IMPORT_FILE_OMITS, importFileText, renderImportFile } from "./apps/export/import-file";
import { type PackageSource, packageSource } from "./apps/export/package-source";
import { PENDING_USAGE, pendingMain } from "./apps/export/pending";
import { renderProgram } from "./apps/export/program";
import {
  AUDIT_FORMATS,
  type AuditFormat,
  auditExitCode,
  inertText,
  renderReport,
  runAudit,
} from "./apps/governance/audit";
import { type GovernanceConfig, parseGovernanceConfig } from "./apps/governance/rules";
import { EXPORT_KINDS, parseKinds, readOrganization, type Snapshot } from "./apps/organization";
import { clientShared, createClient, type PostHogClient, resolveSettings } from "./client";
import { docsLink, withDocsLink } from "./client/docs-link";

/** The usage of `audit` (part of {@link USAGE}). */
export const AUDIT_USAGE = `Audit:
  pulumi-posthog audit [--config FILE] [--format table|json|markdown] [--project ID ...]

Runs the governance rules against the live organization, objects no stack manages included: reads
what "export" reads (GET only) and reports every violation on stdout. Exit code 0 when no mandatory
rule is violated (advisory findings are printed), 1 on a mandatory violation, 2 when something could
not be read (never a clean report then) or on bad input.

Options:
  --config FILE   the rules' configuration, the JSON "pulumi preview --policy-pack-config" takes
                  (default: every rule advisory, with its defaults)
  --format F      table (default, for a terminal), json (for machines), markdown (for a CI job summary)
  --project ID    project to audit, repeatable (default: every project the key can read)

Connection: as "export".`;

export const USAGE = `Usage:
  pulumi-posthog export [--out DIR] [--stack NAME] [--project ID ...] [--only KINDS] [--import-file FILE]
  pulumi-posthog export --import-file FILE --no-program [--project ID ...] [--only KINDS]
  pulumi-posthog export dashboard ID [--project ID] --out FILE
  pulumi-posthog audit [--config FILE] [--format table|json|markdown] [--project ID ...]

Writes the PostHog organization as a Pulumi program that adopts it (index.ts, Pulumi.yaml,
Pulumi.<stack>.yaml, dashboards/<key>.json), or one dashboard's template JSON. Reads only (GET).

Options:
  --out DIR       output directory (default: posthog-org); for "export dashboard", the file to write
  --stack NAME    stack whose settings file is written, Pulumi.<NAME>.yaml (default: dev)
  --project ID    project to export, repeatable (default: every project the key can read; for
                  "export dashboard": POSTHOG_PROJECT_ID, else the key's current project)
  --only KINDS    comma-separated, among: ${EXPORT_KINDS.join(", ")}
  --import-file FILE
                  also write the list "pulumi import --file FILE" takes (the provider plugin's
                  posthog:index:* types, import ids, the program's resource names), for a
                  program in any language
  --no-program    with --import-file: write only that list, no program
  -h, --help      this help

Connection (as the provider reads it): POSTHOG_API_KEY (required; :read scopes suffice), POSTHOG_HOST,
POSTHOG_ORGANIZATION_ID, POSTHOG_PROJECT_ID (export dashboard only).

${AUDIT_USAGE}

${PENDING_USAGE.replace("Usage:\n", "")}`;

/** Where the CLI writes and what it reads (injectable for tests). */
export interface CliIo {
  stderr: (line: string) => void;
  stdout: (line: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** When the audit's progress lines start and how often they come (ms); default 3,000 then every 10,000. */
  auditProgress?: { afterMs: number; everyMs: number };
}

class UsageError extends Error {}

/** Where the export and audit commands' errors are explained (when the error names no section of its own). */
const EXPORT_DOCS = docsLink("troubleshooting/commands.md", "the-export-command");
const AUDIT_DOCS = docsLink("troubleshooting/commands.md", "the-audit-command");

const STACK_NAME = /^[A-Za-z0-9_.-]+$/;

/**
 * Runs the command line `argv` (without `node` and the script), e.g. `["export", "--out", "dir"]`.
 * @returns the exit code: 0 done, 1 failed (the error printed on stderr), 2 bad usage.
 */
export async function main(argv: string[], io: CliIo = defaultIo()): Promise<number> {
  if (argv[0] === "clear-pending") return pendingMain(argv.slice(1), io);
  if (argv[0] === "audit") return auditMain(argv.slice(1), io);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    io.stderr(`pulumi-posthog: ${withDocsLink((e as Error).message, EXPORT_DOCS)}`);
    io.stderr('Run "pulumi-posthog --help" for the usage.');
    return 2;
  }
  if (parsed.help) {
    io.stdout(USAGE);
    return 0;
  }
  // Before any request: a path that cannot be written would fail (or, under /proc, hang) only after the whole read.
  const problem = outputsProblem(parsed, io.cwd);
  if (problem !== undefined) {
    io.stderr(`pulumi-posthog: ${withDocsLink(problem, EXPORT_DOCS)}`);
    return 2;
  }
  // The run's one ClientShared: its pools are closed at the end.
  const shared = clientShared();
  try {
    const client = createClient({ ...resolveSettings({}, undefined, io.env), shared });
    if (parsed.dashboard !== undefined) return await exportDashboard(client, parsed, io);
    return await exportOrganization(client, parsed, io);
  } catch (e) {
    io.stderr(`pulumi-posthog export failed: ${withDocsLink(inertText((e as Error).message), EXPORT_DOCS)}`);
    return 1;
  } finally {
    await shared.close().catch(() => {});
  }
}

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      out: { type: "string" },
      stack: { type: "string" },
      project: { type: "string", multiple: true },
      only: { type: "string" },
      "import-file": { type: "string" },
      "no-program": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return { help: true as const };
  const [command, sub, id, ...rest] = positionals;
  if (command !== "export") {
    throw new UsageError(
      command === undefined
        ? "expected a command: export or audit"
        : `unknown command "${command}"; expected export or audit`,
    );
  }
  const stack = values.stack ?? "dev";
  if (!STACK_NAME.test(stack)) {
    throw new UsageError(`Invalid --stack "${stack}": letters, digits, "-", "_" and "." only`);
  }
  for (const p of values.project ?? []) {
    if (!/^\d+$/.test(p)) throw new UsageError(`Invalid --project "${p}": expected a project id (a number)`);
  }
  const kinds = parseKinds(values.only);
  const importFile = values["import-file"];
  if (importFile === "") throw new UsageError("--import-file needs a file name (the list to write)");
  const noProgram = values["no-program"] === true;
  if (noProgram && importFile === undefined)
    throw new UsageError("--no-program writes only the import list: give it --import-file FILE");
  if (noProgram && values.out !== undefined)
    throw new UsageError("--no-program writes no program: drop --out DIR (or drop --no-program)");
  if (sub === undefined) {
    return {
      help: false as const,
      out: values.out ?? "posthog-org",
      stack,
      projects: values.project,
      kinds,
      importFile,
      noProgram,
    };
  }
  if (importFile !== undefined || noProgram)
    throw new UsageError(
      "--import-file and --no-program are options of the organization's export, not of export dashboard",
    );
  if (sub !== "dashboard") throw new UsageError(`unknown argument "${sub}"; expected "export dashboard ID"`);
  if (id === undefined || !/^\d+$/.test(id) || rest.length > 0) {
    throw new UsageError("expected export dashboard ID --out FILE, with the dashboard's id (a number)");
  }
  if (values.out === undefined)
    throw new UsageError("export dashboard needs --out FILE (the template to write)");
  if ((values.project?.length ?? 0) > 1) throw new UsageError("export dashboard takes at most one --project");
  return {
    help: false as const,
    out: values.out,
    stack,
    projects: values.project,
    kinds,
    dashboard: Number(id),
    importFile: undefined,
    noProgram: false,
  };
}

type Parsed = Exclude<ReturnType<typeof parse>, { help: true }>;

/**
 * `pulumi-posthog audit` (argv after "audit"). Bad input (an unknown flag or format, a project that is not a
 * number, a configuration file that cannot be read or has the wrong shape) is refused in one line naming the flag
 * and what it accepts, before any request.
 * @returns 0 no mandatory violation, 1 a mandatory violation, 2 bad input or something could not be read.
 */
async function auditMain(argv: string[], io: CliIo): Promise<number> {
  let options: { format: AuditFormat; config: GovernanceConfig; projects: string[] | undefined };
  try {
    const parsed = parseAudit(argv, io.cwd);
    if (parsed === "help") {
      io.stdout(AUDIT_USAGE);
      return 0;
    }
    options = parsed;
  } catch (e) {
    io.stderr(`pulumi-posthog audit: ${withDocsLink(inertText((e as Error).message), AUDIT_DOCS)}`);
    return 2;
  }
  // The run's one ClientShared: its pools are closed at the end.
  const shared = clientShared();
  try {
    const client = createClient({ ...resolveSettings({}, undefined, io.env), shared });
    const report = await runAudit(client, options.config, {
      ...(options.projects ? { projects: options.projects } : {}),
      progress: (line) => io.stderr(`pulumi-posthog audit: ${line}`),
      ...(io.auditProgress
        ? { progressAfterMs: io.auditProgress.afterMs, progressEveryMs: io.auditProgress.everyMs }
        : {}),
    });
    io.stdout(renderReport(report, options.format));
    return auditExitCode(report);
  } catch (e) {
    // One line, whatever the server or a name put in the message.
    io.stderr(`pulumi-posthog audit: ${withDocsLink(inertText((e as Error).message), AUDIT_DOCS)}`);
    return 2;
  } finally {
    await shared.close().catch(() => {});
  }
}

/** The options of `audit`, or "help". @throws Error naming the flag and what it accepts. */
function parseAudit(argv: string[], cwd: string) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      config: { type: "string" },
      format: { type: "string" },
      project: { type: "string", multiple: true },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help" as const;
  if (positionals.length > 0) {
    throw new UsageError(
      `unexpected argument "${positionals[0]}": audit takes only --config, --format and --project`,
    );
  }
  const format = values.format ?? "table";
  if (!(AUDIT_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`Invalid --format "${format}": accepted: ${AUDIT_FORMATS.join(", ")}`);
  }
  for (const p of values.project ?? []) {
    if (!/^\d+$/.test(p)) throw new UsageError(`Invalid --project "${p}": expected a project id (a number)`);
  }
  let raw: unknown = {};
  if (values.config !== undefined) {
    const file = resolve(cwd, values.config);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      throw new UsageError(
        `--config ${values.config} cannot be read (${codeOf(e)}): give the policy config file`,
      );
    }
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new UsageError(`--config ${values.config} is not JSON: ${(e as Error).message}`);
    }
  }
  let config: GovernanceConfig;
  try {
    config = parseGovernanceConfig(raw);
  } catch (e) {
    throw new UsageError(`--config ${values.config}: ${(e as Error).message}`);
  }
  return { format: format as AuditFormat, config, projects: values.project };
}

async function exportDashboard(client: PostHogClient, parsed: Parsed, io: CliIo): Promise<number> {
  const projectId = parsed.projects?.[0];
  const id = parsed.dashboard as number;
  const dashboard = await client.dashboards.retrieve({ id, ...(projectId ? { projectId } : {}) });
  const { template, omitted } = dashboardTemplate(dashboard);
  const file = resolve(io.cwd, parsed.out);
  makeDirectories(dirname(file));
  writeFileSync(file, dashboardTemplateText(template));
  io.stderr(
    `Wrote ${parsed.out}: template of dashboard ${id} "${dashboard.name ?? ""}", ${template.tiles.length} tiles`,
  );
  for (const o of omitted) io.stderr(`  left out: ${o.what}: ${o.why}`);
  if (template.tiles.length === 0) {
    io.stderr(
      "  warning: no tile a template can carry; create_from_template_json refuses a template without tiles",
    );
  }
  io.stderr(`Requests: ${client.stats().attempts} (GET only)`);
  return 0;
}

async function exportOrganization(client: PostHogClient, parsed: Parsed, io: CliIo): Promise<number> {
  io.stderr(
    `Reading ${client.settings.host} (organization ${client.settings.organizationId ?? "@current"})…`,
  );
  if (parsed.projects === undefined && client.settings.projectId !== undefined) {
    io.stderr(
      `  every project the key can read (POSTHOG_PROJECT_ID=${client.settings.projectId} does not narrow the ` +
        `export: pass --project ${client.settings.projectId} for that one only)`,
    );
  }
  const snapshot = await readOrganization(client, {
    kinds: parsed.kinds,
    ...(parsed.projects ? { projects: parsed.projects } : {}),
    progress: (line) => io.stderr(`  ${inertText(line)}`),
  });
  if (parsed.noProgram) {
    const lines = summary(snapshot, parsed.out, parsed.stack, new Map());
    lines[0] = "Read (--no-program: no program written):";
    for (const line of lines) io.stderr(inertText(line));
    writeImportFile(snapshot, parsed.importFile as string, io);
    return 0;
  }
  const out = resolve(io.cwd, parsed.out);
  const source = packageSource(out);
  const files = renderProgram(snapshot, { stack: parsed.stack, dependency: source.spec });
  makeDirectories(join(out, "dashboards"));
  const kept: string[] = [];
  for (const [path, text] of files) {
    const target = join(out, path);
    if ((path === "package.json" || path === "tsconfig.json") && existsSync(target)) {
      kept.push(path);
      continue;
    }
    writeFileSync(target, text);
  }
  // Templates of dashboards no longer exported would be promoted by mistake: remove them.
  const stale = readdirSync(join(out, "dashboards")).filter(
    (f) => f.endsWith(".json") && !files.has(`dashboards/${f}`),
  );
  for (const f of stale) rmSync(join(out, "dashboards", f));
  const written = kept.includes("package.json") ? undefined : source;
  for (const line of summary(snapshot, parsed.out, parsed.stack, files, kept, stale, written))
    io.stderr(inertText(line));
  if (parsed.importFile !== undefined) writeImportFile(snapshot, parsed.importFile, io);
  return 0;
}

/** Writes the import list of `snapshot` to `name` (relative to the working directory) and says what it holds. */
function writeImportFile(snapshot: Snapshot, name: string, io: CliIo): void {
  const file = resolve(io.cwd, name);
  makeDirectories(dirname(file));
  writeFileSync(file, importFileText(snapshot));
  for (const line of importFileSummary(snapshot, name)) io.stderr(line);
}

/** The output paths of `parsed` that cannot be written, as one line naming the flag and the path; else undefined. */
function outputsProblem(parsed: Parsed, cwd: string): string | undefined {
  const outputs: [flag: string, path: string, kind: "file" | "directory"][] = [];
  if (parsed.dashboard !== undefined) outputs.push(["--out", parsed.out, "file"]);
  else if (!parsed.noProgram) outputs.push(["--out", parsed.out, "directory"]);
  if (parsed.importFile !== undefined) outputs.push(["--import-file", parsed.importFile, "file"]);
  for (const [flag, path, kind] of outputs) {
    const problem = outputPathProblem(resolve(cwd, path), kind);
    if (problem !== undefined) return `${flag} ${path} cannot be written: ${problem}`;
  }
  return undefined;
}

/** File systems of the kernel's interfaces, which hold no files (mkdir under /proc fails with ENOENT). */
const PSEUDO_FILE_SYSTEMS = new Set([
  "proc",
  "sysfs",
  "cgroup",
  "cgroup2",
  "debugfs",
  "tracefs",
  "securityfs",
  "configfs",
  "devpts",
  "bpf",
  "pstore",
  "efivarfs",
  "fusectl",
  "mqueue",
  "binfmt_misc",
  "nsfs",
]);

/**
 * Why `target` (an absolute path) cannot be written as a `kind` (a file; or a directory, made when missing, to
 * write files in), or undefined when it can. Bounded, and leaves nothing behind: one `stat` per path component up
 * to the nearest existing ancestor (no recursive mkdir: Node's never returns under /proc), that ancestor refused
 * when it is not a directory, lies on a pseudo file system (/proc, /sys, …: root may "write" there) or is not
 * writable, then one empty directory made and removed in it to prove it (a read-only mount, a full quota).
 * An existing file is overwritten, so for it only its own write permission counts.
 * @returns what is wrong and what to do, in one sentence (without the flag), e.g. `/proc is on the proc pseudo
 * file system, which holds no files: give a path on a disk, e.g. in the working directory`.
 */
export function outputPathProblem(target: string, kind: "file" | "directory"): string | undefined {
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(target, { throwIfNoEntry: false });
  } catch (e) {
    return `${target} cannot be read (${codeOf(e)}): give a path you can reach`;
  }
  if (stats?.isDirectory() && kind === "file")
    return `${target} is a directory, not a file: give a file name, e.g. ${join(target, "import.json")}`;
  if (stats !== undefined && !stats.isDirectory() && kind === "directory")
    return `${target} is a file, not a directory: give a directory (made when missing)`;
  // The directory the files go in, or the nearest of its ancestors that exists (the missing levels are made there).
  let dir = kind === "directory" ? target : dirname(target);
  let found = dir === target ? stats : undefined;
  for (;;) {
    try {
      found ??= statSync(dir, { throwIfNoEntry: false });
    } catch (e) {
      return `${dir} cannot be read (${codeOf(e)}): give a path you can reach`;
    }
    if (found !== undefined || dirname(dir) === dir) break;
    dir = dirname(dir);
  }
  if (found === undefined) return `not even ${dir} exists: give a path on a mounted disk`;
  if (!found.isDirectory())
    return `${dir} is a file, not a directory: give a path whose parent directories are directories`;
  const pseudo = pseudoFileSystem(dir);
  if (pseudo !== undefined)
    return `${dir} is on the ${pseudo} pseudo file system, which holds no files: give a path on a disk, e.g. in the working directory`;
  const writable = (path: string) => {
    try {
      accessSync(path, constants.W_OK);
      return undefined;
    } catch (e) {
      return `${path} is not writable by this user (${codeOf(e)}): give a path you can write to`;
    }
  };
  if (stats !== undefined && kind === "file") return writable(target);
  const denied = writable(dir);
  if (denied !== undefined) return denied;
  try {
    rmdirSync(mkdtempSync(join(dir, ".pulumi-posthog-write-test-")));
    return undefined;
  } catch (e) {
    return `nothing can be made in ${dir} (${codeOf(e)}): give a path on a writable disk`;
  }
}

/** The pseudo file system (e.g. `proc`) that `dir`, an existing directory, lies on, or undefined. */
function pseudoFileSystem(dir: string): string | undefined {
  let real = dir;
  try {
    real = realpathSync(dir);
  } catch {
    // the path as given
  }
  const top = /^\/(proc|sys)(\/|$)/.exec(real)?.[1];
  if (top !== undefined) return top === "proc" ? "proc" : "sysfs";
  let mounts: string;
  try {
    mounts = readFileSync("/proc/self/mountinfo", "utf8"); // Linux; elsewhere, only the prefixes above
  } catch {
    return undefined;
  }
  // "36 35 98:0 /root /mnt/point rw,… shared:1 - ext4 /dev/sda1 rw": the deepest mount point holding `real` wins
  // (of equal ones, the last mounted).
  let best: { point: string; type: string } | undefined;
  for (const line of mounts.split("\n")) {
    const [left, right] = line.split(" - ");
    const point = left
      ?.split(" ")[4]
      ?.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
    const type = right?.split(" ")[0];
    if (point === undefined || type === undefined) continue;
    const holds = point === "/" || real === point || real.startsWith(`${point}/`);
    if (holds && (best === undefined || point.length >= best.point.length)) best = { point, type };
  }
  return best !== undefined && PSEUDO_FILE_SYSTEMS.has(best.type) ? best.type : undefined;
}

/**
 * Makes the directory `dir` and its missing ancestors, one level at a time: at most one mkdir per path component
 * (Node's recursive mkdir never returns under /proc). An existing directory is fine.
 * @throws Error naming the level that could not be made.
 */
function makeDirectories(dir: string): void {
  const missing: string[] = [];
  for (let at = dir; statSync(at, { throwIfNoEntry: false }) === undefined; at = dirname(at)) {
    if (dirname(at) === at) break;
    missing.unshift(at);
  }
  for (const level of missing) {
    try {
      mkdirSync(level);
    } catch (e) {
      if (codeOf(e) !== "EEXIST")
        throw new Error(`cannot make the directory ${level}: ${(e as Error).message}`);
    }
  }
}

const codeOf = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? (e as Error).message;

/** The summary lines: exported per kind, skipped and why, requests made. */
export function summary(
  s: Snapshot,
  out: string,
  stack: string,
  files: Map<string, string>,
  kept: string[] = [],
  stale: string[] = [],
  source?: PackageSource,
): string[] {
  const dashboards = s.projects.flatMap((p) => p.dashboards);
  const counts: [string, number | string][] = [];
  if (s.kinds.has("domains")) counts.push(["domains", s.domains.length]);
  if (s.kinds.has("members")) counts.push(["members", s.members.length]);
  if (s.kinds.has("invites")) counts.push(["invites", s.invites.length]);
  if (s.kinds.has("batch-exports")) counts.push(["batch exports", s.batchExports.length]);
  if (s.kinds.has("projects")) counts.push(["projects", s.projects.length]);
  if (s.kinds.has("dashboards")) {
    const templated = dashboards.filter((d) => d.template !== undefined).length;
    counts.push(["dashboards", `${dashboards.length} (${templated} with a template)`]);
  }
  if (s.kinds.has("collaborators")) {
    counts.push(["collaborators", dashboards.reduce((n, d) => n + d.collaborators.length, 0)]);
  }
  if (s.kinds.has("sharing")) {
    counts.push(["shared dashboards", dashboards.filter((d) => d.dashboard.is_shared).length]);
  }
  const lines = [
    `Exported to ${out} (stack ${stack}; ${files.size - kept.length} files):`,
    `  ${counts.map(([k, n]) => `${k}: ${n}`).join(", ")}`,
  ];
  if (kept.length > 0) lines.push(`  kept the existing ${kept.join(" and ")}`);
  if (stale.length > 0) lines.push(`  removed ${stale.length} template(s) of dashboards no longer exported`);
  if (source) {
    lines.push(`  package.json: "pulumi-posthog": ${JSON.stringify(source.spec)} (${source.origin})`);
    if (source.note) lines.push(`  note: ${source.note}`);
  }
  if (s.skipped.length > 0) {
    lines.push(`Skipped (${s.skipped.length}):`);
    for (const k of s.skipped) lines.push(`  ${k.kind}: ${k.what}: ${k.why}`);
  } else lines.push("Skipped: nothing");
  const r = s.requests;
  const total = r.lists + r.dashboardDetails + r.collaboratorLists;
  lines.push(
    `Requests: ${total} (GET only): ${r.lists} list pages, ${r.dashboardDetails} dashboard details, ` +
      `${r.collaboratorLists} collaborator list(s)`,
  );
  return lines;
}

/** The summary lines of `--import-file`: entries per type, what the list leaves out, the command to run. */
export function importFileSummary(s: Snapshot, file: string): string[] {
  const { resources } = renderImportFile(s);
  const perType = new Map<string, number>();
  for (const r of resources) {
    const name = r.type.replace(/^posthog:index:/, "");
    perType.set(name, (perType.get(name) ?? 0) + 1);
  }
  const counts = [...perType].map(([t, n]) => `${t}: ${n}`).join(", ");
  return [
    `Import file ${file}: ${resources.length} resources${counts ? ` (${counts})` : ""}`,
    ...IMPORT_FILE_OMITS.map((o) => `  not in it: ${o.type}: ${o.why}`),
    `  in a project of any language with the posthog plugin: pulumi import --file ${file}`,
  ];
}

function defaultIo(): CliIo {
  return {
    stderr: (line) => process.stderr.write(`${line}\n`),
    stdout: (line) => process.stdout.write(`${line}\n`),
    env: process.env,
    cwd: process.cwd(),
  };
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`pulumi-posthog: ${(e as Error).message}\n`);
      process.exitCode = 1;
    },
  );
}
