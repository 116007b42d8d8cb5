import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config.js";
import { type App, buildApp } from "../../src/http/app.js";
import { openStore } from "../../src/store/index.js";
import { cli } from "../support/binary.js";
import { DATABASES, freshStore, type TestDatabase } from "../support/databases.js";

interface Dump {
  header: Record<string, any>;
  tables: Record<string, Record<string, unknown>[]>;
  end: Record<string, any> | undefined;
}

function readDump(file: string): Dump {
  const lines = readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  const dump: Dump = { header: lines[0], tables: {}, end: undefined };
  let table = "";
  for (const line of lines.slice(1)) {
    if (line.end === true) dump.end = line;
    else if (typeof line.table === "string" && typeof line.rows === "number" && Object.keys(line).length === 2) {
      table = line.table;
      dump.tables[table] = [];
    } else dump.tables[table]!.push(line);
  }
  return dump;
}

/** Rows in a stable order, digit strings as numbers (PostgreSQL gives bigints as strings), for comparing dumps. */
const normalized = (rows: Record<string, unknown>[]) =>
  rows
    .map((row) =>
      JSON.stringify(
        Object.fromEntries(
          Object.entries(row)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, v]) => [k, typeof v === "string" && /^\d{1,15}$/.test(v) ? Number(v) : v]),
        ),
      ),
    )
    .sort();

const PASSWORD = "backup-test-password-1234";

describe.each(DATABASES)("promptstore backup and restore ($name)", (database: TestDatabase) => {
  let dir: string;
  const cleanups: (() => Promise<void>)[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "promptstore-backup-"));
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh database with a server app on it (closed after the test). */
  const source = async () => {
    const fresh = await freshStore(database);
    const app = await buildApp({ store: fresh.store, config: defaultConfig() });
    cleanups.push(async () => {
      await app.server.close();
      await fresh.close();
    });
    return { app, url: fresh.url };
  };
  const emptyDatabase = async () => {
    const { url, drop } = await database.create();
    cleanups.push(drop);
    return url;
  };

  /** Two organizations with projects, keys (one revoked), accounts, prompts with versions and pointers. */
  const seed = async (app: App) => {
    const org = await app.tenants.createOrganization("acme", "unlimited");
    const other = await app.tenants.createOrganization("globex", "free");
    const project = await app.tenants.createProject(org.id, "Main");
    const second = await app.tenants.createProject(other.id, "Side");
    const key = await app.tenants.createApiKey(project.id);
    const revoked = await app.tenants.createApiKey(project.id);
    await app.tenants.revokeApiKey(revoked.id);
    await app.tenants.createApiKey(second.id);
    const user = await app.accounts.createUser("ops@example.com", PASSWORD);
    await app.accounts.store.addMembership(org.id, user!.user.id, "owner");
    await app.accounts.signIn("ops@example.com", PASSWORD);
    expect(user).toMatchObject({ user: { email: "ops@example.com" }, password: PASSWORD, generated: false });
    return { key: key.key, revokedKey: revoked.key, projectId: project.id };
  };

  const inject = (app: App, key: string, method: string, url: string, body?: unknown) =>
    app.server.inject({
      method: method as "GET",
      url,
      headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });

  /** Writers that create prompts, save versions and publish until stopped; every answer is checked. */
  const writeLoad = (app: App, key: string, writers = 4) => {
    let stop = false;
    const failures: string[] = [];
    let writes = 0;
    const writer = async (w: number) => {
      for (let n = 0; !stop; n++) {
        const id = `w${w}-p${n}`;
        const steps: [string, string, unknown, number][] = [
          ["POST", "/api/v2/prompts", { id, name: id, markdown: `# Role\nwriter ${w} prompt ${n}` }, 201],
          ["PUT", `/api/v2/prompts/${id}`, { markdown: `# Role\nwriter ${w} prompt ${n} v2` }, 200],
          ["POST", `/api/v2/prompts/${id}/publish`, {}, 200],
          ["PUT", `/api/v2/prompts/${id}`, { markdown: `# Role\nwriter ${w} prompt ${n} v3` }, 200],
        ];
        for (const [method, url, body, status] of steps) {
          const res = await inject(app, key, method, url, body);
          if (res.statusCode !== status) failures.push(`${method} ${url}: ${res.statusCode} ${res.body}`);
          writes++;
        }
      }
    };
    const running = Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
    return {
      get writes() {
        return writes;
      },
      async stop() {
        stop = true;
        await running;
        return failures;
      },
    };
  };

  it("round-trips every row under concurrent writes, from one consistent snapshot", async () => {
    const { app, url } = await source();
    const { key, revokedKey } = await seed(app);
    const load = writeLoad(app, key);
    // Let the load get going, then back up while it runs.
    while (load.writes < 40) await new Promise((r) => setTimeout(r, 10));
    const file = join(dir, "store.backup");
    const backup = await cli(url, ["backup", file, "--json"]);
    const writesDuringBackup = load.writes;
    // The writers keep going after the backup too: nothing of theirs may have been refused.
    while (load.writes < writesDuringBackup + 20) await new Promise((r) => setTimeout(r, 10));
    expect(await load.stop()).toEqual([]);
    expect(backup.stderr).toBe("");
    expect(backup.code).toBe(0);
    const summary = JSON.parse(backup.stdout);
    expect(summary.file).toBe(file);

    const dump = readDump(file);
    expect(dump.header).toMatchObject({ format: "promptstore-backup", version: 1, source: database.name });
    expect(dump.end).toEqual({ end: true, tables: summary.tables });
    for (const [table, rows] of Object.entries(dump.tables)) expect(summary.tables[table]).toBe(rows.length);
    const t = dump.tables;
    // The load was caught mid-way: some of its prompts are in, not all.
    expect(t.prompts!.length).toBeGreaterThan(5);

    // One snapshot: every table agrees with every other (each table read at a different moment would not).
    const versions = new Set(t.versions!.map((v) => `${v.project_id}/${v.prompt_id}/${v.hash}`));
    const sectioned = new Set(t.version_sections!.map((s) => `${s.project_id}/${s.prompt_id}/${s.hash}`));
    for (const prompt of t.prompts!) {
      expect(versions.has(`${prompt.project_id}/${prompt.id}/${prompt.latest_version}`)).toBe(true);
      if (prompt.production_version !== null) {
        expect(versions.has(`${prompt.project_id}/${prompt.id}/${prompt.production_version}`)).toBe(true);
      }
    }
    expect(versions).toEqual(sectioned);
    for (const project of t.projects!) {
      expect(project.prompt_count).toBe(t.prompts!.filter((p) => p.project_id === project.id).length);
    }
    for (const event of t.events!) {
      expect(versions.has(`${event.project_id}/${event.prompt_id}/${event.version}`)).toBe(true);
    }
    // Every saved version has its event, and only those (creates, saves and publishes each record one).
    const eventsPerPrompt = new Map<string, number>();
    for (const event of t.events!)
      eventsPerPrompt.set(event.prompt_id as string, (eventsPerPrompt.get(event.prompt_id as string) ?? 0) + 1);
    for (const prompt of t.prompts!) {
      const saved = t.versions!.filter((v) => v.prompt_id === prompt.id).length;
      const published = prompt.production_version === null ? 0 : 1;
      expect(eventsPerPrompt.get(prompt.id as string)).toBe(saved + published);
    }

    // Restore into an empty database of the same kind, then back that up: the same rows, table by table.
    const target = await emptyDatabase();
    const restored = await cli(target, ["restore", file, "--json"]);
    expect(restored.stderr).toBe("");
    expect(restored.code).toBe(0);
    expect(JSON.parse(restored.stdout).tables).toEqual(summary.tables);
    const again = join(dir, "again.backup");
    expect((await cli(target, ["backup", again])).code).toBe(0);
    const second = readDump(again);
    expect(Object.keys(second.tables)).toEqual(Object.keys(t));
    for (const table of Object.keys(t)) {
      expect(normalized(second.tables[table]!), table).toEqual(normalized(t[table]!));
    }
    expect(second.header.sequences).toEqual(dump.header.sequences);

    // A server on the restored store serves every version under the same hash, with the same pointers; the
    // key still works and the revoked one still does not; the account signs in with its password.
    const store = await openStore(target);
    const restoredApp = await buildApp({ store, config: defaultConfig() });
    try {
      if (database.name === "postgres") {
        // The planner has statistics for every restored table at once: ANALYZE counts its rows exactly at this size.
        const stats = await sql<{ relname: string; reltuples: number }>`
          select relname, reltuples from pg_class
          where relnamespace = current_schema()::regnamespace and relname in (${sql.join(Object.keys(summary.tables))})`.execute(
          store.db,
        );
        expect(Object.fromEntries(stats.rows.map((row) => [row.relname, Number(row.reltuples)]))).toEqual(
          summary.tables,
        );
      }
      for (const version of t.versions!) {
        const res = await inject(
          restoredApp,
          key,
          "GET",
          `/api/v2/prompts/${version.prompt_id}?version=${version.hash}`,
        );
        expect(res.statusCode).toBe(200);
        expect(res.json().data.version).toBe(version.hash);
      }
      for (const prompt of t.prompts!) {
        const res = await inject(restoredApp, key, "GET", `/api/v2/prompts/${prompt.id}/versions`);
        expect(res.json().data.production_version).toBe(prompt.production_version);
      }
      expect((await inject(restoredApp, revokedKey, "GET", "/api/v2/prompts")).statusCode).toBe(401);
      const signedIn = await restoredApp.accounts.signIn("ops@example.com", PASSWORD);
      expect(signedIn.user.email).toBe("ops@example.com");
      // Ids keep growing from where the source was: a new event does not reuse an old id.
      const created = await inject(restoredApp, key, "POST", "/api/v2/prompts", {
        id: "after",
        name: "after",
        markdown: "# A\nb",
      });
      expect(created.statusCode).toBe(201);
      const maxEvent = Math.max(0, ...t.events!.map((e) => Number(e.id)));
      const [latest] = await store.db.selectFrom("events").select("id").orderBy("id", "desc").limit(1).execute();
      expect(Number(latest!.id)).toBeGreaterThan(Math.max(maxEvent, dump.header.sequences.events ?? 0));
    } finally {
      await restoredApp.server.close();
      await store.close();
    }
  }, 120_000);

  it("refuses a store that is not empty unless --force, and then replaces everything in it", async () => {
    const { app, url } = await source();
    await seed(app);
    const file = join(dir, "store.backup");
    expect((await cli(url, ["backup", file])).code).toBe(0);
    // The source itself is not empty.
    const refused = await cli(url, ["restore", file]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      "error: the store is not empty (table organizations has rows); restore into an empty database, or pass --force to replace everything in it\n",
    );
    // A prompt added after the backup is gone after a forced restore.
    const { key } = await (async () => {
      const project = (await app.tenants.findProjects("Main"))[0]!;
      return app.tenants.createApiKey(project.id);
    })();
    expect(
      (await inject(app, key, "POST", "/api/v2/prompts", { id: "late", name: "late", markdown: "# A\nb" })).statusCode,
    ).toBe(201);
    const forced = await cli(url, ["restore", file, "--force"]);
    expect(forced.stderr).toBe("");
    expect(forced.code).toBe(0);
    const after = join(dir, "after.backup");
    expect((await cli(url, ["backup", after])).code).toBe(0);
    const [a, b] = [readDump(file), readDump(after)];
    for (const table of Object.keys(a.tables))
      expect(normalized(b.tables[table]!), table).toEqual(normalized(a.tables[table]!));
  }, 60_000);

  it("restores nothing from a cut-short or foreign file", async () => {
    const { app, url } = await source();
    await seed(app);
    const file = join(dir, "store.backup");
    expect((await cli(url, ["backup", file])).code).toBe(0);
    const lines = readFileSync(file, "utf8").trim().split("\n");
    const cut = join(dir, "cut.backup");
    writeFileSync(cut, `${lines.slice(0, -3).join("\n")}\n`);
    const target = await emptyDatabase();
    const res = await cli(target, ["restore", cut]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`error: ${cut}: the backup is cut short (no end mark); nothing was restored\n`);
    if (database.name === "sqlite") {
      const missing = join(dir, "missing.sqlite");
      const res = await cli(missing, ["backup", join(dir, "x.backup")]);
      expect(res.stderr).toBe(`error: no database at ${missing} (set DATABASE_URL)\n`);
      expect(existsSync(missing)).toBe(false);
    }
    const foreign = join(dir, "foreign.json");
    writeFileSync(foreign, '{"hello":"world"}\n');
    expect((await cli(target, ["restore", foreign])).stderr).toBe(`error: ${foreign}: not a promptstore backup\n`);
    // Still empty: a complete restore now succeeds without --force.
    const ok = await cli(target, ["restore", file]);
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
  }, 60_000);
});

describe.skipIf(DATABASES.length < 2)("a backup restores into the other database", () => {
  it("SQLite to PostgreSQL and back, row for row", async () => {
    const [sqlite, postgres] = DATABASES as [TestDatabase, TestDatabase];
    const dir = mkdtempSync(join(tmpdir(), "promptstore-backup-"));
    const fresh = await freshStore(sqlite);
    const app = await buildApp({ store: fresh.store, config: defaultConfig() });
    const pg = await postgres.create();
    const back = await sqlite.create();
    try {
      const org = await app.tenants.createOrganization("acme", "unlimited");
      const project = await app.tenants.createProject(org.id, "Main");
      const { key } = await app.tenants.createApiKey(project.id);
      await app.accounts.createUser("ops@example.com", PASSWORD);
      for (let n = 0; n < 5; n++) {
        const res = await app.server.inject({
          method: "POST",
          url: "/api/v2/prompts",
          headers: { "x-api-key": key, "content-type": "application/json" },
          payload: JSON.stringify({
            id: `p${n}`,
            name: `P ${n}`,
            markdown: `# Role\nprompt ${n}`,
            publish: n % 2 === 0,
          }),
        });
        expect(res.statusCode).toBe(201);
      }
      const files = ["sqlite.backup", "postgres.backup", "sqlite-again.backup"].map((f) => join(dir, f));
      expect((await cli(fresh.url, ["backup", files[0]!])).code).toBe(0);
      expect((await cli(pg.url, ["restore", files[0]!])).stderr).toBe("");
      expect((await cli(pg.url, ["backup", files[1]!])).code).toBe(0);
      expect((await cli(back.url, ["restore", files[1]!])).stderr).toBe("");
      expect((await cli(back.url, ["backup", files[2]!])).code).toBe(0);
      const [first, second, third] = files.map(readDump) as [Dump, Dump, Dump];
      expect(second.header.source).toBe("postgres");
      expect(first.tables.versions).toHaveLength(5);
      for (const table of Object.keys(first.tables)) {
        expect(normalized(second.tables[table]!), table).toEqual(normalized(first.tables[table]!));
        expect(normalized(third.tables[table]!), table).toEqual(normalized(first.tables[table]!));
      }
    } finally {
      await app.server.close();
      await fresh.close();
      await pg.drop();
      await back.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
