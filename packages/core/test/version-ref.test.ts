import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { exportedResult } from "../src/playground.js";
import { FULL_HASH } from "../src/version-ref.js";

const packagesDir = join(import.meta.dirname, "..", "..");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "dist" ? [] : sources(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

describe("version references have one home", () => {
  it("no source but core/src/version-ref.ts writes the full-hash pattern", () => {
    const writers = ["core", "server", "dashboard", "client"]
      .flatMap((pkg) => sources(join(packagesDir, pkg, "src")))
      .filter((file) => readFileSync(file, "utf8").includes("[0-9a-f]{64}"))
      .map((file) => file.slice(packagesDir.length + 1));
    // The client, which has no runtime dependency, keeps one mirror of its own, held equal below.
    expect(writers).toEqual(["core/src/version-ref.ts", "client/src/version-ref.ts"]);
  });

  it("the client's mirror is core's pattern", () => {
    const mirror = readFileSync(join(packagesDir, "client", "src", "version-ref.ts"), "utf8");
    expect(mirror).toContain(`export const FULL_HASH = /${FULL_HASH.source}/;`);
  });

  it("an imported result's hashes follow FULL_HASH", () => {
    const problem = exportedResult.safeParse({ version: "A".repeat(64) });
    expect(problem.success).toBe(false);
    expect(problem.error?.issues.find((issue) => issue.path[0] === "version")?.message).toBe(
      "must be a 64-character hash",
    );
  });
});
