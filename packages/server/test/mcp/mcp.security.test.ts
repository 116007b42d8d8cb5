import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp, ERAS, toolData } from "../support/mcp.js";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

describe.each(DATABASES)("MCP security and HTTP behaviour ($name)", (database) => {
  let t: TestApp;
  let url: string;
  beforeEach(async () => {
    t = await testApp(database);
    url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
  });
  afterEach(async () => {
    await t.close();
  });

  const post = (headers: Record<string, string>, body: unknown = INITIALIZE) =>
    fetch(`${url}/api/v2/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify(body),
    });

  it("401 without a key and with a wrong key, before any MCP processing, pointing OAuth clients at the sign-in", async () => {
    const challenge = `Bearer resource_metadata="${url}/.well-known/oauth-protected-resource/api/v2/mcp"`;
    const missing = await post({});
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toBe(challenge);
    expect(await missing.json()).toEqual({ success: false, error: expect.stringMatching(/^x-api-key: missing/) });
    const wrong = await post({ "x-api-key": "ps_wrong" });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toBe(challenge);
    expect(await wrong.json()).toEqual({ success: false, error: "x-api-key: invalid API key" });
    // Even a body that is not MCP at all gets the 401 first.
    expect((await post({}, { not: "jsonrpc" })).status).toBe(401);
  });

  it("401 with a challenge even when the Host header makes no URL (the fuzz found it hanging)", async () => {
    for (const host of ["x:1:2", "["]) {
      const res = await t.app.server.inject({
        method: "POST",
        url: "/api/v2/mcp",
        headers: { host, "content-type": "application/json", accept: "application/json, text/event-stream" },
        payload: JSON.stringify(INITIALIZE),
      });
      expect(res.statusCode, host).toBe(401);
      expect(res.headers["www-authenticate"], host).toBe(
        `Bearer resource_metadata="http://${host}/.well-known/oauth-protected-resource/api/v2/mcp"`,
      );
    }
  });

  it("405 for GET and DELETE", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(`${url}/api/v2/mcp`, { method, headers: { "x-api-key": t.key } });
      expect(res.status, method).toBe(405);
    }
  });

  it("answers a raw 2025 initialize over plain HTTP, and counts it against the rate limit", async () => {
    const res = await post({ "x-api-key": t.key });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe("60");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("59");
    const text = await res.text();
    expect(text).toContain('"serverInfo"');
    expect(text).toContain('"promptstore"');
  });

  it("refuses a present, foreign Origin; accepts localhost origins and no Origin", async () => {
    const evil = await post({ "x-api-key": t.key, origin: "https://evil.example" });
    expect(evil.status).toBe(403);
    expect(((await evil.json()) as { error: string }).error).toMatch(/^origin: /);
    expect((await post({ "x-api-key": t.key, origin: "http://localhost:5173" })).status).toBe(200);
    expect((await post({ "x-api-key": t.key })).status).toBe(200);
  });

  it.each(ERAS)("a project's key never sees another project's prompts (%s)", async (era) => {
    await t.request("POST", "/api/v2/prompts", { body: { ...promptBody(1), id: "secret" } });
    const other = await t.newProject();
    const client = await connectMcp(url, other.key, era);
    try {
      const list = toolData(await client.callTool({ name: "list_prompts", arguments: {} }));
      expect(list.data.prompts).toEqual([]);
      const get = toolData(await client.callTool({ name: "get_prompt", arguments: { id: "secret" } }));
      expect(get.error).toBe("prompt secret not found");
      const publish = toolData(await client.callTool({ name: "publish_prompt", arguments: { id: "secret" } }));
      expect(publish.error).toBe("prompt secret not found");
      const save = toolData(
        await client.callTool({ name: "save_prompt_version", arguments: { id: "secret", markdown: "# Hijack\nx" } }),
      );
      expect(save.error).toBe("prompt secret not found");
      expect((await client.listPrompts()).prompts).toEqual([]);
      await expect(client.getPrompt({ name: "secret", arguments: {} })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
    const versions = (await t.request("GET", "/api/v2/prompts/secret/versions")).body.data;
    expect(versions.versions).toHaveLength(1);
    expect(versions.production_version).toBeNull();
  });
});

describe("MCP origins allowed by configuration (PROMPTSTORE_MCP_ALLOWED_ORIGINS)", () => {
  it("admits the listed hostnames and refuses the rest, localhost included", async () => {
    const t = await testApp(DATABASES[0]!, { PROMPTSTORE_MCP_ALLOWED_ORIGINS: ["app.example.com"] });
    try {
      const post = (origin: string) =>
        t.request("POST", "/api/v2/mcp", {
          body: INITIALIZE,
          headers: { origin, accept: "application/json, text/event-stream" },
        });
      expect((await post("https://app.example.com")).status).toBe(200);
      const refused = await post("http://localhost:5173");
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/^origin: /);
    } finally {
      await t.close();
    }
  });
});
