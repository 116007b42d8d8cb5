/**
 * Row types of production's tables, as Kysely sees them: outcomes, the label history, the fleet and rollout
 * plans (issue 40). Part of the Database in ../schema.ts, which re-exports them.
 */

/** Outcomes (migration 024, docs/outcomes.md): one series per project, prompt, version, label and arm. */
export interface OutcomeSeriesTable {
  /** A hash of the five: every instance names a series without asking. */
  id: string;
  project_id: string;
  prompt_id: string;
  version: string;
  /** '' for none. */
  label: string;
  /** '' for none. */
  arm: string;
  last_at: string;
}

/** Per series, step (1: a minute, 60: an hour) and the step's start: sums. bigint columns: through Number(). */
export interface OutcomeCountsTable {
  series_id: string;
  span: number;
  at: string;
  count: number | string;
  ok: number | string;
  score_sum: number;
  /** Σ score² (migration 025): the score guardrail's variance. */
  score_sum_sq: number;
  score_count: number | string;
  tokens_input: number | string;
  tokens_output: number | string;
}

/** Per series, step, step start and latency bucket: how many outcomes took that long. */
export interface OutcomeLatencyTable {
  series_id: string;
  span: number;
  at: string;
  bucket: number;
  count: number | string;
}

/** What a label served from `at` on (migration 024). */
export interface LabelHistoryTable {
  project_id: string;
  prompt_id: string;
  label: string;
  at: string;
  version: string | null;
  candidate: string | null;
}

/** What a running client instance last said it serves, per prompt and label ('' for none). */
export interface FleetInstancesTable {
  project_id: string;
  prompt_id: string;
  label: string;
  instance_id: string;
  version: string;
  sdk: string | null;
  last_seen: string;
}

/** A label's rollout plan (migration 026, docs/rollouts.md "Plans"). */
export interface RolloutPlansTable {
  id: string;
  project_id: string;
  prompt_id: string;
  label: string;
  /** The candidate. */
  version: string;
  /** What the label served when the plan started: the current arm. */
  from_version: string;
  /** JSON: the request's steps and guardrails. */
  steps: string;
  guardrails: string;
  status: "running" | "paused" | "aborted" | "completed";
  /** 0-based. */
  step: number;
  step_started_at: string;
  started_at: string;
  started_by: string;
  /** The approved release request a plan on a protected label started from. */
  release_id: string | null;
  ended_at: string | null;
  updated_at: string;
  /** Why it ended (aborted by whom, a breach, a change outside the plan); null while active or completed. */
  end_reason: string | null;
  /** JSON: the last decision's verdict, guardrail results and minimums (migration 028). */
  last_decision: string | null;
  /** JSON: when each step so far started (ISO), the plan's start first; null on rows from before migration 028. */
  step_starts: string | null;
  /** JSON: every decision that moved the plan (advance, completion, abort), oldest first (migration 028). */
  decisions: string | null;
}
