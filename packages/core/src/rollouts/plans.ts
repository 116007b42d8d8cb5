/**
 * What a rollout plan says (issue 40, docs/rollouts.md "Plans"): the candidate version, its steps (the
 * candidate's percent, and how long and on how many candidate outcomes each step waits at least) and the
 * guardrails every step is judged by. The request body of `POST /api/v2/prompts/:id/labels/:label/plan`.
 */
import { z } from "zod";
import { guardrailThresholds } from "./guardrails.js";

/** Steps a plan has at most. */
export const MAX_PLAN_STEPS = 20;
/** A step waits at most thirty days. */
export const MAX_STEP_SECONDS = 30 * 86_400;
/** The most candidate outcomes a step may ask for. */
export const MAX_STEP_OUTCOMES = 100_000_000;

export const planStep = z.strictObject({
  percent: z
    .number()
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(100, "must be at most 100")
    .describe("The candidate's share during the step, a whole percent; 100 only as the last step"),
  min_duration_seconds: z
    .number()
    .int("must be a whole number")
    .min(0, "must be at least 0")
    .max(MAX_STEP_SECONDS, `must be at most ${MAX_STEP_SECONDS}`)
    .describe("The step lasts at least this long, whatever the outcomes say"),
  min_outcomes: z
    .number()
    .int("must be a whole number")
    .min(0, "must be at least 0")
    .max(MAX_STEP_OUTCOMES, `must be at most ${MAX_STEP_OUTCOMES}`)
    .optional()
    .describe("And gets at least this many candidate outcomes (0 when not given)"),
});
export type PlanStep = z.infer<typeof planStep>;

export const planRequest = z.strictObject({
  version: z
    .string()
    .min(1, "must not be empty")
    .max(64, "must be at most 64 characters")
    .describe("The candidate version's hash"),
  steps: z
    .array(planStep)
    .min(1, "must have at least 1 step")
    .max(MAX_PLAN_STEPS, `must have at most ${MAX_PLAN_STEPS} steps`)
    .superRefine((steps, ctx) => {
      // A first step at 100 would be a plain move, not a rollout: the plan starts with a share.
      if (steps[0]?.percent === 100) {
        ctx.addIssue({
          code: "custom",
          path: [0, "percent"],
          message: "must be below 100: a plan starts with a share",
        });
      }
      for (let i = 1; i < steps.length; i++) {
        const before = steps[i - 1]?.percent ?? 0;
        const percent = steps[i]?.percent ?? 0;
        if (percent <= before) {
          ctx.addIssue({
            code: "custom",
            path: [i, "percent"],
            message: `must be more than the step before's ${before}`,
          });
        }
      }
    })
    .describe("The steps, each with a higher percent than the one before"),
  guardrails: guardrailThresholds,
});
export type PlanRequest = z.infer<typeof planRequest>;

/** "steps[2].percent": a zod issue's path as the failure envelope names a field. */
export function fieldOf(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** The fields of a plan request that are wrong, each with why; empty when it is a plan. */
export function planProblems(body: unknown): { field: string; message: string }[] {
  const parsed = planRequest.safeParse(body);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => ({ field: fieldOf(issue.path), message: issue.message }));
}
