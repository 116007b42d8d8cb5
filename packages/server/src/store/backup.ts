import { once } from "node:events";
import { createReadStream, createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { createInterface } from "node:readline";
import { type Kysely, sql, type Transaction } from "kysely";
import type { Store } from "./index.js";
import { migrationProvider } from "./migrations/index.js";
import type { Database } from "./schema.js";

export const BACKUP_FORMAT = "promptstore-backup";
export const BACKUP_VERSION = 1;
/** Rows read at a time: a section may hold 100 000 characters (more if the limit grows), so few rows a page. */
const BACKUP_PAGE_ROWS = 64;
const RESTORE_BATCH_ROWS = 64;

/**
 * The order tables are written and restored in: every table after those it refers to. Tables this list does
 * not know (added by a later migration) follow, by name.
 */
const TABLE_ORDER = [
  "organizations",
  "projects",
  "api_keys",
  "prompts",
  "versions",
  "version_sections",
  "version_tools",
  "version_includes",
  "users",
  "memberships",
  "sessions",
  "events",
  "event_horizon",
  "webhook_endpoints",
  "webhook_deliveries",
  "audit_log",
  "prompt_labels",
  "rollouts",
  "label_settings",
  "release_requests",
  "model_connections",
  "prompt_examples",
  "example_results",
  "datasets",
  "dataset_versions",
  "dataset_cases",
  "dataset_version_cases",
  "evaluations",
  "evaluation_answers",
  "evaluation_verdicts",
  "evaluation_errors",
  "evaluation_defaults",
];
/**
 * Left out: the rate limiter's counters (they mean nothing on another day), and the secret key's check
 * (a backup restored under another key must start, and say which secrets need rotating).
 */
const LEFT_OUT = new Set(["rate_limits", "secret_key_check"]);
/** Rows every migrated store has (not the user's data): present in an empty store, replaced by a restore. */
const SEEDED = new Set(["event_horizon"]);

export interface BackupHeader {
  format: typeof BACKUP_FORMAT;
  version: number;
  /** The dialect it was taken from; a backup restores into either. */
  source: "sqlite" | "postgres";
  /** The newest migration of the store it was taken from. */
  migration: string;
  created_at: string;
  /** Per table with generated ids, the highest id ever handed out, so restored ids are never reused. */
  sequences: Record<string, number>;
}

export interface BackupSummary {
  file: string;
  tables: Record<string, number>;
}

const any = (db: Kysely<Database> | Transaction<Database>) => db as unknown as Kysely<any>;

/** Every table of the store holding the user's data, each after those it refers to (also the fuzz's dump). */
export async function tablesOf(db: Kysely<Database>): Promise<string[]> {
  const names = (await db.introspection.getTables()).map((t) => t.name).filter((name) => !LEFT_OUT.has(name));
  const rank = (name: string) => {
    const at = TABLE_ORDER.indexOf(name);
    return at < 0 ? TABLE_ORDER.length : at;
  };
  return names.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

async function latestMigration(): Promise<string> {
  return Object.keys(await migrationProvider.getMigrations())
    .sort()
    .at(-1) as string;
}

/**
 * Writes every row of the store to `file` (JSON Lines) from one snapshot (the dialect's: a REPEATABLE READ
 * transaction on PostgreSQL, a read transaction in WAL mode on SQLite), while the server goes on writing. The file appears only once complete (written beside it, then renamed), readable by
 * its owner only: it holds key hashes, password hashes and webhook signing secrets.
 */
export async function backupStore(store: Store, file: string): Promise<BackupSummary> {
  const partial = `${file}.partial`;
  const out = createWriteStream(partial, { mode: 0o600 });
  const write = async (value: unknown) => {
    if (!out.write(`${JSON.stringify(value)}\n`)) await once(out, "drain");
  };
  const counts: Record<string, number> = {};
  try {
    const tables = await tablesOf(store.db);
    const migration = await latestMigration();
    await store.operations.snapshot(store.db, async (trx) => {
      // The snapshot starts with the first read: the sequences are read inside it too.
      const header: BackupHeader = {
        format: BACKUP_FORMAT,
        version: BACKUP_VERSION,
        source: store.dialect,
        migration,
        created_at: new Date().toISOString(),
        sequences: await store.operations.readSequences(trx, tables),
      };
      await write(header);
      for (const table of tables) {
        // Counted first (the file says how many rows follow), then read page by page in the same snapshot:
        // a table of any size passes through a few megabytes of memory.
        const counted = await any(trx)
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number | string>().as("n"))
          .executeTakeFirstOrThrow();
        const total = Number(counted.n);
        await write({ table, rows: total });
        let written = 0;
        let after: string | undefined;
        while (written < total) {
          const page = await store.operations.tablePage(trx, table, after, BACKUP_PAGE_ROWS);
          if (page.rows.length === 0) break;
          for (const row of page.rows) await write(row);
          written += page.rows.length;
          after = page.last;
        }
        if (written !== total) throw new Error(`${table}: counted ${total} rows but read ${written}`);
        counts[table] = total;
      }
    });
    await write({ end: true, tables: counts });
    out.end();
    await once(out, "close");
    await rename(partial, file);
  } catch (error) {
    out.destroy();
    await rm(partial, { force: true });
    throw error;
  }
  return { file, tables: counts };
}

/** What a restore found wrong with the file or the store; the message is for the operator. */
export class RestoreRefused extends Error {}

async function isEmpty(db: Kysely<Database>, tables: string[]): Promise<string | undefined> {
  for (const table of tables) {
    if (SEEDED.has(table)) continue;
    const found = await any(db).selectFrom(table).select(sql`1`.as("one")).limit(1).execute();
    if (found.length > 0) return table;
  }
  return undefined;
}

async function* lines(file: string): AsyncGenerator<unknown> {
  const input = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  let number = 0;
  for await (const line of input) {
    number++;
    if (line === "") continue;
    try {
      yield JSON.parse(line);
    } catch {
      throw new RestoreRefused(`${file}: line ${number} is not JSON; is this a promptstore backup?`);
    }
  }
}

/**
 * Loads a backup into the store in one transaction: all of it, or (on any error, a truncated file included)
 * nothing. The store must be empty unless `force`, which first deletes everything in it. The store's schema is
 * the current one (openStore migrated it); a backup from a newer promptstore is refused.
 */
export async function restoreStore(
  store: Store,
  file: string,
  options: { force?: boolean } = {},
): Promise<BackupSummary> {
  const tables = await tablesOf(store.db);
  const occupied = await isEmpty(store.db, tables);
  if (occupied && !options.force) {
    throw new RestoreRefused(
      `the store is not empty (table ${occupied} has rows); restore into an empty database, or pass --force to replace everything in it`,
    );
  }
  const reader = lines(file);
  const first = (await reader.next()).value as Partial<BackupHeader> | undefined;
  if (first?.format !== BACKUP_FORMAT) throw new RestoreRefused(`${file}: not a promptstore backup`);
  if (first.version !== BACKUP_VERSION) {
    throw new RestoreRefused(
      `${file}: backup format version ${first.version}; this promptstore reads ${BACKUP_VERSION}`,
    );
  }
  const latest = await latestMigration();
  if (typeof first.migration !== "string" || first.migration > latest) {
    throw new RestoreRefused(
      `${file}: taken from a newer promptstore (migration ${first.migration}; this one knows up to ${latest})`,
    );
  }
  const header = first as BackupHeader;
  const counts: Record<string, number> = {};

  const announced = await store.db.transaction().execute(async (trx) => {
    for (const table of [...tables].reverse()) await any(trx).deleteFrom(table).execute();
    let table: string | undefined;
    let expected = 0;
    let batch: Record<string, unknown>[] = [];
    const flush = async () => {
      if (!table || batch.length === 0) return;
      await any(trx).insertInto(table).values(batch).execute();
      batch = [];
    };
    let ended = false;
    for await (const item of reader) {
      const entry = item as Record<string, unknown>;
      if (ended) throw new RestoreRefused(`${file}: data after the end mark`);
      if (table !== undefined && (counts[table] ?? 0) < expected) {
        batch.push(entry);
        counts[table] = (counts[table] ?? 0) + 1;
        // SQLite allows 32 766 bound values per statement; and rows of sections may be large, so a batch is
        // also cut at RESTORE_BATCH_ROWS rows, which keeps a restore within the binary's heap.
        if (batch.length >= RESTORE_BATCH_ROWS || batch.length * Object.keys(entry).length >= 30_000) await flush();
        continue;
      }
      await flush();
      if (entry.end === true) {
        ended = true;
        continue;
      }
      if (typeof entry.table !== "string" || typeof entry.rows !== "number") {
        throw new RestoreRefused(`${file}: unexpected line ${JSON.stringify(entry).slice(0, 80)}`);
      }
      if (!tables.includes(entry.table)) throw new RestoreRefused(`${file}: table ${entry.table} is not in this store`);
      table = entry.table;
      expected = entry.rows;
      counts[table] = 0;
    }
    await flush();
    if (!ended || (table !== undefined && (counts[table] ?? 0) < expected)) {
      throw new RestoreRefused(`${file}: the backup is cut short (no end mark); nothing was restored`);
    }
    await restoreSequences(trx, store, header.sequences ?? {});
    // Every running server drops what it has cached of the old contents (heard at commit).
    return [
      await store.channel.announce(trx, { kind: "reset" }),
      await store.channel.announce(trx, { kind: "tenants" }),
    ];
  });
  await Promise.all(announced.map((announcement) => announcement?.delivered()));
  // The restore has committed: a failure here (the connection lost) must not report it as failed, and
  // autovacuum gathers the statistics later anyway.
  await store.operations.refreshStatistics(store.db, tables).catch(() => {});
  return { file, tables: counts };
}

async function restoreSequences(trx: Transaction<Database>, store: Store, sequences: Record<string, number>) {
  for (const [table, seq] of Object.entries(sequences)) {
    const max = await sql<{ max: string | number | null }>`select max(id) as max from ${sql.table(table)}`.execute(trx);
    const value = Math.max(seq, Number(max.rows[0]?.max ?? 0));
    await store.operations.restoreSequence(trx, table, value);
  }
}
