import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("headers on every response ($name)", (database) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp(database);
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1) });
  });
  afterAll(async () => {
    await t.close();
  });

  const requests: [string, string, Record<string, unknown>][] = [
    ["GET", "/api/v2/prompts", {}],
    ["GET", "/api/v2/prompts/prompt-1", {}],
    ["GET", "/api/v2/prompts/missing", {}],
    ["GET", "/api/v2/prompts", { key: null }],
    ["POST", "/api/v2/prompts", { payload: "x", headers: { "content-type": "text/plain" } }],
    ["POST", "/api/v2/prompts", { payload: "{", headers: { "content-type": "application/json" } }],
    ["DELETE", "/api/v2/prompts", {}],
    ["GET", "/nowhere", {}],
    ["GET", "/healthz", { key: null }],
    ["GET", "/api/v2/openapi.json", { key: null }],
  ];

  it.each(requests)(
    "%s %s carries X-API-Version 2, Cache-Control no-store and a request id",
    async (method, url, options) => {
      const res = await t.request(method, url, options);
      expect(res.headers["x-api-version"]).toBe("2");
      expect(res.headers["cache-control"]).toBe("no-store");
      expect(res.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
      expect(String(res.headers["content-type"])).toMatch(/^application\/json/);
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      expect(res.headers["referrer-policy"]).toBe("no-referrer");
    },
  );

  const apiRequests: [string, string, Record<string, unknown>][] = [
    ["GET", "/api/v2/prompts", {}],
    ["GET", "/api/v2/prompts/missing", {}],
    ["GET", "/api/v2/prompts", { key: null }],
    ["POST", "/api/v2/prompts", { payload: "{", headers: { "content-type": "application/json" } }],
    ["GET", "/api/v1/prompts/prompt-1", {}],
    ["GET", "/api/v1/prompts/missing", {}],
    ["GET", "/api/v2/prompts/%e0%80", {}],
    [
      "POST",
      "/api/v2/mcp",
      {
        body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
        headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
      },
    ],
    ["GET", "/api/v2/mcp", {}],
  ];

  it.each(apiRequests)(
    "API answer %s %s: exactly nosniff and no-referrer, no CSP (JSON for programs)",
    async (method, url, options) => {
      const res = await t.request(method, url, options);
      const security = Object.fromEntries(
        Object.entries(res.headers).filter(([name]) =>
          ["x-content-type-options", "referrer-policy", "content-security-policy", "x-frame-options"].includes(name),
        ),
      );
      expect(security).toEqual({ "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" });
    },
  );

  it("answers outside /api (404s, healthz) with the dashboard's full set, CSP included", async () => {
    for (const url of ["/nowhere", "/healthz"]) {
      const res = await t.request("GET", url, { key: null });
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      expect(res.headers["referrer-policy"]).toBe("no-referrer");
      expect(String(res.headers["content-security-policy"])).toMatch(/^default-src 'self';/);
    }
  });

  it("the events stream carries them too", async () => {
    const url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    const controller = new AbortController();
    const res = await fetch(`${url}/api/v2/events`, { headers: { "x-api-key": t.key }, signal: controller.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    controller.abort();
  });

  it("echoes a safe caller request id and replaces an unsafe one", async () => {
    const kept = await t.request("GET", "/healthz", { headers: { "x-request-id": "trace-123.abc" } });
    expect(kept.headers["x-request-id"]).toBe("trace-123.abc");
    const replaced = await t.request("GET", "/healthz", { headers: { "x-request-id": "bad id\twith spaces" } });
    expect(replaced.headers["x-request-id"]).not.toBe("bad id\twith spaces");
  });

  it("healthz answers 200 without a key when the database is reachable", async () => {
    const res = await t.request("GET", "/healthz", { key: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { status: "ok", database: database.name } });
  });
});
