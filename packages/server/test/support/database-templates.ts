/**
 * vitest globalSetup: one migrated database of each kind per run, which every `freshStore` copies instead of
 * migrating a new one. A PostgreSQL database is made with `CREATE DATABASE … TEMPLATE` (about 150 ms) instead
 * of being made empty and migrated (about 450 ms more, for each of about a thousand PostgreSQL tests); a SQLite
 * file is copied. Tests of the migrations themselves still start from `database.create()`: an empty database.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { openStore } from "../../src/store/index.js";
import { dropPostgresDatabase } from "./postgres-admin.js";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), "promptstore-template-"));
  const sqlite = join(dir, "template.sqlite");
  await (await openStore(sqlite)).close();
  project.provide("sqliteTemplate", sqlite);

  const adminUrl = process.env.TEST_DATABASE_URL;
  let template: string | null = null;
  if (adminUrl) {
    template = `promptstore_template_${randomBytes(6).toString("hex")}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${template}`);
    await admin.end();
    const url = new URL(adminUrl);
    url.pathname = `/${template}`;
    await (await openStore(url.toString())).close();
  }
  project.provide("postgresTemplate", template);

  return async () => {
    rmSync(dir, { recursive: true, force: true });
    if (adminUrl && template) await dropPostgresDatabase(adminUrl, template);
  };
}
