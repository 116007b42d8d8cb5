// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/** Dashboard accounts: users, their roles in organizations, server-side sessions; who saved a version. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("users")
    .addColumn("id", "varchar(40)", (c) => c.primaryKey())
    // Stored lowercased, so uniqueness is case-insensitive in both dialects.
    .addColumn("email", "varchar(254)", (c) => c.notNull().unique())
    .addColumn("password_hash", "varchar(255)", (c) => c.notNull())
    .addColumn("must_change_password", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("memberships")
    .addColumn("org_id", "varchar(40)", (c) => c.notNull().references("organizations.id"))
    .addColumn("user_id", "varchar(40)", (c) => c.notNull().references("users.id"))
    .addColumn("role", "varchar(20)", (c) => c.notNull())
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addPrimaryKeyConstraint("memberships_pk", ["org_id", "user_id"])
    .execute();
  await db.schema.createIndex("memberships_user").on("memberships").column("user_id").execute();

  await db.schema
    .createTable("sessions")
    // SHA-256 of the cookie's token: a copy of the table does not let anyone sign in.
    .addColumn("token_hash", "char(64)", (c) => c.primaryKey())
    .addColumn("user_id", "varchar(40)", (c) => c.notNull().references("users.id"))
    .addColumn("csrf_token", "varchar(64)", (c) => c.notNull())
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addColumn("expires_at", "varchar(30)", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("sessions_user").on("sessions").column("user_id").execute();
  await db.schema.createIndex("sessions_expiry").on("sessions").column("expires_at").execute();

  await db.schema.alterTable("api_keys").addColumn("last_used_at", "varchar(30)").execute();
  await db.schema.alterTable("versions").addColumn("saved_by", "varchar(300)").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("versions").dropColumn("saved_by").execute();
  await db.schema.alterTable("api_keys").dropColumn("last_used_at").execute();
  for (const table of ["sessions", "memberships", "users"]) await db.schema.dropTable(table).execute();
}
