import type { IncludeState } from "@promptstore/core/views";
import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { Link, useParams } from "react-router";
import { type DependentResult, includesQuery } from "../api/include-queries";
import { shortHash } from "../ui/format";
import { EmptyState, ErrorState, Loading } from "../ui/States";
import { promptHref } from "./include-help";
import { outcomeText } from "./outcome";
import { UpdateBanner } from "./UpdateBanner";
import { UsedBy } from "./UsedBy";
import "./includes.css";

/** What an update did: a line per prompt, and whether a release request now waits (a link to them). */
type Notice = { kind: "success" | "warning"; lines: string[]; requested: boolean };

/**
 * The Includes tab (docs/includes.md): what the version production serves includes, with its pins, and an
 * "Update available" banner when a pin is behind what it follows; and what includes this prompt.
 */
export default function Includes() {
  const { projectId = "", promptId = "" } = useParams();
  const served = useQuery(includesQuery(projectId, promptId));
  const [notice, setNotice] = useState<Notice | null>(null);
  const headingId = useId();

  const told = (results: DependentResult[]) =>
    setNotice({
      kind: results.some((r) => "error" in r || r.outcome === "blocked") ? "warning" : "success",
      lines: results.map((r) => ("error" in r ? `${r.id}: not updated: ${r.error}` : `${r.id}: ${outcomeText(r)}`)),
      requested: results.some((r) => !("error" in r) && r.outcome === "release_requested"),
    });

  return (
    <div className="includes-screen">
      <h2 className="visually-hidden">Includes</h2>
      <div aria-live="polite">
        {notice ? (
          <div className={`notice ${notice.kind === "success" ? "notice-success" : "notice-warning"}`} role="status">
            {notice.lines.length === 1 ? (
              notice.lines[0]
            ) : (
              <ul className="update-results">
                {notice.lines.map((line) => (
                  <li key={line}>{line}</li>
                ))}
              </ul>
            )}
            {notice.requested ? (
              <>
                {" "}
                <Link to={`/p/${projectId}/releases`}>See the request</Link>
              </>
            ) : null}
          </div>
        ) : null}
      </div>
      {served.isPending ? (
        <Loading label="Loading the includes…" />
      ) : served.isError ? (
        <ErrorState title="Could not load the includes" error={served.error} onRetry={() => served.refetch()} />
      ) : (
        <>
          {served.data.includes.some((i) => i.outdated) ? (
            <UpdateBanner
              projectId={projectId}
              promptId={promptId}
              version={served.data.version}
              includes={served.data.includes}
              onUpdated={(result) => told([result])}
            />
          ) : null}
          <section className="card" aria-labelledby={headingId}>
            <div className="card-header">
              <div>
                <h2 id={headingId}>Includes</h2>
                <p>
                  What the version production serves (<span className="hash">{shortHash(served.data.version)}</span>)
                  includes, each pinned to a version when it was saved.
                </p>
              </div>
            </div>
            <div className="card-body">
              {served.data.includes.length === 0 ? (
                <EmptyState title="This version includes no other prompt" level={3}>
                  <p>
                    Write <code>{"{{> prompt-id}}"}</code> in a section to include another prompt of the project.
                  </p>
                </EmptyState>
              ) : (
                <IncludeTable projectId={projectId} includes={served.data.includes} />
              )}
            </div>
          </section>
        </>
      )}
      <UsedBy projectId={projectId} promptId={promptId} onUpdated={told} />
    </div>
  );
}

function IncludeTable({ projectId, includes }: { projectId: string; includes: IncludeState[] }) {
  return (
    <div className="include-table-wrap">
      <table className="include-table">
        <caption className="visually-hidden">Includes and their pins</caption>
        <thead>
          <tr>
            <th scope="col">Include</th>
            <th scope="col">Prompt</th>
            <th scope="col">Follows</th>
            <th scope="col">Pinned</th>
            <th scope="col">Now</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {includes.map((i) => (
            <tr key={i.include}>
              <td>
                <code className="include-chip">{i.include}</code>
              </td>
              <td>
                <Link to={promptHref(projectId, i.prompt)}>{i.prompt}</Link>
                {i.section === null ? null : <span className="muted small"> (section “{i.section}”)</span>}
              </td>
              <td>{i.pointer}</td>
              <td>
                <span className="hash">{shortHash(i.version)}</span>
              </td>
              <td>
                {i.current ? <span className="hash">{shortHash(i.current)}</span> : <span className="muted">gone</span>}
              </td>
              <td>
                {i.outdated ? (
                  <span className="badge badge-warning">Update available</span>
                ) : (
                  <span className="badge badge-outline">Up to date</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
