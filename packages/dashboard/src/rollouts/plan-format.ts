/**
 * How a plan's numbers read (docs/rollouts.md "What is judged"): each guardrail's estimate, interval and
 * threshold in its own unit (points of ok rate, score, percent of latency), a step's minimums against what it
 * has, a decision in words. Pure: unit-tested, and the e2e test reads the screen against them.
 */
import type { PlanDecisionOut, PlanView } from "@promptstore/core/rollouts/plan-view";
import { formatCount, shortHash } from "../ui/format";

type Result = PlanDecisionOut["results"][number];
export type GuardrailName = Result["guardrail"];

export const GUARDRAIL_TITLES: Record<GuardrailName, string> = {
  ok_rate: "Ok rate",
  score: "Mean score",
  latency_p95: "Latency p95",
};

/** The plan's guardrails in the order the server judges them, with their thresholds. */
export function planGuardrails(plan: Pick<PlanView, "guardrails">): { guardrail: GuardrailName; threshold: number }[] {
  const g = plan.guardrails;
  const out: { guardrail: GuardrailName; threshold: number }[] = [];
  if (g.ok_rate_drop !== undefined) out.push({ guardrail: "ok_rate", threshold: g.ok_rate_drop });
  if (g.score_drop !== undefined) out.push({ guardrail: "score", threshold: g.score_drop });
  if (g.latency_p95_increase !== undefined) out.push({ guardrail: "latency_p95", threshold: g.latency_p95_increase });
  return out;
}

const sign = (v: number) => (v < 0 ? "−" : v > 0 ? "+" : "");

/** A difference in the guardrail's unit, signed: "−15.0 pts", "−0.050", "+12.5%". */
export function difference(guardrail: GuardrailName, v: number): string {
  if (guardrail === "ok_rate") return `${sign(v)}${Math.abs(v * 100).toFixed(1)} pts`;
  if (guardrail === "score") return `${sign(v)}${Math.abs(v).toFixed(3)}`;
  return `${sign(v)}${Math.abs(v * 100).toFixed(1)}%`;
}

/** The always-valid interval: "−18.2 pts to −11.8 pts"; an open upper end (latency) "+40.0% to ∞". */
export function intervalText(guardrail: GuardrailName, interval: Result["interval"]): string {
  if (interval === null) return "—";
  const [lo, hi] = interval;
  return `${difference(guardrail, lo)} to ${hi === null ? "∞" : difference(guardrail, hi)}`;
}

/** The threshold as the bound the difference must stay within: "−5.0 pts at worst", "+30.0% at most". */
export function thresholdText(guardrail: GuardrailName, threshold: number): string {
  return guardrail === "latency_p95"
    ? `${difference(guardrail, threshold)} at most`
    : `${difference(guardrail, -threshold)} at worst`;
}

/** One arm's value of the guardrail's metric: "95.0%", "0.82", "812 ms". */
export function armValue(guardrail: GuardrailName, value: number | null): string {
  if (value === null) return "—";
  if (guardrail === "ok_rate") return `${(value * 100).toFixed(1)}%`;
  if (guardrail === "score") return value.toFixed(2);
  return `${formatCount(Math.round(value))} ms`;
}

export const DECISION_WORDS: Record<Result["decision"], string> = {
  holds: "holds",
  breached: "breached",
  undecided: "undecided",
};

const VERDICT_WORDS: Record<PlanDecisionOut["verdict"], string> = {
  wait: "Wait",
  advance: "Advance",
  complete: "Complete",
  abort: "Abort",
};

/** Who decided: "the plan (from outcomes)", "owner@example.com", "API key abc…". */
export function decidedBy(by: string): string {
  if (by === "plan") return "the plan, from outcomes";
  if (by.startsWith("user:")) return by.slice("user:".length);
  if (by.startsWith("key:")) return `API key ${by.slice("key:".length)}…`;
  return by;
}

/** "Abort at step 1 (50%), by the plan, from outcomes". */
export function decisionLine(plan: Pick<PlanView, "steps">, decision: PlanDecisionOut): string {
  const percent = plan.steps[decision.step]?.percent;
  return `${VERDICT_WORDS[decision.verdict]} at step ${decision.step + 1}${
    percent === undefined ? "" : ` (${percent}%)`
  }, by ${decidedBy(decision.by)}`;
}

/** What a decision did to the label, in words: "advanced to 25%", "completed: 100%", "aborted at 10%". */
function decisionDid(plan: Pick<PlanView, "steps">, decision: PlanDecisionOut): string {
  const at = (step: number) => plan.steps[step]?.percent;
  if (decision.verdict === "advance") return `advanced to ${at(decision.step + 1)}%`;
  if (decision.verdict === "complete") return "completed: 100%";
  if (decision.verdict === "abort") return `aborted at ${at(decision.step)}%`;
  return `waited at ${at(decision.step)}%`;
}

/** A guardrail's numbers in one phrase: "Ok rate −15.0 pts (−18.2 pts to −11.8 pts; −5.0 pts at worst) breached". */
export function resultPhrase(r: Result): string {
  const estimate = r.estimate === null ? "—" : difference(r.guardrail, r.estimate);
  const bounds = `${intervalText(r.guardrail, r.interval)}; ${thresholdText(r.guardrail, r.threshold)}`;
  return `${GUARDRAIL_TITLES[r.guardrail]} ${estimate} (${bounds}) ${DECISION_WORDS[r.decision]}`;
}

/**
 * A decision as a line of the prompt's history, with the numbers that decided it: "production rollout aborted
 * at 50%, by the plan, from outcomes: Ok rate −15.0 pts (…) breached". A person's command has no numbers; an
 * end by a move made outside the plan says so.
 */
export function historyLine(plan: Pick<PlanView, "label" | "steps" | "end_reason">, decision: PlanDecisionOut): string {
  const head = `${plan.label} rollout ${decisionDid(plan, decision)}, by ${decidedBy(decision.by)}`;
  if (decision.results.length > 0) return `${head}: ${decision.results.map(resultPhrase).join("; ")}`;
  const outside = decision.verdict === "abort" && plan.end_reason?.startsWith("the label was changed outside");
  return outside ? `${head} (a move made outside the plan)` : head;
}

/** The start of a plan as a line of the prompt's history: "production rollout started at 10%, by a@b.c". */
export const startLine = (plan: Pick<PlanView, "label" | "steps" | "started_by">): string =>
  `${plan.label} rollout started at ${plan.steps[0]?.percent}%, by ${decidedBy(plan.started_by)}`;

/** A duration a person reads at a glance: "45 s", "4 min 10 s", "1 h", "1 h 30 min", "2 d 3 h". */
export function duration(total: number): string {
  const s = Math.max(0, Math.round(total));
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86_400) {
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    return m === 0 ? `${h} h` : `${h} h ${m} min`;
  }
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  return h === 0 ? `${d} d` : `${d} d ${h} h`;
}

/** "4 min 10 s of 10 min": the time in the step against its minimum. */
export function timeInStep(elapsedSeconds: number, minimumSeconds: number): string {
  return `${duration(elapsedSeconds)} of ${duration(minimumSeconds)}`;
}

/** "2,000 of 3,500". */
export const outcomesInStep = (have: number, minimum: number): string =>
  `${formatCount(have)} of ${formatCount(minimum)}`;

/** "Candidate a1b2c3d against 9f8e7d6". */
export const armsLine = (plan: Pick<PlanView, "version" | "from_version">): string =>
  `Candidate ${shortHash(plan.version)} against ${shortHash(plan.from_version)}`;

/** A step's minimums in a few words: "10 min · 3,500 outcomes", "no minimum". */
export function stepMinimums(step: PlanView["steps"][number]): string {
  const parts: string[] = [];
  if (step.min_duration_seconds > 0) parts.push(duration(step.min_duration_seconds));
  if ((step.min_outcomes ?? 0) > 0) parts.push(`${formatCount(step.min_outcomes ?? 0)} outcomes`);
  return parts.length === 0 ? "no minimum" : parts.join(" · ");
}
