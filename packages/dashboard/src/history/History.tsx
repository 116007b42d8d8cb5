import { can } from "@promptstore/core/permissions";
import { useQuery } from "@tanstack/react-query";
import { lazy, Suspense, useId, useState } from "react";
import { useParams, useSearchParams } from "react-router";
import { versionsQuery } from "../api/queries";
import { useProject } from "../shell/session";
import { CopyHash } from "../ui/CopyButton";
import { savedByLabel, shortHash } from "../ui/format";
import { EmptyState, ErrorState, Loading } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import { PublishDialog } from "./PublishDialog";
import { publishKind, type Version } from "./versions";
import "./history.css";

// jsdiff comes with the diff, not with the list of versions.
const DiffView = lazy(() => import("./DiffView"));

const FIRST_ROWS = 50;

export default function History() {
  const { projectId = "", promptId = "" } = useParams();
  const context = useProject();
  const canPublish = context !== null && can(context.role, "publish");
  const list = useQuery(versionsQuery(projectId, promptId));
  const [params, setParams] = useSearchParams();
  const [showAll, setShowAll] = useState(false);
  const [publishing, setPublishing] = useState<Version | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  if (list.isPending) return <Loading label="Loading the history…" />;
  if (list.isError) return <ErrorState error={list.error} onRetry={() => list.refetch()} />;
  const { versions, production_version: production, latest_version: latest } = list.data;
  const shown = showAll ? versions : versions.slice(0, FIRST_ROWS);

  const known = (hash: string | null) => (hash && versions.some((v) => v.version === hash) ? hash : null);
  const defaultFrom = production && production !== latest ? production : (versions[1]?.version ?? null);
  const to = known(params.get("to")) ?? latest;
  const from = known(params.get("from")) ?? defaultFrom;
  const select = (key: "from" | "to", value: string) => {
    const next = new URLSearchParams(params);
    next.set(key, value);
    setParams(next, { replace: true });
  };
  const label = (v: Version) =>
    `${shortHash(v.version)} — ${v.message ?? "no message"}${v.version === production ? " (production)" : ""}${v.version === latest ? " (latest)" : ""}`;

  return (
    <div className="stack-lg">
      <div aria-live="polite">
        {notice ? (
          <p className="notice notice-success" role="status">
            {notice}
          </p>
        ) : null}
      </div>
      <section className="card" aria-labelledby="versions-heading">
        <div className="card-header">
          <div>
            <h2 id="versions-heading">Versions</h2>
            <p>
              {versions.length === 1 ? "1 version" : `${versions.length} versions`}, newest first. Each is immutable;
              publishing moves production to it.
            </p>
          </div>
        </div>
        <div className="table-wrap">
          <table className="table table-stack version-table">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Message</th>
                <th scope="col">Saved</th>
                <th scope="col">By</th>
                {canPublish ? (
                  <th scope="col" className="cell-actions">
                    <span className="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {shown.map((v) => {
                const kind = publishKind(versions, production, v.version);
                return (
                  <tr key={v.version} className={v.version === production ? "row-production" : undefined}>
                    <td className="cell-primary">
                      <div className="version-cell">
                        <CopyHash hash={v.version} />
                        {v.version === production ? <span className="badge badge-production">production</span> : null}
                        {v.version === latest ? <span className="badge badge-latest">latest</span> : null}
                      </div>
                    </td>
                    <td data-label="Message">
                      {v.message ? (
                        <span className="version-message">{v.message}</span>
                      ) : (
                        <span className="subtle">No message</span>
                      )}
                    </td>
                    <td data-label="Saved">
                      <TimeAgo iso={v.created_at} />
                    </td>
                    <td data-label="By" className="version-by">
                      {savedByLabel(v.saved_by)}
                    </td>
                    {canPublish ? (
                      <td className="cell-actions">
                        {kind ? (
                          <button
                            type="button"
                            className="button button-small"
                            onClick={() => {
                              setNotice(null);
                              setPublishing(v);
                            }}
                          >
                            {kind === "publish" ? "Publish" : "Roll back"}
                          </button>
                        ) : null}
                      </td>
                    ) : null}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
        {versions.length > FIRST_ROWS && !showAll ? (
          <div className="pager">
            <span>
              Showing the newest {FIRST_ROWS} of {versions.length}
            </span>
            <button type="button" className="button button-small" onClick={() => setShowAll(true)}>
              Show all versions
            </button>
          </div>
        ) : null}
      </section>

      <section className="card" aria-labelledby="compare-heading">
        <div className="card-header">
          <div>
            <h2 id="compare-heading">Compare versions</h2>
            <p>Section by section: matched by title, in order.</p>
          </div>
          {versions.length > 1 && from ? (
            <div className="compare-pickers">
              <VersionPicker
                label="From"
                value={from}
                versions={versions}
                describe={label}
                onChange={(v) => select("from", v)}
              />
              <button
                type="button"
                className="button button-ghost button-icon compare-swap"
                aria-label="Swap the versions"
                title="Swap"
                onClick={() => {
                  const next = new URLSearchParams(params);
                  next.set("from", to);
                  next.set("to", from);
                  setParams(next, { replace: true });
                }}
              >
                ⇄
              </button>
              <VersionPicker
                label="To"
                value={to}
                versions={versions}
                describe={label}
                onChange={(v) => select("to", v)}
              />
            </div>
          ) : null}
        </div>
        {versions.length < 2 || !from ? (
          <EmptyState title="Nothing to compare yet" level={3}>
            <p>There is one version so far. Save another from the Edit tab to compare them here.</p>
          </EmptyState>
        ) : (
          <Suspense fallback={<Loading label="Loading the comparison…" />}>
            <DiffView projectId={projectId} promptId={promptId} from={from} to={to} />
          </Suspense>
        )}
      </section>

      {publishing ? (
        <PublishDialog
          projectId={projectId}
          promptId={promptId}
          versions={versions}
          production={production}
          target={publishing}
          onClose={() => setPublishing(null)}
          onPublished={(version) => {
            setPublishing(null);
            setNotice(`Production is now version ${shortHash(version)}.`);
          }}
        />
      ) : null}
    </div>
  );
}

/** One end of the comparison: a labelled choice among the versions. */
function VersionPicker({
  label,
  value,
  versions,
  describe,
  onChange,
}: {
  label: string;
  value: string;
  versions: Version[];
  describe: (version: Version) => string;
  onChange: (version: string) => void;
}) {
  const id = useId();
  return (
    <div className="field">
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      <select id={id} className="select" value={value} onChange={(e) => onChange(e.target.value)}>
        {versions.map((v) => (
          <option key={v.version} value={v.version}>
            {describe(v)}
          </option>
        ))}
      </select>
    </div>
  );
}
