// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/**
 * Evaluations (issue 38, docs/evaluations.md).
 *
 * Datasets are content-addressed like prompts: a case is stored once per dataset under its id (the SHA-256 of
 * its canonical JSON), and a dataset version is an ordered list of case ids whose hash is the SHA-256 of the
 * canonical array of its cases. A new version that shares most cases with the last one copies ids, not bodies.
 *
 * Answers and verdicts are kept by content, not by evaluation: an answer by (version hash, effective settings
 * hash, case id), a verdict by those and the check set's hash. An evaluation is a request over them (its
 * versions, a dataset version, a check set) with its state, its lease (the instance running it) and, once done,
 * its summary. What it could not get (a provider's failure, a check's error) is its own, in `evaluation_errors`,
 * and asked again by the next evaluation of the same content.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("datasets")
    .addColumn("id", "varchar(40)", (c) => c.primaryKey())
    .addColumn("project_id", "varchar(40)", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("name", "varchar(200)", (c) => c.notNull())
    .addColumn("description", "text")
    // The newest version's hash; null only while the first version is being built by an import.
    .addColumn("head", "varchar(64)")
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addColumn("updated_at", "varchar(30)", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("datasets_project_name")
    .on("datasets")
    .columns(["project_id", "name"])
    .unique()
    .execute();

  await db.schema
    .createTable("dataset_versions")
    .addColumn("dataset_id", "varchar(40)", (c) => c.notNull().references("datasets.id").onDelete("cascade"))
    .addColumn("hash", "varchar(64)", (c) => c.notNull())
    .addColumn("case_count", "integer", (c) => c.notNull())
    // The version this one was made from (an append or a replace), null for the first.
    .addColumn("parent", "varchar(64)")
    .addColumn("message", "varchar(500)")
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addColumn("created_by", "varchar(300)")
    .addPrimaryKeyConstraint("dataset_versions_pk", ["dataset_id", "hash"])
    .execute();

  await db.schema
    .createTable("dataset_cases")
    .addColumn("dataset_id", "varchar(40)", (c) => c.notNull().references("datasets.id").onDelete("cascade"))
    .addColumn("case_id", "varchar(64)", (c) => c.notNull())
    // The case's canonical JSON: what is hashed, exported and run.
    .addColumn("body", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("dataset_cases_pk", ["dataset_id", "case_id"])
    .execute();

  await db.schema
    .createTable("dataset_version_cases")
    .addColumn("dataset_id", "varchar(40)", (c) => c.notNull().references("datasets.id").onDelete("cascade"))
    .addColumn("version", "varchar(64)", (c) => c.notNull())
    // 0-based; the cases keep their order.
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("case_id", "varchar(64)", (c) => c.notNull())
    .addPrimaryKeyConstraint("dataset_version_cases_pk", ["dataset_id", "version", "position"])
    .execute();

  await db.schema
    .createTable("evaluations")
    .addColumn("id", "varchar(40)", (c) => c.primaryKey())
    .addColumn("project_id", "varchar(40)", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("prompt_id", "varchar(200)", (c) => c.notNull())
    // running, done, failed, stopped.
    .addColumn("status", "varchar(20)", (c) => c.notNull())
    // SHA-256 of the evaluation's content (its versions with their settings, the dataset version, the checks).
    .addColumn("content_key", "varchar(64)", (c) => c.notNull())
    // 1 when every answer and verdict was already kept: no provider call was made.
    .addColumn("reused", "integer", (c) => c.notNull())
    .addColumn("dataset_id", "varchar(40)", (c) => c.notNull())
    .addColumn("dataset_version", "varchar(64)", (c) => c.notNull())
    .addColumn("case_count", "integer", (c) => c.notNull())
    .addColumn("checks_hash", "varchar(64)", (c) => c.notNull())
    // JSON: the check set as given, judges pinned to a hash.
    .addColumn("checks", "text", (c) => c.notNull())
    // JSON array: per version { ref, version, draft?, settings, settings_hash }.
    .addColumn("versions", "text", (c) => c.notNull())
    .addColumn("connection_id", "varchar(40)", (c) => c.notNull())
    .addColumn("concurrency", "integer", (c) => c.notNull())
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addColumn("created_by", "varchar(300)")
    .addColumn("finished_at", "varchar(30)")
    // Why it failed or who stopped it.
    .addColumn("reason", "text")
    // The instance that runs it, until when (renewed while it runs; another instance takes over after).
    .addColumn("lease_owner", "varchar(64)")
    .addColumn("lease_until", "varchar(30)")
    .addColumn("stop_requested", "integer", (c) => c.notNull().defaultTo(0))
    // JSON: the per-version summary, written when it ends (and kept up to date while it runs).
    .addColumn("summary", "text")
    .execute();
  await db.schema
    .createIndex("evaluations_prompt")
    .on("evaluations")
    .columns(["project_id", "prompt_id", "created_at"])
    .execute();
  await db.schema.createIndex("evaluations_status").on("evaluations").columns(["status", "lease_until"]).execute();
  await db.schema.createIndex("evaluations_content").on("evaluations").columns(["project_id", "content_key"]).execute();

  await db.schema
    .createTable("evaluation_answers")
    .addColumn("project_id", "varchar(40)", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("version", "varchar(64)", (c) => c.notNull())
    .addColumn("settings_hash", "varchar(64)", (c) => c.notNull())
    .addColumn("case_id", "varchar(64)", (c) => c.notNull())
    // JSON: the assistant message.
    .addColumn("answer", "text", (c) => c.notNull())
    .addColumn("finish_reason", "varchar(40)")
    .addColumn("tokens_in", "integer")
    .addColumn("tokens_out", "integer")
    .addColumn("latency_ms", "integer", (c) => c.notNull())
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addPrimaryKeyConstraint("evaluation_answers_pk", ["project_id", "version", "settings_hash", "case_id"])
    .execute();

  await db.schema
    .createTable("evaluation_verdicts")
    .addColumn("project_id", "varchar(40)", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("version", "varchar(64)", (c) => c.notNull())
    .addColumn("settings_hash", "varchar(64)", (c) => c.notNull())
    .addColumn("checks_hash", "varchar(64)", (c) => c.notNull())
    .addColumn("case_id", "varchar(64)", (c) => c.notNull())
    // 1 when every check passed.
    .addColumn("pass", "integer", (c) => c.notNull())
    // JSON array, one per check in the set's order: { pass, score, reason }.
    .addColumn("verdicts", "text", (c) => c.notNull())
    .addColumn("created_at", "varchar(30)", (c) => c.notNull())
    .addPrimaryKeyConstraint("evaluation_verdicts_pk", [
      "project_id",
      "version",
      "settings_hash",
      "checks_hash",
      "case_id",
    ])
    .execute();

  await db.schema
    .createTable("evaluation_errors")
    .addColumn("evaluation_id", "varchar(40)", (c) => c.notNull().references("evaluations.id").onDelete("cascade"))
    // The version's index in the evaluation's `versions`.
    .addColumn("version_index", "integer", (c) => c.notNull())
    .addColumn("case_id", "varchar(64)", (c) => c.notNull())
    // A provider's error code, or `check_error` when the answer came but a check could not decide.
    .addColumn("code", "varchar(40)", (c) => c.notNull())
    .addColumn("message", "text", (c) => c.notNull())
    // JSON: the verdicts of the checks that did decide (null for a provider failure).
    .addColumn("detail", "text")
    .addPrimaryKeyConstraint("evaluation_errors_pk", ["evaluation_id", "version_index", "case_id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("evaluation_errors").execute();
  await db.schema.dropTable("evaluation_verdicts").execute();
  await db.schema.dropTable("evaluation_answers").execute();
  await db.schema.dropTable("evaluations").execute();
  await db.schema.dropTable("dataset_version_cases").execute();
  await db.schema.dropTable("dataset_cases").execute();
  await db.schema.dropTable("dataset_versions").execute();
  await db.schema.dropTable("datasets").execute();
}
