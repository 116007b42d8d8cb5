import { z } from "zod";
import { pageLimit } from "./schemas.js";
import { text } from "./text.js";

/**
 * The audit trail's vocabulary. `before` and `after` point at what the action moved from and to: a version
 * hash for prompts (the latest version for a save, production for a publish), the key's scope for keys
 * (`revoked` after a revocation), the plan's name for a plan change. The release path's actions target
 * `<prompt id>:<label>` (a label's settings: `label:<name>`), and point at versions, or at `protected` /
 * `unprotected` for settings. Invitations belong to the organization (every project's trail shows them),
 * target the invited e-mail, and point at the role (`revoked` after a revocation).
 */
export const AUDIT_ACTIONS = [
  "prompt.created",
  "prompt.saved",
  "prompt.published",
  "prompt.deleted",
  "key.created",
  "key.revoked",
  "plan.changed",
  "label.moved",
  "label.removed",
  "rollout.changed",
  "release.requested",
  "release.approved",
  "release.rejected",
  "release.cancelled",
  "label.configured",
  "invitation.created",
  "invitation.revoked",
  "invitation.accepted",
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  id: string;
  at: string;
  /** `key:<prefix>`, `user:<e-mail>` or `cli`. */
  actor: string;
  action: AuditAction;
  /** The prompt id, the key id, or the organization id (plan changes). */
  target: string;
  before: string | null;
  after: string | null;
}

export interface AuditPage {
  entries: AuditEntry[];
  next_cursor: string | null;
}

export const auditQuery = z.object({
  limit: pageLimit.describe("Page size, 1-100 (default 50)"),
  cursor: text().max(64, "is not a valid cursor").optional().describe("next_cursor of the previous page"),
});

export type AuditQuery = z.infer<typeof auditQuery>;
