/**
 * The CI guard's rule (src/check.ts), which `promptstore check` and `promptstore-check` share: every prompt on
 * either side whose production differs, sorted; hashes shortened as core shortens them.
 */
import { SHORT_HASH_LENGTH as CORE_SHORT_HASH_LENGTH } from "@promptstore/core/version-ref";
import { describe, expect, test } from "vitest";
import { describeProductionDifferences, productionDifferences, SHORT_HASH_LENGTH } from "../src/check.js";

const A = "a".repeat(64);
const B = "b".repeat(64);

describe("productionDifferences", () => {
  test("differences on either side, sorted by id; unpublished and absent told apart", () => {
    const lock = new Map<string, string | null>([
      ["same", A],
      ["moved", A],
      ["only-in-lock", null],
    ]);
    const server = [
      { id: "same", production_version: A },
      { id: "moved", production_version: B },
      { id: "new-on-server", production_version: null },
    ];
    const differences = productionDifferences(lock, server);
    expect(differences).toEqual([
      { id: "moved", lock: A, server: B },
      { id: "new-on-server", lock: undefined, server: null },
      { id: "only-in-lock", lock: null, server: undefined },
    ]);
    expect(describeProductionDifferences(differences).split("\n")).toEqual([
      `moved: production on the server is ${B.slice(0, 12)}, the lockfile says ${A.slice(0, 12)}`,
      "new-on-server: production on the server is unpublished, the lockfile says not in the lockfile",
      "only-in-lock: production on the server is not in the server, the lockfile says unpublished",
    ]);
  });

  test("hashes are shortened as core shortens them (the client keeps a copy of the length)", () => {
    expect(SHORT_HASH_LENGTH).toBe(CORE_SHORT_HASH_LENGTH);
  });
});
