// Frozen: a migration never changes once released and never imports application code.
import { type Kysely, PostgresAdapter } from "kysely";

/**
 * Webhooks: a project's endpoints, and one delivery row per (endpoint, event), written in the transaction of
 * the change and worked off by the dispatcher of any instance.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable("webhook_endpoints")
    .addColumn("id", "varchar(40)", (c) => c.primaryKey())
    .addColumn("project_id", "varchar(40)", (c) => c.notNull().references("projects.id"))
    .addColumn("url", "varchar(2048)", (c) => c.notNull())
    .addColumn("description", "varchar(500)", (c) => c.notNull())
    // JSON array of event types.
    .addColumn("event_types", "varchar(200)", (c) => c.notNull())
    .addColumn("enabled", "integer", (c) => c.notNull())
    .addColumn("secret", "varchar(100)", (c) => c.notNull())
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addColumn("updated_at", "varchar(30)", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("webhook_endpoints_project").on("webhook_endpoints").column("project_id").execute();

  await db.schema
    .createTable("webhook_deliveries")
    .addColumn("id", postgres ? "bigserial" : "integer", (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn("endpoint_id", "varchar(40)", (c) => c.notNull().references("webhook_endpoints.id").onDelete("cascade"))
    .addColumn("project_id", "varchar(40)", (c) => c.notNull())
    .addColumn("event_id", "bigint", (c) => c.notNull())
    .addColumn("event_type", "varchar(40)", (c) => c.notNull())
    .addColumn("prompt_id", "varchar(64)", (c) => c.notNull())
    // The request body, fixed when the event is recorded: events are pruned before retries end.
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("status", "varchar(20)", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "varchar(30)")
    .addColumn("locked_until", "varchar(30)")
    .addColumn("lock_token", "varchar(40)")
    .addColumn("first_attempt_at", "varchar(30)")
    .addColumn("last_attempt_at", "varchar(30)")
    .addColumn("last_response_code", "integer")
    .addColumn("last_error", "varchar(1000)")
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addColumn("delivered_at", "varchar(30)")
    .execute();
  // The head of each endpoint's queue (its oldest pending delivery), and the endpoint's history, newest first.
  await db.schema
    .createIndex("webhook_deliveries_endpoint")
    .on("webhook_deliveries")
    .columns(["endpoint_id", "status", "id"])
    .execute();
  await db.schema
    .createIndex("webhook_deliveries_due")
    .on("webhook_deliveries")
    .columns(["status", "next_attempt_at"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("webhook_deliveries").execute();
  await db.schema.dropTable("webhook_endpoints").execute();
}
