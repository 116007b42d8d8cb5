import type { Client } from "@modelcontextprotocol/client";
import { contentHash } from "@promptstore/core/prompts/hash";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { type TestApp, testApp } from "../support/app.js";
import { member, promptsUrl } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp, toolData } from "../support/mcp.js";

/** PROMPTSTORE_MAX_SECTION_CHARS and PROMPTSTORE_MAX_BODY_BYTES, set lower: every surface refuses at the same bound. */
describe.each(DATABASES)("configured content limits ($name)", (database) => {
  let t: TestApp;
  let url: string;
  const clients: Client[] = [];
  beforeEach(async () => {
    t = await testApp(database, { PROMPTSTORE_MAX_SECTION_CHARS: 2000, PROMPTSTORE_MAX_BODY_BYTES: 65_536 });
    url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await t.close();
  });

  const atLimit = [{ title: "A", content: "a".repeat(2000) }];
  const over = [
    { title: "A", content: "a" },
    { title: "B", content: "b".repeat(2001) },
  ];
  const SECTION_MESSAGE = "sections[1].content: must be at most 2000 characters";

  it("parses both from the environment, with the documented defaults", () => {
    const defaults = loadConfig({});
    expect([defaults.PROMPTSTORE_MAX_SECTION_CHARS, defaults.PROMPTSTORE_MAX_BODY_BYTES]).toEqual([
      1_000_000, 4_194_304,
    ]);
    const set = loadConfig({ PROMPTSTORE_MAX_SECTION_CHARS: "2000000", PROMPTSTORE_MAX_BODY_BYTES: "8388608" });
    expect([set.PROMPTSTORE_MAX_SECTION_CHARS, set.PROMPTSTORE_MAX_BODY_BYTES]).toEqual([2_000_000, 8_388_608]);
    expect(() => loadConfig({ PROMPTSTORE_MAX_SECTION_CHARS: "10" })).toThrow(
      /^configuration: PROMPTSTORE_MAX_SECTION_CHARS: /,
    );
    expect(() => loadConfig({ PROMPTSTORE_MAX_BODY_BYTES: "lots" })).toThrow(
      /^configuration: PROMPTSTORE_MAX_BODY_BYTES: /,
    );
  });

  it("REST v2 create and save, Markdown included", async () => {
    expect(
      (await t.request("POST", "/api/v2/prompts", { body: { id: "p", name: "P", sections: atLimit } })).status,
    ).toBe(201);
    const created = await t.request("POST", "/api/v2/prompts", { body: { name: "Q", sections: over } });
    expect([created.status, created.body]).toEqual([400, { success: false, error: SECTION_MESSAGE }]);
    const saved = await t.request("PUT", "/api/v2/prompts/p", { body: { sections: over } });
    expect([saved.status, saved.body]).toEqual([400, { success: false, error: SECTION_MESSAGE }]);
    const markdown = await t.request("PUT", "/api/v2/prompts/p", {
      body: { markdown: `# A\na\n# B\n${"b".repeat(2001)}` },
    });
    expect(markdown.body).toEqual({ success: false, error: `markdown: ${SECTION_MESSAGE}` });
  });

  it("a Markdown version is bounded by the body limit, and a bigger body is a 413 naming it", async () => {
    const long = `# A\n${"a".repeat(66_000)}`;
    const res = await t.request("POST", "/api/v2/prompts", { body: { name: "M", markdown: long } });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ success: false, error: "body: must be at most 65536 bytes" });
    const justUnder = `# A\n${"a".repeat(60_000)}`;
    const under = await t.request("POST", "/api/v2/prompts", { body: { name: "M", markdown: justUnder } });
    // Within the body, but its one section is over the section limit.
    expect(under.body).toEqual({
      success: false,
      error: "markdown: sections[0].content: must be at most 2000 characters",
    });
  });

  it("MCP tools refuse it as a tool error with the same message", async () => {
    const client = await connectMcp(url, t.key, "2026-07-28");
    clients.push(client);
    const result = toolData(await client.callTool({ name: "create_prompt", arguments: { name: "Q", sections: over } }));
    expect(result.error).toBe(SECTION_MESSAGE);
  });

  it("the dashboard API refuses it with the same message", async () => {
    const editor = await member(t, "editor");
    const res = await editor.call("POST", promptsUrl(t.project.projectId), { body: { name: "Q", sections: over } });
    expect([res.status, res.body]).toEqual([400, { success: false, error: SECTION_MESSAGE }]);
  });

  it("import names the version", async () => {
    const sections = over.map((s) => ({ ...s, enabled: true }));
    const hash = contentHash({ sections, tools: [] });
    const res = await t.request("POST", "/api/v2/import", {
      body: {
        id: "i",
        name: "I",
        versions: [{ version: hash, created_at: "2026-01-01T00:00:00.000Z", sections: over }],
        latest_version: hash,
      },
    });
    expect([res.status, res.body]).toEqual([400, { success: false, error: `versions[0].${SECTION_MESSAGE}` }]);
  });
});
