import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // CI also writes a JSON report, from which .ci/run prints one plain "N passed, N failed" line.
    reporters: process.env.CI ? ["default", ["json", { outputFile: ".tmp/vitest-report.json" }]] : ["default"],
  },
});
