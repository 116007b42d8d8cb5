// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/**
 * Required evaluations (issue 39, docs/evaluations.md "Required evaluations"): a label's settings may name
 * the evaluation a version must pass before the label points to it, and whether a rollback to a version the
 * label served before is always allowed. An evaluation run for a label's requirement says so: the label, the
 * requirement's hash then (its JSON and the dataset version it ran on) and the candidate version.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("label_settings").addColumn("requirement", "text").execute();
  await db.schema.alterTable("label_settings").addColumn("requirement_hash", "varchar(64)").execute();
  await db.schema
    .alterTable("label_settings")
    .addColumn("rollback_allowed", "integer", (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.alterTable("evaluations").addColumn("requirement_label", "varchar(100)").execute();
  await db.schema.alterTable("evaluations").addColumn("requirement_hash", "varchar(64)").execute();
  await db.schema.alterTable("evaluations").addColumn("candidate", "varchar(64)").execute();
  await db.schema
    .createIndex("evaluations_requirement")
    .on("evaluations")
    .columns(["project_id", "prompt_id", "requirement_label", "candidate"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("evaluations_requirement").execute();
  for (const column of ["candidate", "requirement_hash", "requirement_label"]) {
    await db.schema.alterTable("evaluations").dropColumn(column).execute();
  }
  for (const column of ["rollback_allowed", "requirement_hash", "requirement"]) {
    await db.schema.alterTable("label_settings").dropColumn(column).execute();
  }
}
