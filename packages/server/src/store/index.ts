import { Kysely, Migrator } from "kysely";
import { type ChangeChannel, DEFAULT_INVALIDATION_TIMEOUT_MS } from "./change-channel.js";
import { CompiledQueries } from "./compiled-queries.js";
import type { DialectName } from "./dialect-name.js";
import { guardedDialect } from "./dialects/guarded.js";
import { postgresDialect } from "./dialects/postgres.js";
import { sqliteDialect } from "./dialects/sqlite.js";
import { EventStore } from "./events.js";
import { DatabaseUnavailable } from "./faults.js";
import { DatabaseHealth } from "./health.js";
import { migrationProvider } from "./migrations/index.js";
import { postgresChannel } from "./postgres-channel.js";
import type { Database } from "./schema.js";
import { sqliteChannel } from "./sqlite-channel.js";

export type { DialectName } from "./dialect-name.js";

export interface Store {
  readonly db: Kysely<Database>;
  /** Hot-path queries compiled once for this store's dialect. */
  readonly queries: CompiledQueries;
  /** Tells the other processes on this database what changed. */
  readonly channel: ChangeChannel;
  /** The change events log (events stream, webhooks). */
  readonly events: EventStore;
  readonly dialect: DialectName;
  /** A URL without credentials, for logs. */
  readonly location: string;
  /** Whether the database answers; its faults and recoveries, for the log and metrics. */
  readonly health: DatabaseHealth;
  /** The connections the store holds and how they are used, for the metrics. */
  poolUsage(): PoolUsage;
  close(): Promise<void>;
}

export const DEFAULT_SQLITE_PATH = "./data/promptstore.sqlite";

export function dialectOf(databaseUrl: string | undefined): DialectName {
  return databaseUrl !== undefined && /^postgres(ql)?:\/\//.test(databaseUrl) ? "postgres" : "sqlite";
}

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//***@");
}

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

export interface StoreOptions {
  poolSize?: number;
  /** How long a write waits for the other instances to drop what it made stale (PostgreSQL). */
  invalidationTimeoutMs?: number;
}

/** Opens the database a `DATABASE_URL` names and brings its schema up to date. */
export async function openStore(databaseUrl: string | undefined, options: StoreOptions = {}): Promise<Store> {
  const dialect = dialectOf(databaseUrl);
  const location = databaseUrl || DEFAULT_SQLITE_PATH;
  const health = new DatabaseHealth();
  // A pool on PostgreSQL; on SQLite the one connection, which the compiled queries also read on directly.
  const {
    dialect: driver,
    pool,
    database,
    commitCheck,
  } = dialect === "postgres"
    ? { ...postgresDialect(location, options.poolSize ?? 10, (error) => health.failed(error)), database: undefined }
    : { ...opening(health, () => sqliteDialect(location)), pool: undefined, commitCheck: undefined };
  const db = new Kysely<Database>({ dialect: guardedDialect(driver, health, commitCheck) });
  const channel =
    dialect === "postgres"
      ? postgresChannel(location, {
          timeoutMs: options.invalidationTimeoutMs ?? DEFAULT_INVALIDATION_TIMEOUT_MS,
          health,
        })
      : sqliteChannel(db);
  const store: Store = {
    db,
    dialect,
    queries: new CompiledQueries(health, database),
    channel,
    events: new EventStore(db, dialect),
    location: redact(location),
    health,
    poolUsage: () =>
      pool
        ? { max: pool.options.max, open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }
        : { max: 1, open: 1 },
    close: async () => {
      await channel.close();
      await db.destroy();
    },
  };
  try {
    await migrate(db);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

/** Opening SQLite writes at once (WAL mode): a read-only or full disk fails here, as the fault it is. */
function opening<T>(health: DatabaseHealth, open: () => T): T {
  try {
    return open();
  } catch (error) {
    throw health.failed(error);
  }
}

export async function migrate(db: Kysely<Database>): Promise<void> {
  const { error, results } = await new Migrator({ db, provider: migrationProvider }).migrateToLatest();
  if (error) {
    // An unreachable database is no failed migration: the caller may wait for it (serve does).
    if (error instanceof DatabaseUnavailable) throw error;
    const message = error instanceof Error ? error.message : String(error);
    const failed = results?.find((r) => r.status === "Error")?.migrationName;
    // No migration ran: opening the database itself failed.
    throw new Error(
      failed ? `database migration ${failed} failed: ${message}` : `cannot open the database: ${message}`,
    );
  }
}
