import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // A limit for hangs, not a speed check: tests that run the binary several times took over 20 s under the
    // whole suite's load in CI, so 30 s left too little room.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // PostgreSQL tests each create their own database; two files at once matches the machine's two cores.
    maxWorkers: 2,
    // CI also writes a JSON report, from which .ci/run prints one plain "N passed, N failed" line.
    reporters: process.env.CI ? ["default", ["json", { outputFile: ".tmp/vitest-report.json" }]] : ["default"],
    projects: [
      {
        extends: true,
        test: {
          name: "suite",
          include: ["test/**/*.test.ts"],
          globalSetup: ["test/support/clear-server-logs.ts", "test/support/database-templates.ts"],
          sequence: { groupOrder: 0 },
        },
      },
      // After the whole suite, never beside it: it reads the logs every server of the suite left.
      {
        extends: true,
        test: { name: "server logs", include: ["test/logs/*.check.ts"], sequence: { groupOrder: 1 } },
      },
    ],
  },
});
