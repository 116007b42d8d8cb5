import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kysely } from "kysely";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sqliteDialect } from "../../src/store/dialects/sqlite.js";

/** 2 000 rows of 4 KB: about 2 000 pages of WAL, twice what makes SQLite checkpoint inside a COMMIT. */
function writePages(database: ReturnType<typeof sqliteDialect>["database"]) {
  database.exec("create table filler (n integer primary key, body blob)");
  const insert = database.prepare("insert into filler (body) values (?)");
  database.transaction(() => {
    for (let n = 0; n < 2000; n++) insert.run(Buffer.alloc(4096, n % 251));
  })();
}

describe("SQLite's WAL checkpoints off the event loop (the server's store)", () => {
  const dirs: string[] = [];
  const open: Kysely<unknown>[] = [];
  afterEach(async () => {
    for (const db of open.splice(0)) await db.destroy();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function store(checkpointOffTheLoop: boolean) {
    const dir = mkdtempSync(join(tmpdir(), "promptstore-checkpoints-"));
    dirs.push(dir);
    const path = join(dir, "store.sqlite");
    const { dialect, database } = sqliteDialect(path, { checkpointOffTheLoop });
    open.push(new Kysely<unknown>({ dialect }));
    return { path, database };
  }

  it("the server's connection never checkpoints; the thread copies the WAL into the file", async () => {
    const { path, database } = store(true);
    expect(database.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    const before = statSync(path).size;
    writePages(database);
    // Only the checkpointer's thread puts the pages in the database file: they are 8 MB and more.
    await vi.waitFor(() => expect(statSync(path).size).toBeGreaterThan(before + 8_000_000), { timeout: 5000 });
    expect(database.prepare("select count(*) as n from filler").get()).toEqual({ n: 2000 });
  });

  it("without it (the CLI, the tests' stores), SQLite checkpoints as it always has", () => {
    const { database } = store(false);
    expect(database.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
  });

  it("an in-memory database has no thread and keeps SQLite's own setting", () => {
    const { dialect, database } = sqliteDialect(":memory:", { checkpointOffTheLoop: true });
    open.push(new Kysely<unknown>({ dialect }));
    expect(database.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
  });
});
