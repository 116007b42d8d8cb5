import type { NormalCase } from "@promptstore/core/evaluations/cases";
import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { type CaseView, casesQuery, type DatasetView, useRewriteCases } from "../api/dataset-queries";
import { ConfirmDialog } from "../ui/Dialog";
import { formatCount, plural, rangeLabel, shortHash } from "../ui/format";
import { ActionsHeader } from "../ui/SettingsTable";
import { EmptyState, ErrorState, errorText, Loading } from "../ui/States";
import { CaseDialog } from "./CaseDialog";
import { editedList } from "./case-form";
import { columnsOf } from "./file-preview";
import { ImportDialog } from "./ImportDialog";
import { cellText } from "./PreviewTable";

const PAGE = 50;
/** At most this many variables get a column; the rest are counted in the last. */
const MAX_COLUMNS = 6;

export type SavedNotice = (text: string, kind?: "success" | "info") => void;

/** What a save answers, in a sentence: a new version, or none because nothing changed. */
export function savedText(saved: { version: string; created: boolean; cases: number }): [string, "success" | "info"] {
  return saved.created
    ? [`Saved version ${shortHash(saved.version)} (${plural(saved.cases, "case")}).`, "success"]
    : [`No change: these cases are version ${shortHash(saved.version)} already, so no version was made.`, "info"];
}

/** The cases of the version shown, a page at a time: one column per variable, then expected and tags. */
export function CasesCard({
  projectId,
  dataset,
  editable,
  onSaved,
}: {
  projectId: string;
  dataset: DatasetView;
  editable: boolean;
  onSaved: SavedNotice;
}) {
  const [page, setPage] = useState(0);
  const pages = Math.max(1, Math.ceil(dataset.cases / PAGE));
  const current = Math.min(page, pages - 1);
  const cases = useQuery({
    ...casesQuery(projectId, dataset.id, dataset.version, current * PAGE - 1, PAGE),
    placeholderData: (previous) => previous,
  });
  const [editing, setEditing] = useState<CaseView | "new" | null>(null);
  const [removing, setRemoving] = useState<CaseView | null>(null);
  const [importing, setImporting] = useState(false);
  const rewrite = useRewriteCases(projectId, dataset.id);
  const headingId = useId();
  const rows = cases.data?.cases ?? [];
  const allColumns = columnsOf(rows.map((r) => r.case));
  const columns = allColumns.slice(0, MAX_COLUMNS);
  const more = allColumns.length - columns.length;
  const anyMessages = rows.some((r) => (r.case.messages?.length ?? 0) > 0);

  let body: React.ReactNode;
  if (cases.isPending) body = <Loading label="Loading the cases…" />;
  else if (cases.isError) body = <ErrorState error={cases.error} onRetry={() => cases.refetch()} />;
  else if (dataset.cases === 0) {
    body = (
      <EmptyState title="No cases in this version" level={3}>
        <p>{editable ? "Add a case, or import a JSONL or CSV file." : "An editor adds them."}</p>
      </EmptyState>
    );
  } else {
    body = (
      <>
        <div className="table-wrap">
          <table className="table table-stack case-table">
            <caption className="visually-hidden">
              Cases {rangeLabel(current * PAGE, current * PAGE + rows.length, dataset.cases)}
            </caption>
            <thead>
              <tr>
                <th scope="col">#</th>
                {columns.map((name) => (
                  <th key={name} scope="col" className="var-heading">
                    {name}
                  </th>
                ))}
                {more > 0 ? <th scope="col">Other variables</th> : null}
                {anyMessages ? <th scope="col">Chat</th> : null}
                <th scope="col">Expected</th>
                <th scope="col">Tags</th>
                {editable ? <ActionsHeader /> : null}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.position}>
                  <td className="cell-primary num case-number">
                    <span className="visually-hidden">Case </span>
                    {formatCount(row.position + 1)}
                  </td>
                  {columns.map((name) => (
                    <td key={name} data-label={name}>
                      <CellValue value={row.case.vars[name]} />
                    </td>
                  ))}
                  {more > 0 ? (
                    <td data-label="Other variables">
                      {plural(Object.keys(row.case.vars).filter((n) => !columns.includes(n)).length, "more")}
                    </td>
                  ) : null}
                  {anyMessages ? <td data-label="Chat">{plural(row.case.messages?.length ?? 0, "message")}</td> : null}
                  <td data-label="Expected">
                    <CellValue value={row.case.expected} />
                  </td>
                  <td data-label="Tags">
                    {row.case.tags ? (
                      <span className="chips">
                        {row.case.tags.map((t) => (
                          <span key={t} className="badge badge-outline">
                            {t}
                          </span>
                        ))}
                      </span>
                    ) : null}
                  </td>
                  {editable ? (
                    <td className="cell-actions">
                      <span className="row-actions">
                        <button
                          type="button"
                          className="button button-small"
                          aria-label={`Edit case ${row.position + 1}`}
                          onClick={() => setEditing(row)}
                        >
                          Edit
                        </button>
                        <button
                          type="button"
                          className="button button-small"
                          aria-label={`Remove case ${row.position + 1}`}
                          onClick={() => {
                            rewrite.reset();
                            setRemoving(row);
                          }}
                        >
                          Remove
                        </button>
                      </span>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <nav className="pager" aria-label="Pages of cases">
          <span aria-live="polite">{rangeLabel(current * PAGE, current * PAGE + rows.length, dataset.cases)}</span>
          {pages > 1 ? (
            <span className="row">
              <button
                type="button"
                className="button button-small"
                disabled={current === 0}
                onClick={() => setPage(current - 1)}
              >
                Previous
              </button>
              <span className="small">
                Page {formatCount(current + 1)} of {formatCount(pages)}
              </span>
              <button
                type="button"
                className="button button-small"
                disabled={current >= pages - 1}
                onClick={() => setPage(current + 1)}
              >
                Next
              </button>
            </span>
          ) : null}
        </nav>
      </>
    );
  }

  return (
    <section className="card" aria-labelledby={headingId}>
      <div className="card-header">
        <div>
          <h2 id={headingId}>Cases</h2>
          <p>
            {plural(dataset.cases, "case")} in version <span className="hash">{shortHash(dataset.version)}</span>, in
            the order an evaluation asks them.
          </p>
        </div>
        {editable ? (
          <span className="row">
            <button type="button" className="button" onClick={() => setImporting(true)}>
              Import…
            </button>
            <button type="button" className="button button-primary" onClick={() => setEditing("new")}>
              Add case
            </button>
          </span>
        ) : null}
      </div>
      {body}
      {editing ? (
        <CaseDialog
          projectId={projectId}
          dataset={dataset}
          editing={editing === "new" ? null : editing}
          columns={allColumns}
          onClose={() => setEditing(null)}
          onSaved={(saved) => {
            setEditing(null);
            if (editing === "new" && saved.created) setPage(Math.ceil(saved.cases / PAGE) - 1);
            onSaved(...savedText(saved));
          }}
        />
      ) : null}
      {importing ? (
        <ImportDialog
          projectId={projectId}
          dataset={dataset}
          onClose={() => setImporting(false)}
          onSaved={(saved) => {
            setImporting(false);
            onSaved(...savedText(saved));
          }}
        />
      ) : null}
      {removing ? (
        <ConfirmDialog
          title={`Remove case ${removing.position + 1}?`}
          confirmLabel="Remove case"
          danger
          pending={rewrite.isPending}
          error={rewrite.isError ? errorText(rewrite.error) : null}
          onClose={() => setRemoving(null)}
          onConfirm={() =>
            rewrite.mutate(
              {
                head: dataset.version,
                change: (all: NormalCase[]) => editedList(all, removing.position, null),
                message: `Removed case ${removing.position + 1}`,
              },
              {
                onSuccess: (saved) => {
                  setRemoving(null);
                  onSaved(...savedText(saved));
                },
              },
            )
          }
        >
          <p>
            The dataset gets a new version without it; version {shortHash(dataset.version)} keeps it, and evaluations
            that ran over it keep their results.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

function CellValue({ value }: { value: string | undefined }) {
  if (value === undefined) return <span className="subtle">—</span>;
  if (value === "") return <span className="subtle">(empty)</span>;
  return <span className="case-cell">{cellText(value)}</span>;
}
