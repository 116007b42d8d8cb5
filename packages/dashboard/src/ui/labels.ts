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

/** The label names used by any of these prompts, production left out (it has its own column), in order. */
export function labelsInUse(prompts: readonly { labels?: Record<string, string> }[]): string[] {
  const names = new Set<string>();
  for (const prompt of prompts) for (const name of Object.keys(prompt.labels ?? {})) names.add(name);
  names.delete(PRODUCTION);
  return [...names].sort(byLabelOrder);
}

/** A prompt's labels as [name, hash] pairs, production first. */
export function labelEntries(labels: Record<string, string> | undefined): [string, string][] {
  return Object.entries(labels ?? {}).sort(([a], [b]) => byLabelOrder(a, b));
}
