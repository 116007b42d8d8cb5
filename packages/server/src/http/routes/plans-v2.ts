/**
 * Rollout plans (docs/rollouts.md "Plans") under `prefix`: `/api/v2` for keys, the dashboard's project prefix
 * for sessions. Same service, same schemas; the service decides permissions (plans/plan-service.ts).
 */
import { planListOut, planView } from "@promptstore/core/rollouts/plan-view";
import { planRequest } from "@promptstore/core/rollouts/plans";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Caller } from "../../service/access.js";
import type { PlanCommand } from "../../service/prompts/plans/plan-service.js";
import type { PromptService } from "../../service/prompts/prompt-service.js";
import { ok } from "../envelope.js";
import type { Operation } from "../openapi/operation.js";
import { parseInput } from "../validate.js";
import { labelParam, promptIdParam } from "./params.js";

const PLAN_PATH = "/api/v2/prompts/{id}/labels/{label}/plan";

const COMMANDS: { command: PlanCommand; operationId: string; summary: string }[] = [
  {
    command: "pause",
    operationId: "pausePlan",
    summary: "Pause the label's plan: the server decides nothing until it is resumed (publish key)",
  },
  {
    command: "resume",
    operationId: "resumePlan",
    summary: "Resume a paused plan (publish key; on a protected label a person in the dashboard)",
  },
  {
    command: "advance",
    operationId: "advancePlan",
    summary:
      "Advance the plan one step now, whatever its evidence; from its last step, complete it (publish key; on a protected label a person in the dashboard)",
  },
  {
    command: "abort",
    operationId: "abortPlan",
    summary: "Abort the plan: the label serves the version it started from to everyone (publish key; no approval)",
  },
];

export const PLAN_OPERATIONS: Operation[] = [
  {
    method: "post",
    path: PLAN_PATH,
    operationId: "startPlan",
    summary:
      "Start a rollout plan on a label: it rolls out to the first step's percent now, and the server advances, completes or aborts it by its guardrails (publish key; a protected label: a release request with a plan)",
    body: planRequest,
    status: 201,
    response: planView,
    errors: [400, 401, 403, 404, 409, 415, 429],
  },
  {
    method: "get",
    path: PLAN_PATH,
    operationId: "getPlan",
    summary: "The label's newest rollout plan, running, paused or ended, with the numbers of its last decision",
    status: 200,
    response: planView,
    errors: [400, 401, 404, 429],
  },
  {
    method: "get",
    path: "/api/v2/prompts/{id}/plans",
    operationId: "listPlans",
    summary:
      "The prompt's rollout plans on every label, newest first, each with every decision that moved it and the numbers that decided it",
    status: 200,
    response: planListOut,
    errors: [400, 401, 404, 429],
  },
  ...COMMANDS.map(
    ({ command, operationId, summary }): Operation => ({
      method: "post",
      path: `${PLAN_PATH}/${command}`,
      operationId,
      summary,
      status: 200,
      response: planView,
      errors: [400, 401, 403, 404, 409, 429],
    }),
  ),
];

export interface PlanSurface {
  config: Record<string, unknown>;
  caller(request: FastifyRequest): Caller | Promise<Caller>;
}

export function registerPlanRoutes(
  app: FastifyInstance,
  prompts: PromptService,
  prefix: string,
  surface: PlanSurface,
): void {
  const options = { config: surface.config };
  const path = `${prefix}/prompts/:id/labels/:label/plan`;
  const where = (request: FastifyRequest) => [promptIdParam(request.params), labelParam(request.params)] as const;

  app.post(path, options, async (request, reply) => {
    const [id, label] = where(request);
    const caller = await surface.caller(request);
    const body = parseInput(planRequest, request.body, "body");
    const view = await prompts.plans.start(caller, id, label, body);
    reply.code(201);
    return ok(view);
  });

  app.get(path, options, async (request) => {
    const [id, label] = where(request);
    return ok(await prompts.plans.get(await surface.caller(request), id, label));
  });

  app.get(`${prefix}/prompts/:id/plans`, options, async (request) => {
    const id = promptIdParam(request.params);
    return ok({ plans: await prompts.plans.list(await surface.caller(request), id) });
  });

  for (const { command } of COMMANDS) {
    app.post(`${path}/${command}`, options, async (request) => {
      const [id, label] = where(request);
      return ok(await prompts.plans.command(await surface.caller(request), id, label, command));
    });
  }
}
