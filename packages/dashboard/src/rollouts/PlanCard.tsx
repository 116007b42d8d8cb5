import { useEffect, useId, useState } from "react";
import { isActive, type PlanCommand, type PlanView, usePlanCommand } from "../api/plan-queries";
import { ScrollRegion } from "../production/ScrollRegion";
import { ConfirmDialog } from "../ui/Dialog";
import { fullDate, shortHash } from "../ui/format";
import { LabelBadge } from "../ui/LabelBadge";
import { errorText } from "../ui/States";
import { TimeAgo } from "../ui/TimeAgo";
import {
  armsLine,
  armValue,
  DECISION_WORDS,
  decidedBy,
  decisionLine,
  difference,
  GUARDRAIL_TITLES,
  intervalText,
  outcomesInStep,
  planGuardrails,
  stepMinimums,
  thresholdText,
  timeInStep,
} from "./plan-format";

const STATUS_CLASS: Record<PlanView["status"], string> = {
  running: "badge badge-latest",
  paused: "badge badge-warning",
  aborted: "badge badge-danger",
  completed: "badge badge-production",
};

const DECISION_CLASS: Record<"holds" | "breached" | "undecided", string> = {
  holds: "badge badge-production",
  breached: "badge badge-danger",
  undecided: "badge badge-outline",
};

/** Seconds since `iso`, ticking once a second while `live`. */
function useElapsed(iso: string, live: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [live]);
  return Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
}

/**
 * One label's rollout plan as it stands (docs/rollouts.md "In the dashboard"): its status, the step ladder
 * with the current step, the step's time and candidate outcomes against its minimums, each guardrail's estimate,
 * interval, threshold and decision from the last decision, and the commands this person may give. The server
 * decides who may: a refusal shows its message.
 */
export function PlanCard({
  projectId,
  promptId,
  plan,
  canCommand,
}: {
  projectId: string;
  promptId: string;
  plan: PlanView;
  /** The member's role may publish: the commands are offered (the server still decides). */
  canCommand: boolean;
}) {
  const id = useId();
  const command = usePlanCommand(projectId, promptId, plan.label);
  const [confirmAbort, setConfirmAbort] = useState(false);
  const active = isActive(plan);
  const elapsed = useElapsed(plan.step_started_at, plan.status === "running");
  const decision = plan.last_decision;
  const step = plan.steps[plan.step];
  const minimums = decision && decision.step === plan.step ? decision.minimums : null;
  const run = (name: PlanCommand) => command.mutate(name, { onSuccess: () => setConfirmAbort(false) });

  return (
    <section className="plan-card stack" aria-labelledby={id} data-status={plan.status}>
      <header className="plan-header">
        <div>
          <h4 id={id} className="plan-title">
            Rollout plan <LabelBadge name={plan.label} />{" "}
            <span className={STATUS_CLASS[plan.status]}>{plan.status}</span>
          </h4>
          <p>
            {armsLine(plan)} · started by {decidedBy(plan.started_by)} <TimeAgo iso={plan.started_at} />
            {plan.release_id ? " · from an approved release request" : ""}
          </p>
        </div>
      </header>
      <div className="stack">
        <ol className="plan-ladder" aria-label="Steps">
          {plan.steps.map((s, i) => {
            const state =
              plan.status === "completed" || i < plan.step
                ? "done"
                : i === plan.step
                  ? plan.status === "aborted"
                    ? "aborted"
                    : "current"
                  : "next";
            return (
              <li
                key={s.percent}
                className={`plan-step plan-step-${state}`}
                aria-current={state === "current" ? "step" : undefined}
              >
                <span className="plan-step-percent">{s.percent}%</span>
                <span className="plan-step-min">{stepMinimums(s)}</span>
                <span className="visually-hidden">
                  {state === "done"
                    ? " (done)"
                    : state === "current"
                      ? " (current)"
                      : state === "aborted"
                        ? " (aborted here)"
                        : ""}
                </span>
              </li>
            );
          })}
        </ol>

        <dl className="facts plan-facts">
          <dt>Candidate share now</dt>
          <dd>{plan.percent}% of reads</dd>
          {active && step ? (
            <>
              <dt>Time in step</dt>
              <dd>{timeInStep(elapsed, step.min_duration_seconds)}</dd>
              <dt>Candidate outcomes in step</dt>
              <dd>
                {minimums
                  ? outcomesInStep(minimums.candidate_outcomes, minimums.min_outcomes)
                  : `not counted yet (at least ${outcomesInStep(0, step.min_outcomes ?? 0).split(" of ")[1]})`}
              </dd>
            </>
          ) : null}
          {plan.ended_at ? (
            <>
              <dt>Ended</dt>
              <dd>
                {fullDate(plan.ended_at)}
                {plan.end_reason ? `: ${plan.end_reason}` : ""}
              </dd>
            </>
          ) : null}
        </dl>

        <Guardrails plan={plan} />

        <p className="plan-decision">
          {decision ? (
            <>
              <strong>Last decision:</strong> {decisionLine(plan, decision)}, {fullDate(decision.at)}
              {decision.minimums
                ? ` — ${timeInStep(decision.minimums.elapsed_seconds, decision.minimums.min_duration_seconds)} in step, ${outcomesInStep(decision.minimums.candidate_outcomes, decision.minimums.min_outcomes)} candidate outcomes, minimums ${decision.minimums.met ? "met" : "not met"}.`
                : "."}
            </>
          ) : (
            <span className="muted">No decision yet: the server looks at the outcomes every few seconds.</span>
          )}
        </p>

        {canCommand && active ? (
          <fieldset className="plan-controls">
            <legend className="visually-hidden">Plan on {plan.label}</legend>
            {plan.status === "running" ? (
              <button type="button" className="button" disabled={command.isPending} onClick={() => run("pause")}>
                Pause
              </button>
            ) : (
              <button type="button" className="button" disabled={command.isPending} onClick={() => run("resume")}>
                Resume
              </button>
            )}
            <button type="button" className="button" disabled={command.isPending} onClick={() => run("advance")}>
              {plan.step === plan.steps.length - 1 || plan.steps[plan.step + 1]?.percent === 100
                ? "Complete now"
                : `Advance to ${plan.steps[plan.step + 1]?.percent}%`}
            </button>
            <button
              type="button"
              className="button button-danger"
              disabled={command.isPending}
              onClick={() => {
                command.reset();
                setConfirmAbort(true);
              }}
            >
              Abort…
            </button>
          </fieldset>
        ) : null}
        {command.isError && !confirmAbort ? (
          <p className="form-alert" role="alert">
            {errorText(command.error)}
          </p>
        ) : null}
      </div>
      {confirmAbort ? (
        <ConfirmDialog
          title={`Abort the plan on ${plan.label}?`}
          confirmLabel="Abort plan"
          danger
          pending={command.isPending}
          error={command.isError ? errorText(command.error) : null}
          onClose={() => setConfirmAbort(false)}
          onConfirm={() => run("abort")}
        >
          <p>
            Every read of {plan.label} gets {shortHash(plan.from_version)} again, the version it served before the plan.
            The candidate {shortHash(plan.version)} gets no more traffic. An abort needs no approval.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

/** Each guardrail of the plan, with the numbers of the last decision that read the evidence. */
function Guardrails({ plan }: { plan: PlanView }) {
  const results = plan.last_decision?.results ?? [];
  return (
    <ScrollRegion className="table-wrap" label={`Guardrails of the plan on ${plan.label}`}>
      <table className="table plan-guardrails">
        <caption className="plan-caption">
          Guardrails{results.length === 0 ? ": no evidence judged yet" : ", at the last decision"}
        </caption>
        <thead>
          <tr>
            <th scope="col">Guardrail</th>
            <th scope="col" className="num">
              Candidate
            </th>
            <th scope="col" className="num">
              Current
            </th>
            <th scope="col" className="num">
              Difference
            </th>
            <th scope="col" className="num">
              Interval
            </th>
            <th scope="col" className="num">
              Threshold
            </th>
            <th scope="col">Decision</th>
          </tr>
        </thead>
        <tbody>
          {planGuardrails(plan).map(({ guardrail, threshold }) => {
            const r = results.find((x) => x.guardrail === guardrail);
            return (
              <tr key={guardrail}>
                <th scope="row">{GUARDRAIL_TITLES[guardrail]}</th>
                <td className="num">
                  {r ? `${armValue(guardrail, r.candidate.value)} (${r.candidate.count.toLocaleString("en-US")})` : "—"}
                </td>
                <td className="num">
                  {r ? `${armValue(guardrail, r.current.value)} (${r.current.count.toLocaleString("en-US")})` : "—"}
                </td>
                <td className="num">{r && r.estimate !== null ? difference(guardrail, r.estimate) : "—"}</td>
                <td className="num">
                  {r ? intervalText(guardrail, r.interval) : "—"}
                  {r?.interval ? (
                    <span className="visually-hidden"> (always valid at {Math.round((1 - r.alpha) * 1000) / 10}%)</span>
                  ) : null}
                </td>
                <td className="num">{thresholdText(guardrail, threshold)}</td>
                <td>
                  {r ? (
                    <span className={DECISION_CLASS[r.decision]}>{DECISION_WORDS[r.decision]}</span>
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
