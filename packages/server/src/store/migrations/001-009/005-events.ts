// Frozen: a migration never changes once released and never imports application code.
import { type Kysely, PostgresAdapter } from "kysely";

/**
 * Change events, recorded in the transaction of the change: what the events stream replays and webhooks
 * deliver. Ids only grow (AUTOINCREMENT on SQLite, so ids of pruned rows are never reused).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable("events")
    .addColumn("id", postgres ? "bigserial" : "integer", (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn("project_id", "varchar(40)", (c) => c.notNull())
    .addColumn("type", "varchar(40)", (c) => c.notNull())
    .addColumn("prompt_id", "varchar(64)", (c) => c.notNull())
    .addColumn("version", "char(64)", (c) => c.notNull())
    .addColumn("production_version", "char(64)")
    // Null after a deletion, like production_version.
    .addColumn("latest_version", "char(64)")
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("events_project").on("events").columns(["project_id", "id"]).execute();
  await db.schema.createIndex("events_created").on("events").column("created_at").execute();
  // One row: events with ids up to `pruned_through` were deleted, so a replay from before it is a reset.
  await db.schema
    .createTable("event_horizon")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("pruned_through", "bigint", (c) => c.notNull())
    .execute();
  await db.insertInto("event_horizon").values({ id: 1, pruned_through: 0 }).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("event_horizon").execute();
  await db.schema.dropTable("events").execute();
}
