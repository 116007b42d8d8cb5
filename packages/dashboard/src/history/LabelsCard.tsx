import { PRODUCTION } from "@promptstore/core/labels";
import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { isActive, planQuery } from "../api/plan-queries";
import { promptViewQuery } from "../api/queries";
import type { LabelSetting } from "../api/release-queries";
import { shortHash } from "../ui/format";
import { LabelBadge } from "../ui/LabelBadge";
import { labelEntries } from "../ui/labels";
import { ActionsHeader } from "../ui/SettingsTable";
import type { LabelAction } from "./LabelDialog";

interface LabelsCardProps {
  projectId: string;
  promptId: string;
  /** The prompt's labels, to their hashes (production included when set). */
  labels: Record<string, string>;
  latest: string;
  settings: readonly LabelSetting[];
  canPublish: boolean;
  onAction: (action: LabelAction) => void;
  /** Asks to take a label off the prompt (never production, never a protected one: the server refuses). */
  onRemove: (label: string) => void;
}

/** Every label of the prompt with its version, its rollout if one runs, and the rollout's controls. */
export function LabelsCard({
  projectId,
  promptId,
  labels,
  latest,
  settings,
  canPublish,
  onAction,
  onRemove,
}: LabelsCardProps) {
  const entries = labelEntries(labels);
  return (
    <section className="card" aria-labelledby="labels-heading">
      <div className="card-header">
        <div>
          <h2 id="labels-heading">Labels and rollouts</h2>
          <p>
            Each label serves one version to the applications that read it. A rollout sends a share of its reads to a
            candidate first.
          </p>
        </div>
      </div>
      {entries.length === 0 ? (
        <div className="card-body">
          <p className="muted">
            No label points at a version of this prompt yet. Publish a version, or move a label to one from the list of
            versions above.
          </p>
        </div>
      ) : (
        <div className="table-wrap">
          <table className="table table-stack label-table">
            <thead>
              <tr>
                <th scope="col">Label</th>
                <th scope="col">Version</th>
                <th scope="col">Rollout</th>
                {canPublish ? <ActionsHeader /> : null}
              </tr>
            </thead>
            <tbody>
              {entries.map(([name, hash]) => (
                <LabelRow
                  key={name}
                  projectId={projectId}
                  promptId={promptId}
                  name={name}
                  hash={hash}
                  latest={latest}
                  setting={settings.find((s) => s.name === name)}
                  canPublish={canPublish}
                  onAction={onAction}
                  onRemove={onRemove}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function LabelRow({
  projectId,
  promptId,
  name,
  hash,
  latest,
  setting,
  canPublish,
  onAction,
  onRemove,
}: {
  projectId: string;
  promptId: string;
  name: string;
  hash: string;
  latest: string;
  setting: LabelSetting | undefined;
  canPublish: boolean;
  onAction: (action: LabelAction) => void;
  onRemove: (label: string) => void;
}) {
  // The read of the label reports its rollout (the arm it got does not matter here).
  const view = useQuery(promptViewQuery(projectId, promptId, name, false));
  const rollout = view.data?.rollout;
  // A plan moves the rollout by itself: say so, and where to watch it.
  const plan = useQuery(planQuery(projectId, promptId, name));
  const planned = isActive(plan.data) ? plan.data : null;
  return (
    <tr>
      <td className="cell-primary">
        <span className="label-name">
          <LabelBadge name={name} />
          {setting?.protected ? <span className="badge badge-warning">protected</span> : null}
        </span>
        {setting?.description ? <span className="label-description">{setting.description}</span> : null}
      </td>
      <td data-label="Version">
        <span className="hash">{shortHash(hash)}</span>
      </td>
      <td data-label="Rollout">
        {view.isPending ? (
          <span className="subtle small">checking…</span>
        ) : view.isError ? (
          <span className="small field-error">could not read the rollout</span>
        ) : rollout ? (
          <span className="rollout-state">
            <span className="hash">{shortHash(rollout.candidate)}</span> to {rollout.percent}% of reads
            <meter className="meter rollout-meter" min={0} max={100} value={rollout.percent} aria-hidden="true" />
            {planned ? (
              <Link className="small" to="../production">
                by a {planned.status} plan, step {planned.step + 1} of {planned.steps.length}
              </Link>
            ) : null}
          </span>
        ) : (
          <span className="subtle small">none</span>
        )}
      </td>
      {canPublish ? (
        <td className="cell-actions">
          <span className="label-actions">
            {rollout ? (
              <>
                <button
                  type="button"
                  className="button button-small"
                  aria-label={`Change the rollout on ${name}`}
                  onClick={() =>
                    onAction({ kind: "rollout", label: name, version: rollout.candidate, percent: rollout.percent })
                  }
                >
                  Change %
                </button>
                <button
                  type="button"
                  className="button button-small"
                  aria-label={`Complete the rollout on ${name}`}
                  onClick={() => onAction({ kind: "complete", label: name, version: rollout.candidate })}
                >
                  Complete
                </button>
                <button
                  type="button"
                  className="button button-small"
                  aria-label={`Abort the rollout on ${name}`}
                  onClick={() => onAction({ kind: "abort", label: name, version: hash })}
                >
                  Abort
                </button>
              </>
            ) : (
              <button
                type="button"
                className="button button-small"
                aria-label={`Roll out a version on ${name}`}
                onClick={() => onAction({ kind: "rollout", label: name, version: latest === hash ? "" : latest })}
              >
                Roll out…
              </button>
            )}
            {rollout ? null : (
              <button
                type="button"
                className="button button-small"
                aria-label={`Start a rollout plan on ${name}`}
                onClick={() => onAction({ kind: "plan", label: name, version: "" })}
              >
                Plan…
              </button>
            )}
            {name !== PRODUCTION && !setting?.protected ? (
              <button
                type="button"
                className="button button-small"
                aria-label={`Remove ${name} from this prompt`}
                onClick={() => onRemove(name)}
              >
                Remove
              </button>
            ) : null}
          </span>
        </td>
      ) : null}
    </tr>
  );
}
