import type { Client } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";
import { member, promptsUrl } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp, toolData } from "../support/mcp.js";

/**
 * A field left out says `name: required`, a field of the wrong type says what it must be: never zod's
 * "Invalid input: expected string, received undefined", on any surface.
 */
describe.each(DATABASES)("plain validation messages on every surface ($name)", (database) => {
  let t: TestApp;
  let url: string;
  let client: Client | undefined;
  beforeEach(async () => {
    t = await testApp(database);
    url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
  });
  afterEach(async () => {
    await client?.close();
    client = undefined;
    await t.close();
  });

  const sections = [{ title: "A", content: "x" }];

  it("REST v2: a missing name is required, a numeric name must be a string", async () => {
    const missing = await t.request("POST", "/api/v2/prompts", { body: { sections } });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ success: false, error: "name: required" });
    const numeric = await t.request("POST", "/api/v2/prompts", { body: { name: 5, sections } });
    expect(numeric.body).toEqual({ success: false, error: "name: must be a string, not a number" });
    const label = await t.request("POST", "/api/v2/prompts", { body: { name: "A", sections: [{ content: "x" }] } });
    expect(label.body).toEqual({ success: false, error: "sections[0].title: required" });
  });

  it("MCP: a tool call without name says name: required", async () => {
    client = await connectMcp(url, t.key, "2025");
    const result = toolData(await client.callTool({ name: "create_prompt", arguments: { sections } }));
    expect(result.error).toBe("Input validation error: Invalid arguments for tool create_prompt: name: required");
  });

  it("the dashboard API: a missing name is required", async () => {
    const editor = await member(t, "editor");
    const res = await editor.call("POST", promptsUrl(t.project.projectId), { body: { sections } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: "name: required" });
  });
});
