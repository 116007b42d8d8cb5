import { can } from "@promptstore/core/accounts/permissions";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { connectionsQuery } from "../api/connection-queries";
import { datasetsQuery } from "../api/dataset-queries";
import { type EvaluationView, evaluationDefaultsQuery } from "../api/evaluation-queries";
import { keys, useSaveVersion, versionsQuery } from "../api/queries";
import { useLeaveGuard } from "../editor/editor-hooks";
import { editPath, heldDraft, holdDraft, useHeldDraft } from "../editor/held-draft";
import { stashDraft } from "../editor/rescue";
import { useProject } from "../shell/session";
import { ConfirmDialog, Dialog } from "../ui/Dialog";
import { BusyButton, TextField } from "../ui/Field";
import { shortHash } from "../ui/format";
import { EmptyState, ErrorState, errorText, Loading } from "../ui/States";
import { draftContent, saveBody } from "./draft";
import { PastEvaluations } from "./PastEvaluations";
import { Results } from "./Results";
import { SetupForm } from "./SetupForm";
import "./evaluations.css";

/**
 * A prompt's Evaluate tab (docs/evaluations.md): versions (the editor's unsaved draft among them) run over a
 * dataset, every answer judged by the checks; the score per version, and the cases, regressions first. The
 * evaluation shown is in the address (`?evaluation=ev_…`), so it can be linked to and comes back on reload.
 */
export default function Evaluate() {
  const { projectId = "", promptId = "" } = useParams();
  const [params, setParams] = useSearchParams();
  const context = useProject();
  const canRun = context !== null && can(context.role, "write");
  const held = useHeldDraft(projectId, promptId);
  const evaluationId = params.get("evaluation");
  const versions = useQuery(versionsQuery(projectId, promptId));
  const connections = useQuery({ ...connectionsQuery(projectId), enabled: canRun });
  const datasets = useQuery({ ...datasetsQuery(projectId), enabled: canRun });
  const defaults = useQuery({ ...evaluationDefaultsQuery(projectId, promptId), enabled: canRun });
  const [notice, setNotice] = useState<string | null>(null);
  // An evaluation just started or opened from the list: its results take the focus when they show.
  const [focusResults, setFocusResults] = useState(false);
  const headingId = useId();
  const blocker = useHeldDraftGuard(projectId, promptId, held !== null);

  const open = (view: EvaluationView) => {
    setFocusResults(true);
    const next = new URLSearchParams(params);
    next.set("evaluation", view.id);
    setParams(next);
  };

  let setup: React.ReactNode;
  if (!canRun) {
    setup = (
      <EmptyState title="Evaluations are run by editors and owners" level={3}>
        <p>Your role can read the evaluations below; ask an editor or an owner to run one.</p>
      </EmptyState>
    );
  } else if (versions.isPending || connections.isPending || datasets.isPending || defaults.isPending) {
    setup = <Loading label="Loading what an evaluation needs…" />;
  } else if (versions.isError || connections.isError || datasets.isError || defaults.isError) {
    const failed = [versions, connections, datasets, defaults].find((q) => q.isError);
    setup = <ErrorState error={failed?.error} onRetry={() => void failed?.refetch()} />;
  } else if (connections.data.connections.length === 0) {
    setup = (
      <EmptyState title="No model connection yet" level={3}>
        <p>
          An evaluation asks a model through a connection of this project.{" "}
          {context && can(context.role, "admin") ? (
            <Link to={`/p/${projectId}/settings`} className="inline-link">
              Add one in Settings
            </Link>
          ) : (
            "An owner adds them in Settings."
          )}
        </p>
      </EmptyState>
    );
  } else {
    setup = (
      <SetupForm
        projectId={projectId}
        promptId={promptId}
        list={versions.data}
        connections={connections.data.connections}
        datasets={datasets.data.datasets}
        defaults={defaults.data}
        held={held}
        onStarted={(view) => {
          setNotice(null);
          open(view);
        }}
      />
    );
  }

  return (
    <div className="stack-lg">
      <title>{`Evaluate · ${promptId} — Promptstore`}</title>
      <div aria-live="polite">
        {notice ? (
          <p className="notice notice-success" role="status">
            {notice}
          </p>
        ) : null}
      </div>
      {evaluationId ? (
        <Results
          key={evaluationId}
          projectId={projectId}
          promptId={promptId}
          evaluationId={evaluationId}
          focus={focusResults}
          extra={(view) =>
            held && canRun && view.versions.some((v) => v.draft) ? (
              <SaveDraft projectId={projectId} promptId={promptId} onSaved={setNotice} />
            ) : null
          }
        />
      ) : null}
      <section className="card" aria-labelledby={headingId}>
        <div className="card-header">
          <div>
            <h2 id={headingId}>Evaluate</h2>
            <p>
              Run versions over a dataset and judge every answer with checks: know a version is better before it ships.
              {held ? (
                <>
                  {" "}
                  The editor's unsaved draft is here as “This draft”;{" "}
                  <Link to={editPath(projectId, promptId)} className="inline-link">
                    keep editing it
                  </Link>
                  .
                </>
              ) : null}
            </p>
          </div>
        </div>
        <div className="card-body">{setup}</div>
      </section>
      <PastEvaluations projectId={projectId} promptId={promptId} current={evaluationId} onOpen={open} />
      {blocker.state === "blocked" ? (
        <ConfirmDialog
          title="Leave without saving?"
          confirmLabel="Leave"
          cancelLabel="Stay"
          danger
          onConfirm={() => blocker.proceed()}
          onClose={() => blocker.reset()}
        >
          <p>The editor's changes to this prompt are not saved. If you leave, they are discarded.</p>
        </ConfirmDialog>
      ) : null}
    </div>
  );
}

/**
 * While the editor's draft is held here, leaving for anywhere but the Edit tab asks first (as the editor
 * does), and leaving drops it; a session that ends keeps it for after signing in (editor/rescue.ts).
 */
let dropping: number | undefined;

function useHeldDraftGuard(projectId: string, promptId: string, holding: boolean) {
  const client = useQueryClient();
  const headedFor = useRef<string | null>(null);
  const edit = editPath(projectId, promptId);
  const blocker = useLeaveGuard(
    holding,
    (pathname) => pathname === edit,
    (pathname) => {
      headedFor.current = pathname;
    },
  );
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once, on leaving
  useEffect(() => {
    // A drop asked by a cleanup that React follows with a mount again (StrictMode's check) is called off.
    window.clearTimeout(dropping);
    return () => {
      if (headedFor.current === edit) return;
      dropping = window.setTimeout(() => {
        const left = heldDraft(projectId, promptId);
        if (left !== null && client.getQueryData(keys.session) === null) stashDraft(projectId, promptId, left);
        holdDraft(projectId, promptId, null);
      }, 0);
    };
  }, []);
  return blocker;
}

/** Saves the editor's draft as a version, from here: what was evaluated as "This draft" gets its hash. */
function SaveDraft({
  projectId,
  promptId,
  onSaved,
}: {
  projectId: string;
  promptId: string;
  onSaved: (notice: string) => void;
}) {
  const held = useHeldDraft(projectId, promptId);
  const [asking, setAsking] = useState(false);
  const [message, setMessage] = useState("");
  const save = useSaveVersion(projectId, promptId);
  const client = useQueryClient();
  if (!held) return null;
  const content = draftContent(held);
  return (
    <div className="eval-save-draft">
      <p className="small">The draft is not saved yet. Its results here are those of the version it would save as.</p>
      <button type="button" className="button" disabled={!content.ok} onClick={() => setAsking(true)}>
        Save the draft as a version…
      </button>
      {asking && content.ok ? (
        <Dialog title="Save the draft as a version" onClose={() => setAsking(false)}>
          <form
            className="form"
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              save.mutate(saveBody(held, content.content, message), {
                onSuccess: (saved) => {
                  holdDraft(projectId, promptId, null);
                  setAsking(false);
                  void client.invalidateQueries({ queryKey: keys.prompt(projectId, promptId) });
                  onSaved(
                    saved.created
                      ? `Saved version ${shortHash(saved.version)}: the draft evaluated here.`
                      : `No new version: the draft is identical to version ${shortHash(saved.version)}.`,
                  );
                },
              });
            }}
          >
            <p>It becomes the prompt's latest version; production does not move.</p>
            <TextField label="Message" optional maxLength={500} value={message} onChange={setMessage} data-autofocus />
            {save.isError ? (
              <p className="form-alert" role="alert">
                {errorText(save.error)}
              </p>
            ) : null}
            <div className="dialog-actions">
              <button type="button" className="button" onClick={() => setAsking(false)}>
                Cancel
              </button>
              <BusyButton type="submit" busy={save.isPending}>
                Save version
              </BusyButton>
            </div>
          </form>
        </Dialog>
      ) : null}
    </div>
  );
}
