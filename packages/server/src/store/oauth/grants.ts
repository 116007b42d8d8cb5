import type { GrantView } from "@promptstore/core/accounts/connected-apps";
import type { KeyScope } from "@promptstore/core/accounts/key-scopes";
import { viaMcpClient } from "@promptstore/core/audit";
import type { Role } from "@promptstore/core/dashboard";
import type { Kysely } from "kysely";
import { recordAudit } from "../audit.js";
import { now } from "../ids.js";
import type { Database, OAuthGrantsTable } from "../schema.js";

/** One token to store: its hash, never the token. */
export interface NewToken {
  hash: string;
  kind: "access" | "refresh";
  expiresAt: string;
}

/** What an access token stands for, read with the person's current membership (none: no row). */
export interface AccessGrant {
  grantId: string;
  userId: string;
  email: string;
  role: Role;
  scope: KeyScope;
  clientName: string;
  resource: string;
  projectId: string;
  projectName: string;
  orgId: string;
  plan: string;
  expiresAt: string;
}

/**
 * Who ends a grant: a person in Connected apps (`user:<e-mail>`, the audit row's actor), or the client
 * (RFC 7009) or the server's security rules (a reused code or refresh token), given as the reason; the audit
 * row then names the grant's person via the client.
 */
export type GrantRevoker = { actor: string } | { reason: string };

/** The audit row's target for a grant: the client's name as registered, and the grant's id. */
const auditTarget = (grant: { id: string; client_name: string }) => `${grant.client_name} (${grant.id})`;

/** What a person allowed a client (one project, one scope), and the tokens issued under it. */
export class OAuthGrantStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(grant: Omit<OAuthGrantsTable, "last_used_at" | "revoked_at" | "revoked_by">, tokens: NewToken[]) {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("oauth_grants")
        .values({ ...grant, last_used_at: null, revoked_at: null, revoked_by: null })
        .execute();
      await this.insertTokens(trx, grant.id, tokens);
      const person = await trx
        .selectFrom("users")
        .select("email")
        .where("id", "=", grant.user_id)
        .executeTakeFirstOrThrow();
      await recordAudit(trx, [
        {
          orgId: grant.org_id,
          projectId: grant.project_id,
          at: grant.created_at,
          actor: `user:${person.email}`,
          action: "app.connected",
          target: auditTarget(grant),
          before: null,
          after: grant.scope,
        },
      ]);
    });
  }

  private async insertTokens(db: Kysely<Database>, grantId: string, tokens: NewToken[]): Promise<void> {
    const at = now();
    await db
      .insertInto("oauth_tokens")
      .values(
        tokens.map((t) => ({
          token_hash: t.hash,
          grant_id: grantId,
          kind: t.kind,
          created_at: at,
          expires_at: t.expiresAt,
          used_at: null,
        })),
      )
      .execute();
  }

  /**
   * The access token's grant, joined to the person's membership in the project's organization as it is now:
   * a revoked grant, a removed member or a deleted project gives no row.
   */
  async access(tokenHash: string): Promise<AccessGrant | undefined> {
    const row = await this.db
      .selectFrom("oauth_tokens as t")
      .innerJoin("oauth_grants as g", "g.id", "t.grant_id")
      .innerJoin("users as u", "u.id", "g.user_id")
      .innerJoin("projects as p", "p.id", "g.project_id")
      .innerJoin("organizations as o", "o.id", "p.org_id")
      .innerJoin("memberships as m", (join) => join.onRef("m.org_id", "=", "o.id").onRef("m.user_id", "=", "g.user_id"))
      .select([
        "g.id as grantId",
        "g.user_id as userId",
        "u.email as email",
        "m.role as role",
        "g.scope as scope",
        "g.client_name as clientName",
        "g.resource as resource",
        "p.id as projectId",
        "p.name as projectName",
        "o.id as orgId",
        "o.plan as plan",
        "t.expires_at as expiresAt",
      ])
      .where("t.token_hash", "=", tokenHash)
      .where("t.kind", "=", "access")
      .where("g.revoked_at", "is", null)
      .executeTakeFirst();
    return row as AccessGrant | undefined;
  }

  /**
   * Exchanges a refresh token once (rotation): marks it used and stores its successors, in one transaction.
   * Undefined when no such live token exists; `reused` when it was exchanged before, in which case the
   * whole grant is revoked (whoever holds the old one is not who holds the new one, RFC 9700 4.14.2).
   */
  async rotate(
    tokenHash: string,
    successors: NewToken[],
  ): Promise<{ grant: OAuthGrantsTable } | { reused: true } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const at = now();
      const taken = await trx
        .updateTable("oauth_tokens")
        .set({ used_at: at })
        .where("token_hash", "=", tokenHash)
        .where("kind", "=", "refresh")
        .where("used_at", "is", null)
        .where("expires_at", ">", at)
        .returning(["grant_id"])
        .executeTakeFirst();
      if (!taken) {
        const used = await trx
          .selectFrom("oauth_tokens")
          .select(["grant_id", "used_at"])
          .where("token_hash", "=", tokenHash)
          .where("kind", "=", "refresh")
          .executeTakeFirst();
        if (used?.used_at) {
          await this.revokeIn(trx, used.grant_id, { reason: "refresh token reused" });
          return { reused: true as const };
        }
        return undefined;
      }
      const grant = await trx
        .selectFrom("oauth_grants")
        .selectAll()
        .where("id", "=", taken.grant_id)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      if (!grant) return undefined;
      await this.insertTokens(trx, grant.id, successors);
      return { grant };
    });
  }

  /** The grant a token (access or refresh) belongs to, for revocation by token. */
  async grantOfToken(tokenHash: string): Promise<{ grantId: string; clientId: string } | undefined> {
    const row = await this.db
      .selectFrom("oauth_tokens as t")
      .innerJoin("oauth_grants as g", "g.id", "t.grant_id")
      .select(["g.id as grantId", "g.client_id as clientId"])
      .where("t.token_hash", "=", tokenHash)
      .executeTakeFirst();
    return row;
  }

  async find(grantId: string): Promise<OAuthGrantsTable | undefined> {
    return this.db.selectFrom("oauth_grants").selectAll().where("id", "=", grantId).executeTakeFirst();
  }

  /**
   * Revokes a grant and with it every token of its family, with its `app.revoked` audit row in the same
   * transaction; false (and no row) when it was already revoked.
   */
  async revoke(grantId: string, by: GrantRevoker): Promise<boolean> {
    return this.db.transaction().execute((trx) => this.revokeIn(trx, grantId, by));
  }

  private async revokeIn(db: Kysely<Database>, grantId: string, by: GrantRevoker): Promise<boolean> {
    const at = now();
    const result = await db
      .updateTable("oauth_grants")
      .set({ revoked_at: at, revoked_by: ("actor" in by ? by.actor : by.reason).slice(0, 300) })
      .where("id", "=", grantId)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return false;
    const grant = await db
      .selectFrom("oauth_grants as g")
      .innerJoin("users as u", "u.id", "g.user_id")
      .select(["g.id", "g.org_id", "g.project_id", "g.scope", "g.client_name", "u.email"])
      .where("g.id", "=", grantId)
      .executeTakeFirstOrThrow();
    await recordAudit(db, [
      {
        orgId: grant.org_id,
        projectId: grant.project_id,
        at,
        actor: "actor" in by ? by.actor : viaMcpClient(`user:${grant.email}`, grant.client_name),
        action: "app.revoked",
        target: auditTarget(grant),
        before: grant.scope,
        after: "revoked",
      },
    ]);
    return true;
  }

  async touch(grantId: string, at: string): Promise<void> {
    await this.db.updateTable("oauth_grants").set({ last_used_at: at }).where("id", "=", grantId).execute();
  }

  /** Live grants of a person, or of an organization (its owners' view), newest first. */
  async list(filter: { userId: string } | { orgId: string }): Promise<GrantView[]> {
    let query = this.db
      .selectFrom("oauth_grants as g")
      .innerJoin("projects as p", "p.id", "g.project_id")
      .innerJoin("users as u", "u.id", "g.user_id")
      .select([
        "g.id",
        "g.client_id",
        "g.client_name",
        "u.email as user_email",
        "g.org_id",
        "g.project_id",
        "p.name as project_name",
        "g.scope",
        "g.created_at",
        "g.last_used_at",
      ])
      .where("g.revoked_at", "is", null);
    query =
      "userId" in filter ? query.where("g.user_id", "=", filter.userId) : query.where("g.org_id", "=", filter.orgId);
    return (await query.orderBy("g.created_at", "desc").orderBy("g.id").limit(500).execute()) as GrantView[];
  }
}
