import { AppError, badRequest, notFound } from "@promptstore/core/errors";
import type { PromptEvent } from "@promptstore/core/events";
import {
  type CreateWebhookBody,
  type DeliveriesQuery,
  type DeliveryView,
  type UpdateWebhookBody,
  WEBHOOK_LIMITS,
  type WebhookView,
  type WebhookWithSecret,
} from "@promptstore/core/webhooks";
import type { Kysely } from "kysely";
import { now } from "../store/ids.js";
import type { Database } from "../store/schema.js";
import {
  type EndpointPatch,
  newWebhookId,
  newWebhookSecret,
  toDeliveryView,
  toWebhookView,
  type WebhookStore,
} from "../store/webhooks.js";
import { literalAddress, refusalMessage, refusedAddress } from "./webhook-address.js";

export interface WebhookServiceOptions {
  /** PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: endpoints may be on private, loopback and link-local addresses. */
  allowPrivate: boolean;
}

/**
 * A project's webhook endpoints, for REST, the dashboard and the CLI alike. Every method takes the project
 * the caller may act on: an endpoint of another project is not found.
 */
export class WebhookService {
  constructor(
    readonly store: WebhookStore,
    private readonly options: WebhookServiceOptions,
  ) {}

  /** The event sink: queues the deliveries of a change inside the change's transaction. */
  readonly sink = async (db: Kysely<Database>, projectId: string, events: PromptEvent[]): Promise<void> => {
    await this.store.enqueue(db, projectId, events);
  };

  /**
   * A literal private address is refused when the endpoint is written (the operator can still allow it); a
   * host name can only be checked when it is resolved, at each delivery.
   */
  private checkUrl(url: string): void {
    if (this.options.allowPrivate) return;
    const literal = literalAddress(new URL(url).hostname);
    const what = literal === null ? null : refusedAddress(literal);
    if (literal !== null && what !== null) throw badRequest(`url: ${refusalMessage(literal, literal, what)}`);
  }

  private async require(projectId: string, id: string) {
    const row = await this.store.findEndpoint(projectId, id);
    if (!row) throw notFound(`webhook ${id.slice(0, 64)} not found`);
    return row;
  }

  async list(projectId: string): Promise<WebhookView[]> {
    return (await this.store.listEndpoints(projectId)).map(toWebhookView);
  }

  async get(projectId: string, id: string): Promise<WebhookView> {
    return toWebhookView(await this.require(projectId, id));
  }

  async create(projectId: string, body: CreateWebhookBody): Promise<WebhookWithSecret> {
    this.checkUrl(body.url);
    const at = now();
    const row = {
      id: newWebhookId(),
      project_id: projectId,
      url: body.url,
      description: body.description ?? "",
      event_types: JSON.stringify(body.events),
      enabled: body.enabled === false ? 0 : 1,
      secret: newWebhookSecret(),
      created_at: at,
      updated_at: at,
    };
    if (!(await this.store.createEndpoint(row, WEBHOOK_LIMITS.endpointsPerProject))) {
      throw new AppError(
        "forbidden",
        `webhooks: a project may have at most ${WEBHOOK_LIMITS.endpointsPerProject} endpoints; remove one first`,
      );
    }
    return { ...toWebhookView(row), secret: row.secret };
  }

  async update(projectId: string, id: string, body: UpdateWebhookBody): Promise<WebhookView> {
    if (body.url !== undefined) this.checkUrl(body.url);
    const patch: EndpointPatch = {};
    if (body.url !== undefined) patch.url = body.url;
    if (body.description !== undefined) patch.description = body.description;
    if (body.events !== undefined) patch.event_types = JSON.stringify(body.events);
    if (body.enabled !== undefined) patch.enabled = body.enabled ? 1 : 0;
    if (!(await this.store.updateEndpoint(projectId, id, patch, now()))) {
      throw notFound(`webhook ${id.slice(0, 64)} not found`);
    }
    return this.get(projectId, id);
  }

  /** A new secret, effective for every attempt from now on (queued deliveries included); answered once. */
  async rotateSecret(projectId: string, id: string): Promise<WebhookWithSecret> {
    const secret = newWebhookSecret();
    if (!(await this.store.updateEndpoint(projectId, id, { secret }, now()))) {
      throw notFound(`webhook ${id.slice(0, 64)} not found`);
    }
    return { ...(await this.get(projectId, id)), secret };
  }

  /** Removes the endpoint and its deliveries, pending ones included. */
  async remove(projectId: string, id: string): Promise<{ id: string; removed: true }> {
    if (!(await this.store.removeEndpoint(projectId, id))) throw notFound(`webhook ${id.slice(0, 64)} not found`);
    return { id, removed: true };
  }

  async deliveries(projectId: string, id: string, query: DeliveriesQuery = {}): Promise<DeliveryView[]> {
    await this.require(projectId, id);
    const rows = await this.store.deliveries(projectId, id, { limit: query.limit ?? 50, status: query.status });
    return rows.map(toDeliveryView);
  }
}
