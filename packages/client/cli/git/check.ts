import { type ProductionDifference, productionDifferences } from "../../src/index.js";
import { connect, type RemoteOptions, remotePrompts, talking } from "./connection.js";
import { readLock } from "./lockfile.js";

export type CheckDifference = ProductionDifference;
// The rule has one home, in the client, which also ships it as `promptstore-check` for an application's CI.
export { describeProductionDifferences as describeCheck } from "../../src/index.js";

/**
 * Whether what the server serves as production is exactly what the lockfile says, for every prompt on
 * either side. A prompt on the server that the lockfile does not know counts as a difference too: CI
 * guards everything production serves.
 */
export async function check(dir: string, options: RemoteOptions, label = "production"): Promise<CheckDifference[]> {
  const lock = await readLock(dir);
  const remote = await talking(() => remotePrompts(connect(options)));
  const locked = new Map(
    [...lock].map(
      ([id, entry]) => [id, label === "production" ? entry.production : (entry.labels?.[label] ?? null)] as const,
    ),
  );
  return productionDifferences(locked, remote.values(), label);
}
