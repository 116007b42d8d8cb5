import { EVENT_TYPES } from "@promptstore/core/events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config.js";
import { type App, buildApp } from "../../src/http/app.js";
import { SecretBox } from "../../src/secrets/secret-box.js";
import { sealPlainWebhookSecrets, unreadableWebhookSecrets } from "../../src/service/webhooks/webhook-secrets.js";
import { newWebhookId } from "../../src/store/webhooks.js";
import { promptBody } from "../support/app.js";
import { DATABASES, freshStore, type TestDatabase } from "../support/databases.js";
import { eventually, type Receiver, startReceiver, verify } from "./receiver.js";

const FAST = defaultConfig({
  PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: true,
  PROMPTSTORE_WEBHOOK_RETRY_SCALE: 0.001,
  PROMPTSTORE_WEBHOOK_TIMEOUT_MS: 1000,
});
const SEALED = /^enc:v1:[0-9a-f]{16}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/;
const PLAIN = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;

describe.each(DATABASES)("webhook signing secrets at rest ($name)", (database: TestDatabase) => {
  let fresh: Awaited<ReturnType<typeof freshStore>>;
  let apps: App[] = [];
  let hook: Receiver;
  beforeEach(async () => {
    fresh = await freshStore(database);
    hook = await startReceiver();
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.server.close();
    await hook.close();
    await fresh.close();
  });

  async function start(secrets: SecretBox) {
    const app = await buildApp({ store: fresh.store, config: FAST, secrets });
    apps.push(app);
    await app.server.ready();
    return app;
  }
  async function call(app: App, key: string, method: string, url: string, body?: unknown) {
    const res = await app.server.inject({
      method: method as "GET",
      url,
      headers: { "x-api-key": key, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
    return { status: res.statusCode, body: res.json() };
  }
  async function project(app: App) {
    const org = await app.tenants.createOrganization(`org-${Date.now()}`, "unlimited");
    const created = await app.tenants.createProject(org.id, "Hooks");
    return (await app.tenants.createApiKey(created.id)).key;
  }
  const storedSecret = async (id: string) =>
    (
      await fresh.store.db
        .selectFrom("webhook_endpoints")
        .select("secret")
        .where("id", "=", id)
        .executeTakeFirstOrThrow()
    ).secret;

  it("stores the secret sealed under the server's key, bound to its endpoint, and signs with the plain one", async () => {
    const box = SecretBox.ephemeral();
    const app = await start(box);
    const key = await project(app);
    const created = await call(app, key, "POST", "/api/v2/webhooks", { url: hook.url, events: [...EVENT_TYPES] });
    expect(created.status).toBe(201);
    const { id, secret } = created.body.data;
    const stored = await storedSecret(id);
    expect(stored).toMatch(SEALED);
    expect(stored.split(":")[2]).toBe(box.keyId);
    expect(stored).not.toContain(secret.slice("whsec_".length, 20));
    expect(box.decrypt(stored, `webhook:${id}`)).toBe(secret);
    // Copied into another endpoint's row, it does not open.
    expect(() => box.decrypt(stored, "webhook:whk_000000000000000000000000")).toThrow(/altered or belongs/);

    expect((await call(app, key, "POST", "/api/v2/prompts", promptBody(1))).status).toBe(201);
    await hook.waitFor((r) => r.length === 1);
    expect(verify(secret, hook.requests[0]!)).toMatchObject({ type: "prompt.created" });

    const rotated = await call(app, key, "POST", `/api/v2/webhooks/${id}/rotate-secret`, {});
    const after = await storedSecret(id);
    expect(after).toMatch(SEALED);
    expect(after).not.toBe(stored);
    expect(box.decrypt(after, `webhook:${id}`)).toBe(rotated.body.data.secret);
  });

  it("the start-up step seals every plain secret once, even with several instances at once, and is idempotent", async () => {
    const box = SecretBox.ephemeral();
    const app = await start(box);
    await project(app);
    const projectId = (await fresh.store.db.selectFrom("projects").select("id").executeTakeFirstOrThrow()).id;
    const ids = [newWebhookId(), newWebhookId(), newWebhookId()];
    // Rows as a store written before secrets were sealed holds them.
    for (const [n, id] of ids.entries()) {
      await fresh.store.db
        .insertInto("webhook_endpoints")
        .values({
          id,
          project_id: projectId,
          url: `https://hooks.example.com/${n}`,
          description: "",
          event_types: JSON.stringify(EVENT_TYPES),
          enabled: 1,
          secret: `${PLAIN.slice(0, -4)}${n}AA=`,
          created_at: "2026-01-01T00:00:00.000Z",
          updated_at: "2026-01-01T00:00:00.000Z",
        })
        .execute();
    }
    const counts = await Promise.all([1, 2, 3, 4].map(() => sealPlainWebhookSecrets(fresh.store.db, box)));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(3);
    for (const [n, id] of ids.entries()) {
      const stored = await storedSecret(id);
      expect(stored).toMatch(SEALED);
      expect(box.decrypt(stored, `webhook:${id}`)).toBe(`${PLAIN.slice(0, -4)}${n}AA=`);
    }
    expect(await sealPlainWebhookSecrets(fresh.store.db, box)).toBe(0);
    expect(await unreadableWebhookSecrets(fresh.store.db, box)).toEqual([]);
  });

  it("under another key: the endpoint says its secret needs rotating, deliveries fail saying why, rotation fixes it", async () => {
    const first = await start(SecretBox.ephemeral());
    const key = await project(first);
    const created = await call(first, key, "POST", "/api/v2/webhooks", { url: hook.url, events: [...EVENT_TYPES] });
    const { id, secret: oldSecret } = created.body.data;
    await first.server.close();
    apps = apps.filter((a) => a !== first);

    // The same store under another key, as after a restore elsewhere.
    const box = SecretBox.ephemeral();
    const app = await start(box);
    const listed = await call(app, key, "GET", "/api/v2/webhooks");
    expect(listed.body.data.webhooks.map((w: any) => [w.id, w.secret_needs_rotation])).toEqual([[id, true]]);
    const unreadable = await unreadableWebhookSecrets(fresh.store.db, box);
    expect(unreadable).toEqual([
      {
        id,
        project_id: expect.any(String),
        url: hook.url,
        reason: expect.stringMatching(
          /^its signing secret was encrypted with another secret key \(key id [0-9a-f]{16}\); rotate the secret$/,
        ),
      },
    ]);

    expect((await call(app, key, "POST", "/api/v2/prompts", promptBody(1))).status).toBe(201);
    const failing = await eventually(
      async () => (await call(app, key, "GET", `/api/v2/webhooks/${id}/deliveries`)).body.data.deliveries,
      (list: any[]) => list[0]?.attempts >= 1,
    );
    expect(failing[0]).toMatchObject({
      status: "pending",
      last_response_code: null,
      last_error: unreadable[0]!.reason.replace(/^/, "not sent: "),
    });
    // Nothing was sent: no request signed with anything.
    expect(hook.requests).toEqual([]);

    const rotated = await call(app, key, "POST", `/api/v2/webhooks/${id}/rotate-secret`, {});
    expect(rotated.body.data.secret_needs_rotation).toBe(false);
    expect(rotated.body.data.secret).not.toBe(oldSecret);
    // The waiting delivery goes out at once, signed with the new secret.
    await hook.waitFor((r) => r.length === 1);
    expect(verify(rotated.body.data.secret, hook.requests[0]!)).toMatchObject({ type: "prompt.created" });
    expect(() => verify(oldSecret, hook.requests[0]!)).toThrow();
    const delivered = await eventually(
      async () => (await call(app, key, "GET", `/api/v2/webhooks/${id}/deliveries`)).body.data.deliveries,
      (list: any[]) => list[0]?.status === "delivered",
    );
    expect(delivered).toHaveLength(1);
    expect((await call(app, key, "GET", `/api/v2/webhooks/${id}`)).body.data.secret_needs_rotation).toBe(false);
    expect(await unreadableWebhookSecrets(fresh.store.db, box)).toEqual([]);
  });
});
