import { type Kysely, sql } from "kysely";
import type { Database } from "./schema.js";

/** The rows the store locks, each by its key. */
interface Lockable {
  prompts: { project_id: string; id: string };
  projects: { id: string };
  datasets: { id: string };
  evaluations: { id: string };
}

/**
 * Takes a row's write lock for the rest of the transaction `db` is in. The one way the store locks a row:
 * an UPDATE that sets a column to itself, taken before the transaction reads what it decides on.
 *
 * SQLite has no SELECT … FOR UPDATE, and needs none: a transaction holds the whole database for writing
 * from its first write until it ends (and the server's one connection runs one transaction at a time).
 * On PostgreSQL an UPDATE locks the row until the transaction ends; a concurrent writer of the row waits,
 * then reads it as committed (READ COMMITTED). One statement thus serializes the row's writers on both
 * databases, as the conditional UPDATEs of a project's prompt count already do. Unlike FOR UPDATE, the
 * UPDATE's lock (FOR NO KEY UPDATE) does not hold up inserts of rows that refer to the locked one, whose
 * foreign-key checks only share its key. A row that is not there matches nothing: nothing to wait for.
 */
export async function lockRow<T extends keyof Lockable>(db: Kysely<Database>, table: T, key: Lockable[T]) {
  const matches = Object.entries(key).map(([column, value]) => sql`${sql.ref(column)} = ${value}`);
  await sql`update ${sql.table(table)} set created_at = created_at where ${sql.join(matches, sql` and `)}`.execute(db);
}
