import type { KeyScope } from "@promptstore/core/accounts/key-scopes";
import type { Kysely } from "kysely";
import { now } from "../ids.js";
import type { Database, OAuthRequestsTable } from "../schema.js";

export type PendingRequest = Pick<
  OAuthRequestsTable,
  "id" | "client_id" | "redirect_uri" | "state" | "code_challenge" | "scope" | "resource" | "expires_at"
>;

/** What a person's Allow gave: the code (hashed) and what it stands for. */
export interface Decision {
  codeHash: string;
  codeExpiresAt: string;
  userId: string;
  projectId: string;
  scope: KeyScope;
}

/** Authorization requests waiting for a person's answer, then holding their single-use code. */
export class OAuthRequestStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(request: PendingRequest): Promise<void> {
    // Sweeping here (requests are rare) keeps the table small: expired, undecided or redeemed long ago.
    const cutoff = new Date(Date.now() - 86_400_000).toISOString();
    await this.db.deleteFrom("oauth_requests").where("expires_at", "<", cutoff).execute();
    await this.db
      .insertInto("oauth_requests")
      .values({ ...request, created_at: now() })
      .execute();
  }

  /** A request still waiting for its answer (neither decided nor expired). */
  async pending(id: string): Promise<PendingRequest | undefined> {
    return this.db
      .selectFrom("oauth_requests")
      .select(["id", "client_id", "redirect_uri", "state", "code_challenge", "scope", "resource", "expires_at"])
      .where("id", "=", id)
      .where("decided_at", "is", null)
      .where("expires_at", ">", now())
      .executeTakeFirst();
  }

  /** Records the answer once: false when the request was already answered (or has expired). */
  async decide(id: string, decision: Decision | null): Promise<boolean> {
    const at = now();
    const result = await this.db
      .updateTable("oauth_requests")
      .set({
        decided_at: at,
        ...(decision && {
          code_hash: decision.codeHash,
          code_expires_at: decision.codeExpiresAt,
          user_id: decision.userId,
          project_id: decision.projectId,
          granted_scope: decision.scope,
        }),
      })
      .where("id", "=", id)
      .where("decided_at", "is", null)
      .where("expires_at", ">", at)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Takes a code for its one exchange: the row when this call is the first to use it; `used` (with the
   * grant it gave) when it was used before; undefined when no such code exists.
   */
  async takeCode(codeHash: string): Promise<{ row: OAuthRequestsTable; first: boolean } | undefined> {
    const taken = await this.db
      .updateTable("oauth_requests")
      .set({ used_at: now() })
      .where("code_hash", "=", codeHash)
      .where("used_at", "is", null)
      .returningAll()
      .executeTakeFirst();
    if (taken) return { row: taken, first: true };
    const used = await this.db
      .selectFrom("oauth_requests")
      .selectAll()
      .where("code_hash", "=", codeHash)
      .executeTakeFirst();
    return used && { row: used, first: false };
  }

  async linkGrant(id: string, grantId: string): Promise<void> {
    await this.db.updateTable("oauth_requests").set({ grant_id: grantId }).where("id", "=", id).execute();
  }
}
