import { describe, expect, it } from "vitest";
import { promptBody, useTestApp } from "../support/app.js";
import { member, newUser, signIn } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("dashboard project settings ($name)", (database) => {
  const t = useTestApp(database);

  describe("API keys", () => {
    it("creates a key shown once, lists it by prefix with last use, and revokes it: REST then says 401", async () => {
      const owner = await member(t, "owner");
      const keys = `/api/dashboard/projects/${t.project.projectId}/keys`;
      const created = await owner.call("POST", keys, { body: {} });
      expect(created.status).toBe(201);
      const { key, ...view } = created.body.data;
      expect(key).toMatch(/^ps_[A-Za-z0-9_-]{43}$/);
      expect(view).toEqual({
        id: expect.stringMatching(/^key_/),
        prefix: key.slice(0, 12),
        scope: "publish",
        created_at: expect.any(String),
        last_used_at: null,
        revoked_at: null,
      });

      expect((await t.request("GET", "/api/v2/prompts", { key })).status).toBe(200);
      // The use is recorded without the request waiting for it; give the write a moment to land.
      let listed: any[] = [];
      for (let n = 0; n < 50; n++) {
        listed = (await owner.call("GET", keys)).body.data.keys;
        if (listed.find((k) => k.id === view.id)?.last_used_at) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(listed.map((k) => k.prefix)).toEqual([t.key.slice(0, 12), key.slice(0, 12)]);
      const mine = listed.find((k) => k.id === view.id);
      expect(Date.parse(mine.last_used_at)).toBeGreaterThanOrEqual(Date.parse(view.created_at));
      expect(JSON.stringify(listed)).not.toContain(key);

      const revoked = await owner.call("DELETE", `${keys}/${view.id}`);
      expect(revoked.body.data).toEqual({ ...mine, revoked_at: expect.any(String) });
      const refused = await t.request("GET", "/api/v2/prompts", { key });
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ success: false, error: "x-api-key: invalid API key" });
    });

    it("revoking an unknown key is 404", async () => {
      const owner = await member(t, "owner");
      const res = await owner.call("DELETE", `/api/dashboard/projects/${t.project.projectId}/keys/key_nope`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: "key key_nope not found" });
    });
  });

  describe("members", () => {
    it("the old add-member endpoint now invites: one answer for a new and an existing e-mail, nobody joins", async () => {
      const owner = await member(t, "owner");
      const otherOrg = await t.newProject();
      const existing = await newUser(t, otherOrg.orgId, "owner");
      const members = `/api/dashboard/orgs/${t.project.orgId}/members`;
      const shape = (email: string, role: string) => ({
        id: expect.stringMatching(/^inv_/),
        email,
        role,
        invited_by: `user:${owner.email}`,
        created_at: expect.any(String),
        expires_at: expect.any(String),
        status: "pending",
        accepted_at: null,
        revoked_at: null,
        token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        link: expect.stringMatching(/^\/invite#[A-Za-z0-9_-]{43}$/),
      });
      const fresh = await owner.call("POST", members, { body: { email: "New.Person@Example.com", role: "viewer" } });
      const known = await owner.call("POST", members, { body: { email: existing, role: "editor" } });
      expect([fresh.status, known.status]).toEqual([201, 201]);
      expect(fresh.body.data).toEqual(shape("new.person@example.com", "viewer"));
      expect(known.body.data).toEqual(shape(existing, "editor"));
      expect(Object.keys(fresh.body.data)).toEqual(Object.keys(known.body.data));
      // No account was made, and the existing one is not in the organization.
      expect(await t.app.accounts.store.findUserByEmail("new.person@example.com")).toBeUndefined();
      const b = await signIn(t, existing);
      expect((await b.call("GET", "/api/dashboard/session")).body.data.memberships).toHaveLength(1);
      const listed = (await owner.call("GET", members)).body.data.members;
      expect(listed.map((m: any) => m.email)).toEqual([owner.email]);
    });

    it("changes roles, and never leaves the organization without an owner", async () => {
      const owner = await member(t, "owner");
      const members = `/api/dashboard/orgs/${t.project.orgId}/members`;
      const lastOwner = await owner.call("PATCH", `${members}/${owner.userId}`, { body: { role: "editor" } });
      expect(lastOwner.status).toBe(409);
      expect(lastOwner.body.error).toBe(
        "role: an organization keeps at least one owner; make someone else owner first",
      );
      expect((await owner.call("DELETE", `${members}/${owner.userId}`)).status).toBe(409);

      const second = await newUser(t, t.project.orgId, "viewer");
      const secondId = (await t.app.accounts.store.findUserByEmail(second))!.id;
      const promoted = await owner.call("PATCH", `${members}/${secondId}`, { body: { role: "owner" } });
      expect(promoted.body.data).toEqual({
        user_id: secondId,
        email: second,
        role: "owner",
        created_at: expect.any(String),
      });
      expect((await owner.call("PATCH", `${members}/${owner.userId}`, { body: { role: "editor" } })).status).toBe(200);
      const bad = await owner.call("PATCH", `${members}/${secondId}`, { body: { role: "admin" } });
      expect(bad.status).toBe(403); // no longer an owner
      const asOwner = await signIn(t, second);
      const invalid = await asOwner.call("PATCH", `${members}/${owner.userId}`, { body: { role: "admin" } });
      expect(invalid.status).toBe(400);
      expect(invalid.body).toEqual({ success: false, error: "role: must be owner, editor or viewer" });
    });

    it("two owners demoting each other at once leave one owner", async () => {
      const a = await member(t, "owner");
      const b = await member(t, "owner");
      const members = `/api/dashboard/orgs/${t.project.orgId}/members`;
      const results = await Promise.all([
        a.call("PATCH", `${members}/${b.userId}`, { body: { role: "viewer" } }),
        b.call("PATCH", `${members}/${a.userId}`, { body: { role: "viewer" } }),
      ]);
      const owners = (await t.app.accounts.members(t.project.orgId)).filter((m) => m.role === "owner");
      expect(owners).toHaveLength(1);
      expect(results.map((r) => r.status).sort()).toEqual([200, results.some((r) => r.status === 403) ? 403 : 409]);
    });
  });

  describe("plan and usage", () => {
    it("shows the plan's limits, this minute's requests and each project's prompt count", async () => {
      const owner = await member(t, "owner");
      await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
      await t.request("GET", "/api/v2/prompts");
      await t.request("GET", "/api/v2/prompts/prompt-1");
      const usage = await owner.call("GET", `/api/dashboard/orgs/${t.project.orgId}/usage`);
      expect(usage.body.data).toEqual({
        org: { id: t.project.orgId, name: expect.any(String), plan: "free" },
        limits: { prompts_per_project: 5, requests_per_minute: 60 },
        rate: { limit: 60, used: 3, remaining: 57, reset_seconds: expect.any(Number) },
        projects: [{ id: t.project.projectId, name: expect.any(String), prompt_count: 1 }],
      });
      expect(usage.body.data.rate.reset_seconds).toBeGreaterThanOrEqual(1);
      expect(usage.body.data.rate.reset_seconds).toBeLessThanOrEqual(60);
    });

    it("an unlimited plan has no rate to show", async () => {
      const other = await t.newProject({ plan: "unlimited" });
      const email = await newUser(t, other.orgId, "owner");
      const owner = await signIn(t, email);
      const usage = await owner.call("GET", `/api/dashboard/orgs/${other.orgId}/usage`);
      expect(usage.body.data.limits).toEqual({ prompts_per_project: null, requests_per_minute: null });
      expect(usage.body.data.rate).toBeNull();
    });
  });

  describe("projects", () => {
    it("an owner creates a project, which appears in the session and starts empty", async () => {
      const owner = await member(t, "owner");
      const res = await owner.call("POST", `/api/dashboard/orgs/${t.project.orgId}/projects`, {
        body: { name: "  Marketing  " },
      });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(/^proj_/),
        name: "Marketing",
        created_at: expect.any(String),
      });
      const session = await owner.call("GET", "/api/dashboard/session");
      expect(session.body.data.memberships[0].projects.map((p: any) => p.name)).toEqual([
        expect.any(String),
        "Marketing",
      ]);
      const prompts = await owner.call("GET", `/api/dashboard/projects/${res.body.data.id}/prompts`);
      expect(prompts.body.data.prompts).toEqual([]);
      const blank = await owner.call("POST", `/api/dashboard/orgs/${t.project.orgId}/projects`, {
        body: { name: " " },
      });
      expect(blank.body).toEqual({ success: false, error: "name: must not be empty" });
    });
  });
});
