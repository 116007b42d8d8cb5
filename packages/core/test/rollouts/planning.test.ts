import { describe, expect, it } from "vitest";
import { informationNeeded, okRateOutcomes, scoreOutcomes } from "../../src/rollouts/planning.js";

// Expected values computed apart (Python, scipy's normal quantile), from docs/rollouts.md "How many outcomes".
describe("the outcomes a step needs", () => {
  it("by default the regression caught is twice the margin, and the information is the tuning point", () => {
    // ((3.0352 + 1.6449) / 0.025)²
    expect(informationNeeded({ margin: 0.025, alpha: 0.05, power: 0.95 })).toBeCloseTo(35044.7777633735, 3);
  });

  it("ok rate 0.95, X = 2.5 points (a 5-point regression), α 0.05: 3171 candidate outcomes at 1%, 4819 at 50%", () => {
    // 35044.78 × (0.90·0.10 + 0.95·0.05 · s/(1 − s))
    expect(okRateOutcomes({ margin: 0.025, baseline: 0.95, share: 0.01, alpha: 0.05 })).toEqual({
      candidate: 3171,
      total: 317_100,
      information: expect.closeTo(35044.7777633735, 3),
    });
    expect(okRateOutcomes({ margin: 0.025, baseline: 0.95, share: 0.5, alpha: 0.05 }).candidate).toBe(4819);
  });

  it("two guardrails share α: 3511 for the ok rate, 4311 for a score of variance 0.11 (Y = 0.025)", () => {
    expect(okRateOutcomes({ margin: 0.025, baseline: 0.95, share: 0.01, alpha: 0.025 }).candidate).toBe(3511);
    expect(scoreOutcomes({ margin: 0.025, mean: 0.8, variance: 0.11, share: 0.01, alpha: 0.025 }).candidate).toBe(4311);
    // without a sum of squares the score's variance is bounded by 0.8 · 0.2 = 0.16: about half as many again
    expect(scoreOutcomes({ margin: 0.025, mean: 0.8, share: 0.01, alpha: 0.025 }).candidate).toBe(
      Math.ceil(38794.308811108735 * (0.16 + (0.16 * 0.01) / 0.99)),
    );
  });

  it("a regression closer to the margin needs more: 4 points with X = 2.5 decides at a distance of 1.5", () => {
    expect(
      okRateOutcomes({ margin: 0.025, regression: 0.04, baseline: 0.95, share: 0.01, alpha: 0.05 }).candidate,
    ).toBe(8214);
  });

  it("refuses what has no answer", () => {
    expect(() => informationNeeded({ margin: 0.05, regression: 0.05 })).toThrow(RangeError);
    expect(() => okRateOutcomes({ margin: 0.02, baseline: 0.9, share: 1 })).toThrow("share");
  });
});
