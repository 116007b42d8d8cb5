/**
 * Change events: what `GET /api/v2/events` streams, webhooks deliver and the client SDK applies. Every
 * prompt event carries both pointers after the change, so a consumer never needs to read to know what
 * production serves now. A project's own events (a label's required evaluation changed) carry no prompt.
 */
import { z } from "zod";
import { planEventOut } from "./rollouts/plan-view.js";
import { FULL_HASH } from "./version-ref.js";

/** The events about one prompt: each carries its `prompt_id` and both pointers (`PromptEvent`). */
export const PROMPT_EVENT_TYPES = [
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
  // Evaluations (docs/evaluations.md): an evaluation of the prompt ended (done, failed or stopped).
  "evaluation.completed",
  // Includes (docs/includes.md): a served version of the prompt pins a version of another that its pointer no
  // longer names (that prompt was published, or its label or latest moved).
  "include.outdated",
  // Rollout plans (docs/rollouts.md "Plans"): a plan's step decided. Its label's move is its own event too.
  "rollout.advanced",
  "rollout.aborted",
  "rollout.completed",
] as const;
export type PromptEventType = (typeof PROMPT_EVENT_TYPES)[number];

/** The events about the project, not one prompt: no `prompt_id`, no pointers (`ProjectEvent`). */
export const PROJECT_EVENT_TYPES = [
  // A label's required evaluation or its rollback rule changed (docs/evaluations.md, "Required evaluations").
  "label.requirement_changed",
] as const;
export type ProjectEventType = (typeof PROJECT_EVENT_TYPES)[number];

/** Every change event type: what the stream sends and what a webhook endpoint may subscribe to. */
export const EVENT_TYPES = [...PROMPT_EVENT_TYPES, ...PROJECT_EVENT_TYPES] as const;
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

/** An evaluation as its `evaluation.completed` event describes it: enough to route it without a read. */
export const evaluationSummary = z
  .object({
    id: z.string(),
    status: z.enum(["done", "failed", "stopped"]),
    reused: z.boolean(),
    dataset: z.object({ id: z.string(), version: hash }),
    checks_hash: hash,
    versions: z.array(
      z.object({
        version: hash,
        draft: z.boolean(),
        passed: z.number().int(),
        failed: z.number().int(),
        errored: z.number().int(),
        pass_rate: z.number().nullable(),
      }),
    ),
  })
  .describe("An evaluation's outcome");

/** A stale pin as its `include.outdated` event describes it. */
export const outdatedInclude = z
  .object({
    prompt: z.string().describe("The included prompt, whose pointer moved"),
    pointer: z.string().describe("What the includes follow: production, latest or a label"),
    references: z.array(z.string()).describe("The includes of this version that follow it, as written"),
    pinned: hash.describe("The version of the included prompt this version took"),
    current: hash.describe("The version the pointer names now"),
    labels: z.array(z.string()).describe("What serves this version of the including prompt"),
  })
  .describe("An include whose pin is behind its pointer");

/** The data of every change event; described for the OpenAPI document (and the client's types). */
export const promptEvent = z
  .object({
    id: z
      .number()
      .int()
      .describe("Increasing within a project, in commit order; the SSE id, and what Last-Event-ID resumes after"),
    type: z.enum(PROMPT_EVENT_TYPES).describe("What changed"),
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
    evaluation: evaluationSummary.optional().describe("The evaluation that ended (evaluation.completed)"),
    include: outdatedInclude
      .optional()
      .describe("The stale include (include.outdated; prompt_id and version are the including prompt's)"),
    plan: planEventOut.optional().describe("The plan and the numbers that decided it (rollout.* events)"),
  })
  .describe(
    "A change event: prompt.created, prompt.version_saved, prompt.published, prompt.deleted, and the release path's prompt.label_moved, prompt.label_removed, prompt.rollout_changed, release.requested, release.approved, release.rejected, evaluation.completed, include.outdated, and the rollout plans' rollout.advanced, rollout.aborted and rollout.completed",
  );

export type PromptEvent = z.infer<typeof promptEvent>;

/** A label's requirement as a `label.requirement_changed` event states it, before or after the change. */
export const requirementState = z
  .object({
    hash: hash
      .nullable()
      .describe(
        "The requirement's hash (SHA-256 of its canonical JSON, as in the audit trail); null when the label requires no evaluation",
      ),
    rollback_allowed: z.boolean().describe("A rollback to a version the label served before passes without one"),
  })
  .describe("A label's required evaluation, by hash, and its rollback rule");

/**
 * `label.requirement_changed`: a label's required evaluation was set, replaced, removed, or its rollback rule
 * changed (whenever the audit trail records `label.requirement_changed`). The project's, not a prompt's: no
 * `prompt_id`, no pointers. The requirement itself (dataset, checks, thresholds) is read with
 * `GET /api/v2/labels/{label}`; the event names it by hash only.
 */
export const projectEvent = z
  .object({
    id: z
      .number()
      .int()
      .describe("Increasing within a project, in commit order; the SSE id, and what Last-Event-ID resumes after"),
    type: z.enum(PROJECT_EVENT_TYPES).describe("What changed"),
    at: z.string().describe("When the change was committed (ISO 8601, UTC)"),
    label: z.string().describe("The label whose requirement changed"),
    requirement: requirementState.describe("The label's requirement after the change"),
    previous: requirementState.describe("The label's requirement before the change"),
  })
  .describe("A change event about the project, not one prompt: label.requirement_changed");

export type ProjectEvent = z.infer<typeof projectEvent>;

/** Any change event: about one prompt, or about the project. */
export type ChangeEvent = PromptEvent | ProjectEvent;

const PROJECT_TYPES: ReadonlySet<string> = new Set(PROJECT_EVENT_TYPES);

/** Whether an event is about one prompt (it has `prompt_id` and the pointers). */
export function isPromptEvent(event: ChangeEvent): event is PromptEvent {
  return !PROJECT_TYPES.has(event.type);
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
