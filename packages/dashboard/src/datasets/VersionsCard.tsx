import type { NormalCase } from "@promptstore/core/evaluations/cases";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useId, useState } from "react";
import { type DatasetView, datasetVersionsQuery } from "../api/dataset-queries";
import { formatCount, plural, savedByLabel, shortHash } from "../ui/format";
import { ActionsHeader } from "../ui/SettingsTable";
import { ErrorState, errorText, Loading } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import { type Comparison, compareVersions, SHOWN_CASES } from "./compare";
import { cellText } from "./PreviewTable";
import { type CaseRef, diffSummary } from "./version-diff";

/** The dataset's versions, newest first; any one shown, and any two compared case by case. */
export function VersionsCard({
  projectId,
  dataset,
  shown,
  onShow,
}: {
  projectId: string;
  dataset: DatasetView;
  shown: string;
  onShow: (version: string) => void;
}) {
  const list = useQuery(datasetVersionsQuery(projectId, dataset.id));
  const headingId = useId();
  const ids = { from: useId(), to: useId() };
  const versions = list.data?.versions ?? [];
  const [from, setFrom] = useState<string | null>(null);
  const [to, setTo] = useState<string | null>(null);
  const [compared, setCompared] = useState<{ from: string; to: string } | null>(null);
  // By default the newest against the one before it.
  const fromValue = from ?? versions[1]?.version ?? versions[0]?.version ?? "";
  const toValue = to ?? versions[0]?.version ?? "";
  const option = (v: (typeof versions)[number]) =>
    `${shortHash(v.version)} — ${plural(v.cases, "case")}${v.version === list.data?.head ? " (newest)" : ""}${v.message ? `, ${v.message}` : ""}`;

  let body: React.ReactNode;
  if (list.isPending) body = <Loading label="Loading the versions…" />;
  else if (list.isError) body = <ErrorState error={list.error} onRetry={() => list.refetch()} />;
  else {
    body = (
      <>
        <div className="table-wrap">
          <table className="table table-stack version-table">
            <caption className="visually-hidden">Versions, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Cases</th>
                <th scope="col">Note</th>
                <th scope="col">Saved</th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {versions.map((v) => (
                <tr key={v.version} aria-current={v.version === shown ? "true" : undefined}>
                  <td className="cell-primary">
                    <span className="hash">{shortHash(v.version)}</span>
                    {v.version === list.data.head ? <span className="badge badge-latest">newest</span> : null}
                    {v.version === shown ? <span className="badge badge-outline">shown</span> : null}
                  </td>
                  <td data-label="Cases">{formatCount(v.cases)}</td>
                  <td data-label="Note">{v.message ?? <span className="subtle">No note</span>}</td>
                  <td data-label="Saved">
                    {savedByLabel(v.saved_by)} <TimeAgo iso={v.saved_at} />
                  </td>
                  <td className="cell-actions">
                    {v.version === shown ? null : (
                      <button
                        type="button"
                        className="button button-small"
                        aria-label={`Show version ${shortHash(v.version)}`}
                        onClick={() => onShow(v.version)}
                      >
                        Show
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {versions.length > 1 ? (
          <form
            className="version-compare"
            aria-label="Compare two versions"
            onSubmit={(e) => {
              e.preventDefault();
              setCompared({ from: fromValue, to: toValue });
            }}
          >
            {(
              [
                [ids.from, "Compare", fromValue, setFrom],
                [ids.to, "with", toValue, setTo],
              ] as const
            ).map(([id, label, value, set]) => (
              <div className="field" key={id}>
                <label className="field-label" htmlFor={id}>
                  {label}
                </label>
                <select id={id} className="select" value={value} onChange={(e) => set(e.target.value)}>
                  {versions.map((v) => (
                    <option key={v.version} value={v.version}>
                      {option(v)}
                    </option>
                  ))}
                </select>
              </div>
            ))}
            <button type="submit" className="button">
              Compare
            </button>
          </form>
        ) : null}
        {compared ? <DiffPanel projectId={projectId} datasetId={dataset.id} {...compared} /> : null}
      </>
    );
  }

  return (
    <section className="card" aria-labelledby={headingId}>
      <div className="card-header">
        <div>
          <h2 id={headingId}>Versions</h2>
          <p>
            {list.data ? `${plural(versions.length, "version")}, newest first. ` : ""}Each is named by its cases'
            content; saving the same cases again makes none.
          </p>
        </div>
      </div>
      {body}
    </section>
  );
}

type State =
  | { status: "reading"; read: number }
  | { status: "done"; result: Comparison }
  | { status: "error"; error: unknown };

/** What changed from one version to another: cases added and removed (an edited case is one of each). */
function DiffPanel({
  projectId,
  datasetId,
  from,
  to,
}: {
  projectId: string;
  datasetId: string;
  from: string;
  to: string;
}) {
  const [state, setState] = useState<State>({ status: "reading", read: 0 });
  useEffect(() => {
    const controller = new AbortController();
    setState({ status: "reading", read: 0 });
    compareVersions(projectId, datasetId, from, to, controller.signal, (read) => setState({ status: "reading", read }))
      .then((result) => setState({ status: "done", result }))
      .catch((error: unknown) => {
        if (!controller.signal.aborted) setState({ status: "error", error });
      });
    return () => controller.abort();
  }, [projectId, datasetId, from, to]);

  const title = `From ${shortHash(from)} to ${shortHash(to)}`;
  return (
    <section className="card-body version-diff" aria-label={title} aria-busy={state.status === "reading"}>
      <h3>{title}</h3>
      {state.status === "reading" ? (
        <Loading label={`Reading the cases… ${formatCount(state.read)}`} />
      ) : state.status === "error" ? (
        <p className="form-alert" role="alert">
          {errorText(state.error)}
        </p>
      ) : (
        <>
          <p role="status">{from === to ? "The same version." : `${diffSummary(state.result.diff)}.`}</p>
          <p className="small muted">A case edited between the two is a case removed and a case added.</p>
          <DiffCases title="Added" refs={state.result.diff.added} bodies={state.result.bodies} kind="add" />
          <DiffCases title="Removed" refs={state.result.diff.removed} bodies={state.result.bodies} kind="del" />
        </>
      )}
    </section>
  );
}

function DiffCases({
  title,
  refs,
  bodies,
  kind,
}: {
  title: string;
  refs: CaseRef[];
  bodies: Map<string, NormalCase>;
  kind: "add" | "del";
}) {
  if (refs.length === 0) return null;
  const shown = refs.slice(0, SHOWN_CASES);
  return (
    <div className={`diff-cases diff-cases-${kind}`}>
      <h4>
        {title} ({formatCount(refs.length)})
      </h4>
      <ul>
        {shown.map((ref) => {
          const body = bodies.get(ref.id);
          return (
            <li key={ref.id}>
              <span className="diff-case-position">#{ref.position + 1}</span>{" "}
              <span className="mono small">{body ? cellText(summary(body)) : shortHash(ref.id)}</span>
            </li>
          );
        })}
      </ul>
      {refs.length > shown.length ? (
        <p className="small muted">and {formatCount(refs.length - shown.length)} more</p>
      ) : null}
    </div>
  );
}

/** A case in a line: its variables, then what it expects. */
function summary(value: NormalCase): string {
  const vars = Object.entries(value.vars)
    .map(([name, v]) => `${name}=${JSON.stringify(v)}`)
    .join(" ");
  return `${vars || "(no variables)"}${value.expected !== undefined ? ` → ${JSON.stringify(value.expected)}` : ""}`;
}
