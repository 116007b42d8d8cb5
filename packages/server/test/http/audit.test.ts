import { describe, expect, it } from "vitest";
import { auditPageOut } from "../../src/http/routes/audit-v2.js";
import { promptBody, useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

const AT = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const ID = expect.stringMatching(/^\d+$/);

describe.each(DATABASES)("the audit trail, GET /api/v2/audit ($name)", (database) => {
  const t = useTestApp(database);

  /** A project with a publish key (made by the CLI) and a write key (made by a dashboard owner). */
  const setup = async () => {
    const project = await t.newProject({ plan: "unlimited" });
    const publish = await t.app.tenants.createApiKey(project.projectId, { scope: "publish", actor: "cli" });
    const write = await t.app.tenants.createApiKey(project.projectId, {
      scope: "write",
      actor: "user:owner@example.com",
    });
    return { project, publish, write };
  };
  const audit = async (key: string, query = "") => {
    const res = await t.request("GET", `/api/v2/audit${query}`, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return auditPageOut.parse(res.body.data);
  };

  it("records every save, publish, deletion, key creation and revocation and plan change, newest first", async () => {
    const { project, publish, write } = await setup();
    const created = await t.request("POST", "/api/v2/prompts", {
      key: publish.key,
      body: promptBody(1, { id: "bot", publish: true }),
    });
    const first = created.body.data.version;
    const saved = await t.request("PUT", "/api/v2/prompts/bot", { key: write.key, body: promptBody(2) });
    const second = saved.body.data.version;
    // Saving the same content again makes no version, so no row.
    expect((await t.request("PUT", "/api/v2/prompts/bot", { key: write.key, body: promptBody(2) })).status).toBe(200);
    expect((await t.request("POST", "/api/v2/prompts/bot/publish", { key: publish.key, body: {} })).status).toBe(200);
    // Publishing what production already serves changes nothing, so no row.
    expect((await t.request("POST", "/api/v2/prompts/bot/publish", { key: publish.key, body: {} })).status).toBe(200);
    expect((await t.request("DELETE", "/api/v2/prompts/bot", { key: publish.key })).status).toBe(200);
    await t.app.tenants.revokeApiKey(write.id, { actor: "user:owner@example.com" });
    // A second revocation changes nothing.
    await t.app.tenants.revokeApiKey(write.id, { actor: "cli" });
    await t.app.tenants.setPlan(project.orgId, "pro", "cli");
    await t.app.tenants.setPlan(project.orgId, "pro", "cli");

    const page = await audit(publish.key);
    const byKey = `key:${publish.prefix}`;
    const byWriter = `key:${write.prefix}`;
    expect(page).toEqual({
      next_cursor: null,
      entries: [
        {
          id: ID,
          at: AT,
          actor: "cli",
          action: "plan.changed",
          target: project.orgId,
          before: "unlimited",
          after: "pro",
        },
        {
          id: ID,
          at: AT,
          actor: "user:owner@example.com",
          action: "key.revoked",
          target: write.id,
          before: "write",
          after: "revoked",
        },
        { id: ID, at: AT, actor: byKey, action: "prompt.deleted", target: "bot", before: second, after: null },
        { id: ID, at: AT, actor: byKey, action: "prompt.published", target: "bot", before: first, after: second },
        { id: ID, at: AT, actor: byWriter, action: "prompt.saved", target: "bot", before: first, after: second },
        { id: ID, at: AT, actor: byKey, action: "prompt.published", target: "bot", before: null, after: first },
        { id: ID, at: AT, actor: byKey, action: "prompt.created", target: "bot", before: null, after: first },
        {
          id: ID,
          at: AT,
          actor: "user:owner@example.com",
          action: "key.created",
          target: write.id,
          before: null,
          after: "write",
        },
        { id: ID, at: AT, actor: "cli", action: "key.created", target: publish.id, before: null, after: "publish" },
        {
          id: ID,
          at: AT,
          actor: "system",
          action: "key.created",
          target: project.keyId,
          before: null,
          after: "publish",
        },
      ],
    });
    expect(page.entries[6]?.at).toBe(created.body.data.created_at);
  });

  it("a save and publish in one request is two rows; a refused or failed change writes none", async () => {
    const { publish } = await setup();
    const created = await t.request("POST", "/api/v2/prompts", {
      key: publish.key,
      body: promptBody(1, { id: "bot" }),
    });
    const first = created.body.data.version;
    const saved = await t.request("PUT", "/api/v2/prompts/bot", {
      key: publish.key,
      body: promptBody(2, { publish: true, message: "v2" }),
    });
    const second = saved.body.data.version;
    const before = (await audit(publish.key)).entries;
    expect(before.slice(0, 3).map((e) => [e.action, e.before, e.after])).toEqual([
      ["prompt.published", null, second],
      ["prompt.saved", first, second],
      ["prompt.created", null, first],
    ]);
    const stale = await t.request("PUT", "/api/v2/prompts/bot", {
      key: publish.key,
      body: promptBody(3, { base_version: first }),
    });
    expect(stale.status).toBe(409);
    const missing = await t.request("POST", "/api/v2/prompts/nope/publish", { key: publish.key, body: {} });
    expect(missing.status).toBe(404);
    expect((await audit(publish.key)).entries).toEqual(before);
  });

  it("is written in the change's transaction: when the change fails after its audit row, neither is kept", async () => {
    const { publish } = await setup();
    await t.request("POST", "/api/v2/prompts", { key: publish.key, body: promptBody(1, { id: "bot" }) });
    const before = (await audit(publish.key)).entries;
    let failing = true;
    // The webhook sink runs in the change's transaction, after the audit row is written.
    t.app.prompts.addEventSink(async () => {
      if (failing) throw new Error("sink failed");
    });
    for (const [method, url, body] of [
      ["PUT", "/api/v2/prompts/bot", promptBody(2)],
      ["POST", "/api/v2/prompts/bot/publish", {}],
      ["POST", "/api/v2/prompts", promptBody(3)],
      ["DELETE", "/api/v2/prompts/bot", undefined],
    ] as const) {
      const res = await t.request(method, url, { key: publish.key, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${url}`).toBe(500);
    }
    expect((await audit(publish.key)).entries).toEqual(before);
    failing = false;
    expect((await t.request("DELETE", "/api/v2/prompts/bot", { key: publish.key })).status).toBe(200);
    expect((await audit(publish.key)).entries[0]).toMatchObject({ action: "prompt.deleted", target: "bot" });
  });

  it("shows the project's own rows and its organization's plan changes, never another project's", async () => {
    const { project, publish, write } = await setup();
    const sibling = await t.newProject({ orgId: project.orgId });
    const stranger = await t.newProject({ plan: "unlimited" });
    await t.request("POST", "/api/v2/prompts", { key: sibling.key, body: promptBody(1, { id: "theirs" }) });
    await t.request("POST", "/api/v2/prompts", { key: stranger.key, body: promptBody(1, { id: "strange" }) });
    await t.app.tenants.setPlan(stranger.orgId, "pro", "cli");
    await t.app.tenants.setPlan(project.orgId, "pro", "cli");
    const mine = (await audit(publish.key)).entries.map((e) => [e.action, e.target]);
    expect(mine).toEqual([
      ["plan.changed", project.orgId],
      ["key.created", write.id],
      ["key.created", publish.id],
      ["key.created", project.keyId],
    ]);
    const theirs = (await audit(sibling.key)).entries.map((e) => [e.action, e.target]);
    expect(theirs).toEqual([
      ["plan.changed", project.orgId],
      ["prompt.created", "theirs"],
      ["key.created", sibling.keyId],
    ]);
  });

  it("pages with limit and cursor, newest first, without gaps or repeats", async () => {
    const { publish } = await setup();
    for (let n = 0; n < 4; n++) {
      await t.request("POST", "/api/v2/prompts", { key: publish.key, body: promptBody(n, { id: `p${n}` }) });
    }
    const all = (await audit(publish.key)).entries;
    expect(all).toHaveLength(7);
    const pages = [];
    let cursor: string | null = null;
    do {
      const page = await audit(publish.key, `?limit=4${cursor ? `&cursor=${cursor}` : ""}`);
      pages.push(page.entries);
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(pages.map((p) => p.length)).toEqual([4, 3]);
    expect(pages.flat()).toEqual(all);
    const ids = all.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
  });

  it("needs a publish key; refuses bad queries naming the field", async () => {
    const { write } = await setup();
    const read = await t.app.tenants.createApiKey(t.project.projectId, { scope: "read" });
    for (const [key, held] of [
      [write.key, "write"],
      [read.key, "read"],
    ] as const) {
      const res = await t.request("GET", "/api/v2/audit", { key });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        success: false,
        error: `scope: reading the audit trail needs a key with scope publish; this key has scope ${held}`,
      });
    }
    for (const [query, error] of [
      ["?cursor=abc", "cursor: is not a valid cursor; pass next_cursor from the previous page"],
      [
        `?cursor=${Buffer.from("a0").toString("base64url")}`,
        "cursor: is not a valid cursor; pass next_cursor from the previous page",
      ],
      ["?limit=0", "limit: must be a whole number from 1 to 100"],
      ["?limit=101", "limit: must be a whole number from 1 to 100"],
    ]) {
      const res = await t.request("GET", `/api/v2/audit${query}`, { key: t.key });
      expect(res.status, query).toBe(400);
      expect(res.body.error, query).toBe(error);
    }
    expect((await t.request("GET", "/api/v2/audit", { key: null })).status).toBe(401);
  });
});
