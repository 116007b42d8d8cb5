/**
 * The start-a-plan form's values and how they become the request the server takes (docs/rollouts.md "Plans"):
 * durations in minutes, the ok rate's margin in points, latency's in percent, as a person thinks of them. The
 * server judges the request (its messages go beside the field they name); this only converts. Pure: unit-tested.
 */
import type { PlanRequest } from "@promptstore/core/rollouts/plans";

export interface StepValues {
  percent: string;
  minutes: string;
  outcomes: string;
}

export interface PlanFormValues {
  steps: StepValues[];
  /** Points of ok rate the candidate may lose (2.5 = 0.025). */
  okRatePoints: string;
  /** Mean score (0 to 1) it may lose. */
  scoreDrop: string;
  /** Percent its latency p95 may grow (30 = 0.3). */
  latencyPercent: string;
}

/**
 * 1% → 5% → 25% → 50% → 100%, ten minutes a step, 3 500 candidate outcomes on the steps stood at (about what
 * a 2.5-point margin on a 95% ok rate needs, docs/rollouts.md "How many outcomes"); the step at 100 completes.
 */
export const DEFAULT_PLAN: PlanFormValues = {
  steps: [1, 5, 25, 50, 100].map((p) => ({
    percent: String(p),
    minutes: p === 100 ? "0" : "10",
    outcomes: p === 100 ? "0" : "3500",
  })),
  okRatePoints: "2.5",
  scoreDrop: "",
  latencyPercent: "30",
};

/** A number as typed; an empty or unreadable one goes as null, so the server names the field. */
const numberOf = (text: string): number | null => {
  const t = text.trim();
  if (t === "") return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
};

/** Rounds away the float noise of a unit change (2.5 / 100 = 0.025, not 0.025000000000000001). */
const scaled = (text: string, by: number): number | null | undefined => {
  if (text.trim() === "") return undefined;
  const n = numberOf(text);
  return n === null ? null : Number((n * by).toPrecision(12));
};

/** The request body: what the form holds, in the server's units. Not validated here. */
export function planBody(version: string, values: PlanFormValues): PlanRequest {
  const guardrails: Record<string, number | null> = {};
  const ok = scaled(values.okRatePoints, 0.01);
  const score = scaled(values.scoreDrop, 1);
  const latency = scaled(values.latencyPercent, 0.01);
  if (ok !== undefined) guardrails.ok_rate_drop = ok;
  if (score !== undefined) guardrails.score_drop = score;
  if (latency !== undefined) guardrails.latency_p95_increase = latency;
  const steps = values.steps.map((s) => {
    const minutes = numberOf(s.minutes);
    const outcomes = s.outcomes.trim() === "" ? undefined : numberOf(s.outcomes);
    return {
      percent: numberOf(s.percent),
      min_duration_seconds: minutes === null ? null : Math.round(minutes * 60),
      ...(outcomes === undefined ? {} : { min_outcomes: outcomes }),
    };
  });
  // nulls stand where the person left a field unreadable: the server's answer names it
  return { version, steps, guardrails } as unknown as PlanRequest;
}

/**
 * A field the server named, as the form names it: a release request's `plan.steps[0].percent` is the plan
 * form's `steps[0].percent`; a plan's own request names it so already.
 */
export const formField = (field: string | null): string | null =>
  field?.startsWith("plan.") ? field.slice("plan.".length) : field;
