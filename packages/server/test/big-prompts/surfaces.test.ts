import type { Client } from "@modelcontextprotocol/client";
import { assemble, withGuard } from "@promptstore/core/prompts/assemble";
import { DEFAULT_GUARD_TEXT } from "@promptstore/core/prompts/guard";
import { contentHash } from "@promptstore/core/prompts/hash";
import { markdownToSections } from "@promptstore/core/prompts/markdown";
import { bigPromptMarkdown, editedBigPrompt } from "@promptstore/core/testing/big-prompt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";
import { member, promptsUrl } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp, ERAS, toolData } from "../support/mcp.js";
import { changes, type EventStreamReader, openEventStream } from "../support/sse.js";

/**
 * A 250 KB system prompt (most of it one section) through every surface that reads or writes content: the
 * same bytes and the same hash as a small prompt gets, and no new version when nothing changed.
 */
const MARKDOWN = bigPromptMarkdown();
const SECTIONS = markdownToSections(MARKDOWN);
const HASH = contentHash({ sections: SECTIONS, tools: [] });
const EDITED = editedBigPrompt(MARKDOWN);
const EDITED_SECTIONS = markdownToSections(EDITED);
const ASSEMBLED = assemble(SECTIONS);
const strip = (sections: { title: string; content: string; enabled: boolean }[]) =>
  sections.map(({ title, content, enabled }) => ({ title, content, enabled }));

describe.each(DATABASES)("a 250 KB prompt on every surface ($name)", (database) => {
  let t: TestApp;
  let url: string;
  const clients: Client[] = [];
  const streams: EventStreamReader[] = [];
  beforeEach(async () => {
    t = await testApp(database);
    url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await t.close();
  });

  it("is the fixture the issue asks for: about 250 KB, most of it in one section", () => {
    expect(Buffer.byteLength(MARKDOWN)).toBeGreaterThan(245_000);
    expect(Buffer.byteLength(MARKDOWN)).toBeLessThan(255_000);
    expect(SECTIONS.map((s) => s.title)).toEqual(["Role", "Instructions", "Tools", "Output Format"]);
    expect(SECTIONS[1]!.content.length).toBeGreaterThan(240_000);
    expect(EDITED_SECTIONS[1]!.content).not.toBe(SECTIONS[1]!.content);
  });

  it("REST v2 and v1: created from Markdown, read back byte for byte with the same hash; an unchanged save makes nothing", async () => {
    const created = await t.request("POST", "/api/v2/prompts", {
      body: { id: "agent", name: "Agent", markdown: MARKDOWN, publish: true },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.version).toBe(HASH);

    const v2 = (await t.request("GET", "/api/v2/prompts/agent")).body.data;
    expect(v2.version).toBe(HASH);
    expect(strip(v2.sections)).toEqual(SECTIONS);
    expect(v2.prompt).toBe(withGuard(ASSEMBLED, DEFAULT_GUARD_TEXT));
    expect(v2.variables).toEqual(["company", "customer_name"]);
    // Cached and uncached reads give the same bytes.
    const again = await t.request("GET", "/api/v2/prompts/agent");
    expect(again.body.data).toEqual(v2);

    const v1 = (await t.request("GET", "/api/v1/prompts/agent")).body.data;
    expect(v1.version).toBe(HASH);
    expect(v1.prompt).toBe(v2.prompt);

    const same = await t.request("PUT", "/api/v2/prompts/agent", { body: { sections: SECTIONS } });
    expect(same.body.data).toEqual({ id: "agent", version: HASH, created: false, published: false });
    const edited = await t.request("PUT", "/api/v2/prompts/agent", { body: { markdown: EDITED } });
    expect(edited.body.data.created).toBe(true);
    expect(edited.body.data.version).toBe(contentHash({ sections: EDITED_SECTIONS, tools: [] }));
    const versions = (await t.request("GET", "/api/v2/prompts/agent/versions")).body.data.versions;
    expect(versions.map((v: { version: string }) => v.version)).toEqual([edited.body.data.version, HASH]);
  });

  it("a section of exactly the limit is kept; one character more is refused naming the section", async () => {
    const exact = "x".repeat(1_000_000);
    const ok = await t.request("POST", "/api/v2/prompts", {
      body: { id: "full", name: "Full", sections: [{ title: "Big", content: exact }] },
    });
    expect(ok.status).toBe(201);
    const read = (await t.request("GET", "/api/v2/prompts/full?guard=false")).body.data;
    expect(read.sections[0].content.length).toBe(1_000_000);
    const over = await t.request("POST", "/api/v2/prompts", {
      body: {
        name: "Over",
        sections: [
          { title: "A", content: "a" },
          { title: "Big", content: `${exact}x` },
        ],
      },
    });
    expect(over.status).toBe(400);
    expect(over.body).toEqual({ success: false, error: "sections[1].content: must be at most 1000000 characters" });
  });

  describe.each(ERAS)("MCP (protocol %s)", (era) => {
    it("create_prompt, get_prompt and prompts/get carry the whole prompt", async () => {
      const client = await connectMcp(url, t.key, era);
      clients.push(client);
      const call = async (name: string, args: Record<string, unknown>) =>
        toolData(await client.callTool({ name, arguments: args }));
      const created = await call("create_prompt", { id: "agent", name: "Agent", markdown: MARKDOWN, publish: true });
      expect(created.error).toBeUndefined();
      expect(created.data.version).toBe(HASH);
      const got = await call("get_prompt", { id: "agent" });
      expect(got.data.version).toBe(HASH);
      expect(got.data.prompt).toBe(withGuard(ASSEMBLED, DEFAULT_GUARD_TEXT));
      expect(strip(got.data.sections)).toEqual(SECTIONS);
      const same = await call("save_prompt_version", { id: "agent", markdown: MARKDOWN });
      expect(same.data).toMatchObject({ created: false, version: HASH });

      const prompt = await client.getPrompt({ name: "agent", arguments: { company: "Acme", customer_name: "Ada" } });
      const text = (prompt.messages[0]!.content as { text: string }).text;
      const filled = ASSEMBLED.replace("{{ company }}", "Acme").replace("{{ customer_name }}", "Ada");
      expect(text).toBe(withGuard(filled, DEFAULT_GUARD_TEXT));
    });
  });

  it("the events stream with include=read delivers the whole read; plain events stay small", async () => {
    const rich = await openEventStream(url, t.key, {}, "?include=read");
    const plain = await openEventStream(url, t.key, {}, "");
    streams.push(rich, plain);
    await rich.next((e) => e.event === "ready");
    await plain.next((e) => e.event === "ready");
    await t.request("POST", "/api/v2/prompts", {
      body: { id: "agent", name: "Agent", markdown: MARKDOWN, publish: true },
    });
    await rich.next((e) => e.event === "prompt.created");
    const event = await plain.next((e) => e.event === "prompt.created");
    const read = (await t.request("GET", "/api/v2/prompts/agent")).body.data;
    expect(changes(rich).map((e) => [e.type, e.read])).toEqual([["prompt.created", read]]);
    expect(event.data?.length).toBeLessThan(500);

    // A read larger than the 1 MiB a client may leave unread (a section at the limit is in it twice: as a
    // section and in the assembled prompt) still reaches a client that keeps up.
    const huge = "東".repeat(1_000_000);
    await t.request("POST", "/api/v2/prompts", {
      body: { id: "huge", name: "Huge", sections: [{ title: "H", content: huge }] },
    });
    const hugeEvent = await rich.next(
      (e) => e.event === "prompt.created" && e.data?.includes('"prompt_id":"huge"') === true,
      20_000,
    );
    expect(Buffer.byteLength(hugeEvent.data ?? "")).toBeGreaterThan(6_000_000);
    expect(JSON.parse(hugeEvent.data ?? "").read.sections[0].content).toBe(huge);
    // ... and the stream stays open: the next change arrives on it, no reconnect needed.
    await t.request("POST", "/api/v2/prompts", { body: { id: "after", name: "After", markdown: "# A\nb" } });
    await rich.next((e) => e.event === "prompt.created" && e.data?.includes('"prompt_id":"after"') === true, 20_000);
  });

  it("the dashboard API saves, reads and lists it like REST", async () => {
    const editor = await member(t, "editor");
    const base = promptsUrl(t.project.projectId);
    const created = await editor.call("POST", base, { body: { id: "agent", name: "Agent", markdown: MARKDOWN } });
    expect(created.body.data.version).toBe(HASH);
    const read = await editor.call("GET", `${base}/agent?version=latest`);
    expect(strip(read.body.data.sections)).toEqual(SECTIONS);
    const saved = await editor.call("PUT", `${base}/agent`, { body: { sections: EDITED_SECTIONS, message: "edit" } });
    expect(saved.body.data.created).toBe(true);
    const same = await editor.call("PUT", `${base}/agent`, { body: { sections: EDITED_SECTIONS } });
    expect(same.body.data).toMatchObject({ created: false, version: saved.body.data.version });
  });

  it("import takes it with its hash, and a second import makes nothing", async () => {
    const body = {
      id: "agent",
      name: "Agent",
      versions: [{ version: HASH, created_at: "2026-01-02T03:04:05.000Z", sections: SECTIONS }],
      latest_version: HASH,
    };
    const first = await t.request("POST", "/api/v2/import", { body });
    expect(first.body.data).toMatchObject({ created: true, versions_created: 1 });
    const second = await t.request("POST", "/api/v2/import", { body });
    expect(second.body.data).toMatchObject({ created: false, versions_created: 0, versions_existing: 1 });
    const read = (await t.request("GET", "/api/v2/prompts/agent?version=latest")).body.data;
    expect(strip(read.sections)).toEqual(SECTIONS);
  });
});
