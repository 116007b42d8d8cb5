/**
 * Change events: what `GET /api/v2/events` streams, webhooks deliver and the client SDK applies. Every
 * event carries both pointers after the change, so a consumer never needs to read to know what production
 * serves now.
 */
export const EVENT_TYPES = ["prompt.created", "prompt.version_saved", "prompt.published"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface PromptEvent {
  /** Increasing within a project, in commit order; the SSE `id` and the webhook message id's suffix. */
  id: number;
  type: EventType;
  prompt_id: string;
  /** The version the change is about: created, saved or now in production. */
  version: string;
  production_version: string | null;
  latest_version: string;
  /** ISO 8601, UTC, when the change was committed. */
  at: string;
}

/** The SSE event that opens every stream: `last_event_id` is where the stream now stands. */
export interface ReadyEvent {
  last_event_id: number;
}

/** Sent instead of a replay when events after `Last-Event-ID` are no longer kept: reload everything. */
export interface ResetEvent {
  last_event_id: number;
  reason: string;
}
