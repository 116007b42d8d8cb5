import { randomUUID } from "node:crypto";
import type { Change } from "@promptstore/core/change";
import { type Kysely, sql } from "kysely";
import pg from "pg";
import type { Database } from "./schema.js";

/**
 * Carries committed changes to the other processes on the same database, so that every instance's caches
 * drop what a write on any instance made stale.
 */
export interface ChangeChannel {
  /**
   * Announces a change as part of the transaction `db` is in: other instances hear it exactly when that
   * transaction commits, and never when it rolls back.
   */
  announce(db: Kysely<Database>, change: Change): Promise<void>;
  /** Delivers changes announced by other processes until the returned function is called. */
  listen(deliver: (change: Change) => void, onError: (error: unknown) => void): Promise<() => Promise<void>>;
}

/** One SQLite file, one server: nothing to tell. */
export const localChannel: ChangeChannel = {
  announce: async () => {},
  listen: async () => async () => {},
};

const CHANNEL = "promptstore_changes";
const RECONNECT_MS = [100, 500, 1000, 2000, 5000];

/**
 * PostgreSQL LISTEN/NOTIFY: no extra service. The notification is sent inside the write's transaction, so
 * PostgreSQL delivers it to every listener at commit, before the writer has even answered its client; a
 * read that client then sends to another instance finds that instance already told.
 */
export function postgresChannel(url: string): ChangeChannel {
  const origin = randomUUID();
  return {
    async announce(db, change) {
      await sql`select pg_notify(${CHANNEL}, ${JSON.stringify({ origin, change })})`.execute(db);
    },

    async listen(deliver, onError) {
      let client: pg.Client | undefined;
      let stopped = false;
      let attempt = 0;

      const connect = async (): Promise<void> => {
        const next = new pg.Client({ connectionString: url });
        next.on("notification", (message) => {
          try {
            const payload = JSON.parse(message.payload ?? "{}") as { origin?: string; change?: Change };
            if (payload.origin !== origin && payload.change) deliver(payload.change);
          } catch (error) {
            onError(error);
          }
        });
        next.on("error", (error) => {
          onError(error);
          void reconnect();
        });
        await next.connect();
        await next.query(`LISTEN ${CHANNEL}`);
        client = next;
        attempt = 0;
      };

      const reconnect = async (): Promise<void> => {
        const old = client;
        client = undefined;
        old?.end().catch(() => {});
        while (!stopped && !client) {
          await new Promise((r) => setTimeout(r, RECONNECT_MS[Math.min(attempt++, RECONNECT_MS.length - 1)]));
          try {
            await connect();
            // Whatever was announced while we were away is lost: treat every cache as stale.
            deliver({ kind: "reset" });
          } catch (error) {
            onError(error);
          }
        }
      };

      await connect();
      return async () => {
        stopped = true;
        await client?.end().catch(() => {});
      };
    },
  };
}
