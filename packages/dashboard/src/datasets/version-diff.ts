/**
 * What changed between two versions of a dataset, by case id. A case's id is the hash of its content, so a case
 * edited between the versions is a case removed and a case added: the diff says so, as the issue asks (there is
 * nothing else that ties the two together). Case ids are unique within a version (the server refuses a repeat).
 * Pure, so it is unit-tested.
 */

export interface CaseRef {
  id: string;
  position: number;
}

export interface VersionDiff {
  /** In the newer version only, in its order. */
  added: CaseRef[];
  /** In the older version only, in its order. */
  removed: CaseRef[];
  /** In both. */
  kept: number;
  /** The cases in both are in another order. */
  reordered: boolean;
}

export function diffVersions(from: readonly CaseRef[], to: readonly CaseRef[]): VersionDiff {
  const inTo = new Set(to.map((c) => c.id));
  const inFrom = new Set(from.map((c) => c.id));
  const removed = from.filter((c) => !inTo.has(c.id));
  const added = to.filter((c) => !inFrom.has(c.id));
  const keptFrom = from.filter((c) => inTo.has(c.id)).map((c) => c.id);
  const keptTo = to.filter((c) => inFrom.has(c.id)).map((c) => c.id);
  const reordered = keptFrom.some((id, i) => keptTo[i] !== id);
  return { added, removed, kept: keptFrom.length, reordered };
}

/** "3 added, 1 removed, 120 unchanged" (the parts that are not zero; "no difference" when nothing changed). */
export function diffSummary(diff: VersionDiff): string {
  const parts = [
    diff.added.length > 0 ? `${diff.added.length} added` : null,
    diff.removed.length > 0 ? `${diff.removed.length} removed` : null,
    `${diff.kept} unchanged`,
  ].filter((p): p is string => p !== null);
  if (diff.added.length === 0 && diff.removed.length === 0) {
    return diff.reordered ? `the same ${diff.kept} cases, in another order` : "no difference";
  }
  return `${parts.join(", ")}${diff.reordered ? " (and reordered)" : ""}`;
}
