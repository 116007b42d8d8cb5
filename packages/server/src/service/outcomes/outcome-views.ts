import type {
  OutcomeArm,
  OutcomeGrouping,
  OutcomeNumbers,
  OutcomeStep,
  OutcomesView,
} from "@promptstore/core/outcomes";
import type { CountRow, LatencyRow, SeriesInfo } from "../../store/outcomes/outcome-reads.js";
import { addHistogram, quantile } from "./latency-histogram.js";

export const STEP_MS: Record<OutcomeStep, number> = { minute: 60_000, hour: 3_600_000 };

/** Series one answer holds at most, most outcomes first. */
export const MAX_SERIES = 100;

/** Sums over some rows, and their latency histogram. */
interface Sums {
  count: number;
  ok: number;
  scoreSum: number;
  scoreCount: number;
  tokensInput: number;
  tokensOutput: number;
  latency: Map<number, number>;
}

const emptySums = (): Sums => ({
  count: 0,
  ok: 0,
  scoreSum: 0,
  scoreCount: 0,
  tokensInput: 0,
  tokensOutput: 0,
  latency: new Map(),
});

/** Rates and means to six decimals: sums of floats would otherwise show their last bits. */
const six = (value: number) => Math.round(value * 1e6) / 1e6;

export function numbersOf(sums: Sums): OutcomeNumbers {
  return {
    count: sums.count,
    ok: sums.ok,
    ok_rate: sums.count === 0 ? null : six(sums.ok / sums.count),
    score_mean: sums.scoreCount === 0 ? null : six(sums.scoreSum / sums.scoreCount),
    score_count: sums.scoreCount,
    latency_p50: quantile(sums.latency, 0.5),
    latency_p95: quantile(sums.latency, 0.95),
    tokens_input: sums.tokensInput,
    tokens_output: sums.tokensOutput,
  };
}

/** The start of the step an ISO time falls in, as an ISO time. */
export function stepStart(ms: number, step: OutcomeStep): string {
  return new Date(Math.floor(ms / STEP_MS[step]) * STEP_MS[step]).toISOString();
}

interface Group {
  version: string;
  label: string | null;
  arm: OutcomeArm | null;
  totals: Sums;
  points: Map<string, Sums>;
}

/**
 * The answer of `GET /api/v2/prompts/:id/outcomes` from the rows of the range: per group (a version; with its
 * label; with its arm), the totals and one point per step that has outcomes.
 */
export function buildView(
  head: { prompt: string; from: string; to: string; step: OutcomeStep; by: OutcomeGrouping },
  series: readonly SeriesInfo[],
  counts: readonly CountRow[],
  latency: readonly LatencyRow[],
): OutcomesView {
  const groupOf = new Map<string, string>();
  const groups = new Map<string, Group>();
  for (const s of series) {
    const label = head.by === "version" || s.label === "" ? null : s.label;
    const arm = head.by !== "arm" || s.arm === "" ? null : (s.arm as OutcomeArm);
    const key = JSON.stringify([s.version, label, arm]);
    groupOf.set(s.id, key);
    if (!groups.has(key)) groups.set(key, { version: s.version, label, arm, totals: emptySums(), points: new Map() });
  }
  const sumsAt = (group: Group, at: string): Sums => {
    const point = stepStart(Date.parse(at), head.step);
    let sums = group.points.get(point);
    if (!sums) {
      sums = emptySums();
      group.points.set(point, sums);
    }
    return sums;
  };
  for (const row of counts) {
    const group = groups.get(groupOf.get(row.seriesId) ?? "");
    if (!group) continue;
    for (const sums of [group.totals, sumsAt(group, row.at)]) {
      sums.count += row.count;
      sums.ok += row.ok;
      sums.scoreSum += row.scoreSum;
      sums.scoreCount += row.scoreCount;
      sums.tokensInput += row.tokensInput;
      sums.tokensOutput += row.tokensOutput;
    }
  }
  for (const row of latency) {
    const group = groups.get(groupOf.get(row.seriesId) ?? "");
    if (!group) continue;
    const one = new Map([[row.bucket, row.count]]);
    addHistogram(group.totals.latency, one);
    addHistogram(sumsAt(group, row.at).latency, one);
  }
  const ordered = [...groups.values()]
    .filter((g) => g.totals.count > 0)
    .sort(
      (a, b) =>
        b.totals.count - a.totals.count ||
        compare(a.version, b.version) ||
        compare(a.label ?? "", b.label ?? "") ||
        compare(a.arm ?? "", b.arm ?? ""),
    )
    .slice(0, MAX_SERIES);
  return {
    ...head,
    series: ordered.map((g) => ({
      version: g.version,
      label: g.label,
      arm: g.arm,
      totals: numbersOf(g.totals),
      points: [...g.points]
        .filter(([, sums]) => sums.count > 0)
        .sort(([a], [b]) => compare(a, b))
        .map(([at, sums]) => ({ at, ...numbersOf(sums) })),
    })),
  };
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
