// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/**
 * The playground: a project's model connections (the API key sealed with the server's secret key), saved
 * examples per prompt, and the results kept per (example, version hash, settings hash).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("model_connections")
    .addColumn("id", "varchar(40)", (c) => c.primaryKey())
    .addColumn("project_id", "varchar(40)", (c) => c.notNull().references("projects.id"))
    .addColumn("name", "varchar(100)", (c) => c.notNull())
    .addColumn("base_url", "varchar(2048)", (c) => c.notNull())
    // enc:v1:<key id>:<iv>:<ciphertext+tag>, or null when the provider needs no key (Ollama).
    .addColumn("api_key", "text")
    // JSON array of model names.
    .addColumn("models", "text", (c) => c.notNull())
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addColumn("updated_at", "varchar(30)", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("model_connections_project").on("model_connections").column("project_id").execute();

  await db.schema
    .createTable("prompt_examples")
    .addColumn("id", "varchar(40)", (c) => c.primaryKey())
    .addColumn("project_id", "varchar(40)", (c) => c.notNull())
    .addColumn("prompt_id", "varchar(64)", (c) => c.notNull())
    .addColumn("name", "varchar(200)", (c) => c.notNull())
    // JSON object of variable values, JSON array of chat messages.
    .addColumn("variables", "text", (c) => c.notNull())
    .addColumn("messages", "text", (c) => c.notNull())
    .addColumn("good_answer", "text")
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addColumn("updated_at", "varchar(30)", (c) => c.notNull())
    .addForeignKeyConstraint(
      "prompt_examples_prompt",
      ["project_id", "prompt_id"],
      "prompts",
      ["project_id", "id"],
      (fk) => fk.onDelete("cascade"),
    )
    .execute();
  await db.schema
    .createIndex("prompt_examples_prompt_idx")
    .on("prompt_examples")
    .columns(["project_id", "prompt_id"])
    .execute();

  await db.schema
    .createTable("example_results")
    .addColumn("example_id", "varchar(40)", (c) => c.notNull().references("prompt_examples.id").onDelete("cascade"))
    .addColumn("project_id", "varchar(40)", (c) => c.notNull())
    .addColumn("prompt_id", "varchar(64)", (c) => c.notNull())
    .addColumn("version", "varchar(64)", (c) => c.notNull())
    .addColumn("settings_hash", "varchar(64)", (c) => c.notNull())
    // JSON: the settings (connection, guard, model), the answer, the usage.
    .addColumn("settings", "text", (c) => c.notNull())
    .addColumn("answer", "text", (c) => c.notNull())
    .addColumn("finish_reason", "varchar(40)")
    .addColumn("usage", "text")
    .addColumn("ttft_ms", "integer")
    .addColumn("total_ms", "integer", (c) => c.notNull())
    .addColumn("ran_at", "varchar(30)", (c) => c.notNull())
    .addPrimaryKeyConstraint("example_results_pk", ["example_id", "version", "settings_hash"])
    .execute();
  // "Which examples has this version been tried on": the history's count, a release's comparison.
  await db.schema
    .createIndex("example_results_version")
    .on("example_results")
    .columns(["project_id", "prompt_id", "version"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("example_results").execute();
  await db.schema.dropTable("prompt_examples").execute();
  await db.schema.dropTable("model_connections").execute();
}
