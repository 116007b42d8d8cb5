/**
 * The guardrails against simulated traffic with known effects (issue 40): seeded, so every count below is
 * exact and the same on every machine. The bench runs the same scenarios with more rollouts
 * (packages/server/bench/guardrails.js); docs/rollouts.md "Measured error rates" has both.
 */
import { describe, expect, it } from "vitest";
import { latencyPlan, okScorePlan } from "../../src/testing/rollout-scenarios.js";
import { binomial, seededRandom, simulateRollouts } from "../../src/testing/rollout-simulation.js";

const RUNS = 2000;
const LATENCY_RUNS = 100;
// minutes of CPU in CI would be too many; a few seconds each
const SLOW = { timeout: 120_000 };

describe("the simulator", () => {
  it("is seeded: the same seed, the same draws", () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const draws = Array.from({ length: 5 }, () => a());
    expect(Array.from({ length: 5 }, () => b())).toEqual(draws);
    expect(seededRandom(43)()).not.toBe(draws[0]);
    expect(draws.every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it("draws binomials with the right mean and variance, on both of its paths", () => {
    const random = seededRandom(7);
    for (const [n, q] of [
      [200, 0.02], // geometric gaps
      [990, 0.3], // inverted from the mode
    ] as const) {
      let sum = 0;
      let squares = 0;
      const draws = 20_000;
      for (let i = 0; i < draws; i++) {
        const x = binomial(random, n, q);
        sum += x;
        squares += x * x;
      }
      const mean = sum / draws;
      const variance = squares / draws - mean * mean;
      // within 4 standard errors of n·q and n·q(1 − q)
      expect(Math.abs(mean - n * q)).toBeLessThan(4 * Math.sqrt((n * q * (1 - q)) / draws));
      expect(Math.abs(variance / (n * q * (1 - q)) - 1)).toBeLessThan(4 * Math.sqrt(2 / draws));
    }
    expect(binomial(random, 10, 0)).toBe(0);
    expect(binomial(random, 10, 1)).toBe(10);
  });
});

describe("ok rate and score (X = Y = 2.5 points, steps 1% → 5% → 25% → 50%)", () => {
  const plan = okScorePlan();

  it("the step needs 4311 candidate outcomes (3511 for the ok rate, 4311 for the score)", () => {
    expect([plan.okOutcomes, plan.scoreOutcomes, plan.outcomes]).toEqual([3511, 4311, 4311]);
  });

  it(
    "nothing changed: no false abort in 2000 rollouts (≤ 5% asked), every guardrail held within the outcomes in 96.8%",
    SLOW,
    () => {
      const tally = simulateRollouts(11, RUNS, plan.equal, plan.outcomes);
      expect(tally.aborted).toBe(0);
      expect(tally.completed).toBe(RUNS);
      expect(tally.heldWithin).toBe(1935);
      expect(tally.aborted / RUNS).toBeLessThanOrEqual(0.05);
      expect(tally.heldWithin / RUNS).toBeGreaterThanOrEqual(0.95);
    },
  );

  it("ok rate 0.95 → 0.90: aborted within the ok rate's 3511 outcomes in 97.3% (≥ 95% asked)", SLOW, () => {
    const tally = simulateRollouts(12, RUNS, plan.okWorse, plan.okOutcomes);
    expect(tally.abortedWithin).toBe(1946);
    expect(tally.medianAbortAt).toBe(1484);
    expect(tally.abortedWithin / RUNS).toBeGreaterThanOrEqual(0.95);
  });

  it("mean score 0.80 → 0.75: aborted within the score's 4311 outcomes in 95.9% (≥ 95% asked)", SLOW, () => {
    const tally = simulateRollouts(13, RUNS, plan.scoreWorse, plan.scoreOutcomes);
    expect(tally.abortedWithin).toBe(1917);
    expect(tally.abortedWithin / RUNS).toBeGreaterThanOrEqual(0.95);
  });

  it(
    "ok rate exactly X lower, watched for 3 × the outcomes: 0.5% aborted, 0.45% held (each ≤ α/2 = 2.5%)",
    SLOW,
    () => {
      const tally = simulateRollouts(14, RUNS, plan.okAtMargin, 3 * plan.outcomes);
      expect([tally.aborted, tally.heldWithin]).toEqual([10, 9]);
      expect(tally.aborted / RUNS).toBeLessThanOrEqual(0.025);
      expect(tally.heldWithin / RUNS).toBeLessThanOrEqual(0.025);
    },
  );
});

describe("latency p95 (Z = 30%, 9% buckets, steps 5% → 25% → 50%, 3000 outcomes a step)", () => {
  const plan = latencyPlan();

  it("nothing changed: no false abort in 100 rollouts, held within the outcomes in all", SLOW, () => {
    const tally = simulateRollouts(21, LATENCY_RUNS, plan.equal, plan.outcomes);
    expect([tally.aborted, tally.completed, tally.heldWithin]).toEqual([0, LATENCY_RUNS, LATENCY_RUNS]);
  });

  it("p95 × 1.69: aborted within the outcomes in all 100", SLOW, () => {
    const tally = simulateRollouts(22, LATENCY_RUNS, plan.worse, plan.outcomes);
    expect([tally.aborted, tally.abortedWithin, tally.medianAbortAt]).toEqual([LATENCY_RUNS, LATENCY_RUNS, 857]);
  });
});
