// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/**
 * Rollout plans' server half (issue 40, docs/rollouts.md "Plans"): a plan keeps why it ended (`end_reason`)
 * and the numbers of its last decision (`last_decision`, JSON: the verdict, each guardrail's estimate and
 * interval, the step's minimums), every decision that moved it (`decisions`, JSON, oldest first: the lines of
 * the prompt's history), and a release request may carry the plan its approval starts (`plan`, JSON:
 * the steps and guardrails).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("rollout_plans").addColumn("end_reason", "varchar(300)").execute();
  await db.schema.alterTable("rollout_plans").addColumn("last_decision", "text").execute();
  await db.schema.alterTable("rollout_plans").addColumn("step_starts", "text").execute();
  await db.schema.alterTable("rollout_plans").addColumn("decisions", "text").execute();
  await db.schema.alterTable("release_requests").addColumn("plan", "text").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("release_requests").dropColumn("plan").execute();
  await db.schema.alterTable("rollout_plans").dropColumn("decisions").execute();
  await db.schema.alterTable("rollout_plans").dropColumn("step_starts").execute();
  await db.schema.alterTable("rollout_plans").dropColumn("last_decision").execute();
  await db.schema.alterTable("rollout_plans").dropColumn("end_reason").execute();
}
