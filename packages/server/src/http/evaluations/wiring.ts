/**
 * Evaluations put together (docs/evaluations.md): the check runner (judges and webhook checks), the runner
 * that holds leases on this instance, the service, and their routes on both surfaces.
 */
import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { Config } from "../../config.js";
import { CheckRunner } from "../../service/evaluations/check-runner.js";
import { EvaluationDefaults } from "../../service/evaluations/evaluation-defaults.js";
import { EvaluationRunner } from "../../service/evaluations/evaluation-runner.js";
import {
  completedEvent,
  type DatasetResolver,
  EvaluationService,
} from "../../service/evaluations/evaluation-service.js";
import { RequiredEvaluations } from "../../service/evaluations/label-gate.js";
import { callWithRetries } from "../../service/evaluations/pacing.js";
import type { ConnectionService } from "../../service/playground/connection-service.js";
import type { RunService } from "../../service/playground/run-service.js";
import type { PromptService } from "../../service/prompts/prompt-service.js";
import type { WebhookService } from "../../service/webhooks/webhook-service.js";
import { EvaluationStore } from "../../store/evaluations/evaluations.js";
import type { Store } from "../../store/index.js";
import type { Metrics } from "../telemetry/metrics.js";
import { type EvaluationSurface, registerEvaluationEndpoints } from "./evaluation-routes.js";

export interface EvaluationDeps {
  store: Store;
  config: Config;
  prompts: PromptService;
  runs: RunService;
  connections: ConnectionService;
  webhooks: WebhookService;
  datasets: DatasetResolver;
  metrics: Metrics | undefined;
  log: { warn(details: object, message: string): void; error(details: object, message: string): void };
}

export function createEvaluations(deps: EvaluationDeps) {
  const { config, prompts, runs, metrics } = deps;
  const store = new EvaluationStore(deps.store.db);
  const checks = new CheckRunner({
    runs,
    prompts,
    webhooks: {
      endpoints: deps.webhooks.store,
      secrets: deps.webhooks.secrets,
      timeoutMs: config.PROMPTSTORE_WEBHOOK_TIMEOUT_MS,
      allowPrivate: config.PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE,
    },
    // A judge obeys the provider's 429 as the evaluation's own calls do; its calls are not playground runs.
    modelCall: (run, signal) => callWithRetries(() => runs.call(run, signal, () => {}, { ran() {} }), signal),
  });
  const runner = new EvaluationRunner(
    store,
    runs,
    deps.connections,
    checks,
    {
      async ended(plan, status, summary) {
        metrics?.evaluations.inc({ outcome: status });
        await prompts.recordActivity(plan.row.project_id, plan.row.prompt_id, {
          event: completedEvent(plan, status, summary),
        });
      },
      cell(outcome, providerMs) {
        metrics?.evaluationCases.inc({ outcome });
        if (providerMs !== null) metrics?.evaluationProviderTime.observe(providerMs / 1000);
      },
      failed(error, evaluationId) {
        deps.log.error({ err: error, evaluation: evaluationId }, "evaluation runner failed");
      },
    },
    {
      instanceId: `i_${randomBytes(8).toString("hex")}`,
      leaseMs: config.PROMPTSTORE_EVALUATION_LEASE_SECONDS * 1000,
      maxRunning: config.PROMPTSTORE_EVALUATION_MAX_RUNNING,
      maxCalls: config.PROMPTSTORE_EVALUATION_MAX_CALLS,
      sweepMs: Math.max(1000, (config.PROMPTSTORE_EVALUATION_LEASE_SECONDS * 1000) / 3),
    },
  );
  const service = new EvaluationService(store, prompts, runs, deps.datasets, checks, runner, {
    reused: () => metrics?.evaluations.inc({ outcome: "reused" }),
  });
  const defaults = new EvaluationDefaults(store, prompts, deps.datasets);
  // Every label move asks the required evaluations; a requirement is checked to be runnable before it is set.
  prompts.setGate(new RequiredEvaluations(), (caller, requirement) => service.checkRequirement(caller, requirement));
  return {
    service,
    defaults,
    runner,
    register(server: FastifyInstance, prefix: string, surface: EvaluationSurface) {
      registerEvaluationEndpoints(server, prefix, surface, service, defaults, prompts);
    },
  };
}
