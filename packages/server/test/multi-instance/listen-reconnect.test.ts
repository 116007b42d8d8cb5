/**
 * README: when an instance's LISTEN connection is lost it drops every cache (changes announced meanwhile
 * would not reach it) and reconnects; once back, other instances' changes reach it again.
 */
import { sql } from "kysely";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { DATABASES } from "../support/databases.js";
import { useTwoInstances } from "../support/two-instances.js";

const postgres = DATABASES.find((d) => d.name === "postgres");

async function poll<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!postgres)("the LISTEN connection (postgres)", () => {
  const two = useTwoInstances(postgres!);

  /** The pids of this database's listening connections. */
  async function listenerPids(): Promise<number[]> {
    const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity
      where datname = current_database() and application_name like 'promptstore instance %' order by pid`.execute(
      two.stores[0]!.db,
    );
    return rows.map((r) => r.pid);
  }

  it("a lost LISTEN connection drops the caches, reconnects, and hears other instances again", async () => {
    await two.call(0, "POST", "/api/v2/prompts", { id: "p", name: "Before", markdown: "# A\nx", publish: true });
    expect((await two.call(0, "GET", "/api/v2/prompts/p")).body.data.name).toBe("Before");
    // Cached now: a rename behind every instance's back is not seen...
    await two.stores[0]!.db.updateTable("prompts").set({ name: "Behind" }).execute();
    expect((await two.call(0, "GET", "/api/v2/prompts/p")).body.data.name).toBe("Before");

    const before = await listenerPids();
    expect(before).toHaveLength(2);
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      for (const pid of before) await admin.query("select pg_terminate_backend($1)", [pid]);
    } finally {
      await admin.end();
    }
    // ...until the LISTEN connection dies: then nothing cached is trusted.
    await poll("cache dropped", async () =>
      (await two.call(0, "GET", "/api/v2/prompts/p")).body.data.name === "Behind" ? true : undefined,
    );
    // Both reconnect (new backends)...
    await poll("reconnected", async () => {
      const now = await listenerPids();
      return now.length === 2 && now.every((pid) => !before.includes(pid)) ? true : undefined;
    });
    // ...and a publish on instance 1 reaches instance 0's cache before it is answered.
    const v2 = (await two.call(1, "PUT", "/api/v2/prompts/p", { markdown: "# A\ny", publish: true })).body.data.version;
    expect((await two.call(0, "GET", "/api/v2/prompts/p")).body.data.version).toBe(v2);
  });
});
