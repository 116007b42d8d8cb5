import { Kysely, Migrator } from "kysely";
import type { ChangeChannel } from "./change-channel.js";
import { CompiledQueries } from "./compiled-queries.js";
import type { DialectName } from "./dialect-name.js";
import { guardedDialect } from "./dialects/guarded.js";
import type { DialectOperations, OpenOptions, PoolUsage } from "./dialects/operations.js";
import { postgresOperations } from "./dialects/postgres.js";
import { sqliteOperations } from "./dialects/sqlite.js";
import { EventStore } from "./events.js";
import { DatabaseUnavailable } from "./faults.js";
import { DatabaseHealth } from "./health.js";
import { migrationProvider } from "./migrations/index.js";
import type { Database } from "./schema.js";

export type { DialectName } from "./dialect-name.js";
export type { DialectOperations, PoolUsage } from "./dialects/operations.js";

export interface Store {
  readonly db: Kysely<Database>;
  /** Hot-path queries compiled once for this store's dialect. */
  readonly queries: CompiledQueries;
  /** Tells the other processes on this database what changed. */
  readonly channel: ChangeChannel;
  /** The change events log (events stream, webhooks). */
  readonly events: EventStore;
  readonly dialect: DialectName;
  /** What this store's database does its own way (locks, snapshots, sequences, shared counters). */
  readonly operations: DialectOperations;
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

const OPERATIONS: Record<DialectName, DialectOperations> = { sqlite: sqliteOperations, postgres: postgresOperations };

/** Whether the database a `DATABASE_URL` names is there: a SQLite file that is not would be created, empty. */
export function storeExists(databaseUrl: string | undefined): boolean {
  return OPERATIONS[dialectOf(databaseUrl)].exists(databaseUrl ?? DEFAULT_SQLITE_PATH);
}

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//***@");
}

export type StoreOptions = OpenOptions;

/** Opens the database a `DATABASE_URL` names and brings its schema up to date. */
export async function openStore(databaseUrl: string | undefined, options: StoreOptions = {}): Promise<Store> {
  const dialect = dialectOf(databaseUrl);
  const operations = OPERATIONS[dialect];
  const location = databaseUrl || DEFAULT_SQLITE_PATH;
  const health = new DatabaseHealth();
  const opened = operations.open(location, options, health);
  const db = new Kysely<Database>({ dialect: guardedDialect(opened.driver, health, opened.commitCheck) });
  const channel = opened.channel(db);
  const store: Store = {
    db,
    dialect,
    operations,
    queries: new CompiledQueries(operations, health, opened.direct),
    channel,
    events: new EventStore(db, operations),
    location: redact(location),
    health,
    poolUsage: () => opened.poolUsage(),
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
