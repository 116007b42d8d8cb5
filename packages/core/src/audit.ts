import { z } from "zod";
import { pageLimit } from "./schemas.js";
import { text } from "./text.js";

/**
 * The audit trail's vocabulary. `before` and `after` point at what the action moved from and to: a version
 * hash for prompts (the latest version for a save, production for a publish), the key's scope for keys
 * (`revoked` after a revocation), the plan's name for a plan change. The release path's actions target
 * `<prompt id>:<label>` (a label's settings: `label:<name>`), and point at versions, or at `protected` /
 * `unprotected` for settings. Invitations belong to the organization (every project's trail shows them),
 * target the invited e-mail, and point at the role (`revoked` after a revocation). MCP sign-ins (OAuth grants)
 * belong to the grant's project, target `<client name> (<grant id>)` (the name as registered, the id as
 * Connected apps lists it), and point at the scope granted (`revoked` after a revocation): `app.connected`
 * names the person who allowed the client, `app.revoked` whoever revoked it in Connected apps, or the grant's
 * person via the client when the client revoked it (RFC 7009) or the server did (a reused code or refresh
 * token). Datasets (docs/evaluations.md) target the dataset's id and point at versions (its head before and
 * after), or at its name for `dataset.updated`. Evaluations target the prompt and point at the evaluation's id; a prompt's
 * evaluation defaults (`evaluation.defaults_saved`) point at the hash of the check set saved (before and after).
 * Rollout plans (`rollout.*`) target `<prompt id>:<label>`; `before` is where the plan stood (`<plan id> step
 * <n> at <percent>%`) and `after` the decision with its numbers, cut to the column's 100 characters (the whole
 * numbers are the event's and the plan's `last_decision`).
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
  "app.connected",
  "app.revoked",
  "evaluation.started",
  "evaluation.stopped",
  "label.requirement_changed",
  "gate.passed",
  "gate.refused",
  "evaluation.defaults_saved",
  "dataset.created",
  "dataset.version_created",
  "dataset.head_moved",
  "dataset.updated",
  "dataset.deleted",
  "rollout.started",
  "rollout.paused",
  "rollout.resumed",
  "rollout.advanced",
  "rollout.aborted",
  "rollout.completed",
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  id: string;
  at: string;
  /** `key:<prefix>`, `user:<e-mail>` (`user:<e-mail> via MCP client <name>` through a sign-in) or `cli`. */
  actor: string;
  action: AuditAction;
  /** The prompt id, the key id, or the organization id (plan changes). */
  target: string;
  before: string | null;
  after: string | null;
}

/**
 * The actor of what a person does through an MCP client they allowed. The audit trail's column holds 300
 * characters: a long client name is cut, the person never.
 */
export function viaMcpClient(person: string, client: string): string {
  const text = `${person} via MCP client ${client}`;
  return text.length <= 300 ? text : `${text.slice(0, 299)}…`;
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
