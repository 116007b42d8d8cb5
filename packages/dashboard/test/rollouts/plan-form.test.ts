import type { PlanDecisionOut } from "@promptstore/core/rollouts/plan-view";
import { describe, expect, it } from "vitest";
import { DEFAULT_PLAN, formField, planBody } from "../../src/rollouts/plan-form";
import {
  armValue,
  decidedBy,
  decisionLine,
  difference,
  duration,
  historyLine,
  intervalText,
  planGuardrails,
  startLine,
  stepMinimums,
  thresholdText,
} from "../../src/rollouts/plan-format";

describe("planBody", () => {
  it("turns the default form into the server's request: minutes to seconds, points and percent to fractions", () => {
    expect(planBody("abc", DEFAULT_PLAN)).toEqual({
      version: "abc",
      steps: [
        { percent: 1, min_duration_seconds: 600, min_outcomes: 3500 },
        { percent: 5, min_duration_seconds: 600, min_outcomes: 3500 },
        { percent: 25, min_duration_seconds: 600, min_outcomes: 3500 },
        { percent: 50, min_duration_seconds: 600, min_outcomes: 3500 },
        { percent: 100, min_duration_seconds: 0, min_outcomes: 0 },
      ],
      guardrails: { ok_rate_drop: 0.025, latency_p95_increase: 0.3 },
    });
  });

  it("leaves out empty guardrails and outcomes, and sends an unreadable number as null for the server to name", () => {
    const body = planBody("abc", {
      steps: [
        { percent: "10", minutes: "1.5", outcomes: "" },
        { percent: "", minutes: "x", outcomes: "7" },
      ],
      okRatePoints: "",
      scoreDrop: "0.05",
      latencyPercent: " ",
    });
    expect(body).toEqual({
      version: "abc",
      steps: [
        { percent: 10, min_duration_seconds: 90 },
        { percent: null, min_duration_seconds: null, min_outcomes: 7 },
      ],
      guardrails: { score_drop: 0.05 },
    });
    expect(planBody("abc", { ...DEFAULT_PLAN, okRatePoints: "0.7" }).guardrails.ok_rate_drop).toBe(0.007);
  });

  it("names a release request's plan fields as the plan form does", () => {
    expect(formField("plan.steps[1].percent")).toBe("steps[1].percent");
    expect(formField("steps[0].min_outcomes")).toBe("steps[0].min_outcomes");
    expect(formField("message")).toBe("message");
    expect(formField(null)).toBe(null);
  });
});

describe("plan-format", () => {
  it("writes each guardrail's difference, interval and threshold in its unit", () => {
    expect(difference("ok_rate", -0.15)).toBe("−15.0 pts");
    expect(difference("ok_rate", 0)).toBe("0.0 pts");
    expect(difference("score", 0.0123)).toBe("+0.012");
    expect(difference("latency_p95", 0.125)).toBe("+12.5%");
    expect(intervalText("ok_rate", [-0.2012, -0.0988])).toBe("−20.1 pts to −9.9 pts");
    expect(intervalText("latency_p95", [0.4, null])).toBe("+40.0% to ∞");
    expect(intervalText("score", null)).toBe("—");
    expect(thresholdText("ok_rate", 0.025)).toBe("−2.5 pts at worst");
    expect(thresholdText("score", 0.05)).toBe("−0.050 at worst");
    expect(thresholdText("latency_p95", 0.3)).toBe("+30.0% at most");
    expect([armValue("ok_rate", 0.95), armValue("score", 0.8), armValue("latency_p95", 1234.4)]).toEqual([
      "95.0%",
      "0.80",
      "1,234 ms",
    ]);
    expect(armValue("ok_rate", null)).toBe("—");
  });

  it("lists the plan's guardrails in the server's order", () => {
    expect(planGuardrails({ guardrails: { latency_p95_increase: 0.3, ok_rate_drop: 0.02 } })).toEqual([
      { guardrail: "ok_rate", threshold: 0.02 },
      { guardrail: "latency_p95", threshold: 0.3 },
    ]);
  });

  it("reads durations, minimums and decisions as a person would", () => {
    expect([
      duration(45),
      duration(250),
      duration(600),
      duration(3600),
      duration(5400),
      duration(2 * 86_400 + 3 * 3600),
    ]).toEqual(["45 s", "4 min 10 s", "10 min", "1 h", "1 h 30 min", "2 d 3 h"]);
    expect(stepMinimums({ percent: 5, min_duration_seconds: 600, min_outcomes: 3500 })).toBe("10 min · 3,500 outcomes");
    expect(stepMinimums({ percent: 100, min_duration_seconds: 0 })).toBe("no minimum");
    expect([decidedBy("plan"), decidedBy("user:a@b.c"), decidedBy("key:ps_abc")]).toEqual([
      "the plan, from outcomes",
      "a@b.c",
      "API key ps_abc…",
    ]);
    const steps = [
      { percent: 10, min_duration_seconds: 0 },
      { percent: 50, min_duration_seconds: 0 },
    ];
    const decision: PlanDecisionOut = { verdict: "abort", at: "", step: 1, results: [], minimums: null, by: "plan" };
    expect(decisionLine({ steps }, decision)).toBe("Abort at step 2 (50%), by the plan, from outcomes");
  });

  it("writes a plan's start and decisions as lines of the prompt's history, with the numbers that decided them", () => {
    const steps = [
      { percent: 10, min_duration_seconds: 0 },
      { percent: 50, min_duration_seconds: 0 },
    ];
    const plan = { label: "production", steps, end_reason: null, started_by: "user:a@b.c" };
    const arm = { count: 2000, value: 0.95 };
    const breach: PlanDecisionOut = {
      verdict: "abort",
      at: "",
      step: 1,
      results: [
        {
          guardrail: "ok_rate",
          threshold: 0.05,
          estimate: -0.15,
          interval: [-0.182, -0.118],
          decision: "breached",
          alpha: 0.05,
          candidate: { count: 2000, value: 0.8 },
          current: arm,
        },
      ],
      minimums: null,
      by: "plan",
    };
    expect(startLine(plan)).toBe("production rollout started at 10%, by a@b.c");
    expect(historyLine(plan, breach)).toBe(
      "production rollout aborted at 50%, by the plan, from outcomes: Ok rate −15.0 pts (−18.2 pts to −11.8 pts; −5.0 pts at worst) breached",
    );
    const advance: PlanDecisionOut = { ...breach, verdict: "advance", step: 0, results: [], by: "key:ps_abc" };
    expect(historyLine(plan, advance)).toBe("production rollout advanced to 50%, by API key ps_abc…");
    const complete: PlanDecisionOut = { ...advance, verdict: "complete", step: 1, by: "plan" };
    expect(historyLine(plan, complete)).toBe("production rollout completed: 100%, by the plan, from outcomes");
    const outside = { ...plan, end_reason: "the label was changed outside the plan by user:x@y.z" };
    const ended: PlanDecisionOut = { ...advance, verdict: "abort", step: 0, by: "user:x@y.z" };
    expect(historyLine(outside, ended)).toBe(
      "production rollout aborted at 10%, by x@y.z (a move made outside the plan)",
    );
  });
});
