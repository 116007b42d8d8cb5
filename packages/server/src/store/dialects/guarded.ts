import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from "kysely";
import { DatabaseUnavailable } from "../faults.js";
import type { DatabaseHealth } from "../health.js";

/**
 * How a dialect finds out whether a transaction committed when its connection was lost during COMMIT: the
 * server may have committed it and died before saying so. Without this such a write would be reported
 * failed although it stands.
 */
export interface CommitCheck {
  /** Runs on the transaction's connection just before COMMIT; names the transaction, if it wrote anything. */
  before(connection: DatabaseConnection): Promise<string | undefined>;
  /** Whether the named transaction committed: true, false, or undefined when that cannot be known yet. */
  outcome(token: string): Promise<boolean | undefined>;
}

const COMMIT_UNKNOWN =
  "database: the connection was lost while committing; the change may have been saved: read it before retrying";

/**
 * The dialect with every call to the database passing through `health`: a fault (connection lost, disk
 * full, read-only, …) leaves as a DatabaseUnavailable, which every surface answers 503, and marks an
 * outage; any success ends it. One place for both dialects, so no repository needs to know. (Savepoints,
 * which nothing here uses, are not passed on: Kysely then refuses them plainly.)
 */
export function guardedDialect(dialect: Dialect, health: DatabaseHealth, commitCheck?: CommitCheck): Dialect {
  return {
    createDriver: () => guardedDriver(dialect.createDriver(), health, commitCheck),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}

class GuardedConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly health: DatabaseHealth,
  ) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.health.guard(this.inner.executeQuery<R>(query));
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

function guardedDriver(driver: Driver, health: DatabaseHealth, commitCheck: CommitCheck | undefined): Driver {
  // Kysely hands back the connection it was given; the driver below needs its own.
  const wrapped = new WeakMap<DatabaseConnection, GuardedConnection>();
  const inner = (connection: DatabaseConnection) => (connection as GuardedConnection).inner;
  /** Connections whose COMMIT just failed: Kysely rolls back next, and the error to report is the commit's. */
  const commitFailed = new WeakSet<DatabaseConnection>();
  return {
    init: () => health.guard(driver.init()),
    async acquireConnection() {
      const connection = await health.guard(driver.acquireConnection());
      let guarded = wrapped.get(connection);
      if (!guarded) {
        guarded = new GuardedConnection(connection, health);
        wrapped.set(connection, guarded);
      }
      return guarded;
    },
    beginTransaction: (connection: DatabaseConnection, settings: TransactionSettings) =>
      health.guard(driver.beginTransaction(inner(connection), settings)),
    async commitTransaction(connection) {
      const token = commitCheck && (await health.guard(commitCheck.before(inner(connection))));
      try {
        await health.guard(driver.commitTransaction(inner(connection)));
      } catch (error) {
        commitFailed.add(connection);
        if (!(error instanceof DatabaseUnavailable) || !commitCheck || token === undefined) throw error;
        const committed = await commitCheck.outcome(token);
        if (committed === true) return;
        if (committed === false) throw error;
        throw new DatabaseUnavailable(COMMIT_UNKNOWN, "commit_unknown", error.cause);
      }
    },
    async rollbackTransaction(connection) {
      const afterCommit = commitFailed.delete(connection);
      try {
        await health.guard(driver.rollbackTransaction(inner(connection)));
      } catch (error) {
        // A failed COMMIT has ended its transaction (SQLite rolls back a COMMIT that found the disk full),
        // and a connection that is gone took its transaction with it: nothing is left to roll back, and the
        // error that led here (Kysely throws it after this) is the one to report.
        if (!afterCommit && !(error instanceof DatabaseUnavailable)) throw error;
      }
    },
    releaseConnection: (connection) => driver.releaseConnection(inner(connection)),
    destroy: () => driver.destroy(),
  };
}
