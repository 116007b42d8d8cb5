import { can } from "@promptstore/core/accounts/permissions";
import { useQuery } from "@tanstack/react-query";
import { type ReactNode, Suspense, useId, useState } from "react";
import { Link, useSearchParams } from "react-router";
import { evaluationQuery } from "../api/evaluation-queries";
import { gateQuery, type Release, type ReleaseStatus, releasesQuery, useDecideRelease } from "../api/release-queries";
import { LazyDiffView } from "../history/LazyDiffView";
import { useProject } from "../shell/session";
import { Field } from "../ui/Field";
import { plural, savedByLabel, shortHash } from "../ui/format";
import { LabelBadge } from "../ui/LabelBadge";
import { EmptyState, ErrorState, errorText, Loading } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import { ReleaseEvaluation } from "./ReleaseEvaluation";
import { ReleaseExamples } from "./ReleaseExamples";
import { gateBlock, ReleaseGate } from "./ReleaseGate";
import "../history/history.css";
import "./releases.css";

const FILTERS = [
  { value: "pending", label: "Pending" },
  { value: "approved", label: "Approved" },
  { value: "rejected", label: "Rejected" },
  { value: "stale", label: "Stale" },
  { value: "cancelled", label: "Cancelled" },
  { value: "all", label: "All" },
] as const satisfies readonly { value: ReleaseStatus | "all"; label: string }[];

type Filter = (typeof FILTERS)[number]["value"];

const STATUS_BADGE: Record<ReleaseStatus, string> = {
  pending: "badge badge-warning",
  approved: "badge badge-production",
  rejected: "badge badge-danger",
  stale: "badge badge-outline",
  cancelled: "badge badge-outline",
};

const EMPTY: Record<Filter, string> = {
  pending: "No release is waiting for approval",
  approved: "No release has been approved yet",
  rejected: "No release has been rejected",
  stale: "No release went stale",
  cancelled: "No release was cancelled",
  all: "No release has been requested yet",
};

/**
 * The project's release requests: the pending ones first, each with the diff from what its label serves now
 * to what it would serve, and Approve / Reject with a comment for owners. Everyone else reads them; the
 * server decides who may decide, and its refusal shows next to the action.
 */
export default function Releases() {
  const context = useProject();
  const [params, setParams] = useSearchParams();
  const inAddress: Filter = FILTERS.find((f) => f.value === params.get("status"))?.value ?? "pending";
  // The choice shows at once: the router applies the address it writes in a transition, and a radio bound to
  // the address alone stayed unchecked after its click until that transition rendered.
  const [chosen, setChosen] = useState<{ filter: Filter; from: Filter } | null>(null);
  // Once the address has caught up, it alone decides again (Back to the former filter shows that filter).
  if (chosen !== null && chosen.filter === inAddress) setChosen(null);
  const filter = chosen !== null && chosen.from === inAddress ? chosen.filter : inAddress;
  const list = useQuery(releasesQuery(context?.project.id ?? "", filter));
  const [notice, setNotice] = useState<string | null>(null);
  if (!context) return null;
  const { project } = context;
  const canDecide = can(context.role, "approve");

  let body: ReactNode;
  if (list.isPending) body = <Loading label="Loading the releases…" />;
  else if (list.isError)
    body = <ErrorState title="Could not load the releases" error={list.error} onRetry={() => list.refetch()} />;
  else if (list.data.releases.length === 0) {
    body = (
      <div className="card">
        <EmptyState title={EMPTY[filter]}>
          <p>
            A protected label moves only through a release request that an owner approves. Ask for one from a prompt’s
            History tab, with <code>POST /api/v2/prompts/:id/releases</code>, or with the MCP tool{" "}
            <code>request_release</code>.
          </p>
        </EmptyState>
      </div>
    );
  } else {
    body = (
      <ol className="release-list" aria-label="Release requests">
        {list.data.releases.map((release) => (
          <li key={release.id}>
            <ReleaseItem projectId={project.id} release={release} canDecide={canDecide} onDecided={setNotice} />
          </li>
        ))}
      </ol>
    );
  }

  return (
    <div className="stack-lg">
      <title>{`Releases · ${project.name} — Promptstore`}</title>
      <header className="page-header">
        <div>
          <h1>Releases</h1>
          <p>
            {project.name}
            {list.data
              ? ` · ${plural(list.data.releases.length, filter === "all" ? "request" : `${filter} request`)}`
              : ""}
          </p>
        </div>
      </header>
      <div>
        <div className="release-toolbar">
          <fieldset className="segmented" aria-label="Show">
            <legend className="visually-hidden">Show</legend>
            {FILTERS.map((f) => (
              <label key={f.value}>
                <input
                  type="radio"
                  name="release-status"
                  value={f.value}
                  checked={filter === f.value}
                  onChange={() => {
                    setNotice(null);
                    setChosen({ filter: f.value, from: inAddress });
                    const next = new URLSearchParams(params);
                    if (f.value === "pending") next.delete("status");
                    else next.set("status", f.value);
                    setParams(next, { replace: true });
                  }}
                />
                {f.label}
              </label>
            ))}
          </fieldset>
          {canDecide ? null : <p className="small muted">Owners approve or reject releases; you can read them here.</p>}
        </div>
        {/* Inside the toolbar's block, so an empty live region adds no gap to the page. */}
        <div aria-live="polite" className="release-notice">
          {notice ? (
            <p className="notice notice-success" role="status">
              {notice}
            </p>
          ) : null}
        </div>
      </div>
      {body}
    </div>
  );
}

function ReleaseItem({
  projectId,
  release,
  canDecide,
  onDecided,
}: {
  projectId: string;
  release: Release;
  canDecide: boolean;
  onDecided: (notice: string) => void;
}) {
  const headingId = useId();
  const blockId = useId();
  const pending = release.status === "pending";
  // The label's required evaluation, for a request still waiting: Approve waits until its candidate passes.
  const gate = useQuery({
    ...gateQuery(projectId, release.prompt_id, release.label, release.version),
    enabled: pending,
  });
  const followed = gate.data?.state === "not_evaluated" ? (gate.data.evaluation ?? "") : "";
  const gateRun = useQuery({ ...evaluationQuery(projectId, followed), enabled: followed !== "" });
  const block = pending ? (gate.isError ? null : gateBlock(gate.data, gateRun.data?.status === "running")) : null;
  const [showDiff, setShowDiff] = useState(pending);
  const promptLink = `/p/${projectId}/prompts/${encodeURIComponent(release.prompt_id)}/history`;
  const target = release.percent
    ? `${shortHash(release.version)} for ${release.percent}% of reads`
    : shortHash(release.version);
  return (
    <article className="card release" aria-labelledby={headingId}>
      <div className="card-header">
        <div className="release-title">
          <h2 id={headingId}>
            <Link to={promptLink}>{release.prompt_id}</Link>
            <span className="visually-hidden">: </span>
            <LabelBadge name={release.label} />
            <span className="visually-hidden">
              {" "}
              to {target}, {release.status}
            </span>
          </h2>
          <span className={STATUS_BADGE[release.status]} aria-hidden="true">
            {release.status}
          </span>
        </div>
        <p className="release-meta">
          Requested by {savedByLabel(release.requested_by)} <TimeAgo iso={release.requested_at} />
        </p>
      </div>
      <div className="card-body stack">
        <dl className="facts release-facts">
          <dt>{release.label} served</dt>
          <dd>
            {release.from_version ? (
              <span className="hash">{shortHash(release.from_version)}</span>
            ) : (
              <span className="muted">nothing (not set on this prompt)</span>
            )}
          </dd>
          <dt>Would serve</dt>
          <dd>
            <span className="hash">{shortHash(release.version)}</span>
            {release.percent ? <span> to {release.percent}% of reads (a rollout)</span> : null}
          </dd>
          <dt>Message</dt>
          <dd>{release.message ? release.message : <span className="subtle">No message</span>}</dd>
          {release.decided_by ? (
            <>
              <dt>{release.status === "rejected" ? "Rejected by" : "Decided by"}</dt>
              <dd>
                {savedByLabel(release.decided_by)} {release.decided_at ? <TimeAgo iso={release.decided_at} /> : null}
              </dd>
              <dt>Comment</dt>
              <dd>{release.comment ? release.comment : <span className="subtle">No comment</span>}</dd>
            </>
          ) : null}
        </dl>
        {release.status === "stale" ? (
          <p className="notice notice-warning">
            {release.label} moved after this was asked: it no longer serves {shortHash(release.from_version ?? "")}. Ask
            again from the prompt’s History.
          </p>
        ) : null}
        {release.status === "cancelled" ? (
          <p className="notice notice-warning">
            Cancelled: the prompt was deleted, or no longer holds {shortHash(release.version)}. Nothing moved.
          </p>
        ) : null}
      </div>
      <div className="release-diff">
        {release.from_version === null ? (
          <p className="card-body muted">
            {release.label} is not set on this prompt yet: every section of {shortHash(release.version)} is new to it.
          </p>
        ) : release.from_version === release.version ? (
          <p className="card-body muted">
            {release.label} already serves {shortHash(release.version)}: approving this ends its rollout, and every read
            gets that version again.
          </p>
        ) : showDiff ? (
          <Suspense fallback={<Loading label="Loading the comparison…" />}>
            <LazyDiffView
              projectId={projectId}
              promptId={release.prompt_id}
              from={release.from_version}
              to={release.version}
            />
          </Suspense>
        ) : (
          <div className="card-body">
            <button type="button" className="button button-small" onClick={() => setShowDiff(true)}>
              Show the changes
            </button>
          </div>
        )}
      </div>
      <ReleaseGate projectId={projectId} release={release} gate={gate.data} />
      <ReleaseEvaluation projectId={projectId} release={release} />
      {showDiff ? <ReleaseExamples projectId={projectId} releaseId={release.id} label={release.label} /> : null}
      {pending && canDecide ? (
        <Decision projectId={projectId} release={release} onDecided={onDecided} block={block} blockId={blockId} />
      ) : null}
    </article>
  );
}

/** Approve or reject, with a comment; the server's refusal (your own request, decided meanwhile) shows here. */
function Decision({
  projectId,
  release,
  onDecided,
  block,
  blockId,
}: {
  projectId: string;
  release: Release;
  onDecided: (notice: string) => void;
  /** Why Approve waits (the label's required evaluation), shown in the gate's part; null when it need not. */
  block: string | null;
  blockId: string;
}) {
  const decide = useDecideRelease(projectId);
  const [comment, setComment] = useState("");
  const [choice, setChoice] = useState<boolean | null>(null);
  const errorId = useId();
  const run = (approve: boolean) => {
    setChoice(approve);
    decide.mutate(
      { id: release.id, approve, comment: comment.trim() || undefined },
      {
        onSuccess: (decided) =>
          onDecided(
            decided.status === "approved"
              ? `Approved: ${decided.label} of ${decided.prompt_id} ${
                  decided.percent
                    ? `rolls ${shortHash(decided.version)} out to ${decided.percent}%`
                    : `now serves ${shortHash(decided.version)}`
                }.`
              : decided.status === "rejected"
                ? `Rejected the release of ${decided.label} of ${decided.prompt_id}.`
                : `${decided.label} of ${decided.prompt_id} moved meanwhile: the request is stale, nothing changed.`,
          ),
      },
    );
  };
  return (
    <div className="release-decision">
      <Field label="Comment" optional hint="Kept with the decision, in the audit trail and the webhook.">
        {(control) => (
          <textarea
            {...control}
            className="textarea"
            rows={2}
            value={comment}
            onChange={(e) => setComment(e.target.value)}
          />
        )}
      </Field>
      {decide.isError ? (
        <p className="form-alert" role="alert" id={errorId}>
          {errorText(decide.error)}
        </p>
      ) : null}
      {block !== null ? (
        <p className="small release-gate-block" id={blockId}>
          {block}
        </p>
      ) : null}
      <div className="form-actions">
        <button
          type="button"
          className="button button-primary"
          disabled={decide.isPending || block !== null}
          aria-busy={(decide.isPending && choice === true) || undefined}
          aria-describedby={
            [block !== null ? blockId : "", decide.isError ? errorId : ""].join(" ").trim() || undefined
          }
          onClick={() => run(true)}
        >
          Approve
        </button>
        <button
          type="button"
          className="button"
          disabled={decide.isPending}
          aria-busy={(decide.isPending && choice === false) || undefined}
          aria-describedby={decide.isError ? errorId : undefined}
          onClick={() => run(false)}
        >
          Reject
        </button>
      </div>
    </div>
  );
}
