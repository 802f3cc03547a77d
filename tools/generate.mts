#!/usr/bin/env node
/**
 * `npm run generate`: every generator, in the order they need, so that a resource added to the one list
 * (provider/resources/index.ts `RESOURCES`) reaches everything derived from it with this one command:
 *
 * 1. the build (`tsc -p tsconfig.build.json`): the generators run from dist/, and read the cards from it;
 * 2. `dist/tools/schema.js`: schema.json (codegen's examples take their types from it, so it comes first);
 * 3. `dist/tools/codegen.js`: the SDK's Args, classes and output keys, sdk/resources.ts,
 *    provider/resources/providers.ts, the docs' generated parts;
 * 4. the build again when 2 or 3 wrote a file, so that dist/ holds what they wrote (the new SDK class, its named
 *    provider) and it compiles (incremental over the first build: about half its time);
 * 5. `tools/gen-sdk.mts`: the SDKs of sdk-gen/ from schema.json (needs Go; a cold build of its tools takes minutes).
 *
 * A second run writes nothing. `--check` writes nothing and exits 1 naming every stale file (each generator's own
 * `--check`: what CI runs through the tests); `--skip-gen-sdk` leaves step 5 out (no Go at hand: sdk-gen/ then stays
 * as it was, which `npm run gen-sdk` fixes). A first build that fails is reported and the steps go on (the files the
 * generators write may be what it failed on); the last build must pass. Exit 1 on any failure, naming the step.
 * Run directly by Node 24 (type stripping); imports none of the project's modules.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const root = resolve(import.meta.dirname, "..");
const say = (line: string) => process.stdout.write(`generate: ${line}\n`);

/** What a step did: its exit status and its output. */
interface Ran {
  ok: boolean;
  output: string;
}

/** Runs `node args…` in the repository as step `title`, printing its output and how long it took. */
function step(title: string, args: string[]): Ran {
  const started = Date.now();
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const output = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  if (output.trim() !== "") process.stdout.write(output.endsWith("\n") ? output : `${output}\n`);
  const ok = r.status === 0;
  const took = ((Date.now() - started) / 1000).toFixed(1);
  say(`${title}: ${ok ? "done" : `failed (${r.error?.message ?? `exit ${r.status}`})`} in ${took} s`);
  return { ok, output };
}

/**
 * The build, `tsc -p tsconfig.build.json`, incremental over `buildInfo` (a file of this run only, so that the
 * second build re-checks only what the generators wrote and what depends on it).
 */
const build = (title: string, buildInfo: string) =>
  step(title, [
    join(root, "node_modules", "typescript", "bin", "tsc"),
    ...["-p", "tsconfig.build.json", "--incremental", "--tsBuildInfoFile", buildInfo],
  ]);

/** The generators in their order (the module's comment); `check`: each one's `--check`. Returns the exit code. */
function generate(check: boolean, skipGenSdk: boolean, buildInfo: string): number {
  const flag = check ? ["--check"] : [];
  const first = build("build", buildInfo);
  if (!first.ok && check) return 1;
  if (!first.ok) say("the build failed: going on, as the generated files may be what it failed on");
  const results = [step("schema (schema.json)", [join(root, "dist", "tools", "schema.js"), ...flag])];
  // With --check every check runs, so that all that is stale is named at once.
  if (!check && !results[0]?.ok) return 1;
  const codegen = [join(root, "dist", "tools", "codegen.js"), ...flag];
  results.push(step("codegen (sdk/, provider/resources/providers.ts, docs)", codegen));
  if (!check && results.some((r) => !r.ok)) return 1;
  const wrote = results.some((r) => /: wrote /.test(r.output));
  if (!check && (wrote || !first.ok) && !build("build (what the generators wrote)", buildInfo).ok) return 1;
  if (skipGenSdk) say("gen-sdk skipped (--skip-gen-sdk): sdk-gen/ is as it was; `npm run gen-sdk` writes it");
  else results.push(step("gen-sdk (sdk-gen/)", [join(root, "tools", "gen-sdk.mts"), ...flag]));
  if (results.some((r) => !r.ok)) {
    say(check ? "stale: run `npm run generate` and commit what it writes" : "failed (see above)");
    return 1;
  }
  say(check ? "every generated file is current" : "done");
  return 0;
}

function main(): number {
  const { values } = parseArgs({
    options: {
      check: { type: "boolean", default: false },
      "skip-gen-sdk": { type: "boolean", default: false },
    },
  });
  const work = mkdtempSync(join(tmpdir(), "generate-"));
  try {
    return generate(values.check === true, values["skip-gen-sdk"] === true, join(work, "build.tsbuildinfo"));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

process.exitCode = main();
