// Frozen: a migration never changes once released and never imports application code.
import type { Kysely } from "kysely";

/**
 * Guarded rollouts (issue 40, docs/rollouts.md "Plans"): the score guardrail needs the variance of a step's
 * scores, so each outcome row also sums the squares of its scores. Added like the other sums (an additive
 * upsert), and summed by compaction. Rows written before this migration count 0: their scores have no
 * squares, which only matters to a plan that started before the upgrade.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("outcome_counts")
    .addColumn("score_sum_sq", "double precision", (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("outcome_counts").dropColumn("score_sum_sq").execute();
}
