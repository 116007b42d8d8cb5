import { can } from "@promptstore/core/accounts/permissions";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState } from "react";
import { Link } from "react-router";
import {
  type CaseFilter,
  type CaseResultView,
  type CellView,
  type EvaluationView,
  evaluationCasesQuery,
  evaluationQuery,
  useStopEvaluation,
  type VersionSummary,
} from "../api/evaluation-queries";
import { useProject } from "../shell/session";
import { BusyButton } from "../ui/Field";
import { formatCount, plural, shortHash } from "../ui/format";
import { EmptyState, ErrorState, errorText, Loading } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import { AnswerDialog } from "./AnswerDialog";
import { firstFilter, latency, percent, score, statusLine, versionTitle } from "./results";
import { useFollowEvaluation } from "./use-follow";

const STATUS_CLASS: Record<EvaluationView["status"], string> = {
  running: "notice",
  done: "notice notice-success",
  stopped: "notice notice-warning",
  failed: "form-alert",
};

/** One evaluation: where it stands, each version's score, and its cases, regressions first. */
export function Results({
  projectId,
  promptId,
  evaluationId,
  extra,
  focus = false,
}: {
  projectId: string;
  promptId: string;
  evaluationId: string;
  /** What follows the numbers (the draft's save), given the evaluation. */
  extra?: (view: EvaluationView) => React.ReactNode;
  /** Takes the focus (and the view) once shown: it was just started or opened. */
  focus?: boolean;
}) {
  const query = useQuery(evaluationQuery(projectId, evaluationId));
  useFollowEvaluation(projectId, promptId, query.data);
  const headingId = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  const loaded = query.data !== undefined;
  // Brought into view when shown: after Run (the setup is below), or when opened from the list.
  useEffect(() => {
    if (loaded && focus) heading.current?.focus({ preventScroll: false });
  }, [loaded, focus]);
  if (query.isPending) {
    return (
      <section className="card" aria-label="Results">
        <Loading label="Loading the evaluation…" />
      </section>
    );
  }
  if (query.isError) {
    return (
      <section className="card" aria-label="Results">
        <ErrorState title="Could not load the evaluation" error={query.error} onRetry={() => query.refetch()} />
      </section>
    );
  }
  const view = query.data;
  return (
    <section className="card eval-results" aria-labelledby={headingId}>
      <div className="card-header">
        <div>
          <h2 id={headingId} ref={heading} tabIndex={-1}>
            Results <span className="mono small muted">{view.id}</span>
          </h2>
          <p>
            {plural(view.dataset.cases, "case")} of{" "}
            <Link
              to={`/p/${projectId}/datasets/${view.dataset.id}?version=${view.dataset.version}`}
              className="inline-link"
            >
              dataset version {shortHash(view.dataset.version)}
            </Link>{" "}
            · {plural(view.check_names.length, "check")}: {view.check_names.join(", ")} · started{" "}
            <TimeAgo iso={view.created_at} />
          </p>
        </div>
      </div>
      <div className="card-body stack">
        <Status projectId={projectId} promptId={promptId} view={view} />
        <Scores view={view} />
        {extra?.(view)}
      </div>
      <CasesTable key={`${view.id}-${view.status}`} projectId={projectId} view={view} />
    </section>
  );
}

function Status({ projectId, promptId, view }: { projectId: string; promptId: string; view: EvaluationView }) {
  const context = useProject();
  const stop = useStopEvaluation(projectId, promptId);
  const canStop = context !== null && can(context.role, "write");
  const { done, total } = view.progress;
  return (
    <div className="eval-status" aria-live="polite">
      <div className={STATUS_CLASS[view.status]} role="status">
        <p>
          <span className={`badge eval-badge-${view.status}`}>{view.reused ? "reused" : view.status}</span>{" "}
          {statusLine(view)}
          {view.reused && view.reused_from ? (
            <>
              {" "}
              <Link to={`?evaluation=${view.reused_from}`} className="inline-link">
                Open the evaluation it repeats
              </Link>
              .
            </>
          ) : null}
        </p>
        {view.status === "running" ? (
          <div className="eval-progress">
            <progress className="eval-progress-bar" max={Math.max(1, total)} value={done} aria-label="Answers judged">
              {done} of {total}
            </progress>
            <span className="small">
              {formatCount(done)} of {formatCount(total)}
            </span>
            {canStop ? (
              <BusyButton
                type="button"
                className="button button-small"
                busy={stop.isPending}
                onClick={() => stop.mutate(view.id)}
              >
                Stop
              </BusyButton>
            ) : null}
          </div>
        ) : null}
      </div>
      {stop.isError ? (
        <p className="form-alert" role="alert">
          {errorText(stop.error)}
        </p>
      ) : null}
    </div>
  );
}

/** The score per version at a glance: pass rate, the counts, each check's mean, tokens and latency. */
function Scores({ view }: { view: EvaluationView }) {
  return (
    <ul className="eval-scores" aria-label="Score per version">
      {view.versions.map((v, i) => (
        <li key={v.version} className="eval-score">
          <p className="eval-score-title">
            <strong>{versionTitle(v)}</strong> <span className="hash small">{shortHash(v.version)}</span>
            {i === 0 && view.versions.length > 1 ? <span className="badge badge-outline">compared with</span> : null}
          </p>
          <p className="eval-rate">
            <span className="eval-rate-value">{percent(v.pass_rate)}</span> <span className="small muted">pass</span>
          </p>
          <p className="small">
            {v.passed} passed · {v.failed} failed · {v.errored} errored
            {v.pending > 0 ? ` · ${v.pending} pending` : ""}
          </p>
          <dl className="eval-facts">
            {Object.entries(v.scores).map(([name, mean]) => (
              <Fact key={name} term={name} value={score(mean)} />
            ))}
            <Fact term="tokens in / out" value={`${formatCount(v.tokens.input)} / ${formatCount(v.tokens.output)}`} />
            <Fact term="latency p50 / p95" value={`${latency(v.latency_ms.p50)} / ${latency(v.latency_ms.p95)}`} />
            {v.model.name ? <Fact term="model" value={v.model.name} /> : null}
          </dl>
          {i > 0 && view.compare && view.versions.length === 2 && view.status !== "running" ? (
            <p className="small">
              <span className={view.compare.regressions > 0 ? "eval-regressions" : ""}>
                {plural(view.compare.regressions, "regression")}
              </span>
              , {plural(view.compare.improvements, "improvement")}
            </p>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

function Fact({ term, value }: { term: string; value: string }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>{value}</dd>
    </>
  );
}

const FILTERS: { value: CaseFilter; label: string; count?: (view: EvaluationView) => number | null }[] = [
  { value: "regression", label: "Regressions", count: (v) => v.compare?.regressions ?? null },
  { value: "improvement", label: "Improvements", count: (v) => v.compare?.improvements ?? null },
  { value: "failed", label: "Failed" },
  { value: "errored", label: "Errored" },
  { value: "pending", label: "Pending" },
  { value: "all", label: "All", count: (v) => v.dataset.cases },
];

/** One row per case, one column per version: each cell its state, each check's mark, and the answer on click. */
function CasesTable({ projectId, view }: { projectId: string; view: EvaluationView }) {
  const compares = view.versions.length > 1;
  const [filter, setFilter] = useState<CaseFilter>(() => firstFilter(view));
  const cases = useInfiniteQuery(evaluationCasesQuery(projectId, view.id, filter));
  const [open, setOpen] = useState<{ item: CaseResultView; version: number } | null>(null);
  const shownFilters = FILTERS.filter(
    (f) => compares || (f.value !== "regression" && f.value !== "improvement"),
  ).filter((f) => f.value !== "pending" || view.status !== "done");
  const items = cases.data?.pages.flatMap((p) => p.items) ?? [];

  let body: React.ReactNode;
  if (cases.isPending) body = <Loading label="Loading the cases…" />;
  else if (cases.isError) body = <ErrorState error={cases.error} onRetry={() => cases.refetch()} />;
  else if (items.length === 0) {
    body = (
      <EmptyState
        title={filter === "all" ? "No cases yet" : `No ${FILTERS.find((f) => f.value === filter)?.label.toLowerCase()}`}
        level={3}
      >
        <p>
          {filter === "regression"
            ? `No case that passes on ${versionTitle(view.versions[0] as VersionSummary)} fails on another version.`
            : "Choose another filter to see the other cases."}
        </p>
      </EmptyState>
    );
  } else {
    body = (
      <>
        <div className="table-wrap">
          <table className="table table-stack eval-table">
            <caption className="visually-hidden">Cases, one column per version</caption>
            <thead>
              <tr>
                <th scope="col">Case</th>
                {view.versions.map((v) => (
                  <th key={v.version} scope="col">
                    {versionTitle(v)} <span className="hash small">{shortHash(v.version)}</span>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {items.map((item) => (
                <tr key={item.position} className={`eval-row-${item.class}`}>
                  <td className="cell-primary">
                    <CaseSummary item={item} />
                  </td>
                  {item.results.map((cell, i) => (
                    <td key={cell.version} data-label={versionTitle(view.versions[i] as VersionSummary)}>
                      <Cell
                        cell={cell}
                        label={`case ${item.position + 1} on ${versionTitle(view.versions[i] as VersionSummary)}`}
                        onOpen={() => setOpen({ item, version: i })}
                      />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {cases.hasNextPage ? (
          <div className="pager">
            <span>{plural(items.length, "case")} shown</span>
            <BusyButton
              type="button"
              className="button button-small"
              busy={cases.isFetchingNextPage}
              onClick={() => void cases.fetchNextPage()}
            >
              Show more
            </BusyButton>
          </div>
        ) : null}
      </>
    );
  }

  return (
    <div className="eval-cases">
      <div className="eval-filter">
        <fieldset className="segmented">
          <legend className="visually-hidden">Show cases</legend>
          {shownFilters.map((f) => {
            const n = f.count?.(view);
            return (
              <label key={f.value}>
                <input
                  type="radio"
                  name={`eval-filter-${view.id}`}
                  value={f.value}
                  checked={filter === f.value}
                  onChange={() => setFilter(f.value)}
                />
                {f.label}
                {n !== null && n !== undefined ? <span className="eval-count">{formatCount(n)}</span> : null}
              </label>
            );
          })}
        </fieldset>
        {compares ? (
          <p className="small muted">
            Against {versionTitle(view.versions[0] as VersionSummary)}: a regression passes there and fails or errors on
            another version; an improvement, the reverse.
          </p>
        ) : null}
      </div>
      {body}
      {open ? <AnswerDialog view={view} item={open.item} version={open.version} onClose={() => setOpen(null)} /> : null}
    </div>
  );
}

const CLASS_LABEL: Record<CaseResultView["class"], string> = {
  regression: "regression",
  improvement: "improvement",
  errored: "errored",
  failed: "failed",
  passed: "passed",
  pending: "pending",
};

function CaseSummary({ item }: { item: CaseResultView }) {
  const vars = Object.entries(item.case.vars);
  return (
    <div className="eval-case">
      <span className="eval-case-head">
        <strong>#{item.position + 1}</strong>
        {item.class === "regression" || item.class === "improvement" ? (
          <span className={`badge eval-class-${item.class}`}>{CLASS_LABEL[item.class]}</span>
        ) : null}
      </span>
      {vars.length > 0 ? (
        <span className="eval-vars small">
          {vars.slice(0, 3).map(([name, value]) => (
            <span key={name}>
              <span className="mono">{name}</span>: {value.length > 60 ? `${value.slice(0, 60)}…` : value}
            </span>
          ))}
          {vars.length > 3 ? <span className="subtle">+{vars.length - 3} more</span> : null}
        </span>
      ) : null}
      {item.case.tags ? <span className="subtle small">{item.case.tags.join(", ")}</span> : null}
    </div>
  );
}

const STATE_MARK: Record<CellView["state"], string> = { passed: "✓", failed: "✗", errored: "!", pending: "…" };

/** A cell: its state, a mark per check, and the button that opens its answer. */
function Cell({ cell, label, onOpen }: { cell: CellView; label: string; onOpen: () => void }) {
  return (
    <div className={`eval-cell eval-cell-${cell.state}`}>
      <span className="eval-cell-state">
        <span aria-hidden="true">{STATE_MARK[cell.state]}</span> {cell.state}
      </span>
      {cell.verdicts.length > 0 ? (
        <ul className="eval-marks" aria-label="Checks">
          {cell.verdicts.map((v) => (
            <li
              key={v.name}
              className={v.pass === null ? "eval-mark-error" : v.pass ? "eval-mark-pass" : "eval-mark-fail"}
              title={v.reason}
            >
              <span aria-hidden="true">{v.pass === null ? "!" : v.pass ? "✓" : "✗"}</span> {v.name}
              <span className="visually-hidden">
                : {v.pass === null ? "could not decide" : v.pass ? "passed" : "failed"}
              </span>
            </li>
          ))}
        </ul>
      ) : null}
      {cell.error ? <span className="eval-cell-error small">{cell.error.code}</span> : null}
      {cell.state !== "pending" ? (
        <button
          type="button"
          className="button button-small eval-open"
          aria-label={`Answer of ${label}`}
          onClick={onOpen}
        >
          Answer
        </button>
      ) : null}
    </div>
  );
}
