/**
 * Labels (environments) in the order every screen shows them: production first, then the others by name.
 * Pure, so it is unit-tested; the badge is LabelBadge.tsx.
 */
import { PRODUCTION } from "@promptstore/core/labels";

/** Production first, then the others alphabetically. */
export function byLabelOrder(a: string, b: string): number {
  if (a === b) return 0;
  if (a === PRODUCTION) return -1;
  if (b === PRODUCTION) return 1;
  return a.localeCompare(b);
}

/** The list's label columns: the names in use in the project, production left out (it has its own), in order. */
export function labelColumns(namesInUse: readonly string[]): string[] {
  return namesInUse.filter((name) => name !== PRODUCTION).sort(byLabelOrder);
}

/** A prompt's labels as [name, hash] pairs, production first. */
export function labelEntries(labels: Record<string, string> | undefined): [string, string][] {
  return Object.entries(labels ?? {}).sort(([a], [b]) => byLabelOrder(a, b));
}
