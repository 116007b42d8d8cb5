import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each test starts the real server on a fresh database; two files at once matches the machine's two cores.
    maxWorkers: 2,
    // CI also writes a JSON report, from which .ci/run prints one plain "N passed, N failed" line.
    reporters: process.env.CI ? ["default", ["json", { outputFile: ".tmp/vitest-report.json" }]] : ["default"],
  },
});
