import { createHash } from "node:crypto";
import {
  type CountCell,
  type FleetRow,
  type FlushBatch,
  MINUTE,
  type SeriesRow,
} from "../../store/outcomes/outcome-writes.js";
import { addHistogram, bucketOf } from "./latency-histogram.js";

/** What one outcome adds to its series' minute. */
export interface Folded {
  ok: boolean;
  latencyMs?: number | undefined;
  score?: number | undefined;
  tokensInput?: number | undefined;
  tokensOutput?: number | undefined;
}

export interface SeriesKey {
  projectId: string;
  promptId: string;
  version: string;
  /** '' for none. */
  label: string;
  /** '' for none. */
  arm: string;
}

/** A series' id: a hash of its key, so every instance names it alike without asking the database. */
export function seriesId(key: SeriesKey): string {
  return createHash("sha256")
    .update(JSON.stringify([key.projectId, key.promptId, key.version, key.label, key.arm]))
    .digest("hex")
    .slice(0, 32);
}

let lastMinute = Number.NaN;
let lastMinuteIso = "";

/**
 * The minute an epoch time falls in, as an ISO time (a shorter "minute" only in tests:
 * PROMPTSTORE_OUTCOME_MINUTE_MS). The last one is remembered: a batch mostly shares it.
 */
export function minuteOf(ms: number, minuteMs = 60_000): string {
  const minute = Math.floor(ms / minuteMs) * minuteMs;
  if (minute !== lastMinute) {
    lastMinuteIso = new Date(minute).toISOString();
    lastMinute = minute;
  }
  return lastMinuteIso;
}

/** What a flush took from the buffer: written, or given back when the write failed. */
export interface Taken {
  batch: FlushBatch;
  /** Outcomes folded into it. */
  outcomes: number;
}

/**
 * An instance's outcomes not yet written, folded as they come: per series and minute one cell of sums and a
 * latency histogram, and per client instance, prompt and label its latest fleet report. Its size is the number
 * of cells and fleet rows, whatever the number of outcomes folded into them.
 */
export class OutcomeBuffer {
  private cells = new Map<string, CountCell>();
  private series = new Map<string, SeriesRow>();
  private fleet = new Map<string, FleetRow>();
  private outcomes = 0;

  constructor(private readonly minuteMs = 60_000) {}

  /** Cells and fleet rows held. */
  get size(): number {
    return this.cells.size + this.fleet.size;
  }

  /** Outcomes held. */
  get held(): number {
    return this.outcomes;
  }

  /** Folds one outcome into its series' cell of the minute `atMs` falls in. */
  add(key: SeriesKey, atMs: number, outcome: Folded): void {
    const seriesKey = `${key.projectId}\u0000${key.promptId}\u0000${key.version}\u0000${key.label}\u0000${key.arm}`;
    const at = minuteOf(atMs, this.minuteMs);
    let series = this.series.get(seriesKey);
    if (!series) {
      series = { id: seriesId(key), ...key, lastAt: at };
      this.series.set(seriesKey, series);
    } else if (at > series.lastAt) {
      series.lastAt = at;
    }
    const cellKey = `${series.id}|${at}`;
    let cell = this.cells.get(cellKey);
    if (!cell) {
      cell = emptyCell(series.id, at);
      this.cells.set(cellKey, cell);
    }
    cell.count += 1;
    if (outcome.ok) cell.ok += 1;
    if (outcome.score !== undefined) {
      cell.scoreSum += outcome.score;
      cell.scoreSumSq += outcome.score * outcome.score;
      cell.scoreCount += 1;
    }
    cell.tokensInput += outcome.tokensInput ?? 0;
    cell.tokensOutput += outcome.tokensOutput ?? 0;
    if (outcome.latencyMs !== undefined) {
      const bucket = bucketOf(outcome.latencyMs);
      cell.latency.set(bucket, (cell.latency.get(bucket) ?? 0) + 1);
    }
    this.outcomes += 1;
  }

  /** Keeps an instance's latest report of what it serves for one prompt and label. */
  report(row: FleetRow): void {
    this.fleet.set(`${row.projectId}\u0000${row.promptId}\u0000${row.label}\u0000${row.instanceId}`, row);
  }

  /** Everything held, leaving the buffer empty. */
  take(): Taken {
    const taken = {
      batch: { series: [...this.series.values()], cells: [...this.cells.values()], fleet: [...this.fleet.values()] },
      outcomes: this.outcomes,
    };
    this.cells = new Map();
    this.series = new Map();
    this.fleet = new Map();
    this.outcomes = 0;
    return taken;
  }

  /** Gives back what a failed write took: added to what came since (newer fleet reports win). */
  restore(taken: Taken): void {
    for (const series of taken.batch.series) {
      const key = `${series.projectId}\u0000${series.promptId}\u0000${series.version}\u0000${series.label}\u0000${series.arm}`;
      const held = this.series.get(key);
      if (!held) this.series.set(key, series);
      else if (series.lastAt > held.lastAt) held.lastAt = series.lastAt;
    }
    for (const cell of taken.batch.cells) {
      const key = `${cell.seriesId}|${cell.at}`;
      const held = this.cells.get(key);
      if (!held) {
        this.cells.set(key, cell);
        continue;
      }
      held.count += cell.count;
      held.ok += cell.ok;
      held.scoreSum += cell.scoreSum;
      held.scoreSumSq += cell.scoreSumSq;
      held.scoreCount += cell.scoreCount;
      held.tokensInput += cell.tokensInput;
      held.tokensOutput += cell.tokensOutput;
      addHistogram(held.latency, cell.latency);
    }
    for (const row of taken.batch.fleet) {
      const key = `${row.projectId}\u0000${row.promptId}\u0000${row.label}\u0000${row.instanceId}`;
      if (!this.fleet.has(key)) this.fleet.set(key, row);
    }
    this.outcomes += taken.outcomes;
  }
}

function emptyCell(seriesId: string, at: string): CountCell {
  return {
    seriesId,
    span: MINUTE,
    at,
    count: 0,
    ok: 0,
    scoreSum: 0,
    scoreSumSq: 0,
    scoreCount: 0,
    tokensInput: 0,
    tokensOutput: 0,
    latency: new Map(),
  };
}
