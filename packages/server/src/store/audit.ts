import type { AuditAction, AuditEntry } from "@promptstore/core/audit";
import type { Kysely } from "kysely";
import type { Database } from "./schema.js";

/** One audit row as a change describes it; written with the change's own connection (its transaction). */
export interface NewAuditEntry extends Omit<AuditEntry, "id"> {
  orgId: string;
  /** Null for a change to the whole organization (a plan change). */
  projectId: string | null;
}

export async function recordAudit(db: Kysely<Database>, entries: readonly NewAuditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await db
    .insertInto("audit_log")
    .values(
      entries.map((e) => ({
        org_id: e.orgId,
        project_id: e.projectId,
        at: e.at,
        actor: e.actor,
        action: e.action,
        target: e.target,
        before: e.before,
        after: e.after,
      })),
    )
    .execute();
}

/**
 * A project's trail, newest first: its own rows and its organization's (plan changes). `before` is the id of
 * the last row of the previous page; ids only grow, so pages neither skip nor repeat rows while rows arrive.
 */
export async function readAudit(
  db: Kysely<Database>,
  project: { projectId: string; orgId: string },
  page: { before?: number | undefined; limit: number },
): Promise<AuditEntry[]> {
  let query = db
    .selectFrom("audit_log")
    .select(["id", "at", "actor", "action", "target", "before", "after"])
    .where((eb) =>
      eb.or([
        eb("project_id", "=", project.projectId),
        eb.and([eb("project_id", "is", null), eb("org_id", "=", project.orgId)]),
      ]),
    );
  if (page.before !== undefined) query = query.where("id", "<", page.before);
  const rows = await query.orderBy("id", "desc").limit(page.limit).execute();
  return rows.map((r) => ({ ...r, id: String(r.id), action: r.action as AuditAction }));
}
