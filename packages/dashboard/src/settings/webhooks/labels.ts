import type { EventType } from "@promptstore/core/events";
import type { DeliveryStatus } from "@promptstore/core/webhooks";

// By name, so an event type added to the core reads as itself here until it is given words.
const EVENT_LABELS: Record<string, string> = {
  "prompt.created": "Prompt created",
  "prompt.version_saved": "Version saved",
  "prompt.published": "Published",
  "prompt.deleted": "Deleted",
  "prompt.label_moved": "Label moved",
  "prompt.label_removed": "Label removed",
  "prompt.rollout_changed": "Rollout changed",
  "release.requested": "Release requested",
  "release.approved": "Release approved",
  "release.rejected": "Release rejected",
  "label.requirement_changed": "Required evaluation changed",
};
export const EVENT_HELP: Record<string, string> = {
  "prompt.created": "a new prompt and its first version",
  "prompt.version_saved": "a save that makes a new version",
  "prompt.published": "production moves: publish or rollback",
  "prompt.deleted": "a prompt is deleted",
  "prompt.label_moved": "a label other than production moves",
  "prompt.label_removed": "a label is removed from a prompt",
  "prompt.rollout_changed": "a gradual rollout starts, changes or is aborted",
  "release.requested": "someone asks to move a protected label",
  "release.approved": "a release is approved (the label moves)",
  "release.rejected": "a release is rejected",
  "label.requirement_changed": "a label's required evaluation or rollback rule changes (no prompt)",
};
export const label = (type: EventType): string => EVENT_LABELS[type] ?? type;

export const STATUS_BADGE: Record<DeliveryStatus, string> = {
  pending: "badge badge-warning",
  delivered: "badge badge-production",
  failed: "badge badge-danger",
};

/** "now", "in 42 s", "in 3 min", "in 5 h": when the next attempt is due. */
export function timeUntil(iso: string, now: number): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  if (Number.isNaN(seconds)) return "unknown time";
  if (seconds < 5) return "now";
  if (seconds < 60) return `in ${seconds} s`;
  if (seconds < 3600) return `in ${Math.round(seconds / 60)} min`;
  return `in ${Math.round(seconds / 3600)} h`;
}

/** A new signing secret to show once, and the endpoint it signs for. */
export type Secret = { title: string; url: string; secret: string };
