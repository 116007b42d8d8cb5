/**
 * Found by test/resilience/fuzz-properties.test.ts: a 2025-era request with params of the wrong shape was
 * answered -32603 "internal error" with a zod issue list as the message. It is the client's mistake: -32602.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";

describe.each(DATABASES)("MCP params of the wrong shape ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await testApp(database);
  });
  afterEach(async () => {
    await t.close();
  });

  async function rpc(method: string, params: unknown) {
    const res = await t.app.server.inject({
      method: "POST",
      url: "/api/v2/mcp",
      headers: {
        "x-api-key": t.key,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
      },
      payload: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }),
    });
    const data = res.body.split("\n").find((line) => line.startsWith("data: "));
    return { status: res.statusCode, message: JSON.parse(data?.slice(6) ?? res.body) };
  }

  it.each([
    [
      "prompts/get",
      { name: "a", arguments: null },
      "Invalid params for prompts/get: params.arguments: must be an object, not null",
    ],
    ["prompts/get", { name: 5 }, "Invalid params for prompts/get: params.name: must be a string, not a number"],
    ["prompts/list", { cursor: 5 }, "Invalid params for prompts/list: params.cursor: must be a string, not a number"],
    ["tools/list", { cursor: 5 }, "Invalid params for tools/list: params.cursor: must be a string, not a number"],
  ])("%s with %j is -32602 naming the field", async (method, params, message) => {
    expect(await rpc(method, params)).toEqual({
      status: 200,
      message: { jsonrpc: "2.0", id: 7, error: { code: -32602, message } },
    });
  });

  it("prompts/get of a name no prompt id can have is not found, without asking the database", async () => {
    // A NUL made PostgreSQL fail, and its words reached the client as -32603.
    for (const name of ["a\u0000b", "x".repeat(65), "../etc", "Upper"]) {
      expect((await rpc("prompts/get", { name, arguments: {} })).message, JSON.stringify(name)).toEqual({
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32602, message: `prompt ${name} not found` },
      });
    }
  });

  it("a well-formed request still works, and a failing handler is not relabelled", async () => {
    const list = await rpc("prompts/list", {});
    expect(list.message).toEqual({ jsonrpc: "2.0", id: 7, result: { prompts: [] } });
    const missing = await rpc("prompts/get", { name: "nope", arguments: {} });
    expect(missing.message).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32602, message: "prompt nope not found" },
    });
  });
});
