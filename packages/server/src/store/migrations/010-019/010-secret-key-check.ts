// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/**
 * One row sealed with the server's secret key on first start, so that a later start with another key fails
 * at once instead of on each secret (webhook signing secrets, model providers' API keys).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("secret_key_check")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("key_id", "varchar(32)", (c) => c.notNull())
    .addColumn("sealed", "text", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("secret_key_check").execute();
}
