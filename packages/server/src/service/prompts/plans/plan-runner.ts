/**
 * The plan runner, one per instance (docs/rollouts.md "Plans"): every `PROMPTSTORE_ROLLOUT_TICK_MS` it looks at
 * each running plan, reads the evidence since the plan started, and asks core's `decidePlan`. A wait is noted
 * on the plan; an advance, a completion or an abort is applied with the label's move in one transaction,
 * conditional on the plan standing where it was decided from. Any number of instances may run it: exactly one
 * decides each step, and a restart goes on from the row.
 */
import type { ArmRow } from "@promptstore/core/rollouts/plan-decision";
import { decidePlan, strataOf } from "@promptstore/core/rollouts/plan-decision";
import type { PlanDecisionOut } from "@promptstore/core/rollouts/plan-view";
import type { PlanRow } from "../../../store/rollouts/rollout-plans.js";
import { RolloutPlans } from "../../../store/rollouts/rollout-plans.js";
import type { Caller } from "../../access.js";
import { labelState } from "../label-moves.js";
import { PromptChange } from "../prompt-changes.js";
import { plansOf, recordDecision, stepStartsOf, stepsOf } from "./plan-records.js";
import { applyStep, LostDecision, type PlanContext } from "./plan-steps.js";

/** The outcomes a plan is judged on (the outcomes domain's `rolloutEvidence`, given by the wiring). */
export interface PlanEvidence {
  /** Each arm's rows of the plan's label since the plan started, up to `toMs`. */
  rows(plan: PlanRow, toMs: number): Promise<ArmRow[]>;
  /** The latency histogram's bucket bounds the rows are kept in. */
  latencyBounds: readonly number[];
}

export interface PlanRunnerHooks {
  failed?(plan: PlanRow | undefined, error: unknown): void;
  decided?(plan: PlanRow, verdict: string): void;
}

/** Who the trail names for the runner's decisions. */
export const PLAN_ACTOR = "plan";

export class PlanRunner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private started = false;
  private stopped = false;

  constructor(
    private readonly context: PlanContext,
    private readonly evidence: PlanEvidence,
    private readonly options: { tickMs: number },
    private readonly hooks: PlanRunnerHooks = {},
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, this.options.tickMs);
    this.timer.unref();
  }

  /** One look at every running plan. */
  async tick(): Promise<void> {
    const plans = new RolloutPlans(this.context.db());
    let rows: PlanRow[];
    try {
      rows = await plans.running();
    } catch (error) {
      this.hooks.failed?.(undefined, error);
      return;
    }
    for (const row of rows) {
      if (this.stopped) return;
      try {
        await this.decide(row);
      } catch (error) {
        if (!(error instanceof LostDecision)) this.hooks.failed?.(row, error);
      }
    }
  }

  /** Decides one plan's step from its evidence, and applies the decision. */
  async decide(row: PlanRow): Promise<void> {
    const steps = stepsOf(row);
    const nowMs = Date.now();
    const strata = strataOf(stepStartsOf(row).map(Date.parse), await this.evidence.rows(row, nowMs));
    const first = steps[0]?.min_outcomes ?? 0;
    const decided = decidePlan(
      { steps, guardrails: JSON.parse(row.guardrails) },
      row.step,
      Date.parse(row.step_started_at),
      nowMs,
      strata,
      { latency_bounds: this.evidence.latencyBounds, ...(first > 0 ? { latency_tuning_outcomes: first } : {}) },
    );
    const at = new Date(nowMs).toISOString();
    const decision: PlanDecisionOut = {
      verdict: decided.verdict,
      at,
      step: row.step,
      results: decided.results,
      minimums: decided.minimums,
      by: PLAN_ACTOR,
    };
    const plans = new RolloutPlans(this.context.db());
    if (decided.verdict === "wait") {
      await plans.note(row.id, row, JSON.stringify(decision));
      return;
    }
    const verdict = decided.verdict;
    const org = await plans.orgOf(row.project_id);
    if (org === undefined) return;
    const caller: Caller = {
      projectId: row.project_id,
      projectName: "",
      orgId: org,
      plan: "",
      actor: PLAN_ACTOR,
      access: "publish",
    };
    const moved = await this.context.store(row.project_id).transaction(async (tx) => {
      await tx.lockPrompt(row.prompt_id);
      const prompt = await tx.getPrompt(row.prompt_id);
      if (!prompt) return false;
      // Read again under the lock: another instance, or a person, may have decided this step meanwhile.
      const fresh = await plansOf(tx).get(row.project_id, row.id);
      if (fresh?.status !== "running" || fresh.step !== row.step) return false;
      const change = new PromptChange(caller, row.prompt_id, at);
      const state = await labelState(tx, prompt, row.label);
      if (state.version !== row.from_version || state.rollout?.candidate !== row.version) {
        // The label was changed by a path that does not end plans (a label removed): the plan ends, moving nothing.
        const reason = "the label was changed outside the plan";
        const ended = { status: "aborted" as const, step: row.step, stepStartedAt: row.step_started_at };
        if (!(await plansOf(tx).decide(row.id, row, { ...ended, endReason: reason }, at))) return false;
        const after: PlanRow = { ...row, status: "aborted", ended_at: at, end_reason: reason };
        const abort = { ...decision, verdict: "abort" as const, results: [], minimums: null };
        recordDecision(change, prompt, row, after, "rollout.aborted", abort, prompt.production_version);
      } else {
        const reason = verdict === "abort" ? breachOf(decision) : null;
        await applyStep(tx, change, prompt, fresh, verdict, decision, at, this.context.gate(), reason);
      }
      await this.context.record(tx, change);
      return true;
    });
    if (moved) {
      this.context.changed(row.project_id, row.prompt_id);
      this.hooks.decided?.(row, verdict);
    }
  }
}

/** An abort's reason: the guardrails breached. */
function breachOf(decision: PlanDecisionOut): string {
  const breached = decision.results.filter((r) => r.decision === "breached").map((r) => r.guardrail);
  return `guardrail breached: ${breached.join(", ")}`;
}
