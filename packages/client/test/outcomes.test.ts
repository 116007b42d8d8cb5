/**
 * `record()` and the fleet report (docs/outcomes.md), in hostile conditions: the client reads the real server
 * through the test proxy, which answers `POST /api/v2/outcomes` itself (a receiver that keeps every batch) and
 * can be away, answer 5xx, 413 or 429 with Retry-After, or be slow. Exact numbers: batches, outcomes per batch,
 * drops. The happy path against the server's own endpoint is outcomes-endpoint.test.ts.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import type { Prompt, Promptstore, PromptstoreOptions } from "../src/index.js";
import { entryOf, isoTime, outcomeJson, type ReadRef, readRef } from "../src/outcomes/outcome.js";
import { SDK } from "../src/outcomes/reporter.js";
import { DATABASES, sections, useFixture, waitFor } from "./support/harness.js";
import type { TestProxy } from "./support/proxy.js";

const OUTCOMES = "/api/v2/outcomes";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** Long enough never to fire during a test: sends happen by count, flush() or close(). */
const NEVER = 3_600_000;

interface Batch {
  outcomes: Record<string, unknown>[];
  instance?: { id: string; sdk?: string; serving: { prompt: string; label?: string; version: string }[] };
}

/** The receiver: keeps each batch, answers as the server would; an outcome tagged `refuse` is refused. */
function receive(proxy: TestProxy): Batch[] {
  const batches: Batch[] = [];
  proxy.intercept(OUTCOMES, ({ body }) => {
    const batch = JSON.parse(body) as Batch;
    batches.push(batch);
    const refused = batch.outcomes.flatMap((o, index) =>
      (o.tags as Record<string, string> | undefined)?.refuse
        ? [{ index, field: `outcomes[${index}].version`, message: "refused" }]
        : [],
    );
    return {
      status: 200,
      body: { success: true, data: { accepted: batch.outcomes.length - refused.length, refused } },
    };
  });
  return batches;
}

const latencies = (batch: Batch | undefined) => (batch?.outcomes ?? []).map((o) => o.latency_ms);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe("the outcomes' JSON, written by hand", () => {
  test("is what JSON.stringify writes, field for field and in the same order", () => {
    const version = "0123456789abcdef".repeat(4);
    const ref = readRef(Object.freeze({ id: "support", version, label: "eu-canary", rollout: { arm: "candidate" } }));
    const at = Date.UTC(2026, 10, 27, 23, 59, 59, 7);
    const tags = { quote: 'a "b" \\ c', "ü key": "🚀\n", empty: "" };
    const cases = [
      { ok: true },
      { ok: false, latency_ms: 812.25, score: 0, tokens: { input: 0 } },
      { ok: true, score: 1, tokens: { output: 40 }, tags },
      { ok: true, latency_ms: 3_600_000, tokens: { input: 120, output: 40 }, tags: {} },
    ];
    for (const outcome of cases) {
      const entry = entryOf(ref as ReadRef, outcome, at);
      if (typeof entry === "string") throw new Error(entry);
      const { tags: given, ...rest } = outcome as typeof outcome & { tags?: Record<string, string> };
      const expected = JSON.stringify({
        prompt: "support",
        version,
        label: "eu-canary",
        arm: "candidate",
        ...rest,
        ...(given && Object.keys(given).length > 0 && { tags: given }),
        at: "2026-11-27T23:59:59.007Z",
      });
      expect(outcomeJson(entry)).toBe(expected);
    }
  });

  test("isoTime is toISOString, across seconds, days and years", () => {
    const times = [0, 1, 999, 1000, 1001, Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2026, 0, 1), Date.now()];
    for (let t = Date.UTC(2026, 11, 31, 23, 59, 58); t < Date.UTC(2027, 0, 1, 0, 0, 2); t += 7) times.push(t);
    for (const t of times) expect(isoTime(t)).toBe(new Date(t).toISOString());
  });
});

describe.each(DATABASES.slice(0, 1))("record() in hostile conditions ($name)", (database) => {
  const fx = useFixture(database);

  /** A published prompt read by a client that sends its outcomes to the receiver. */
  async function setup(options: Partial<PromptstoreOptions> = {}) {
    const server = await fx.start();
    const proxy = await fx.proxy(server.url);
    const batches = receive(proxy);
    const errors: unknown[] = [];
    const client = fx.client({
      baseUrl: proxy.url,
      mode: "ttl",
      onError: (error) => errors.push(error),
      ...options,
      outcomes: { flushIntervalMs: NEVER, retryDelayMs: NEVER, ...options.outcomes },
    });
    const created = await client.create({ name: "Support", sections: sections("v1"), publish: true });
    const read = await client.get("support");
    return { server, proxy, batches, errors, client, read, version: created.version };
  }

  const recordMany = (client: Promptstore, read: Prompt, from: number, to: number) => {
    for (const i of range(from, to)) client.record(read, { ok: i % 2 === 0, latency_ms: i });
  };

  test("batches go by count: full batches at once, the rest by flush(); each outcome as the server takes it", async () => {
    const { proxy, batches, client, read, version } = await setup({ outcomes: { batchSize: 500 } });
    for (const i of range(0, 1200)) {
      const returned = client.record(read, {
        ok: i % 3 !== 0,
        latency_ms: i,
        ...(i === 0 && { score: 0.75, tokens: { input: 120, output: 40 }, tags: { route: "chat" } }),
      });
      expect(returned).toBeUndefined();
    }
    // Nothing is sent on the caller's turn: record() only buffers.
    expect(proxy.count(OUTCOMES)).toBe(0);
    expect(client.outcomeStats()).toEqual({
      recorded: 1200,
      sent: 0,
      refused: 0,
      dropped: 0,
      invalid: 0,
      pending: 1200,
    });
    await waitFor(() => client.outcomeStats().sent === 1000, 10_000, "two full batches");
    expect(batches.map((b) => b.outcomes.length)).toEqual([500, 500]);
    expect(client.outcomeStats()).toMatchObject({ sent: 1000, pending: 200 });
    await client.flush();
    expect(batches.map((b) => b.outcomes.length)).toEqual([500, 500, 200]);
    expect(proxy.count(OUTCOMES)).toBe(3);
    expect(batches.flatMap(latencies)).toEqual(range(0, 1200));
    const first = batches[0]?.outcomes[0] as Record<string, unknown>;
    expect(Object.keys(first)).toEqual([
      "prompt",
      "version",
      "label",
      "ok",
      "latency_ms",
      "score",
      "tokens",
      "tags",
      "at",
    ]);
    expect(first).toMatchObject({
      prompt: "support",
      version,
      label: "production",
      ok: false,
      latency_ms: 0,
      score: 0.75,
      tokens: { input: 120, output: 40 },
      tags: { route: "chat" },
    });
    expect(new Date(first.at as string).toISOString()).toBe(first.at);
    expect(batches[0]?.outcomes[1]).toEqual({
      prompt: "support",
      version,
      label: "production",
      ok: true,
      latency_ms: 1,
      at: expect.any(String),
    });
    // Every batch carries the instance's report, though reportServing is off.
    const ids = new Set(batches.map((b) => b.instance?.id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(UUID);
    expect(batches[0]?.instance).toEqual({
      id: expect.any(String),
      sdk: SDK,
      serving: [{ prompt: "support", label: "production", version }],
    });
    expect(client.outcomeStats()).toEqual({
      recorded: 1200,
      sent: 1200,
      refused: 0,
      dropped: 0,
      invalid: 0,
      pending: 0,
    });
  });

  test("batches go by time: what is pending is sent flushIntervalMs after the first", async () => {
    const { batches, client, read } = await setup({ outcomes: { flushIntervalMs: 50 } });
    recordMany(client, read, 0, 3);
    await waitFor(() => client.outcomeStats().sent === 3, 10_000, "the timed batch");
    expect(batches.map(latencies)).toEqual([[0, 1, 2]]);
    recordMany(client, read, 3, 5);
    await waitFor(() => client.outcomeStats().sent === 5, 10_000, "the second timed batch");
    expect(batches.map(latencies)).toEqual([
      [0, 1, 2],
      [3, 4],
    ]);
  });

  test("a full buffer drops its oldest, counted exactly", async () => {
    const { batches, client, read } = await setup({ outcomes: { bufferSize: 100, batchSize: 1000 } });
    recordMany(client, read, 0, 130);
    expect(client.outcomeStats()).toEqual({
      recorded: 130,
      sent: 0,
      refused: 0,
      dropped: 30,
      invalid: 0,
      pending: 100,
    });
    await client.flush();
    expect(batches.map(latencies)).toEqual([range(30, 130)]);
    expect(client.outcomeStats()).toEqual({
      recorded: 130,
      sent: 100,
      refused: 0,
      dropped: 30,
      invalid: 0,
      pending: 0,
    });
  });

  test("the server away: the batch is kept and sent once it is back; while away the oldest go first", async () => {
    const { proxy, batches, client, read, errors } = await setup({ outcomes: { bufferSize: 50, batchSize: 1000 } });
    proxy.down = true;
    recordMany(client, read, 0, 40);
    await client.flush();
    expect(proxy.refused).toBeGreaterThanOrEqual(1);
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(client.outcomeStats()).toEqual({ recorded: 40, sent: 0, refused: 0, dropped: 0, invalid: 0, pending: 40 });
    // The 40 came back to the front of the buffer: 30 more overflow it by 20, the 20 oldest.
    recordMany(client, read, 40, 70);
    expect(client.outcomeStats()).toEqual({ recorded: 70, sent: 0, refused: 0, dropped: 20, invalid: 0, pending: 50 });
    proxy.down = false;
    await client.flush();
    expect(batches.map(latencies)).toEqual([range(20, 70)]);
    expect(client.outcomeStats()).toEqual({ recorded: 70, sent: 50, refused: 0, dropped: 20, invalid: 0, pending: 0 });
  });

  test("5xx answers: the same batch is sent again after the backoff, and taken once", async () => {
    const { proxy, batches, client, read, errors } = await setup({
      outcomes: { retryDelayMs: 10, maxRetryDelayMs: 20 },
    });
    proxy.failNext(2, 503, OUTCOMES);
    recordMany(client, read, 0, 5);
    await client.flush();
    await waitFor(() => client.outcomeStats().sent === 5, 10_000, "the batch after two 503s");
    expect(proxy.count(OUTCOMES)).toBe(3);
    expect(batches.map(latencies)).toEqual([[0, 1, 2, 3, 4]]);
    expect(errors.map((e) => (e as { status?: number }).status)).toEqual([503, 503]);
  });

  test("a 429's Retry-After is obeyed, bounded by maxRetryAfterMs, rather than the backoff", async () => {
    const { proxy, batches, client, read } = await setup({
      maxRetryAfterMs: 400,
      outcomes: { retryDelayMs: 1, maxRetryDelayMs: 1 },
    });
    proxy.failNext(1, 429, OUTCOMES, { "retry-after": "3600" });
    recordMany(client, read, 0, 2);
    await client.flush();
    await waitFor(() => client.outcomeStats().sent === 2, 10_000, "the batch after the 429");
    const [refused, taken] = proxy.requests.filter((r) => r.path === OUTCOMES);
    // Not after the 1 ms backoff, not after an hour: after the 400 ms the client allows.
    expect((taken?.at ?? 0) - (refused?.at ?? 0)).toBeGreaterThanOrEqual(390);
    expect(batches.map(latencies)).toEqual([[0, 1]]);
  });

  test("a slow server: record() returns while a batch is in flight, one request at a time, a timeout resent", async () => {
    const { proxy, batches, client, read } = await setup({
      timeoutMs: 1_500,
      outcomes: { batchSize: 10, retryDelayMs: 10, maxRetryDelayMs: 10 },
    });
    proxy.delayNext(1, 6_000, OUTCOMES);
    recordMany(client, read, 0, 10);
    await waitFor(() => proxy.count(OUTCOMES) === 1, 10_000, "the first batch to be in flight");
    recordMany(client, read, 10, 35);
    expect(client.outcomeStats()).toMatchObject({ recorded: 35, pending: 35, sent: 0 });
    await waitFor(() => client.outcomeStats().sent === 35, 10_000, "four batches");
    // The first attempt timed out unanswered (the proxy held it): the batch was tried again after the backoff,
    // with all that came meanwhile, a batch at a time.
    expect(proxy.count(OUTCOMES)).toBe(5);
    expect(batches.map(latencies)).toEqual([range(0, 10), range(10, 20), range(20, 30), range(30, 35)]);
    expect(client.outcomeStats()).toEqual({ recorded: 35, sent: 35, refused: 0, dropped: 0, invalid: 0, pending: 0 });
  });

  test("refusals: one by one from the answer, a whole batch on a 400, never sent again", async () => {
    const { proxy, batches, client, read } = await setup();
    client.record(read, { ok: true, latency_ms: 0 });
    client.record(read, { ok: true, latency_ms: 1, tags: { refuse: "yes" } });
    client.record(read, { ok: true, latency_ms: 2 });
    await client.flush();
    expect(client.outcomeStats()).toMatchObject({ recorded: 3, sent: 2, refused: 1, pending: 0 });
    proxy.failNext(1, 400, OUTCOMES);
    recordMany(client, read, 3, 7);
    await client.flush();
    expect(client.outcomeStats()).toEqual({ recorded: 7, sent: 2, refused: 5, dropped: 0, invalid: 0, pending: 0 });
    expect(proxy.count(OUTCOMES)).toBe(2);
    expect(batches.map(latencies)).toEqual([[0, 1, 2]]);
  });

  test("a 413 halves the batch until it fits", async () => {
    const { proxy, batches, client, read } = await setup();
    proxy.failNext(1, 413, OUTCOMES);
    recordMany(client, read, 0, 8);
    await client.flush();
    expect(batches.map(latencies)).toEqual([range(0, 4), range(4, 8)]);
    expect(proxy.count(OUTCOMES)).toBe(3);
    expect(client.outcomeStats()).toMatchObject({ sent: 8, pending: 0 });
  });

  test("bad values are dropped and counted, never thrown; each kind of problem told to onError once", async () => {
    const { proxy, client, read, errors } = await setup();
    const bad: [unknown, unknown][] = [
      [read, { ok: "yes" }],
      [read, { ok: true, latency_ms: -1 }],
      [read, { ok: true, latency_ms: Number.NaN }],
      [read, { ok: true, score: 1.5 }],
      [read, { ok: true, tokens: { input: 1.5 } }],
      [read, { ok: true, tags: Object.fromEntries(range(0, 11).map((i) => [`k${i}`, "v"])) }],
      [read, { ok: true, tags: { note: "\ud800" } }],
      [read, null],
      [{ ...read, version: "fallback", fallback: true }, { ok: true }],
      [{ id: "support", version: "abc", label: "production" }, { ok: true }],
      [null, { ok: true }],
      [
        read,
        {
          get ok(): boolean {
            throw new Error("a getter that throws");
          },
        },
      ],
      [read, { ok: true, score: 2 }],
    ];
    for (const [r, o] of bad) expect(() => client.record(r as Prompt, o as { ok: boolean })).not.toThrow();
    client.record(read, { ok: true, latency_ms: 3_600_000, score: 0, tokens: { output: 0 }, tags: {} });
    expect(client.outcomeStats()).toEqual({ recorded: 1, sent: 0, refused: 0, dropped: 0, invalid: 13, pending: 1 });
    // "score: must be a number from 0 to 1" came twice and was told once.
    expect(errors.map((e) => (e as Error).message)).toEqual([
      "record(): ok: must be true or false; the outcome was not kept",
      "record(): latency_ms: must be a number from 0 to 3600000; the outcome was not kept",
      "record(): score: must be a number from 0 to 1; the outcome was not kept",
      "record(): tokens.input: must be a whole number from 0 to 100000000; the outcome was not kept",
      "record(): tags: must have at most 10 entries; the outcome was not kept",
      "record(): tags: values must be strings of at most 200 characters of text; the outcome was not kept",
      "record(): outcome: must be an object with ok; the outcome was not kept",
      "record(): read: a fallback, not a version the service served; the outcome was not kept",
      "record(): read.version: must be a version's full hash; the outcome was not kept",
      "record(): read: must be what get() returned; the outcome was not kept",
      "a getter that throws",
    ]);
    await client.flush();
    expect(proxy.count(OUTCOMES)).toBe(1);
  });

  test("close() sends what is pending and resolves after; what it cannot send is counted as dropped", async () => {
    const first = await setup();
    recordMany(first.client, first.read, 0, 7);
    await first.client.close();
    expect(first.batches.map(latencies)).toEqual([range(0, 7)]);
    first.client.record(first.read, { ok: true });
    expect(first.client.outcomeStats()).toEqual({
      recorded: 8,
      sent: 7,
      refused: 0,
      dropped: 1,
      invalid: 0,
      pending: 0,
    });

    const second = fx.client({ baseUrl: first.proxy.url, mode: "none", outcomes: { flushIntervalMs: NEVER } });
    const read = await second.get("support");
    first.proxy.down = true;
    recordMany(second, read, 0, 3);
    await second.close();
    expect(second.outcomeStats()).toEqual({ recorded: 3, sent: 0, refused: 0, dropped: 3, invalid: 0, pending: 0 });
  });

  test("a client that records nothing and does not report serving sends nothing", async () => {
    const { proxy, client } = await setup();
    await client.get("support", { version: "latest" });
    await client.flush();
    await client.close();
    expect(proxy.count(OUTCOMES)).toBe(0);
  });

  test("reportServing: a heartbeat reports per prompt and label the hash served, a rollout's candidate", async () => {
    const { proxy, batches, client } = await setup({
      reportServing: true,
      outcomes: { heartbeatMs: 100 },
    });
    const v2 = (await client.save("support", { sections: sections("v2") })).version;
    const v3 = (await client.save("support", { sections: sections("v3") })).version;
    await client.publish("support", v2, { label: "staging" });
    await client.publish("support", v3, { percent: 50 });
    await client.get("support", { assign: "user-1" });
    await client.get("support", { assign: "user-2" });
    await client.get("support", { version: "staging" });
    await client.get("support", { version: v2 });
    const other = await client.create({ name: "Other", sections: sections("o"), publish: true });
    await client.get("other", { version: "latest" });
    const sort = (serving: { prompt: string; label?: string; version: string }[] = []) =>
      [...serving].sort((a, b) =>
        `${a.prompt}${a.label}${a.version}`.localeCompare(`${b.prompt}${b.label}${b.version}`),
      );
    await waitFor(() => sort(batches.at(-1)?.instance?.serving).length === 4, 10_000, "the full report");
    const last = batches.at(-1) as Batch;
    expect(last.outcomes).toEqual([]);
    expect(last.instance?.id).toMatch(UUID);
    // One version per prompt and label. Production's rollout: its candidate (the other arm, held by its hash,
    // is not a read by version); the read of v2 by its hash is.
    expect(sort(last.instance?.serving)).toEqual(
      sort([
        { prompt: "support", label: "production", version: v3 },
        { prompt: "support", label: "staging", version: v2 },
        { prompt: "support", version: v2 },
        { prompt: "other", version: other.version },
      ]),
    );
    // Heartbeats go on without any outcome, each with the same id.
    const seen = proxy.count(OUTCOMES);
    await waitFor(() => proxy.count(OUTCOMES) >= seen + 2, 10_000, "two more heartbeats");
    expect(new Set(batches.map((b) => b.instance?.id)).size).toBe(1);
    await client.close();
    const closed = proxy.count(OUTCOMES);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(proxy.count(OUTCOMES)).toBe(closed);
  });

  test("each client instance has its own id; mode none reports its last reads; the SDK is named with package.json's version", async () => {
    const { proxy, batches, client, read } = await setup();
    const second = fx.client({ baseUrl: proxy.url, mode: "none", outcomes: { flushIntervalMs: NEVER } });
    client.record(read, { ok: true });
    // Mode none holds nothing: what it serves is what its reads last answered.
    second.record(await second.get("support", { version: "latest" }), { ok: true });
    await client.flush();
    await second.flush();
    expect(batches.length).toBe(2);
    expect(batches[0]?.instance?.id).not.toBe(batches[1]?.instance?.id);
    expect(batches[1]?.instance?.serving).toEqual([{ prompt: "support", version: read.version }]);
    expect(batches[1]?.outcomes.map((o) => o.label)).toEqual([undefined]);
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(SDK).toBe(`typescript/${pkg.version}`);
  });
});
