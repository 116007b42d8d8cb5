/**
 * A rollout's evidence (docs/rollouts.md "Plans"): the outcome rows of its two arms since a time, as the
 * plan's decision (`@promptstore/core/rollouts/plan-decision`) takes them. The candidate arm is the
 * candidate version read as the rollout's candidate; the current arm is the label's version read as its
 * current arm. Other series of the label (reads by an old version, outcomes without an arm) are not evidence.
 */
import type { ArmTotals } from "@promptstore/core/rollouts/guardrails";
import type { ArmRow } from "@promptstore/core/rollouts/plan-decision";
import type { OutcomeReads } from "../../store/outcomes/outcome-reads.js";
import { BUCKETS_PER_DOUBLING } from "./latency-histogram.js";

/** The stored histogram's buckets below an hour and a bit (bucket 175 holds an hour): 0 to 175. */
const LAST_BOUNDED_BUCKET = 175;

/**
 * The stored histogram's bucket upper bounds in ms, as the guardrail statistics take them: bucket b ends at
 * 2^(b/8) ms. A latency beyond the last bound falls in the one bucket above them.
 */
export const LATENCY_BOUNDS_MS: readonly number[] = Array.from(
  { length: LAST_BOUNDED_BUCKET + 1 },
  (_, b) => 2 ** (b / BUCKETS_PER_DOUBLING),
);

export interface EvidenceQuery {
  projectId: string;
  promptId: string;
  label: string;
  /** The label's version: the current arm's. */
  current: string;
  /** The rollout's candidate. */
  candidate: string;
  /** Rows whose step starts in [fromMs, toMs). */
  fromMs: number;
  toMs: number;
}

/** Each arm's rows (a minute, or an hour once compacted) of the rollout in the window, in time order. */
export async function rolloutEvidence(reads: OutcomeReads, query: EvidenceQuery): Promise<ArmRow[]> {
  const armOf = new Map<string, "candidate" | "current">();
  for (const s of await reads.series(query.projectId, query.promptId, query.label)) {
    if (s.arm === "candidate" && s.version === query.candidate) armOf.set(s.id, "candidate");
    else if (s.arm === "current" && s.version === query.current) armOf.set(s.id, "current");
  }
  if (armOf.size === 0) return [];
  const ids = [...armOf.keys()];
  const from = new Date(query.fromMs).toISOString();
  const to = new Date(query.toMs).toISOString();
  const rows = new Map<string, ArmRow>();
  const rowOf = (seriesId: string, at: string): ArmRow => {
    const arm = armOf.get(seriesId) as "candidate" | "current";
    const key = `${arm}|${at}`;
    let row = rows.get(key);
    if (!row) {
      const totals: ArmTotals = { count: 0, ok: 0, score_count: 0, score_sum: 0, score_sum_sq: 0, latency: [] };
      row = { atMs: Date.parse(at), arm, totals };
      rows.set(key, row);
    }
    return row;
  };
  for (const c of await reads.counts(ids, from, to, false)) {
    const { totals } = rowOf(c.seriesId, c.at);
    totals.count += c.count;
    totals.ok += c.ok;
    totals.score_count += c.scoreCount;
    totals.score_sum += c.scoreSum;
    totals.score_sum_sq = (totals.score_sum_sq ?? 0) + c.scoreSumSq;
  }
  for (const l of await reads.latency(ids, from, to, false)) {
    const latency = rowOf(l.seriesId, l.at).totals.latency as number[];
    const index = Math.min(Math.max(0, l.bucket), LAST_BOUNDED_BUCKET + 1);
    while (latency.length <= LAST_BOUNDED_BUCKET + 1) latency.push(0);
    latency[index] = (latency[index] ?? 0) + l.count;
  }
  return [...rows.values()].sort((a, b) => a.atMs - b.atMs || (a.arm < b.arm ? -1 : a.arm > b.arm ? 1 : 0));
}
