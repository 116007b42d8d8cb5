import { describe, expect, it } from "vitest";
import {
  type ArmTotals,
  evaluateGuardrails,
  type GuardrailResult,
  guardrailThresholds,
  stepVerdict,
} from "../../src/rollouts/guardrails.js";
import { histogramQuantile, quantileInterval } from "../../src/rollouts/latency.js";
import { armVariance, meanInterval } from "../../src/rollouts/means.js";

const arm = (count: number, ok: number, extra: Partial<ArmTotals> = {}): ArmTotals => ({
  count,
  ok,
  score_count: 0,
  score_sum: 0,
  ...extra,
});

describe("the difference of two means", () => {
  it("each arm's variance has a pseudo-outcome of 0 and one of 1; without squares it is bounded by μ(1 − μ)", () => {
    // 90 ok of 100 → 91 of 102: (91 − 91²/102) / 101
    expect(armVariance({ count: 100, sum: 90, sum_sq: 90 })).toBeCloseTo(0.09716559891283245, 15);
    // no outcome at all: the two pseudo-outcomes, variance 1/2
    expect(armVariance({ count: 0, sum: 0, sum_sq: 0 })).toBeCloseTo(0.5, 15);
    // 8 scores summing to 6, no squares kept: mean 7/10, bound 0.21
    expect(armVariance({ count: 8, sum: 6 })).toBeCloseTo(0.21, 15);
  });

  it("one step, by hand: 90/100 against 950/1000, margin 0.025, α 0.05, power 0.95", () => {
    const result = meanInterval(
      [{ candidate: { count: 100, sum: 90, sum_sq: 90 }, current: { count: 1000, sum: 950, sum_sq: 950 } }],
      { margin: 0.025, alpha: 0.05, power: 0.95 },
    );
    // I = 1/(0.0971656/100 + 0.0483558/1000); ρ tuned at ((3.0352 + 1.6449)/0.025)² = 35044.78;
    // radius = sqrt((I + ρ)(log(1 + I/ρ) + 2 log 20)) / I
    expect(result.estimate).toBeCloseTo(-0.05, 15);
    expect(result.information).toBeCloseTo(980.3807912608373, 9);
    expect(result.interval![0]).toBeCloseTo(-0.2364508060489373, 8);
    expect(result.interval![1]).toBeCloseTo(0.13645080604893745, 8);
    expect(result.candidate).toEqual({ count: 100, mean: 0.9 });
    expect(result.current).toEqual({ count: 1000, mean: 0.95 });
  });

  it("steps are strata: a drift between steps with a changed share is not a difference", () => {
    // both arms at 0.99 while the candidate has 1%, both at 0.90 while it has 50%
    const steps = [
      { candidate: { count: 100, sum: 99, sum_sq: 99 }, current: { count: 9900, sum: 9801, sum_sq: 9801 } },
      { candidate: { count: 5000, sum: 4500, sum_sq: 4500 }, current: { count: 5000, sum: 4500, sum_sq: 4500 } },
    ];
    const result = meanInterval(steps, { margin: 0.025, alpha: 0.05, power: 0.95 });
    expect(result.estimate).toBeCloseTo(0, 15);
    // the arms' totals alone would say the candidate is 5.8 points worse
    expect(result.candidate.mean! - result.current.mean!).toBeCloseTo(4599 / 5100 - 14301 / 14900, 15);
    expect(result.candidate.mean! - result.current.mean!).toBeLessThan(-0.05);
  });

  it("no step with outcomes in both arms: no estimate, no interval", () => {
    const result = meanInterval([{ candidate: { count: 0, sum: 0 }, current: { count: 50, sum: 40 } }], {
      margin: 0.05,
      alpha: 0.05,
      power: 0.95,
    });
    expect(result).toEqual({
      estimate: null,
      interval: null,
      information: 0,
      candidate: { count: 0, mean: null },
      current: { count: 50, mean: 0.8 },
    });
  });
});

describe("a quantile from a histogram", () => {
  const bounds = [100, 200, 400, 800, 1600];
  const counts = [300, 400, 200, 60, 30, 10];

  it("by hand: 1000 latencies, p95 between 400 and 1600 at α 0.05 (k = 50)", () => {
    // at or below each bound: 300, 700, 900, 960, 990; t·p = 950. log M(900) = 17.99 and log M(990) = 22.00
    // pass log 20 = 3.00, log M(960) = −0.38 does not: the p95 lies in (400, 1600)
    expect(quantileInterval(counts, bounds, 0.95, 0.05, 50)).toEqual({
      count: 1000,
      lo: 400,
      hi: 1600,
      estimate: histogramQuantile(counts, bounds, 0.95),
    });
    // rank 950 is 50 of the 60 in (400, 800]: 400 · 2^(50/60)
    expect(histogramQuantile(counts, bounds, 0.95)).toBeCloseTo(712.7189745122714, 9);
  });

  it("nothing known: (0, unbounded); in the open last bucket: no upper end, no estimate", () => {
    expect(quantileInterval([0, 0, 0, 0, 0, 0], bounds, 0.95, 0.05, 50)).toEqual({
      count: 0,
      lo: 0,
      hi: null,
      estimate: null,
    });
    const late = quantileInterval([0, 0, 0, 0, 0, 1000], bounds, 0.95, 0.05, 50);
    expect(late).toEqual({ count: 1000, lo: 1600, hi: null, estimate: null });
  });
});

describe("guardrails", () => {
  const okOnly = { ok_rate_drop: 0.025 };

  it("breached, holds, undecided, and no data, on the ok rate", () => {
    const decide = (candidate: ArmTotals, current: ArmTotals) =>
      evaluateGuardrails([{ candidate, current }], okOnly)[0]!.decision;
    expect(decide(arm(2000, 1700), arm(100_000, 95_000))).toBe("breached");
    expect(decide(arm(20_000, 19_000), arm(100_000, 95_000))).toBe("holds");
    expect(decide(arm(100, 95), arm(100_000, 95_000))).toBe("undecided");
    const none = evaluateGuardrails([{ candidate: arm(0, 0), current: arm(100, 95) }], okOnly)[0]!;
    expect(none).toEqual({
      guardrail: "ok_rate",
      threshold: 0.025,
      estimate: null,
      interval: null,
      decision: "undecided",
      alpha: 0.05,
      candidate: { count: 0, value: null },
      current: { count: 100, value: 0.95 },
    });
  });

  it("α is shared among the guardrails named: three guardrails judge each at 0.05/3", () => {
    const results = evaluateGuardrails(
      [{ candidate: arm(100, 95), current: arm(1000, 950) }],
      { ok_rate_drop: 0.02, score_drop: 0.05, latency_p95_increase: 0.3 },
      { latency_bounds: [100, 200] },
    );
    expect(results.map((r) => [r.guardrail, r.alpha])).toEqual([
      ["ok_rate", 0.05 / 3],
      ["score", 0.05 / 3],
      ["latency_p95", 0.05 / 3],
    ]);
    expect(evaluateGuardrails([], { score_drop: 0.1 }, { alpha: 0.1 })[0]!.alpha).toBe(0.1);
  });

  it("latency: a candidate two buckets slower is breached; an equal one holds only when Z covers the buckets", () => {
    const bounds = [100, 200, 400, 800, 1600, 3200, 6400];
    const current = [3000, 4000, 2000, 600, 300, 100, 0, 0];
    const slower = [0, 0, 3000, 4000, 2000, 600, 300, 100];
    const judge = (candidate: number[], increase: number) =>
      evaluateGuardrails(
        [{ candidate: arm(10_000, 9500, { latency: candidate }), current: arm(10_000, 9500, { latency: current }) }],
        { latency_p95_increase: increase },
        { latency_bounds: bounds },
      )[0]!;
    // current p95 in (400, 800), slower's in (1600, 3200): the ratio lies in (1600/800, 3200/400)
    const breached = judge(slower, 0.5);
    expect(breached.decision).toBe("breached");
    expect(breached.interval).toEqual([1, 7]);
    expect(breached.estimate).toBeCloseTo(3, 12);
    expect(breached.candidate.value).toBeCloseTo(2850.8758980490857, 9);
    expect(breached.current.value).toBeCloseTo(712.7189745122714, 9);
    // equal: (400/800, 800/400) − 1 = (−0.5, 1): one bucket's width each way
    expect(judge(current, 1).interval).toEqual([-0.5, 1]);
    expect(judge(current, 1).decision).toBe("holds");
    expect(judge(current, 0.5).decision).toBe("undecided");
  });

  it("a latency guardrail without bucket bounds is a programming error", () => {
    expect(() => evaluateGuardrails([], { latency_p95_increase: 0.2 })).toThrow("bucket bounds");
  });

  it("the thresholds' schema: positive, bounded, at least one", () => {
    expect(guardrailThresholds.safeParse({ ok_rate_drop: 0.02 }).success).toBe(true);
    const issues = (value: unknown) =>
      guardrailThresholds.safeParse(value).error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    expect(issues({})).toEqual([": name at least one guardrail"]);
    expect(issues({ ok_rate_drop: 0 })).toEqual(["ok_rate_drop: must be more than 0"]);
    expect(issues({ score_drop: 2 })).toEqual(["score_drop: must be at most 1"]);
    expect(issues({ latency_p95_increase: 0.2, other: 1 })?.[0]).toContain("other");
  });
});

describe("the step's verdict", () => {
  const result = (decision: GuardrailResult["decision"]): GuardrailResult => ({
    guardrail: "ok_rate",
    threshold: 0.02,
    estimate: 0,
    interval: [0, 0],
    decision,
    alpha: 0.05,
    candidate: { count: 1, value: 1 },
    current: { count: 1, value: 1 },
  });

  it("a breach aborts at once, minimums or not; all holding advances only once the minimums are met", () => {
    expect(stepVerdict([result("holds"), result("breached")], false)).toBe("abort");
    expect(stepVerdict([result("undecided"), result("breached")], true)).toBe("abort");
    expect(stepVerdict([result("holds"), result("holds")], false)).toBe("wait");
    expect(stepVerdict([result("holds"), result("holds")], true)).toBe("advance");
    expect(stepVerdict([result("holds"), result("undecided")], true)).toBe("wait");
    // a plan without guardrails is a timed plan
    expect(stepVerdict([], false)).toBe("wait");
    expect(stepVerdict([], true)).toBe("advance");
  });
});
