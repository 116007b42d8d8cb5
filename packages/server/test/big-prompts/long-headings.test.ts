import type { Client } from "@modelcontextprotocol/client";
import { contentHash } from "@promptstore/core/prompts/hash";
import { tagName } from "@promptstore/core/prompts/tag-name";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";
import { member, promptsUrl } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp, toolData } from "../support/mcp.js";

/**
 * Real system prompts have Markdown headings longer than 100 characters ("# The `canmore` tool creates and
 * updates textdocs that are shown in a …"). A heading of 1000 characters is a title on every surface, and
 * its tag still follows the tag-name rule; one character more is refused naming the field.
 */
const START = "The `canmore` tool creates and updates textdocs that are shown in a canvas next to the conversation";
const TITLE = `${START} ${"x".repeat(1000 - START.length - 1)}`;
const TOO_LONG = `${TITLE}y`;
const MARKDOWN = `# ${TITLE}\nUse it well.\n`;
const SECTIONS = [{ title: TITLE, content: "Use it well.", enabled: true }];
const HASH = contentHash({ sections: SECTIONS, tools: [] });
const TAG = tagName(TITLE);

describe.each(DATABASES)("a 1000-character heading on every surface ($name)", (database) => {
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

  it("keeps the tag-name rule: spaces become _, backticks are dropped", () => {
    expect(TITLE.length).toBe(1000);
    expect(TAG.startsWith("The_canmore_tool_creates_and_updates_textdocs")).toBe(true);
    expect(TAG).toMatch(/^[\p{L}_][\p{L}\p{M}\p{Nd}_.-]*$/u);
  });

  it("REST v2 takes it as Markdown and as sections; v1 reads it; 1001 characters are refused", async () => {
    const created = await t.request("POST", "/api/v2/prompts", {
      body: { id: "canvas", name: "Canvas", markdown: MARKDOWN, publish: true },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.version).toBe(HASH);
    const v2 = (await t.request("GET", "/api/v2/prompts/canvas?guard=false")).body.data;
    expect(v2.sections.map((s: { title: string }) => s.title)).toEqual([TITLE]);
    expect(v2.prompt).toBe(`<${TAG}>\nUse it well.\n</${TAG}>`);
    // v1 always guards: the assembled text comes first.
    const v1 = (await t.request("GET", "/api/v1/prompts/canvas")).body.data;
    expect(v1.prompt.startsWith(`${v2.prompt}\n\n<Security>`)).toBe(true);
    const bySections = await t.request("POST", "/api/v2/prompts", {
      body: { id: "canvas-2", name: "Canvas", sections: SECTIONS },
    });
    expect(bySections.status).toBe(201);
    expect(bySections.body.data.version).toBe(HASH);

    const over = await t.request("POST", "/api/v2/prompts", {
      body: { name: "Over", markdown: `# ${TOO_LONG}\nx` },
    });
    expect(over.status).toBe(400);
    expect(over.body).toEqual({
      success: false,
      error: "markdown: sections[0].title: must be at most 1000 characters",
    });
  });

  it("MCP create_prompt takes it and refuses one character more", async () => {
    const client = await connectMcp(url, t.key, "2025");
    clients.push(client);
    const call = async (name: string, args: Record<string, unknown>) =>
      toolData(await client.callTool({ name, arguments: args }));
    const created = await call("create_prompt", { id: "canvas", name: "Canvas", markdown: MARKDOWN });
    expect(created.error).toBeUndefined();
    expect(created.data.version).toBe(HASH);
    const over = await call("create_prompt", {
      id: "over",
      name: "Over",
      sections: [{ title: TOO_LONG, content: "x" }],
    });
    expect(over.error).toBe(
      "Input validation error: Invalid arguments for tool create_prompt: sections[0].title: must be at most 1000 characters",
    );
  });

  it("the dashboard API and import take it", async () => {
    const editor = await member(t, "editor");
    const base = promptsUrl(t.project.projectId);
    const created = await editor.call("POST", base, { body: { id: "canvas", name: "Canvas", markdown: MARKDOWN } });
    expect(created.body.data.version).toBe(HASH);
    const read = await editor.call("GET", `${base}/canvas?version=latest`);
    expect(read.body.data.sections.map((s: { title: string }) => s.title)).toEqual([TITLE]);

    const imported = await t.request("POST", "/api/v2/import", {
      body: {
        id: "imported",
        name: "Imported",
        versions: [{ version: HASH, created_at: "2026-01-02T03:04:05.000Z", sections: SECTIONS }],
        latest_version: HASH,
      },
    });
    expect(imported.body.data).toMatchObject({ created: true, versions_created: 1 });
  });
});
