/**
 * One metric over time, a line per series, drawn with recharts (loaded with the Production view's chunk only).
 * The chart is an image with a name and a one-line summary for assistive technology; the numbers themselves
 * are in the table beside it (the view's "Show the data" table).
 */
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { OutcomesView } from "../api/outcome-queries";
import { shortHash } from "../ui/format";
import type { Metric } from "./metrics";

/** Eight series colours, set per theme in production.css (each 3:1 or more on the card in both themes). */
const COLOURS = Array.from({ length: 8 }, (_, i) => `var(--chart-${i + 1})`);

export const seriesName = (s: OutcomesView["series"][number]): string =>
  [shortHash(s.version), s.label ?? (s.arm ? "" : null), s.arm].filter((p) => p !== null && p !== "").join(" · ");

export interface ChartRow {
  at: number;
  [series: string]: number | null;
}

/** The points of every series as rows by time (a step a series had no outcome in is missing from it). */
export function chartRows(view: OutcomesView, metric: Metric): { rows: ChartRow[]; names: string[] } {
  const byTime = new Map<number, ChartRow>();
  const names = view.series.slice(0, COLOURS.length).map(seriesName);
  view.series.slice(0, COLOURS.length).forEach((series, i) => {
    for (const point of series.points) {
      const at = Date.parse(point.at);
      const row = byTime.get(at) ?? { at };
      row[names[i]!] = metric.value(point);
      byTime.set(at, row);
    }
  });
  return { rows: [...byTime.values()].sort((a, b) => a.at - b.at), names };
}

const tick = (step: OutcomesView["step"], hours: number) => (at: number) => {
  const d = new Date(at);
  if (step === "hour" && hours > 25) return d.toLocaleDateString(undefined, { month: "short", day: "numeric" });
  return d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
};

export default function TrendChart({ view, metric, summary }: { view: OutcomesView; metric: Metric; summary: string }) {
  const { rows, names } = chartRows(view, metric);
  const from = Date.parse(view.from);
  const to = Date.parse(view.to);
  const hours = (to - from) / 3_600_000;
  // six ticks across the whole range, however few steps had outcomes
  const ticks = Array.from({ length: 6 }, (_, i) => Math.round(from + ((to - from) * i) / 5));
  return (
    <div className="trend-chart" role="img" aria-label={`${metric.title} over time. ${summary}`}>
      <ResponsiveContainer width="100%" height={260}>
        <LineChart data={rows} margin={{ top: 8, right: 16, bottom: 0, left: 0 }} accessibilityLayer={false}>
          <CartesianGrid stroke="var(--border)" strokeDasharray="3 3" />
          <XAxis
            dataKey="at"
            type="number"
            scale="time"
            domain={[from, to]}
            ticks={ticks}
            tickFormatter={tick(view.step, hours)}
            stroke="var(--text-3)"
            tick={{ fill: "var(--text-2)", fontSize: 12 }}
            minTickGap={24}
          />
          <YAxis
            stroke="var(--text-3)"
            tick={{ fill: "var(--text-2)", fontSize: 12 }}
            tickFormatter={(v: number) => metric.format(v)}
            width={metric.name === "ok_rate" ? 56 : 64}
            // from 0, so that a small change does not look like a large one; rates and scores end at 1
            domain={metric.name === "ok_rate" || metric.name === "score_mean" ? [0, 1] : [0, "auto"]}
          />
          <Tooltip
            labelFormatter={(at) => new Date(Number(at)).toLocaleString()}
            formatter={(v) => (typeof v === "number" ? metric.format(v) : String(v))}
            contentStyle={{ background: "var(--surface)", border: "1px solid var(--border)", color: "var(--text)" }}
            labelStyle={{ color: "var(--text-2)" }}
          />
          <Legend wrapperStyle={{ color: "var(--text-2)", fontSize: 12 }} />
          {names.map((name, i) => (
            <Line
              key={name}
              dataKey={name}
              name={name}
              type="monotone"
              stroke={COLOURS[i]}
              strokeWidth={2}
              dot={rows.length < 40}
              connectNulls
              isAnimationActive={false}
            />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </div>
  );
}
