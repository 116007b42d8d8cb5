/**
 * Change events: what `GET /api/v2/events` streams, webhooks deliver and the client SDK applies. Every
 * event carries both pointers after the change, so a consumer never needs to read to know what production
 * serves now.
 */
import { z } from "zod";
import { FULL_HASH } from "./version-ref.js";

export const EVENT_TYPES = ["prompt.created", "prompt.version_saved", "prompt.published", "prompt.deleted"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const hash = z.string().regex(FULL_HASH);

/** The data of every change event; described for the OpenAPI document (and the client's types). */
export const promptEvent = z
  .object({
    id: z
      .number()
      .int()
      .describe("Increasing within a project, in commit order; the SSE id, and what Last-Event-ID resumes after"),
    type: z.enum(EVENT_TYPES).describe("What changed"),
    prompt_id: z.string().describe("The prompt that changed"),
    version: hash.describe(
      "The version the change is about: created, saved, now in production, or (deleted) the one production served, else latest",
    ),
    production_version: hash
      .nullable()
      .describe("What production serves after the change; null if unpublished or deleted"),
    latest_version: hash.nullable().describe("The newest version after the change; null once deleted"),
    at: z.string().describe("When the change was committed (ISO 8601, UTC)"),
  })
  .describe("A change event: prompt.created, prompt.version_saved, prompt.published or prompt.deleted");

export type PromptEvent = z.infer<typeof promptEvent>;

/** The SSE event that opens every stream: `last_event_id` is where the stream now stands. */
export interface ReadyEvent {
  last_event_id: number;
}

/** Sent instead of a replay when events after `Last-Event-ID` are no longer kept: reload everything. */
export interface ResetEvent {
  last_event_id: number;
  reason: string;
}
