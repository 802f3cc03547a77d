#!/usr/bin/env node
/**
 * `npm run earlier-state`: writes the state of test/fixtures/earlier-state/ with this checkout's code, for
 * test/stack/earlier-state.test.ts, which reads it with the code of a later commit (issue 50, item 2: "state
 * written by earlier versions still reads and previews with no change"). Run by hand, never by the test suite: the
 * fixture is only worth something when the code that wrote it is older than the code that reads it.
 *
 * Against a fresh emulator (rate limit off, its clock frozen so that nothing of the world ages: an invite never
 * expires) holding two dashboards made first through the API (ids 1 and 2 of the seeded project: the SDK program
 * adopts the first by `dashboardId`, the YAML program imports the second with the `import` resource option), with a
 * DNS automation publishing each domain's TXT record, each program ({@link PROGRAMS}) runs `pulumi up`, `pulumi up --refresh` (a domain's SSO enforcement
 * waits for its verification), then `pulumi preview --refresh --expect-no-changes` (a fixture that is not steady from birth proves nothing), then
 * `pulumi stack export` into its `checkpoint.json`. Then the emulator's world as it stands (`--state-file`, every
 * write saved) goes to `world.json`, and README.md names the commit. Refuses to run when provider/, sdk/, emulator/
 * or plugin/ differ from the commit (the README would name code that did not write the state).
 *
 * No API key is written in clear: the programs take the connection from POSTHOG_* in the environment (the stack
 * config and the state hold none), and the world keeps API keys as SHA-256 hashes. The state's secret outputs are
 * encrypted with {@link EARLIER_STATE_PASSPHRASE}.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { emulatorEnv, startEmulator } from "../emulator";
import { resourceNames } from "../provider/resources/index";
import { pulumiExecutable, pulumiOk, runStack } from "./pulumi";
import { dnsAutomation, seedApi } from "./seed-api";

/** The repository: this file runs from tools/ (vitest) or dist/tools/ (built). */
const root = existsSync(join(__dirname, "..", "package.json"))
  ? resolve(__dirname, "..")
  : resolve(__dirname, "..", "..");

/** The fixture's folder. */
export const EARLIER_STATE_DIR = join(root, "test", "fixtures", "earlier-state");

/**
 * The passphrase the checkpoints' secrets are encrypted with (`PULUMI_CONFIG_PASSPHRASE`), pinned here rather than
 * taken from tools/pulumi.ts: a later change of the test stacks' passphrase must not make the fixture unreadable.
 */
export const EARLIER_STATE_PASSPHRASE = "pulumi-posthog-local-stacks";

/** The stack of each program (its `<project>/<stack>` is in the state: the program must run as the same stack). */
export const EARLIER_STATE_STACK = "earlier";

/** The programs, each a folder of {@link EARLIER_STATE_DIR} holding Pulumi.yaml and, once written, checkpoint.json. */
export const PROGRAMS = [
  { dir: "sdk", what: "a TypeScript program of the dynamic SDK" },
  { dir: "yaml", what: "a Pulumi YAML program of the provider plugin" },
] as const;

/** The emulator's world at the moment of the export, beside the programs. */
export const WORLD_FILE = "world.json";

/** The dashboards made through the API before the first `up`, in order (ids 1 and 2 of the seeded project). */
const PREMADE_DASHBOARDS = ["Adopted by the SDK program", "Imported by the YAML program"];

/**
 * The commit of HEAD.
 * @throws when provider/, sdk/, emulator/ or plugin/ differ from it (`git status --porcelain`), naming the files.
 */
function cleanCommit(): string {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8" }).trim();
  const dirty = git("status", "--porcelain", "--", "provider", "sdk", "emulator", "plugin");
  if (dirty !== "") {
    throw new Error(
      `provider/, sdk/, emulator/ or plugin/ differ from HEAD; commit or stash first, so that the README names ` +
        `the code that wrote the state:\n${dirty}`,
    );
  }
  return git("rev-parse", "HEAD");
}

/** README.md of the fixture: what it is, the commit that wrote it, how to write it again. */
function readme(commit: string): string {
  return `# State written by an earlier version

Written by the code of commit \`${commit}\` (its provider/, sdk/, emulator/ and plugin/) with
\`npm run earlier-state\` (tools/earlier-state.ts); the test suite never runs it. test/stack/earlier-state.test.ts
starts an emulator holding \`${WORLD_FILE}\` (the emulator's world at the export, its clock frozen), \`pulumi stack
import\`s each \`checkpoint.json\` into a fresh local backend, and runs \`pulumi preview --refresh
--expect-no-changes\` and \`pulumi up --refresh\` with the current code: nothing may change, nothing may be written to
PostHog.

${PROGRAMS.map((p) => `- \`${p.dir}/\`: ${p.what}, stack \`${EARLIER_STATE_STACK}\`, one of every resource.`).join("\n")}

Secrets: no API key in clear. The connection came from POSTHOG_* in the environment (not in the stack config, not
in the state); the world holds API keys as SHA-256 hashes; the state's secret outputs are encrypted with the
passphrase \`EARLIER_STATE_PASSPHRASE\` of tools/earlier-state.ts. The project tokens (\`phc_…\`) in the world are
fakes the emulator made.

Write it again only when the state's format changes on purpose: the new fixture then proves nothing about the old
state (keep the old one beside it, under another name, while its users matter).
`;
}

/**
 * Runs `up`, `up --refresh`, then `preview --refresh --expect-no-changes`, then `stack export` of program `dir` on a local backend
 * under `work`, with `env` (the connection), and writes the export to `<dir>/checkpoint.json`.
 * @throws when a run fails, with its output, or the state lacks a kind of resource of `RESOURCES`.
 */
async function writeCheckpoint(dir: string, work: string, env: NodeJS.ProcessEnv): Promise<void> {
  const projectDir = join(EARLIER_STATE_DIR, dir);
  const stateDir = join(work, dir);
  const configFile = join(work, `Pulumi.${dir}.yaml`);
  const run = { projectDir, stack: EARLIER_STATE_STACK, stateDir, configFile, env };
  for (const step of [
    { operation: "up" as const },
    // A domain's SSO enforcement is applied once it is verified, which the first up's DomainVerification waits for.
    { operation: "up" as const, refresh: true },
    { operation: "preview" as const, refresh: true, expectNoChanges: true },
  ]) {
    const r = await runStack({ ...run, ...step });
    if (!r.ok) throw new Error(`${dir}: pulumi ${step.operation} failed:\n${r.output}`);
    process.stdout.write(`${dir}: pulumi ${step.operation} passed (${r.wallMs} ms)\n`);
  }
  const exported = await pulumiOk(["stack", "export", "--stack", EARLIER_STATE_STACK], {
    cwd: projectDir,
    stateDir,
    env,
  });
  const types = (
    JSON.parse(exported) as { deployment: { resources: { type: string }[] } }
  ).deployment.resources.map((r) => r.type);
  const missing = resourceNames.filter((n) => !types.some((t) => t.endsWith(`:${n}`)));
  if (missing.length > 0) throw new Error(`${dir}: the program declares no ${missing.join(", ")}`);
  writeFileSync(join(projectDir, "checkpoint.json"), exported);
}

/**
 * Writes the fixture (see the file's comment): the checkpoints, the world and README.md. Resolves when done.
 * @throws when the code differs from HEAD ({@link cleanCommit}), the CLI is missing, a premade dashboard gets another
 * id than the programs name, or a run fails.
 */
export async function writeEarlierState(): Promise<void> {
  const commit = cleanCommit();
  pulumiExecutable();
  const work = mkdtempSync(join(tmpdir(), "earlier-state-"));
  const worldFile = join(work, WORLD_FILE);
  const emu = await startEmulator({ rateLimit: false, stateFile: worldFile });
  const api = seedApi(emu.url, emu.apiKey);
  const dns = dnsAutomation(api, 100);
  try {
    await api.call("POST", "/_emulator/clock", { frozen: true });
    for (const [i, name] of PREMADE_DASHBOARDS.entries()) {
      const made = (await api.call("POST", `/api/projects/${emu.projectId}/dashboards/`, { name })) as {
        id: number;
      };
      if (made.id !== i + 1) throw new Error(`the dashboard "${name}" got id ${made.id}, not ${i + 1}`);
    }
    const env: NodeJS.ProcessEnv = {
      ...emulatorEnv(emu),
      PULUMI_CONFIG_PASSPHRASE: EARLIER_STATE_PASSPHRASE,
      POSTHOG_CREATE_JOURNAL_DIR: join(work, "journal"),
    };
    for (const p of PROGRAMS) await writeCheckpoint(p.dir, work, env);
  } finally {
    await dns.stop();
    await emu.close();
  }
  const world = JSON.parse(readFileSync(worldFile, "utf8")) as unknown;
  writeFileSync(join(EARLIER_STATE_DIR, WORLD_FILE), `${JSON.stringify(world, null, 2)}\n`);
  writeFileSync(join(EARLIER_STATE_DIR, "README.md"), readme(commit));
  rmSync(work, { recursive: true, force: true });
  process.stdout.write(`wrote ${EARLIER_STATE_DIR} (commit ${commit})\n`);
}

if (require.main === module) {
  writeEarlierState().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  });
}
