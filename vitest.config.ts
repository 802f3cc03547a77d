import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "node",
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: 2,
    // The default output, then the ten slowest files (test/support/slowest-files.ts).
    reporters: ["default", "./test/support/slowest-files.ts"],
    // Provider hosts started by tests journal their creates here, never in the user's state directory: the
    // emulator's ids repeat from run to run (provider/create-journal.ts).
    env: { POSTHOG_CREATE_JOURNAL_DIR: join(tmpdir(), `posthog-test-journal-${process.pid}`) },
  },
});
