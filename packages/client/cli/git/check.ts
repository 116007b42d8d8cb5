import { type ProductionDifference, productionDifferences } from "../../src/index.js";
import { connect, type RemoteOptions, remotePrompts, talking } from "./connection.js";
import { checkDatasets, type DatasetDifference } from "./datasets.js";
import { readLock } from "./lockfile.js";
import { type IncludeDifference, includeDifferences } from "./pins.js";

export type CheckDifference = ProductionDifference;
// The rule has one home, in the client, which also ships it as `promptstore-check` for an application's CI.
export { describeProductionDifferences as describeCheck } from "../../src/index.js";

/**
 * Whether what the server serves as production is exactly what the lockfile says, for every prompt on
 * either side. A prompt on the server that the lockfile does not know counts as a difference too: CI
 * guards everything production serves. When the lockfile records datasets, their heads are compared too.
 */
export async function check(
  dir: string,
  options: RemoteOptions & { includes?: boolean },
  label = "production",
): Promise<{
  differences: CheckDifference[];
  datasets: DatasetDifference[] | undefined;
  /** With `includes` only: the lockfile's pins behind the pointers they follow (docs/includes.md). */
  includes?: IncludeDifference[];
}> {
  const lock = await readLock(dir);
  const remote = await talking(() => remotePrompts(connect(options)));
  const locked = new Map(
    [...lock].map(
      ([id, entry]) => [id, label === "production" ? entry.production : (entry.labels?.[label] ?? null)] as const,
    ),
  );
  // Datasets have no labels: their heads are compared whatever label is checked.
  return {
    differences: productionDifferences(locked, remote.values(), label),
    datasets: await checkDatasets(lock, options),
    ...(options.includes ? { includes: includeDifferences(lock, remote) } : {}),
  };
}
