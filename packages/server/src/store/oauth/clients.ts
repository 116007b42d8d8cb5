import type { Kysely } from "kysely";
import { now } from "../ids.js";
import type { Database, OAuthClientsTable } from "../schema.js";

export interface OAuthClient {
  id: string;
  kind: OAuthClientsTable["kind"];
  name: string;
  redirectUris: string[];
  metadata: Record<string, unknown>;
  createdAt: string;
  /** When a document's cached copy must be fetched again; null for a registered client. */
  expiresAt: string | null;
}

const toClient = (row: OAuthClientsTable): OAuthClient => ({
  id: row.id,
  kind: row.kind,
  name: row.name,
  redirectUris: JSON.parse(row.redirect_uris) as string[],
  metadata: JSON.parse(row.metadata) as Record<string, unknown>,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

/** OAuth clients: registered ones (RFC 7591) and the cached metadata documents of URL client ids. */
export class OAuthClientStore {
  constructor(private readonly db: Kysely<Database>) {}

  async find(id: string): Promise<OAuthClient | undefined> {
    const row = await this.db.selectFrom("oauth_clients").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toClient(row);
  }

  async register(client: Pick<OAuthClient, "id" | "name" | "redirectUris" | "metadata">): Promise<OAuthClient> {
    const row: OAuthClientsTable = {
      id: client.id,
      kind: "registered",
      name: client.name,
      redirect_uris: JSON.stringify(client.redirectUris),
      metadata: JSON.stringify(client.metadata),
      created_at: now(),
      expires_at: null,
    };
    await this.db.insertInto("oauth_clients").values(row).execute();
    return toClient(row);
  }

  /** Keeps a fetched document until `expiresAt`, replacing an older copy. */
  async cacheDocument(
    client: Pick<OAuthClient, "id" | "name" | "redirectUris" | "metadata">,
    expiresAt: string,
  ): Promise<OAuthClient> {
    const row: OAuthClientsTable = {
      id: client.id,
      kind: "document",
      name: client.name,
      redirect_uris: JSON.stringify(client.redirectUris),
      metadata: JSON.stringify(client.metadata),
      created_at: now(),
      expires_at: expiresAt,
    };
    await this.db
      .insertInto("oauth_clients")
      .values(row)
      .onConflict((oc) =>
        oc.column("id").doUpdateSet({
          name: row.name,
          redirect_uris: row.redirect_uris,
          metadata: row.metadata,
          expires_at: row.expires_at,
        }),
      )
      .execute();
    return toClient(row);
  }
}
