import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { Link } from "react-router";
import { evaluationQuery } from "../api/evaluation-queries";
import { type GateView, gateKeys, type Release, useRunRequired } from "../api/release-queries";
import { percent } from "../evaluations/results";
import { shortHash } from "../ui/format";
import { errorText } from "../ui/States";

const POLL_MS = 1000;

const STATE_TEXT: Record<NonNullable<GateView["state"]>, string> = {
  passed: "passed",
  failed: "failed",
  stale: "stale",
  not_evaluated: "not evaluated",
};

const STATE_BADGE: Record<NonNullable<GateView["state"]>, string> = {
  passed: "badge badge-production",
  failed: "badge badge-danger",
  stale: "badge badge-warning",
  not_evaluated: "badge badge-outline",
};

/** Why Approve waits, in words, or null when the gate lets the candidate through (or there is none). */
export function gateBlock(gate: GateView | undefined, running: boolean): string | null {
  if (!gate) return "Reading the label's required evaluation…";
  if (!gate.required || gate.state === "passed") return null;
  if (running) return `Approve waits for the required evaluation of ${shortHash(gate.version)}, still running.`;
  return `Approve waits until ${shortHash(gate.version)} passes ${gate.label}'s required evaluation: ${
    gate.reason || STATE_TEXT[gate.state ?? "not_evaluated"]
  }.`;
}

/**
 * A gated label's requirement for the request's candidate (docs/evaluations.md, "Required evaluations"): where
 * it stands, why, and a button that runs it, with its progress while it runs. Approve reflects it; the server
 * refuses an approval of a candidate that has not passed in any case.
 */
export function ReleaseGate({
  projectId,
  release,
  gate,
}: {
  projectId: string;
  release: Release;
  gate: GateView | undefined;
}) {
  const client = useQueryClient();
  const run = useRunRequired(projectId, release.prompt_id, release.label);
  // The evaluation being followed: the one just started, or the one the gate says is still running.
  const followed =
    run.data?.id ?? (gate?.state === "not_evaluated" && gate.evaluation ? gate.evaluation : undefined) ?? "";
  const evaluation = useQuery({
    ...evaluationQuery(projectId, followed),
    enabled: followed !== "",
    refetchInterval: (query) => (query.state.data?.status === "running" ? POLL_MS : false),
  });
  const running = evaluation.data?.status === "running";
  const ended = evaluation.data !== undefined && !running;
  // Once it ends, the gate is read again (passed, or failed with the thresholds missed).
  useEffect(() => {
    if (ended) void client.invalidateQueries({ queryKey: gateKeys.all(projectId) });
  }, [ended, client, projectId]);

  if (!gate?.required || release.status !== "pending") return null;
  const state = gate.state ?? "not_evaluated";
  const evaluateLink = `/p/${projectId}/prompts/${encodeURIComponent(release.prompt_id)}/evaluate`;
  const progress = evaluation.data?.progress;
  return (
    <section className="card-body release-gate" aria-label="Required evaluation">
      <h3>
        Required evaluation{" "}
        <span className={STATE_BADGE[running ? "not_evaluated" : state]}>
          {running ? "running" : STATE_TEXT[state]}
        </span>
      </h3>
      {running && progress ? (
        <div className="release-gate-progress">
          <progress
            max={progress.total || 1}
            value={progress.done}
            aria-label={`Required evaluation of ${shortHash(release.version)}`}
          />
          <span className="small" role="status">
            {progress.done} of {progress.total} answers judged
          </span>
        </div>
      ) : state === "passed" ? (
        <p className="small">
          {shortHash(release.version)} passed {release.label}'s required evaluation
          {gate.rollback ? " (a rollback to a version it served)" : ""}
          {gate.pass_rate !== undefined && gate.pass_rate !== null ? (
            <>
              {" "}
              with <strong>{percent(gate.pass_rate)}</strong> of cases passing
            </>
          ) : null}
          .{" "}
          {gate.evaluation ? (
            <Link to={`${evaluateLink}?evaluation=${gate.evaluation}`} className="inline-link">
              Open the evaluation
            </Link>
          ) : null}
        </p>
      ) : (
        <p className="small">
          {state === "failed" ? "Failed: " : state === "stale" ? "Stale: " : ""}
          {gate.reason ||
            (state === "not_evaluated"
              ? `No evaluation of ${shortHash(gate.version)} has passed this requirement yet.`
              : STATE_TEXT[state])}
          {state === "failed" ? "." : ""}
          {gate.evaluation && state !== "not_evaluated" ? (
            <>
              {" "}
              <Link to={`${evaluateLink}?evaluation=${gate.evaluation}`} className="inline-link">
                Open the evaluation
              </Link>
            </>
          ) : null}
        </p>
      )}
      {/* A failed evaluation run again is reused and fails the same way; a stale or missing one is worth running. */}
      {state !== "passed" && state !== "failed" && !running ? (
        <div className="form-actions">
          <button
            type="button"
            className="button"
            disabled={run.isPending}
            aria-busy={run.isPending || undefined}
            onClick={() => run.mutate(release.version)}
          >
            Run required evaluation
          </button>
        </div>
      ) : null}
      {run.isError ? (
        <p className="form-alert" role="alert">
          {errorText(run.error)}
        </p>
      ) : null}
      {evaluation.data?.status === "failed" || evaluation.data?.status === "stopped" ? (
        <p className="form-alert" role="alert">
          The evaluation {evaluation.data.status}
          {evaluation.data.reason ? `: ${evaluation.data.reason}` : ""}.
        </p>
      ) : null}
    </section>
  );
}
