#!/usr/bin/env node
/**
 * `npm run stack -- <preview|up|refresh|destroy> [--stack dev] [--state FILE] [--config-file FILE] [--refresh]
 *   [--run-program] [--expect-no-changes] [--json] [--cwd DIR]`
 *
 * The stand-in engine's command line (tools/stack/engine.ts; for machines without the Pulumi CLI). Reads
 * Pulumi.yaml and Pulumi.<stack>.yaml in --cwd (default: the current directory), connection settings from
 * the environment like the provider (POSTHOG_HOST, POSTHOG_API_KEY, …), and keeps its checkpoint in
 * --state (default .stack-state/<stack>.json). Exit status 0 when every operation succeeded, 1 when any
 * failed or, with --expect-no-changes, when anything would change (the CI drift gate
 * `preview --refresh --expect-no-changes`), 2 on bad usage.
 *
 * `refresh` and `destroy` use the provider settings stored at the last `up`, as the engine does without
 * `--run-program`; with `--run-program` they use the current ones. SIGINT/SIGTERM cancel as the CLI's first
 * Ctrl-C does (no new operation starts, those under way finish and are recorded; exit 1); a second signal
 * exits at once (255). The program and the provider host never outlive this process.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { OperationSchema, runStack } from "./engine";
import { formatSummary, heading, jsonLine, printer } from "./report";

const USAGE =
  "usage: npm run stack -- <preview|up|refresh|destroy> [--stack dev] [--state FILE] [--config-file FILE] [--refresh] [--run-program] [--expect-no-changes] [--json] [--cwd DIR]";

async function main(): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  const parse = () =>
    parseArgs({
      allowPositionals: true,
      options: {
        stack: { type: "string", short: "s", default: "dev" },
        state: { type: "string" },
        "config-file": { type: "string" },
        json: { type: "boolean", default: false },
        refresh: { type: "boolean", default: false },
        "run-program": { type: "boolean", default: false },
        "expect-no-changes": { type: "boolean", default: false },
        cwd: { type: "string", default: "." },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  try {
    parsed = parse();
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const op = OperationSchema.safeParse(positionals[0]);
  if (!op.success || positionals.length !== 1) {
    process.stderr.write(
      `operation must be one of preview, up, refresh, destroy; got ${JSON.stringify(positionals.join(" "))}\n${USAGE}\n`,
    );
    return 2;
  }
  const write = (line: string) => process.stdout.write(`${line}\n`);
  const cancel = new AbortController();
  // The CLI's cancellation scope (pkg/backend/cancellation_scope.go): the first signal cancels (operations under
  // way finish and are recorded), a second one terminates at once.
  const onSignal = (signal: NodeJS.Signals) => {
    const name = signal === "SIGINT" ? "^C" : signal;
    if (cancel.signal.aborted) {
      process.stderr.write(`${name} received; terminating\n`);
      process.exit(255);
    }
    const again = signal === "SIGINT" ? "press ^C again" : `send ${signal} again`;
    process.stderr.write(
      `${name} received; cancelling. If you would like to terminate immediately, ${again}.\n` +
        (op.data === "preview"
          ? ""
          : "Note that terminating immediately may lead to orphaned resources and other inconsistencies.\n"),
    );
    cancel.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  if (!values.json) write(`${heading(op.data, values.stack)}\n`);
  const result = await runStack({
    operation: op.data,
    projectDir: resolve(values.cwd),
    stack: values.stack,
    ...(values.state ? { statePath: resolve(values.state) } : {}),
    ...(values["config-file"] ? { configFile: resolve(values["config-file"]) } : {}),
    ...(values.refresh ? { refresh: true } : {}),
    ...(values["run-program"] ? { runProgram: true } : {}),
    signal: cancel.signal,
    ...(values.json ? {} : { onEvent: printer(op.data, write) }),
  });
  const changes = result.counts.create + result.counts.update + result.counts.replace + result.counts.delete;
  const unexpected = values["expect-no-changes"] && changes > 0;
  if (values.json) write(JSON.stringify(jsonLine(result)));
  else {
    write("");
    for (const line of formatSummary(result)) write(line);
  }
  if (unexpected) process.stderr.write(`error: --expect-no-changes: ${changes} change(s) found\n`);
  return result.ok && !unexpected ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
