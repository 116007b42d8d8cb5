/**
 * Webhooks: the input schemas (REST `/api/v2/webhooks`, the dashboard's forms, the CLI) and the shapes
 * answered. Pure: the address checks that need the server's configuration (private networks) and DNS are the
 * server's; here only what any client can check.
 */
import { z } from "zod";
import { EVENT_TYPES, type EventType, type ProjectEvent, type PromptEvent } from "./events.js";
import { pageLimit } from "./schemas.js";
import { text } from "./text.js";

export const WEBHOOK_LIMITS = {
  /** Endpoints per project, whatever the plan. */
  endpointsPerProject: 20,
  urlLength: 2048,
  descriptionLength: 500,
} as const;

/** A webhook endpoint's id, as the server makes it: `whk_` and 12 random bytes in hex. */
export const WEBHOOK_ID = /^whk_[0-9a-f]{24}$/;

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Why a URL cannot be an endpoint, in the words of a 400's message; null when it can. */
export function webhookUrlProblem(value: string): string | null {
  if (value.length > WEBHOOK_LIMITS.urlLength) return `must be at most ${WEBHOOK_LIMITS.urlLength} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute http:// or https:// URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http:// or https:// URL";
  if (url.username !== "" || url.password !== "") return "must not contain a user name or password";
  if (url.hostname === "") return "must name a host";
  return null;
}

export const webhookUrl = text()
  .superRefine((value, ctx) => {
    const problem = webhookUrlProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .describe(
    `Where events are POSTed: an http:// or https:// URL without credentials, at most ${WEBHOOK_LIMITS.urlLength} characters. Private, loopback and link-local addresses are refused unless the server allows them.`,
  );

export const webhookEvents = z
  .array(z.enum(EVENT_TYPES, { error: `must be one of ${EVENT_TYPES.join(", ")}` }), { error: "must be an array" })
  .max(EVENT_TYPES.length, `must name at most ${EVENT_TYPES.length} event types`)
  .superRefine((types, ctx) => {
    const seen = new Set<string>();
    types.forEach((type, i) => {
      if (seen.has(type)) ctx.addIssue({ code: "custom", path: [i], message: "is listed twice" });
      seen.add(type);
    });
  })
  // None is allowed: an endpoint that only answers evaluations' webhook checks receives no events.
  .describe(`The event types sent to this endpoint: any of ${EVENT_TYPES.join(", ")}`);

export const webhookDescription = text()
  .max(WEBHOOK_LIMITS.descriptionLength, `must be at most ${WEBHOOK_LIMITS.descriptionLength} characters`)
  .describe(`A note for people: what receives these events, up to ${WEBHOOK_LIMITS.descriptionLength} characters`);

const webhookEnabled = z
  .boolean({ error: "must be true or false" })
  .describe("Whether new events are queued for this endpoint (and queued ones sent). Default true.");

export const createWebhookBody = z.strictObject({
  url: webhookUrl,
  events: webhookEvents,
  description: webhookDescription.optional(),
  enabled: webhookEnabled.optional(),
});

export const updateWebhookBody = z
  .strictObject({
    url: webhookUrl.optional(),
    events: webhookEvents.optional(),
    description: webhookDescription.optional(),
    enabled: webhookEnabled.optional(),
  })
  .superRefine((body, ctx) => {
    if (Object.values(body).every((v) => v === undefined)) {
      ctx.addIssue({ code: "custom", path: [], message: "send at least one of url, events, description, enabled" });
    }
  });

/** Rotating takes no input; the body may be absent or `{}`. */
export const rotateSecretBody = z.strictObject({});

export const deliveriesQuery = z.object({
  limit: pageLimit.describe("How many deliveries, newest first, 1-100; default 50"),
  status: z
    .enum(DELIVERY_STATUSES, { error: `must be one of ${DELIVERY_STATUSES.join(", ")}` })
    .optional()
    .describe("Only deliveries in this status: pending, delivered or failed"),
});

export type CreateWebhookBody = z.infer<typeof createWebhookBody>;
export type UpdateWebhookBody = z.infer<typeof updateWebhookBody>;
export type DeliveriesQuery = z.infer<typeof deliveriesQuery>;

/** An endpoint as every surface shows it: never with its secret. */
export interface WebhookView {
  id: string;
  url: string;
  description: string;
  events: EventType[];
  enabled: boolean;
  created_at: string;
  updated_at: string;
  /**
   * True when the stored signing secret cannot sign: it was encrypted with another server secret key (a
   * store restored under a new key). Deliveries fail, saying so, until the secret is rotated.
   */
  secret_needs_rotation: boolean;
}

/** Answered once, to a create or a rotation: the signing secret, `whsec_` + base64. */
export interface WebhookWithSecret extends WebhookView {
  secret: string;
}

export interface DeliveryView {
  id: number;
  webhook_id: string;
  /** The change event; the receiver sees `webhook-id: msg_<event_id>`. */
  event_id: number;
  event_type: EventType;
  /** The prompt the event is about; "" for a project's event (`label.requirement_changed`). */
  prompt_id: string;
  status: DeliveryStatus;
  attempts: number;
  /** When the next attempt is due; null once delivered or failed. */
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  /** The HTTP status of the last answer; null when there was none (refused, unreachable, timed out). */
  last_response_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

/** What a receiver gets as the body of each request: the event, with its project first, in `data`. */
export type WebhookPayload =
  | {
      type: PromptEvent["type"];
      /** When the change was committed: the event's `at`. */
      timestamp: string;
      data: { project_id: string } & PromptEvent;
    }
  | {
      type: ProjectEvent["type"];
      timestamp: string;
      data: { project_id: string } & ProjectEvent;
    };
