import { CompiledQuery, PostgresDialect } from "kysely";
import pg from "pg";
import type { CommitCheck } from "./guarded.js";

/** How long taking a new connection may wait; past it the request gets its 503 rather than hanging. */
export const CONNECT_TIMEOUT_MS = 5_000;

/**
 * A pool whose connections' failures are caught. pg emits `error` on an idle pooled connection that the
 * server ends (a restart, pg_terminate_backend), and on a lent one that dies between two queries; with no
 * listener either takes the process down. The pool drops such a connection and opens a new one when next
 * asked; the failed query itself rejects and is answered as a fault, so nothing else needs doing here.
 */
export function resilientPool(url: string, max: number, onError: (error: Error) => void): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // The pool also re-emits an idle connection's error, which the connection's own listener has reported.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", onError));
  return pool;
}

/** How long a write whose COMMIT lost its connection waits to learn whether it committed. */
const COMMIT_OUTCOME_WAIT_MS = 3_000;

/**
 * Names the transaction by its id before COMMIT (one more round trip per transaction) and, when the
 * connection is lost during COMMIT, asks a new connection for that id's fate (txid_status, PostgreSQL 10+)
 * until the database answers or the wait is over.
 */
function commitCheck(pool: pg.Pool): CommitCheck {
  return {
    async before(connection) {
      // Null for a transaction that wrote nothing: its outcome does not matter.
      const { rows } = await connection.executeQuery<{ xid: string | null }>(
        CompiledQuery.raw("select txid_current_if_assigned()::text as xid"),
      );
      return rows[0]?.xid ?? undefined;
    },
    async outcome(xid) {
      const deadline = Date.now() + COMMIT_OUTCOME_WAIT_MS;
      while (Date.now() < deadline) {
        try {
          const { rows } = await pool.query<{ status: string | null }>("select txid_status($1::bigint) as status", [
            xid,
          ]);
          const status = rows[0]?.status;
          if (status === "committed") return true;
          if (status === "aborted") return false;
        } catch {
          // Not back yet.
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      return undefined;
    },
  };
}

/** The dialect, its pool (whose use the metrics report) and how it learns the fate of an interrupted COMMIT. */
export function postgresDialect(
  url: string,
  poolSize: number,
  onError: (error: Error) => void,
): { dialect: PostgresDialect; pool: pg.Pool; commitCheck: CommitCheck } {
  const pool = resilientPool(url, poolSize, onError);
  return { dialect: new PostgresDialect({ pool }), pool, commitCheck: commitCheck(pool) };
}
