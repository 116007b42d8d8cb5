import type { OutcomeGrouping } from "@promptstore/core/outcomes";
import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { useParams, useSearchParams } from "react-router";
import { fleetQuery, type OutcomesView, outcomesQuery, RANGES, type RangeName } from "../api/outcome-queries";
import { Plans } from "../rollouts/Plans";
import { fullDate, plural, shortHash } from "../ui/format";
import { EmptyState, ErrorState, Loading } from "../ui/States";
import { Arms } from "./Arms";
import { Fleet } from "./Fleet";
import { METRICS, type MetricName, metricOf, show } from "./metrics";
import { ScrollRegion } from "./ScrollRegion";
import TrendChart, { chartRows, seriesName } from "./TrendChart";
import "./production.css";

const RANGE_TITLES: Record<RangeName, string> = { "1h": "1 h", "24h": "24 h", "7d": "7 d" };
const isRange = (v: string | null): v is RangeName => v !== null && v in RANGES;

/**
 * A prompt's Production tab (issue 40, docs/outcomes.md): what the applications reported of each version and
 * label over the last hour, day or week, a chart of one metric at a time with its numbers as a table; during a
 * rollout the two arms side by side; and the fleet. The range is in the address (`?range=7d`).
 */
export default function Production() {
  const { projectId = "", promptId = "" } = useParams();
  const [params, setParams] = useSearchParams();
  const range: RangeName = isRange(params.get("range")) ? (params.get("range") as RangeName) : "24h";
  const [by, setBy] = useState<Exclude<OutcomeGrouping, "arm">>("label");
  const [metricName, setMetricName] = useState<MetricName>("count");
  const outcomes = useQuery(outcomesQuery(projectId, promptId, range, by));
  const arms = useQuery(outcomesQuery(projectId, promptId, range, "arm"));
  const fleet = useQuery(fleetQuery(projectId, promptId));
  const headingId = useId();
  const metric = metricOf(metricName);

  let body: React.ReactNode;
  if (outcomes.isPending) body = <Loading label="Loading the production numbers…" />;
  else if (outcomes.isError)
    body = (
      <ErrorState
        title="Could not load the production numbers"
        error={outcomes.error}
        onRetry={() => void outcomes.refetch()}
      />
    );
  else if (outcomes.data.series.length === 0) body = <NoOutcomes promptId={promptId} range={range} />;
  else
    body = (
      <>
        <Totals view={outcomes.data} />
        <section className="card" aria-labelledby={`${headingId}-trend`}>
          <header className="card-header">
            <h3 id={`${headingId}-trend`}>{metric.title} over time</h3>
            <label className="production-metric">
              <span>Metric</span>
              <select
                className="select"
                value={metricName}
                onChange={(e) => setMetricName(e.target.value as MetricName)}
              >
                {METRICS.map((m) => (
                  <option key={m.name} value={m.name}>
                    {m.title}
                  </option>
                ))}
              </select>
            </label>
          </header>
          <div className="card-body stack">
            <TrendChart view={outcomes.data} metric={metric} summary={summary(outcomes.data, metric.name)} />
            <details className="production-data">
              <summary>Show the data ({outcomes.data.step === "minute" ? "per minute" : "per hour"})</summary>
              <PointsTable view={outcomes.data} metricName={metricName} />
            </details>
          </div>
        </section>
      </>
    );

  return (
    <section className="stack-lg production" aria-labelledby={headingId}>
      <header className="production-toolbar">
        <h2 id={headingId}>Production</h2>
        <fieldset className="segmented">
          <legend className="visually-hidden">Range</legend>
          {(Object.keys(RANGES) as RangeName[]).map((r) => (
            <label key={r}>
              <input
                type="radio"
                name="production-range"
                value={r}
                checked={range === r}
                onChange={() => {
                  const next = new URLSearchParams(params);
                  if (r === "24h") next.delete("range");
                  else next.set("range", r);
                  setParams(next, { replace: true });
                }}
              />
              {`Last ${RANGE_TITLES[r]}`}
            </label>
          ))}
        </fieldset>
        <fieldset className="segmented">
          <legend className="visually-hidden">Group by</legend>
          {(["label", "version"] as const).map((g) => (
            <label key={g}>
              <input type="radio" name="production-by" value={g} checked={by === g} onChange={() => setBy(g)} />
              {g === "label" ? "Version and label" : "Version"}
            </label>
          ))}
        </fieldset>
      </header>
      <Plans projectId={projectId} promptId={promptId} />
      {arms.data ? <Arms view={arms.data} /> : null}
      {body}
      <Fleet query={fleet} />
    </section>
  );
}

function summary(view: OutcomesView, name: MetricName): string {
  const metric = metricOf(name);
  const parts = view.series.slice(0, 8).map((s) => `${seriesName(s)}: ${show(metric, s.totals)} over the range`);
  return `${plural(view.series.length, "series", "series")}. ${parts.join("; ")}. The numbers are in the table below.`;
}

function Totals({ view }: { view: OutcomesView }) {
  const id = useId();
  return (
    <section className="card" aria-labelledby={id}>
      <header className="card-header">
        <h3 id={id}>By {view.by === "label" ? "version and label" : "version"}</h3>
        <p>
          {fullDate(view.from)} to {fullDate(view.to)}
        </p>
      </header>
      <ScrollRegion className="table-wrap" label="Numbers by series">
        <table className="table production-totals">
          <thead>
            <tr>
              <th scope="col">Version</th>
              {view.by === "label" ? <th scope="col">Label</th> : null}
              {METRICS.map((m) => (
                <th key={m.name} scope="col" className="num">
                  {m.title}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {view.series.map((s) => (
              <tr key={`${s.version} ${s.label}`}>
                <th scope="row" className="hash">
                  {shortHash(s.version)}
                </th>
                {view.by === "label" ? <td>{s.label ?? <span className="muted">by version</span>}</td> : null}
                {METRICS.map((m) => (
                  <td key={m.name} className="num">
                    {show(m, s.totals)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </section>
  );
}

function PointsTable({ view, metricName }: { view: OutcomesView; metricName: MetricName }) {
  const metric = metricOf(metricName);
  const { rows, names } = chartRows(view, metric);
  return (
    <ScrollRegion className="table-wrap" label="Numbers per step">
      <table className="table">
        <caption className="visually-hidden">{metric.title} per step and series</caption>
        <thead>
          <tr>
            <th scope="col">Step</th>
            {names.map((n) => (
              <th key={n} scope="col" className="num">
                {n}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.at}>
              <th scope="row">{fullDate(new Date(row.at).toISOString())}</th>
              {names.map((n) => {
                const v = row[n];
                return (
                  <td key={n} className="num">
                    {v === null || v === undefined ? "—" : metric.format(v)}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

function NoOutcomes({ promptId, range }: { promptId: string; range: RangeName }) {
  return (
    <EmptyState title={`No outcomes in the last ${RANGE_TITLES[range]}`} level={3}>
      <p>Applications report how each answer went with one line after they use it:</p>
      <ScrollRegion className="production-snippet" label="How to report outcomes">
        <pre>
          <code>{`// TypeScript\npromptstore.record(prompt, { ok: true, latency_ms: 812 });\n# Python\nclient.record(prompt, ok=True, latency_ms=812)`}</code>
        </pre>
      </ScrollRegion>
      <p className="muted">
        {`where prompt is what get("${promptId}") returned; any other language can POST /api/v2/outcomes with a read key.`}
      </p>
    </EmptyState>
  );
}
