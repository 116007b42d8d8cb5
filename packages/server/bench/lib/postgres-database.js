// A PostgreSQL database of its own for one bench run, made beside the one the URL names and dropped after.
import pg from "pg";

/** Creates a fresh, uniquely named database on the server of `adminUrl`; `drop()` removes it, connections and all. */
export async function postgresDatabase(adminUrl, prefix = "promptstore_bench") {
  const name = `${prefix}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    /** Gathers the planner's statistics, as autovacuum does on a live database after a bulk load. */
    async analyze() {
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      try {
        await c.query("ANALYZE");
      } finally {
        await c.end();
      }
    },
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
