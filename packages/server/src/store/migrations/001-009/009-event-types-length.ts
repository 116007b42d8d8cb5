// Frozen: a migration never changes once released and never imports application code.
import { type Kysely, PostgresAdapter } from "kysely";

/**
 * A webhook endpoint's event types as JSON: the release path's six types (migration 008) make the list of
 * every type longer than the 200 characters migration 006 gave it. SQLite does not enforce a varchar's
 * length; PostgreSQL does, and refused such an endpoint.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await db.schema
    .alterTable("webhook_endpoints")
    .alterColumn("event_types", (c) => c.setDataType("varchar(2000)"))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await db.schema
    .alterTable("webhook_endpoints")
    .alterColumn("event_types", (c) => c.setDataType("varchar(200)"))
    .execute();
}
