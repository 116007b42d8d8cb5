/**
 * A version's rollouts as lines of the prompt's history (docs/rollouts.md "Plans"): each plan that rolled it
 * out, its start and every decision that moved it, with the numbers that decided it and when.
 */
import type { PlanView } from "../api/plan-queries";
import { TimeAgo } from "../ui/TimeAgo";
import { historyLine, startLine } from "./plan-format";

export function PlanLines({ plans }: { plans: readonly PlanView[] }) {
  if (plans.length === 0) return null;
  return (
    <ul className="plan-lines" aria-label="Rollouts of this version">
      {plans.flatMap((plan) => [
        <li key={`${plan.id}-start`}>
          {startLine(plan)} · <TimeAgo iso={plan.started_at} />
        </li>,
        // Each step is decided once: its step and verdict name a decision within its plan.
        ...plan.decisions.map((decision) => (
          <li
            key={`${plan.id}-${decision.step}-${decision.verdict}`}
            className={decision.verdict === "abort" ? "plan-line-abort" : undefined}
            data-verdict={decision.verdict}
          >
            {historyLine(plan, decision)} · <TimeAgo iso={decision.at} />
          </li>
        )),
      ])}
    </ul>
  );
}
