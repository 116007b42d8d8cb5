/**
 * A guarded rollout's guardrails (issue 40, docs/rollouts.md "Guardrail statistics"): from the outcomes both
 * arms reported during the rollout, per guardrail an estimate, an always-valid interval and a decision, and
 * for the step a verdict. Pure: the server sums its per-minute rows per step and calls this.
 *
 * A guardrail is a statement about the candidate: its ok rate is not lower than the current version's by
 * more than X; its mean score not lower by more than Y; its latency p95 not higher by more than Z (relative).
 * Each is judged with an always-valid confidence sequence at level 1 − α/g (g guardrails, so that all of them
 * together err with probability at most α):
 *   - "breached": the interval lies wholly beyond the threshold: the candidate is worse than allowed;
 *   - "holds":    the interval lies wholly within it: the candidate is proven no worse than allowed;
 *   - "undecided": the interval straddles the threshold: not enough evidence either way yet.
 * The step aborts as soon as one guardrail is breached (at any time: an abort never waits), and advances
 * when its minimum duration and outcomes have passed and every guardrail holds; otherwise it waits.
 */
import { z } from "zod";
import { betaBinomialConcentration } from "./boundaries.js";
import { addHistograms, quantileInterval } from "./latency.js";
import { type MeanStep, type MeanTotals, meanInterval } from "./means.js";

export const GUARDRAIL_ALPHA = 0.05;
export const GUARDRAIL_POWER = 0.95;
/** The latency quantile a latency guardrail compares. */
export const LATENCY_QUANTILE = 0.95;
/** Candidate outcomes at which the latency mixture is tuned when the plan names none. */
export const LATENCY_TUNING_OUTCOMES = 5000;

const fraction = (max: number) => z.number().gt(0, "must be more than 0").max(max, `must be at most ${max}`);

/** What a plan says of its guardrails; each is optional, and at least one is named. */
export const guardrailThresholds = z
  .strictObject({
    ok_rate_drop: fraction(1)
      .optional()
      .describe("X: the candidate's ok rate may be lower by at most this (0.02 = 2 points)"),
    score_drop: fraction(1).optional().describe("Y: the candidate's mean score (0 to 1) may be lower by at most this"),
    latency_p95_increase: fraction(10)
      .optional()
      .describe("Z: the candidate's latency p95 may be higher by at most this share of the current one's (0.2 = 20%)"),
  })
  .refine((g) => Object.values(g).some((v) => v !== undefined), "name at least one guardrail")
  .describe("The guardrails every step is judged by; name at least one");
export type GuardrailThresholds = z.infer<typeof guardrailThresholds>;

/** One arm's outcomes in one step, as the server sums its per-minute rows. */
export interface ArmTotals {
  count: number;
  ok: number;
  score_count: number;
  score_sum: number;
  /** Σ score². Optional: without it the score's variance is bounded by μ(1 − μ), which needs more outcomes. */
  score_sum_sq?: number | undefined;
  /** Latency counts per bucket of `latency_bounds` (one more than the bounds: the last is above them). */
  latency?: readonly number[] | undefined;
}

/** A step of the rollout: the outcomes of both arms while the candidate's share was one value. */
export interface StepTotals {
  current: ArmTotals;
  candidate: ArmTotals;
}

export type GuardrailName = "ok_rate" | "score" | "latency_p95";
export type GuardrailDecision = "breached" | "holds" | "undecided";

export interface GuardrailResult {
  guardrail: GuardrailName;
  /** X, Y or Z as the plan gave it. */
  threshold: number;
  /**
   * candidate − current for ok_rate and score; candidate / current − 1 for latency_p95. The guardrail is
   * breached when the whole interval is below −threshold (ok_rate, score) or above +threshold (latency).
   */
  estimate: number | null;
  interval: [number, number | null] | null;
  decision: GuardrailDecision;
  /** The level the interval holds at, every time at once: 1 − alpha. */
  alpha: number;
  candidate: { count: number; value: number | null };
  current: { count: number; value: number | null };
}

export interface GuardrailOptions {
  /** All guardrails together falsely breach, or falsely hold, with probability at most this. */
  alpha?: number;
  /** The power the ok-rate and score sequences are tuned for (see `requiredOutcomes`). */
  power?: number;
  /** The latency histogram's bucket upper bounds in ms, ascending. */
  latency_bounds?: readonly number[];
  /** Candidate outcomes at which the latency mixture is tuned (a plan's minimum outcomes for its first step). */
  latency_tuning_outcomes?: number;
}

function meanDecision(interval: [number, number] | null, margin: number): GuardrailDecision {
  if (interval === null) return "undecided";
  if (interval[1] <= -margin) return "breached";
  if (interval[0] >= -margin) return "holds";
  return "undecided";
}

function meanGuardrail(
  guardrail: "ok_rate" | "score",
  steps: MeanStep[],
  margin: number,
  alpha: number,
  power: number,
): GuardrailResult {
  const result = meanInterval(steps, { margin, alpha, power });
  return {
    guardrail,
    threshold: margin,
    estimate: result.estimate,
    interval: result.interval,
    decision: meanDecision(result.interval, margin),
    alpha,
    candidate: { count: result.candidate.count, value: result.candidate.mean },
    current: { count: result.current.count, value: result.current.mean },
  };
}

function latencyGuardrail(
  steps: StepTotals[],
  increase: number,
  alpha: number,
  bounds: readonly number[],
  tuning: number,
): GuardrailResult {
  const buckets = bounds.length + 1;
  const candidate = addHistograms(
    steps.map((s) => s.candidate.latency ?? []),
    buckets,
  );
  const current = addHistograms(
    steps.map((s) => s.current.latency ?? []),
    buckets,
  );
  // Each arm's quantile at alpha/2, so that both hold together with probability at least 1 − alpha.
  const k = betaBinomialConcentration(tuning, alpha / 2);
  const c = quantileInterval(candidate, bounds, LATENCY_QUANTILE, alpha / 2, k);
  const b = quantileInterval(current, bounds, LATENCY_QUANTILE, alpha / 2, k);
  // q_c/q_b lies in (lo_c/hi_b, hi_c/lo_b): each end is known only when its bounds are.
  const lower = b.hi === null ? 0 : c.lo / b.hi;
  const upper = c.hi === null || b.lo === 0 ? null : c.hi / b.lo;
  const known = c.count > 0 && b.count > 0;
  let decision: GuardrailDecision = "undecided";
  if (known && lower - 1 >= increase) decision = "breached";
  else if (known && upper !== null && upper - 1 <= increase) decision = "holds";
  return {
    guardrail: "latency_p95",
    threshold: increase,
    estimate: c.estimate !== null && b.estimate !== null && b.estimate > 0 ? c.estimate / b.estimate - 1 : null,
    interval: known ? [lower - 1, upper === null ? null : upper - 1] : null,
    decision,
    alpha,
    candidate: { count: c.count, value: c.estimate },
    current: { count: b.count, value: b.estimate },
  };
}

const okTotals = (arm: ArmTotals): MeanTotals => ({ count: arm.count, sum: arm.ok, sum_sq: arm.ok });
const scoreTotals = (arm: ArmTotals): MeanTotals => ({
  count: arm.score_count,
  sum: arm.score_sum,
  sum_sq: arm.score_sum_sq,
});

/** Every guardrail the plan names, judged on the rollout's steps so far (in the order ok_rate, score, latency). */
export function evaluateGuardrails(
  steps: readonly StepTotals[],
  thresholds: GuardrailThresholds,
  options: GuardrailOptions = {},
): GuardrailResult[] {
  const named = [thresholds.ok_rate_drop, thresholds.score_drop, thresholds.latency_p95_increase].filter(
    (t) => t !== undefined,
  ).length;
  if (named === 0) return [];
  const alpha = (options.alpha ?? GUARDRAIL_ALPHA) / named;
  const power = options.power ?? GUARDRAIL_POWER;
  const results: GuardrailResult[] = [];
  if (thresholds.ok_rate_drop !== undefined) {
    const okSteps = steps.map((s) => ({ current: okTotals(s.current), candidate: okTotals(s.candidate) }));
    results.push(meanGuardrail("ok_rate", okSteps, thresholds.ok_rate_drop, alpha, power));
  }
  if (thresholds.score_drop !== undefined) {
    const scoreSteps = steps.map((s) => ({ current: scoreTotals(s.current), candidate: scoreTotals(s.candidate) }));
    results.push(meanGuardrail("score", scoreSteps, thresholds.score_drop, alpha, power));
  }
  if (thresholds.latency_p95_increase !== undefined) {
    if (!options.latency_bounds || options.latency_bounds.length === 0) {
      throw new TypeError("a latency guardrail needs the histogram's bucket bounds");
    }
    const tuning = options.latency_tuning_outcomes ?? LATENCY_TUNING_OUTCOMES;
    results.push(latencyGuardrail([...steps], thresholds.latency_p95_increase, alpha, options.latency_bounds, tuning));
  }
  return results;
}

export type StepVerdict = "abort" | "advance" | "wait";

/**
 * The step's verdict: abort as soon as any guardrail is breached (minimums or not); advance once the step's
 * minimum duration and outcomes have passed and every guardrail holds; otherwise wait.
 */
export function stepVerdict(results: readonly GuardrailResult[], minimumsMet: boolean): StepVerdict {
  if (results.some((r) => r.decision === "breached")) return "abort";
  if (minimumsMet && results.every((r) => r.decision === "holds")) return "advance";
  return "wait";
}
