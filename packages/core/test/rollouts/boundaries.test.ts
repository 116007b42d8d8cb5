import { describe, expect, it } from "vitest";
import {
  bestRho,
  betaBinomialConcentration,
  betaBinomialLog,
  logBeta,
  mixtureTuning,
  mixtureWidthAtTuning,
  normalMixtureBoundary,
  normalMixtureLog,
  normalQuantile,
} from "../../src/rollouts/boundaries.js";

// The expected values were computed apart from this code (Python's math module, by the formulas in
// docs/rollouts.md), to the digits shown.
describe("the normal-mixture boundary (Howard et al. 2021)", () => {
  it("tunes ρ at a time m as m / (2 log(1/α) + log(1 + 2 log(1/α)))", () => {
    // 2 log 20 = 5.991464547107982, log(6.991464547107982) = 1.9447049…
    expect(mixtureTuning(0.05)).toBeCloseTo(0.1260056097925634, 15);
    expect(bestRho(1000, 0.05)).toBeCloseTo(126.0056097925634, 11);
  });

  it("f(v) = sqrt((v + ρ)(log(1 + v/ρ) + 2 log(1/α))): at v = 100, ρ = 10, α = 0.05", () => {
    // sqrt(110 · (log 11 + 2 log 20))
    expect(normalMixtureBoundary(100, 10, 0.05)).toBeCloseTo(30.378110214259525, 12);
  });

  it("the mixture martingale reaches 1/α exactly on the boundary, and stays below inside it", () => {
    const f = normalMixtureBoundary(100, 10, 0.05);
    expect(normalMixtureLog(f, 100, 10)).toBeCloseTo(Math.log(20), 12);
    expect(normalMixtureLog(-f, 100, 10)).toBeCloseTo(Math.log(20), 12);
    expect(normalMixtureLog(0.99 * f, 100, 10)).toBeLessThan(Math.log(20));
    // at s = 0 the martingale is sqrt(ρ/(v + ρ)) = sqrt(1/11)
    expect(normalMixtureLog(0, 100, 10)).toBeCloseTo(-0.5 * Math.log(11), 15);
  });

  it("at its tuning time the interval is ±3.035 standard errors at α = 0.05, ±3.412 at α = 0.05/3", () => {
    expect(mixtureWidthAtTuning(0.05)).toBeCloseTo(3.0352089903762534, 12);
    expect(mixtureWidthAtTuning(0.05 / 3)).toBeCloseTo(3.412281380655947, 12);
    // and that is f(m)/√m with ρ tuned at m
    const m = 40_000;
    expect(normalMixtureBoundary(m, bestRho(m, 0.05), 0.05) / Math.sqrt(m)).toBeCloseTo(3.0352089903762534, 12);
  });
});

describe("special functions", () => {
  it("the normal quantile to 1e-7 (simple-statistics' probit alone is 1.4e-3 off at 0.95)", () => {
    expect(normalQuantile(0.95)).toBeCloseTo(1.6448536269514722, 7);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963984540054, 7);
    expect(normalQuantile(0.8)).toBeCloseTo(0.8416212335729143, 7);
    expect(normalQuantile(0.05)).toBeCloseTo(-1.6448536269514722, 7);
    expect(() => normalQuantile(1)).toThrow(RangeError);
  });

  it("log B(a, b)", () => {
    expect(logBeta(1, 1)).toBeCloseTo(0, 14);
    expect(logBeta(2, 3)).toBeCloseTo(Math.log(1 / 12), 14);
    expect(logBeta(0.5, 0.5)).toBeCloseTo(Math.log(Math.PI), 14);
  });
});

describe("the beta-binomial mixture", () => {
  it("by hand: Beta(1, 1) against p = 1/2", () => {
    // one failure in one trial: B(1, 2) / (B(1, 1) · 1/2) = (1/2) / (1/2) = 1
    expect(betaBinomialLog(0, 1, 0.5, 2)).toBeCloseTo(0, 14);
    // three successes in three: B(4, 1) / (B(1, 1) · 1/8) = (1/4) · 8 = 2
    expect(betaBinomialLog(3, 3, 0.5, 2)).toBeCloseTo(Math.log(2), 14);
  });

  it("at p = 0.95 and k = 50, against Python's lgamma", () => {
    expect(betaBinomialLog(900, 1000, 0.95, 50)).toBeCloseTo(17.988696357641402, 9);
    expect(betaBinomialLog(960, 1000, 0.95, 50)).toBeCloseTo(-0.383558573748104, 9);
    expect(betaBinomialLog(990, 1000, 0.95, 50)).toBeCloseTo(22.00197625622778, 9);
    expect(betaBinomialLog(10, 100, 0.95, 20)).toBeCloseTo(206.0907630617958, 9);
  });

  it("its concentration matches the normal mixture tuned at the same count (k + 1 = count · ρ/m), at least 1", () => {
    expect(betaBinomialConcentration(5000, 0.025)).toBeCloseTo(525.1308487444453, 9);
    expect(betaBinomialConcentration(1, 0.05)).toBe(1);
  });
});
