/**
 * docs/releases.md, "Release requests": anyone who could publish asks; a person who may approve, and did not
 * ask, decides; approval moves the label only from where it stood when asked (else `stale`); two approvals
 * racing move it once; every step is an audit row and an event.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { type Browser, member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("release requests ($name)", (database) => {
  const t = useTestApp(database);
  let v1 = "";
  let v2 = "";
  let editor: Browser;
  let owner: Browser;
  let base = "";

  beforeEach(async () => {
    await t.app.tenants.setPlan(t.project.orgId, "unlimited");
    v1 = (
      await t.request("POST", "/api/v2/prompts", {
        body: { id: "bot", name: "Bot", markdown: "# A\none", publish: true },
      })
    ).body.data.version;
    v2 = (await t.request("PUT", "/api/v2/prompts/bot", { body: { markdown: "# A\ntwo" } })).body.data.version;
    editor = await member(t, "editor");
    owner = await member(t, "owner");
    base = `/api/dashboard/projects/${t.project.projectId}`;
    const protect = await owner.call("PUT", `${base}/labels/production`, {
      body: { protected: true, description: "Live" },
    });
    expect(protect.status).toBe(200);
    expect(protect.body.data).toMatchObject({
      name: "production",
      protected: true,
      description: "Live",
      fallback: null,
    });
  });

  const request = (who: Browser, body: Record<string, unknown>) =>
    who.call("POST", `${base}/prompts/bot/releases`, { body: { label: "production", ...body } });

  it("an editor asks, the owner approves with a comment, and the REST read serves it at once", async () => {
    // Cached before the approval: it must not be served after.
    expect((await t.request("GET", "/api/v2/prompts/bot")).body.data.version).toBe(v1);
    const asked = await request(editor, { version: v2, message: "warmer tone" });
    expect(asked.status).toBe(201);
    expect(asked.body.data).toMatchObject({
      status: "pending",
      label: "production",
      version: v2,
      from_version: v1,
      percent: null,
      message: "warmer tone",
      requested_by: `user:${editor.email}`,
    });
    const listed = await t.request("GET", "/api/v2/releases?status=pending");
    expect(listed.body.data.releases.map((r: { id: string }) => r.id)).toEqual([asked.body.data.id]);

    const approved = await owner.call("POST", `${base}/releases/${asked.body.data.id}/approve`, {
      body: { comment: "ok" },
    });
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({ status: "approved", decided_by: `user:${owner.email}`, comment: "ok" });
    expect((await t.request("GET", "/api/v2/prompts/bot")).body.data.version).toBe(v2);

    const trail = (await t.request("GET", "/api/v2/audit")).body.data.entries.slice(0, 3);
    expect(trail.map((e: { action: string; actor: string }) => [e.action, e.actor])).toEqual([
      ["release.approved", `user:${owner.email}`],
      ["prompt.published", `user:${owner.email}`],
      ["release.requested", `user:${editor.email}`],
    ]);
  });

  it("the requester cannot approve their own request; a key cannot approve at all", async () => {
    const asked = await request(owner, { version: v2 });
    const self = await owner.call("POST", `${base}/releases/${asked.body.data.id}/approve`, { body: {} });
    expect(self.status).toBe(403);
    expect(self.body.error).toBe("release: you requested this release; someone else must approve it");
    const byEditor = await editor.call("POST", `${base}/releases/${asked.body.data.id}/approve`, { body: {} });
    expect(byEditor.status).toBe(403);
    expect(byEditor.body.error).toBe("role: editor may not do this; it needs owner");
    const keyCaller = { ...(await t.app.tenants.findGrant(t.key)) } as never;
    await expect(t.app.prompts.decideRelease(keyCaller, asked.body.data.id, { approve: true })).rejects.toThrow(
      "scope: approving a release is done by a person in the dashboard, never with an API key",
    );
    expect((await t.request("GET", "/api/v2/prompts/bot")).body.data.version).toBe(v1);
    expect((await t.request("GET", `/api/v2/releases/${asked.body.data.id}`)).body.data.status).toBe("pending");
  });

  it("a request made with a key counts as made by the key's creator: that owner cannot approve it, another can", async () => {
    // The owner makes a publish key in the dashboard, asks with it over REST, and tries to approve.
    const made = await owner.call("POST", `${base}/keys`, { body: { scope: "publish" } });
    expect(made.status).toBe(201);
    const asked = await t.request("POST", "/api/v2/prompts/bot/releases", {
      key: made.body.data.key,
      body: { label: "production", version: v2 },
    });
    expect(asked.status).toBe(201);
    expect(asked.body.data.requested_by).toBe(`key:${made.body.data.prefix}`);
    const self = await owner.call("POST", `${base}/releases/${asked.body.data.id}/approve`, { body: {} });
    expect(self.status).toBe(403);
    expect(self.body).toEqual({
      success: false,
      error: "release: this release was requested with a key you created; someone else must approve it",
    });
    expect((await t.request("GET", "/api/v2/prompts/bot")).body.data.version).toBe(v1);
    // Another owner may approve it.
    const second = await member(t, "owner");
    const approved = await second.call("POST", `${base}/releases/${asked.body.data.id}/approve`, { body: {} });
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({ status: "approved", decided_by: `user:${second.email}` });
    expect((await t.request("GET", "/api/v2/prompts/bot")).body.data.version).toBe(v2);

    // A key the operator made (the test project's, actor `system`) is no person's: any owner approves.
    const byCliKey = await t.request("POST", "/api/v2/prompts/bot/releases", {
      body: { label: "production", version: v1 },
    });
    const approvedByOwner = await owner.call("POST", `${base}/releases/${byCliKey.body.data.id}/approve`, {
      body: {},
    });
    expect(approvedByOwner.status).toBe(200);
    expect(approvedByOwner.body.data.status).toBe("approved");
  });

  it("a label moved while a request waits makes the request stale: approving it moves nothing", async () => {
    const asked = await request(editor, { version: v2 });
    // Unprotect, move, protect again: production is elsewhere now.
    await owner.call("PUT", `${base}/labels/production`, { body: { protected: false } });
    const v3 = (await t.request("PUT", "/api/v2/prompts/bot", { body: { markdown: "# A\nthree", publish: true } })).body
      .data.version;
    await owner.call("PUT", `${base}/labels/production`, { body: { protected: true } });
    const approved = await owner.call("POST", `${base}/releases/${asked.body.data.id}/approve`, { body: {} });
    expect(approved.body.data.status).toBe("stale");
    expect((await t.request("GET", "/api/v2/prompts/bot")).body.data.version).toBe(v3);
  });

  it("two approvals racing move the label once", async () => {
    const asked = await request(editor, { version: v2 });
    const second = await member(t, "owner");
    const [a, b] = await Promise.all([
      owner.call("POST", `${base}/releases/${asked.body.data.id}/approve`, { body: {} }),
      second.call("POST", `${base}/releases/${asked.body.data.id}/approve`, { body: {} }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const published = (await t.request("GET", "/api/v2/audit")).body.data.entries.filter(
      (e: { action: string }) => e.action === "prompt.published",
    );
    // The create's publish, and the approval's: one move.
    expect(published).toHaveLength(2);
  });

  it("a rejection moves nothing and says who and why; a rollout can be requested too", async () => {
    const asked = await request(editor, { version: v2, percent: 10 });
    expect(asked.body.data.percent).toBe(10);
    const rejected = await owner.call("POST", `${base}/releases/${asked.body.data.id}/reject`, {
      body: { comment: "not this week" },
    });
    expect(rejected.body.data).toMatchObject({ status: "rejected", comment: "not this week" });
    expect((await t.request("GET", "/api/v2/prompts/bot")).body.data.version).toBe(v1);
    const again = await request(editor, { version: v2, percent: 10 });
    await owner.call("POST", `${base}/releases/${again.body.data.id}/approve`, { body: {} });
    const read = await t.request("GET", "/api/v2/prompts/bot?assign=someone");
    expect(read.body.data.rollout).toMatchObject({ candidate: v2, percent: 10 });
  });

  it("a key with the publish scope may ask over REST; a read key may not", async () => {
    const asked = await t.request("POST", "/api/v2/prompts/bot/releases", {
      body: { label: "production", version: "latest" },
    });
    expect(asked.status).toBe(201);
    expect(asked.body.data).toMatchObject({
      status: "pending",
      version: v2,
      requested_by: expect.stringMatching(/^key:ps_/),
    });
    const readKey = (await t.app.tenants.createApiKey(t.project.projectId, { scope: "read" })).key;
    const refused = await t.request("POST", "/api/v2/prompts/bot/releases", {
      key: readKey,
      body: { label: "production", version: "latest" },
    });
    expect(refused.status).toBe(403);
  });
});
