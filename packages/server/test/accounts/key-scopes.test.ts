import type { KeyScope } from "@promptstore/core/accounts/key-scopes";
import { contentHash } from "@promptstore/core/prompts/hash";
import { describe, expect, it } from "vitest";
import { promptBody, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

const SCOPES: KeyScope[] = ["read", "write", "publish"];

const refusal = (needed: string, held: KeyScope, action: string) => ({
  success: false,
  error: `scope: ${action} needs a key with scope ${needed}; this key has scope ${held}`,
});

/** Each kind of REST action, with the scope it needs and the status it answers when allowed. */
interface Action {
  name: string;
  needs: KeyScope;
  /** The refusal's wording of what was asked, and of the scope needed. */
  refused: [action: string, needed: string];
  ok: number;
  run: (key: string, promptId: string) => [method: string, url: string, body?: unknown];
}

/** An import of a new prompt with one version made elsewhere, optionally published as it was there. */
const imported = (id: string, production: boolean) => {
  const sections = [{ title: "Role", content: `Imported as ${id}.` }];
  const version = contentHash({ sections: sections.map((s) => ({ ...s, enabled: true })), tools: [] });
  return {
    id,
    name: id,
    versions: [{ version, created_at: "2025-01-01T00:00:00.000Z", sections }],
    latest_version: version,
    ...(production ? { production_version: version } : {}),
  };
};

const ACTIONS: Action[] = [
  { name: "list (v2)", needs: "read", refused: ["", ""], ok: 200, run: () => ["GET", "/api/v2/prompts"] },
  { name: "read (v2)", needs: "read", refused: ["", ""], ok: 200, run: (_, id) => ["GET", `/api/v2/prompts/${id}`] },
  {
    name: "versions (v2)",
    needs: "read",
    refused: ["", ""],
    ok: 200,
    run: (_, id) => ["GET", `/api/v2/prompts/${id}/versions`],
  },
  { name: "read (v1)", needs: "read", refused: ["", ""], ok: 200, run: (_, id) => ["GET", `/api/v1/prompts/${id}`] },
  {
    name: "create",
    needs: "write",
    refused: ["creating a prompt", "write or higher"],
    ok: 201,
    run: () => ["POST", "/api/v2/prompts", promptBody(1)],
  },
  {
    name: "create and publish",
    needs: "publish",
    refused: ["creating a published prompt", "publish"],
    ok: 201,
    run: () => ["POST", "/api/v2/prompts", promptBody(2, { publish: true })],
  },
  {
    name: "save",
    needs: "write",
    refused: ["saving a version", "write or higher"],
    ok: 200,
    run: (_, id) => ["PUT", `/api/v2/prompts/${id}`, promptBody(3)],
  },
  {
    name: "save and publish",
    needs: "publish",
    refused: ["saving and publishing", "publish"],
    ok: 200,
    run: (_, id) => ["PUT", `/api/v2/prompts/${id}`, promptBody(4, { publish: true })],
  },
  {
    name: "publish",
    needs: "publish",
    refused: ["publishing", "publish"],
    ok: 200,
    run: (_, id) => ["POST", `/api/v2/prompts/${id}/publish`, {}],
  },
  {
    name: "delete",
    needs: "publish",
    refused: ["deleting a prompt", "publish"],
    ok: 200,
    run: (_, id) => ["DELETE", `/api/v2/prompts/${id}`],
  },
  {
    name: "import",
    needs: "write",
    refused: ["importing versions", "write or higher"],
    ok: 200,
    run: () => ["POST", "/api/v2/import", imported("imported", false)],
  },
  {
    name: "import with production_version",
    needs: "publish",
    refused: ["importing with production_version", "publish"],
    ok: 200,
    run: () => ["POST", "/api/v2/import", imported("imported-live", true)],
  },
  {
    name: "list webhooks",
    needs: "publish",
    refused: ["managing webhooks", "publish"],
    ok: 200,
    run: () => ["GET", "/api/v2/webhooks"],
  },
  {
    name: "create a webhook",
    needs: "publish",
    refused: ["managing webhooks", "publish"],
    // A loopback address, which this suite's server allows (PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE).
    ok: 201,
    run: () => ["POST", "/api/v2/webhooks", { url: "http://127.0.0.1:9/hook", events: ["prompt.published"] }],
  },
];

const ORDER: Record<KeyScope, number> = { read: 0, write: 1, publish: 2 };

describe.each(DATABASES)("API key scopes on REST v2 and v1 ($name)", (database) => {
  // Webhook endpoints may be on loopback, so that creating one with a publish key is shown to work.
  const t = useTestApp(database, { PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: true });

  /** A project on a plan without a rate limit, its seeded prompt, and one key of each scope. */
  const setup = async () => {
    const project = await t.newProject({ plan: "unlimited" });
    const keys = {} as Record<KeyScope, string>;
    for (const scope of SCOPES) {
      keys[scope] = (await t.app.tenants.createApiKey(project.projectId, { scope })).key;
    }
    const seeded = await t.request("POST", "/api/v2/prompts", {
      key: project.key,
      body: promptBody(0, { id: "seeded", publish: true }),
    });
    expect(seeded.status).toBe(201);
    return { project, keys };
  };

  const snapshot = async (projectId: string) => ({
    prompts: await t.store.db
      .selectFrom("prompts")
      .select(["id", "production_version", "latest_version"])
      .where("project_id", "=", projectId)
      .orderBy("id")
      .execute(),
    versions: (await t.store.db.selectFrom("versions").select("hash").where("project_id", "=", projectId).execute())
      .length,
    webhooks: (
      await t.store.db.selectFrom("webhook_endpoints").select("id").where("project_id", "=", projectId).execute()
    ).length,
  });

  for (const held of SCOPES) {
    for (const action of ACTIONS) {
      const allowed = ORDER[held] >= ORDER[action.needs];
      it(`a ${held} key: ${action.name} is ${allowed ? "allowed" : "refused (403 naming the scope needed)"}`, async () => {
        const { project, keys } = await setup();
        const before = await snapshot(project.projectId);
        const [method, url, body] = action.run(keys[held], "seeded");
        const res = await t.request(method, url, { key: keys[held], ...(body !== undefined ? { body } : {}) });
        if (allowed) {
          expect(res.status, JSON.stringify(res.body)).toBe(action.ok);
        } else {
          expect(res.status).toBe(403);
          expect(res.body).toEqual(refusal(action.refused[1], held, action.refused[0]));
          // Refused before any work: nothing the project holds changed.
          expect(await snapshot(project.projectId)).toEqual(before);
        }
      });
    }
  }

  it("records a key's last use once a minute at most, not on every request", async () => {
    const { project, keys } = await setup();
    const lastUse = async () =>
      (await t.app.tenants.listApiKeys(project.projectId)).find((k) => k.scope === "read")?.last_used_at;
    expect(await lastUse()).toBeNull();
    expect((await t.request("GET", "/api/v2/prompts/seeded", { key: keys.read })).status).toBe(200);
    let first: string | null | undefined = null;
    for (let i = 0; i < 100 && first === null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      first = await lastUse();
    }
    expect(first).toEqual(expect.any(String));
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (let i = 0; i < 3; i++) {
      expect((await t.request("GET", "/api/v2/prompts/seeded", { key: keys.read })).status).toBe(200);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await lastUse()).toBe(first);
  });

  it("a key created without a scope is a publish key, and the dashboard-less default is unchanged", async () => {
    const project = await t.newProject({ plan: "unlimited" });
    const created = await t.app.tenants.createApiKey(project.projectId);
    expect(created.scope).toBe("publish");
    const rows = await t.store.db
      .selectFrom("api_keys")
      .select(["id", "scope"])
      .where("project_id", "=", project.projectId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    expect(rows.map((r) => r.scope)).toEqual(["publish", "publish"]);
  });
});
