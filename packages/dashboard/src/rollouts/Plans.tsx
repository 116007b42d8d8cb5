import { can } from "@promptstore/core/accounts/permissions";
import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { isActive, planQuery } from "../api/plan-queries";
import { versionsQuery } from "../api/queries";
import { labelSettingsQuery } from "../api/release-queries";
import { useProject } from "../shell/session";
import { shortHash } from "../ui/format";
import { LabelBadge } from "../ui/LabelBadge";
import { labelEntries } from "../ui/labels";
import { ErrorState, Loading } from "../ui/States";
import { PlanCard } from "./PlanCard";
import { StartPlanDialog } from "./StartPlanDialog";
import "./plans.css";

/**
 * The Production tab's rollout plans (docs/rollouts.md "In the dashboard"): per label of the prompt, its plan
 * as it stands (or its last one), and for a member who may publish, a way to start one. Which commands a
 * person may give is the server's decision; the page offers them to roles that can publish.
 */
export function Plans({ projectId, promptId }: { projectId: string; promptId: string }) {
  const id = useId();
  const context = useProject();
  const canPublish = context !== null && can(context.role, "publish");
  const list = useQuery(versionsQuery(projectId, promptId));
  const settings = useQuery(labelSettingsQuery(projectId));
  const [starting, setStarting] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  if (list.isPending) return <Loading label="Loading the labels…" />;
  if (list.isError) return null;
  const entries = labelEntries(list.data.labels ?? {});
  if (entries.length === 0) return null;
  const isProtected = (name: string) => settings.data?.labels.some((l) => l.name === name && l.protected) ?? false;

  return (
    <section className="card" aria-labelledby={id}>
      <header className="card-header">
        <div>
          <h3 id={id}>Rollout plans</h3>
          <p>A plan moves a candidate through steps by itself, and aborts when a guardrail is breached.</p>
        </div>
      </header>
      <div className="card-body stack">
        {/* Announced when it appears; empty, it takes no room in the stack. */}
        <div aria-live="polite" className="plan-notice">
          {notice ? (
            <p className="notice notice-success" role="status">
              {notice}
            </p>
          ) : null}
        </div>
        {entries.map(([label, hash]) => (
          <LabelPlan
            key={label}
            projectId={projectId}
            promptId={promptId}
            label={label}
            hash={hash}
            canPublish={canPublish && !settings.isPending}
            onStart={() => {
              setNotice(null);
              setStarting(label);
            }}
          />
        ))}
      </div>
      {starting ? (
        <StartPlanDialog
          projectId={projectId}
          promptId={promptId}
          label={starting}
          versions={list.data.versions}
          current={list.data.labels?.[starting] ?? ""}
          isProtected={isProtected(starting)}
          onClose={() => setStarting(null)}
          onDone={(text) => {
            setStarting(null);
            setNotice(text);
          }}
        />
      ) : null}
    </section>
  );
}

function LabelPlan({
  projectId,
  promptId,
  label,
  hash,
  canPublish,
  onStart,
}: {
  projectId: string;
  promptId: string;
  label: string;
  hash: string;
  canPublish: boolean;
  onStart: () => void;
}) {
  const plan = useQuery(planQuery(projectId, promptId, label));
  if (plan.isPending) return <Loading label={`Loading the plan of ${label}…`} />;
  if (plan.isError)
    return (
      <ErrorState
        title={`Could not load the plan of ${label}`}
        error={plan.error}
        onRetry={() => void plan.refetch()}
      />
    );
  const active = isActive(plan.data);
  return (
    <div className="stack plan-entry">
      {active ? null : (
        <div className="plan-label-row">
          <p>
            <LabelBadge name={label} /> serves <span className="hash">{shortHash(hash)}</span>
            {plan.data ? "; its last plan is below." : "; no plan has run on it."}
          </p>
          {canPublish ? (
            <button type="button" className="button button-small" onClick={onStart}>
              Start a plan on {label}…
            </button>
          ) : null}
        </div>
      )}
      {plan.data ? (
        <PlanCard projectId={projectId} promptId={promptId} plan={plan.data} canCommand={canPublish} />
      ) : null}
    </div>
  );
}
