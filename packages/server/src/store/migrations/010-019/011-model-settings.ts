// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/**
 * A version's model settings (issue 21), as the canonical JSON the version's hash covers; null for a version
 * without them, which every version saved before this migration is.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("versions").addColumn("model", "text").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("versions").dropColumn("model").execute();
}
