/**
 * What a rollout plan records (docs/rollouts.md "Plans"): its view, its new row, and the audit row and event
 * of each decision, in the transaction that moves its label. Also how a move made outside the plan ends it.
 * Imports nothing that moves labels, so label-moves.ts can end a plan without a circle.
 */
import type { GuardrailResult } from "@promptstore/core/rollouts/guardrails";
import type { PlanDecisionOut, PlanSpec, PlanView } from "@promptstore/core/rollouts/plan-view";
import type { PlanStep } from "@promptstore/core/rollouts/plans";
import { newId } from "../../../store/ids.js";
import type { PromptRow } from "../../../store/prompts/prompt-rows.js";
import type { ProjectStore } from "../../../store/prompts/prompts.js";
import { type PlanRow, RolloutPlans } from "../../../store/rollouts/rollout-plans.js";
import type { PromptChange } from "../prompt-changes.js";

export type PlanEventType = "rollout.advanced" | "rollout.aborted" | "rollout.completed";

/** The plans of the transaction `tx` is in. */
export const plansOf = (tx: ProjectStore): RolloutPlans => new RolloutPlans(tx.connection());

export const stepsOf = (row: PlanRow): PlanStep[] => JSON.parse(row.steps) as PlanStep[];

/** When each step so far started (ms); a row from before migration 028 knows only its current step's start. */
export function stepStartsOf(row: PlanRow): string[] {
  if (row.step_starts !== null) return JSON.parse(row.step_starts) as string[];
  return [...Array.from({ length: row.step }, () => row.started_at), row.step_started_at];
}

/** The candidate's share where the plan stands: its step's percent, 100 once completed, 0 once aborted. */
export function percentOf(row: PlanRow): number {
  if (row.status === "completed") return 100;
  if (row.status === "aborted") return 0;
  return stepsOf(row)[row.step]?.percent ?? 0;
}

/** Every decision that moved the plan, oldest first (none on a row from before migration 028). */
export const decisionsOf = (row: PlanRow): PlanDecisionOut[] =>
  row.decisions === null ? [] : (JSON.parse(row.decisions) as PlanDecisionOut[]);

/** What a decision that moves the plan writes on its row: it as the last decision, and appended to the list. */
export const decidedColumns = (row: PlanRow, decision: PlanDecisionOut) => ({
  lastDecision: JSON.stringify(decision),
  decisions: JSON.stringify([...decisionsOf(row), decision]),
});

export function planViewOf(row: PlanRow): PlanView {
  return {
    id: row.id,
    prompt_id: row.prompt_id,
    label: row.label,
    version: row.version,
    from_version: row.from_version,
    status: row.status,
    step: row.step,
    percent: percentOf(row),
    step_started_at: row.step_started_at,
    steps: stepsOf(row),
    guardrails: JSON.parse(row.guardrails),
    started_by: row.started_by,
    started_at: row.started_at,
    ended_at: row.ended_at,
    end_reason: row.end_reason,
    release_id: row.release_id,
    last_decision: row.last_decision === null ? null : (JSON.parse(row.last_decision) as PlanDecisionOut),
    decisions: decisionsOf(row),
  };
}

/** A new plan's row, standing at its first step (the label already rolled out to it, in the same transaction). */
export async function insertPlan(
  tx: ProjectStore,
  change: PromptChange,
  plan: { promptId: string; label: string; version: string; from: string; spec: PlanSpec; releaseId: string | null },
  by: string,
  at: string,
): Promise<PlanRow> {
  const row: PlanRow = {
    id: newId("plan"),
    project_id: tx.projectId,
    prompt_id: plan.promptId,
    label: plan.label,
    version: plan.version,
    from_version: plan.from,
    steps: JSON.stringify(plan.spec.steps),
    guardrails: JSON.stringify(plan.spec.guardrails),
    status: "running",
    step: 0,
    step_started_at: at,
    started_at: at,
    started_by: by,
    release_id: plan.releaseId,
    ended_at: null,
    updated_at: at,
    end_reason: null,
    last_decision: null,
    step_starts: JSON.stringify([at]),
    decisions: "[]",
  };
  await plansOf(tx).insert(row);
  change.audited("rollout.started", plan.from, plan.version, `${plan.promptId}:${plan.label}`);
  return row;
}

const signed = (n: number, digits = 4) => `${n >= 0 ? "+" : ""}${n.toFixed(digits)}`;

function describeResult(r: GuardrailResult): string {
  const interval =
    r.interval === null ? "-" : `[${signed(r.interval[0])},${r.interval[1] === null ? "∞" : signed(r.interval[1])}]`;
  return `${r.guardrail} ${r.estimate === null ? "-" : signed(r.estimate)} ${interval}/${r.threshold} ${r.decision}`;
}

/** The audit row's `after`: the decision and its numbers, within the column's 100 characters. */
export function describeDecision(decision: PlanDecisionOut, percent: number): string {
  const m = decision.minimums;
  const parts = [
    `${decision.verdict} ${percent}%`,
    ...decision.results.map(describeResult),
    ...(m ? [`${m.elapsed_seconds}/${m.min_duration_seconds}s ${m.candidate_outcomes}/${m.min_outcomes}`] : []),
  ];
  const text = parts.join("; ");
  return text.length <= 100 ? text : `${text.slice(0, 99)}…`;
}

/** The audit row's `before`: where the plan stood. */
export const describeStanding = (row: PlanRow): string => `${row.id} step ${row.step} at ${percentOf(row)}%`;

/**
 * A decision's audit row and event (`rollout.advanced`, `rollout.aborted`, `rollout.completed`), with the
 * plan as it stands after it. `production` is what production serves after the decision's move.
 */
export function recordDecision(
  change: PromptChange,
  prompt: Pick<PromptRow, "production_version" | "latest_version">,
  before: PlanRow,
  after: PlanRow,
  type: PlanEventType,
  decision: PlanDecisionOut,
  production: string | null,
): void {
  const percent = percentOf(after);
  change
    .audited(type, describeStanding(before), describeDecision(decision, percent), `${after.prompt_id}:${after.label}`)
    .event(type, after.version, production, prompt.latest_version, {
      label: after.label,
      previous_version: after.from_version,
      plan: {
        id: after.id,
        status: after.status,
        step: after.step,
        percent,
        end_reason: after.end_reason,
        decision,
      },
    });
}

/**
 * Ends the label's active plan, if any, because something other than the plan moved the label (a publish, a
 * rollout changed or aborted by hand, an approved release, a save that publishes): aborted, with the reason,
 * recorded as `rollout.aborted`. Called inside that move's transaction, the prompt's row locked.
 */
export async function endPlanOnMove(
  tx: ProjectStore,
  change: PromptChange,
  prompt: PromptRow,
  label: string,
  at: string,
  by: string,
  production: string | null,
): Promise<void> {
  const plans = plansOf(tx);
  const row = await plans.active(tx.projectId, prompt.id, label);
  if (!row) return;
  const reason = `the label was changed outside the plan by ${by}`;
  const decision: PlanDecisionOut = { verdict: "abort", at, step: row.step, results: [], minimums: null, by };
  const to = { status: "aborted" as const, step: row.step, stepStartedAt: row.step_started_at, endReason: reason };
  const columns = decidedColumns(row, decision);
  if (!(await plans.decide(row.id, row, { ...to, ...columns }, at))) return;
  const after: PlanRow = {
    ...row,
    status: "aborted",
    ended_at: at,
    end_reason: reason,
    updated_at: at,
    last_decision: columns.lastDecision,
    decisions: columns.decisions,
  };
  recordDecision(change, prompt, row, after, "rollout.aborted", decision, production);
}
