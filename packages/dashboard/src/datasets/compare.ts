/**
 * Reads two versions of a dataset to compare them by case id (version-diff.ts), a page at a time, keeping the
 * ids and only the first cases of each side that the diff shows: a dataset of 10 000 cases of 100 KB is never
 * held here. The cases removed are read in a last pass over the older version, once the newer one is known.
 */
import type { NormalCase } from "@promptstore/core/evaluations/cases";
import { fetchCases } from "../api/dataset-queries";
import { type CaseRef, diffVersions, type VersionDiff } from "./version-diff";

/** Cases of each side a comparison shows (the counts are of all). */
export const SHOWN_CASES = 50;

export interface Comparison {
  diff: VersionDiff;
  /** The bodies of the first SHOWN_CASES added and removed, by id. */
  bodies: Map<string, NormalCase>;
}

async function eachPage(
  projectId: string,
  id: string,
  version: string,
  signal: AbortSignal,
  take: (cases: { id: string; position: number; case: NormalCase }[]) => void,
) {
  let after = -1;
  for (;;) {
    const page = await fetchCases(projectId, id, version, after, 1000, signal);
    take(page.cases);
    if (page.next_after === null) return;
    after = page.next_after;
  }
}

export async function compareVersions(
  projectId: string,
  id: string,
  from: string,
  to: string,
  signal: AbortSignal,
  onRead: (cases: number) => void,
): Promise<Comparison> {
  let read = 0;
  const fromRefs: CaseRef[] = [];
  const toRefs: CaseRef[] = [];
  const bodies = new Map<string, NormalCase>();
  await eachPage(projectId, id, from, signal, (cases) => {
    for (const c of cases) fromRefs.push({ id: c.id, position: c.position });
    read += cases.length;
    onRead(read);
  });
  const inFrom = new Set(fromRefs.map((c) => c.id));
  let added = 0;
  await eachPage(projectId, id, to, signal, (cases) => {
    for (const c of cases) {
      toRefs.push({ id: c.id, position: c.position });
      if (!inFrom.has(c.id) && added++ < SHOWN_CASES) bodies.set(c.id, c.case);
    }
    read += cases.length;
    onRead(read);
  });
  const diff = diffVersions(fromRefs, toRefs);
  const wanted = new Set(diff.removed.slice(0, SHOWN_CASES).map((c) => c.id));
  if (wanted.size > 0) {
    await eachPage(projectId, id, from, signal, (cases) => {
      for (const c of cases) if (wanted.has(c.id)) bodies.set(c.id, c.case);
    });
  }
  return { diff, bodies };
}
