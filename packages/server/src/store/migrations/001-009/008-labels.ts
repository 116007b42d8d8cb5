// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/**
 * Labels (environments), their per-project settings, rollouts and release requests, and the details events
 * of them carry. `production` stays in
 * `prompts.production_version` (the contract's field); `prompt_labels` holds every other label.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // What an event of the release path carries beyond the pointers (its label, the version it left, a
  // rollout, a release request), as JSON; null for the events there were before.
  await db.schema.alterTable("events").addColumn("details", "text").execute();

  await db.schema
    .createTable("prompt_labels")
    .addColumn("project_id", "varchar(40)", (c) => c.notNull())
    .addColumn("prompt_id", "varchar(64)", (c) => c.notNull())
    .addColumn("name", "varchar(32)", (c) => c.notNull())
    .addColumn("version", "varchar(64)", (c) => c.notNull())
    .addColumn("updated_at", "varchar(30)", (c) => c.notNull())
    .addPrimaryKeyConstraint("prompt_labels_pk", ["project_id", "prompt_id", "name"])
    .addForeignKeyConstraint(
      "prompt_labels_prompt",
      ["project_id", "prompt_id"],
      "prompts",
      ["project_id", "id"],
      (fk) => fk.onDelete("cascade"),
    )
    .execute();
  // "Which labels does this project use": a read of a label-shaped version asks it.
  await db.schema.createIndex("prompt_labels_name").on("prompt_labels").columns(["project_id", "name"]).execute();

  await db.schema
    .createTable("rollouts")
    .addColumn("project_id", "varchar(40)", (c) => c.notNull())
    .addColumn("prompt_id", "varchar(64)", (c) => c.notNull())
    .addColumn("label", "varchar(32)", (c) => c.notNull())
    .addColumn("candidate", "varchar(64)", (c) => c.notNull())
    .addColumn("percent", "integer", (c) => c.notNull())
    .addColumn("started_at", "varchar(30)", (c) => c.notNull())
    .addPrimaryKeyConstraint("rollouts_pk", ["project_id", "prompt_id", "label"])
    .addForeignKeyConstraint("rollouts_prompt", ["project_id", "prompt_id"], "prompts", ["project_id", "id"], (fk) =>
      fk.onDelete("cascade"),
    )
    .execute();

  await db.schema
    .createTable("label_settings")
    .addColumn("project_id", "varchar(40)", (c) => c.notNull())
    .addColumn("name", "varchar(32)", (c) => c.notNull())
    .addColumn("description", "varchar(500)", (c) => c.notNull().defaultTo(""))
    .addColumn("protected", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("fallback", "varchar(32)")
    .addColumn("updated_at", "varchar(30)", (c) => c.notNull())
    .addPrimaryKeyConstraint("label_settings_pk", ["project_id", "name"])
    .execute();

  await db.schema
    .createTable("release_requests")
    .addColumn("id", "varchar(40)", (c) => c.primaryKey())
    .addColumn("project_id", "varchar(40)", (c) => c.notNull())
    .addColumn("prompt_id", "varchar(64)", (c) => c.notNull())
    .addColumn("label", "varchar(32)", (c) => c.notNull())
    .addColumn("version", "varchar(64)", (c) => c.notNull())
    // What the label pointed to when the request was made: approval moves it only from there.
    .addColumn("from_version", "varchar(64)")
    // A rollout's percent, or null for the whole label.
    .addColumn("percent", "integer")
    .addColumn("message", "varchar(1000)", (c) => c.notNull().defaultTo(""))
    .addColumn("status", "varchar(10)", (c) => c.notNull())
    .addColumn("requested_by", "varchar(300)", (c) => c.notNull())
    .addColumn("requested_at", "varchar(30)", (c) => c.notNull())
    .addColumn("decided_by", "varchar(300)")
    .addColumn("decided_at", "varchar(30)")
    .addColumn("comment", "varchar(1000)")
    .execute();
  await db.schema
    .createIndex("release_requests_project")
    .on("release_requests")
    .columns(["project_id", "status", "requested_at"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["release_requests", "label_settings", "rollouts", "prompt_labels"]) {
    await db.schema.dropTable(table).execute();
  }
  await db.schema.alterTable("events").dropColumn("details").execute();
}
