import { Writable } from "node:stream";
import { EVENT_TYPES } from "@promptstore/core/events";
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config.js";
import { type App, buildApp } from "../../src/http/app.js";
import { SecretBox } from "../../src/secrets/secret-box.js";
import { openStore, type Store } from "../../src/store/index.js";
import { WebhookStore } from "../../src/store/webhooks.js";
import { promptBody } from "../support/app.js";
import { DATABASES, freshStore, type TestDatabase } from "../support/databases.js";
import { eventually, type Receiver, startReceiver } from "./receiver.js";

const ALL = [...EVENT_TYPES];

/**
 * Two instances on one database: every delivery is claimed by one of them at a time (a conditional update
 * of `locked_until`), so no attempt is made twice at once and every message arrives once.
 */
describe.each(DATABASES)("webhook claims across instances ($name)", (database: TestDatabase) => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of cleanup.splice(0).reverse()) await close();
  });

  async function twoStores(): Promise<{ url: string; first: Store; second: Store }> {
    const fresh = await freshStore(database);
    const second = await openStore(fresh.url);
    cleanup.push(fresh.close, () => second.close());
    return { url: fresh.url, first: fresh.store, second };
  }

  it("lets exactly one of many concurrent claims win, frees a claim when its lock ends, ignores a stale holder", async () => {
    const { first, second } = await twoStores();
    const app = await buildApp({ store: first, config: defaultConfig() });
    cleanup.push(() => app.server.close());
    const org = await app.tenants.createOrganization("claims", "unlimited");
    const project = await app.tenants.createProject(org.id, "Claims");
    const at = new Date().toISOString();
    await first.db
      .insertInto("webhook_endpoints")
      .values({
        id: "whk_000000000000000000000001",
        project_id: project.id,
        url: "https://hooks.example.com/x",
        description: "",
        event_types: JSON.stringify(ALL),
        // Disabled: the app's own dispatcher leaves it alone; this test claims by hand.
        enabled: 0,
        secret: "whsec_AAAA",
        created_at: at,
        updated_at: at,
      })
      .execute();
    const stores = [new WebhookStore(first.db), new WebhookStore(second.db)];
    await first.db
      .insertInto("webhook_deliveries")
      .values({
        endpoint_id: "whk_000000000000000000000001",
        project_id: project.id,
        event_id: 1,
        event_type: "prompt.created",
        prompt_id: "p",
        payload: "{}",
        status: "pending",
        attempts: 0,
        next_attempt_at: at,
        created_at: at,
      })
      .execute();
    const [row] = await first.db.selectFrom("webhook_deliveries").select("id").execute();
    const id = Number(row!.id);

    const now = new Date().toISOString();
    const lockedUntil = new Date(Date.now() + 30_000).toISOString();
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => stores[i % 2]!.claim(id, `token-${i}`, now, lockedUntil)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = `token-${results.indexOf(true)}`;
    expect(
      await first.db.selectFrom("webhook_deliveries").select(["lock_token", "locked_until"]).executeTakeFirst(),
    ).toEqual({ lock_token: winner, locked_until: lockedUntil });

    // Still held: nobody else gets it. Once the lock has ended (a holder that died), the next claim wins.
    expect(await stores[1]!.claim(id, "late", now, lockedUntil)).toBe(false);
    const later = new Date(Date.now() + 31_000).toISOString();
    expect(await stores[1]!.claim(id, "after-expiry", later, new Date(Date.now() + 61_000).toISOString())).toBe(true);
    // The first holder, back from the dead, cannot record its outcome over the new holder's.
    const outcome = {
      status: "delivered" as const,
      attempted_at: now,
      first_attempt_at: now,
      response_code: 200,
      error: null,
      next_attempt_at: null,
    };
    expect(await stores[0]!.complete(id, winner, outcome)).toBe(false);
    expect(await stores[1]!.complete(id, "after-expiry", outcome)).toBe(true);
    expect(
      await first.db
        .selectFrom("webhook_deliveries")
        .select(["status", "attempts", "lock_token", "locked_until", "last_response_code"])
        .executeTakeFirst(),
    ).toEqual({ status: "delivered", attempts: 1, lock_token: null, locked_until: null, last_response_code: 200 });
    // Delivered: nobody can claim it any more.
    expect(await stores[0]!.claim(id, "again", later, lockedUntil)).toBe(false);
  });

  it("delivers every message once, in order, with two instances dispatching from one database", async () => {
    const { first, second } = await twoStores();
    const config = defaultConfig({ PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: true, PROMPTSTORE_WEBHOOK_RETRY_SCALE: 0.001 });
    const apps: App[] = [];
    // One secret key for both, as every instance of a deployment has (`serve` proves it against the store).
    // Each with a key of its own, the instance that had not created the endpoint could not open its secret:
    // each of its claims was an attempt that sent nothing, retried at once on this scale, so it held the queue
    // while the other looked only every few seconds (CI: a retry stuck for 30 s; once nothing sent in 75 s).
    const secrets = SecretBox.ephemeral();
    // What either dispatcher reports (an outcome it could not record, a query that failed): shown if the wait
    // below runs out, so that a failure in a loaded CI run says why.
    const warnings: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        const line = JSON.parse(String(chunk));
        warnings.push(`${new Date(line.time).toISOString()} ${line.msg}: ${line.err?.type} ${line.err?.message}`);
        done();
      },
    });
    for (const store of [first, second]) {
      const app = await buildApp({ store, config, secrets, logger: { level: "warn", stream } });
      await app.server.ready();
      apps.push(app);
      cleanup.push(() => app.server.close());
    }
    const org = await apps[0]!.tenants.createOrganization("two", "unlimited");
    const project = await apps[0]!.tenants.createProject(org.id, "Two");
    const key = (await apps[0]!.tenants.createApiKey(project.id)).key;
    const call = async (app: App, method: string, url: string, body?: unknown) => {
      const res = await app.server.inject({
        method: method as "POST",
        url,
        headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      return { status: res.statusCode, body: res.json() };
    };

    // A slow receiver that fails every third request: attempts overlap the other instance's looks.
    let count = 0;
    const hook: Receiver = await startReceiver((_req, _n, res) => {
      const status = ++count % 3 === 0 ? 500 : 200;
      setTimeout(() => res.writeHead(status).end(), 30);
      return undefined;
    });
    cleanup.push(() => hook.close());
    const created = await call(apps[1]!, "POST", "/api/v2/webhooks", { url: hook.url, events: ALL });
    expect(created.status).toBe(201);

    const expected: string[] = [];
    for (let n = 0; n < 6; n++) {
      const app = apps[n % 2]!;
      expect((await call(app, "POST", "/api/v2/prompts", promptBody(n))).status).toBe(201);
      expect((await call(app, "POST", `/api/v2/prompts/prompt-${n}/publish`, {})).status).toBe(200);
      expected.push(`created prompt-${n}`, `published prompt-${n}`);
    }
    // What this asserts is order and exactly-once, not speed: alone it takes 2 to 6 s. The wait covers a lost
    // attempt's claim expiring (three attempt timeouts, 30 s), the longest a delivery may wait by design; if it
    // still runs out, the dispatchers' warnings say why.
    const started = Date.now();
    await hook
      .waitFor(() => hook.delivered().length === expected.length, 45_000)
      .catch((error: Error) => {
        throw new Error(`${error.message}\nafter ${Date.now() - started} ms; warnings:\n${warnings.join("\n")}`);
      });
    // Settle: nothing more may come.
    await new Promise((r) => setTimeout(r, 300));

    const delivered = hook.delivered().map((r) => JSON.parse(r.body));
    expect(delivered.map((b) => `${b.type.slice("prompt.".length)} ${b.data.prompt_id}`)).toEqual(expected);
    const deliveredIds = hook.delivered().map((r) => r.headers["webhook-id"]);
    expect(new Set(deliveredIds).size).toBe(expected.length);
    // No message was ever in flight twice: requests come one at a time, each failed one followed by its retry.
    const all = hook.requests.map((r) => r.headers["webhook-id"]);
    expect(all.filter((id, i) => all.indexOf(id) !== i)).toEqual(
      hook.requests.flatMap((r, i) => (r.status === 500 ? [all[i + 1]] : [])),
    );
    const rows = await eventually(
      () => first.db.selectFrom("webhook_deliveries").select(["status"]).execute(),
      (list) => list.every((r) => r.status === "delivered"),
    );
    expect(rows.map((r) => r.status)).toEqual(new Array(expected.length).fill("delivered"));
    // Every attempt either instance made reached the receiver: none was one that could not sign.
    const attempts = await first.db.selectFrom("webhook_deliveries").select(["attempts"]).execute();
    expect(attempts.reduce((sum, r) => sum + Number(r.attempts), 0)).toBe(hook.requests.length);
  });
});
