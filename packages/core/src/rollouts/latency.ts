/**
 * An always-valid confidence sequence for a latency quantile, from a histogram of fixed buckets, and the
 * ratio of two arms' quantiles (docs/rollouts.md "Latency p95").
 *
 * For a continuous latency L and its p-quantile q, the number of outcomes at or below q after t outcomes is
 * Binomial(t, p) with p known (0.95), whatever the distribution. So the beta-binomial mixture of
 * `boundaries.ts` tests "x is the p-quantile" for any x, exactly, at every t at once; the x it does not reject
 * form an interval that holds q (Howard & Ramdas 2022 build their quantile confidence sequences this way). A
 * histogram gives the count at or below each bucket's upper bound only, so the interval is widened to bucket
 * bounds: its lower end is the highest bound whose count is rejected as too low (q lies above it), its upper
 * end the lowest bound whose count is rejected as too high (q lies below it). Widening keeps the guarantee.
 * Rejection is monotone on each side of t·p, because log M is convex in the count and at most 0 at t·p (a
 * mixture of likelihoods never beats the likelihood at the maximum).
 */
import { betaBinomialLog } from "./boundaries.js";

export interface QuantileInterval {
  /** Outcomes with a latency. */
  count: number;
  /** The quantile lies above this bound (0 when nothing is known). */
  lo: number;
  /** The quantile lies below this bound; null when it may be in the open last bucket or nothing is known. */
  hi: number | null;
  /** The histogram's quantile, interpolated in its bucket (geometrically when the bucket starts above 0). */
  estimate: number | null;
}

/**
 * `counts[i]` holds the latencies in (bounds[i − 1], bounds[i]] (the first from 0, the last, at
 * counts[bounds.length], above the last bound). `k` is the mixture's concentration.
 */
export function quantileInterval(
  counts: readonly number[],
  bounds: readonly number[],
  p: number,
  alpha: number,
  k: number,
): QuantileInterval {
  const t = counts.reduce((a, b) => a + b, 0);
  const threshold = Math.log(1 / alpha);
  let lo = 0;
  let hi: number | null = null;
  let below = 0;
  for (let i = 0; i < bounds.length; i++) {
    below += counts[i] ?? 0;
    if (t === 0) break;
    const rejected = betaBinomialLog(below, t, p, k) >= threshold;
    if (below < t * p) {
      if (rejected) lo = bounds[i]!;
    } else if (below > t * p && rejected) {
      hi = bounds[i]!;
      break;
    }
  }
  return { count: t, lo, hi, estimate: histogramQuantile(counts, bounds, p) };
}

export function histogramQuantile(counts: readonly number[], bounds: readonly number[], p: number): number | null {
  const t = counts.reduce((a, b) => a + b, 0);
  if (t === 0) return null;
  const rank = p * t;
  let below = 0;
  for (let i = 0; i < bounds.length; i++) {
    const inBucket = counts[i] ?? 0;
    if (below + inBucket >= rank && inBucket > 0) {
      const upper = bounds[i]!;
      const lower = i === 0 ? 0 : bounds[i - 1]!;
      const share = (rank - below) / inBucket;
      return lower > 0 ? lower * (upper / lower) ** share : upper * share;
    }
    below += inBucket;
  }
  return null;
}

/** Adds histograms bucket by bucket. */
export function addHistograms(histograms: readonly (readonly number[])[], buckets: number): number[] {
  const sum = new Array<number>(buckets).fill(0);
  for (const histogram of histograms) {
    for (let i = 0; i < buckets; i++) sum[i]! += histogram[i] ?? 0;
  }
  return sum;
}
