import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.js";

/** A step of an outcome row: a minute, or an hour once compacted. */
export const MINUTE = 1;
export const HOUR = 60;

/** One series as the flush names it: the key and its id (a hash of the key), and the latest step it got. */
export interface SeriesRow {
  id: string;
  projectId: string;
  promptId: string;
  version: string;
  /** '' for none. */
  label: string;
  /** '' for none. */
  arm: string;
  lastAt: string;
}

/** The sums of one series over one step, and its latency histogram (bucket → count). */
export interface CountCell {
  seriesId: string;
  span: number;
  at: string;
  count: number;
  ok: number;
  scoreSum: number;
  /** Σ score²: the score guardrail's variance. */
  scoreSumSq: number;
  scoreCount: number;
  tokensInput: number;
  tokensOutput: number;
  latency: Map<number, number>;
}

/** What an instance of a client last said it serves for one prompt and label. */
export interface FleetRow {
  projectId: string;
  promptId: string;
  /** '' for none. */
  label: string;
  instanceId: string;
  version: string;
  sdk: string | null;
  lastSeen: string;
}

export interface FlushBatch {
  series: SeriesRow[];
  cells: CountCell[];
  fleet: FleetRow[];
}

/** Rows an INSERT carries: well under SQLite's 32 766 parameters and PostgreSQL's 65 535. */
const ROWS_PER_INSERT = 250;

function chunks<T>(items: readonly T[], size = ROWS_PER_INSERT): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const byKey =
  <T>(key: (item: T) => string) =>
  (a: T, b: T) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
const cellKey = (c: { seriesId: string; span: number; at: string }) => `${c.seriesId}|${c.span}|${c.at}`;

/** The hour an ISO time falls in, as an ISO time. */
export function hourOf(iso: string): string {
  return `${iso.slice(0, 13)}:00:00.000Z`;
}

/**
 * Writes outcome aggregates. Every write adds (`c = c + excluded.c`) and never reads first, so any number of
 * instances write the same rows at once and the sums stay exact; rows go in key order, so two writers take
 * their row locks in one order and never wait on each other in a circle.
 */
export class OutcomeWrites {
  constructor(private readonly db: Kysely<Database>) {}

  /** One flush of an instance's buffer, in one transaction. */
  async write(batch: FlushBatch): Promise<void> {
    if (batch.series.length === 0 && batch.cells.length === 0 && batch.fleet.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      await upsertSeries(trx, [...batch.series].sort(byKey((s) => s.id)));
      await addCells(trx, [...batch.cells].sort(byKey(cellKey)));
      await upsertFleet(
        trx,
        [...batch.fleet].sort(byKey((f) => `${f.projectId}|${f.promptId}|${f.label}|${f.instanceId}`)),
      );
    });
  }

  /**
   * Folds the minute rows of the oldest hour that ended before `before` (an hour's start) into hour rows, for
   * up to `maxSeries` series at a time; false when there was none. The rows are deleted and their sums added
   * in one transaction: a row another instance compacts at the same time is deleted once, and counted once.
   */
  async compactOldestHour(before: string, maxSeries = 200): Promise<boolean> {
    const oldest = await this.db
      .selectFrom("outcome_counts")
      .select("at")
      .where("span", "=", MINUTE)
      .where("at", "<", before)
      .orderBy("span")
      .orderBy("at")
      .limit(1)
      .executeTakeFirst();
    if (!oldest) return false;
    const hour = hourOf(oldest.at);
    const end = new Date(Date.parse(hour) + 3_600_000).toISOString();
    const series = (
      await this.db
        .selectFrom("outcome_counts")
        .select("series_id")
        .distinct()
        .where("span", "=", MINUTE)
        .where("at", ">=", hour)
        .where("at", "<", end)
        .orderBy("series_id")
        .limit(maxSeries)
        .execute()
    ).map((r) => r.series_id);
    if (series.length === 0) return false;
    await this.db.transaction().execute(async (trx) => {
      const counts = await trx
        .deleteFrom("outcome_counts")
        .where("span", "=", MINUTE)
        .where("series_id", "in", series)
        .where("at", ">=", hour)
        .where("at", "<", end)
        .returningAll()
        .execute();
      const latency = await trx
        .deleteFrom("outcome_latency")
        .where("span", "=", MINUTE)
        .where("series_id", "in", series)
        .where("at", ">=", hour)
        .where("at", "<", end)
        .returning(["series_id", "bucket", "count"])
        .execute();
      const hours = new Map<string, CountCell>();
      const cellOf = (seriesId: string): CountCell => {
        let cell = hours.get(seriesId);
        if (!cell) {
          cell = {
            seriesId,
            span: HOUR,
            at: hour,
            count: 0,
            ok: 0,
            scoreSum: 0,
            scoreSumSq: 0,
            scoreCount: 0,
            tokensInput: 0,
            tokensOutput: 0,
            latency: new Map(),
          };
          hours.set(seriesId, cell);
        }
        return cell;
      };
      for (const row of counts) {
        const cell = cellOf(row.series_id);
        cell.count += Number(row.count);
        cell.ok += Number(row.ok);
        cell.scoreSum += Number(row.score_sum);
        cell.scoreSumSq += Number(row.score_sum_sq);
        cell.scoreCount += Number(row.score_count);
        cell.tokensInput += Number(row.tokens_input);
        cell.tokensOutput += Number(row.tokens_output);
      }
      for (const row of latency) {
        const cell = cellOf(row.series_id);
        cell.latency.set(row.bucket, (cell.latency.get(row.bucket) ?? 0) + Number(row.count));
      }
      await addCells(trx, [...hours.values()].sort(byKey(cellKey)));
    });
    return true;
  }

  /**
   * Deletes outcome rows whose step started before `before`, the series none is left of, and fleet rows not
   * heard from since `fleetBefore`. Deleting what another instance deleted already is harmless.
   */
  async prune(before: string, fleetBefore: string): Promise<void> {
    await this.db.deleteFrom("outcome_counts").where("span", "in", [MINUTE, HOUR]).where("at", "<", before).execute();
    await this.db.deleteFrom("outcome_latency").where("span", "in", [MINUTE, HOUR]).where("at", "<", before).execute();
    await this.db.deleteFrom("outcome_series").where("last_at", "<", before).execute();
    await this.db.deleteFrom("fleet_instances").where("last_seen", "<", fleetBefore).execute();
  }
}

async function upsertSeries(db: Kysely<Database>, series: SeriesRow[]): Promise<void> {
  for (const chunk of chunks(series)) {
    await db
      .insertInto("outcome_series")
      .values(
        chunk.map((s) => ({
          id: s.id,
          project_id: s.projectId,
          prompt_id: s.promptId,
          version: s.version,
          label: s.label,
          arm: s.arm,
          last_at: s.lastAt,
        })),
      )
      .onConflict((oc) =>
        oc.column("id").doUpdateSet((eb) => ({
          // The later of the two: a flush of older outcomes never moves it back.
          last_at: eb
            .case()
            .when(eb.ref("excluded.last_at"), ">", eb.ref("outcome_series.last_at"))
            .then(eb.ref("excluded.last_at"))
            .else(eb.ref("outcome_series.last_at"))
            .end(),
        })),
      )
      .execute();
  }
}

/** `table.column + excluded.column`: what an additive upsert sets. */
const plus = (table: "outcome_counts" | "outcome_latency", column: string) =>
  sql<number>`${sql.ref(`${table}.${column}`)} + ${sql.ref(`excluded.${column}`)}`;

/** Adds cells (sorted by key) to their rows. */
async function addCells(db: Kysely<Database>, cells: CountCell[]): Promise<void> {
  for (const chunk of chunks(cells)) {
    await db
      .insertInto("outcome_counts")
      .values(
        chunk.map((c) => ({
          series_id: c.seriesId,
          span: c.span,
          at: c.at,
          count: c.count,
          ok: c.ok,
          score_sum: c.scoreSum,
          score_sum_sq: c.scoreSumSq,
          score_count: c.scoreCount,
          tokens_input: c.tokensInput,
          tokens_output: c.tokensOutput,
        })),
      )
      .onConflict((oc) =>
        oc.columns(["series_id", "span", "at"]).doUpdateSet({
          count: plus("outcome_counts", "count"),
          ok: plus("outcome_counts", "ok"),
          score_sum: plus("outcome_counts", "score_sum"),
          score_sum_sq: plus("outcome_counts", "score_sum_sq"),
          score_count: plus("outcome_counts", "score_count"),
          tokens_input: plus("outcome_counts", "tokens_input"),
          tokens_output: plus("outcome_counts", "tokens_output"),
        }),
      )
      .execute();
  }
  const buckets = cells.flatMap((c) =>
    [...c.latency]
      .sort((a, b) => a[0] - b[0])
      .map(([bucket, count]) => ({ series_id: c.seriesId, span: c.span, at: c.at, bucket, count })),
  );
  for (const chunk of chunks(buckets)) {
    await db
      .insertInto("outcome_latency")
      .values(chunk)
      .onConflict((oc) =>
        oc.columns(["series_id", "span", "at", "bucket"]).doUpdateSet({ count: plus("outcome_latency", "count") }),
      )
      .execute();
  }
}

/** The latest report wins: an instance's rows say what it serves now. */
async function upsertFleet(db: Kysely<Database>, fleet: FleetRow[]): Promise<void> {
  for (const chunk of chunks(fleet)) {
    await db
      .insertInto("fleet_instances")
      .values(
        chunk.map((f) => ({
          project_id: f.projectId,
          prompt_id: f.promptId,
          label: f.label,
          instance_id: f.instanceId,
          version: f.version,
          sdk: f.sdk,
          last_seen: f.lastSeen,
        })),
      )
      .onConflict((oc) =>
        oc.columns(["project_id", "prompt_id", "label", "instance_id"]).doUpdateSet({
          version: sql.ref("excluded.version"),
          sdk: sql.ref("excluded.sdk"),
          last_seen: sql.ref("excluded.last_seen"),
        }),
      )
      .execute();
  }
}
