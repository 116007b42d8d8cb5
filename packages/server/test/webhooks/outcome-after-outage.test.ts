/**
 * An attempt's outcome is known once the receiver has answered; the database may be away at that moment (a
 * restart). The claim is still the instance's until it expires, so the outcome is recorded once the database is
 * back: the delivery is not attempted again, and the receiver gets the message once.
 */
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config.js";
import { buildApp } from "../../src/http/app.js";
import { openStore } from "../../src/store/index.js";
import { promptBody } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { tcpProxy } from "../support/tcp-proxy.js";
import { eventually, startReceiver } from "./receiver.js";

const postgres = DATABASES.find((d) => d.name === "postgres");
/** The attempt's time limit: a claim lasts three of them (3 s), after which another look may take it. */
const TIMEOUT_MS = 1000;
const CLAIM_MS = 3 * TIMEOUT_MS;
/** How long the database stays away once the receiver has the message. */
const AWAY_MS = 600;

describe.skipIf(!postgres)("a webhook attempt's outcome when the database is away as it ends (postgres)", () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of cleanup.splice(0).reverse()) await close();
  });

  it("is recorded once the database is back, and the message is not sent again when the claim ends", async () => {
    const { url, drop } = await postgres!.create();
    cleanup.push(drop);
    const target = new URL(url);
    const proxy = await tcpProxy(target.hostname, Number(target.port || 5432));
    cleanup.push(() => proxy.close());
    const proxied = new URL(url);
    proxied.host = `127.0.0.1:${proxy.port}`;
    const store = await openStore(proxied.toString());
    cleanup.push(() => store.close());
    const app = await buildApp({
      store,
      config: defaultConfig({
        PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: true,
        PROMPTSTORE_WEBHOOK_RETRY_SCALE: 0.001,
        PROMPTSTORE_WEBHOOK_TIMEOUT_MS: TIMEOUT_MS,
      }),
    });
    await app.server.ready();
    cleanup.push(() => app.server.close());
    const org = await app.tenants.createOrganization("blip", "unlimited");
    const project = await app.tenants.createProject(org.id, "Blip");
    const key = (await app.tenants.createApiKey(project.id)).key;
    const call = async (method: "GET" | "POST", path: string, body?: unknown) => {
      const res = await app.server.inject({
        method,
        url: path,
        headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      return { status: res.statusCode, body: res.json() };
    };

    // The first request takes the database away, then answers 200; the database comes back AWAY_MS later.
    const hook = await startReceiver((_request, index, res) => {
      if (index > 0) return 200;
      proxy.cut();
      setTimeout(() => res.writeHead(200).end(), 20);
      setTimeout(() => proxy.resume(), AWAY_MS);
      return undefined;
    });
    cleanup.push(() => hook.close());
    const created = await call("POST", "/api/v2/webhooks", { url: hook.url, events: ["prompt.created"] });
    expect(created.status).toBe(201);
    expect((await call("POST", "/api/v2/prompts", promptBody(1))).status).toBe(201);

    await hook.waitFor((requests) => requests.length === 1 && requests[0]!.status === 200);
    const sentAt = Date.now();
    const deliveries = async () =>
      (await call("GET", `/api/v2/webhooks/${created.body.data.id}/deliveries`)).body.data?.deliveries ?? [];
    const [recorded] = await eventually(deliveries, (list: any[]) => list[0]?.status === "delivered");
    expect(recorded).toMatchObject({ status: "delivered", attempts: 1, last_response_code: 200, last_error: null });
    // Past the end of the claim the attempt held: a claim left behind would be taken and the message sent again.
    await new Promise((r) => setTimeout(r, Math.max(0, sentAt + CLAIM_MS + 1500 - Date.now())));
    expect(hook.requests.map((r) => [r.headers["webhook-id"], r.status])).toEqual([
      [hook.requests[0]!.headers["webhook-id"], 200],
    ]);
    expect((await deliveries()).map((d: any) => [d.status, d.attempts])).toEqual([["delivered", 1]]);
  }, 30_000);
});
