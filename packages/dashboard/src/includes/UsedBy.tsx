import { can } from "@promptstore/core/accounts/permissions";
import type { Dependent } from "@promptstore/core/views";
import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { Link } from "react-router";
import { type DependentResult, includedByQuery, includesQuery, useUpdateDependents } from "../api/include-queries";
import { useProject } from "../shell/session";
import { shortHash } from "../ui/format";
import { LabelBadge } from "../ui/LabelBadge";
import { EmptyState, ErrorState, errorText, Loading } from "../ui/States";
import { ExpandedDiff } from "./ExpandedDiff";
import { promptHref } from "./include-help";

/**
 * What includes this prompt: each version of another prompt that pins it, what serves that version, and whether
 * its pin is behind ("update available", with the diff of its expanded text). Chosen prompts are updated in one
 * action (`included-by/update`), each its own new version, published where allowed when asked.
 */
export function UsedBy({
  projectId,
  promptId,
  onUpdated,
}: {
  projectId: string;
  promptId: string;
  onUpdated: (results: DependentResult[]) => void;
}) {
  const context = useProject();
  const canWrite = context !== null && can(context.role, "write");
  const canPublish = context !== null && can(context.role, "publish");
  const list = useQuery(includedByQuery(projectId, promptId));
  const update = useUpdateDependents(projectId, promptId);
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const [publish, setPublish] = useState(false);
  const [diffOf, setDiffOf] = useState<string | null>(null);
  const headingId = useId();

  let body: React.ReactNode;
  if (list.isPending) body = <Loading label="Loading what includes this prompt…" />;
  else if (list.isError) {
    body = <ErrorState title="Could not load what includes it" error={list.error} onRetry={() => list.refetch()} />;
  } else if (list.data.included_by.length === 0) {
    body = (
      <EmptyState title="No other prompt includes this one" level={3}>
        <p>
          Another prompt includes it by writing <code>{`{{> ${promptId}}}`}</code> in a section.
        </p>
      </EmptyState>
    );
  } else {
    const rows = list.data.included_by;
    // One choice per prompt: the update saves the version production serves with this prompt's includes moved.
    // Only versions something serves: a pin in their history alone is not updated.
    const behind = (r: Dependent) => r.outdated && r.labels.length > 0;
    const choosable = new Set(rows.filter(behind).map((r) => r.prompt));
    const firstOutdated = new Set(
      rows.filter((r, i) => behind(r) && rows.findIndex((o) => o.prompt === r.prompt && behind(o)) === i),
    );
    const picked = [...chosen].filter((p) => choosable.has(p));
    const toggle = (prompt: string, on: boolean) =>
      setChosen((set) => {
        const next = new Set(set);
        if (on) next.add(prompt);
        else next.delete(prompt);
        return next;
      });
    body = (
      <>
        <div className="include-table-wrap">
          <table className="include-table">
            <caption className="visually-hidden">Versions of other prompts that include {promptId}</caption>
            <thead>
              <tr>
                {canWrite ? <th scope="col">Choose</th> : null}
                <th scope="col">Prompt</th>
                <th scope="col">Version</th>
                <th scope="col">Served by</th>
                <th scope="col">Include</th>
                <th scope="col">Pinned</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => {
                const key = `${row.prompt}/${row.version}/${row.include}`;
                return (
                  <DependentRow
                    key={key}
                    row={row}
                    projectId={projectId}
                    promptId={promptId}
                    canWrite={canWrite}
                    choice={firstOutdated.has(row) ? chosen.has(row.prompt) : null}
                    onChoose={(on) => toggle(row.prompt, on)}
                    diffShown={diffOf === key}
                    onDiff={() => setDiffOf(diffOf === key ? null : key)}
                  />
                );
              })}
            </tbody>
          </table>
        </div>
        {list.data.truncated ? <p className="field-hint">Showing the first 1000 pins.</p> : null}
        {canWrite && choosable.size > 0 ? (
          <div className="update-actions">
            {canPublish ? (
              <label className="checkbox">
                <input type="checkbox" checked={publish} onChange={(e) => setPublish(e.target.checked)} />
                Also publish each to production where allowed
              </label>
            ) : null}
            <button
              type="button"
              className="button button-primary"
              aria-disabled={picked.length === 0 || update.isPending}
              onClick={() => {
                if (picked.length === 0 || update.isPending) return;
                update.mutate(
                  { prompts: picked, label: "production", publish },
                  {
                    onSuccess: (answer) => {
                      setChosen(new Set());
                      onUpdated(answer.results);
                    },
                  },
                );
              }}
            >
              {update.isPending ? "Updating…" : `Update the chosen (${picked.length})`}
            </button>
          </div>
        ) : null}
        {update.isError ? (
          <p className="field-error" role="alert">
            {errorText(update.error)}
          </p>
        ) : null}
      </>
    );
  }

  return (
    <section className="card" aria-labelledby={headingId}>
      <div className="card-header">
        <div>
          <h2 id={headingId}>Used by</h2>
          <p>The versions of other prompts that include {promptId}, and what serves them.</p>
        </div>
      </div>
      <div className="card-body stack">{body}</div>
    </section>
  );
}

function DependentRow({
  row,
  projectId,
  promptId,
  canWrite,
  choice,
  onChoose,
  diffShown,
  onDiff,
}: {
  row: Dependent;
  projectId: string;
  promptId: string;
  canWrite: boolean;
  /** Whether the row's prompt is chosen; null when this row has no choice (up to date, or not its first). */
  choice: boolean | null;
  onChoose: (on: boolean) => void;
  diffShown: boolean;
  onDiff: () => void;
}) {
  const columns = canWrite ? 7 : 6;
  return (
    <>
      <tr>
        {canWrite ? (
          <td>
            {choice === null ? null : (
              <input
                type="checkbox"
                checked={choice}
                onChange={(e) => onChoose(e.target.checked)}
                aria-label={`Choose ${row.prompt}`}
              />
            )}
          </td>
        ) : null}
        <td>
          <Link to={promptHref(projectId, row.prompt)}>{row.prompt}</Link>
        </td>
        <td>
          <span className="hash">{shortHash(row.version)}</span>
        </td>
        <td>
          <span className="include-labels">
            {row.labels.length === 0 ? (
              <span className="muted">nothing</span>
            ) : (
              row.labels.map((l) => <LabelBadge key={l} name={l} />)
            )}
          </span>
        </td>
        <td>
          <code className="include-chip">{row.include}</code>
        </td>
        <td>
          <span className="hash">{shortHash(row.pinned)}</span>
        </td>
        <td>
          {row.outdated ? (
            <span className="stack-xs">
              <span className="badge badge-warning">Update available</span>{" "}
              <span className="small muted">
                {row.pointer} is <span className="hash">{row.current ? shortHash(row.current) : "gone"}</span>
              </span>{" "}
              {row.current ? (
                <button
                  type="button"
                  className="button button-ghost button-small"
                  aria-expanded={diffShown}
                  onClick={onDiff}
                >
                  {diffShown ? "Hide the diff" : "Show the diff"}
                </button>
              ) : null}
            </span>
          ) : (
            <span className="badge badge-outline">Up to date</span>
          )}
        </td>
      </tr>
      {diffShown ? (
        <tr>
          <td colSpan={columns}>
            <DependentDiff projectId={projectId} row={row} piece={promptId} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

/** One dependent version's expanded text, before and after its pins of this prompt move. */
function DependentDiff({ projectId, row, piece }: { projectId: string; row: Dependent; piece: string }) {
  const includes = useQuery(includesQuery(projectId, row.prompt, row.version));
  if (includes.isPending) return <Loading label="Loading its includes…" />;
  if (includes.isError) return <ErrorState error={includes.error} onRetry={() => includes.refetch()} />;
  return (
    <ExpandedDiff
      projectId={projectId}
      promptId={row.prompt}
      version={row.version}
      includes={includes.data.includes}
      prompts={[piece]}
    />
  );
}
