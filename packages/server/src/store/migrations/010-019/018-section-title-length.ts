// Frozen: a migration never changes once released and never imports application code.
import { type Kysely, PostgresAdapter } from "kysely";

/**
 * A section's title holds up to 1000 characters (it was 100): real system prompts have Markdown headings longer
 * than 100 characters, and each heading is a title. SQLite does not enforce a varchar's length; PostgreSQL does.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await db.schema
    .alterTable("version_sections")
    .alterColumn("title", (c) => c.setDataType("varchar(1000)"))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await db.schema
    .alterTable("version_sections")
    .alterColumn("title", (c) => c.setDataType("varchar(100)"))
    .execute();
}
