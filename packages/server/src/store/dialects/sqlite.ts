import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { SqliteDialect } from "kysely";

export function sqliteDialect(path: string): SqliteDialect {
  if (path !== ":memory:" && !path.startsWith("file:")) mkdirSync(dirname(path), { recursive: true });
  const database = new SQLite(path);
  // WAL: readers never wait for the writer, and a killed process loses no committed transaction.
  database.pragma("journal_mode = WAL");
  database.pragma("synchronous = NORMAL");
  database.pragma("foreign_keys = ON");
  // The CLI and a running server may share the file.
  database.pragma("busy_timeout = 5000");
  return new SqliteDialect({ database });
}
