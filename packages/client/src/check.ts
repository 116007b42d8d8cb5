import type { PromptListItem } from "./types.js";

/** One prompt whose production (or other label) on the server is not what the lockfile records. */
export interface ProductionDifference {
  id: string;
  /** The label as the lockfile records it; null when not set, undefined when not in the lockfile. */
  lock: string | null | undefined;
  /** The label on the server; null when not set, undefined when the prompt is not on the server. */
  server: string | null | undefined;
  /** The label compared: production unless another was asked for. */
  label?: string;
}

/**
 * Whether what the server serves as production is exactly what the lockfile says, for every prompt on
 * either side, sorted by id. A prompt on the server that the lockfile does not know counts too: CI guards
 * everything production serves. `promptstore check` and `promptstore-check` both decide with this.
 *
 * @example
 * ```ts
 * import { productionDifferences } from "@promptstore/client";
 * productionDifferences(new Map([["bot", "aaa"]]), [{ id: "bot", production_version: "bbb" } as never]);
 * // [{ id: "bot", lock: "aaa", server: "bbb" }]
 * ```
 */
export function productionDifferences(
  lock: ReadonlyMap<string, string | null>,
  server: Iterable<Pick<PromptListItem, "id" | "production_version"> & { labels?: Record<string, string> }>,
  label = "production",
): ProductionDifference[] {
  const remote = new Map<string, string | null>();
  for (const prompt of server) {
    remote.set(prompt.id, label === "production" ? prompt.production_version : (prompt.labels?.[label] ?? null));
  }
  const differences: ProductionDifference[] = [];
  for (const id of [...new Set([...lock.keys(), ...remote.keys()])].sort()) {
    const locked = lock.has(id) ? lock.get(id) : undefined;
    const served = remote.has(id) ? remote.get(id) : undefined;
    if (locked !== served) {
      differences.push(
        label === "production" ? { id, lock: locked, server: served } : { id, lock: locked, server: served, label },
      );
    }
  }
  return differences;
}

/**
 * How many characters of a hash are shown: core's SHORT_HASH_LENGTH, which the client may not import; a copy
 * pinned by test/check.test.ts.
 */
export const SHORT_HASH_LENGTH = 12;

/** One line per difference, hashes shortened as everywhere else. */
export function describeProductionDifferences(differences: readonly ProductionDifference[]): string {
  const name = (hash: string | null | undefined, where: string) =>
    hash === undefined ? `not in ${where}` : hash === null ? "unpublished" : hash.slice(0, SHORT_HASH_LENGTH);
  return differences
    .map(
      (d) =>
        `${d.id}: ${d.label ?? "production"} on the server is ${name(d.server, "the server")}, the lockfile says ${name(d.lock, "the lockfile")}`,
    )
    .join("\n");
}
