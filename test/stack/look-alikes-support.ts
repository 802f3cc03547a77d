import { ensureStack, writeStackSettings } from "../../tools/pulumi";
import { type Declared, type FixtureStack, fixtureDir } from "./fixture-program";

/**
 * Writes the stack's settings file for `program` (as {@link FixtureStack.run} does) and creates the stack on its
 * backend (`pulumi stack init`) without running the program: what `startUp` needs, for the cost of no preview.
 */
export async function prepareStack(
  s: FixtureStack,
  program: Declared,
  env: Record<string, string>,
): Promise<void> {
  writeStackSettings(s.configFile, `config:\n  fx:resources: ${JSON.stringify(JSON.stringify(program))}\n`);
  await ensureStack({
    projectDir: fixtureDir,
    stack: s.name,
    stateDir: s.stateDir,
    configFile: s.configFile,
    env,
  });
}
