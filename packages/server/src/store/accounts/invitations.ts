import type { InvitationStatus, InvitationView, Role } from "@promptstore/core/dashboard";
import type { Kysely } from "kysely";
import { type NewAuditEntry, recordAudit } from "../audit.js";
import type { Database, InvitationsTable } from "../schema.js";

export type InvitationRow = InvitationsTable;

export function invitationStatus(row: InvitationRow, at: string): InvitationStatus {
  if (row.accepted_at !== null) return "accepted";
  if (row.revoked_at !== null) return "revoked";
  return row.expires_at <= at ? "expired" : "pending";
}

export function toInvitationView(row: InvitationRow, at: string): InvitationView {
  return {
    id: row.id,
    email: row.email,
    role: row.role as Role,
    invited_by: row.invited_by,
    created_at: row.created_at,
    expires_at: row.expires_at,
    status: invitationStatus(row, at),
    accepted_at: row.accepted_at,
    revoked_at: row.revoked_at,
  };
}

/** Invitations to organizations; each change writes its audit row in its own transaction. */
export class InvitationStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(row: InvitationRow, audit: NewAuditEntry): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto("invitations").values(row).execute();
      await recordAudit(trx, [audit]);
    });
  }

  list(orgId: string): Promise<InvitationRow[]> {
    return this.db
      .selectFrom("invitations")
      .selectAll()
      .where("org_id", "=", orgId)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .execute();
  }

  find(orgId: string, id: string): Promise<InvitationRow | undefined> {
    return this.db
      .selectFrom("invitations")
      .selectAll()
      .where("org_id", "=", orgId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  byTokenHash(tokenHash: string): Promise<(InvitationRow & { org_name: string }) | undefined> {
    return this.db
      .selectFrom("invitations as i")
      .innerJoin("organizations as o", "o.id", "i.org_id")
      .selectAll("i")
      .select("o.name as org_name")
      .where("i.token_hash", "=", tokenHash)
      .executeTakeFirst();
  }

  /** Revokes a pending invitation; false when it is no longer pending (or not this organization's). */
  async revoke(orgId: string, id: string, at: string, audit: NewAuditEntry): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable("invitations")
        .set({ revoked_at: at })
        .where("org_id", "=", orgId)
        .where("id", "=", id)
        .where("accepted_at", "is", null)
        .where("revoked_at", "is", null)
        .where("expires_at", ">", at)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await recordAudit(trx, [audit]);
      return true;
    });
  }

  /**
   * Accepts a pending invitation for `userId`: marks it used and adds the membership, in one transaction, so
   * a revocation or a second acceptance racing it finds it no longer pending. "member" when the user already
   * was one (the invitation is used up, the role left as it was).
   */
  async accept(
    id: string,
    userId: string,
    at: string,
    audit: NewAuditEntry,
  ): Promise<"accepted" | "member" | "not_pending"> {
    return this.db.transaction().execute(async (trx) => {
      const used = await trx
        .updateTable("invitations")
        .set({ accepted_at: at, accepted_by: userId })
        .where("id", "=", id)
        .where("accepted_at", "is", null)
        .where("revoked_at", "is", null)
        .where("expires_at", ">", at)
        .returning(["org_id", "role"])
        .executeTakeFirst();
      if (!used) return "not_pending";
      const added = await trx
        .insertInto("memberships")
        .values({ org_id: used.org_id, user_id: userId, role: used.role, created_at: at })
        .onConflict((oc) => oc.columns(["org_id", "user_id"]).doNothing())
        .executeTakeFirst();
      if ((added.numInsertedOrUpdatedRows ?? 0n) === 0n) return "member";
      await recordAudit(trx, [audit]);
      return "accepted";
    });
  }
}
