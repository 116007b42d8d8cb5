import { PostgresDialect } from "kysely";
import pg from "pg";

/** The dialect and its pool, whose use the metrics report. */
export function postgresDialect(url: string, poolSize: number): { dialect: PostgresDialect; pool: pg.Pool } {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  return { dialect: new PostgresDialect({ pool }), pool };
}
