// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/** The shape rate-limiter-flexible's PostgreSQL limiter uses; harmless (and unused) on SQLite. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("rate_limits")
    .addColumn("key", "varchar(255)", (c) => c.primaryKey())
    .addColumn("points", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("expire", "bigint")
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("rate_limits").execute();
}
