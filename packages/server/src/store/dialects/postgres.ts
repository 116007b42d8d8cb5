import { PostgresDialect } from "kysely";
import pg from "pg";

export function postgresDialect(url: string, poolSize: number): PostgresDialect {
  return new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: poolSize }) });
}
