/**
 * Rollout plans (docs/rollouts.md "Plans"): a person's or a key's start, pause, resume, advance and abort, and
 * the read of a label's plan. Permissions are decided here, once, for every surface:
 *
 * - starting, advancing and resuming need what moving the label needs (a publish key, an editor or owner);
 * - on a protected label a plan starts only from an approved release request (releases.ts), and an API key
 *   (or an MCP client's token) may pause or abort its plan but never advance or resume it;
 * - an abort never needs an approval.
 *
 * Starting moves the label to the first step through `moveLabel`, so its required evaluation applies.
 */
import { AppError, badRequest, conflict, notFound } from "@promptstore/core/errors";
import { PLANS_LISTED, type PlanDecisionOut, type PlanView } from "@promptstore/core/rollouts/plan-view";
import type { PlanRequest } from "@promptstore/core/rollouts/plans";
import { shortHash } from "@promptstore/core/version-ref";
import { type NewAuditEntry, recordAudit } from "../../../store/audit.js";
import { now } from "../../../store/ids.js";
import type { ProjectStore } from "../../../store/prompts/prompts.js";
import type { PlanRow } from "../../../store/rollouts/rollout-plans.js";
import { type Caller, requireAccess } from "../../access.js";
import { planShownTo } from "../../authors.js";
import { GateRefusal, labelState, moveLabel } from "../label-moves.js";
import { PromptChange, requirePrompt, resolveHash } from "../prompt-changes.js";
import { describeStanding, insertPlan, plansOf, planViewOf } from "./plan-records.js";
import { type PlanEvidence, PlanRunner, type PlanRunnerHooks } from "./plan-runner.js";
import { advanceCompletes, applyStep, type PlanContext } from "./plan-steps.js";

export type PlanCommand = "pause" | "resume" | "advance" | "abort";

const doing: Record<PlanCommand, string> = {
  pause: "pausing",
  resume: "resuming",
  advance: "advancing",
  abort: "aborting",
};

export class PlanService {
  constructor(private readonly context: PlanContext) {}

  /** `POST …/labels/:label/plan`: rolls the label out to the first step and starts the plan. */
  async start(caller: Caller, promptId: string, label: string, body: PlanRequest): Promise<PlanView> {
    requireAccess(caller, "publish", `starting a plan on label ${label}`);
    const row = await this.gated(() =>
      this.context.store(caller.projectId).transaction(async (tx) => {
        await tx.lockPrompt(promptId);
        const prompt = await requirePrompt(tx, promptId);
        if ((await tx.labels().protectedNames()).has(label)) {
          throw new AppError(
            "forbidden",
            `label: ${label} is protected; a plan on it starts only from an approved release request: ` +
              `POST /api/v2/prompts/${promptId}/releases with {"label":"${label}","version":"<hash>","plan":{"steps":[...],"guardrails":{...}}}, approved by an owner`,
          );
        }
        await requireNoActivePlan(tx, promptId, label);
        const version =
          body.version === "latest" ? prompt.latest_version : await resolveHash(tx, promptId, body.version);
        const { version: from } = await labelState(tx, prompt, label);
        if (from === null) {
          throw badRequest(`label: ${label} is not set on prompt ${promptId}; move it there before a plan`);
        }
        if (from === version) throw badRequest(`version: ${label} serves ${shortHash(version)} already`);
        const at = now();
        const change = new PromptChange(caller, promptId, at);
        const first = body.steps[0]?.percent as number;
        await moveLabel(
          tx,
          change,
          prompt,
          { label, target: version, percent: first, byPlan: true },
          at,
          this.context.gate(),
        );
        const spec = { steps: body.steps, guardrails: body.guardrails };
        const plan = { promptId, label, version, from, spec, releaseId: null };
        const inserted = await insertPlan(tx, change, plan, change.actor, at);
        await this.context.record(tx, change);
        return inserted;
      }),
    );
    this.context.changed(caller.projectId, promptId);
    return planViewOf(row);
  }

  /** `GET …/labels/:label/plan`: the label's newest plan, active or ended. */
  async get(caller: Caller, promptId: string, label: string): Promise<PlanView> {
    requireAccess(caller, "read", "reading a plan");
    const store = this.context.store(caller.projectId);
    await requirePrompt(store, promptId);
    const row = await plansOf(store).newest(caller.projectId, promptId, label);
    if (!row) throw notFound(`plan: label ${label} of prompt ${promptId} has no plan`);
    // A read key sees that a person acted, not who (docs/decisions.md, "`saved_by` for read keys").
    return planShownTo(caller, planViewOf(row));
  }

  /** `GET /prompts/:id/plans`: the prompt's plans on every label, newest first, each with its decisions. */
  async list(caller: Caller, promptId: string): Promise<PlanView[]> {
    requireAccess(caller, "read", "reading plans");
    const store = this.context.store(caller.projectId);
    await requirePrompt(store, promptId);
    const rows = await plansOf(store).ofPrompt(caller.projectId, promptId, PLANS_LISTED);
    return rows.map((row) => planShownTo(caller, planViewOf(row)));
  }

  /** `POST …/plan/pause|resume|advance|abort`: a person's or a key's command on the label's active plan. */
  async command(caller: Caller, promptId: string, label: string, command: PlanCommand): Promise<PlanView> {
    requireAccess(caller, "publish", `${doing[command]} a plan on label ${label}`);
    const row = await this.gated(() =>
      this.context.store(caller.projectId).transaction(async (tx) => {
        await tx.lockPrompt(promptId);
        const prompt = await requirePrompt(tx, promptId);
        if ((command === "advance" || command === "resume") && caller.role === undefined) {
          if ((await tx.labels().protectedNames()).has(label)) {
            throw new AppError(
              "forbidden",
              `label: ${label} is protected; ${doing[command]} its plan is done by a person in the dashboard, ` +
                "never with an API key (a key may pause or abort it)",
            );
          }
        }
        const plans = plansOf(tx);
        const plan = await plans.active(caller.projectId, promptId, label);
        if (!plan) throw conflict(`plan: label ${label} of prompt ${promptId} has no running or paused plan`);
        const at = now();
        const change = new PromptChange(caller, promptId, at);
        const target = `${promptId}:${label}`;
        let after: PlanRow;
        if (command === "pause" || command === "resume") {
          const [from, to] = command === "pause" ? (["running", "paused"] as const) : (["paused", "running"] as const);
          if (plan.status !== from) throw conflict(`plan: ${plan.id} is ${plan.status} already`);
          const move = { status: to, step: plan.step, stepStartedAt: plan.step_started_at };
          if (!(await plans.decide(plan.id, plan, move, at))) throw conflict(`plan: ${plan.id} was decided meanwhile`);
          change.audited(
            command === "pause" ? "rollout.paused" : "rollout.resumed",
            describeStanding(plan),
            to,
            target,
          );
          after = { ...plan, status: to, updated_at: at };
        } else {
          const verdict = command === "abort" ? "abort" : advanceCompletes(plan) ? "complete" : "advance";
          const decision: PlanDecisionOut = {
            verdict,
            at,
            step: plan.step,
            results: [],
            minimums: null,
            by: change.actor,
          };
          const reason = command === "abort" ? `aborted by ${change.actor}` : null;
          after = await applyStep(tx, change, prompt, plan, verdict, decision, at, this.context.gate(), reason);
        }
        await this.context.record(tx, change);
        return after;
      }),
    );
    this.context.changed(caller.projectId, promptId);
    return planViewOf(row);
  }

  /** The runner of this instance (plan-runner.ts), deciding with this service's store, recording and gate. */
  runner(evidence: PlanEvidence, options: { tickMs: number }, hooks: PlanRunnerHooks = {}): PlanRunner {
    return new PlanRunner(this.context, evidence, options, hooks);
  }

  /** A move the label's required evaluation refused rolls back; its refusal is then an audit row of its own. */
  private async gated<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof GateRefusal) await recordAudit(this.context.db(), [error.audit as NewAuditEntry]);
      throw error;
    }
  }
}

/** At most one plan of a label runs or is paused: a second is a 409 naming the label. */
export async function requireNoActivePlan(tx: ProjectStore, promptId: string, label: string): Promise<void> {
  const active = await plansOf(tx).active(tx.projectId, promptId, label);
  if (active) {
    throw conflict(
      `label: ${label} of prompt ${promptId} already has a ${active.status} plan (${active.id}); abort it first`,
    );
  }
}
