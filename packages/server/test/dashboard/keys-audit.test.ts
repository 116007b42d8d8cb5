import { describe, expect, it } from "vitest";
import { promptBody, useTestApp } from "../support/app.js";
import { member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("dashboard: scoped keys and the audit trail ($name)", (database) => {
  const t = useTestApp(database);
  const keysUrl = () => `/api/dashboard/projects/${t.project.projectId}/keys`;

  it("an owner creates a key of a chosen scope (publish without one); the list shows scope and last use", async () => {
    const owner = await member(t, "owner");
    const read = await owner.call("POST", keysUrl(), { body: { scope: "read" } });
    expect(read.status).toBe(201);
    expect(read.body.data).toEqual({
      id: expect.stringMatching(/^key_/),
      prefix: read.body.data.key.slice(0, 12),
      scope: "read",
      created_at: expect.any(String),
      last_used_at: null,
      revoked_at: null,
      key: expect.stringMatching(/^ps_/),
    });
    const unscoped = await owner.call("POST", keysUrl(), { body: {} });
    expect(unscoped.body.data.scope).toBe("publish");
    const bad = await owner.call("POST", keysUrl(), { body: { scope: "admin" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("scope: must be one of read, write, publish");

    // The read key reads, and is refused a save, naming the scope needed.
    expect((await t.request("GET", "/api/v2/prompts", { key: read.body.data.key })).status).toBe(200);
    const save = await t.request("POST", "/api/v2/prompts", { key: read.body.data.key, body: promptBody(1) });
    expect(save.status).toBe(403);
    let listed: any[] = [];
    for (let i = 0; i < 100; i++) {
      listed = (await owner.call("GET", keysUrl())).body.data.keys;
      if (listed.find((k) => k.id === read.body.data.id)?.last_used_at) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(listed.map((k) => [k.id, k.scope])).toEqual([
      [t.project.keyId, "publish"],
      [read.body.data.id, "read"],
      [unscoped.body.data.id, "publish"],
    ]);
    expect(listed[1].last_used_at).toEqual(expect.any(String));
  });

  it("records dashboard changes with the user's e-mail, and shows owners the trail", async () => {
    const owner = await member(t, "owner");
    const editor = await member(t, "editor");
    const created = await owner.call("POST", keysUrl(), { body: { scope: "write" } });
    await owner.call("DELETE", `${keysUrl()}/${created.body.data.id}`);
    const prompt = await editor.call("POST", `/api/dashboard/projects/${t.project.projectId}/prompts`, {
      body: promptBody(1, { publish: true }),
    });
    expect(prompt.status).toBe(201);
    const trail = await owner.call("GET", `/api/dashboard/projects/${t.project.projectId}/audit?limit=4`);
    expect(trail.status).toBe(200);
    const rows = trail.body.data.entries.map((e: any) => [e.actor, e.action, e.target, e.before, e.after]);
    const version = prompt.body.data.version;
    expect(rows).toEqual([
      [`user:${editor.email}`, "prompt.published", prompt.body.data.id, null, version],
      [`user:${editor.email}`, "prompt.created", prompt.body.data.id, null, version],
      [`user:${owner.email}`, "key.revoked", created.body.data.id, "write", "revoked"],
      [`user:${owner.email}`, "key.created", created.body.data.id, null, "write"],
    ]);
    expect(trail.body.data.next_cursor).toEqual(expect.any(String));
  });
});
