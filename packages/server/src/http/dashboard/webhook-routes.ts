import type { FastifyInstance } from "fastify";
import type { AccountService } from "../../service/accounts/account-service.js";
import type { WebhookService } from "../../service/webhooks/webhook-service.js";
import { registerWebhookEndpoints } from "../routes/webhooks-v2.js";
import { projectIdParam } from "./prompt-routes.js";
import { userOf } from "./session-auth.js";

/**
 * The project settings' webhooks: the same service, schemas and routes as `/api/v2/webhooks`, through a
 * session. A member is let through here; the service decides what the role may do (editors and owners).
 */
export function registerDashboardWebhookRoutes(
  app: FastifyInstance,
  accounts: AccountService,
  webhooks: WebhookService,
): void {
  registerWebhookEndpoints(
    app,
    "/api/dashboard/projects/:projectId/webhooks",
    { session: true },
    async (request) => webhooks.of(await accounts.projectCaller(userOf(request), projectIdParam(request), "read")),
    { withRead: false },
  );
}
