/**
 * A stack's state as the local backend holds it, read without a CLI run: its checkpoint
 * (`<stateDir>/.pulumi/stacks/<project>/<stack>.json`), whose `latest` deployment is what `pulumi stack export`
 * prints (secrets encrypted as there). For the tests of test/plugin/ where the export itself is not what is tested.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { readProject } from "../../tools/pulumi";

/**
 * The stack's deployment, in the shape `pulumi stack export` prints (`{ version, deployment }`), from the
 * checkpoint of the project in `projectDir` on the local backend `stateDir`.
 * @throws when the stack has no checkpoint there.
 */
export function savedState(opts: { projectDir: string; stack: string; stateDir: string }): {
  version: number;
  deployment: { resources?: Record<string, unknown>[]; pending_operations?: unknown[] };
} {
  const { name } = readProject(opts.projectDir);
  const file = join(resolve(opts.stateDir), ".pulumi", "stacks", name, `${opts.stack}.json`);
  if (!existsSync(file)) throw new Error(`${file} is missing: the stack ${opts.stack} has no checkpoint`);
  const saved = JSON.parse(readFileSync(file, "utf8")) as {
    version: number;
    checkpoint: { latest?: { resources?: Record<string, unknown>[]; pending_operations?: unknown[] } | null };
  };
  return { version: saved.version, deployment: saved.checkpoint.latest ?? {} };
}
