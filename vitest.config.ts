import { availableParallelism } from "node:os"

import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/support/setup.ts"],
    // builds grep's and glob's worker from the source for the run
    globalSetup: ["test/support/search-worker.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most of a test's time is spent waiting for the processes it starts (mm, shells, servers),
    // so one test file more than there are cores runs at a time. Vitest's own default, one fewer,
    // ran the suite one file at a time on a 2-core machine.
    maxWorkers: availableParallelism() + 1
  }
})
