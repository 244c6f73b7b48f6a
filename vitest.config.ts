import { configDefaults, defineConfig } from "vitest/config";

// `*.alone.test.ts` files run after the rest, one at a time: each drives whole runs of qaas in several
// processes (browsers included) and compares results that a machine busy with other test files would
// change — as a bench runs alone. (Projects that extend this config add to its arrays, so each names its
// own files.)
const ALONE = "tests/**/*.alone.test.ts";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    setupFiles: ["tests/support/temp-cleanup.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "suite",
          include: ["tests/**/*.test.ts", "target-app/tests/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ALONE],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: "alone", include: [ALONE], fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
