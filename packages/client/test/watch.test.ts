/**
 * Mode `watch` against the real change-event stream (GET /api/v2/events, docs/events.md): prompts read once
 * are served from memory and kept current by events; a publish is served as soon as its event arrives; a
 * dropped stream falls back to a TTL with stale-while-revalidate, and reconnects with Last-Event-ID.
 */
import { describe, expect, test } from "vitest";
import type { PromptChange, PromptEvent, Promptstore } from "../src/index.js";
import { countingFetch, DATABASES, sections, useFixture, waitFor } from "./support/harness.js";

const idle = (client: Promptstore) => client.status.stream === "live" && client.status.reading === 0;

describe.each(DATABASES)("watch mode, kept current by the change stream ($name)", (database) => {
  const fx = useFixture(database);

  test("the stream opens once, on the first read; then reads are served from memory with no request", async () => {
    const server = await fx.start();
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    await writer.create({ name: "Alpha", sections: sections("a"), publish: true });
    await writer.create({ name: "Beta", sections: sections("b") });
    const counter = countingFetch();
    const client = fx.client({ baseUrl: server.url, fetch: counter.fetch });
    expect(client.mode).toBe("watch");
    expect(client.status.stream).toBe("idle");
    expect(counter.calls).toEqual([]);

    const alpha = await client.get("alpha");
    await waitFor(() => idle(client), 10_000, "the stream to be live");
    const streams = () => counter.calls.filter((c) => c.url.endsWith("/api/v2/events?include=read")).length;
    expect(streams()).toBe(1);
    const before = counter.calls.length;
    for (let i = 0; i < 1000; i++) expect(await client.get("alpha")).toStrictEqual(alpha);
    expect(counter.calls.length).toBe(before);

    // Another prompt: one read, on the same stream.
    await client.get("beta", { version: "latest" });
    expect(counter.calls.length).toBe(before + 1);
    expect(await client.get("beta", { version: "latest" })).toMatchObject({ id: "beta" });
    expect(counter.calls.length).toBe(before + 1);
    expect(streams()).toBe(1);
  });

  test("a publish reaches the client through the stream: the next get serves it, without waiting for a TTL", async () => {
    const server = await fx.start();
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    const v1 = await writer.create({ name: "Agent", sections: sections("v1"), publish: true });
    const events: PromptEvent[] = [];
    const changes: PromptChange[] = [];
    const counter = countingFetch();
    const client = fx.client({
      baseUrl: server.url,
      ttlMs: 3_600_000,
      fetch: counter.fetch,
      onEvent: (e) => events.push(e),
      onChange: (c) => changes.push(c),
    });
    expect((await client.get("agent")).version).toBe(v1.version);
    expect((await client.get("agent", { version: "latest", guard: false })).version).toBe(v1.version);
    await waitFor(() => idle(client), 10_000, "the stream to be live");

    // A save without publish: latest moves, production does not (and is not read again).
    const v2 = await writer.save("agent", { sections: sections("v2") });
    await waitFor(() => events.some((e) => e.type === "prompt.version_saved"), 10_000, "the save event");
    expect(events.at(-1)).toMatchObject({
      type: "prompt.version_saved",
      prompt_id: "agent",
      version: v2.version,
      production_version: v1.version,
      latest_version: v2.version,
    });
    const reads = () => counter.calls.filter((c) => c.url.includes("/api/v2/prompts/agent")).length;
    const readsAfterSave = reads();
    expect((await client.get("agent", { version: "latest", guard: false })).version).toBe(v2.version);
    expect((await client.get("agent")).version).toBe(v1.version);
    expect(reads()).toBe(readsAfterSave);

    // A publish: served by the very next get after its event arrived.
    let seenAt = 0;
    const published = new Promise<PromptEvent>((resolve) => {
      const check = setInterval(() => {
        const event = events.find((e) => e.type === "prompt.published" && e.version === v2.version);
        if (event) {
          seenAt = performance.now();
          clearInterval(check);
          resolve(event);
        }
      }, 1);
    });
    await writer.publish("agent");
    const event = await published;
    const served = await client.get("agent");
    const delay = performance.now() - seenAt;
    expect(served.version).toBe(v2.version);
    expect(served.production_version).toBe(v2.version);
    expect(event).toMatchObject({ prompt_id: "agent", production_version: v2.version, latest_version: v2.version });
    expect(delay).toBeLessThan(1_000);
    expect(changes.filter((c) => c.ref === "production")).toEqual([
      { promptId: "agent", ref: "production", guard: true, version: v1.version, previousVersion: null },
      { promptId: "agent", ref: "production", guard: true, version: v2.version, previousVersion: v1.version },
    ]);

    // A rollback, the same way; never the old version once the event is known.
    const rolledBack = events.length;
    await writer.publish("agent", v1.version);
    await waitFor(() => events.length > rolledBack, 10_000, "the rollback event");
    expect((await client.get("agent")).version).toBe(v1.version);
  });

  test("a published event carries the production read: the client serves it without a request", async () => {
    const server = await fx.start();
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    const v1 = await writer.create({ name: "Carried", sections: sections("v1"), publish: true });
    const changes: PromptChange[] = [];
    const counter = countingFetch();
    const client = fx.client({ baseUrl: server.url, fetch: counter.fetch, onChange: (c) => changes.push(c) });
    expect((await client.get("carried")).version).toBe(v1.version);
    await waitFor(() => idle(client), 10_000, "the stream to be live");
    const before = counter.calls.length;

    const v2 = await writer.save("carried", { sections: sections("v2"), publish: true });
    await waitFor(() => changes.length === 2, 10_000, "the publish to be served");
    expect(counter.calls.length).toBe(before);
    // Exactly what the service answers a read with, label and pointers included.
    expect(await client.get("carried")).toStrictEqual(await writer.get("carried"));
    expect((await client.get("carried")).version).toBe(v2.version);
    expect(changes.at(-1)).toEqual({
      promptId: "carried",
      ref: "production",
      guard: true,
      version: v2.version,
      previousVersion: v1.version,
    });
    expect(counter.calls.length).toBe(before);
  });

  test("a get made the moment an event arrives waits for the read in flight: never the old version", async () => {
    const server = await fx.start();
    const proxy = await fx.proxy(server.url);
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    const v1 = await writer.create({ name: "Slow Publish", sections: sections("v1"), publish: true });
    const pending: Promise<{ version: string; ms: number }>[] = [];
    const client: Promptstore = fx.client({
      baseUrl: proxy.url,
      ttlMs: 3_600_000,
      onEvent: (event) => {
        if (event.type !== "prompt.published") return;
        // Called synchronously as the event is applied: the read it started is still in flight.
        const started = performance.now();
        pending.push(
          client
            .get("slow-publish", { guard: false })
            .then((p) => ({ version: p.version, ms: performance.now() - started })),
        );
      },
    });
    // Without the guard: the events carry only the guarded read, so this one is read again.
    expect((await client.get("slow-publish", { guard: false })).version).toBe(v1.version);
    await waitFor(() => idle(client), 10_000, "the stream to be live");

    proxy.delayNext(1, 400, "/api/v2/prompts/slow-publish");
    const v2 = await writer.save("slow-publish", { sections: sections("v2"), publish: true });
    await waitFor(() => pending.length === 1, 10_000, "the publish event");
    const served = await pending[0];
    expect(served?.version).toBe(v2.version);
    expect(served?.ms).toBeGreaterThanOrEqual(300);
    expect((await client.get("slow-publish", { guard: false })).version).toBe(v2.version);
  });

  test("events for prompts the client does not hold are ignored; held ones are read again once", async () => {
    const server = await fx.start();
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    await writer.create({ name: "Held", sections: sections("h1"), publish: true });
    const events: PromptEvent[] = [];
    const counter = countingFetch();
    const client = fx.client({ baseUrl: server.url, fetch: counter.fetch, onEvent: (e) => events.push(e) });
    await client.get("held");
    await waitFor(() => idle(client), 10_000, "the stream to be live");
    const before = counter.calls.length;
    await writer.create({ name: "Other", sections: sections("o1"), publish: true });
    await writer.save("other", { sections: sections("o2"), publish: true });
    await waitFor(() => events.length === 3, 10_000, "three events");
    expect(events.map((e) => e.type)).toEqual(["prompt.created", "prompt.version_saved", "prompt.published"]);
    expect(counter.calls.length).toBe(before);

    await writer.save("held", { sections: sections("h2"), publish: true });
    await waitFor(() => events.length === 5 && idle(client), 10_000, "the held prompt's events");
    const served = await client.get("held");
    expect(served.prompt).toContain("(h2)");
    expect(counter.calls.length - before).toBeLessThanOrEqual(2);
  });

  test("stream dropped: TTL with stale-while-revalidate while the server is down, then Last-Event-ID after a restart", async () => {
    const first = await fx.start();
    const proxy = await fx.proxy(first.url);
    const events: PromptEvent[] = [];
    const errors: unknown[] = [];
    const client = fx.client({
      baseUrl: proxy.url,
      ttlMs: 400,
      retries: 0,
      reconnectDelayMs: 50,
      maxReconnectDelayMs: 200,
      onEvent: (e) => events.push(e),
      onError: (e) => errors.push(e),
    });
    const writer = fx.client({ baseUrl: first.url, mode: "none" });
    const v1 = await writer.create({ name: "Durable", sections: sections("v1"), publish: true });
    expect((await client.get("durable")).version).toBe(v1.version);
    await waitFor(() => idle(client), 10_000, "the stream to be live");
    const lastEventId = client.status.lastEventId;
    expect(lastEventId).toMatch(/^[1-9][0-9]*$/);

    proxy.down = true;
    await first.stop("SIGKILL");
    await waitFor(() => client.status.stream === "down", 10_000, "the stream to drop");
    const refusedAtDrop = proxy.refused;

    // Within the TTL: from memory.
    expect((await client.get("durable")).version).toBe(v1.version);
    // Past it: the old read at once, while a read in the background fails.
    await new Promise((r) => setTimeout(r, 450));
    const started = performance.now();
    const stale = await client.get("durable");
    expect(performance.now() - started).toBeLessThan(50);
    expect(stale.version).toBe(v1.version);
    await waitFor(() => proxy.refused > refusedAtDrop + 1, 5_000, "a background read and a reconnection to be refused");
    expect((await client.get("durable")).version).toBe(v1.version);

    // The server comes back on the same database; a publish happens before the client reconnects.
    const second = await fx.start();
    proxy.upstream = second.url;
    const writer2 = fx.client({ baseUrl: second.url, mode: "none" });
    const v2 = await writer2.save("durable", { sections: sections("v2"), publish: true });
    const streamsBefore = proxy.count("/api/v2/events");
    proxy.down = false;

    await waitFor(() => client.status.stream === "live", 10_000, "the stream to reconnect");
    const resumed = proxy.requests.filter((r) => r.path.startsWith("/api/v2/events")).slice(streamsBefore);
    expect(resumed[0]?.headers["last-event-id"]).toBe(lastEventId);
    expect(resumed[0]?.headers["x-api-key"]).toBe(fx.key);
    // The events missed while down were replayed.
    expect(events.filter((e) => e.prompt_id === "durable").map((e) => e.type)).toEqual([
      "prompt.version_saved",
      "prompt.published",
    ]);
    expect(events.every((e) => e.id > Number(lastEventId))).toBe(true);
    expect((await client.get("durable")).version).toBe(v2.version);
    expect(client.status.lastEventId).toBe(String(events.at(-1)?.id));
    expect(errors.length).toBeGreaterThan(0);
  });

  test("reset: when the stream cannot replay from Last-Event-ID, the client reloads what it holds", async () => {
    const server = await fx.start();
    const proxy = await fx.proxy(server.url);
    const changes: PromptChange[] = [];
    const counter = countingFetch();
    const client = fx.client({
      baseUrl: proxy.url,
      fetch: counter.fetch,
      reconnectDelayMs: 50,
      maxReconnectDelayMs: 200,
      onChange: (c) => changes.push(c),
    });
    const writer = fx.client({ baseUrl: server.url, mode: "none" });
    const v1 = await writer.create({ name: "Reloaded", sections: sections("v1"), publish: true });
    await client.get("reloaded");
    const pinned = await client.get("reloaded", { version: v1.version });
    await waitFor(() => idle(client), 10_000, "the stream to be live");

    // The connection breaks; meanwhile a publish happens, and the stream is asked to resume from an id it
    // never sent (as after its retention), so it answers `reset` instead of replaying.
    proxy.down = true;
    proxy.dropStreams();
    await waitFor(() => client.status.stream === "down", 10_000, "the stream to drop");
    const v2 = await writer.save("reloaded", { sections: sections("v2"), publish: true });
    proxy.rewrite = (path, headers) =>
      path.startsWith("/api/v2/events") ? { ...headers, "last-event-id": "999999999" } : headers;
    const reads = counter.calls.filter((c) => c.url.includes("/api/v2/prompts/reloaded")).length;
    proxy.down = false;

    await waitFor(() => client.status.stream === "live", 10_000, "the stream to reconnect");
    expect((await client.get("reloaded")).version).toBe(v2.version);
    expect(counter.calls.filter((c) => c.url.includes("/api/v2/prompts/reloaded")).length).toBe(reads + 1);
    // A version named by its hash is not read again.
    expect(await client.get("reloaded", { version: v1.version })).toBe(pinned);
    expect(changes.at(-1)).toMatchObject({ ref: "production", version: v2.version, previousVersion: v1.version });
  });

  test("close() ends the stream and its timers", async () => {
    const server = await fx.start();
    const proxy = await fx.proxy(server.url);
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const before = timers();
    const client = fx.client({ baseUrl: proxy.url });
    expect(await client.ready()).toBe(true);
    expect(proxy.openStreams).toBe(1);
    client.close();
    expect(client.status.stream).toBe("closed");
    await waitFor(() => proxy.openStreams === 0, 5_000, "the stream to close");
    expect(timers()).toBeLessThanOrEqual(before);
    expect(await client.ready()).toBe(false);
    await new Promise((r) => setTimeout(r, 200));
    expect(proxy.count("/api/v2/events")).toBe(1);
  });
});

const POSTGRES = DATABASES.filter((d) => d.name === "postgres");

describe.skipIf(POSTGRES.length === 0).each(POSTGRES)("watch mode across instances ($name)", (database) => {
  const fx = useFixture(database);

  test("a publish on a second instance reaches a client of the first through its stream", async () => {
    const first = await fx.start();
    const second = await fx.start();
    const events: PromptEvent[] = [];
    const client = fx.client({ baseUrl: first.url, ttlMs: 3_600_000, onEvent: (e) => events.push(e) });
    const writer = fx.client({ baseUrl: second.url, mode: "none" });
    const v1 = await writer.create({ name: "Fleet", sections: sections("v1"), publish: true });
    expect((await client.get("fleet")).version).toBe(v1.version);
    await waitFor(() => idle(client), 10_000, "the stream to be live");

    const v2 = await writer.save("fleet", { sections: sections("v2"), publish: true });
    await waitFor(
      () => events.some((e) => e.type === "prompt.published" && e.version === v2.version),
      10_000,
      "the event",
    );
    expect((await client.get("fleet")).version).toBe(v2.version);
    await writer.publish("fleet", v1.version);
    await waitFor(() => events.filter((e) => e.type === "prompt.published").length === 2, 10_000, "the rollback");
    expect((await client.get("fleet")).version).toBe(v1.version);
  });
});
