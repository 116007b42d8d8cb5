import type { Dialect, Kysely, RawBuilder } from "kysely";
import type pg from "pg";
import type { ChangeChannel } from "../change-channel.js";
import type { DialectName } from "../dialect-name.js";
import type { DatabaseHealth } from "../health.js";
import type { Database } from "../schema.js";
import type { CommitCheck } from "./guarded.js";

export interface PoolUsage {
  /** The most connections the pool may open (1 on SQLite: one connection, one statement at a time). */
  max: number;
  /** Connections open now. */
  open: number;
  /** Open and not lent out; undefined where the driver does not say (SQLite). */
  idle?: number;
  /** Queries waiting for a connection; undefined where the driver does not say (SQLite). */
  waiting?: number;
}

export interface OpenOptions {
  poolSize?: number;
  /** How long a write waits for the other instances to drop what it made stale (PostgreSQL). */
  invalidationTimeoutMs?: number;
  /** SQLite's WAL checkpoints run on a thread of their own, not in a COMMIT on the event loop (the server's). */
  checkpointOffTheLoop?: boolean;
}

/** SQLite's one connection, on which a compiled read runs at once when no transaction holds it. */
export interface DirectConnection {
  readonly inTransaction: boolean;
  prepare(sql: string): DirectStatement;
}

export interface DirectStatement {
  raw(toggle: boolean): DirectStatement;
  columns(): { name: string }[];
  all(parameters: unknown[]): unknown[][];
}

/** A database as a dialect opened it: what the store builds Kysely, its queries and its channel from. */
export interface OpenedDatabase {
  driver: Dialect;
  /** How an interrupted COMMIT's fate is learnt, where the dialect can (PostgreSQL). */
  commitCheck?: CommitCheck;
  /** The one connection the compiled queries may read on directly, where there is one (SQLite). */
  direct?: DirectConnection;
  /** Tells the other processes on this database what changed; built once Kysely is. */
  channel(db: Kysely<Database>): ChangeChannel;
  /** The connections held and how they are used, for the metrics. */
  poolUsage(): PoolUsage;
}

/**
 * Everything the store does differently on SQLite and on PostgreSQL, one implementation each
 * (`dialects/sqlite.ts`, `dialects/postgres.ts`). The code above calls these and never asks which database
 * it is on; a new difference is a new operation here, written once per dialect.
 */
export interface DialectOperations {
  readonly name: DialectName;
  /** Whether `location` holds a database already; opening one that does not may create it empty. */
  exists(location: string): boolean;
  open(location: string, options: OpenOptions, health: DatabaseHealth): OpenedDatabase;
  /**
   * Holds the project's events lock until the transaction `db` is in ends, taken before the events' ids are
   * drawn: no reader can then see id N+1 committed while N is still to come.
   */
  lockEvents(db: Kysely<Database>, projectId: string): Promise<void>;
  /** Runs `work` in a read transaction that sees one snapshot of the database while others go on writing. */
  snapshot<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T>;
  /**
   * Up to `limit` rows of `table` after the row at `after` (from the start when undefined), in the order
   * rows are stored, with the position of the last: a backup reads a table of any size page by page, each
   * page one short query in its snapshot (SQLite's rowid, PostgreSQL's ctid, both stable within it).
   */
  tablePage(
    db: Kysely<Database>,
    table: string,
    after: string | undefined,
    limit: number,
  ): Promise<{ rows: Record<string, unknown>[]; last: string | undefined }>;
  /** The highest id each id sequence among `tables` has handed out, read in the transaction `db` is in. */
  readSequences(db: Kysely<Database>, tables: string[]): Promise<Record<string, number>>;
  /** Sets `table`'s id sequence to `value`: the next id it hands out is above it. */
  restoreSequence(db: Kysely<Database>, table: string, value: number): Promise<void>;
  /** Gives the planner statistics for `tables`, just filled by a restore, before the first query is planned. */
  refreshStatistics(db: Kysely<Database>, tables: string[]): Promise<void>;
  /**
   * Connections to count rate limits on, shared by every instance of the deployment; undefined where the
   * database has one server anyway (SQLite), whose limits are then kept in its process.
   */
  sharedCounters(url: string, max: number): pg.Pool | undefined;
  /**
   * A read's prompt row also carries its labels and rollouts, as JSON objects built by the database in the
   * same statement (correlated subqueries on their primary keys: nearly free when a prompt has none), so the
   * read path stays one query. `p` is the prompts table's alias. Labels come as `{name: hash}` in name order,
   * rollouts as `{label: [candidate, percent]}`; both `{}` when there are none.
   */
  labelColumns(): LabelColumns;
  /**
   * Deletes the dataset's case bodies that no version or stage lists (dataset_version_cases has no index by
   * case id): an anti-join that costs a sort or a hash of the dataset's rows, never one scan per body. SQLite
   * builds the list of listed ids once (NOT IN); PostgreSQL hashes it (NOT EXISTS), where NOT IN would scan
   * the list once per body as soon as it no longer fits in work_mem.
   */
  deleteUnlistedCases(db: Kysely<Database>, datasetId: string): Promise<void>;
}

/** The columns of DialectOperations.labelColumns, each a JSON object as text. */
export interface LabelColumns {
  labels: RawBuilder<string>;
  rollouts: RawBuilder<string>;
}

/** The rows of a page with the position column taken off, and the position of its last row. */
export function positioned(rows: Record<string, unknown>[]): {
  rows: Record<string, unknown>[];
  last: string | undefined;
} {
  let last: string | undefined;
  for (const row of rows) {
    last = String(row[POSITION]);
    delete row[POSITION];
  }
  return { rows, last };
}

/** The column a table page reads its rows' positions into; no table of ours has it. */
export const POSITION = "__position";
