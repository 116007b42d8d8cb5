import { EVENT_TYPES } from "@promptstore/core/events";
import { describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { member } from "../support/dashboard.js";
import { DATABASES, type TestDatabase } from "../support/databases.js";

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const ID = /^whk_[0-9a-f]{24}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** Every event type there is: an endpoint may subscribe to all of them. */
const ALL = [...EVENT_TYPES];
const ONE_OF = `must be one of ${EVENT_TYPES.join(", ")}`;
const HINT = "set PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE=true to allow private networks";

describe.each(DATABASES)("webhooks API ($name)", (database: TestDatabase) => {
  const t = useTestApp(database);

  it("creates, reads, lists, changes, rotates and removes an endpoint; the secret only in two answers", async () => {
    const created = await t.request("POST", "/api/v2/webhooks", {
      body: { url: "https://hooks.example.com/promptstore", events: ["prompt.published"], description: "deploys" },
    });
    expect(created.status).toBe(201);
    const { secret, ...view } = created.body.data;
    expect(secret).toMatch(SECRET);
    expect(Buffer.from(secret.slice("whsec_".length), "base64")).toHaveLength(32);
    expect(view).toEqual({
      id: expect.stringMatching(ID),
      url: "https://hooks.example.com/promptstore",
      description: "deploys",
      events: ["prompt.published"],
      enabled: true,
      created_at: expect.stringMatching(ISO),
      updated_at: view.created_at,
      secret_needs_rotation: false,
    });

    const read = await t.request("GET", `/api/v2/webhooks/${view.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ success: true, data: view });
    const listed = await t.request("GET", "/api/v2/webhooks");
    expect(listed.body).toEqual({ success: true, data: { webhooks: [view] } });

    const changed = await t.request("PATCH", `/api/v2/webhooks/${view.id}`, {
      body: { events: ["prompt.created", "prompt.published"], enabled: false, url: "https://hooks.example.com/v2" },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toEqual({
      ...view,
      url: "https://hooks.example.com/v2",
      events: ["prompt.created", "prompt.published"],
      enabled: false,
      updated_at: expect.stringMatching(ISO),
    });

    const rotated = await t.request("POST", `/api/v2/webhooks/${view.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).toMatch(SECRET);
    expect(rotated.body.data.secret).not.toBe(secret);
    const { secret: _rotated, ...rotatedView } = rotated.body.data;
    expect(rotatedView).toEqual({ ...changed.body.data, updated_at: expect.stringMatching(ISO) });

    // Never again: not in a read, a list, a change or the deliveries.
    for (const res of [
      await t.request("GET", `/api/v2/webhooks/${view.id}`),
      await t.request("GET", "/api/v2/webhooks"),
      await t.request("PATCH", `/api/v2/webhooks/${view.id}`, { body: { description: "x" } }),
      await t.request("GET", `/api/v2/webhooks/${view.id}/deliveries`),
    ]) {
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toContain("whsec_");
    }

    const removed = await t.request("DELETE", `/api/v2/webhooks/${view.id}`);
    expect(removed.body).toEqual({ success: true, data: { id: view.id, removed: true } });
    expect((await t.request("GET", `/api/v2/webhooks/${view.id}`)).status).toBe(404);
    expect((await t.request("GET", "/api/v2/webhooks")).body.data).toEqual({ webhooks: [] });
  });

  it("refuses bad input with a 400 naming the field", async () => {
    const cases: [unknown, string][] = [
      [{ url: "ftp://hooks.example.com/x", events: ALL }, "url: must be an http:// or https:// URL"],
      [{ url: "https://user:pw@hooks.example.com/x", events: ALL }, "url: must not contain a user name or password"],
      [{ url: "hooks.example.com/x", events: ALL }, "url: must be an absolute http:// or https:// URL"],
      [{ url: `https://hooks.example.com/${"a".repeat(2030)}`, events: ALL }, "url: must be at most 2048 characters"],
      [{ url: 42, events: ALL }, "url: must be a string, not a number"],
      [{ events: ALL }, "url: required"],
      [{ url: "https://hooks.example.com/x" }, "events: must be an array"],
      [{ url: "https://hooks.example.com/x", events: ["prompt.renamed"] }, `events[0]: ${ONE_OF}`],
      [
        { url: "https://hooks.example.com/x", events: ["prompt.created", "prompt.created"] },
        "events[1]: is listed twice",
      ],
      [
        { url: "https://hooks.example.com/x", events: ALL, description: "d".repeat(501) },
        "description: must be at most 500 characters",
      ],
      [{ url: "https://hooks.example.com/x", events: ALL, enabled: "yes" }, "enabled: must be true or false"],
      [{ url: "https://hooks.example.com/x", events: ALL, secret: "whsec_x" }, "secret: is not a known field"],
      [{ url: "http://127.0.0.1:8080/x", events: ALL }, `url: refused: 127.0.0.1, a loopback address; ${HINT}`],
      [{ url: "http://10.0.0.8/x", events: ALL }, `url: refused: 10.0.0.8, a private address; ${HINT}`],
      [
        { url: "http://169.254.169.254/latest/meta-data", events: ALL },
        `url: refused: 169.254.169.254, a link-local address; ${HINT}`,
      ],
      [{ url: "http://[fd00::1]/x", events: ALL }, `url: refused: fd00::1, a unique-local address; ${HINT}`],
      [
        { url: "http://[::ffff:127.0.0.1]/x", events: ALL },
        `url: refused: ::ffff:7f00:1, an IPv4-mapped address of a loopback address; ${HINT}`,
      ],
    ];
    for (const [body, error] of cases) {
      const res = await t.request("POST", "/api/v2/webhooks", { body });
      expect({ status: res.status, body: res.body }, JSON.stringify(body).slice(0, 80)).toEqual({
        status: 400,
        body: { success: false, error },
      });
    }
    const id = (
      await t.request("POST", "/api/v2/webhooks", { body: { url: "https://hooks.example.com/x", events: ALL } })
    ).body.data.id;
    const updates: [unknown, string][] = [
      [{}, "body: send at least one of url, events, description, enabled"],
      [{ url: "javascript:alert(1)" }, "url: must be an http:// or https:// URL"],
      [{ url: "http://192.168.1.20/x" }, `url: refused: 192.168.1.20, a private address; ${HINT}`],
      [{ events: ["prompt.saved"] }, `events[0]: ${ONE_OF}`],
      [{ enabled: null }, "enabled: must be true or false"],
      [{ project_id: "x" }, "project_id: is not a known field"],
    ];
    for (const [body, error] of updates) {
      const res = await t.request("PATCH", `/api/v2/webhooks/${id}`, { body });
      expect({ status: res.status, body: res.body }, JSON.stringify(body)).toEqual({
        status: 400,
        body: { success: false, error },
      });
    }
    const query = await t.request("GET", `/api/v2/webhooks/${id}/deliveries?limit=500`);
    expect(query.body).toEqual({ success: false, error: "limit: must be a whole number from 1 to 100" });
    const status = await t.request("GET", `/api/v2/webhooks/${id}/deliveries?status=lost`);
    expect(status.body).toEqual({ success: false, error: "status: must be one of pending, delivered, failed" });
    const rotate = await t.request("POST", `/api/v2/webhooks/${id}/rotate-secret`, { body: { secret: "mine" } });
    expect(rotate.body).toEqual({ success: false, error: "secret: is not a known field" });
  });

  it("allows at most 20 endpoints per project, whatever the plan", async () => {
    const unlimited = await t.newProject({ plan: "unlimited" });
    for (let i = 0; i < 20; i++) {
      const res = await t.request("POST", "/api/v2/webhooks", {
        key: unlimited.key,
        body: { url: `https://hooks.example.com/${i}`, events: ALL },
      });
      expect(res.status).toBe(201);
    }
    const over = await t.request("POST", "/api/v2/webhooks", {
      key: unlimited.key,
      body: { url: "https://hooks.example.com/21", events: ALL },
    });
    expect(over.status).toBe(403);
    expect(over.body.error).toBe("webhooks: a project may have at most 20 endpoints; remove one first");
    // Another project is not affected.
    expect(
      (await t.request("POST", "/api/v2/webhooks", { body: { url: "https://hooks.example.com/x", events: ALL } }))
        .status,
    ).toBe(201);
  });

  it("holds the 20-endpoint cap when 30 creates race: exactly 20 are made, the rest refused", async () => {
    const unlimited = await t.newProject({ plan: "unlimited" });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        t.request("POST", "/api/v2/webhooks", {
          key: unlimited.key,
          body: { url: `https://hooks.example.com/${i}`, events: ["prompt.published"] },
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(20).fill(201), ...Array(10).fill(403)]);
    const listed = await t.request("GET", "/api/v2/webhooks", { key: unlimited.key });
    expect(listed.body.data.webhooks).toHaveLength(20);
  });

  it("keeps each project's endpoints to its own key: another project's key gets 404, no key 401", async () => {
    const created = await t.request("POST", "/api/v2/webhooks", {
      body: { url: "https://hooks.example.com/mine", events: ALL },
    });
    const id = created.body.data.id;
    const other = await t.newProject({ orgId: t.project.orgId });
    const notFound = { success: false, error: `webhook ${id} not found` };
    const attempts: [string, string, unknown?][] = [
      ["GET", `/api/v2/webhooks/${id}`],
      ["PATCH", `/api/v2/webhooks/${id}`, { enabled: false }],
      ["POST", `/api/v2/webhooks/${id}/rotate-secret`, {}],
      ["GET", `/api/v2/webhooks/${id}/deliveries`],
      ["DELETE", `/api/v2/webhooks/${id}`],
    ];
    for (const [method, url, body] of attempts) {
      const res = await t.request(method, url, { key: other.key, ...(body ? { body } : {}) });
      expect({ status: res.status, body: res.body }, `${method} ${url}`).toEqual({ status: 404, body: notFound });
    }
    expect((await t.request("GET", "/api/v2/webhooks", { key: other.key })).body.data).toEqual({ webhooks: [] });
    expect((await t.request("GET", "/api/v2/webhooks", { key: null })).status).toBe(401);
    // Untouched by all of that.
    expect((await t.request("GET", `/api/v2/webhooks/${id}`)).body.data).toEqual({
      ...created.body.data,
      secret: undefined,
    });
    expect((await t.request("GET", "/api/v2/webhooks/whk_nothex")).status).toBe(404);
  });

  it("in the dashboard: editors and owners manage the project's endpoints, viewers may not, strangers see 404", async () => {
    const base = `/api/dashboard/projects/${t.project.projectId}/webhooks`;
    const owner = await member(t, "owner");
    const editor = await member(t, "editor");
    const viewer = await member(t, "viewer");

    const created = await editor.call("POST", base, {
      body: { url: "https://hooks.example.com/dash", events: ["prompt.created"] },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.secret).toMatch(SECRET);
    const id = created.body.data.id;
    // The same endpoint over REST, without its secret.
    const { secret: _s, ...view } = created.body.data;
    expect((await t.request("GET", `/api/v2/webhooks/${id}`)).body.data).toEqual(view);

    expect((await owner.call("GET", base)).body.data).toEqual({ webhooks: [view] });
    const patched = await owner.call("PATCH", `${base}/${id}`, { body: { description: "owner's note" } });
    expect(patched.body.data.description).toBe("owner's note");
    expect((await editor.call("GET", `${base}/${id}/deliveries`)).body.data).toEqual({ deliveries: [] });
    const bad = await editor.call("POST", base, { body: { url: "ftp://x", events: ["prompt.created"] } });
    expect(bad.body).toEqual({ success: false, error: "url: must be an http:// or https:// URL" });

    const refused = { success: false, error: "role: viewer may not do this; it needs editor or owner" };
    for (const [method, url] of [
      ["GET", base],
      ["POST", base],
      ["PATCH", `${base}/${id}`],
      ["DELETE", `${base}/${id}`],
      ["GET", `${base}/${id}/deliveries`],
    ] as const) {
      const res = await viewer.call(method, url, method === "GET" ? {} : { body: { enabled: false } });
      expect({ status: res.status, body: res.body }, `${method} ${url}`).toEqual({ status: 403, body: refused });
    }

    const stranger = await t.newProject();
    const outsider = await member(t, "owner");
    await t.app.accounts.store.changeMembership(t.project.orgId, outsider.userId, { remove: true });
    const hidden = await outsider.call("GET", base);
    expect(hidden.status).toBe(404);
    const foreign = await owner.call("PATCH", `/api/dashboard/projects/${stranger.projectId}/webhooks/${id}`, {
      body: { enabled: false },
    });
    expect(foreign.status).toBe(404);
    expect((await owner.call("DELETE", `${base}/${id}`)).body.data).toEqual({ id, removed: true });
  });

  it("is in the OpenAPI document, every field described", async () => {
    const doc = (await t.request("GET", "/api/v2/openapi.json", { key: null })).body;
    expect(Object.keys(doc.paths["/api/v2/webhooks"])).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/api/v2/webhooks/{id}"])).toEqual(["get", "patch", "delete"]);
    expect(Object.keys(doc.paths["/api/v2/webhooks/{id}/rotate-secret"])).toEqual(["post"]);
    expect(Object.keys(doc.paths["/api/v2/webhooks/{id}/deliveries"])).toEqual(["get"]);
    const create = doc.paths["/api/v2/webhooks"].post.requestBody.content["application/json"].schema;
    expect(create.required).toEqual(["url", "events"]);
    expect(create.additionalProperties).toBe(false);
    for (const [name, field] of Object.entries<any>(create.properties)) {
      expect(field.description, `body.${name}`).toEqual(expect.any(String));
    }
    const update = doc.paths["/api/v2/webhooks/{id}"].patch.requestBody.content["application/json"].schema;
    expect(Object.keys(update.properties)).toEqual(["url", "events", "description", "enabled"]);
    for (const [name, field] of Object.entries<any>(update.properties)) {
      expect(field.description, `patch.${name}`).toEqual(expect.any(String));
    }
    const deliveries = doc.paths["/api/v2/webhooks/{id}/deliveries"].get;
    expect(deliveries.parameters.map((p: { name: string }) => p.name)).toEqual(["id", "limit", "status"]);
    expect(deliveries.parameters[0].description).toBe("Webhook endpoint id (whk_…)");
    const item =
      deliveries.responses["200"].content["application/json"].schema.properties.data.properties.deliveries.items;
    for (const [name, field] of Object.entries<any>(item.properties)) {
      expect(field.description, `delivery.${name}`).toEqual(expect.any(String));
    }
    expect(doc.paths["/api/v2/webhooks/{id}/rotate-secret"].post.requestBody.required).toBe(false);
    const created = doc.paths["/api/v2/webhooks"].post.responses["201"];
    expect(created.description).toBe("Success");
    // The one answer that carries the secret.
    expect(Object.keys(created.content["application/json"].schema.properties.data.properties)).toEqual([
      "id",
      "url",
      "description",
      "events",
      "enabled",
      "created_at",
      "updated_at",
      "secret_needs_rotation",
      "secret",
    ]);
  });
});
