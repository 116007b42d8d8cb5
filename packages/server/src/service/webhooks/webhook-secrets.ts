import type { Kysely } from "kysely";
import { isSealed, type SecretBox, SecretUnreadable } from "../../secrets/secret-box.js";
import type { Database } from "../../store/schema.js";

/** What seals a webhook endpoint's signing secret: it opens only in that endpoint's row. */
export const webhookContext = (endpointId: string): string => `webhook:${endpointId}`;

/** Why an endpoint's secret cannot sign, in words an operator can act on; never a part of the secret. */
export function unreadableReason(error: SecretUnreadable): string {
  return error.reason === "other-key"
    ? `its signing secret was encrypted with another secret key (key id ${error.keyId}); rotate the secret`
    : "its signing secret does not open with its key (altered, or copied from another endpoint); rotate the secret";
}

/**
 * Webhook signing secrets under the server's secret key. Every place that writes a secret (create,
 * rotate) seals it here, and every place that signs opens it here.
 */
export class WebhookSecrets {
  constructor(private readonly box: SecretBox) {}

  seal(endpointId: string, plain: string): string {
    return this.box.encrypt(plain, webhookContext(endpointId));
  }

  /**
   * The secret to sign with. A value not yet sealed is a secret written before this version (or by an older
   * instance during a rolling upgrade): the start-up step seals it, and meanwhile it still signs.
   * Throws {@link SecretUnreadable} for a sealed one this key cannot open.
   */
  open(endpointId: string, stored: string): string {
    if (!isSealed(stored)) return stored;
    return this.box.decrypt(stored, webhookContext(endpointId));
  }

  /** Why the stored secret cannot sign, or null when it can. */
  problem(endpointId: string, stored: string): string | null {
    try {
      this.open(endpointId, stored);
      return null;
    } catch (error) {
      if (error instanceof SecretUnreadable) return unreadableReason(error);
      throw error;
    }
  }
}

/**
 * The start-up step that encrypts secrets stored in the clear (those written before secrets were sealed).
 * It runs right after the key is proven (openSecrets), since no migration can know the key. Each row is
 * updated only while it still holds the plain value that was read, so instances starting at once seal each
 * secret once and never seal a sealed one; running it again changes nothing. Returns how many it sealed.
 */
export async function sealPlainWebhookSecrets(db: Kysely<Database>, box: SecretBox): Promise<number> {
  const secrets = new WebhookSecrets(box);
  const rows = await db
    .selectFrom("webhook_endpoints")
    .select(["id", "secret"])
    .where("secret", "not like", "enc:v1:%")
    .execute();
  let sealed = 0;
  for (const row of rows) {
    const result = await db
      .updateTable("webhook_endpoints")
      .set({ secret: secrets.seal(row.id, row.secret) })
      .where("id", "=", row.id)
      .where("secret", "=", row.secret)
      .executeTakeFirst();
    sealed += Number(result.numUpdatedRows);
  }
  return sealed;
}

export interface UnreadableEndpoint {
  id: string;
  project_id: string;
  url: string;
  reason: string;
}

/** Every endpoint whose secret this key cannot open: after a restore under another key, those to rotate. */
export async function unreadableWebhookSecrets(db: Kysely<Database>, box: SecretBox): Promise<UnreadableEndpoint[]> {
  const secrets = new WebhookSecrets(box);
  const rows = await db
    .selectFrom("webhook_endpoints")
    .select(["id", "project_id", "url", "secret"])
    .orderBy("project_id")
    .orderBy("id")
    .execute();
  const found: UnreadableEndpoint[] = [];
  for (const row of rows) {
    const reason = secrets.problem(row.id, row.secret);
    if (reason !== null) found.push({ id: row.id, project_id: row.project_id, url: row.url, reason });
  }
  return found;
}
