import pg from "pg";

/** 55006: the database (or a template being copied) is in use. */
const IN_USE = "55006";

/** Runs one statement on the admin database, again while the database it names is in use (for up to 2.5 s). */
export async function adminQuery(adminUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(statement);
        return;
      } catch (error) {
        if ((error as { code?: string }).code !== IN_USE || attempt >= 50) throw error;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  } finally {
    await client.end();
  }
}

/**
 * Drops a test database. pg's pool.end() resolves before its connections are gone; FORCE would kill them
 * mid-goodbye and their clients would raise errors nobody listens to. Wait for them instead, then force.
 */
export async function dropPostgresDatabase(adminUrl: string, name: string): Promise<void> {
  try {
    await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name}`);
  } catch (error) {
    if ((error as { code?: string }).code !== IN_USE) throw error;
    await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}
