/**
 * Change events: what `GET /api/v2/events` streams, webhooks deliver and the client SDK applies. Every
 * event carries both pointers after the change, so a consumer never needs to read to know what production
 * serves now.
 */
import { z } from "zod";
import { FULL_HASH } from "./version-ref.js";

export const EVENT_TYPES = [
  "prompt.created",
  "prompt.version_saved",
  "prompt.published",
  "prompt.deleted",
  // The release path (docs/releases.md): labels other than production, rollouts, release requests.
  "prompt.label_moved",
  "prompt.label_removed",
  "prompt.rollout_changed",
  "release.requested",
  "release.approved",
  "release.rejected",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const hash = z.string().regex(FULL_HASH);

/** A rollout as events and reads describe it. */
export const rolloutState = z
  .object({
    candidate: hash.describe("The version a share of reads gets"),
    percent: z.number().int().describe("That share, 1 to 99"),
  })
  .describe("A gradual rollout on a label");

/** A release request as events describe it. */
export const releaseSummary = z
  .object({
    id: z.string(),
    status: z.enum(["pending", "approved", "rejected", "stale", "cancelled"]),
    label: z.string(),
    version: hash,
    from_version: hash.nullable(),
    percent: z.number().int().nullable(),
    requested_by: z.string(),
    decided_by: z.string().nullable(),
    comment: z.string().nullable(),
  })
  .describe("A request to move a protected label");

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
    label: z
      .string()
      .optional()
      .describe("The label moved, removed or rolled out (production for prompt.published); absent on the others"),
    previous_version: hash
      .nullable()
      .optional()
      .describe("What the label pointed to before the change; null when it was not set"),
    rollout: rolloutState
      .nullable()
      .optional()
      .describe("The label's rollout after the change (prompt.rollout_changed, and moves); null when none"),
    release: releaseSummary.optional().describe("The release request (release.* events)"),
  })
  .describe(
    "A change event: prompt.created, prompt.version_saved, prompt.published, prompt.deleted, and the release path's prompt.label_moved, prompt.label_removed, prompt.rollout_changed, release.requested, release.approved, release.rejected",
  );

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
