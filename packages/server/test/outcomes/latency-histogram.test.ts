/** The latency histogram's buckets and quantiles (docs/outcomes.md, "Storage"): exact vectors and accuracy. */
import { describe, expect, it } from "vitest";
import { bucketBounds, bucketOf, quantile } from "../../src/service/outcomes/latency-histogram.js";

describe("latency histogram", () => {
  it("puts a latency in a fixed log-scale bucket, eight per doubling", () => {
    expect([0, 0.5, 0.999].map(bucketOf)).toEqual([0, 0, 0]);
    expect([1, 2, 4, 1024].map(bucketOf)).toEqual([1, 9, 17, 81]);
    expect([100, 500, 512, 1000].map(bucketOf)).toEqual([54, 72, 73, 80]);
    expect(bucketOf(3_600_000)).toBe(175);
    expect(bucketBounds(0)).toEqual([0, 1]);
    expect(bucketBounds(9)).toEqual([2, 2 ** (9 / 8)]);
    for (const ms of [1, 3, 77.7, 812, 59_999, 3_600_000]) {
      const [low, high] = bucketBounds(bucketOf(ms));
      expect(ms >= low && ms < high, String(ms)).toBe(true);
    }
  });

  it("finds a quantile by rank, interpolated inside its bucket", () => {
    expect(quantile(new Map(), 0.5)).toBeNull();
    // 10 at 0.5 ms: half-way through bucket 0 (linear there).
    expect(quantile(new Map([[0, 10]]), 0.5)).toBe(0.5);
    // 4 below, 4 above: the median ends the first bucket, [4, 4.36), exactly.
    expect(
      quantile(
        new Map([
          [17, 4],
          [25, 4],
        ]),
        0.5,
      ),
    ).toBe(4.4);
    // Rank 95 of 100, 90 below: half-way through bucket 81 ([1024, 1116.7)), geometrically.
    expect(
      quantile(
        new Map([
          [54, 90],
          [81, 10],
        ]),
        0.95,
      ),
    ).toBe(Math.round(2 ** (80.5 / 8) * 10) / 10);
  });

  it("is within 5 % of the exact p50 and p95 of a wide spread of latencies", () => {
    // A seeded spread from 20 ms to 20 s, heavier at the low end, as model answers are.
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const latencies = Array.from({ length: 10_000 }, () => 20 * 1000 ** (random() ** 1.5));
    const histogram = new Map<number, number>();
    for (const ms of latencies) histogram.set(bucketOf(ms), (histogram.get(bucketOf(ms)) ?? 0) + 1);
    const sorted = [...latencies].sort((a, b) => a - b);
    for (const q of [0.5, 0.95]) {
      const exact = sorted[Math.ceil(q * sorted.length) - 1] as number;
      const estimate = quantile(histogram, q) as number;
      expect(Math.abs(estimate - exact) / exact, `q ${q}: ${estimate} for ${exact}`).toBeLessThan(0.05);
    }
  });
});
