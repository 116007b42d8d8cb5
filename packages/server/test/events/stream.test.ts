import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TenantStore } from "../../src/store/accounts/tenants.js";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { changes, type EventStreamReader, openEventStream } from "../support/sse.js";
import { waitFor } from "../support/wait.js";

const HASH = /^[0-9a-f]{64}$/;

describe.each(DATABASES)("GET /api/v2/events ($name)", (database) => {
  let t: TestApp;
  let url: string;
  const open: EventStreamReader[] = [];

  const stream = async (key = t.key, headers: Record<string, string> = {}) => {
    const reader = await openEventStream(url, key, headers);
    open.push(reader);
    return reader;
  };
  const ready = (reader: EventStreamReader) => reader.next((e) => e.event === "ready" || e.event === "reset");

  beforeEach(async () => {
    t = await testApp(database, { PROMPTSTORE_EVENTS_HEARTBEAT_MS: 200, PROMPTSTORE_EVENTS_KEY_RECHECK_MS: 200 });
    url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
  });
  afterEach(async () => {
    for (const reader of open.splice(0)) reader.close();
    await t.close();
  });

  it("opens with ready at the project's last event, then streams each change with both pointers", async () => {
    const reader = await stream();
    expect(reader.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(reader.headers.get("cache-control")).toBe("no-store");
    expect(reader.headers.get("x-ratelimit-limit")).toBe("60");
    expect(await ready(reader)).toEqual({ id: "0", event: "ready", data: '{"last_event_id":0}' });

    const created = await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p" }) });
    const v1 = created.body.data.version;
    const saved = await t.request("PUT", "/api/v2/prompts/p", { body: promptBody(2) });
    const v2 = saved.body.data.version;
    await t.request("POST", "/api/v2/prompts/p/publish", { body: { version: v1 } });
    // The version already in production: nothing changes, nothing is recorded.
    await t.request("POST", "/api/v2/prompts/p/publish", { body: { version: v1 } });
    const saved3 = await t.request("PUT", "/api/v2/prompts/p", { body: promptBody(3, { publish: true }) });
    const v3 = saved3.body.data.version;
    await reader.next((e) => e.event === "prompt.published" && JSON.parse(e.data as string).version === v3);

    const events = changes(reader);
    const ids = events.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(5);
    for (const e of events) expect(e.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(events.map(({ id: _, at: __, ...rest }) => rest)).toEqual([
      { type: "prompt.created", prompt_id: "p", version: v1, production_version: null, latest_version: v1 },
      { type: "prompt.version_saved", prompt_id: "p", version: v2, production_version: null, latest_version: v2 },
      { type: "prompt.published", prompt_id: "p", version: v1, production_version: v1, latest_version: v2 },
      { type: "prompt.version_saved", prompt_id: "p", version: v3, production_version: v1, latest_version: v3 },
      { type: "prompt.published", prompt_id: "p", version: v3, production_version: v3, latest_version: v3 },
    ]);
    expect(v1).toMatch(HASH);
    // Each SSE id is the event's own id.
    expect(reader.received.filter((e) => e.event?.startsWith("prompt.")).map((e) => Number(e.id))).toEqual(ids);
  });

  it("a prompt created published says so in its one event; saving existing content records nothing", async () => {
    const reader = await stream();
    await ready(reader);
    const created = await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p", publish: true }) });
    const v1 = created.body.data.version;
    await t.request("PUT", "/api/v2/prompts/p", { body: promptBody(1) });
    await t.request("POST", "/api/v2/prompts", { body: promptBody(2, { id: "q" }) });
    await reader.next((e) => e.event === "prompt.created" && e.data?.includes('"q"') === true);
    expect(changes(reader).map((e) => [e.type, e.prompt_id, e.production_version])).toEqual([
      ["prompt.created", "p", v1],
      ["prompt.created", "q", null],
    ]);
  });

  it("sends only the key's project", async () => {
    const other = await t.newProject({ plan: "pro" });
    const mine = await stream();
    const theirs = await stream(other.key);
    await ready(mine);
    await ready(theirs);
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "theirs" }), key: other.key });
    await t.request("POST", "/api/v2/prompts", { body: promptBody(2, { id: "mine" }) });
    await mine.next((e) => e.event === "prompt.created");
    await theirs.next((e) => e.event === "prompt.created");
    expect(changes(mine).map((e) => e.prompt_id)).toEqual(["mine"]);
    expect(changes(theirs).map((e) => e.prompt_id)).toEqual(["theirs"]);
  });

  it("replays what a reconnecting client missed after Last-Event-ID, then says ready", async () => {
    const first = await stream();
    await ready(first);
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p" }) });
    const created = await first.next((e) => e.event === "prompt.created");
    first.close();

    await t.request("PUT", "/api/v2/prompts/p", { body: promptBody(2) });
    await t.request("POST", "/api/v2/prompts/p/publish", {});
    const again = await stream(t.key, { "last-event-id": created.id as string });
    const opened = await ready(again);
    const replayed = changes(again);
    expect(replayed.map((e) => e.type)).toEqual(["prompt.version_saved", "prompt.published"]);
    expect(opened).toEqual({
      id: String(replayed[1].id),
      event: "ready",
      data: JSON.stringify({ last_event_id: replayed[1].id }),
    });
    // And it is live from there, with nothing sent twice.
    await t.request("PUT", "/api/v2/prompts/p", { body: promptBody(3) });
    await again.next((e) => e.event === "prompt.version_saved" && Number(e.id) > replayed[1].id);
    expect(changes(again).map((e) => e.type)).toEqual([
      "prompt.version_saved",
      "prompt.published",
      "prompt.version_saved",
    ]);
  });

  it("tells a client to reset when its Last-Event-ID is unknown or its events are no longer kept", async () => {
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p" }) });
    await t.request("PUT", "/api/v2/prompts/p", { body: promptBody(2) });
    const last = await t.app.hub.lastEventId(t.project.projectId);

    const future = await stream(t.key, { "last-event-id": String(last + 100) });
    expect(JSON.parse((await ready(future)).data as string)).toEqual({
      last_event_id: last,
      reason: "Last-Event-ID is not an event of this project's stream",
    });
    const garbage = await stream(t.key, { "last-event-id": "yesterday" });
    expect((await ready(garbage)).event).toBe("reset");

    // Everything recorded so far is past the retention.
    expect(await t.store.events.prune(new Date(Date.now() + 60_000).toISOString())).toBe(2);
    const old = await stream(t.key, { "last-event-id": String(last - 1) });
    expect(await ready(old)).toEqual({
      id: String(last),
      event: "reset",
      data: JSON.stringify({ last_event_id: last, reason: "events after Last-Event-ID are no longer kept" }),
    });
    expect(changes(old)).toEqual([]);
    // A client that had seen everything before the pruning has missed nothing.
    const current = await stream(t.key, { "last-event-id": String(last) });
    expect((await ready(current)).event).toBe("ready");
  });

  it("keeps idle streams alive with heartbeats", async () => {
    const reader = await stream();
    await ready(reader);
    expect(await reader.next((e) => e.comment !== undefined)).toEqual({ comment: "heartbeat" });
  });

  it("caps open streams per organization by plan, with a 429 envelope, and frees the slot on close", async () => {
    const readers = [];
    for (let i = 0; i < 10; i++) readers.push(await stream());
    for (const reader of readers) await ready(reader);
    const refused = await stream();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("15");
    expect(refused.body).toEqual({
      success: false,
      error: "too many event streams: the free plan allows 10 open streams per organization",
    });
    // Another project of the same organization shares the cap.
    const sibling = await t.newProject({ orgId: t.project.orgId });
    expect((await stream(sibling.key)).status).toBe(429);

    readers[0]?.close();
    await waitFor(() => t.app.hub.size === 9);
    expect((await stream()).status).toBe(200);
  });

  it("the unlimited plan has no cap", async () => {
    const big = await t.newProject({ plan: "unlimited" });
    const readers = [];
    for (let i = 0; i < 12; i++) readers.push(await stream(big.key));
    for (const reader of readers) expect((await ready(reader)).event).toBe("ready");
  });

  it("counts opening a stream as a request against the rate limit", async () => {
    const a = await stream();
    const b = await stream();
    expect(Number(b.headers.get("x-ratelimit-remaining"))).toBe(Number(a.headers.get("x-ratelimit-remaining")) - 1);
  });

  it("refuses a missing or wrong key with the envelope", async () => {
    const reader = await stream("ps_wrong");
    expect(reader.status).toBe(401);
    expect(reader.body).toEqual({ success: false, error: "x-api-key: invalid API key" });
  });

  it("ends the streams of a revoked key, not the others", async () => {
    const second = await t.app.tenants.createApiKey(t.project.projectId);
    const doomed = await stream();
    const kept = await stream(second.key);
    await ready(doomed);
    await ready(kept);
    await t.app.tenants.revokeApiKey(t.project.keyId);
    await doomed.ended;
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "after" }), key: second.key });
    await kept.next((e) => e.event === "prompt.created");
    expect(t.app.hub.size).toBe(1);
  });

  it("ends the streams of a key revoked where no notification reaches (the CLI on SQLite), on its next check", async () => {
    const reader = await stream();
    await ready(reader);
    // Written straight to the database, as another process would: no change is announced to this one.
    await new TenantStore(t.store.db).revokeApiKey(t.project.keyId, "test");
    await reader.ended;
    expect(t.app.hub.size).toBe(0);
  });

  it("ends open streams when the server closes, so shutdown does not wait for clients", async () => {
    const reader = await stream();
    await ready(reader);
    await t.app.server.close();
    await reader.ended;
    expect(t.app.hub.size).toBe(0);
  });
});
