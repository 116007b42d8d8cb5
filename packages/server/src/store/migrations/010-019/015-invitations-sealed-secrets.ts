// Frozen: a migration never changes once released and never imports application code.
import { type Kysely, PostgresAdapter } from "kysely";

/**
 * Invitations to organizations (membership is accepted, never imposed), and room for sealed webhook
 * signing secrets: `enc:v1:<key id>:<iv>:<ciphertext>` is longer than the 100 characters migration 006
 * gave the plain secret. The secrets themselves are sealed at start-up, not here: a migration cannot know
 * the server's secret key (decisions.md, "Webhook signing secrets at rest").
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("invitations")
    .addColumn("id", "varchar(40)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(40)", (c) => c.notNull().references("organizations.id"))
    // Lowercased, like users.email.
    .addColumn("email", "varchar(254)", (c) => c.notNull())
    .addColumn("role", "varchar(20)", (c) => c.notNull())
    // SHA-256 of the link's token: a copy of the table does not let anyone join.
    .addColumn("token_hash", "char(64)", (c) => c.notNull().unique())
    .addColumn("invited_by", "varchar(300)", (c) => c.notNull())
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addColumn("expires_at", "varchar(30)", (c) => c.notNull())
    .addColumn("accepted_at", "varchar(30)")
    .addColumn("accepted_by", "varchar(40)")
    .addColumn("revoked_at", "varchar(30)")
    .execute();
  await db.schema.createIndex("invitations_org").on("invitations").columns(["org_id", "created_at"]).execute();

  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await db.schema
      .alterTable("webhook_endpoints")
      .alterColumn("secret", (c) => c.setDataType("varchar(400)"))
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("invitations").execute();
  // The secrets stay as wide as they are: narrowing would fail on every sealed one.
}
