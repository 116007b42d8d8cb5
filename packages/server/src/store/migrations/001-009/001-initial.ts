// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("organizations")
    .addColumn("id", "varchar(40)", (c) => c.primaryKey())
    .addColumn("name", "varchar(200)", (c) => c.notNull().unique())
    .addColumn("plan", "varchar(20)", (c) => c.notNull())
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("projects")
    .addColumn("id", "varchar(40)", (c) => c.primaryKey())
    .addColumn("org_id", "varchar(40)", (c) => c.notNull().references("organizations.id"))
    .addColumn("name", "varchar(200)", (c) => c.notNull())
    .addColumn("prompt_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("projects_org").on("projects").column("org_id").execute();

  await db.schema
    .createTable("api_keys")
    .addColumn("id", "varchar(40)", (c) => c.primaryKey())
    .addColumn("project_id", "varchar(40)", (c) => c.notNull().references("projects.id"))
    .addColumn("prefix", "varchar(20)", (c) => c.notNull())
    .addColumn("key_hash", "char(64)", (c) => c.notNull().unique())
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addColumn("revoked_at", "varchar(30)")
    .execute();
  await db.schema.createIndex("api_keys_project").on("api_keys").column("project_id").execute();

  await db.schema
    .createTable("prompts")
    .addColumn("project_id", "varchar(40)", (c) => c.notNull().references("projects.id"))
    .addColumn("id", "varchar(64)", (c) => c.notNull())
    .addColumn("name", "varchar(200)", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull())
    .addColumn("production_version", "char(64)")
    .addColumn("latest_version", "char(64)", (c) => c.notNull())
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addColumn("updated_at", "varchar(30)", (c) => c.notNull())
    .addPrimaryKeyConstraint("prompts_pk", ["project_id", "id"])
    .execute();
  await db.schema.createIndex("prompts_list").on("prompts").columns(["project_id", "created_at", "id"]).execute();

  await db.schema
    .createTable("versions")
    .addColumn("project_id", "varchar(40)", (c) => c.notNull())
    .addColumn("prompt_id", "varchar(64)", (c) => c.notNull())
    .addColumn("hash", "char(64)", (c) => c.notNull())
    .addColumn("message", "text")
    // Lets a read skip the tools query for the many versions that have none.
    .addColumn("tool_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    // Two concurrent saves of the same content make one version: the database decides, not a prior read.
    .addPrimaryKeyConstraint("versions_pk", ["project_id", "prompt_id", "hash"])
    .addForeignKeyConstraint("versions_prompt", ["project_id", "prompt_id"], "prompts", ["project_id", "id"])
    .execute();
  await db.schema
    .createIndex("versions_by_time")
    .on("versions")
    .columns(["project_id", "prompt_id", "created_at"])
    .execute();

  for (const table of ["version_sections", "version_tools"] as const) {
    let builder = db.schema
      .createTable(table)
      .addColumn("project_id", "varchar(40)", (c) => c.notNull())
      .addColumn("prompt_id", "varchar(64)", (c) => c.notNull())
      .addColumn("hash", "char(64)", (c) => c.notNull())
      .addColumn("position", "integer", (c) => c.notNull());
    builder =
      table === "version_sections"
        ? builder
            .addColumn("section_id", "varchar(20)", (c) => c.notNull())
            .addColumn("title", "varchar(100)", (c) => c.notNull())
            .addColumn("content", "text", (c) => c.notNull())
            .addColumn("enabled", "integer", (c) => c.notNull())
        : builder
            .addColumn("name", "varchar(64)", (c) => c.notNull())
            .addColumn("definition", "text", (c) => c.notNull());
    await builder
      .addPrimaryKeyConstraint(`${table}_pk`, ["project_id", "prompt_id", "hash", "position"])
      .addForeignKeyConstraint(`${table}_version`, ["project_id", "prompt_id", "hash"], "versions", [
        "project_id",
        "prompt_id",
        "hash",
      ])
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    "version_tools",
    "version_sections",
    "versions",
    "prompts",
    "api_keys",
    "projects",
    "organizations",
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
