import { type Kysely, Migrator } from "kysely";
import { describe, expect, it } from "vitest";
import { TenantStore } from "../../src/store/accounts/tenants.js";
import { migrate } from "../../src/store/index.js";
import { migrationProvider } from "../../src/store/migrations/index.js";
import { DATABASES, freshStore } from "../support/databases.js";

describe.each(DATABASES)("migration 007, least privilege ($name)", (database) => {
  it("makes keys that existed before it publish keys, which keep every power they had", async () => {
    const fresh = await freshStore(database);
    try {
      // The schema as it was before 007, which the app types no longer describe.
      const db = fresh.store.db as unknown as Kysely<any>;
      const down = await new Migrator({ db, provider: migrationProvider }).migrateTo("006-webhooks");
      expect(down.error).toBeUndefined();
      const at = new Date().toISOString();
      await db
        .insertInto("organizations")
        .values({ id: "org_1", name: "acme", plan: "free", created_at: at })
        .execute();
      await db
        .insertInto("projects")
        .values({ id: "proj_1", org_id: "org_1", name: "Web", created_at: at, prompt_count: 0 })
        .execute();
      await db
        .insertInto("api_keys")
        .values({
          id: "key_1",
          project_id: "proj_1",
          prefix: "ps_old",
          key_hash: "h",
          created_at: at,
          revoked_at: null,
          last_used_at: null,
        })
        .execute();
      await migrate(fresh.store.db);
      const keys = await new TenantStore(fresh.store.db).listApiKeys("proj_1");
      expect(keys.map((k) => [k.id, k.scope])).toEqual([["key_1", "publish"]]);
      expect(await fresh.store.db.selectFrom("audit_log").selectAll().execute()).toEqual([]);
    } finally {
      await fresh.close();
    }
  });
});
