import type { FastifyInstance } from "fastify";
import type { Config } from "../config.js";
import type { SecretBox } from "../secrets/secret-box.js";
import type { AccountService } from "../service/accounts/account-service.js";
import type { ChangeBus } from "../service/events/change-bus.js";
import type { PromptService } from "../service/prompts/prompt-service.js";
import { WebhookDispatcher } from "../service/webhooks/webhook-dispatcher.js";
import { WebhookSecrets } from "../service/webhooks/webhook-secrets.js";
import { WebhookService } from "../service/webhooks/webhook-service.js";
import { DatabaseUnavailable } from "../store/faults.js";
import type { Store } from "../store/index.js";
import { WebhookStore } from "../store/webhooks.js";
import { registerDashboardWebhookRoutes } from "./dashboard/webhook-routes.js";
import { registerWebhookRoutes } from "./routes/webhooks-v2.js";

export interface WebhookDeps {
  store: Store;
  config: Config;
  prompts: PromptService;
  bus: ChangeBus;
  accounts: AccountService;
  secrets: SecretBox;
}

/**
 * Webhooks in one call: deliveries queued by an event sink in every change's transaction, a dispatcher that
 * sends them from when the server is ready until it closes (picking up what a previous run left pending),
 * and the REST and dashboard routes. Call before the 405 routes are derived from the registered paths.
 */
export function registerWebhooks(server: FastifyInstance, deps: WebhookDeps): WebhookService {
  const { config } = deps;
  const secrets = new WebhookSecrets(deps.secrets);
  const webhooks = new WebhookService(
    new WebhookStore(deps.store.db),
    { allowPrivate: config.PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE },
    secrets,
  );
  deps.prompts.addEventSink(webhooks.sink);
  const dispatcher = new WebhookDispatcher(
    webhooks.store,
    deps.bus,
    {
      timeoutMs: config.PROMPTSTORE_WEBHOOK_TIMEOUT_MS,
      allowPrivate: config.PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE,
      retryScale: config.PROMPTSTORE_WEBHOOK_RETRY_SCALE,
      // Never the endpoint's secret: the error only. A database outage is logged once, by the store's health.
      onError: (error) => {
        if (!(error instanceof DatabaseUnavailable)) server.log.warn({ err: error }, "webhook dispatcher");
      },
    },
    secrets,
  );
  server.addHook("onReady", async () => dispatcher.start());
  server.addHook("onClose", async () => dispatcher.stop());
  registerWebhookRoutes(server, webhooks);
  registerDashboardWebhookRoutes(server, deps.accounts, webhooks);
  return webhooks;
}
