// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/**
 * A prompt's evaluation defaults (issue 38, docs/evaluations.md "Default checks"): the check set the Evaluate
 * screen starts from, and the dataset it picks, saved by an editor for everyone who evaluates the prompt. One
 * row per prompt, gone with the prompt.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("evaluation_defaults")
    .addColumn("project_id", "varchar(40)", (c) => c.notNull())
    .addColumn("prompt_id", "varchar(64)", (c) => c.notNull())
    // JSON: the check set as it was sent (validated), not pinned: judges resolve when an evaluation starts.
    .addColumn("checks", "text", (c) => c.notNull())
    // A dataset of the project (its newest version when an evaluation starts), or none.
    .addColumn("dataset_id", "varchar(40)")
    .addColumn("updated_at", "varchar(30)", (c) => c.notNull())
    .addColumn("updated_by", "varchar(300)")
    .addPrimaryKeyConstraint("evaluation_defaults_pk", ["project_id", "prompt_id"])
    .addForeignKeyConstraint(
      "evaluation_defaults_prompt",
      ["project_id", "prompt_id"],
      "prompts",
      ["project_id", "id"],
      (fk) => fk.onDelete("cascade"),
    )
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("evaluation_defaults").execute();
}
