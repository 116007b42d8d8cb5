import { describe, expect, it } from "vitest";
import { promptBody, type TestApp, useTestApp } from "../support/app.js";
import { member, promptsUrl } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";

async function everything(t: TestApp) {
  const db = t.store.db;
  return {
    prompts: await db.selectFrom("prompts").selectAll().orderBy("project_id").orderBy("id").execute(),
    versions: await db.selectFrom("versions").selectAll().orderBy("hash").execute(),
    keys: await db.selectFrom("api_keys").select(["id", "revoked_at"]).orderBy("id").execute(),
    projects: await db.selectFrom("projects").select(["id", "name"]).orderBy("id").execute(),
    memberships: await db.selectFrom("memberships").selectAll().orderBy("org_id").orderBy("user_id").execute(),
  };
}

describe.each(DATABASES)("dashboard isolation between organizations ($name)", (database) => {
  const t = useTestApp(database);

  it("an owner of one organization never reads, lists or changes another's project: 404 everywhere", async () => {
    // Organization B holds a prompt "prompt-1"; the intruder owns organization A, which holds one too.
    const b = await t.newProject();
    await t.request("POST", "/api/v2/prompts", { key: b.key, body: promptBody(1) });
    await t.request("POST", "/api/v2/prompts", { body: promptBody(2) });
    const intruder = await member(t, "owner");
    const victimOwner = await t.app.accounts.createUser("victim@example.com", "victim passphrase");
    await t.app.accounts.store.addMembership(b.orgId, victimOwner!.user.id, "owner");
    const before = await everything(t);

    const base = promptsUrl(b.projectId);
    const attempts: [string, string, unknown?][] = [
      ["GET", base],
      ["POST", base, promptBody(3)],
      ["GET", `${base}/prompt-1`],
      ["GET", `${base}/prompt-1/versions`],
      ["PUT", `${base}/prompt-1`, { sections: [{ title: "X", content: "taken over" }] }],
      ["POST", `${base}/prompt-1/publish`, {}],
      ["DELETE", `${base}/prompt-1`],
      ["GET", `/api/dashboard/projects/${b.projectId}/keys`],
      ["POST", `/api/dashboard/projects/${b.projectId}/keys`, {}],
      ["DELETE", `/api/dashboard/projects/${b.projectId}/keys/${b.keyId}`],
      ["POST", `/api/dashboard/orgs/${b.orgId}/projects`, { name: "Mine now" }],
      ["GET", `/api/dashboard/orgs/${b.orgId}/members`],
      ["POST", `/api/dashboard/orgs/${b.orgId}/members`, { email: intruder.email, role: "owner" }],
      ["PATCH", `/api/dashboard/orgs/${b.orgId}/members/${victimOwner!.user.id}`, { role: "viewer" }],
      ["DELETE", `/api/dashboard/orgs/${b.orgId}/members/${victimOwner!.user.id}`],
      ["GET", `/api/dashboard/orgs/${b.orgId}/usage`],
      ["GET", `/api/dashboard/orgs/${b.orgId}/invitations`],
      ["POST", `/api/dashboard/orgs/${b.orgId}/invitations`, { email: intruder.email, role: "owner" }],
      ["DELETE", `/api/dashboard/orgs/${b.orgId}/invitations/inv_0000000000000000000000`],
    ];
    for (const [method, url, body] of attempts) {
      const res = await intruder.call(method, url, body === undefined ? {} : { body });
      expect(res.status, `${method} ${url}`).toBe(404);
      expect(res.body.error, `${method} ${url}`).toMatch(/^(project|organization) \S+ not found$/);
    }
    expect(await everything(t)).toEqual(before);
    // B's key still works, and B's prompt is unchanged.
    const read = await t.request("GET", "/api/v2/prompts/prompt-1?guard=false", { key: b.key });
    expect(read.body.data.sections.map((s: { content: string }) => s.content)).toEqual([
      "You are assistant number 1 for {{ company }}.",
      "Answer in {{ language }}.",
    ]);
    // The intruder's session lists only its own organization.
    const session = await intruder.call("GET", "/api/dashboard/session");
    expect(session.body.data.memberships.map((m: { org: { id: string } }) => m.org.id)).toEqual([t.project.orgId]);
  });

  it("a project that does not exist answers exactly as another organization's does", async () => {
    const other = await t.newProject();
    const b = await member(t, "owner");
    const foreign = await b.call("GET", promptsUrl(other.projectId));
    const missing = await b.call("GET", promptsUrl("proj_000000000000000000000000"));
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(foreign.body.error.replace(other.projectId, "ID")).toBe(
      missing.body.error.replace("proj_000000000000000000000000", "ID"),
    );
  });

  it("a key id of another project cannot be revoked through one's own project", async () => {
    const other = await t.newProject();
    const owner = await member(t, "owner");
    const res = await owner.call("DELETE", `/api/dashboard/projects/${t.project.projectId}/keys/${other.keyId}`);
    expect(res.status).toBe(404);
    expect((await t.request("GET", "/api/v2/prompts", { key: other.key })).status).toBe(200);
  });
});
