/**
 * How many outcomes a step needs so that its guardrails decide (docs/rollouts.md "How many outcomes"), for
 * the ok rate and the mean score. A guardrail of margin X, tuned as `means.ts` tunes it, decides at
 * information I once the interval's radius plus z_power standard errors fits in the distance between the
 * truth and −X:
 *   - an equal candidate (difference 0) holds by then with probability ≥ power (distance X);
 *   - a candidate worse by δ is breached by then with probability ≥ power (distance δ − X).
 * By default δ = 2X, where both distances are X: a plan that must catch a regression of δ sets X = δ/2.
 * The probabilities are of the estimate at I alone; the sequence may decide earlier, never later, so they
 * are lower bounds (up to the normal approximation, which the simulation in the tests measures).
 * Outcomes: I = n_c / (σ_c² + σ_b² · s/(1 − s)) when the candidate gets a share s of the outcomes.
 */

import { normalQuantile } from "./boundaries.js";
import { GUARDRAIL_ALPHA, GUARDRAIL_POWER } from "./guardrails.js";
import { meanRadius } from "./means.js";

export interface OutcomesNeeded {
  /** Candidate outcomes the step needs. */
  candidate: number;
  /** All outcomes of the prompt's label during the step (candidate and current), at the step's share. */
  total: number;
  /** The information I reached there. */
  information: number;
}

export interface PlanningInput {
  /** The guardrail's margin (X or Y). */
  margin: number;
  /** The regression to catch; 2 × margin by default. Must exceed the margin. */
  regression?: number | undefined;
  /** The candidate's share of the label's outcomes during the step, strictly between 0 and 1. */
  share: number;
  /** The family's alpha divided by the number of guardrails, as `evaluateGuardrails` divides it. */
  alpha?: number | undefined;
  power?: number | undefined;
}

/** The least information at which both decisions are made with the given power (bisection on log I). */
export function informationNeeded(input: Omit<PlanningInput, "share">): number {
  const alpha = input.alpha ?? GUARDRAIL_ALPHA;
  const power = input.power ?? GUARDRAIL_POWER;
  const regression = input.regression ?? 2 * input.margin;
  if (!(input.margin > 0) || !(regression > input.margin)) {
    throw new RangeError("planning needs 0 < margin < regression");
  }
  const distance = Math.min(input.margin, regression - input.margin);
  const z = normalQuantile(power);
  const fits = (information: number) =>
    meanRadius(information, input.margin, alpha, power) + z / Math.sqrt(information) <= distance;
  let lo = 1;
  let hi = 1;
  while (!fits(hi)) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-9 * hi; i++) {
    const mid = Math.sqrt(lo * hi);
    if (fits(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

function outcomes(information: number, candidateVariance: number, currentVariance: number, share: number) {
  if (!(share > 0 && share < 1)) throw new RangeError("the candidate's share must be strictly between 0 and 1");
  const candidate = Math.ceil(information * (candidateVariance + (currentVariance * share) / (1 - share)));
  return { candidate, total: Math.ceil(candidate / share), information };
}

/**
 * Outcomes an ok-rate guardrail needs, at a current ok rate `baseline`. The candidate's variance is the
 * larger of p(1 − p) and (p − δ)(1 − p + δ), so that both decisions have their power.
 */
export function okRateOutcomes(input: PlanningInput & { baseline: number }): OutcomesNeeded {
  const p = input.baseline;
  const worse = Math.max(0, p - (input.regression ?? 2 * input.margin));
  const information = informationNeeded(input);
  return outcomes(information, Math.max(p * (1 - p), worse * (1 - worse)), p * (1 - p), input.share);
}

/**
 * Outcomes a score guardrail needs, for scores of variance `variance` (from the current version's sum of
 * squares), or, without it, the bound mean(1 − mean) the guardrail then uses.
 */
export function scoreOutcomes(input: PlanningInput & { mean: number; variance?: number | undefined }): OutcomesNeeded {
  const variance = input.variance ?? input.mean * (1 - input.mean);
  return outcomes(informationNeeded(input), variance, variance, input.share);
}
