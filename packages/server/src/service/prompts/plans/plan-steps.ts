/**
 * A plan's step applied (docs/rollouts.md "Plans"): the label's move and the plan's conditional update in one
 * transaction, with the decision's audit row and event. Of any number of instances or people deciding the
 * same step at once, one changes the row; the others' moves roll back with their lost update.
 */
import { AppError } from "@promptstore/core/errors";
import { PRODUCTION } from "@promptstore/core/labels";
import type { PlanDecisionOut } from "@promptstore/core/rollouts/plan-view";
import type { Kysely } from "kysely";
import type { PromptRow } from "../../../store/prompts/prompt-rows.js";
import type { ProjectStore } from "../../../store/prompts/prompts.js";
import type { PlanMove, PlanRow } from "../../../store/rollouts/rollout-plans.js";
import type { Database } from "../../../store/schema.js";
import { type LabelGate, type LabelMove, moveLabel } from "../label-moves.js";
import type { PromptChange } from "../prompt-changes.js";
import { decidedColumns, type PlanEventType, plansOf, recordDecision, stepStartsOf, stepsOf } from "./plan-records.js";

/** What plans need of PromptService: its store, its recording of a change, its notice and its gate. */
export interface PlanContext {
  store(projectId: string): ProjectStore;
  record(tx: ProjectStore, change: PromptChange): Promise<void>;
  changed(projectId: string, promptId: string): void;
  gate(): LabelGate;
  db(): Kysely<Database>;
}

/** Another decision changed the plan first: this one's transaction rolls back, moving nothing. */
export class LostDecision extends AppError {
  constructor(id: string) {
    super("conflict", `plan: ${id} was decided meanwhile`);
  }
}

export type StepVerdict = "advance" | "complete" | "abort";

/** Whether advancing from the plan's step completes it (no step after it, or the next one is at 100). */
export function advanceCompletes(row: PlanRow): boolean {
  const next = stepsOf(row)[row.step + 1];
  return next === undefined || next.percent === 100;
}

/**
 * Applies `verdict` to the plan `row` (read in `tx`, the prompt's row locked): moves the label, changes the plan
 * from where it stood, and records the decision. Returns the plan after it.
 */
export async function applyStep(
  tx: ProjectStore,
  change: PromptChange,
  prompt: PromptRow,
  row: PlanRow,
  verdict: StepVerdict,
  decision: PlanDecisionOut,
  at: string,
  gate: LabelGate,
  endReason: string | null = null,
): Promise<PlanRow> {
  const { label } = row;
  let move: LabelMove;
  let to: PlanMove;
  let type: PlanEventType;
  if (verdict === "abort") {
    // The label serves its current (from) version to everyone: the rollout is cleared.
    move = { label, target: row.from_version, byPlan: true };
    to = { status: "aborted", step: row.step, stepStartedAt: row.step_started_at, endReason };
    type = "rollout.aborted";
  } else if (verdict === "complete") {
    move = { label, target: row.version, byPlan: true };
    to = { status: "completed", step: row.step, stepStartedAt: row.step_started_at };
    type = "rollout.completed";
  } else {
    const next = row.step + 1;
    const percent = stepsOf(row)[next]?.percent as number;
    move = { label, target: row.version, percent, byPlan: true };
    to = {
      status: row.status,
      step: next,
      stepStartedAt: at,
      stepStarts: JSON.stringify([...stepStartsOf(row).slice(0, next), at]),
    };
    type = "rollout.advanced";
  }
  await moveLabel(tx, change, prompt, move, at, gate);
  const columns = decidedColumns(row, decision);
  if (!(await plansOf(tx).decide(row.id, row, { ...to, ...columns }, at))) {
    throw new LostDecision(row.id);
  }
  const after: PlanRow = {
    ...row,
    status: to.status,
    step: to.step,
    step_started_at: to.stepStartedAt,
    updated_at: at,
    last_decision: columns.lastDecision,
    decisions: columns.decisions,
    ...(to.stepStarts !== undefined ? { step_starts: to.stepStarts } : {}),
    ...(to.status === "aborted" || to.status === "completed" ? { ended_at: at } : {}),
    ...(to.endReason !== undefined ? { end_reason: to.endReason } : {}),
  };
  const production =
    label !== PRODUCTION
      ? prompt.production_version
      : verdict === "abort"
        ? row.from_version
        : verdict === "complete"
          ? row.version
          : prompt.production_version;
  recordDecision(change, prompt, row, after, type, decision, production);
  return after;
}
