import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.js";

export interface SeriesInfo {
  id: string;
  version: string;
  /** '' for none. */
  label: string;
  /** '' for none. */
  arm: string;
}

export interface CountRow {
  seriesId: string;
  at: string;
  count: number;
  ok: number;
  scoreSum: number;
  /** Σ score² (the score guardrail's variance). */
  scoreSumSq: number;
  scoreCount: number;
  tokensInput: number;
  tokensOutput: number;
}

export interface LatencyRow {
  seriesId: string;
  at: string;
  bucket: number;
  count: number;
}

export interface FleetGroup {
  /** '' for none. */
  label: string;
  version: string;
  instances: number;
  lastSeen: string;
}

/** An ISO time's hour, `2026-11-27T23`: the same text function on both databases. */
const HOUR_OF_AT = sql<string>`substr(at, 1, 13)`;

/** Series ids a query names at once. */
const IDS_PER_QUERY = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += IDS_PER_QUERY) out.push(items.slice(i, i + IDS_PER_QUERY));
  return out;
}

/** Reads outcome aggregates and the fleet. */
export class OutcomeReads {
  constructor(private readonly db: Kysely<Database>) {}

  async promptExists(projectId: string, promptId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom("prompts")
      .select("id")
      .where("project_id", "=", projectId)
      .where("id", "=", promptId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The prompt's series, of one label only when given ('' for reads without one). */
  async series(projectId: string, promptId: string, label?: string): Promise<SeriesInfo[]> {
    let query = this.db
      .selectFrom("outcome_series")
      .select(["id", "version", "label", "arm"])
      .where("project_id", "=", projectId)
      .where("prompt_id", "=", promptId);
    if (label !== undefined) query = query.where("label", "=", label);
    return query.orderBy("id").execute();
  }

  /**
   * The series' sums per step whose start is in [from, to): by the minute as stored, or summed by the hour
   * in the database (an ISO time's first 13 characters name its hour), so a day of minutes comes back as 24 rows.
   */
  async counts(seriesIds: readonly string[], from: string, to: string, byHour: boolean): Promise<CountRow[]> {
    const out: CountRow[] = [];
    for (const ids of chunks(seriesIds)) {
      const rows = await this.db
        .selectFrom("outcome_counts")
        .select((eb) => [
          "series_id",
          (byHour ? HOUR_OF_AT : sql<string>`at`).as("step_at"),
          eb.fn.sum<number | string>("count").as("count"),
          eb.fn.sum<number | string>("ok").as("ok"),
          eb.fn.sum<number | string>("score_sum").as("score_sum"),
          eb.fn.sum<number | string>("score_sum_sq").as("score_sum_sq"),
          eb.fn.sum<number | string>("score_count").as("score_count"),
          eb.fn.sum<number | string>("tokens_input").as("tokens_input"),
          eb.fn.sum<number | string>("tokens_output").as("tokens_output"),
        ])
        .where("series_id", "in", ids)
        .where("at", ">=", from)
        .where("at", "<", to)
        .groupBy(["series_id", "step_at"])
        .execute();
      for (const r of rows) {
        out.push({
          seriesId: r.series_id,
          at: byHour ? `${r.step_at}:00:00.000Z` : r.step_at,
          count: Number(r.count),
          ok: Number(r.ok),
          scoreSum: Number(r.score_sum),
          scoreSumSq: Number(r.score_sum_sq),
          scoreCount: Number(r.score_count),
          tokensInput: Number(r.tokens_input),
          tokensOutput: Number(r.tokens_output),
        });
      }
    }
    return out;
  }

  /** The series' latency histograms per step whose start is in [from, to), by the minute or summed by the hour. */
  async latency(seriesIds: readonly string[], from: string, to: string, byHour: boolean): Promise<LatencyRow[]> {
    const out: LatencyRow[] = [];
    for (const ids of chunks(seriesIds)) {
      const rows = await this.db
        .selectFrom("outcome_latency")
        .select((eb) => [
          "series_id",
          (byHour ? HOUR_OF_AT : sql<string>`at`).as("step_at"),
          "bucket",
          eb.fn.sum<number | string>("count").as("count"),
        ])
        .where("series_id", "in", ids)
        .where("at", ">=", from)
        .where("at", "<", to)
        .groupBy(["series_id", "step_at", "bucket"])
        .execute();
      for (const r of rows) {
        out.push({
          seriesId: r.series_id,
          at: byHour ? `${r.step_at}:00:00.000Z` : r.step_at,
          bucket: r.bucket,
          count: Number(r.count),
        });
      }
    }
    return out;
  }

  /** Per label and version, the instances heard from since `since` that serve it, most first. */
  async fleet(
    projectId: string,
    promptId: string,
    since: string,
  ): Promise<{ groups: FleetGroup[]; instances: number }> {
    const rows = await this.db
      .selectFrom("fleet_instances")
      .select((eb) => [
        "label",
        "version",
        eb.fn.countAll<number | string>().as("instances"),
        eb.fn.max("last_seen").as("last_seen"),
      ])
      .where("project_id", "=", projectId)
      .where("prompt_id", "=", promptId)
      .where("last_seen", ">=", since)
      .groupBy(["label", "version"])
      .execute();
    const total = await this.db
      .selectFrom("fleet_instances")
      .select((eb) => eb.fn.count<number | string>("instance_id").distinct().as("n"))
      .where("project_id", "=", projectId)
      .where("prompt_id", "=", promptId)
      .where("last_seen", ">=", since)
      .executeTakeFirst();
    const groups = rows
      .map((r) => ({ label: r.label, version: r.version, instances: Number(r.instances), lastSeen: r.last_seen }))
      .sort(
        (a, b) =>
          b.instances - a.instances ||
          (a.lastSeen < b.lastSeen ? 1 : a.lastSeen > b.lastSeen ? -1 : 0) ||
          (a.label < b.label ? -1 : a.label > b.label ? 1 : 0) ||
          (a.version < b.version ? -1 : 1),
      );
    return { groups, instances: Number(total?.n ?? 0) };
  }
}
