import { can } from "@promptstore/core/accounts/permissions";
import { useQuery } from "@tanstack/react-query";
import { Suspense, useState } from "react";
import { Link, NavLink, Outlet, useParams } from "react-router";
import { isApiError } from "../api/client";
import { promptViewQuery } from "../api/queries";
import { NotFound } from "../shell/NotFound";
import { useProject } from "../shell/session";
import { shortHash } from "../ui/format";
import { LabelBadge } from "../ui/LabelBadge";
import { labelEntries } from "../ui/labels";
import { ErrorState, Loading } from "../ui/States";
import { DeletePromptDialog } from "./DeletePromptDialog";
import "./editor.css";

/** One prompt: its name, pointers, and the Edit · History · Preview tabs. */
export default function PromptPage() {
  const { projectId = "", promptId = "" } = useParams();
  const latest = useQuery(promptViewQuery(projectId, promptId, "latest", false));
  const context = useProject();
  const canDelete = context !== null && can(context.role, "publish");
  const [deleting, setDeleting] = useState(false);
  const base = `/p/${projectId}/prompts/${encodeURIComponent(promptId)}`;

  if (latest.isPending) return <Loading label="Loading the prompt…" />;
  if (latest.isError) {
    if (isApiError(latest.error) && latest.error.status === 404) {
      return <NotFound title="Prompt not found" message={`This project has no prompt with the id “${promptId}”.`} />;
    }
    return <ErrorState title="Could not load the prompt" error={latest.error} onRetry={() => latest.refetch()} />;
  }
  const prompt = latest.data;
  return (
    <div className="stack-lg">
      <header className="prompt-header">
        <nav className="breadcrumb" aria-label="Breadcrumb">
          <Link to={`/p/${projectId}/prompts`}>Prompts</Link>
          <span aria-hidden="true">/</span>
        </nav>
        <div className="prompt-title">
          <h1>{prompt.name}</h1>
          <span className="prompt-id mono">{prompt.id}</span>
          {canDelete ? (
            <button type="button" className="button button-small prompt-delete" onClick={() => setDeleting(true)}>
              Delete…
            </button>
          ) : null}
        </div>
        <p className="prompt-pointers">
          <span className="prompt-label">
            <span className="badge badge-production">production</span>
            {prompt.production_version ? (
              <span className="hash">{shortHash(prompt.production_version)}</span>
            ) : (
              <span className="muted">not published</span>
            )}
          </span>
          <span className="prompt-label">
            <span className="badge badge-latest">latest</span>
            <span className="hash">{shortHash(prompt.version)}</span>
          </span>
          {labelEntries(prompt.labels)
            .filter(([name]) => name !== "production")
            .map(([name, hash]) => (
              <span key={name} className="prompt-label">
                <LabelBadge name={name} />
                <span className="hash">{shortHash(hash)}</span>
              </span>
            ))}
        </p>
        <nav className="tabs" aria-label="Prompt">
          <NavLink to={base} end className="tab">
            Edit
          </NavLink>
          <NavLink to={`${base}/history`} className="tab">
            History
          </NavLink>
          <NavLink to={`${base}/preview`} className="tab">
            Preview
          </NavLink>
          <NavLink to={`${base}/evaluate`} className="tab">
            Evaluate
          </NavLink>
          <NavLink to={`${base}/production`} className="tab">
            Production
          </NavLink>
          <NavLink to={`${base}/includes`} className="tab">
            Includes
          </NavLink>
        </nav>
      </header>
      <Suspense fallback={<Loading />}>
        <Outlet />
      </Suspense>
      {deleting ? (
        <DeletePromptDialog projectId={projectId} prompt={prompt} onClose={() => setDeleting(false)} />
      ) : null}
    </div>
  );
}
