import { describe, expect, it } from "vitest";
import { planProblems, planRequest } from "../../src/rollouts/plans.js";

const plan = {
  version: "abc123",
  steps: [
    { percent: 1, min_duration_seconds: 60, min_outcomes: 100 },
    { percent: 25, min_duration_seconds: 60 },
    { percent: 100, min_duration_seconds: 0 },
  ],
  guardrails: { ok_rate_drop: 0.025 },
};

describe("a rollout plan's request", () => {
  it("takes a plan whose percents increase, with or without a last step at 100", () => {
    expect(planProblems(plan)).toEqual([]);
    expect(planRequest.parse({ ...plan, steps: plan.steps.slice(0, 2) }).steps).toEqual([
      { percent: 1, min_duration_seconds: 60, min_outcomes: 100 },
      { percent: 25, min_duration_seconds: 60 },
    ]);
  });

  it("names every wrong field", () => {
    expect(
      planProblems({
        version: "",
        steps: [
          { percent: 5, min_duration_seconds: 60 },
          { percent: 5, min_duration_seconds: -1 },
          { percent: 2.5, min_duration_seconds: 60, min_outcomes: 10, extra: 1 },
        ],
        guardrails: {},
      }),
    ).toEqual([
      { field: "version", message: "must not be empty" },
      { field: "steps[1].min_duration_seconds", message: "must be at least 0" },
      { field: "steps[2].percent", message: "must be a whole number" },
      { field: "steps[2]", message: 'Unrecognized key: "extra"' },
      { field: "guardrails", message: "name at least one guardrail" },
    ]);
  });

  it("refuses percents that do not increase, more than 100, and no steps", () => {
    expect(
      planProblems({
        ...plan,
        steps: [
          { percent: 50, min_duration_seconds: 0 },
          { percent: 10, min_duration_seconds: 0 },
        ],
      }),
    ).toEqual([{ field: "steps[1].percent", message: "must be more than the step before's 50" }]);
    expect(
      planProblems({
        ...plan,
        steps: [
          { percent: 5, min_duration_seconds: 0 },
          { percent: 5, min_duration_seconds: 0 },
        ],
      }),
    ).toEqual([{ field: "steps[1].percent", message: "must be more than the step before's 5" }]);
    expect(planProblems({ ...plan, steps: [{ percent: 101, min_duration_seconds: 0 }] })).toEqual([
      { field: "steps[0].percent", message: "must be at most 100" },
    ]);
    expect(planProblems({ ...plan, steps: [{ percent: 100, min_duration_seconds: 0 }] })).toEqual([
      { field: "steps[0].percent", message: "must be below 100: a plan starts with a share" },
    ]);
    expect(planProblems({ ...plan, steps: [] })).toEqual([{ field: "steps", message: "must have at least 1 step" }]);
    expect(planProblems({ ...plan, guardrails: { ok_rate_drop: 0 } })).toEqual([
      { field: "guardrails.ok_rate_drop", message: "must be more than 0" },
    ]);
  });
});
