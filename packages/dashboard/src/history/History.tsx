import { can } from "@promptstore/core/accounts/permissions";
import { labelNameProblem, PRODUCTION } from "@promptstore/core/labels";
import { useQuery } from "@tanstack/react-query";
import { Suspense, useId, useState } from "react";
import { useParams, useSearchParams } from "react-router";
import { promptPlansQuery } from "../api/plan-queries";
import { versionsQuery } from "../api/queries";
import { labelSettingsQuery, useRemoveLabel } from "../api/release-queries";
import { PlanLines } from "../rollouts/PlanLines";
import { StartPlanDialog } from "../rollouts/StartPlanDialog";
import { useProject } from "../shell/session";
import { CopyHash } from "../ui/CopyButton";
import { ConfirmDialog } from "../ui/Dialog";
import { plural, savedByLabel, shortHash } from "../ui/format";
import { LabelBadge } from "../ui/LabelBadge";
import { labelEntries } from "../ui/labels";
import { EmptyState, ErrorState, errorText, Loading } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import { comparedVersions } from "./compared";
import { type LabelAction, LabelDialog } from "./LabelDialog";
import { LabelsCard } from "./LabelsCard";
import { LazyDiffView } from "./LazyDiffView";
import { PublishDialog } from "./PublishDialog";
import { publishKind, type Version } from "./versions";
import "./history.css";
import { ActionsHeader } from "../ui/SettingsTable";

/** The parts this screen shows at once, fetched by the router with its code. */
export const preload = () => LazyDiffView.preload();

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
  const settings = useQuery(labelSettingsQuery(projectId));
  // The rollouts each version had, oldest first: lines under its row (none while they load or fail).
  const plans = useQuery(promptPlansQuery(projectId, promptId));
  const plansOf = (version: string) => (plans.data?.plans ?? []).filter((p) => p.version === version).reverse();
  const [labelAction, setLabelAction] = useState<LabelAction | null>(null);
  const [picked, setPicked] = useState<string | null>(null);
  const [removing, setRemoving] = useState<string | null>(null);
  const remove = useRemoveLabel(projectId, promptId);
  const pickerId = useId();
  const knownId = useId();

  if (list.isPending) return <Loading label="Loading the history…" />;
  if (list.isError) return <ErrorState error={list.error} onRetry={() => list.refetch()} />;
  const { versions, production_version: production, latest_version: latest } = list.data;
  const labelSettings = settings.data?.labels ?? [];
  // Which buttons a row offers depends on which labels are protected: none until that is known (if it
  // cannot be read, the server still refuses a protected move, and the dialog shows why).
  const showActions = canPublish && !settings.isPending;
  const isProtected = (name: string) => labelSettings.some((l) => l.name === name && l.protected);
  // The labels a person may pick to move: the project's, then this prompt's; staging when there are none.
  const known = [
    ...new Set(
      [...labelSettings.map((l) => l.name), ...Object.keys(list.data.labels ?? {})].filter((n) => n !== PRODUCTION),
    ),
  ].sort();
  const moving = (picked ?? known[0] ?? "staging").trim();
  const movingProblem = moving === PRODUCTION ? undefined : labelNameProblem(moving);
  const openLabelAction = (action: LabelAction) => {
    setNotice(null);
    setLabelAction(action);
  };
  const shown = showAll ? versions : versions.slice(0, FIRST_ROWS);

  const { from, to } = comparedVersions(list.data, params);
  const select = (key: "from" | "to", value: string) => {
    const next = new URLSearchParams(params);
    next.set(key, value);
    setParams(next, { replace: true });
  };
  // The pointers before the message: a picker cuts a long option at its width, and a message may be long.
  const label = (v: Version) => {
    const pointers = [v.version === production ? "production" : null, v.version === latest ? "latest" : null];
    const named = pointers.filter((p) => p !== null).join(", ");
    return `${shortHash(v.version)}${named ? ` (${named})` : ""} — ${v.message ?? "no message"}`;
  };

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
          {canPublish ? (
            <div className="field label-picker">
              <label className="field-label" htmlFor={pickerId}>
                Label
              </label>
              <input
                id={pickerId}
                className="input mono"
                list={knownId}
                autoComplete="off"
                spellCheck={false}
                value={picked ?? moving}
                aria-invalid={movingProblem ? true : undefined}
                aria-describedby={movingProblem ? `${pickerId}-error` : `${pickerId}-hint`}
                onChange={(e) => setPicked(e.target.value)}
              />
              <datalist id={knownId}>
                {known.map((name) => (
                  <option key={name} value={name} />
                ))}
              </datalist>
              {movingProblem ? (
                <p className="field-error" id={`${pickerId}-error`}>
                  {movingProblem}
                </p>
              ) : (
                <p className="visually-hidden" id={`${pickerId}-hint`}>
                  Each version's row offers to move this label there.
                </p>
              )}
            </div>
          ) : null}
        </div>
        <div className="table-wrap">
          <table className="table table-stack version-table">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Message</th>
                <th scope="col">Saved</th>
                <th scope="col">By</th>
                {showActions ? <ActionsHeader /> : null}
              </tr>
            </thead>
            <tbody>
              {shown.map((v) => {
                const kind = publishKind(versions, production, v.version);
                const moveHere =
                  !movingProblem && moving !== PRODUCTION && v.labels?.[moving] !== v.version ? moving : null;
                return (
                  <tr key={v.version} className={v.version === production ? "row-production" : undefined}>
                    <td className="cell-primary">
                      <div className="version-cell">
                        <CopyHash hash={v.version} />
                        {v.version === production ? <span className="badge badge-production">production</span> : null}
                        {v.version === latest ? <span className="badge badge-latest">latest</span> : null}
                        {labelEntries(v.labels)
                          .filter(([name]) => name !== PRODUCTION)
                          .map(([name]) => (
                            <LabelBadge key={name} name={name} />
                          ))}
                      </div>
                    </td>
                    <td data-label="Message">
                      {v.message ? (
                        <span className="version-message">{v.message}</span>
                      ) : (
                        <span className="subtle">No message</span>
                      )}
                      <TriedOn examples={(v as { examples?: Tried }).examples} />
                      <PlanLines plans={plansOf(v.version)} />
                    </td>
                    <td data-label="Saved">
                      <TimeAgo iso={v.created_at} />
                    </td>
                    <td data-label="By" className="version-by">
                      {savedByLabel(v.saved_by)}
                    </td>
                    {showActions ? (
                      <td className="cell-actions">
                        <span className="label-actions">
                          {kind && isProtected(PRODUCTION) ? (
                            <button
                              type="button"
                              className="button button-small"
                              onClick={() => openLabelAction({ kind: "move", label: PRODUCTION, version: v.version })}
                            >
                              Request production release
                            </button>
                          ) : kind ? (
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
                          {moveHere ? (
                            <button
                              type="button"
                              className="button button-small"
                              onClick={() => openLabelAction({ kind: "move", label: moveHere, version: v.version })}
                            >
                              {isProtected(moveHere) ? `Request ${moveHere} release` : `Move ${moveHere} here`}
                            </button>
                          ) : null}
                        </span>
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

      <LabelsCard
        projectId={projectId}
        promptId={promptId}
        labels={list.data.labels ?? {}}
        latest={latest}
        settings={labelSettings}
        canPublish={canPublish}
        onAction={openLabelAction}
        onRemove={(name) => {
          setNotice(null);
          remove.reset();
          setRemoving(name);
        }}
      />

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
            <LazyDiffView projectId={projectId} promptId={promptId} from={from} to={to} />
          </Suspense>
        )}
      </section>

      {labelAction?.kind === "plan" ? (
        <StartPlanDialog
          projectId={projectId}
          promptId={promptId}
          label={labelAction.label}
          versions={versions}
          current={list.data.labels?.[labelAction.label] ?? ""}
          isProtected={isProtected(labelAction.label)}
          onClose={() => setLabelAction(null)}
          onDone={(text) => {
            setLabelAction(null);
            setNotice(text);
          }}
        />
      ) : labelAction ? (
        <LabelDialog
          projectId={projectId}
          promptId={promptId}
          versions={versions}
          action={labelAction}
          current={list.data.labels?.[labelAction.label] ?? null}
          isProtected={isProtected(labelAction.label)}
          onClose={() => setLabelAction(null)}
          onDone={(text) => {
            setLabelAction(null);
            setNotice(text);
          }}
        />
      ) : null}

      {removing ? (
        <ConfirmDialog
          title={`Remove ${removing} from this prompt?`}
          confirmLabel={`Remove ${removing}`}
          danger
          pending={remove.isPending}
          error={remove.isError ? errorText(remove.error) : null}
          onClose={() => setRemoving(null)}
          onConfirm={() =>
            remove.mutate(removing, {
              onSuccess: () => {
                setNotice(`${removing} no longer points at a version of this prompt.`);
                setRemoving(null);
              },
            })
          }
        >
          <p>
            Reads of {removing} get its fallback label's version from their next request, if it has one; otherwise they
            are a 404 naming the label.
          </p>
        </ConfirmDialog>
      ) : null}

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

/** The saved examples a version has a kept result for (docs/playground.md, "Where results show"). */
interface Tried {
  tried: number;
  of: number;
}

function TriedOn({ examples }: { examples: Tried | undefined }) {
  if (!examples || examples.of === 0) return null;
  return (
    <span className={examples.tried === 0 ? "version-tried subtle" : "version-tried"}>
      tried on {examples.tried} of {plural(examples.of, "example")}
    </span>
  );
}
