// The client benches' PostgreSQL: a database of their own beside the one named, dropped after.
import pg from "pg";

export const POSTGRES_URL =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** A fresh database named `prefix_<time>`, dropped after `work`; undefined when PostgreSQL is unreachable. */
export async function withPostgres(prefix, work) {
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch {
    return undefined;
  }
  const name = `${prefix}_${Date.now()}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  try {
    return await work(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}
