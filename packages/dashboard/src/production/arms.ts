/**
 * A rollout's two arms side by side: the candidate's ok rate minus the current version's, with the always-valid
 * 95% interval of core's guardrail statistics (`evaluateGuardrails`, docs/rollouts.md), so the dashboard shows
 * the numbers the server decides with. The range's totals are taken as one step: the view does not know the
 * plan's steps, and within a range of a single share that is what the server sums too.
 */
import type { OutcomeNumbers } from "@promptstore/core/outcomes";
import { type ArmTotals, evaluateGuardrails, GUARDRAIL_ALPHA } from "@promptstore/core/rollouts/guardrails";
import type { OutcomesView } from "../api/outcome-queries";

/** The margin the interval is tuned for when no plan names one: a 5-point drop (the regression). */
export const DEFAULT_OK_RATE_MARGIN = 0.05;

export interface ArmPair {
  label: string;
  current: { version: string; totals: OutcomeNumbers };
  candidate: { version: string; totals: OutcomeNumbers };
  /** candidate − current ok rate; null before both arms have an outcome. */
  difference: number | null;
  interval: [number, number] | null;
  /** The level the interval holds at, every time at once (0.95). */
  level: number;
}

const armTotals = (n: OutcomeNumbers): ArmTotals => ({
  count: n.count,
  ok: n.ok,
  score_count: n.score_count,
  score_sum: (n.score_mean ?? 0) * n.score_count,
});

/** Per label with both arms in a `by=arm` answer, the arms (the busiest current and candidate) and their difference. */
export function armPairs(view: OutcomesView, margin = DEFAULT_OK_RATE_MARGIN): ArmPair[] {
  const labels = new Map<
    string,
    { current?: OutcomesView["series"][number]; candidate?: OutcomesView["series"][number] }
  >();
  for (const series of view.series) {
    if (series.label === null || series.arm === null) continue;
    const entry = labels.get(series.label) ?? {};
    // most outcomes first: the first of each arm is the one the rollout serves
    if (!entry[series.arm]) entry[series.arm] = series;
    labels.set(series.label, entry);
  }
  const pairs: ArmPair[] = [];
  for (const [label, { current, candidate }] of labels) {
    if (!current || !candidate) continue;
    const [result] = evaluateGuardrails(
      [{ current: armTotals(current.totals), candidate: armTotals(candidate.totals) }],
      { ok_rate_drop: margin },
    );
    pairs.push({
      label,
      current: { version: current.version, totals: current.totals },
      candidate: { version: candidate.version, totals: candidate.totals },
      difference: result?.estimate ?? null,
      interval: result?.interval && result.interval[1] !== null ? [result.interval[0], result.interval[1]] : null,
      level: 1 - GUARDRAIL_ALPHA,
    });
  }
  return pairs;
}
