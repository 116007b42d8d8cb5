import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../src/config.js";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp } from "../support/mcp.js";
import { openEventStream } from "../support/sse.js";

const TOKEN = "metrics-token-0123456789abcdef";

/** The value of one sample of a Prometheus text exposition, or undefined when it is not there. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort();
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = (match[2] ?? "")
      .split(/,(?=\w+=")/)
      .filter(Boolean)
      .sort();
    if (have.length === wanted.length && have.every((pair, i) => pair === wanted[i])) return Number(match[3]);
  }
  return undefined;
}

describe.each(DATABASES)("GET /metrics ($name)", (database) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  const start = async (overrides: Partial<Config> = {}) => {
    t = await testApp(database, overrides);
    return t;
  };
  const scrape = async () => {
    const res = await t!.request("GET", "/metrics", { key: null });
    expect(res.status).toBe(200);
    return res.body as string;
  };

  it("counts requests by method, route template and status, and times them", async () => {
    await start({ PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    expect(
      (await t!.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p", publish: true }) })).status,
    ).toBe(201);
    expect((await t!.request("GET", "/api/v2/prompts/p")).status).toBe(200);
    expect((await t!.request("GET", "/api/v2/prompts/p")).status).toBe(200);
    expect((await t!.request("GET", "/api/v2/prompts/nope")).status).toBe(404);
    expect((await t!.request("GET", "/no/such/path/1")).status).toBe(404);
    expect((await t!.request("GET", "/no/such/path/2")).status).toBe(404);
    const text = await scrape();
    const count = (method: string, route: string, status: string) =>
      sample(text, "promptstore_http_requests_total", { method, route, status });
    expect(count("POST", "/api/v2/prompts", "201")).toBe(1);
    expect(count("GET", "/api/v2/prompts/:id", "200")).toBe(2);
    expect(count("GET", "/api/v2/prompts/:id", "404")).toBe(1);
    // Random paths share one series.
    expect(count("GET", "unmatched", "404")).toBe(2);
    expect(
      sample(text, "promptstore_http_request_duration_seconds_count", { method: "GET", route: "/api/v2/prompts/:id" }),
    ).toBe(3);
    expect(
      sample(text, "promptstore_http_request_duration_seconds_bucket", {
        method: "GET",
        route: "/api/v2/prompts/:id",
        le: "+Inf",
      }),
    ).toBe(3);
    // Cumulative buckets: none holds more than the next.
    const buckets = ["0.0005", "0.001", "0.01", "0.1", "1", "10", "+Inf"].map((le) =>
      sample(text, "promptstore_http_request_duration_seconds_bucket", {
        method: "GET",
        route: "/api/v2/prompts/:id",
        le,
      }),
    );
    expect(buckets.every((n, i) => i === 0 || (n as number) >= (buckets[i - 1] as number))).toBe(true);
    expect(
      sample(text, "promptstore_http_request_duration_seconds_sum", { method: "GET", route: "/api/v2/prompts/:id" }),
    ).toBeGreaterThan(0);
    // Process metrics come along (memory, event loop lag).
    expect(sample(text, "nodejs_eventloop_lag_seconds")).toBeGreaterThanOrEqual(0);
    // No project, prompt id or key in any label.
    expect(text).not.toContain(t!.project.projectId);
    expect(text).not.toContain("/api/v2/prompts/p");
    expect(text).not.toContain(t!.key);
  });

  it("counts read-cache hits and misses", async () => {
    await start({ PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    await t!.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p", publish: true }) });
    for (let n = 0; n < 3; n++) expect((await t!.request("GET", "/api/v2/prompts/p")).status).toBe(200);
    const text = await scrape();
    expect(sample(text, "promptstore_read_cache_misses_total")).toBe(1);
    expect(sample(text, "promptstore_read_cache_hits_total")).toBe(2);
  });

  it("reports no hits and no misses with the read cache off", async () => {
    await start({ PROMPTSTORE_DEFAULT_PLAN: "unlimited", PROMPTSTORE_READ_CACHE: false });
    await t!.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p", publish: true }) });
    for (let n = 0; n < 3; n++) expect((await t!.request("GET", "/api/v2/prompts/p")).status).toBe(200);
    const text = await scrape();
    expect(sample(text, "promptstore_read_cache_misses_total")).toBe(0);
    expect(sample(text, "promptstore_read_cache_hits_total")).toBe(0);
  });

  it("counts rate-limited requests by route", async () => {
    await start();
    // The free plan allows 60 requests a minute.
    const statuses: number[] = [];
    for (let n = 0; n < 62; n++) statuses.push((await t!.request("GET", "/api/v2/prompts")).status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    const text = await scrape();
    expect(sample(text, "promptstore_rate_limited_requests_total", { route: "/api/v2/prompts" })).toBe(2);
    expect(
      sample(text, "promptstore_http_requests_total", { method: "GET", route: "/api/v2/prompts", status: "429" }),
    ).toBe(2);
  });

  it("reports open event streams and MCP listen streams, and leaves streams out of the latency histogram", async () => {
    await start({ PROMPTSTORE_DEFAULT_PLAN: "unlimited" });
    const url = await t!.app.server.listen({ port: 0, host: "127.0.0.1" });
    const open = async () => {
      const text = await scrape();
      return {
        events: sample(text, "promptstore_open_streams", { kind: "events" }),
        mcp: sample(text, "promptstore_open_streams", { kind: "mcp" }),
        text,
      };
    };
    expect(await open()).toMatchObject({ events: 0, mcp: 0 });
    const stream = await openEventStream(url, t!.key);
    await stream.next((e) => e.event === "ready");
    const client = await connectMcp(url, t!.key, "2026-07-28");
    const subscription = await client.listen({ promptsListChanged: true });
    expect(await open()).toMatchObject({ events: 1, mcp: 1 });
    stream.close();
    await subscription.close?.();
    await client.close();
    // The server hears of the closes a moment later.
    let last = await open();
    for (let n = 0; n < 100 && (last.events !== 0 || last.mcp !== 0); n++) {
      await new Promise((r) => setTimeout(r, 50));
      last = await open();
    }
    expect(last).toMatchObject({ events: 0, mcp: 0 });
    expect(
      sample(last.text, "promptstore_http_requests_total", { method: "GET", route: "/api/v2/events", status: "200" }),
    ).toBe(1);
    expect(
      sample(last.text, "promptstore_http_request_duration_seconds_count", { method: "GET", route: "/api/v2/events" }),
    ).toBeUndefined();
  });

  it("reports the database pool", async () => {
    await start();
    const text = await scrape();
    const state = (s: string) => sample(text, "promptstore_db_pool_connections", { state: s });
    if (database.name === "sqlite") {
      expect([state("max"), state("open"), state("idle"), state("waiting")]).toEqual([1, 1, undefined, undefined]);
    } else {
      // The test stores open a pool of 20 (support/databases.ts).
      expect(state("max")).toBe(20);
      expect(state("open")).toBeGreaterThanOrEqual(1);
      // Writes the test did not ask for (a key's last use) may hold a connection at the moment of the scrape.
      expect(state("idle")).toBeGreaterThanOrEqual(0);
      expect(state("idle")).toBeLessThanOrEqual(state("open")!);
      expect(state("waiting")).toBe(0);
    }
  });

  it("is open without a token, in Prometheus' text format", async () => {
    await start();
    const res = await t!.request("GET", "/metrics", { key: null });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(res.body).toContain("# TYPE promptstore_http_requests_total counter");
    expect(res.body).toContain("# TYPE promptstore_http_request_duration_seconds histogram");
  });

  it("requires the bearer token when PROMPTSTORE_METRICS_TOKEN is set", async () => {
    await start({ PROMPTSTORE_METRICS_TOKEN: TOKEN });
    for (const authorization of [undefined, "Bearer wrong", `Basic ${TOKEN}`, `Bearer ${TOKEN}x`, "Bearer "]) {
      const res = await t!.request("GET", "/metrics", {
        key: null,
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(res.status).toBe(401);
      expect(res.headers["www-authenticate"]).toBe('Bearer realm="metrics"');
      expect(res.body).toEqual({
        success: false,
        error: "authorization: a valid bearer token is required for the metrics",
      });
    }
    const res = await t!.request("GET", "/metrics", { key: null, headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.body).toContain("promptstore_http_requests_total");
  });

  it("is not served with PROMPTSTORE_METRICS off", async () => {
    await start({ PROMPTSTORE_METRICS: false });
    expect((await t!.request("GET", "/metrics", { key: null })).status).toBe(404);
  });
});
