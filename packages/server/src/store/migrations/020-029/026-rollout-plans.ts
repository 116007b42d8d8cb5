// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/**
 * Rollout plans (issue 40, docs/rollouts.md "Plans"): a label's rollout taken through steps by the server.
 * One row per plan: the candidate and the version it started against, the steps and guardrails as the request
 * gave them (JSON), where it stands (status, step, when the step started) and the approved release request a
 * plan on a protected label started from. Deciding a step is one conditional UPDATE on (id, step, status),
 * so of any instances deciding the same step at once exactly one changes the row. Deleted with its prompt.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("rollout_plans")
    .addColumn("id", "varchar(40)", (c) => c.primaryKey())
    .addColumn("project_id", "varchar(40)", (c) => c.notNull())
    .addColumn("prompt_id", "varchar(64)", (c) => c.notNull())
    .addColumn("label", "varchar(32)", (c) => c.notNull())
    .addColumn("version", "varchar(64)", (c) => c.notNull())
    .addColumn("from_version", "varchar(64)", (c) => c.notNull())
    .addColumn("steps", "text", (c) => c.notNull())
    .addColumn("guardrails", "text", (c) => c.notNull())
    // running | paused | aborted | completed
    .addColumn("status", "varchar(20)", (c) => c.notNull())
    .addColumn("step", "integer", (c) => c.notNull())
    .addColumn("step_started_at", "varchar(30)", (c) => c.notNull())
    .addColumn("started_at", "varchar(30)", (c) => c.notNull())
    .addColumn("started_by", "varchar(200)", (c) => c.notNull())
    .addColumn("release_id", "varchar(40)")
    .addColumn("ended_at", "varchar(30)")
    .addColumn("updated_at", "varchar(30)", (c) => c.notNull())
    .addForeignKeyConstraint(
      "rollout_plans_prompt",
      ["project_id", "prompt_id"],
      "prompts",
      ["project_id", "id"],
      (fk) => fk.onDelete("cascade"),
    )
    .execute();
  await db.schema
    .createIndex("rollout_plans_label")
    .on("rollout_plans")
    .columns(["project_id", "prompt_id", "label", "status"])
    .execute();
  await db.schema.createIndex("rollout_plans_status").on("rollout_plans").columns(["status"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("rollout_plans").execute();
}
