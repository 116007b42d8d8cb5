import { describe, expect, it } from "vitest";
import type { ArmTotals } from "../../src/rollouts/guardrails.js";
import { type ArmRow, decidePlan, strataOf } from "../../src/rollouts/plan-decision.js";

const arm = (count: number, ok: number): ArmTotals => ({
  count,
  ok,
  score_count: 0,
  score_sum: 0,
  score_sum_sq: 0,
});
const plan = {
  steps: [
    { percent: 5, min_duration_seconds: 600, min_outcomes: 1000 },
    { percent: 50, min_duration_seconds: 600 },
  ],
  guardrails: { ok_rate_drop: 0.025 },
};
const MIN = 60_000;

describe("a plan's steps as strata", () => {
  it("puts each minute row in the step in force when it started; rows before the plan count for nothing", () => {
    const rows: ArmRow[] = [
      { atMs: -MIN, arm: "candidate", totals: arm(7, 7) },
      { atMs: 0, arm: "candidate", totals: arm(10, 9) },
      { atMs: 0, arm: "current", totals: arm(100, 95) },
      { atMs: 9 * MIN, arm: "candidate", totals: arm(5, 5) },
      { atMs: 10 * MIN, arm: "candidate", totals: arm(50, 40) },
      { atMs: 11 * MIN, arm: "current", totals: arm(60, 57) },
    ];
    expect(strataOf([0, 10 * MIN], rows)).toEqual([
      { candidate: arm(15, 14), current: arm(100, 95) },
      { candidate: arm(50, 40), current: arm(60, 57) },
    ]);
  });
});

describe("a plan's decision", () => {
  it("aborts a worse candidate (0.80 against 0.95) at once, before its step's minimums", () => {
    const strata = [{ candidate: arm(2000, 1600), current: arm(2000, 1900) }];
    const decision = decidePlan(plan, 0, 0, 30_000, strata);
    expect(decision.verdict).toBe("abort");
    expect(decision.percent).toBe(0);
    expect(decision.minimums).toEqual({
      elapsed_seconds: 30,
      min_duration_seconds: 600,
      candidate_outcomes: 2000,
      min_outcomes: 1000,
      met: false,
    });
    expect(decision.results.map((r) => [r.guardrail, r.decision, r.candidate, r.current])).toEqual([
      ["ok_rate", "breached", { count: 2000, value: 0.8 }, { count: 2000, value: 0.95 }],
    ]);
    expect(decision.results[0]?.estimate).toBeCloseTo(-0.15, 12);
  });

  it("holds an equal candidate until the step's duration and outcomes are both reached, then advances", () => {
    const equal = [{ candidate: arm(20_000, 19_000), current: arm(20_000, 19_000) }];
    // Every guardrail holds, but the step has lasted 599 s of 600: outcomes never shorten it.
    const early = decidePlan(plan, 0, 0, 599_999, equal);
    expect(early.results.map((r) => r.decision)).toEqual(["holds"]);
    expect([early.verdict, early.percent, early.minimums.met]).toEqual(["wait", 5, false]);
    // 600 s, but 999 candidate outcomes of 1000: and it waits (the guardrail still holds on them).
    const few = [{ candidate: arm(999, 949), current: arm(20_000, 19_000) }];
    const short = decidePlan(plan, 0, 0, 600_000, few);
    expect([short.verdict, short.minimums.candidate_outcomes, short.minimums.met]).toEqual(["wait", 999, false]);
    const advance = decidePlan(plan, 0, 0, 600_000, equal);
    expect([advance.verdict, advance.percent, advance.minimums.met]).toEqual(["advance", 50, true]);
  });

  it("completes from the last step, or when the next step is at 100", () => {
    const equal = [
      { candidate: arm(20_000, 19_000), current: arm(20_000, 19_000) },
      { candidate: arm(20_000, 19_000), current: arm(20_000, 19_000) },
    ];
    const last = decidePlan(plan, 1, 600_000, 1_200_000, equal);
    expect([last.verdict, last.percent]).toEqual(["complete", 100]);
    const toHundred = { ...plan, steps: [plan.steps[0]!, { percent: 100, min_duration_seconds: 0 }] };
    const done = decidePlan(toHundred, 0, 0, 600_000, equal.slice(0, 1));
    expect([done.verdict, done.percent]).toEqual(["complete", 100]);
  });
});
