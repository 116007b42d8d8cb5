import { CompiledQuery, type Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { DEFAULT_INVALIDATION_TIMEOUT_MS } from "../change-channel.js";
import type { Database } from "../schema.js";
import type { CommitCheck } from "./guarded.js";
import { type DialectOperations, POSITION, positioned } from "./operations.js";
import { postgresChannel } from "./postgres-channel.js";

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

/** The name of `table`'s id sequence (bigserial), if it has an `id` column with one. */
async function serialSequence(db: Kysely<Database>, table: string): Promise<string | undefined> {
  const columns = await sql<{ n: number }>`
    select count(*)::int as n from information_schema.columns
    where table_schema = current_schema() and table_name = ${table} and column_name = 'id'`.execute(db);
  if (columns.rows[0]?.n !== 1) return undefined;
  const result = await sql<{ seq: string | null }>`select pg_get_serial_sequence(${table}, 'id') as seq`.execute(db);
  return result.rows[0]?.seq ?? undefined;
}

/** A pool of connections shared by every instance of a deployment. */
export const postgresOperations: DialectOperations = {
  name: "postgres",
  labelColumns: () => ({
    labels: sql<string>`(select coalesce(json_object_agg(l.name, l.version order by l.name)::text, '{}')
      from prompt_labels l where l.project_id = p.project_id and l.prompt_id = p.id)`,
    rollouts: sql<string>`(select coalesce(json_object_agg(r.label, json_build_array(r.candidate, r.percent))::text, '{}')
      from rollouts r where r.project_id = p.project_id and r.prompt_id = p.id)`,
  }),
  // Connecting never creates a database: one that is not there fails to open, saying so.
  exists: () => true,
  open(location, options, health) {
    const { dialect, pool, commitCheck } = postgresDialect(location, options.poolSize ?? 10, (error) =>
      health.failed(error),
    );
    return {
      driver: dialect,
      commitCheck,
      channel: () =>
        postgresChannel(location, {
          timeoutMs: options.invalidationTimeoutMs ?? DEFAULT_INVALIDATION_TIMEOUT_MS,
          health,
        }),
      poolUsage: () => ({
        max: pool.options.max,
        open: pool.totalCount,
        idle: pool.idleCount,
        waiting: pool.waitingCount,
      }),
    };
  },
  // Writers on other connections commit in any order: a transaction lock per project, held until commit,
  // queues the project's writers before they draw their ids.
  async deleteUnlistedCases(db, datasetId) {
    await db
      .deleteFrom("dataset_cases as c")
      .where("c.dataset_id", "=", datasetId)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom("dataset_version_cases as p")
              .select("p.position")
              .whereRef("p.dataset_id", "=", "c.dataset_id")
              .whereRef("p.case_id", "=", "c.case_id"),
          ),
        ),
      )
      .execute();
  },
  async lockEvents(db, projectId) {
    await sql`select pg_advisory_xact_lock(hashtext(${`promptstore events ${projectId}`}))`.execute(db);
  },
  // REPEATABLE READ: one snapshot, taken at the first read, for the whole transaction.
  snapshot: (db, work) =>
    db
      .transaction()
      .setIsolationLevel("repeatable read")
      .execute(async (trx) => {
        await sql`set transaction read only`.execute(trx);
        return work(trx);
      }),
  // A window of blocks at a time: a TID range scan yields rows in no order, so an unbounded `ctid > x order by
  // ctid limit n` read and sorted every row after x, and a backup of 500 000 section rows was quadratic (over
  // half an hour). Bounded, each page sorts at most `limit` blocks' rows; empty windows are stepped over.
  async tablePage(db, table, after, limit) {
    const size = await sql<{ blocks: string }>`
      select pg_relation_size(${table}::regclass) / current_setting('block_size')::bigint as blocks`.execute(db);
    const blocks = Number(size.rows[0]?.blocks ?? 0);
    let from = after ?? "(0,0)";
    for (let block = Number(/^\((\d+),/.exec(from)?.[1] ?? 0); block <= blocks; block += limit) {
      const { rows } = await sql<
        Record<string, unknown>
      >`select ctid::text as ${sql.ref(POSITION)}, * from ${sql.table(table)}
        where ctid > ${from}::tid and ctid < ${`(${block + limit},0)`}::tid order by ctid limit ${limit}`.execute(db);
      if (rows.length > 0) return positioned(rows);
      from = `(${block + limit},0)`;
    }
    return { rows: [], last: undefined };
  },
  async readSequences(db, tables) {
    const sequences: Record<string, number> = {};
    for (const table of tables) {
      const name = await serialSequence(db, table);
      if (!name) continue;
      const state = await sql<{ last_value: string; is_called: boolean }>`
        select last_value, is_called from ${sql.table(name)}`.execute(db);
      const row = state.rows[0];
      if (row) sequences[table] = row.is_called ? Number(row.last_value) : Number(row.last_value) - 1;
    }
    return sequences;
  },
  async restoreSequence(db, table, value) {
    const name = await serialSequence(db, table);
    if (name && value > 0) await sql`select setval(${name}, ${value}, true)`.execute(db);
  },
  // A restored table has no statistics until autovacuum gets to it (a minute or more): until then the planner
  // guesses its size, and may scan 100 000 prompts where an index would do. PostgreSQL's own restore
  // instructions say to ANALYZE after a restore.
  async refreshStatistics(db, tables) {
    if (tables.length > 0) await sql`analyze ${sql.join(tables.map((table) => sql.table(table)))}`.execute(db);
  },
  // While the database is away its counts fail, and the rate limiter's in-process stand-in answers: nothing
  // to report.
  sharedCounters: (url, max) => resilientPool(url, max, () => {}),
};
