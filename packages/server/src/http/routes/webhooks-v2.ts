import { notFound } from "@promptstore/core/errors";
import { EVENT_TYPES } from "@promptstore/core/events";
import {
  createWebhookBody,
  DELIVERY_STATUSES,
  deliveriesQuery,
  rotateSecretBody,
  updateWebhookBody,
} from "@promptstore/core/webhooks";
import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import type { ProjectWebhooks, WebhookService } from "../../service/webhooks/webhook-service.js";
import { ok } from "../envelope.js";
import { callerOf } from "../guards/auth.js";
import type { Operation } from "../openapi/operation.js";
import { parseInput } from "../validate.js";

const WEBHOOK_ID = /^whk_[0-9a-f]{24}$/;

/** An id that cannot exist is simply not found. */
export function webhookIdParam(params: unknown): string {
  const id = (params as { id?: string }).id ?? "";
  if (!WEBHOOK_ID.test(id)) throw notFound(`webhook ${id.slice(0, 64)} not found`);
  return id;
}

const timestamp = z.iso.datetime().describe("ISO 8601, UTC, milliseconds");
const eventType = z.enum(EVENT_TYPES).describe("A change event type");

export const webhookOut = z.strictObject({
  id: z.string().describe("The endpoint's id: whk_ and 24 hex digits"),
  url: z.string().describe("Where events are POSTed"),
  description: z.string().describe("A note for people; empty when none was given"),
  events: z.array(eventType).describe("The event types sent to this endpoint"),
  enabled: z.boolean().describe("Whether events are queued and sent"),
  created_at: timestamp,
  updated_at: timestamp,
  secret_needs_rotation: z
    .boolean()
    .describe(
      "True when the stored signing secret was encrypted with another server secret key (a store restored under a new key): deliveries fail, saying so, until the secret is rotated",
    ),
});

export const webhookWithSecretOut = webhookOut.extend({
  secret: z
    .string()
    .describe("The signing secret (whsec_ + base64), shown this once: verify each request's webhook-signature with it"),
});

export const webhookListOut = z.strictObject({
  webhooks: z.array(webhookOut).describe("The project's endpoints, oldest first"),
});

export const removedWebhookOut = z.strictObject({
  id: z.string().describe("The removed endpoint's id"),
  removed: z.literal(true).describe("Always true"),
});

export const deliveryOut = z.strictObject({
  id: z.number().int().describe("The delivery's id"),
  webhook_id: z.string().describe("The endpoint it goes to"),
  event_id: z.number().int().describe("The change event; requests carry webhook-id: msg_<event_id>"),
  event_type: eventType,
  prompt_id: z
    .string()
    .describe('The prompt the event is about; "" for an event about the project (label.requirement_changed)'),
  status: z
    .enum(DELIVERY_STATUSES)
    .describe("pending (to be attempted), delivered (a 2xx answer) or failed (for good)"),
  attempts: z.number().int().describe("Attempts made so far"),
  next_attempt_at: timestamp.nullable().describe("When the next attempt is due; null once delivered or failed"),
  last_attempt_at: timestamp.nullable().describe("When the last attempt was made; null before the first"),
  last_response_code: z
    .number()
    .int()
    .nullable()
    .describe("The HTTP status of the last answer; null when there was none"),
  last_error: z.string().nullable().describe("Why the last attempt failed; null when none did or none was made"),
  created_at: timestamp.describe("When the event was recorded and the delivery queued"),
  delivered_at: timestamp.nullable().describe("When a 2xx answer came; null until then"),
});

export const deliveryListOut = z.strictObject({
  deliveries: z.array(deliveryOut).describe("The endpoint's deliveries, newest first"),
});

const ID = "Webhook endpoint id (whk_…)";

/** The webhook operations of the OpenAPI document. */
export const WEBHOOK_OPERATIONS: Operation[] = [
  {
    method: "get",
    path: "/api/v2/webhooks",
    operationId: "listWebhooks",
    summary: "List the project's webhook endpoints (secrets are never shown)",
    status: 200,
    response: webhookListOut,
    errors: [401, 403, 429],
  },
  {
    method: "post",
    path: "/api/v2/webhooks",
    operationId: "createWebhook",
    summary: "Create a webhook endpoint; the answer carries its signing secret, this once",
    body: createWebhookBody,
    status: 201,
    response: webhookWithSecretOut,
    errors: [400, 401, 403, 413, 415, 429],
  },
  {
    method: "get",
    path: "/api/v2/webhooks/{id}",
    operationId: "getWebhook",
    summary: "Read a webhook endpoint",
    status: 200,
    response: webhookOut,
    errors: [401, 403, 404, 429],
    idDescription: ID,
  },
  {
    method: "patch",
    path: "/api/v2/webhooks/{id}",
    operationId: "updateWebhook",
    summary: "Change a webhook endpoint's url, events, description or enabled",
    body: updateWebhookBody,
    status: 200,
    response: webhookOut,
    errors: [400, 401, 403, 404, 413, 415, 429],
    idDescription: ID,
  },
  {
    method: "delete",
    path: "/api/v2/webhooks/{id}",
    operationId: "deleteWebhook",
    summary: "Remove a webhook endpoint and its deliveries, pending ones included",
    status: 200,
    response: removedWebhookOut,
    errors: [401, 403, 404, 429],
    idDescription: ID,
  },
  {
    method: "post",
    path: "/api/v2/webhooks/{id}/rotate-secret",
    operationId: "rotateWebhookSecret",
    summary: "Replace the signing secret at once; the answer carries the new one, this once",
    body: rotateSecretBody,
    bodyOptional: true,
    status: 200,
    response: webhookWithSecretOut,
    errors: [400, 401, 403, 404, 415, 429],
    idDescription: ID,
  },
  {
    method: "get",
    path: "/api/v2/webhooks/{id}/deliveries",
    operationId: "listWebhookDeliveries",
    summary: "The endpoint's recent deliveries, newest first, with status, attempts and the last answer",
    query: deliveriesQuery,
    status: 200,
    response: deliveryListOut,
    errors: [400, 401, 403, 404, 429],
    idDescription: ID,
  },
];

/** `/api/v2/webhooks`: the key's project's endpoints; another project's are not found (404). */
export function registerWebhookRoutes(app: FastifyInstance, webhooks: WebhookService): void {
  registerWebhookEndpoints(app, "/api/v2/webhooks", { auth: true }, (request) => webhooks.of(callerOf(request)), {
    withRead: true,
  });
}

/**
 * The webhook routes under `prefix`, for REST and the dashboard alike. `endpointsOf` is asked first, so that a
 * caller the service refuses is told so before any of the request's input is read.
 */
export function registerWebhookEndpoints(
  app: FastifyInstance,
  prefix: string,
  config: FastifyContextConfig,
  endpointsOf: (request: FastifyRequest) => ProjectWebhooks | Promise<ProjectWebhooks>,
  options: { withRead: boolean },
): void {
  const route = { config };

  app.get(prefix, route, async (request) => {
    return ok({ webhooks: await (await endpointsOf(request)).list() });
  });

  app.post(prefix, route, async (request, reply) => {
    const endpoints = await endpointsOf(request);
    const body = parseInput(createWebhookBody, request.body, "body");
    const created = await endpoints.create(body);
    reply.code(201);
    return ok(created);
  });

  if (options.withRead) {
    app.get(`${prefix}/:id`, route, async (request) => {
      const endpoints = await endpointsOf(request);
      return ok(await endpoints.get(webhookIdParam(request.params)));
    });
  }

  app.patch(`${prefix}/:id`, route, async (request) => {
    const endpoints = await endpointsOf(request);
    const id = webhookIdParam(request.params);
    const body = parseInput(updateWebhookBody, request.body, "body");
    return ok(await endpoints.update(id, body));
  });

  app.delete(`${prefix}/:id`, route, async (request) => {
    const endpoints = await endpointsOf(request);
    return ok(await endpoints.remove(webhookIdParam(request.params)));
  });

  app.post(`${prefix}/:id/rotate-secret`, route, async (request) => {
    const endpoints = await endpointsOf(request);
    const id = webhookIdParam(request.params);
    parseInput(rotateSecretBody, request.body ?? {}, "body");
    return ok(await endpoints.rotateSecret(id));
  });

  app.get(`${prefix}/:id/deliveries`, route, async (request) => {
    const endpoints = await endpointsOf(request);
    const id = webhookIdParam(request.params);
    const query = parseInput(deliveriesQuery, request.query, "query");
    return ok({ deliveries: await endpoints.deliveries(id, query) });
  });
}
