/**
 * Outcomes put together (docs/outcomes.md): the label history kept by an event sink in every change's
 * transaction, the service that folds batches and writes them once a second, its maintenance, and the routes.
 */
import type { FastifyInstance } from "fastify";
import type { Config } from "../../config.js";
import type { AccountService } from "../../service/accounts/account-service.js";
import type { ChangeBus } from "../../service/events/change-bus.js";
import { OutcomeService } from "../../service/outcomes/outcome-service.js";
import { LATENCY_BOUNDS_MS, rolloutEvidence } from "../../service/outcomes/rollout-evidence.js";
import type { PlanEvidence } from "../../service/prompts/plans/plan-runner.js";
import type { PromptService } from "../../service/prompts/prompt-service.js";
import { DatabaseUnavailable } from "../../store/faults.js";
import type { Store } from "../../store/index.js";
import { LabelHistory } from "../../store/outcomes/label-history.js";
import { OutcomeReads } from "../../store/outcomes/outcome-reads.js";
import { OutcomeWrites } from "../../store/outcomes/outcome-writes.js";
import { projectIdParam } from "../dashboard/prompt-routes.js";
import { userOf } from "../dashboard/session-auth.js";
import { callerOf } from "../guards/auth.js";
import type { Metrics } from "../telemetry/metrics.js";
import { registerOutcomeReads, registerOutcomeReport } from "./outcome-routes.js";

export interface OutcomeDeps {
  store: Store;
  config: Config;
  prompts: PromptService;
  accounts: AccountService;
  bus: ChangeBus;
  metrics: Metrics | undefined;
  log: { warn(details: object, message: string): void };
}

/** A plan's evidence: both arms of its label's outcomes since it started (service/outcomes/rollout-evidence.ts). */
export function planEvidence(store: Store): PlanEvidence {
  const reads = new OutcomeReads(store.db);
  return {
    rows: (plan, toMs) =>
      rolloutEvidence(reads, {
        projectId: plan.project_id,
        promptId: plan.prompt_id,
        label: plan.label,
        current: plan.from_version,
        candidate: plan.version,
        fromMs: Date.parse(plan.started_at),
        // The row of the minute under way starts at or before now.
        toMs: toMs + 1,
      }),
    latencyBounds: LATENCY_BOUNDS_MS,
  };
}

export function createOutcomes(server: FastifyInstance, deps: OutcomeDeps): OutcomeService {
  const { store, metrics } = deps;
  const history = new LabelHistory(store.db);
  deps.prompts.addEventSink(history.sink);
  const service = new OutcomeService(
    new OutcomeWrites(store.db),
    new OutcomeReads(store.db),
    history,
    deps.bus,
    {
      retentionDays: deps.config.PROMPTSTORE_OUTCOME_RETENTION_DAYS,
      minuteMs: deps.config.PROMPTSTORE_OUTCOME_MINUTE_MS,
    },
    {
      counted: (result, n) => metrics?.outcomes.inc({ result }, n),
      failed: (what, error) => {
        // An outage is logged once, by the store's health, not by every write it fails.
        if (error instanceof DatabaseUnavailable) return;
        deps.log.warn(
          { err: error },
          what === "flush" ? "writing outcomes (kept for the next try)" : "outcome maintenance",
        );
      },
    },
  );
  registerOutcomeReport(server, service);
  registerOutcomeReads(server, service, { prefix: "/api/v2", config: { auth: true }, caller: callerOf });
  // The dashboard's Production view reads the same numbers with a member's session.
  registerOutcomeReads(server, service, {
    prefix: "/api/dashboard/projects/:projectId",
    config: { session: true },
    caller: (request) => deps.accounts.projectCaller(userOf(request), projectIdParam(request), "read"),
  });
  service.start();
  // Rollout plans are decided from these outcomes (docs/rollouts.md "Plans"): this instance's runner.
  const runner = deps.prompts.plans.runner(
    planEvidence(store),
    { tickMs: deps.config.PROMPTSTORE_ROLLOUT_TICK_MS },
    {
      failed: (plan, error) => {
        if (error instanceof DatabaseUnavailable) return;
        deps.log.warn({ err: error, plan: plan?.id }, "deciding a rollout plan");
      },
    },
  );
  runner.start();
  server.addHook("preClose", async () => runner.stop());
  // What this instance holds is written before the store closes.
  server.addHook("onClose", async () => service.stop());
  return service;
}
