import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

/**
 * Test files that run the Pulumi CLI (or build Go programs, or pack and install the package): `npm test` runs them,
 * `npm run test:quick` (the inner loop) does not. A file missing here that runs the CLI fails in `test:quick`, naming
 * this list (tools/pulumi.ts `pulumiExecutable` refuses while `POSTHOG_TEST_QUICK` is set).
 */
export const CLI_FILES = [
  "test/stack/**/*.test.ts",
  "test/package/{install,quick-start,release}.test.ts",
  "test/plugin/{folder,gen-sdk,go,import-destroy,import-file,old-node}.test.ts",
  "test/plugin/{download-url,sdk-install,secrets,tarball,versions,yaml}.test.ts",
  "test/docs/{examples-yaml,run-blocks}.test.ts",
  "test/export/roundtrip.test.ts",
  "test/measure/bench-cli.test.ts",
  "test/tools/{pulumi-cli,pulumi-env}.test.ts",
];

/** `npm run test:quick`: every test file but {@link CLI_FILES}. */
const quick = process.env.npm_lifecycle_event === "test:quick";

export default defineConfig({
  test: {
    environment: "node",
    // Once per run: the folder where the package is packed once for the files that need it (test/package/packed.ts).
    globalSetup: ["./test/support/global-setup.ts"],
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    exclude: quick
      ? ["**/node_modules/**", "**/.git/**", ...CLI_FILES]
      : ["**/node_modules/**", "**/.git/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Three files at a time on CI's two cores: a CLI run waits on its program, provider host and engine in turn, so
    // two workers left the cores idle 14% of the time. Measured on one machine, the whole suite: 594 s with two
    // workers, 549 s with three (1,200 tests passed in both; CPU 86% → 94% busy).
    maxWorkers: 3,
    // The default output, then the ten slowest files (test/support/slowest-files.ts).
    reporters: ["default", "./test/support/slowest-files.ts"],
    env: {
      // Provider hosts started by tests journal their creates here, never in the user's state directory: the
      // emulator's ids repeat from run to run (provider/framework/create-journal.ts).
      POSTHOG_CREATE_JOURNAL_DIR: join(tmpdir(), `posthog-test-journal-${process.pid}`),
      ...(quick ? { POSTHOG_TEST_QUICK: "1" } : {}),
    },
  },
});
