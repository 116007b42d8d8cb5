import type { Client } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp } from "../support/mcp.js";
import { waitFor } from "../support/wait.js";

/** `subscriptions/listen` (2026-07-28): a listening client hears that its project's prompt list changed. */
describe.each(DATABASES)("MCP prompts list_changed ($name)", (database) => {
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

  /** A modern client listening for prompt list changes, and the count of notifications it got. */
  const listener = async (key: string) => {
    const client = await connectMcp(url, key, "2026-07-28");
    clients.push(client);
    const heard = { count: 0 };
    client.setNotificationHandler("notifications/prompts/list_changed", () => {
      heard.count++;
    });
    const subscription = await client.listen({ promptsListChanged: true });
    expect(subscription.honoredFilter).toEqual({ promptsListChanged: true });
    return { client, heard, subscription };
  };

  it("claims listChanged for prompts, not for tools", async () => {
    const client = await connectMcp(url, t.key, "2026-07-28");
    clients.push(client);
    expect(client.getServerCapabilities()).toMatchObject({
      tools: { listChanged: false },
      prompts: { listChanged: true },
    });
  });

  it("notifies listeners of the project when a prompt is created or changes, and nobody else", async () => {
    const other = await t.newProject({ plan: "pro" });
    const mine = await listener(t.key);
    const theirs = await listener(other.key);

    const created = await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "new" }) });
    expect(created.status).toBe(201);
    await waitFor(() => mine.heard.count === 1);
    // A new version may change the prompt's arguments: the list changed too.
    await t.request("PUT", "/api/v2/prompts/new", { body: promptBody(2) });
    await waitFor(() => mine.heard.count === 2);
    const { prompts } = await mine.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(["new"]);
    // Give a stray notification time to arrive before saying none did.
    await new Promise((r) => setTimeout(r, 200));
    expect(theirs.heard.count).toBe(0);
    expect(mine.heard.count).toBe(2);
  });

  it("a listen stream ends when the server shuts down, without holding the shutdown", async () => {
    const { subscription } = await listener(t.key);
    await t.app.server.close();
    expect(await subscription.closed).toMatch(/^(graceful|remote)$/);
  });
});
