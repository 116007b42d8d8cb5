import type { AuditEntry } from "@promptstore/core/audit";
import { readableRef } from "@promptstore/core/version-ref";
import { useInfiniteQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { auditQuery } from "../api/queries";
import { EmptyState, ErrorState, Loading } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";

const ACTION_LABEL: Record<AuditEntry["action"], string> = {
  "prompt.created": "Prompt created",
  "prompt.saved": "Version saved",
  "prompt.published": "Published",
  "prompt.deleted": "Prompt deleted",
  "key.created": "Key created",
  "key.revoked": "Key revoked",
  "plan.changed": "Plan changed",
  "invitation.created": "Invitation sent",
  "invitation.revoked": "Invitation revoked",
  "invitation.accepted": "Invitation accepted",
  "label.moved": "Label moved",
  "label.removed": "Label removed",
  "rollout.changed": "Rollout changed",
  "rollout.started": "Rollout plan started",
  "rollout.paused": "Rollout plan paused",
  "rollout.resumed": "Rollout plan resumed",
  "rollout.advanced": "Rollout plan advanced",
  "rollout.aborted": "Rollout plan aborted",
  "rollout.completed": "Rollout plan completed",
  "release.requested": "Release requested",
  "release.approved": "Release approved",
  "release.rejected": "Release rejected",
  "release.cancelled": "Release cancelled",
  "label.configured": "Label settings changed",
  "app.connected": "App connected",
  "app.revoked": "App revoked",
  "evaluation.started": "Evaluation started",
  "evaluation.stopped": "Evaluation stopped",
  "evaluation.defaults_saved": "Default checks saved",
  "dataset.created": "Dataset created",
  "dataset.version_created": "Dataset version saved",
  "dataset.head_moved": "Dataset version restored",
  "dataset.updated": "Dataset renamed or described",
  "dataset.deleted": "Dataset deleted",
  "label.requirement_changed": "Required evaluation changed",
  "gate.passed": "Required evaluation passed",
  "gate.refused": "Refused: required evaluation",
};

const pointer = (value: string | null) => (value === null ? "—" : readableRef(value));

/** Who changed what in the project, newest first (owners: it names members and keys). */
export function AuditTrail({ projectId, projectName }: { projectId: string; projectName: string }) {
  const trail = useInfiniteQuery(auditQuery(projectId));

  let body: ReactNode;
  if (trail.isPending) body = <Loading label="Loading the audit trail…" />;
  else if (trail.isError) body = <ErrorState error={trail.error} onRetry={() => trail.refetch()} />;
  else {
    const entries = trail.data.pages.flatMap((page) => page.entries);
    body =
      entries.length === 0 ? (
        <EmptyState title="Nothing recorded yet" level={3}>
          <p>Saves, publishes, deletions, keys and plan changes appear here.</p>
        </EmptyState>
      ) : (
        <>
          <div className="table-wrap">
            <table className="table table-stack audit-table">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">What</th>
                  <th scope="col">Of</th>
                  <th scope="col">From → to</th>
                  <th scope="col">By</th>
                </tr>
              </thead>
              <tbody>
                {entries.map((entry) => (
                  <tr key={entry.id}>
                    <td data-label="When">
                      <TimeAgo iso={entry.at} />
                    </td>
                    <td data-label="What" className="cell-primary">
                      {ACTION_LABEL[entry.action]}
                    </td>
                    <td data-label="Of">
                      <span className="hash">{entry.target}</span>
                    </td>
                    <td data-label="From → to">
                      <span className="audit-pointer">
                        {pointer(entry.before)} → {pointer(entry.after)}
                      </span>
                    </td>
                    <td data-label="By">{entry.actor}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {trail.hasNextPage ? (
            <div className="audit-more">
              <button
                type="button"
                className="button"
                disabled={trail.isFetchingNextPage}
                aria-busy={trail.isFetchingNextPage || undefined}
                onClick={() => trail.fetchNextPage()}
              >
                Show older
              </button>
            </div>
          ) : null}
        </>
      );
  }

  return (
    <section className="card" aria-labelledby="audit-heading">
      <div className="card-header">
        <div>
          <h2 id="audit-heading">Audit trail</h2>
          <p>Who changed what in {projectName}, and its organization's plan, newest first.</p>
        </div>
      </div>
      {body}
    </section>
  );
}
