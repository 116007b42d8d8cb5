import { type Kysely, sql } from "kysely";
import type { ChangeChannel } from "../change-channel.js";
import type { Database } from "../schema.js";

/** How often a server on SQLite looks for another process's writes (the CLI's) unless told. */
export const SQLITE_POLL_MS = 250;

/**
 * One SQLite file has one server, but the CLI may write to it too (a deletion, a revocation). There is
 * nothing to announce to and nobody to wait for; instead, the server asks SQLite every `pollMs` whether
 * another connection committed since it last asked (`PRAGMA data_version`, answered from memory on the
 * server's own connection) and, if one did, delivers a reset: every cache drops what it holds and every
 * event stream reads what it missed.
 */
export function sqliteChannel(db: Kysely<Database>, options: { pollMs?: number } = {}): ChangeChannel {
  const pollMs = options.pollMs ?? SQLITE_POLL_MS;
  return {
    announce: async () => undefined,
    async listen(deliver, onError) {
      let seen = await dataVersion(db);
      let asking = false;
      const timer = setInterval(() => {
        if (asking) return;
        asking = true;
        dataVersion(db)
          .then((now) => {
            if (now === seen) return;
            seen = now;
            deliver({ kind: "reset" });
          })
          .catch(onError)
          .finally(() => {
            asking = false;
          });
      }, pollMs);
      timer.unref();
      return async () => clearInterval(timer);
    },
    close: async () => {},
  };
}

async function dataVersion(db: Kysely<Database>): Promise<number> {
  const result = await sql<{ data_version: number }>`pragma data_version`.execute(db);
  return Number(result.rows[0]?.data_version);
}
