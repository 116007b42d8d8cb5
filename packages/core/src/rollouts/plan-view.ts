/**
 * A rollout plan as every surface shows it (docs/rollouts.md "Plans"): `GET …/labels/:label/plan`, the
 * answers of its commands, and the `plan` of its `rollout.advanced`, `rollout.aborted` and `rollout.completed`
 * events and webhooks. The numbers of a decision are those `decidePlan` gave: each guardrail's estimate,
 * interval and threshold, and the step's minimums.
 */
import { z } from "zod";
import { guardrailThresholds } from "./guardrails.js";
import { planRequest, planStep } from "./plans.js";

/** The plan a release request carries (its version is the request's): the steps and guardrails. */
export const planSpec = planRequest.omit({ version: true });
export type PlanSpec = z.infer<typeof planSpec>;

export const PLAN_STATUSES = ["running", "paused", "aborted", "completed"] as const;
export type PlanStatusName = (typeof PLAN_STATUSES)[number];

const arm = z.object({ count: z.number().int(), value: z.number().nullable() });

/** One guardrail's judgement, as `evaluateGuardrails` gives it. */
export const guardrailResultOut = z
  .object({
    guardrail: z.enum(["ok_rate", "score", "latency_p95"]),
    threshold: z.number().describe("X, Y or Z as the plan gave it"),
    estimate: z
      .number()
      .nullable()
      .describe("candidate − current (ok_rate, score); candidate / current − 1 (latency_p95); null without data"),
    interval: z
      .tuple([z.number(), z.number().nullable()])
      .nullable()
      .describe("The always-valid confidence interval of the estimate"),
    decision: z.enum(["breached", "holds", "undecided"]),
    alpha: z.number().describe("The interval holds at 1 − alpha, at every moment at once"),
    candidate: arm,
    current: arm,
  })
  .describe("A guardrail's estimate, interval, threshold and decision");

export const planMinimums = z
  .object({
    elapsed_seconds: z.number().int(),
    min_duration_seconds: z.number().int(),
    candidate_outcomes: z.number().int().describe("The candidate's outcomes in this step"),
    min_outcomes: z.number().int(),
    met: z.boolean().describe("Both minimums passed"),
  })
  .describe("The step's minimums against what it has");

/** A decision on a plan's step: by the server from the outcomes, or by a person. */
export const planDecisionOut = z
  .object({
    verdict: z
      .enum(["wait", "advance", "complete", "abort"])
      .describe("What the step's evidence said (a person's command: what they did)"),
    at: z.string().describe("When it was decided (ISO 8601, UTC)"),
    step: z.number().int().describe("The step decided on (0-based)"),
    results: z.array(guardrailResultOut),
    minimums: planMinimums.nullable().describe("Null for a person's command"),
    by: z.string().describe("Who decided: `plan` (the server, from outcomes) or the person or key"),
  })
  .describe("The numbers that decided a plan's step");
export type PlanDecisionOut = z.infer<typeof planDecisionOut>;

export const planView = z
  .strictObject({
    id: z.string(),
    prompt_id: z.string(),
    label: z.string(),
    version: z.string().describe("The candidate"),
    from_version: z.string().describe("What the label served when the plan started: the current arm"),
    status: z.enum(PLAN_STATUSES),
    step: z.number().int().describe("The step it stands at (0-based)"),
    percent: z.number().int().describe("The candidate's share now (100 once completed, 0 once aborted)"),
    step_started_at: z.string(),
    steps: z.array(planStep),
    guardrails: guardrailThresholds,
    started_by: z.string(),
    started_at: z.string(),
    ended_at: z.string().nullable(),
    end_reason: z.string().nullable().describe("Why it ended: a breach, who aborted it, or a change outside the plan"),
    release_id: z.string().nullable().describe("The approved release request it started from (protected labels)"),
    last_decision: planDecisionOut.nullable(),
    decisions: z
      .array(planDecisionOut)
      .describe("Every decision that moved the plan, oldest first: each advance, then its completion or abort"),
  })
  .describe("A rollout plan");

/** How many plans `GET /api/v2/prompts/:id/plans` lists at most: the newest. */
export const PLANS_LISTED = 50;

/** `GET /api/v2/prompts/:id/plans`: the prompt's plans on every label, newest first. */
export const planListOut = z
  .object({ plans: z.array(planView).describe(`At most ${PLANS_LISTED} plans, newest first`) })
  .describe("A prompt's rollout plans");
export type PlanView = z.infer<typeof planView>;

/** What a `rollout.*` event carries: the plan after the decision, and the numbers that decided it. */
export const planEventOut = z
  .object({
    id: z.string(),
    status: z.enum(PLAN_STATUSES),
    step: z.number().int(),
    percent: z.number().int(),
    end_reason: z.string().nullable(),
    decision: planDecisionOut,
  })
  .describe("A rollout plan's decision (rollout.advanced, rollout.aborted, rollout.completed)");
export type PlanEventOut = z.infer<typeof planEventOut>;
