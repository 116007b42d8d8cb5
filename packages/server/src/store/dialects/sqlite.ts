import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { type SqliteDatabase, SqliteDialect, type SqliteStatement, sql } from "kysely";
import { LRUCache } from "lru-cache";
import type { DatabaseHealth } from "../health.js";
import { type DialectOperations, POSITION, positioned } from "./operations.js";
import { sqliteChannel } from "./sqlite-channel.js";
import { checkpointOffTheLoop } from "./sqlite-checkpoints.js";

/**
 * Kysely's SQLite driver prepares every statement anew; our queries come from a fixed set of shapes, so
 * their prepared statements are kept and reused instead of being prepared on every call.
 * Safe because the driver runs one statement at a time on its single connection.
 */
function withStatementCache(database: SQLite.Database, beforeClose: () => void): SqliteDatabase {
  const statements = new LRUCache<string, SqliteStatement>({ max: 500 });
  return {
    close: () => {
      beforeClose();
      database.close();
    },
    prepare(sql) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = database.prepare(sql) as unknown as SqliteStatement;
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

/** Kysely's dialect and the connection under it (compiled-queries.ts reads on it directly). */
export function sqliteDialect(
  path: string,
  { checkpointOffTheLoop: offTheLoop = false }: { checkpointOffTheLoop?: boolean } = {},
): { dialect: SqliteDialect; database: SQLite.Database } {
  if (path !== ":memory:" && !path.startsWith("file:")) mkdirSync(dirname(path), { recursive: true });
  const database = new SQLite(path);
  // WAL: readers never wait for the writer, and a killed process loses no committed transaction.
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = NORMAL");
  database.pragma("foreign_keys = ON");
  // The CLI and a running server may share the file.
  database.pragma("busy_timeout = 5000");
  // An in-memory database has no file for another connection to checkpoint.
  const inMemory = path === ":memory:" || path.includes("mode=memory");
  const stopCheckpoints = offTheLoop && !inMemory ? checkpointOffTheLoop(database, path) : () => {};
  return { dialect: new SqliteDialect({ database: withStatementCache(database, stopCheckpoints) }), database };
}

/** Opening SQLite writes at once (WAL mode): a read-only or full disk fails here, as the fault it is. */
function opening<T>(health: DatabaseHealth, open: () => T): T {
  try {
    return open();
  } catch (error) {
    throw health.failed(error);
  }
}

/** One file, one connection, one writer at a time. */
export const sqliteOperations: DialectOperations = {
  name: "sqlite",
  exists: (path) => existsSync(path),
  // SQLite walks the primary key (project, prompt, name), so the object comes in name order.
  labelColumns: () => ({
    labels: sql<string>`(select json_group_object(l.name, l.version)
      from prompt_labels l where l.project_id = p.project_id and l.prompt_id = p.id)`,
    rollouts: sql<string>`(select json_group_object(r.label, json_array(r.candidate, r.percent))
      from rollouts r where r.project_id = p.project_id and r.prompt_id = p.id)`,
  }),
  open(location, options, health) {
    const { dialect, database } = opening(health, () =>
      sqliteDialect(location, { checkpointOffTheLoop: options.checkpointOffTheLoop }),
    );
    return {
      driver: dialect,
      direct: database,
      channel: (db) => sqliteChannel(db),
      poolUsage: () => ({ max: 1, open: 1 }),
    };
  },
  // One writer at a time holds the whole database until it commits: events are already in commit order.
  lockEvents: async () => {},
  async deleteUnlistedCases(db, datasetId) {
    await db
      .deleteFrom("dataset_cases")
      .where("dataset_id", "=", datasetId)
      .where("case_id", "not in", (eb) =>
        eb.selectFrom("dataset_version_cases").select("case_id").where("dataset_id", "=", datasetId),
      )
      .execute();
  },
  // In WAL mode a read transaction sees the database as of its first read, while the server goes on writing.
  snapshot: (db, work) => db.transaction().execute(work),
  async tablePage(db, table, after, limit) {
    const { rows } = await sql<Record<string, unknown>>`select rowid as ${sql.ref(POSITION)}, * from ${sql.table(table)}
      where rowid > ${after === undefined ? 0 : Number(after)} order by rowid limit ${limit}`.execute(db);
    return positioned(rows);
  },
  async readSequences(db, tables) {
    const sequences: Record<string, number> = {};
    const rows = await sql<{ name: string; seq: number }>`select name, seq from sqlite_sequence`.execute(db);
    for (const row of rows.rows) if (tables.includes(row.name)) sequences[row.name] = Number(row.seq);
    return sequences;
  },
  async restoreSequence(db, table, value) {
    const updated = await sql`update sqlite_sequence set seq = ${value} where name = ${table}`.execute(db);
    if (Number(updated.numAffectedRows ?? 0) === 0) {
      await sql`insert into sqlite_sequence (name, seq) values (${table}, ${value})`.execute(db);
    }
  },
  // The SQLite store never runs ANALYZE, so its planner works from the schema alone, before and after a restore:
  // statistics gathered once would make its plans depend on when that was.
  refreshStatistics: async () => {},
  sharedCounters: () => undefined,
};
