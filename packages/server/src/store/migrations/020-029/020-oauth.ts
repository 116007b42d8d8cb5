// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/**
 * MCP authorization (OAuth 2.1, docs/mcp.md): the clients that may ask (registered through RFC 7591, or
 * the cached metadata document of a URL client id), the authorization requests waiting for a person's
 * consent (then holding the one-time code), the grants a person gave (one client, one project, one scope:
 * a refresh-token family) and the tokens of each grant, SHA-256-hashed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("oauth_clients")
    .addColumn("id", "varchar(2048)", (c) => c.primaryKey())
    // `registered` (RFC 7591) or `document` (a Client ID Metadata Document, fetched and cached).
    .addColumn("kind", "varchar(20)", (c) => c.notNull())
    .addColumn("name", "varchar(200)", (c) => c.notNull())
    // JSON array of the exact redirect URIs.
    .addColumn("redirect_uris", "text", (c) => c.notNull())
    // JSON: the client's metadata as registered or fetched.
    .addColumn("metadata", "text", (c) => c.notNull())
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    // A document's cached copy is fetched again after this; null for a registered client.
    .addColumn("expires_at", "varchar(30)")
    .execute();

  await db.schema
    .createTable("oauth_requests")
    .addColumn("id", "varchar(64)", (c) => c.primaryKey())
    .addColumn("client_id", "varchar(2048)", (c) => c.notNull())
    .addColumn("redirect_uri", "varchar(2048)", (c) => c.notNull())
    .addColumn("state", "varchar(1024)", (c) => c.notNull())
    .addColumn("code_challenge", "varchar(128)", (c) => c.notNull())
    .addColumn("scope", "varchar(100)")
    .addColumn("resource", "varchar(2048)", (c) => c.notNull())
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addColumn("expires_at", "varchar(30)", (c) => c.notNull())
    // Set once the person decided: the code (hashed), who, where and what.
    .addColumn("decided_at", "varchar(30)")
    .addColumn("code_hash", "varchar(64)", (c) => c.unique())
    .addColumn("code_expires_at", "varchar(30)")
    .addColumn("user_id", "varchar(40)")
    .addColumn("project_id", "varchar(40)")
    .addColumn("granted_scope", "varchar(20)")
    .addColumn("used_at", "varchar(30)")
    // The grant the code was exchanged for: a second use of the code revokes it.
    .addColumn("grant_id", "varchar(40)")
    .execute();

  await db.schema
    .createTable("oauth_grants")
    .addColumn("id", "varchar(40)", (c) => c.primaryKey())
    .addColumn("user_id", "varchar(40)", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("org_id", "varchar(40)", (c) => c.notNull())
    .addColumn("project_id", "varchar(40)", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("scope", "varchar(20)", (c) => c.notNull())
    .addColumn("client_id", "varchar(2048)", (c) => c.notNull())
    .addColumn("client_name", "varchar(200)", (c) => c.notNull())
    .addColumn("resource", "varchar(2048)", (c) => c.notNull())
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addColumn("last_used_at", "varchar(30)")
    .addColumn("revoked_at", "varchar(30)")
    .addColumn("revoked_by", "varchar(300)")
    .execute();
  await db.schema.createIndex("oauth_grants_user").on("oauth_grants").column("user_id").execute();
  await db.schema.createIndex("oauth_grants_org").on("oauth_grants").column("org_id").execute();

  await db.schema
    .createTable("oauth_tokens")
    .addColumn("token_hash", "varchar(64)", (c) => c.primaryKey())
    // The family: every token of a grant, its refresh rotations included.
    .addColumn("grant_id", "varchar(40)", (c) => c.notNull().references("oauth_grants.id").onDelete("cascade"))
    // `access` or `refresh`.
    .addColumn("kind", "varchar(10)", (c) => c.notNull())
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addColumn("expires_at", "varchar(30)", (c) => c.notNull())
    // A refresh token once exchanged (rotation); presenting it again revokes the whole grant.
    .addColumn("used_at", "varchar(30)")
    .execute();
  await db.schema.createIndex("oauth_tokens_grant").on("oauth_tokens").column("grant_id").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("oauth_tokens").execute();
  await db.schema.dropTable("oauth_grants").execute();
  await db.schema.dropTable("oauth_requests").execute();
  await db.schema.dropTable("oauth_clients").execute();
}
