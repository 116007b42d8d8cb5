// Frozen: a migration never changes once released and never imports application code.
import { type Kysely, sql } from "kysely";

/**
 * Production outcomes (issue 40, docs/outcomes.md): aggregates, never events.
 *
 * A series is one (project, prompt, version, label, arm); its id is a hash of those, so any instance names it
 * without asking the database. Per series, step (1: a minute, 60: an hour) and step start, `outcome_counts`
 * holds the sums and `outcome_latency` one row per occupied latency bucket (fixed log-scale buckets, eight per
 * doubling). Every write is an additive upsert. Minute rows older than a day are folded into hour rows.
 *
 * `label_history` is what each label served when: one row per change of a label (its version and its
 * rollout's candidate after the change), so an outcome can be checked against what its label could have
 * served at its time. It starts with what every label serves now, as if it always had.
 *
 * `fleet_instances` is what each running client instance last said it serves, per prompt and label.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("outcome_series")
    .addColumn("id", "varchar(32)", (c) => c.primaryKey())
    .addColumn("project_id", "varchar(40)", (c) => c.notNull())
    .addColumn("prompt_id", "varchar(200)", (c) => c.notNull())
    .addColumn("version", "varchar(64)", (c) => c.notNull())
    // '' for none: a key column that is never null, so upserts always meet their row.
    .addColumn("label", "varchar(40)", (c) => c.notNull())
    .addColumn("arm", "varchar(10)", (c) => c.notNull())
    // The latest step an outcome of the series went to: retention deletes series no outcome is left of.
    .addColumn("last_at", "varchar(30)", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("outcome_series_prompt")
    .on("outcome_series")
    .columns(["project_id", "prompt_id"])
    .execute();

  await db.schema
    .createTable("outcome_counts")
    .addColumn("series_id", "varchar(32)", (c) => c.notNull())
    .addColumn("span", "integer", (c) => c.notNull())
    .addColumn("at", "varchar(30)", (c) => c.notNull())
    .addColumn("count", "bigint", (c) => c.notNull())
    .addColumn("ok", "bigint", (c) => c.notNull())
    .addColumn("score_sum", "double precision", (c) => c.notNull())
    .addColumn("score_count", "bigint", (c) => c.notNull())
    .addColumn("tokens_input", "bigint", (c) => c.notNull())
    .addColumn("tokens_output", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("outcome_counts_pk", ["series_id", "span", "at"])
    .execute();
  await db.schema.createIndex("outcome_counts_age").on("outcome_counts").columns(["span", "at"]).execute();

  await db.schema
    .createTable("outcome_latency")
    .addColumn("series_id", "varchar(32)", (c) => c.notNull())
    .addColumn("span", "integer", (c) => c.notNull())
    .addColumn("at", "varchar(30)", (c) => c.notNull())
    .addColumn("bucket", "integer", (c) => c.notNull())
    .addColumn("count", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("outcome_latency_pk", ["series_id", "span", "at", "bucket"])
    .execute();
  await db.schema.createIndex("outcome_latency_age").on("outcome_latency").columns(["span", "at"]).execute();

  await db.schema
    .createTable("label_history")
    .addColumn("project_id", "varchar(40)", (c) => c.notNull())
    .addColumn("prompt_id", "varchar(200)", (c) => c.notNull())
    .addColumn("label", "varchar(40)", (c) => c.notNull())
    .addColumn("at", "varchar(30)", (c) => c.notNull())
    // What the label served from `at` on: null once removed; the rollout's candidate, null when none.
    .addColumn("version", "varchar(64)")
    .addColumn("candidate", "varchar(64)")
    .addPrimaryKeyConstraint("label_history_pk", ["project_id", "prompt_id", "label", "at"])
    .execute();

  await db.schema
    .createTable("fleet_instances")
    .addColumn("project_id", "varchar(40)", (c) => c.notNull())
    .addColumn("prompt_id", "varchar(200)", (c) => c.notNull())
    .addColumn("label", "varchar(40)", (c) => c.notNull())
    .addColumn("instance_id", "varchar(100)", (c) => c.notNull())
    .addColumn("version", "varchar(64)", (c) => c.notNull())
    .addColumn("sdk", "varchar(100)")
    .addColumn("last_seen", "varchar(30)", (c) => c.notNull())
    .addPrimaryKeyConstraint("fleet_instances_pk", ["project_id", "prompt_id", "label", "instance_id"])
    .execute();
  await db.schema.createIndex("fleet_instances_seen").on("fleet_instances").columns(["last_seen"]).execute();

  // What every label serves now, from the start of time: the history begins here.
  const since = sql.lit("1970-01-01T00:00:00.000Z");
  await sql`
    INSERT INTO label_history (project_id, prompt_id, label, at, version, candidate)
    SELECT p.project_id, p.id, 'production', ${since}, p.production_version,
      (SELECT r.candidate FROM rollouts r WHERE r.project_id = p.project_id AND r.prompt_id = p.id AND r.label = 'production')
    FROM prompts p WHERE p.production_version IS NOT NULL
  `.execute(db);
  await sql`
    INSERT INTO label_history (project_id, prompt_id, label, at, version, candidate)
    SELECT l.project_id, l.prompt_id, l.name, ${since}, l.version,
      (SELECT r.candidate FROM rollouts r WHERE r.project_id = l.project_id AND r.prompt_id = l.prompt_id AND r.label = l.name)
    FROM prompt_labels l
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["fleet_instances", "label_history", "outcome_latency", "outcome_counts", "outcome_series"]) {
    await db.schema.dropTable(table).execute();
  }
}
