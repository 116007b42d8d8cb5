import { AppError, badRequest, notFound } from "@promptstore/core/errors";
import type { ChangeEvent } from "@promptstore/core/events";
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
import { now } from "../../store/ids.js";
import type { Database } from "../../store/schema.js";
import {
  type EndpointPatch,
  type EndpointRow,
  newWebhookId,
  newWebhookSecret,
  toDeliveryView,
  toWebhookView,
  type WebhookStore,
} from "../../store/webhooks.js";
import { type Caller, requireAccess } from "../access.js";
import { literalAddress, refusalMessage, refusedAddress } from "../webhook-address.js";
import type { WebhookSecrets } from "./webhook-secrets.js";

export interface WebhookServiceOptions {
  /** PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: endpoints may be on private, loopback and link-local addresses. */
  allowPrivate: boolean;
}

/**
 * Queues the deliveries of a change inside the change's transaction. Needs no secret key: it copies no
 * secret, so the CLI's prompt commands queue deliveries without opening the key.
 */
export function webhookSink(store: WebhookStore) {
  return async (db: Kysely<Database>, projectId: string, events: ChangeEvent[]): Promise<void> => {
    await store.enqueue(db, projectId, events);
  };
}

/**
 * The webhooks of every project: the event sink that queues deliveries, and each caller's endpoints for
 * REST, the dashboard and the CLI alike.
 */
export class WebhookService {
  constructor(
    readonly store: WebhookStore,
    private readonly options: WebhookServiceOptions,
    /** Seals each secret written and tells which stored ones cannot sign (another key's, after a restore). */
    readonly secrets: WebhookSecrets,
  ) {}

  /** The event sink: queues the deliveries of a change inside the change's transaction. */
  get sink() {
    return webhookSink(this.store);
  }

  /**
   * The caller's project's endpoints. Managing webhooks, reading them included, needs publish: an endpoint
   * receives every later change of the project and typically sets deployments off, and its address may carry
   * the receiver's token. Refused here, before the request's input is read, so a refusal is the first answer.
   */
  of(caller: Pick<Caller, "projectId" | "access" | "role">): ProjectWebhooks {
    requireAccess(caller, "publish", "managing webhooks");
    return new ProjectWebhooks(this.store, this.options, this.secrets, caller.projectId);
  }
}

/** One project's webhook endpoints: an endpoint of another project is not found. */
export class ProjectWebhooks {
  constructor(
    private readonly store: WebhookStore,
    private readonly options: WebhookServiceOptions,
    private readonly secrets: WebhookSecrets,
    private readonly projectId: string,
  ) {}

  /** The view, saying whether the stored secret can sign (it cannot after a restore under another key). */
  private view(row: EndpointRow): WebhookView {
    return { ...toWebhookView(row), secret_needs_rotation: this.secrets.problem(row.id, row.secret) !== null };
  }

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

  private async require(id: string) {
    const row = await this.store.findEndpoint(this.projectId, id);
    if (!row) throw notFound(`webhook ${id.slice(0, 64)} not found`);
    return row;
  }

  async list(): Promise<WebhookView[]> {
    return (await this.store.listEndpoints(this.projectId)).map((row) => this.view(row));
  }

  async get(id: string): Promise<WebhookView> {
    return this.view(await this.require(id));
  }

  async create(body: CreateWebhookBody): Promise<WebhookWithSecret> {
    this.checkUrl(body.url);
    const at = now();
    const id = newWebhookId();
    const secret = newWebhookSecret();
    const row = {
      id,
      project_id: this.projectId,
      url: body.url,
      description: body.description ?? "",
      event_types: JSON.stringify(body.events),
      enabled: body.enabled === false ? 0 : 1,
      secret: this.secrets.seal(id, secret),
      created_at: at,
      updated_at: at,
    };
    if (!(await this.store.createEndpoint(row, WEBHOOK_LIMITS.endpointsPerProject))) {
      throw new AppError(
        "forbidden",
        `webhooks: a project may have at most ${WEBHOOK_LIMITS.endpointsPerProject} endpoints; remove one first`,
      );
    }
    return { ...this.view(row), secret };
  }

  async update(id: string, body: UpdateWebhookBody): Promise<WebhookView> {
    if (body.url !== undefined) this.checkUrl(body.url);
    const patch: EndpointPatch = {};
    if (body.url !== undefined) patch.url = body.url;
    if (body.description !== undefined) patch.description = body.description;
    if (body.events !== undefined) patch.event_types = JSON.stringify(body.events);
    if (body.enabled !== undefined) patch.enabled = body.enabled ? 1 : 0;
    if (!(await this.store.updateEndpoint(this.projectId, id, patch, now()))) {
      throw notFound(`webhook ${id.slice(0, 64)} not found`);
    }
    return this.get(id);
  }

  /**
   * A new secret, effective for every attempt from now on (queued deliveries included); answered once.
   * Deliveries waiting for a retry are due at once: those that waited for a secret that could sign (after a
   * restore under another key) go out now rather than at their next scheduled retry.
   */
  async rotateSecret(id: string): Promise<WebhookWithSecret> {
    const secret = newWebhookSecret();
    const at = now();
    if (!(await this.store.updateEndpoint(this.projectId, id, { secret: this.secrets.seal(id, secret) }, at))) {
      throw notFound(`webhook ${id.slice(0, 64)} not found`);
    }
    await this.store.retryNow(id, at);
    return { ...(await this.get(id)), secret };
  }

  /** Removes the endpoint and its deliveries, pending ones included. */
  async remove(id: string): Promise<{ id: string; removed: true }> {
    if (!(await this.store.removeEndpoint(this.projectId, id))) throw notFound(`webhook ${id.slice(0, 64)} not found`);
    return { id, removed: true };
  }

  async deliveries(id: string, query: DeliveriesQuery = {}): Promise<DeliveryView[]> {
    await this.require(id);
    const rows = await this.store.deliveries(this.projectId, id, { limit: query.limit ?? 50, status: query.status });
    return rows.map(toDeliveryView);
  }
}
