import type { Role } from "@promptstore/core/dashboard";
import { describe, expect, it } from "vitest";
import { promptBody, type TestApp, useTestApp } from "../support/app.js";
import { type Browser, member, promptsUrl } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";

/** Every dashboard action, what it needs, and how to try it. */
interface Action {
  name: string;
  needs: "read" | "write" | "admin";
  /** The status a permitted attempt answers. */
  ok: number;
  run(b: Browser, t: TestApp, ctx: { keyId: string }): Promise<{ status: number; body: any }>;
}

const SECTIONS = [{ title: "Role", content: "Changed by {{ who }}" }];

const ACTIONS: Action[] = [
  { name: "list prompts", needs: "read", ok: 200, run: (b, t) => b.call("GET", promptsUrl(t.project.projectId)) },
  {
    name: "read a prompt",
    needs: "read",
    ok: 200,
    run: (b, t) => b.call("GET", `${promptsUrl(t.project.projectId)}/prompt-1`),
  },
  {
    name: "list versions",
    needs: "read",
    ok: 200,
    run: (b, t) => b.call("GET", `${promptsUrl(t.project.projectId)}/prompt-1/versions`),
  },
  {
    name: "create a prompt",
    needs: "write",
    ok: 201,
    run: (b, t) => b.call("POST", promptsUrl(t.project.projectId), { body: promptBody(9) }),
  },
  {
    name: "save a version",
    needs: "write",
    ok: 200,
    run: (b, t) => b.call("PUT", `${promptsUrl(t.project.projectId)}/prompt-1`, { body: { sections: SECTIONS } }),
  },
  {
    name: "publish",
    needs: "write",
    ok: 200,
    run: (b, t) => b.call("POST", `${promptsUrl(t.project.projectId)}/prompt-1/publish`, { body: {} }),
  },
  {
    name: "delete a prompt",
    needs: "write",
    ok: 200,
    run: (b, t) => b.call("DELETE", `${promptsUrl(t.project.projectId)}/prompt-1`),
  },
  {
    name: "list keys",
    needs: "admin",
    ok: 200,
    run: (b, t) => b.call("GET", `/api/dashboard/projects/${t.project.projectId}/keys`),
  },
  {
    name: "create a key",
    needs: "admin",
    ok: 201,
    run: (b, t) => b.call("POST", `/api/dashboard/projects/${t.project.projectId}/keys`, { body: {} }),
  },
  {
    name: "revoke a key",
    needs: "admin",
    ok: 200,
    run: (b, t, ctx) => b.call("DELETE", `/api/dashboard/projects/${t.project.projectId}/keys/${ctx.keyId}`),
  },
  {
    name: "create a read key",
    needs: "admin",
    ok: 201,
    run: (b, t) => b.call("POST", `/api/dashboard/projects/${t.project.projectId}/keys`, { body: { scope: "read" } }),
  },
  {
    name: "read the audit trail",
    needs: "admin",
    ok: 200,
    run: (b, t) => b.call("GET", `/api/dashboard/projects/${t.project.projectId}/audit`),
  },
  {
    name: "create a project",
    needs: "admin",
    ok: 201,
    run: (b, t) => b.call("POST", `/api/dashboard/orgs/${t.project.orgId}/projects`, { body: { name: "New" } }),
  },
  {
    name: "list members",
    needs: "admin",
    ok: 200,
    run: (b, t) => b.call("GET", `/api/dashboard/orgs/${t.project.orgId}/members`),
  },
  {
    name: "invite a member",
    needs: "admin",
    ok: 201,
    run: (b, t) =>
      b.call("POST", `/api/dashboard/orgs/${t.project.orgId}/members`, {
        body: { email: "added@example.com", role: "viewer" },
      }),
  },
  {
    name: "view the plan and usage",
    needs: "admin",
    ok: 200,
    run: (b, t) => b.call("GET", `/api/dashboard/orgs/${t.project.orgId}/usage`),
  },
];

const ALLOWED: Record<Role, Set<Action["needs"]>> = {
  owner: new Set(["read", "write", "admin"]),
  editor: new Set(["read", "write"]),
  viewer: new Set(["read"]),
};

/** Everything a refused action could have changed. */
async function snapshot(t: TestApp) {
  const db = t.store.db;
  return {
    prompts: await db.selectFrom("prompts").selectAll().orderBy("id").execute(),
    versions: await db.selectFrom("versions").select(["prompt_id", "hash"]).orderBy("hash").execute(),
    keys: await db.selectFrom("api_keys").selectAll().orderBy("id").execute(),
    audit: await db.selectFrom("audit_log").selectAll().orderBy("id").execute(),
    projects: await db.selectFrom("projects").select(["id", "name"]).orderBy("id").execute(),
    memberships: await db.selectFrom("memberships").selectAll().orderBy("user_id").execute(),
  };
}

describe.each(DATABASES)("dashboard roles ($name)", (database) => {
  const t = useTestApp(database);

  describe.each(["owner", "editor", "viewer"] as Role[])("%s", (role) => {
    it("may do exactly what the role allows; refusals are 403 naming the role and change nothing", async () => {
      await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
      const b = await member(t, role);
      const outcomes: Record<string, number> = {};
      for (const action of ACTIONS) {
        const ctx = { keyId: (await t.app.tenants.createApiKey(t.project.projectId)).id };
        const allowed = ALLOWED[role].has(action.needs);
        const before = allowed ? undefined : await snapshot(t);
        const res = await action.run(b, t, ctx);
        outcomes[action.name] = res.status;
        if (!allowed) {
          expect(res.body.error, action.name).toBe(
            `role: ${role} may not do this; it needs ${action.needs === "admin" ? "owner" : "editor or owner"}`,
          );
          expect(await snapshot(t), action.name).toEqual(before);
        }
      }
      expect(outcomes).toEqual(
        Object.fromEntries(ACTIONS.map((a) => [a.name, ALLOWED[role].has(a.needs) ? a.ok : 403])),
      );
    });
  });

  it("a role change takes effect on the next request", async () => {
    const b = await member(t, "editor");
    const create = () => b.call("POST", promptsUrl(t.project.projectId), { body: promptBody(2) });
    await t.app.accounts.changeRole(t.project.orgId, b.userId, "viewer");
    expect((await create()).status).toBe(403);
    await t.app.accounts.changeRole(t.project.orgId, b.userId, "editor");
    expect((await create()).status).toBe(201);
  });

  it("a removed member loses the project at once (404, as if it did not exist)", async () => {
    const owner = await member(t, "owner");
    const b = await member(t, "editor");
    const removed = await owner.call("DELETE", `/api/dashboard/orgs/${t.project.orgId}/members/${b.userId}`);
    expect(removed.body).toEqual({ success: true, data: { removed: true } });
    const res = await b.call("GET", promptsUrl(t.project.projectId));
    expect(res.status).toBe(404);
    expect((await b.call("GET", "/api/dashboard/session")).body.data.memberships).toEqual([]);
  });
});
