import { createWebhookBody, deliveriesQuery, rotateSecretBody, updateWebhookBody } from "@promptstore/core/webhooks";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AccountService } from "../../service/account-service.js";
import type { WebhookService } from "../../service/webhook-service.js";
import { ok } from "../envelope.js";
import { webhookIdParam } from "../routes/webhooks-v2.js";
import { parseInput } from "../validate.js";
import { projectIdParam } from "./prompt-routes.js";
import { userOf } from "./session-auth.js";

const PREFIX = "/api/dashboard/projects/:projectId/webhooks";

/**
 * The project settings' webhooks: the same service and schemas as `/api/v2/webhooks`, through a session.
 * Editors and owners only (the `write` permission): a webhook sends what changes to a URL of their choice.
 */
export function registerDashboardWebhookRoutes(
  app: FastifyInstance,
  accounts: AccountService,
  webhooks: WebhookService,
): void {
  const session = { config: { session: true } };
  const project = async (request: FastifyRequest) =>
    (await accounts.projectScope(userOf(request), projectIdParam(request), "write")).projectId;

  app.get(PREFIX, session, async (request) => {
    return ok({ webhooks: await webhooks.list(await project(request)) });
  });

  app.post(PREFIX, session, async (request, reply) => {
    const projectId = await project(request);
    const body = parseInput(createWebhookBody, request.body, "body");
    const created = await webhooks.create(projectId, body);
    reply.code(201);
    return ok(created);
  });

  app.patch(`${PREFIX}/:id`, session, async (request) => {
    const projectId = await project(request);
    const id = webhookIdParam(request.params);
    return ok(await webhooks.update(projectId, id, parseInput(updateWebhookBody, request.body, "body")));
  });

  app.delete(`${PREFIX}/:id`, session, async (request) => {
    const projectId = await project(request);
    return ok(await webhooks.remove(projectId, webhookIdParam(request.params)));
  });

  app.post(`${PREFIX}/:id/rotate-secret`, session, async (request) => {
    const projectId = await project(request);
    const id = webhookIdParam(request.params);
    parseInput(rotateSecretBody, request.body ?? {}, "body");
    return ok(await webhooks.rotateSecret(projectId, id));
  });

  app.get(`${PREFIX}/:id/deliveries`, session, async (request) => {
    const projectId = await project(request);
    const id = webhookIdParam(request.params);
    const query = parseInput(deliveriesQuery, request.query, "query");
    return ok({ deliveries: await webhooks.deliveries(projectId, id, query) });
  });
}
