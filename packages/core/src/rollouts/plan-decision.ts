/**
 * A plan's decision on its current step (docs/rollouts.md "Plans"), from the outcomes of both arms since the
 * plan started. Pure: the server's plan runner reads the rows, attributes them to steps and asks here.
 *
 * - The steps are the strata of the guardrail statistics: a row (a minute of one arm) belongs to the step in
 *   force when its minute started; rows from before the plan's start count for nothing.
 * - Abort as soon as a guardrail is breached. Advance only once the step's minimum duration has passed and its
 *   candidate outcomes reached its minimum, and every guardrail holds: outcomes never shorten a step nor skip
 *   one. Advancing from the last step, or into a step at 100, completes the plan.
 */
import {
  type ArmTotals,
  evaluateGuardrails,
  type GuardrailOptions,
  type GuardrailResult,
  type GuardrailThresholds,
  type StepTotals,
  stepVerdict,
} from "./guardrails.js";
import type { PlanStep } from "./plans.js";

export type PlanVerdict = "abort" | "advance" | "complete" | "wait";

export interface PlanDecision {
  verdict: PlanVerdict;
  /** The step decided on (0-based). */
  step: number;
  /** The percent after the decision: the next step's on an advance, 100 on completion, 0 on an abort. */
  percent: number;
  results: GuardrailResult[];
  minimums: {
    elapsed_seconds: number;
    min_duration_seconds: number;
    candidate_outcomes: number;
    min_outcomes: number;
    met: boolean;
  };
}

/** One minute row of one arm, at its minute's start (ms). */
export interface ArmRow {
  atMs: number;
  arm: "candidate" | "current";
  totals: ArmTotals;
}

const emptyArm = (): ArmTotals => ({ count: 0, ok: 0, score_count: 0, score_sum: 0, score_sum_sq: 0 });

function addArm(into: ArmTotals, row: ArmTotals): void {
  into.count += row.count;
  into.ok += row.ok;
  into.score_count += row.score_count;
  into.score_sum += row.score_sum;
  into.score_sum_sq = (into.score_sum_sq ?? 0) + (row.score_sum_sq ?? 0);
  if (row.latency) {
    const sum = [...(into.latency ?? [])];
    row.latency.forEach((count, i) => {
      sum[i] = (sum[i] ?? 0) + count;
    });
    into.latency = sum;
  }
}

/**
 * The rows summed per step: `stepStarts[i]` is when step i started (ascending; the first is the plan's start).
 * A row belongs to the last step that started at or before its minute's start.
 */
export function strataOf(stepStarts: readonly number[], rows: readonly ArmRow[]): StepTotals[] {
  const strata = stepStarts.map(() => ({ current: emptyArm(), candidate: emptyArm() }));
  for (const row of rows) {
    let step = -1;
    for (let i = 0; i < stepStarts.length; i++) if ((stepStarts[i] as number) <= row.atMs) step = i;
    const stratum = strata[step];
    if (stratum) addArm(stratum[row.arm], row.totals);
  }
  return strata;
}

/** The decision on step `step` (0-based), started at `stepStartedMs`, as of `nowMs`. */
export function decidePlan(
  plan: { steps: readonly PlanStep[]; guardrails: GuardrailThresholds },
  step: number,
  stepStartedMs: number,
  nowMs: number,
  strata: readonly StepTotals[],
  options: GuardrailOptions = {},
): PlanDecision {
  const here = plan.steps[step];
  if (!here) throw new RangeError(`the plan has no step ${step}`);
  const results = evaluateGuardrails(strata, plan.guardrails, options);
  const elapsed = Math.max(0, Math.floor((nowMs - stepStartedMs) / 1000));
  const candidateOutcomes = strata[step]?.candidate.count ?? 0;
  const minOutcomes = here.min_outcomes ?? 0;
  const met = elapsed >= here.min_duration_seconds && candidateOutcomes >= minOutcomes;
  const verdict = stepVerdict(results, met);
  const next = plan.steps[step + 1];
  let decided: PlanVerdict = verdict;
  let percent = here.percent;
  if (verdict === "abort") percent = 0;
  else if (verdict === "advance") {
    if (!next || next.percent === 100) {
      decided = "complete";
      percent = 100;
    } else percent = next.percent;
  }
  return {
    verdict: decided,
    step,
    percent,
    results,
    minimums: {
      elapsed_seconds: elapsed,
      min_duration_seconds: here.min_duration_seconds,
      candidate_outcomes: candidateOutcomes,
      min_outcomes: minOutcomes,
      met,
    },
  };
}
