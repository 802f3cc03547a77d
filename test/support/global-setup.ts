/**
 * Vitest's global setup: runs once per `vitest run`, before the test files. Hands them an empty folder of this run,
 * `inject("packDir")`, where test/package/packed.ts packs the package once for every file that needs the tarball
 * (the first to ask packs, the others wait), instead of each file packing on its own. Packs nothing itself: a run of
 * files that need no tarball (`npm run test:quick`) pays nothing. The teardown removes the folder.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The folder where test/package/packed.ts packs the package once per run. */
    packDir?: string;
  }
}

export default function setup(project: TestProject): () => void {
  const packDir = mkdtempSync(join(tmpdir(), "pulumi-posthog-pack-"));
  project.provide("packDir", packDir);
  return () => rmSync(packDir, { recursive: true, force: true });
}
