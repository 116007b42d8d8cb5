/**
 * The one suite runs over every database the machine has: SQLite always, PostgreSQL when
 * TEST_DATABASE_URL points at a server (CI sets it). Each test gets a fresh, empty database.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { type DialectName, openStore, type Store } from "../../src/store/index.js";

export interface TestDatabase {
  name: DialectName;
  /** A DATABASE_URL for a new, empty database, and how to drop it. */
  create(): Promise<{ url: string; drop(): Promise<void> }>;
}

const sqlite: TestDatabase = {
  name: "sqlite",
  async create() {
    const dir = mkdtempSync(join(tmpdir(), "promptstore-test-"));
    return { url: join(dir, "test.sqlite"), drop: async () => rmSync(dir, { recursive: true, force: true }) };
  },
};

function postgres(adminUrl: string): TestDatabase {
  return {
    name: "postgres",
    async create() {
      const name = `promptstore_test_${randomBytes(6).toString("hex")}`;
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      return {
        url: url.toString(),
        async drop() {
          const client = new pg.Client({ connectionString: adminUrl });
          await client.connect();
          try {
            // pg's pool.end() resolves before its connections are gone; FORCE would kill them mid-goodbye
            // and their clients would raise errors nobody listens to. Wait for them instead, then force.
            for (let attempt = 0; attempt < 50; attempt++) {
              try {
                await client.query(`DROP DATABASE IF EXISTS ${name}`);
                return;
              } catch (error) {
                if ((error as { code?: string }).code !== "55006") throw error; // 55006: database in use
                await new Promise((r) => setTimeout(r, 50));
              }
            }
            await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
          } finally {
            await client.end();
          }
        },
      };
    },
  };
}

const postgresUrl = process.env.TEST_DATABASE_URL;
if (!postgresUrl) {
  console.warn("TEST_DATABASE_URL is not set: the PostgreSQL half of the suite is skipped (set it to run it).");
}

export const DATABASES: TestDatabase[] = postgresUrl ? [sqlite, postgres(postgresUrl)] : [sqlite];

/** Opens a store on a fresh database; `close` closes and drops it. */
export async function freshStore(
  database: TestDatabase,
): Promise<{ store: Store; url: string; close(): Promise<void> }> {
  const { url, drop } = await database.create();
  const store = await openStore(url, { poolSize: 20 });
  return {
    store,
    url,
    async close() {
      await store.close();
      await drop();
    },
  };
}
