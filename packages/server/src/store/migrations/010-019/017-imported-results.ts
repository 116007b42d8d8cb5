// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/**
 * Whether a kept example result came in through an import rather than from a run on this server (issue 35):
 * an imported one is shown as such and never answers for a run. Rows kept before this migration read as run
 * here: nothing recorded which of them were imported.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("example_results")
    .addColumn("imported", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("example_results").dropColumn("imported").execute();
}
