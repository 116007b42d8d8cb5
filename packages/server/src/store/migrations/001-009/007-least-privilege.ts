// Frozen: a migration never changes once released and never imports application code.
import { type Kysely, PostgresAdapter } from "kysely";

/**
 * Least privilege: each API key gets a scope (existing keys keep every power they had: `publish`), and an
 * audit trail records who changed what.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .alterTable("api_keys")
    .addColumn("scope", "varchar(10)", (c) => c.notNull().defaultTo("publish"))
    .execute();

  await db.schema
    .createTable("audit_log")
    .addColumn("id", postgres ? "bigserial" : "integer", (c) =>
      postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn("org_id", "varchar(40)", (c) => c.notNull())
    // Null for what concerns the whole organization (a plan change): every project's trail shows it.
    .addColumn("project_id", "varchar(40)")
    .addColumn("at", "varchar(30)", (c) => c.notNull())
    .addColumn("actor", "varchar(300)", (c) => c.notNull())
    .addColumn("action", "varchar(40)", (c) => c.notNull())
    .addColumn("target", "varchar(1100)", (c) => c.notNull())
    .addColumn("before", "varchar(100)")
    .addColumn("after", "varchar(100)")
    .execute();
  await db.schema.createIndex("audit_log_project").on("audit_log").columns(["project_id", "id"]).execute();
  await db.schema.createIndex("audit_log_org").on("audit_log").columns(["org_id", "id"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("audit_log").execute();
  await db.schema.alterTable("api_keys").dropColumn("scope").execute();
}
