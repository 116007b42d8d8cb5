import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { type SqliteDatabase, SqliteDialect, type SqliteStatement } from "kysely";
import { LRUCache } from "lru-cache";

/**
 * Kysely's SQLite driver prepares every statement anew; our queries come from a fixed set of shapes, so
 * their prepared statements are kept and reused instead of being prepared on every call.
 * Safe because the driver runs one statement at a time on its single connection.
 */
function withStatementCache(database: SQLite.Database): SqliteDatabase {
  const statements = new LRUCache<string, SqliteStatement>({ max: 500 });
  return {
    close: () => database.close(),
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
export function sqliteDialect(path: string): { dialect: SqliteDialect; database: SQLite.Database } {
  if (path !== ":memory:" && !path.startsWith("file:")) mkdirSync(dirname(path), { recursive: true });
  const database = new SQLite(path);
  // WAL: readers never wait for the writer, and a killed process loses no committed transaction.
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = NORMAL");
  database.pragma("foreign_keys = ON");
  // The CLI and a running server may share the file.
  database.pragma("busy_timeout = 5000");
  return { dialect: new SqliteDialect({ database: withStatementCache(database) }), database };
}
