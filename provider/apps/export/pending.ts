/**
 * `pulumi-posthog clear-pending`: removes from a stack's state the records of interrupted creates that a later
 * run reconciled (README, "Lost creates").
 *
 *   pulumi-posthog clear-pending [--stack NAME] [--cwd DIR] [--dry-run]
 *
 * When a run is killed while a create is under way, Pulumi records a pending create in the stack's state; the next
 * `pulumi up` creates the resource again (the provider adopts the object the killed create made, from its create
 * journal) but keeps the record, and warns about it in every later command (pulumi v3.274.1). Pulumi's own ways
 * out drop every such record (`pulumi refresh --clear-pending-creates`) or ask for each object's id
 * (`--import-pending-creates`). This command drops only the records whose resource the state now holds (a create
 * of the same URN completed since): the object is managed, the record says nothing more. A record whose resource
 * the state does not hold is kept and named: its object may exist; run `pulumi up` first.
 *
 * It runs the user's `pulumi` (on PATH, in DIR, with the environment as given: backend, passphrase):
 * `pulumi stack export --stack NAME`, then, when something is to be dropped, `pulumi stack import --stack NAME
 * --file <the edited export>`. Secrets stay encrypted (the export is not decrypted). Exit code 0 (done, or nothing
 * to do), 1 (a command failed: its output is shown), 2 (bad usage).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { docsLink, withDocsLink } from "../../client/docs-link";

export const PENDING_USAGE = `Usage:
  pulumi-posthog clear-pending [--stack NAME] [--cwd DIR] [--dry-run]

Removes from the stack's state the pending creates (records of creates interrupted by a killed run) whose
resource a later run created: the state holds it, so the record is stale. Records whose resource the state
does not hold are kept (run "pulumi up" first). Runs "pulumi stack export" and "pulumi stack import".

Options:
  --stack NAME  the stack (default: the selected stack)
  --cwd DIR     the Pulumi project's directory (default: the current directory)
  --dry-run     only say what would be removed`;

/** Where clear-pending's errors are explained. */
const PENDING_DOCS = docsLink(
  "troubleshooting/gone-and-interrupted.md",
  "interrupted-runs-pending-operations-protect",
);

/** What {@link clearPending} found and did. */
export interface PendingOutcome {
  /** URNs of the pending creates removed (or, with `dryRun`, to be removed). */
  cleared: string[];
  /** URNs of the pending creates kept: the state does not hold their resource. */
  kept: string[];
}

interface Io {
  stderr: (line: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** One `pulumi` command; throws with its output when it fails. */
function pulumi(args: string[], io: Io, cwd: string): string {
  const r = spawnSync("pulumi", [...args, "--non-interactive"], {
    cwd,
    env: io.env,
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  if (r.error) {
    throw new Error(
      `could not run pulumi (${r.error.message}): install the Pulumi CLI and put it on PATH, then run this again`,
    );
  }
  if (r.status !== 0) {
    throw new Error(
      `pulumi ${args.join(" ")} exited ${r.status}: ${(r.stderr || r.stdout).trim().slice(-2000)}`,
    );
  }
  return r.stdout;
}

/**
 * Removes the reconciled pending creates of a stack's state (see the module's doc).
 * @param opts `stack` (undefined: the selected stack), `cwd` (the project directory), `dryRun`
 * @returns the URNs cleared and kept
 * @throws Error naming the failed `pulumi` command and its output, or an export that is not a stack's state
 */
export function clearPending(
  opts: { stack?: string | undefined; cwd: string; dryRun?: boolean },
  io: Io,
): PendingOutcome {
  const stackArgs = opts.stack ? ["--stack", opts.stack] : [];
  const text = pulumi(["stack", "export", ...stackArgs], io, opts.cwd);
  let exported: {
    deployment?: { resources?: { urn?: string; id?: string }[]; pending_operations?: unknown[] };
  };
  try {
    exported = JSON.parse(text);
  } catch {
    throw new Error("pulumi stack export printed no JSON state: check the stack name and the backend");
  }
  const deployment = exported.deployment;
  if (!deployment || typeof deployment !== "object") {
    throw new Error("pulumi stack export printed no deployment: check the stack name and the backend");
  }
  const held = new Set(
    (deployment.resources ?? []).filter((r) => typeof r.id === "string" && r.id !== "").map((r) => r.urn),
  );
  const pending = (deployment.pending_operations ?? []) as { type?: string; resource?: { urn?: string } }[];
  const outcome: PendingOutcome = { cleared: [], kept: [] };
  const remaining = pending.filter((op) => {
    const urn = String(op.resource?.urn ?? "");
    if (op.type === "creating" && held.has(urn)) {
      outcome.cleared.push(urn);
      return false;
    }
    if (op.type === "creating") outcome.kept.push(urn);
    return true;
  });
  for (const urn of outcome.cleared) {
    io.stderr(
      `${opts.dryRun ? "would clear" : "cleared"}: the pending create of ${urn} (the state holds it)`,
    );
  }
  for (const urn of outcome.kept) {
    io.stderr(
      `kept: the pending create of ${urn}: the state does not hold it, its object may exist; run pulumi up first`,
    );
  }
  if (outcome.cleared.length === 0 || opts.dryRun) {
    if (outcome.cleared.length === 0) io.stderr("no reconciled pending create: the state is unchanged");
    return outcome;
  }
  const dir = mkdtempSync(join(tmpdir(), "pulumi-posthog-pending-"));
  try {
    const file = join(dir, "state.json");
    writeFileSync(
      file,
      JSON.stringify({ ...exported, deployment: { ...deployment, pending_operations: remaining } }),
      {
        mode: 0o600,
      },
    );
    pulumi(["stack", "import", ...stackArgs, "--file", file], io, opts.cwd);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return outcome;
}

/**
 * The `clear-pending` command line (`argv` after the command name).
 * @returns the exit code: 0 done, 1 failed (one line on stderr), 2 bad usage
 */
export function pendingMain(argv: string[], io: Io): number {
  let values: {
    stack?: string | undefined;
    cwd?: string | undefined;
    "dry-run"?: boolean | undefined;
    help?: boolean | undefined;
  };
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        stack: { type: "string" },
        cwd: { type: "string" },
        "dry-run": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (e) {
    io.stderr(`pulumi-posthog clear-pending: ${withDocsLink((e as Error).message, PENDING_DOCS)}`);
    io.stderr(PENDING_USAGE);
    return 2;
  }
  if (values.help) {
    io.stderr(PENDING_USAGE);
    return 0;
  }
  try {
    clearPending(
      { stack: values.stack, cwd: resolve(io.cwd, values.cwd ?? "."), dryRun: values["dry-run"] === true },
      io,
    );
    return 0;
  } catch (e) {
    io.stderr(`pulumi-posthog clear-pending failed: ${withDocsLink((e as Error).message, PENDING_DOCS)}`);
    return 1;
  }
}
