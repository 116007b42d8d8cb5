/** The numbers the Production view shows, and how each is written. */
import type { OutcomeNumbers } from "@promptstore/core/outcomes";
import { formatCount } from "../ui/format";

export type MetricName = "count" | "ok_rate" | "score_mean" | "latency_p50" | "latency_p95" | "tokens";

export interface Metric {
  name: MetricName;
  title: string;
  value: (n: OutcomeNumbers) => number | null;
  format: (v: number) => string;
}

export const percent = (v: number, digits = 1): string => `${(v * 100).toFixed(digits)}%`;
/** A difference of rates in points, signed: "−2.5 pts". */
export const points = (v: number): string => `${v < 0 ? "−" : v > 0 ? "+" : ""}${Math.abs(v * 100).toFixed(1)} pts`;
export const ms = (v: number): string => `${formatCount(Math.round(v))} ms`;

export const METRICS: Metric[] = [
  { name: "count", title: "Traffic", value: (n) => n.count, format: (v) => formatCount(v) },
  { name: "ok_rate", title: "Ok rate", value: (n) => n.ok_rate, format: (v) => percent(v) },
  { name: "score_mean", title: "Mean score", value: (n) => n.score_mean, format: (v) => v.toFixed(2) },
  { name: "latency_p50", title: "Latency p50", value: (n) => n.latency_p50, format: ms },
  { name: "latency_p95", title: "Latency p95", value: (n) => n.latency_p95, format: ms },
  {
    name: "tokens",
    title: "Tokens",
    value: (n) => n.tokens_input + n.tokens_output,
    format: (v) => formatCount(v),
  },
];

export const metricOf = (name: MetricName): Metric => METRICS.find((m) => m.name === name) ?? METRICS[0]!;
export const show = (metric: Metric, n: OutcomeNumbers): string => {
  const v = metric.value(n);
  return v === null ? "—" : metric.format(v);
};
