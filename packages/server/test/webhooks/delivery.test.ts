import { EVENT_TYPES } from "@promptstore/core/events";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VERSION } from "../../src/version.js";
import { promptBody, type TestApp, useTestApp } from "../support/app.js";
import { DATABASES, type TestDatabase } from "../support/databases.js";
import { eventually, type Receiver, startReceiver, verify } from "./receiver.js";

const ALL = [...EVENT_TYPES];
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const HINT = "set PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE=true to allow private networks";

/** Loopback is allowed (the receiver is there); retry waits are a thousandth of the real ones (30 s → 30 ms). */
const FAST = {
  PROMPTSTORE_WEBHOOK_ALLOW_PRIVATE: true,
  PROMPTSTORE_WEBHOOK_RETRY_SCALE: 0.001,
  PROMPTSTORE_WEBHOOK_TIMEOUT_MS: 1000,
};

const receivers: Receiver[] = [];
async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const started = await startReceiver(...args);
  receivers.push(started);
  return started;
}
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

/** Polling the deliveries takes many requests: no rate limit for the test's organization. */
function unlimited(t: TestApp): void {
  beforeEach(() => t.app.tenants.setPlan(t.project.orgId, "unlimited"));
}

async function endpoint(t: TestApp, url: string, events = ALL, key?: string): Promise<{ id: string; secret: string }> {
  const res = await t.request("POST", "/api/v2/webhooks", { body: { url, events }, ...(key ? { key } : {}) });
  expect(res.status).toBe(201);
  return res.body.data;
}

const deliveries = async (t: TestApp, id: string, key?: string): Promise<any[]> =>
  (await t.request("GET", `/api/v2/webhooks/${id}/deliveries`, key ? { key } : {})).body.data.deliveries;

const ids = (requests: { headers: Record<string, unknown> }[]) => requests.map((r) => r.headers["webhook-id"]);

describe.each(DATABASES)("webhook deliveries ($name)", (database: TestDatabase) => {
  const t = useTestApp(database, FAST);
  unlimited(t);

  it("signs each request per Standard Webhooks: verified by the standardwebhooks library, headers and body exact", async () => {
    const hook = await receiver();
    const { id, secret } = await endpoint(t, hook.url);
    const created = await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
    expect(created.status).toBe(201);
    await hook.waitFor((r) => r.length === 1);

    const [delivery] = await eventually(
      () => deliveries(t, id),
      (list) => list[0]?.status === "delivered",
    );
    const request = hook.requests[0]!;
    const eventId: number = delivery.event_id;
    expect(verify(secret, request)).toEqual({
      type: "prompt.created",
      timestamp: created.body.data.created_at,
      data: {
        project_id: t.project.projectId,
        id: eventId,
        type: "prompt.created",
        prompt_id: "prompt-1",
        version: created.body.data.version,
        production_version: null,
        latest_version: created.body.data.version,
        at: created.body.data.created_at,
      },
    });
    // The body is exactly the signed bytes, keys in this order.
    expect(request.body).toBe(
      `{"type":"prompt.created","timestamp":"${created.body.data.created_at}","data":{"project_id":"${t.project.projectId}","id":${eventId},"type":"prompt.created","prompt_id":"prompt-1","version":"${created.body.data.version}","production_version":null,"latest_version":"${created.body.data.version}","at":"${created.body.data.created_at}"}}`,
    );
    expect(request.headers["webhook-id"]).toBe(`msg_${eventId}`);
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["user-agent"]).toBe(`Promptstore-Webhooks/${VERSION}`);
    const sentAt = Number(request.headers["webhook-timestamp"]);
    expect(Math.abs(sentAt - Date.now() / 1000)).toBeLessThan(10);
    expect(request.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // A changed body, another secret or another id does not verify.
    expect(() => verify(secret, { ...request, body: request.body.replace("prompt-1", "prompt-2") })).toThrow(
      "No matching signature found",
    );
    expect(() => verify(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, request)).toThrow(
      "No matching signature found",
    );
    expect(() =>
      new Webhook(secret).verify(request.body, {
        "webhook-id": "msg_0",
        "webhook-timestamp": String(request.headers["webhook-timestamp"]),
        "webhook-signature": String(request.headers["webhook-signature"]),
      }),
    ).toThrow("No matching signature found");

    expect(delivery).toEqual({
      id: expect.any(Number),
      webhook_id: id,
      event_id: eventId,
      event_type: "prompt.created",
      prompt_id: "prompt-1",
      status: "delivered",
      attempts: 1,
      next_attempt_at: null,
      last_attempt_at: expect.stringMatching(ISO),
      last_response_code: 204,
      last_error: null,
      created_at: created.body.data.created_at,
      delivered_at: delivery.last_attempt_at,
    });
  });

  it("records the delivery with the change, before any attempt; a change rolled back queues nothing", async () => {
    // A receiver that never answers: the delivery stays pending while the test looks.
    const hook = await receiver(() => undefined);
    const { id } = await endpoint(t, hook.url);
    const started = Date.now();
    const created = await t.request("POST", "/api/v2/prompts", { body: promptBody(2) });
    expect(created.status).toBe(201);
    // The write never waits for the receiver (whose attempt times out only after 1 s).
    expect(Date.now() - started).toBeLessThan(900);
    const rows = await t.store.db.selectFrom("webhook_deliveries").select(["endpoint_id", "event_type"]).execute();
    expect(rows).toEqual([{ endpoint_id: id, event_type: "prompt.created" }]);

    // A sink after the webhooks' one fails: the change and its deliveries are rolled back together.
    t.app.prompts.addEventSink(async () => {
      throw new Error("sink failure");
    });
    const failed = await t.request("POST", "/api/v2/prompts", { body: promptBody(3) });
    expect(failed.status).toBe(500);
    expect((await t.request("GET", "/api/v2/prompts/prompt-3")).status).toBe(404);
    const after = await t.store.db.selectFrom("webhook_deliveries").select("event_type").execute();
    expect(after).toEqual([{ event_type: "prompt.created" }]);

    const timedOut = await eventually(
      () => deliveries(t, id),
      (list) => list[0]?.attempts >= 1,
    );
    expect(timedOut[0]).toMatchObject({
      status: "pending",
      last_response_code: null,
      last_error: "timed out after 1000 ms",
      next_attempt_at: expect.stringMatching(ISO),
    });
  });

  it("retries after a 500 with backoff, the same message each time, until it is delivered", async () => {
    let failing = true;
    const hook = await receiver((_req, _n, res) => {
      if (!failing) return 200;
      res.writeHead(500, { "content-type": "text/plain" }).end("boom\n");
      return undefined;
    });
    const { id, secret } = await endpoint(t, hook.url);
    await t.request("POST", "/api/v2/prompts", { body: promptBody(4) });

    const pending = await eventually(
      () => deliveries(t, id),
      (list) => list[0]?.attempts >= 2,
    );
    expect(pending[0]).toMatchObject({
      status: "pending",
      last_response_code: 500,
      last_error: "HTTP 500: boom",
      next_attempt_at: expect.stringMatching(ISO),
      delivered_at: null,
    });
    expect(Date.parse(pending[0].next_attempt_at)).toBeGreaterThan(Date.parse(pending[0].last_attempt_at));

    failing = false;
    const [done] = await eventually(
      () => deliveries(t, id),
      (list) => list[0]?.status === "delivered",
    );
    expect(done).toMatchObject({
      status: "delivered",
      attempts: hook.requests.length,
      last_response_code: 200,
      last_error: null,
      next_attempt_at: null,
    });
    expect(hook.requests.length).toBeGreaterThanOrEqual(3);
    // Every attempt carries the same id, its own timestamp and signature, and verifies.
    expect(new Set(ids(hook.requests))).toEqual(new Set([`msg_${done.event_id}`]));
    for (const request of hook.requests) expect(verify(secret, request)).toMatchObject({ type: "prompt.created" });
    expect(hook.requests.map((r) => r.status)).toEqual([...new Array(hook.requests.length - 1).fill(500), 200]);
  });

  it("sends one endpoint's events in order: none before the one ahead of it is delivered", async () => {
    let answered = 0;
    // The first message fails twice before it gets through; everything behind it must wait.
    const hook = await receiver(() => (++answered <= 2 ? 503 : 200));
    const { id } = await endpoint(t, hook.url);
    const first = await t.request("POST", "/api/v2/prompts", { body: promptBody(5) });
    const v1 = first.body.data.version;
    const saved = await t.request("PUT", "/api/v2/prompts/prompt-5", { body: { markdown: "# Role\nsecond" } });
    const v2 = saved.body.data.version;
    const v3 = (
      await t.request("PUT", "/api/v2/prompts/prompt-5", { body: { markdown: "# Role\nthird", publish: true } })
    ).body.data.version;
    await t.request("POST", "/api/v2/prompts/prompt-5/publish", { body: { version: v1 } });

    await hook.waitFor(() => hook.delivered().length === 5);
    const bodies = hook.delivered().map((r) => JSON.parse(r.body));
    expect(bodies.map((b) => [b.type, b.data.version, b.data.production_version, b.data.latest_version])).toEqual([
      ["prompt.created", v1, null, v1],
      ["prompt.version_saved", v2, null, v2],
      ["prompt.version_saved", v3, null, v3],
      ["prompt.published", v3, v3, v3],
      ["prompt.published", v1, v1, v3],
    ]);
    const eventIds = bodies.map((b) => b.data.id);
    expect(eventIds).toEqual([...eventIds].sort((a, b) => a - b));
    // All requests, failed ones included, in event order: msg 1, msg 1, msg 1, msg 2, …
    expect(ids(hook.requests)).toEqual([eventIds[0], eventIds[0], ...eventIds].map((n) => `msg_${n}`));
    // The receiver has answered; the outcome of the last attempt is recorded right after.
    const recorded = await eventually(
      () => deliveries(t, id),
      (list) => list.every((d) => d.status === "delivered"),
    );
    expect(recorded.map((d) => [d.event_id, d.status, d.attempts])).toEqual(
      [...eventIds].reverse().map((n, i) => [n, "delivered", i === 4 ? 3 : 1]),
    );
  });

  it("a failing endpoint holds back only its own queue", async () => {
    const down = await receiver(() => 500);
    const up = await receiver(() => 200);
    const broken = await endpoint(t, down.url);
    const healthy = await endpoint(t, up.url, ["prompt.created"]);
    for (const n of [6, 7, 8])
      expect((await t.request("POST", "/api/v2/prompts", { body: promptBody(n) })).status).toBe(201);
    await up.waitFor((r) => r.length === 3);
    expect(up.delivered().map((r) => JSON.parse(r.body).data.prompt_id)).toEqual(["prompt-6", "prompt-7", "prompt-8"]);
    const done = await eventually(
      () => deliveries(t, healthy.id),
      (list) => list.every((d) => d.status === "delivered"),
    );
    expect(done.map((d) => d.status)).toEqual(["delivered", "delivered", "delivered"]);
    // The broken endpoint is still on its first message.
    const stuck = await eventually(
      () => deliveries(t, broken.id),
      (list) => list[2]?.attempts > 0,
    );
    expect(new Set(ids(down.requests))).toEqual(new Set([`msg_${stuck[2].event_id}`]));
    expect(stuck.map((d) => d.status)).toEqual(["pending", "pending", "pending"]);
    expect(stuck.map((d) => d.attempts > 0)).toEqual([false, false, true]);
  });

  it("does not follow redirects and reads no more than a little of an answer", async () => {
    const elsewhere = await receiver(() => 200);
    const redirecting = await receiver((_req, _n, res) => {
      res.writeHead(302, { location: elsewhere.url }).end();
      return undefined;
    });
    const endless = await receiver((_req, _n, res) => {
      // An answer that never ends: reading it all would run into the time limit.
      res.writeHead(500, { "content-type": "text/plain" });
      const chunk = "x".repeat(16 * 1024);
      const timer = setInterval(() => res.write(chunk), 5);
      res.on("close", () => clearInterval(timer));
      return undefined;
    });
    const moved = await endpoint(t, redirecting.url, ["prompt.created"]);
    const big = await endpoint(t, endless.url, ["prompt.created"]);
    await t.request("POST", "/api/v2/prompts", { body: promptBody(9) });

    const [redirected] = await eventually(
      () => deliveries(t, moved.id),
      (list) => list[0]?.attempts >= 1,
    );
    expect(redirected).toMatchObject({
      status: "pending",
      last_response_code: 302,
      last_error: "HTTP 302 (redirects are not followed)",
    });
    expect(elsewhere.requests).toEqual([]);
    const [cut] = await eventually(
      () => deliveries(t, big.id),
      (list) => list[0]?.attempts >= 1,
    );
    expect(cut).toMatchObject({
      status: "pending",
      last_response_code: 500,
      last_error: `HTTP 500: ${"x".repeat(200)}`,
    });
  });

  it("queues only for enabled endpoints subscribed to the type; removing an endpoint drops its deliveries", async () => {
    const hook = await receiver(() => 200);
    const published = await endpoint(t, hook.url, ["prompt.published"]);
    const disabled = await endpoint(t, hook.url);
    await t.request("PATCH", `/api/v2/webhooks/${disabled.id}`, { body: { enabled: false } });

    await t.request("POST", "/api/v2/prompts", { body: promptBody(10) });
    const publish = await t.request("POST", "/api/v2/prompts/prompt-10/publish", {});
    await hook.waitFor((r) => r.length === 1);
    expect(JSON.parse(hook.requests[0]!.body)).toMatchObject({
      type: "prompt.published",
      data: { prompt_id: "prompt-10", version: publish.body.data.version },
    });
    expect((await deliveries(t, published.id)).map((d) => d.event_type)).toEqual(["prompt.published"]);
    expect(await deliveries(t, disabled.id)).toEqual([]);
    // Publishing what is already in production changes nothing and sends nothing.
    await t.request("POST", "/api/v2/prompts/prompt-10/publish", {});
    expect(await deliveries(t, published.id)).toHaveLength(1);

    await t.request("DELETE", `/api/v2/webhooks/${published.id}`);
    const left = await t.store.db.selectFrom("webhook_deliveries").select("id").execute();
    expect(left).toEqual([]);
  });

  it("keeps deliveries to the project: another project's changes are not sent to this endpoint", async () => {
    const hook = await receiver(() => 200);
    await endpoint(t, hook.url);
    const other = await t.newProject();
    expect((await t.request("POST", "/api/v2/prompts", { key: other.key, body: promptBody(11) })).status).toBe(201);
    expect((await t.request("POST", "/api/v2/prompts", { body: promptBody(12) })).status).toBe(201);
    await hook.waitFor((r) => r.length === 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(hook.requests.map((r) => JSON.parse(r.body).data)).toEqual([
      expect.objectContaining({ project_id: t.project.projectId, prompt_id: "prompt-12" }),
    ]);
  });
});

describe.each(DATABASES)("webhook deliveries that fail for good ($name)", (database: TestDatabase) => {
  // Retry waits and the 24-hour window at 1/50 000: the window is 1.7 s.
  const t = useTestApp(database, { ...FAST, PROMPTSTORE_WEBHOOK_RETRY_SCALE: 0.00002 });
  unlimited(t);

  it("marks a delivery failed once attempts have failed for the whole window, then sends the next", async () => {
    let failing = true;
    const hook = await receiver(() => (failing ? 500 : 200));
    const { id } = await endpoint(t, hook.url);
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
    const [failed] = await eventually(
      () => deliveries(t, id),
      (list) => list[0]?.status === "failed",
      20_000,
    );
    expect(failed).toMatchObject({
      status: "failed",
      next_attempt_at: null,
      last_response_code: 500,
      last_error: "HTTP 500",
      delivered_at: null,
    });
    expect(failed.attempts).toBe(hook.requests.length);
    expect(failed.attempts).toBeGreaterThan(5);
    // The queue moves on.
    failing = false;
    await t.request("PUT", "/api/v2/prompts/prompt-1", { body: { markdown: "# Role\nnext" } });
    const list = await eventually(
      () => deliveries(t, id),
      (l) => l[0]?.status === "delivered",
    );
    expect(list.map((d) => [d.event_type, d.status])).toEqual([
      ["prompt.version_saved", "delivered"],
      ["prompt.created", "failed"],
    ]);
  });
});

describe.each(DATABASES)("webhooks to private addresses, not allowed ($name)", (database: TestDatabase) => {
  const t = useTestApp(database, { PROMPTSTORE_WEBHOOK_TIMEOUT_MS: 1000 });
  unlimited(t);

  it("refuses at delivery a host name that resolves to loopback: failed at once, the refusal named", async () => {
    const hook = await receiver(() => 200);
    // A name, not a literal: accepted when written, refused when resolved.
    const { id } = await endpoint(t, `http://localhost:${hook.port}/hook`);
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
    const [refused] = await eventually(
      () => deliveries(t, id),
      (list) => list[0]?.status === "failed",
    );
    expect(refused).toMatchObject({ status: "failed", attempts: 1, last_response_code: null, next_attempt_at: null });
    // What the name resolves to is the server's network: not said.
    expect(refused.last_error).toBe(`refused: localhost: address not allowed; ${HINT}`);
    expect(hook.requests).toEqual([]);
    // A literal is refused when it is written.
    const literal = await t.request("POST", "/api/v2/webhooks", {
      body: { url: `http://127.0.0.1:${hook.port}/hook`, events: ALL },
    });
    expect(literal.body).toEqual({ success: false, error: `url: refused: 127.0.0.1, a loopback address; ${HINT}` });
  });
});
