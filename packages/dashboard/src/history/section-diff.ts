/**
 * Which sections of two versions are the same section, and what happened to each: the logic of the
 * History diff, kept pure (no React, no jsdiff) so it is unit-tested with exact results.
 *
 * Sections are matched by title, in order of occurrence: the second "Examples" of one version is the
 * second "Examples" of the other. A renamed section is therefore reported as removed and added.
 */

export interface DiffSection {
  title: string;
  content: string;
  enabled: boolean;
}

export type SectionStatus = "unchanged" | "changed" | "moved" | "added" | "removed";

export interface SectionChange {
  /** removed / added; else moved when its place among the others changed; else changed; else unchanged. */
  status: SectionStatus;
  title: string;
  before: DiffSection | null;
  after: DiffSection | null;
  fromIndex: number | null;
  toIndex: number | null;
  moved: boolean;
  contentChanged: boolean;
  enabledChanged: boolean;
}

/**
 * The indices (into `seq`) of a longest strictly increasing subsequence: the sections that kept their
 * order. Of several, the one whose elements travelled least (`distance`), so the section a person moved
 * far is the one reported as moved; then the one that keeps later elements, so when two neighbours swap
 * the one that went up is reported, which is what "Move up" did.
 */
export function stableIndices(seq: readonly number[], distance: readonly number[] = []): Set<number> {
  const n = seq.length;
  const length = new Array<number>(n).fill(1);
  const cost = seq.map((_, i) => distance[i] ?? 0);
  const next = new Array<number>(n).fill(-1);
  const better = (len: number, c: number, bestLen: number, bestCost: number) =>
    len > bestLen || (len === bestLen && c <= bestCost);
  for (let i = n - 1; i >= 0; i--) {
    const own = distance[i] ?? 0;
    for (let j = i + 1; j < n; j++) {
      if ((seq[j] as number) <= (seq[i] as number)) continue;
      const len = (length[j] as number) + 1;
      const c = (cost[j] as number) + own;
      if (better(len, c, length[i] as number, cost[i] as number)) {
        length[i] = len;
        cost[i] = c;
        next[i] = j;
      }
    }
  }
  let current = -1;
  for (let i = 0; i < n; i++) {
    if (
      current === -1 ||
      better(length[i] as number, cost[i] as number, length[current] as number, cost[current] as number)
    ) {
      current = i;
    }
  }
  const kept = new Set<number>();
  while (current !== -1) {
    kept.add(current);
    current = next[current] as number;
  }
  return kept;
}

/**
 * Every section of both versions once, in reading order of `to`; a removed section appears where it
 * stood among the sections that kept their place, before what was added in the same gap.
 */
export function diffSections(from: readonly DiffSection[], to: readonly DiffSection[]): SectionChange[] {
  // The k-th occurrence of a title in `to` matches the k-th in `from`.
  const queues = new Map<string, number[]>();
  from.forEach((section, i) => {
    const queue = queues.get(section.title) ?? [];
    queue.push(i);
    queues.set(section.title, queue);
  });
  const matchOf: (number | null)[] = to.map((section) => queues.get(section.title)?.shift() ?? null);
  const matchedFrom = new Set(matchOf.filter((i): i is number => i !== null));

  const pairs = matchOf.flatMap((fromIndex, toIndex) => (fromIndex === null ? [] : [{ fromIndex, toIndex }]));
  const keptPairs = stableIndices(
    pairs.map((p) => p.fromIndex),
    pairs.map((p) => Math.abs(p.fromIndex - p.toIndex)),
  );
  const stable = new Set([...keptPairs].map((k) => (pairs[k] as { toIndex: number }).toIndex));

  const removed = from.map((_, i) => i).filter((i) => !matchedFrom.has(i));
  const changes: SectionChange[] = [];
  const flushRemovedBefore = (limit: number) => {
    while (removed.length > 0 && (removed[0] as number) < limit) {
      const i = removed.shift() as number;
      const before = from[i] as DiffSection;
      changes.push({
        status: "removed",
        title: before.title,
        before,
        after: null,
        fromIndex: i,
        toIndex: null,
        moved: false,
        contentChanged: false,
        enabledChanged: false,
      });
    }
  };
  const nextAnchor = (toIndex: number): number => {
    for (let j = toIndex; j < to.length; j++) if (stable.has(j)) return matchOf[j] as number;
    return Number.POSITIVE_INFINITY;
  };

  to.forEach((after, toIndex) => {
    flushRemovedBefore(nextAnchor(toIndex));
    const fromIndex = matchOf[toIndex] as number | null;
    if (fromIndex === null) {
      changes.push({
        status: "added",
        title: after.title,
        before: null,
        after,
        fromIndex: null,
        toIndex,
        moved: false,
        contentChanged: false,
        enabledChanged: false,
      });
      return;
    }
    const before = from[fromIndex] as DiffSection;
    const moved = !stable.has(toIndex);
    const contentChanged = before.content !== after.content;
    const enabledChanged = before.enabled !== after.enabled;
    changes.push({
      status: moved ? "moved" : contentChanged || enabledChanged ? "changed" : "unchanged",
      title: after.title,
      before,
      after,
      fromIndex,
      toIndex,
      moved,
      contentChanged,
      enabledChanged,
    });
  });
  flushRemovedBefore(Number.POSITIVE_INFINITY);
  return changes;
}

export interface DiffTool {
  function: { name: string };
}

export interface ToolChange {
  status: "unchanged" | "changed" | "added" | "removed";
  name: string;
  /** Pretty JSON with sorted keys, so two equal tools print alike whatever order their keys came in. */
  before: string | null;
  after: string | null;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export const prettyJson = (value: unknown): string => JSON.stringify(sortKeys(value), null, 2);

/** Tools matched by function name: those of `to` in their order, then the removed ones. */
export function diffTools(from: readonly DiffTool[], to: readonly DiffTool[]): ToolChange[] {
  const before = new Map(from.map((tool) => [tool.function.name, prettyJson(tool)]));
  const changes: ToolChange[] = to.map((tool) => {
    const name = tool.function.name;
    const after = prettyJson(tool);
    const old = before.get(name);
    if (old === undefined) return { status: "added", name, before: null, after };
    return { status: old === after ? "unchanged" : "changed", name, before: old, after };
  });
  const names = new Set(to.map((tool) => tool.function.name));
  for (const tool of from) {
    if (!names.has(tool.function.name)) {
      changes.push({ status: "removed", name: tool.function.name, before: prettyJson(tool), after: null });
    }
  }
  return changes;
}

export function countByStatus<S extends string>(changes: readonly { status: S }[]): Partial<Record<S, number>> {
  const counts: Partial<Record<S, number>> = {};
  for (const change of changes) counts[change.status] = (counts[change.status] ?? 0) + 1;
  return counts;
}

/** The model settings of two versions, as pretty JSON; null when neither has any. */
export interface ModelChange {
  status: "changed" | "added" | "removed" | "unchanged";
  /** The model's name after (else before): what the change is titled by. */
  name: string;
  before: string | null;
  after: string | null;
}

export function diffModel(from: { name: string } | undefined, to: { name: string } | undefined): ModelChange | null {
  if (from === undefined && to === undefined) return null;
  const before = from === undefined ? null : prettyJson(from);
  const after = to === undefined ? null : prettyJson(to);
  const name = (to ?? from)?.name ?? "";
  const status = before === null ? "added" : after === null ? "removed" : before === after ? "unchanged" : "changed";
  return { status, name, before, after };
}
