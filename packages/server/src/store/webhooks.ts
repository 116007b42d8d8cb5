import { randomBytes } from "node:crypto";
import { type ChangeEvent, type EventType, isPromptEvent } from "@promptstore/core/events";
import type { DeliveryStatus, DeliveryView, WebhookPayload, WebhookView } from "@promptstore/core/webhooks";
import { type Kysely, type Selectable, sql } from "kysely";
import { lockRow } from "./row-lock.js";
import type { Database, WebhookDeliveriesTable, WebhookEndpointsTable } from "./schema.js";

export type EndpointRow = WebhookEndpointsTable;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

/** A delivery the dispatcher may attempt: the head of its endpoint's queue, with where and how to send it. */
export interface DueDelivery {
  id: number;
  endpoint_id: string;
  event_id: number;
  payload: string;
  attempts: number;
  first_attempt_at: string | null;
  url: string;
  secret: string;
}

export const newWebhookId = (): string => `whk_${randomBytes(12).toString("hex")}`;

/**
 * A signing secret as Standard Webhooks writes it: `whsec_` and the base64 of 32 random bytes.
 *
 * Not hashed (it must be read back to sign) but sealed with the server's secret key before it is stored
 * (service/webhooks/webhook-secrets.ts), so a copy of the table or a backup does not let anyone forge notifications.
 * Never logged, never part of a view, and answered once, at creation or rotation.
 */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

/** The view of the row alone; whether its secret can sign is the service's to say (it holds the key). */
export function toWebhookView(row: EndpointRow): Omit<WebhookView, "secret_needs_rotation"> {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: JSON.parse(row.event_types) as EventType[],
    enabled: row.enabled === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toDeliveryView(row: DeliveryRow): DeliveryView {
  return {
    id: Number(row.id),
    webhook_id: row.endpoint_id,
    event_id: Number(row.event_id),
    event_type: row.event_type as EventType,
    prompt_id: row.prompt_id,
    status: row.status as DeliveryStatus,
    attempts: row.attempts,
    next_attempt_at: row.status === "pending" ? row.next_attempt_at : null,
    last_attempt_at: row.last_attempt_at,
    last_response_code: row.last_response_code === null ? null : Number(row.last_response_code),
    last_error: row.last_error,
    created_at: row.created_at,
    delivered_at: row.delivered_at,
  };
}

/** The body a receiver gets for an event: Standard Webhooks' `type`, `timestamp` and `data`. */
export function webhookPayload(projectId: string, event: ChangeEvent): string {
  if (!isPromptEvent(event)) {
    // A project's event: what the stream sends, with the project first; no prompt, no pointers.
    const { id, type, at, label, requirement, previous } = event;
    const payload: WebhookPayload = {
      type,
      timestamp: at,
      data: { project_id: projectId, id, type, at, label, requirement, previous },
    };
    return JSON.stringify(payload);
  }
  const payload: WebhookPayload = {
    type: event.type,
    timestamp: event.at,
    data: {
      project_id: projectId,
      id: event.id,
      type: event.type,
      prompt_id: event.prompt_id,
      version: event.version,
      production_version: event.production_version,
      latest_version: event.latest_version,
      at: event.at,
      // evaluation.completed carries the outcome, so a receiver routes it without a read (docs/evaluations.md).
      ...(event.evaluation !== undefined && { evaluation: event.evaluation }),
      // rollout.* carry the plan and the numbers that decided it (docs/rollouts.md "Plans").
      ...(event.plan !== undefined && { label: event.label, plan: event.plan }),
    },
  };
  return JSON.stringify(payload);
}

export interface EndpointPatch {
  url?: string;
  description?: string;
  event_types?: string;
  enabled?: number;
  secret?: string;
}

export interface AttemptOutcome {
  status: DeliveryStatus;
  attempted_at: string;
  first_attempt_at: string;
  response_code: number | null;
  error: string | null;
  next_attempt_at: string | null;
}

/** Endpoints and their deliveries. Every endpoint query names its project: another project's is not found. */
export class WebhookStore {
  constructor(readonly db: Kysely<Database>) {}

  listEndpoints(projectId: string): Promise<EndpointRow[]> {
    return this.db
      .selectFrom("webhook_endpoints")
      .selectAll()
      .where("project_id", "=", projectId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
  }

  findEndpoint(projectId: string, id: string): Promise<EndpointRow | undefined> {
    return this.db
      .selectFrom("webhook_endpoints")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /** The project of an endpoint, for the operator's CLI, which names an endpoint by its id alone. */
  async projectOf(id: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom("webhook_endpoints")
      .select("project_id")
      .where("id", "=", id)
      .executeTakeFirst();
    return row?.project_id;
  }

  /** Inserts the endpoint unless the project already has `cap`; returns whether it did. */
  async createEndpoint(row: EndpointRow, cap: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      // Concurrent creates in one project queue on the project's row, so the cap holds.
      await lockRow(trx, "projects", { id: row.project_id });
      const counted = await trx
        .selectFrom("webhook_endpoints")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("project_id", "=", row.project_id)
        .executeTakeFirstOrThrow();
      if (Number(counted.n) >= cap) return false;
      await trx.insertInto("webhook_endpoints").values(row).execute();
      return true;
    });
  }

  async updateEndpoint(projectId: string, id: string, patch: EndpointPatch, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable("webhook_endpoints")
      .set({ ...patch, updated_at: at })
      .where("project_id", "=", projectId)
      .where("id", "=", id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Makes the endpoint's pending deliveries due at `at` (a new secret may make them deliverable now). */
  async retryNow(endpointId: string, at: string): Promise<void> {
    await this.db
      .updateTable("webhook_deliveries")
      .set({ next_attempt_at: at })
      .where("endpoint_id", "=", endpointId)
      .where("status", "=", "pending")
      .where("next_attempt_at", ">", at)
      .execute();
  }

  async removeEndpoint(projectId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const found = await trx
        .selectFrom("webhook_endpoints")
        .select("id")
        .where("project_id", "=", projectId)
        .where("id", "=", id)
        .executeTakeFirst();
      if (!found) return false;
      await trx.deleteFrom("webhook_deliveries").where("endpoint_id", "=", id).execute();
      await trx.deleteFrom("webhook_endpoints").where("id", "=", id).execute();
      return true;
    });
  }

  deliveries(
    projectId: string,
    endpointId: string,
    options: { limit: number; status?: DeliveryStatus | undefined },
  ): Promise<DeliveryRow[]> {
    let query = this.db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("endpoint_id", "=", endpointId);
    if (options.status) query = query.where("status", "=", options.status);
    return query.orderBy("id", "desc").limit(options.limit).execute();
  }

  /**
   * One pending delivery per (enabled endpoint subscribed to the type, event), in the transaction `db` is in:
   * the change and its deliveries commit together or not at all. Rows are inserted in event order, so an
   * endpoint's deliveries are in event order by id.
   */
  async enqueue(db: Kysely<Database>, projectId: string, events: ChangeEvent[]): Promise<number> {
    const endpoints = await db
      .selectFrom("webhook_endpoints")
      .select(["id", "event_types"])
      .where("project_id", "=", projectId)
      .where("enabled", "=", 1)
      .orderBy("id")
      .execute();
    if (endpoints.length === 0) return 0;
    const subscribed = endpoints.map((e) => ({ id: e.id, types: new Set(JSON.parse(e.event_types) as string[]) }));
    const rows = [];
    for (const event of events) {
      const payload = webhookPayload(projectId, event);
      for (const endpoint of subscribed) {
        if (!endpoint.types.has(event.type)) continue;
        rows.push({
          endpoint_id: endpoint.id,
          project_id: projectId,
          event_id: event.id,
          event_type: event.type,
          // The column is NOT NULL: a project's event has no prompt, and its deliveries say "".
          prompt_id: isPromptEvent(event) ? event.prompt_id : "",
          payload,
          status: "pending",
          attempts: 0,
          next_attempt_at: event.at,
          created_at: event.at,
        });
      }
    }
    if (rows.length > 0) await db.insertInto("webhook_deliveries").values(rows).execute();
    return rows.length;
  }

  /**
   * Deliveries that may be attempted now: the oldest pending delivery of each enabled endpoint (nothing
   * behind it goes before it is delivered or has failed for good), when it is due and nobody holds it.
   */
  async due(now: string, limit: number, skipEndpoints: readonly string[]): Promise<DueDelivery[]> {
    let query = this.db
      .selectFrom("webhook_deliveries as d")
      .innerJoin("webhook_endpoints as e", "e.id", "d.endpoint_id")
      .select([
        "d.id",
        "d.endpoint_id",
        "d.event_id",
        "d.payload",
        "d.attempts",
        "d.first_attempt_at",
        "e.url",
        "e.secret",
      ])
      .where("d.status", "=", "pending")
      .where("e.enabled", "=", 1)
      .where("d.next_attempt_at", "<=", now)
      .where((eb) => eb.or([eb("d.locked_until", "is", null), eb("d.locked_until", "<", now)]))
      .where("d.id", "=", (eb) =>
        eb
          .selectFrom("webhook_deliveries as h")
          .select((inner) => inner.fn.min("h.id").as("head"))
          .whereRef("h.endpoint_id", "=", "d.endpoint_id")
          .where("h.status", "=", "pending"),
      );
    if (skipEndpoints.length > 0) query = query.where("d.endpoint_id", "not in", skipEndpoints);
    const rows = await query.orderBy("d.next_attempt_at").orderBy("d.id").limit(limit).execute();
    return rows.map((r) => ({ ...r, id: Number(r.id), event_id: Number(r.event_id) }));
  }

  /**
   * Takes a delivery for one attempt: only one instance can, until `lockedUntil` (after which a crashed
   * holder's delivery is free again). Returns whether this caller got it.
   */
  async claim(id: number, token: string, now: string, lockedUntil: string): Promise<boolean> {
    const result = await this.db
      .updateTable("webhook_deliveries")
      .set({ locked_until: lockedUntil, lock_token: token })
      .where("id", "=", id)
      .where("status", "=", "pending")
      .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<", now)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Records an attempt's outcome, if this caller still holds the delivery. */
  async complete(id: number, token: string, outcome: AttemptOutcome): Promise<boolean> {
    const result = await this.db
      .updateTable("webhook_deliveries")
      .set((eb) => ({
        status: outcome.status,
        attempts: eb("attempts", "+", 1),
        first_attempt_at: outcome.first_attempt_at,
        last_attempt_at: outcome.attempted_at,
        last_response_code: outcome.response_code,
        last_error: outcome.error === null ? null : outcome.error.slice(0, 1000),
        next_attempt_at: outcome.next_attempt_at,
        delivered_at: outcome.status === "delivered" ? outcome.attempted_at : null,
        locked_until: null,
        lock_token: null,
      }))
      .where("id", "=", id)
      .where("lock_token", "=", token)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Gives a delivery back without counting an attempt (the instance is stopping). */
  async release(id: number, token: string): Promise<void> {
    await this.db
      .updateTable("webhook_deliveries")
      .set({ locked_until: null, lock_token: null })
      .where("id", "=", id)
      .where("lock_token", "=", token)
      .execute();
  }

  /**
   * When the next attempt anywhere can start: the earliest time an endpoint's head is due and not held (a
   * held one is free when its lock ends). Deliveries queued behind a head do not count: they wait for it.
   */
  async nextDue(): Promise<string | null> {
    const row = await this.db
      .selectFrom("webhook_deliveries as d")
      .innerJoin("webhook_endpoints as e", "e.id", "d.endpoint_id")
      .select(
        sql<
          string | null
        >`min(case when d.locked_until is not null and d.locked_until > d.next_attempt_at then d.locked_until else d.next_attempt_at end)`.as(
          "next",
        ),
      )
      .where("d.status", "=", "pending")
      .where("e.enabled", "=", 1)
      .where("d.id", "=", (eb) =>
        eb
          .selectFrom("webhook_deliveries as h")
          .select((inner) => inner.fn.min("h.id").as("head"))
          .whereRef("h.endpoint_id", "=", "d.endpoint_id")
          .where("h.status", "=", "pending"),
      )
      .executeTakeFirst();
    return row?.next ?? null;
  }

  /** Deletes delivered and failed deliveries created before `before`; returns how many. */
  async prune(before: string): Promise<number> {
    const result = await this.db
      .deleteFrom("webhook_deliveries")
      .where("status", "in", ["delivered", "failed"])
      .where("created_at", "<", before)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
