import type { Kysely, Selectable } from "kysely";
import type { Database, RolloutPlansTable } from "../schema.js";

export type PlanRow = Selectable<RolloutPlansTable>;
export type PlanStatus = RolloutPlansTable["status"];

/** Where a decision takes a plan: its status, its step and when that step started. */
export interface PlanMove {
  status: PlanStatus;
  step: number;
  stepStartedAt: string;
  /** Why it ended (an abort); kept as it was when not given. */
  endReason?: string | null;
  /** The decision's numbers as JSON; kept as they were when not given. */
  lastDecision?: string | null;
  /** Every decision that moved the plan as JSON; kept as they were when not given. */
  decisions?: string;
  /** Every step's start as JSON; kept as they were when not given. */
  stepStarts?: string;
}

/**
 * Rollout plans (docs/rollouts.md "Plans"). Every change of a plan's standing is conditional on the standing
 * it was decided from (id, step, status): of any number of instances deciding one step at once, exactly one
 * changes the row and the others learn they lost, so each step is decided once. Called inside the
 * transaction that also moves the label, so a lost decision moves nothing.
 */
export class RolloutPlans {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: PlanRow): Promise<void> {
    await this.db.insertInto("rollout_plans").values(row).execute();
  }

  async get(projectId: string, id: string): Promise<PlanRow | undefined> {
    return this.db
      .selectFrom("rollout_plans")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /** The label's plan that is running or paused, if any (at most one, kept so by the service under the prompt's lock). */
  async active(projectId: string, promptId: string, label: string): Promise<PlanRow | undefined> {
    return this.db
      .selectFrom("rollout_plans")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("prompt_id", "=", promptId)
      .where("label", "=", label)
      .where("status", "in", ["running", "paused"])
      .orderBy("started_at", "desc")
      .executeTakeFirst();
  }

  /** The label's newest plan, active or ended. */
  async newest(projectId: string, promptId: string, label: string): Promise<PlanRow | undefined> {
    return this.db
      .selectFrom("rollout_plans")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("prompt_id", "=", promptId)
      .where("label", "=", label)
      .orderBy("started_at", "desc")
      .orderBy("id", "desc")
      .executeTakeFirst();
  }

  /** The prompt's plans on every label, newest first: the rollouts its history shows. */
  async ofPrompt(projectId: string, promptId: string, limit: number): Promise<PlanRow[]> {
    return this.db
      .selectFrom("rollout_plans")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("prompt_id", "=", promptId)
      .orderBy("started_at", "desc")
      .orderBy("id", "desc")
      .limit(limit)
      .execute();
  }

  /** The organization a project belongs to: whose trail a runner's decisions are written to. */
  async orgOf(projectId: string): Promise<string | undefined> {
    const row = await this.db.selectFrom("projects").select("org_id").where("id", "=", projectId).executeTakeFirst();
    return row?.org_id;
  }

  /** Keeps a decision that moved nothing (a wait) on the plan, if it still stands where it was decided from. */
  async note(id: string, from: { step: number; status: PlanStatus }, lastDecision: string): Promise<void> {
    await this.db
      .updateTable("rollout_plans")
      .set({ last_decision: lastDecision })
      .where("id", "=", id)
      .where("step", "=", from.step)
      .where("status", "=", from.status)
      .execute();
  }

  /** Every running plan, oldest first: what a runner's tick looks at. */
  async running(limit = 500): Promise<PlanRow[]> {
    return this.db
      .selectFrom("rollout_plans")
      .selectAll()
      .where("status", "=", "running")
      .orderBy("started_at")
      .orderBy("id")
      .limit(limit)
      .execute();
  }

  /**
   * Moves the plan from (step, status) to `to`; false when another decision got there first (the row no longer
   * stands where this one was decided from).
   */
  async decide(id: string, from: { step: number; status: PlanStatus }, to: PlanMove, at: string): Promise<boolean> {
    const ended = to.status === "aborted" || to.status === "completed";
    const result = await this.db
      .updateTable("rollout_plans")
      .set({
        status: to.status,
        step: to.step,
        step_started_at: to.stepStartedAt,
        updated_at: at,
        ...(ended ? { ended_at: at } : {}),
        ...(to.endReason !== undefined ? { end_reason: to.endReason } : {}),
        ...(to.lastDecision !== undefined ? { last_decision: to.lastDecision } : {}),
        ...(to.stepStarts !== undefined ? { step_starts: to.stepStarts } : {}),
        ...(to.decisions !== undefined ? { decisions: to.decisions } : {}),
      })
      .where("id", "=", id)
      .where("step", "=", from.step)
      .where("status", "=", from.status)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
