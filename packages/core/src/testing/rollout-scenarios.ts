/**
 * The scenarios behind docs/rollouts.md "Measured error rates": the tests run them with fewer rollouts, the
 * bench (packages/server/bench/guardrails.js) with more. Each names the claim it measures.
 */
import { GUARDRAIL_ALPHA } from "../rollouts/guardrails.js";
import { okRateOutcomes, scoreOutcomes } from "../rollouts/planning.js";
import { type ArmModel, logBuckets, type RolloutScenario } from "./rollout-simulation.js";

/** Scores 1, ½, 0 with probabilities 0.7, 0.2, 0.1: mean 0.8, variance 0.11. */
export const SCORES = { values: [1, 0.5, 0], probabilities: [0.7, 0.2, 0.1] } as const;
/** 5 points lower: 0.6, 0.3, 0.1: mean 0.75, variance 0.1125. */
export const SCORES_WORSE = { values: [1, 0.5, 0], probabilities: [0.6, 0.3, 0.1] } as const;
/** Bucket bounds 2^(i/8) ms (9.05% apart), 1 ms to 2^20 ms. */
export const LATENCY_BOUNDS = logBuckets(1, 2 ** (1 / 8), 161);

export const OK_DROP = 0.025;
export const SCORE_DROP = 0.025;
export const LATENCY_INCREASE = 0.3;
/** The latency-only plan's minimum outcomes per step: measured, not derived (docs/rollouts.md). */
export const LATENCY_OUTCOMES = 3000;

const current: ArmModel = { ok: 0.95, scores: SCORES };
const SHARES = [0.01, 0.05, 0.25, 0.5];

/** The ok-rate and score plan: both guardrails, α = 0.05 shared, each step needing `outcomes` candidates. */
export function okScorePlan() {
  const alpha = GUARDRAIL_ALPHA / 2;
  const ok = okRateOutcomes({ margin: OK_DROP, baseline: 0.95, share: SHARES[0]!, alpha }).candidate;
  const score = scoreOutcomes({ margin: SCORE_DROP, mean: 0.8, variance: 0.11, share: SHARES[0]!, alpha }).candidate;
  const outcomes = Math.max(ok, score);
  const scenario = (candidate: ArmModel, extra: Partial<RolloutScenario> = {}): RolloutScenario => ({
    shares: SHARES,
    minimumOutcomes: outcomes,
    perMinute: 1000,
    current,
    candidate,
    thresholds: { ok_rate_drop: OK_DROP, score_drop: SCORE_DROP },
    maxMinutesPerStep: 100_000,
    ...extra,
  });
  return {
    okOutcomes: ok,
    scoreOutcomes: score,
    outcomes,
    /** Nothing changed: every abort is false; the plan should complete. */
    equal: scenario(current),
    /** ok rate 0.95 → 0.90 (2X): caught within the step's outcomes. */
    okWorse: scenario({ ok: 0.9, scores: SCORES }, { stopAfterCandidateOutcomes: outcomes }),
    /** mean score 0.80 → 0.75 (2Y): caught within the step's outcomes. */
    scoreWorse: scenario({ ok: 0.95, scores: SCORES_WORSE }, { stopAfterCandidateOutcomes: outcomes }),
    /**
     * ok rate exactly X lower (0.925), a 50% step, watched for 3 × the outcomes: neither decision is right, so
     * every hold (a false advance) and every abort counts against the interval's level (α/2 each way).
     */
    okAtMargin: scenario(
      { ok: 0.925, scores: SCORES },
      { shares: [0.5], stopAfterCandidateOutcomes: 3 * outcomes, minimumOutcomes: 3 * outcomes },
    ),
  };
}

/** The latency-only plan: p95 at most 30% higher, log-normal latencies (median 800 ms, σ 0.5), 9% buckets. */
export function latencyPlan() {
  const base: ArmModel = { ok: 0.95, latency: { median: 800, sigma: 0.5 } };
  const scenario = (candidate: ArmModel, extra: Partial<RolloutScenario> = {}): RolloutScenario => ({
    shares: [0.05, 0.25, 0.5],
    minimumOutcomes: LATENCY_OUTCOMES,
    perMinute: 1000,
    current: base,
    candidate,
    thresholds: { latency_p95_increase: LATENCY_INCREASE },
    options: { latency_bounds: LATENCY_BOUNDS, latency_tuning_outcomes: LATENCY_OUTCOMES },
    maxMinutesPerStep: 100_000,
    ...extra,
  });
  const worse = (1 + LATENCY_INCREASE) ** 2;
  return {
    outcomes: LATENCY_OUTCOMES,
    equal: scenario(base),
    /** p95 × 1.69 (every latency × 1.69): caught within the step's outcomes. */
    worse: scenario(
      { ok: 0.95, latency: { median: 800 * worse, sigma: 0.5 } },
      { stopAfterCandidateOutcomes: LATENCY_OUTCOMES },
    ),
  };
}

/**
 * All three guardrails at once, steps 1% → 5% → 25% → 50%, α = 0.05 shared three ways; every outcome has a
 * latency. Nothing changed: the family's false aborts. (The bench only: 100 times the candidate's outcomes
 * are drawn with latencies.)
 */
export function allPlan() {
  const alpha = GUARDRAIL_ALPHA / 3;
  const ok = okRateOutcomes({ margin: OK_DROP, baseline: 0.95, share: SHARES[0]!, alpha }).candidate;
  const score = scoreOutcomes({ margin: SCORE_DROP, mean: 0.8, variance: 0.11, share: SHARES[0]!, alpha }).candidate;
  const outcomes = Math.max(ok, score, LATENCY_OUTCOMES);
  const arm: ArmModel = { ok: 0.95, scores: SCORES, latency: { median: 800, sigma: 0.5 } };
  const equal: RolloutScenario = {
    shares: SHARES,
    minimumOutcomes: outcomes,
    perMinute: 1000,
    current: arm,
    candidate: arm,
    thresholds: { ok_rate_drop: OK_DROP, score_drop: SCORE_DROP, latency_p95_increase: LATENCY_INCREASE },
    options: { latency_bounds: LATENCY_BOUNDS, latency_tuning_outcomes: outcomes },
    maxMinutesPerStep: 100_000,
  };
  return { outcomes, equal };
}
