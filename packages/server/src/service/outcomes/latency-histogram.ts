/**
 * The latency histogram outcomes are kept in (docs/outcomes.md, "Storage"): fixed log-scale buckets, eight per
 * doubling, the same on every instance and forever, so histograms of any minutes, instances and series add up
 * by adding counts. Bucket 0 holds [0, 1) ms; bucket b ≥ 1 holds [2^((b-1)/8), 2^(b/8)) ms, each about 9 %
 * wider than the one before. An hour (3 600 000 ms) is bucket 175.
 */

export const BUCKETS_PER_DOUBLING = 8;

/** The bucket a latency falls in. */
export function bucketOf(ms: number): number {
  if (!(ms >= 1)) return 0;
  return Math.floor(BUCKETS_PER_DOUBLING * Math.log2(ms)) + 1;
}

/** A bucket's bounds in ms: [low, high). */
export function bucketBounds(bucket: number): [number, number] {
  if (bucket <= 0) return [0, 1];
  return [2 ** ((bucket - 1) / BUCKETS_PER_DOUBLING), 2 ** (bucket / BUCKETS_PER_DOUBLING)];
}

/**
 * The `q` quantile (0 < q < 1) of a histogram given as bucket → count, in ms rounded to 0.1; null when it is
 * empty. The rank q·N is found among the buckets in order, and placed inside its bucket by interpolation:
 * linear in bucket 0, geometric (linear in log-latency, as the buckets are) above. Off by at most one bucket's
 * width (9 %), and by much less when latencies spread over several buckets.
 */
export function quantile(histogram: ReadonlyMap<number, number>, q: number): number | null {
  let total = 0;
  for (const count of histogram.values()) total += count;
  if (total === 0) return null;
  const rank = q * total;
  const buckets = [...histogram.keys()].filter((b) => (histogram.get(b) ?? 0) > 0).sort((a, b) => a - b);
  let below = 0;
  for (const bucket of buckets) {
    const count = histogram.get(bucket) as number;
    if (below + count >= rank) {
      const fraction = Math.min(1, Math.max(0, (rank - below) / count));
      const [low, high] = bucketBounds(bucket);
      const value = bucket === 0 ? low + fraction * (high - low) : low * (high / low) ** fraction;
      return Math.round(value * 10) / 10;
    }
    below += count;
  }
  const [, high] = bucketBounds(buckets[buckets.length - 1] as number);
  return Math.round(high * 10) / 10;
}

/** Adds `from` into `into` (bucket → count). */
export function addHistogram(into: Map<number, number>, from: ReadonlyMap<number, number>): void {
  for (const [bucket, count] of from) into.set(bucket, (into.get(bucket) ?? 0) + count);
}
