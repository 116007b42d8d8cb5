/**
 * The one suite runs over every database the machine has: SQLite always, PostgreSQL when
 * TEST_DATABASE_URL points at a server (CI sets it). Each test gets a fresh database: empty from `create()`,
 * migrated from `freshStore` (a copy of the run's migrated template, database-templates.ts, when there is one).
 */
import { randomBytes } from "node:crypto";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { type DialectName, openStore, type Store } from "../../src/store/index.js";
import { adminQuery, dropPostgresDatabase } from "./postgres-admin.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** A migrated SQLite file to copy. */
    sqliteTemplate: string;
    /** A migrated PostgreSQL database to make new ones from, when TEST_DATABASE_URL names a server. */
    postgresTemplate: string | null;
  }
}

export interface TestDatabase {
  name: DialectName;
  /**
   * A DATABASE_URL for a new database, and how to drop it: empty, or with `migrated` a copy of the run's
   * migrated template when the run has one (else empty too: opening it migrates it).
   */
  create(options?: { migrated?: boolean }): Promise<{ url: string; drop(): Promise<void> }>;
}

/** A value the run's globalSetup provided, or undefined in a run without it (the client's suite). */
function provided<K extends "sqliteTemplate" | "postgresTemplate">(key: K) {
  try {
    return inject(key) ?? undefined;
  } catch {
    return undefined;
  }
}

const sqlite: TestDatabase = {
  name: "sqlite",
  async create(options = {}) {
    const dir = mkdtempSync(join(tmpdir(), "promptstore-test-"));
    const url = join(dir, "test.sqlite");
    const template = options.migrated ? provided("sqliteTemplate") : undefined;
    if (template) copyFileSync(template, url);
    return { url, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  },
};

function postgres(adminUrl: string): TestDatabase {
  return {
    name: "postgres",
    async create(options = {}) {
      const name = `promptstore_test_${randomBytes(6).toString("hex")}`;
      const template = options.migrated ? provided("postgresTemplate") : undefined;
      // A template is copied only while no one is connected to it: adminQuery waits for its last goodbye.
      await adminQuery(adminUrl, `CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      return { url: url.toString(), drop: () => dropPostgresDatabase(adminUrl, name) };
    },
  };
}

const postgresUrl = process.env.TEST_DATABASE_URL;
if (!postgresUrl) {
  console.warn("TEST_DATABASE_URL is not set: the PostgreSQL half of the suite is skipped (set it to run it).");
}

export const DATABASES: TestDatabase[] = postgresUrl ? [sqlite, postgres(postgresUrl)] : [sqlite];

/** Opens a store on a fresh, migrated database; `close` closes and drops it. */
export async function freshStore(
  database: TestDatabase,
): Promise<{ store: Store; url: string; close(): Promise<void> }> {
  const { url, drop } = await database.create({ migrated: true });
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
