/**
 * An always-valid confidence sequence for the difference of two means (candidate − current), from the
 * per-step totals the server keeps: the ok rate (a mean of 0s and 1s) and the mean score (in [0, 1]).
 *
 * The steps of a rollout are strata: within a step the candidate's share is constant, so both arms see the
 * same hours of the day; across steps it changes, and a plain difference of the two arms' totals would mix a
 * change of share with a drift of the metric over time. Each step k gives θ̂_k = mean_c − mean_b with variance
 * V_k = σ_c²/n_c + σ_b²/n_b and information I_k = 1/V_k; the steps are pooled by information:
 *   I = Σ I_k,  θ̂ = Σ I_k θ̂_k / I,  S = I(θ̂ − θ).
 * For nested samples Cov(θ̂_j, θ̂_k) = Var(θ̂_k) (later k), whatever the allocation, so S is asymptotically a
 * Brownian motion in I (the "canonical joint distribution" of group-sequential analysis, Jennison &
 * Turnbull 2000, ch. 3), and the normal-mixture boundary of `boundaries.ts` gives
 *   θ ∈ (θ̂ − f(I)/I, θ̂ + f(I)/I) at every time at once, with probability ≥ 1 − α (asymptotically).
 * The variances are plug-in (Waudby-Smith et al. 2024): each arm's, over the whole rollout, with one
 * pseudo-outcome of 0 and one of 1 added, which keeps a small arm that has seen no failure from claiming a
 * variance of 0. Without a sum of squares (scores) the variance is bounded by μ(1 − μ), which holds for any
 * variable in [0, 1] (Bhatia & Davis 2000): valid, but wider than the real variance.
 */
import { bestRho, mixtureWidthAtTuning, normalMixtureBoundary, normalQuantile } from "./boundaries.js";

/** n values, their sum, and (when kept) the sum of their squares. Values lie in [0, 1]. */
export interface MeanTotals {
  count: number;
  sum: number;
  sum_sq?: number | undefined;
}

export interface MeanStep {
  current: MeanTotals;
  candidate: MeanTotals;
}

export interface MeanInterval {
  /** Pooled over the steps: candidate − current. null before both arms have an outcome in one step. */
  estimate: number | null;
  /** Always valid at 1 − alpha, open at both ends. */
  interval: [number, number] | null;
  /** Σ I_k, in 1/(unit²): 1/information is the estimate's variance. */
  information: number;
  candidate: { count: number; mean: number | null };
  current: { count: number; mean: number | null };
}

function total(parts: MeanTotals[]): MeanTotals {
  let count = 0;
  let sum = 0;
  let sumSq: number | undefined = 0;
  for (const part of parts) {
    count += part.count;
    sum += part.sum;
    sumSq = sumSq === undefined || part.sum_sq === undefined ? undefined : sumSq + part.sum_sq;
  }
  return { count, sum, sum_sq: sumSq };
}

/**
 * One arm's variance per outcome, with a pseudo-outcome of 0 and one of 1 added: the sample variance when
 * the sum of squares is known, else the bound μ(1 − μ).
 */
export function armVariance(arm: MeanTotals): number {
  const n = arm.count + 2;
  const sum = arm.sum + 1;
  const mean = sum / n;
  if (arm.sum_sq === undefined) return mean * (1 - mean);
  const squares = arm.sum_sq + 1;
  return Math.max(0, (squares - (sum * sum) / n) / (n - 1));
}

const tunings = new Map<string, number>();

/** The information at which a guardrail of this margin is tuned: ((c_α + z_power) / margin)². */
export function tuningInformation(margin: number, alpha: number, power: number): number {
  const key = `${margin} ${alpha} ${power}`;
  let information = tunings.get(key);
  if (information === undefined) {
    const scale = (mixtureWidthAtTuning(alpha) + normalQuantile(power)) / margin;
    information = scale * scale;
    // a plan names a handful of margins; the bound only keeps a caller that varies them from growing it
    if (tunings.size >= 1000) tunings.clear();
    tunings.set(key, information);
  }
  return information;
}

/** The confidence sequence's radius f(I)/I at information I, tuned for `margin`. */
export function meanRadius(information: number, margin: number, alpha: number, power: number): number {
  const rho = bestRho(tuningInformation(margin, alpha, power), alpha);
  return normalMixtureBoundary(information, rho, alpha) / information;
}

export function meanInterval(
  steps: MeanStep[],
  options: { margin: number; alpha: number; power: number },
): MeanInterval {
  const current = total(steps.map((s) => s.current));
  const candidate = total(steps.map((s) => s.candidate));
  const varianceC = armVariance(candidate);
  const varianceB = armVariance(current);
  let information = 0;
  let score = 0;
  for (const step of steps) {
    if (step.candidate.count <= 0 || step.current.count <= 0) continue;
    const variance = varianceC / step.candidate.count + varianceB / step.current.count;
    const difference = step.candidate.sum / step.candidate.count - step.current.sum / step.current.count;
    information += 1 / variance;
    score += difference / variance;
  }
  const means = {
    candidate: { count: candidate.count, mean: candidate.count > 0 ? candidate.sum / candidate.count : null },
    current: { count: current.count, mean: current.count > 0 ? current.sum / current.count : null },
  };
  if (information === 0) return { estimate: null, interval: null, information, ...means };
  const estimate = score / information;
  const radius = meanRadius(information, options.margin, options.alpha, options.power);
  return { estimate, interval: [estimate - radius, estimate + radius], information, ...means };
}
