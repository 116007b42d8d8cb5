import type { Client } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp, ERAS, toolData } from "../support/mcp.js";
import { waitFor } from "../support/wait.js";

/** delete_prompt through a real MCP client over HTTP: the same PromptService.delete as REST. */
describe.each(DATABASES)("MCP delete_prompt ($name)", (database) => {
  let t: TestApp;
  let url: string;
  const clients: Client[] = [];
  beforeEach(async () => {
    t = await testApp(database);
    url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await t.close();
  });
  const connect = async (era: (typeof ERAS)[number], key = t.key) => {
    const client = await connectMcp(url, key, era);
    clients.push(client);
    return client;
  };

  describe.each(ERAS)("protocol %s", (era) => {
    it("deletes a prompt created over MCP; then reads, versions, saves, publishes and a second delete are errors", async () => {
      const client = await connect(era);
      const call = async (name: string, args: Record<string, unknown>) =>
        toolData(await client.callTool({ name, arguments: args }));

      const created = await call("create_prompt", { name: "Support Bot", markdown: "# Role\nHelp {{ user }}." });
      expect(created.data).toMatchObject({ id: "support-bot" });
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(["support-bot"]);

      const deleted = await client.callTool({ name: "delete_prompt", arguments: { id: "support-bot" } });
      expect(deleted.isError).toBeFalsy();
      expect(deleted.structuredContent).toEqual({ id: "support-bot", deleted: true });

      expect(await call("get_prompt", { id: "support-bot" })).toEqual({ error: "prompt support-bot not found" });
      expect(await call("get_prompt", { id: "support-bot", version: created.data.version })).toEqual({
        error: "prompt support-bot not found",
      });
      expect(await call("list_versions", { id: "support-bot" })).toEqual({ error: "prompt support-bot not found" });
      expect(await call("save_prompt_version", { id: "support-bot", markdown: "# Role\nAgain." })).toEqual({
        error: "prompt support-bot not found",
      });
      expect(await call("publish_prompt", { id: "support-bot" })).toEqual({ error: "prompt support-bot not found" });
      expect(await call("delete_prompt", { id: "support-bot" })).toEqual({ error: "prompt support-bot not found" });
      expect((await call("list_prompts", {})).data.prompts).toEqual([]);
      expect((await client.listPrompts()).prompts).toEqual([]);
      expect((await t.request("GET", "/api/v2/prompts/support-bot")).status).toBe(404);
    });

    it("refuses bad input with the REST message, and another project's prompt is not found", async () => {
      const other = await t.newProject();
      await t.request("POST", "/api/v2/prompts", { key: other.key, body: { ...promptBody(1), id: "theirs" } });
      const client = await connect(era);
      const call = async (args: Record<string, unknown>) =>
        toolData(await client.callTool({ name: "delete_prompt", arguments: args }));
      expect((await call({})).error).toMatch(/: id: /);
      expect((await call({ id: "Not A Slug" })).error).toMatch(/: id: /);
      expect((await call({ id: "theirs" })).error).toBe("prompt theirs not found");
      expect((await t.request("GET", "/api/v2/prompts/theirs", { key: other.key })).status).toBe(200);
    });
  });

  it("tells a listening client that the prompt list changed", async () => {
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "gone" }) });
    const listener = await connect("2026-07-28");
    const heard = { count: 0 };
    listener.setNotificationHandler("notifications/prompts/list_changed", () => {
      heard.count++;
    });
    await listener.listen({ promptsListChanged: true });
    const actor = await connect("2025");
    expect(toolData(await actor.callTool({ name: "delete_prompt", arguments: { id: "gone" } })).data).toEqual({
      id: "gone",
      deleted: true,
    });
    await waitFor(() => heard.count === 1);
    expect((await listener.listPrompts()).prompts).toEqual([]);
  });
});
