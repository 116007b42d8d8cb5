import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // What a person waits for, not a speed check: a sign-in's scrypt on a machine whose two cores run the
    // whole suite took longer than expect.poll's default second (the journey's first sign-in, once).
    expect: { poll: { timeout: 10_000 } },
    reporters: process.env.CI ? ["default", ["json", { outputFile: ".tmp/vitest-report.json" }]] : ["default"],
    projects: [
      {
        extends: true,
        test: {
          name: "suite",
          include: ["test/**/*.test.ts"],
          globalSetup: ["../server/test/support/clear-server-logs.ts"],
          sequence: { groupOrder: 0 },
        },
      },
      // After the whole suite: the servers the end-to-end tests started left no crash in their logs.
      {
        extends: true,
        test: { name: "server logs", include: ["../server/test/logs/*.check.ts"], sequence: { groupOrder: 1 } },
      },
    ],
  },
});
