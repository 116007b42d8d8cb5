import { useQuery } from "@tanstack/react-query";
import { useId } from "react";
import { datasetsQuery } from "../api/dataset-queries";
import { type EvaluationView, evaluationsQuery } from "../api/evaluation-queries";
import { plural, shortHash } from "../ui/format";
import { EmptyState, ErrorState, Loading } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import { percent, versionTitle } from "./results";

/** The prompt's evaluations, newest first: each opened in the results above. */
export function PastEvaluations({
  projectId,
  promptId,
  current,
  onOpen,
}: {
  projectId: string;
  promptId: string;
  current: string | null;
  onOpen: (view: EvaluationView) => void;
}) {
  const list = useQuery(evaluationsQuery(projectId, promptId));
  const datasets = useQuery(datasetsQuery(projectId));
  const headingId = useId();
  const nameOf = (id: string) => datasets.data?.datasets.find((d) => d.id === id)?.name ?? id;

  let body: React.ReactNode;
  if (list.isPending) body = <Loading label="Loading the evaluations…" />;
  else if (list.isError) body = <ErrorState error={list.error} onRetry={() => list.refetch()} />;
  else if (list.data.evaluations.length === 0) {
    body = (
      <EmptyState title="No evaluations yet" level={3}>
        <p>Each evaluation of this prompt is listed here, with its pass rate per version.</p>
      </EmptyState>
    );
  } else {
    body = (
      <div className="table-wrap">
        <table className="table table-stack past-table">
          <caption className="visually-hidden">Evaluations of this prompt, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Status</th>
              <th scope="col">Versions (pass rate)</th>
              <th scope="col">Dataset</th>
              <th scope="col">Regressions</th>
            </tr>
          </thead>
          <tbody>
            {list.data.evaluations.map((e) => (
              <tr key={e.id} aria-current={e.id === current ? "true" : undefined}>
                <td className="cell-primary">
                  <span className="row">
                    <button
                      type="button"
                      className="button button-small"
                      aria-label={`Open evaluation ${e.id}`}
                      onClick={() => onOpen(e)}
                    >
                      Open
                    </button>
                    <TimeAgo iso={e.created_at} />
                  </span>
                </td>
                <td data-label="Status">
                  <span className="row">
                    <span className={`badge eval-badge-${e.status}`}>{e.status}</span>
                    {e.reused ? <span className="badge badge-outline">reused</span> : null}
                  </span>
                </td>
                <td data-label="Versions">
                  <span className="past-versions">
                    {e.versions.map((v) => (
                      <span key={v.version}>
                        {versionTitle(v)} <span className="hash small">{shortHash(v.version)}</span>{" "}
                        <strong>{e.status === "running" ? "…" : percent(v.pass_rate)}</strong>
                      </span>
                    ))}
                  </span>
                </td>
                <td data-label="Dataset">
                  <span>
                    {nameOf(e.dataset.id)} <span className="subtle small">({plural(e.dataset.cases, "case")})</span>
                  </span>
                </td>
                <td data-label="Regressions">
                  {e.compare ? e.compare.regressions : <span className="subtle">—</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }
  return (
    <section className="card" aria-labelledby={headingId}>
      <div className="card-header">
        <div>
          <h2 id={headingId}>Past evaluations</h2>
          <p>The same versions, dataset version and checks again are reused at once: nothing is asked twice.</p>
        </div>
      </div>
      {body}
    </section>
  );
}
