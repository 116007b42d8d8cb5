// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/**
 * Includes (issue 41, docs/includes.md). A version's pins are content: one row per include in
 * `version_includes` (the reference as written, what it follows, the prompt and the full hash it took),
 * read by the used-by graph through the included prompt. On `versions`: the includes as reads show them
 * (JSON, null when none), how deep its includes nest, and every prompt they reach (JSON, null when none),
 * so a save checks depth and cycles from the versions it pins without walking them. Versions saved before
 * this migration have no includes: nulls.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("versions").addColumn("includes_json", "text").execute();
  await db.schema.alterTable("versions").addColumn("include_depth", "integer").execute();
  await db.schema.alterTable("versions").addColumn("included_prompts", "text").execute();
  await db.schema
    .createTable("version_includes")
    .addColumn("project_id", "varchar(40)", (c) => c.notNull())
    .addColumn("prompt_id", "varchar(64)", (c) => c.notNull())
    .addColumn("hash", "char(64)", (c) => c.notNull())
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("reference", "text", (c) => c.notNull())
    .addColumn("pointer", "varchar(64)", (c) => c.notNull())
    .addColumn("included_prompt_id", "varchar(64)", (c) => c.notNull())
    .addColumn("included_hash", "char(64)", (c) => c.notNull())
    .addPrimaryKeyConstraint("version_includes_pk", ["project_id", "prompt_id", "hash", "position"])
    .addForeignKeyConstraint("version_includes_version", ["project_id", "prompt_id", "hash"], "versions", [
      "project_id",
      "prompt_id",
      "hash",
    ])
    .execute();
  await db.schema
    .createIndex("version_includes_included")
    .on("version_includes")
    .columns(["project_id", "included_prompt_id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("version_includes").execute();
  for (const column of ["included_prompts", "include_depth", "includes_json"]) {
    await db.schema.alterTable("versions").dropColumn(column).execute();
  }
}
