import type { Client } from "@modelcontextprotocol/client";
import { DEFAULT_GUARD_TEXT } from "@promptstore/core/prompts/guard";
import { contentHash } from "@promptstore/core/prompts/hash";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp, ERAS, MCP_TOOLS, toolData } from "../support/mcp.js";

describe.each(DATABASES)("MCP at /api/v2/mcp ($name)", (database) => {
  let t: TestApp;
  let url: string;
  let key: string;
  const clients: Client[] = [];
  beforeEach(async () => {
    t = await testApp(database);
    url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    key = (await t.newProject({ plan: "unlimited" })).key;
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await t.close();
  });
  const connect = async (era: (typeof ERAS)[number], as = key) => {
    const client = await connectMcp(url, as, era);
    clients.push(client);
    return client;
  };

  describe.each(ERAS)("protocol %s", (era) => {
    it("lists every tool with their input schemas; reads are marked read-only", async () => {
      const client = await connect(era);
      const { tools } = await client.listTools();
      const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
      expect(Object.keys(byName).sort()).toEqual(MCP_TOOLS);
      for (const name of ["list_prompts", "get_prompt", "list_versions"]) {
        expect(byName[name]?.annotations?.readOnlyHint, name).toBe(true);
      }
      for (const name of ["create_prompt", "save_prompt_version", "publish_prompt", "delete_prompt"]) {
        expect(byName[name]?.annotations?.readOnlyHint, name).toBe(false);
      }
      const create = byName.create_prompt?.inputSchema as any;
      expect(create.properties.sections.maxItems).toBe(100);
      expect(create.required).toEqual(["name"]);
      expect((byName.get_prompt!.inputSchema as any).required).toEqual(["id"]);
    });

    it("calls every tool: create, get, save, publish (and roll back), list_versions, list_prompts", async () => {
      const client = await connect(era);
      const call = async (name: string, args: Record<string, unknown>) =>
        toolData(await client.callTool({ name, arguments: args }));

      const created = await call("create_prompt", { name: "Support Bot", markdown: "# Role\nHelp {{ user }}." });
      expect(created.data).toMatchObject({ id: "support-bot", published: false });
      const v1 = created.data.version;

      const read = await call("get_prompt", { id: "support-bot", guard: false });
      expect(read.data).toMatchObject({
        prompt: "<Role>\nHelp {{ user }}.\n</Role>",
        variables: ["user"],
        label: "latest",
      });

      const saved = await call("save_prompt_version", {
        id: "support-bot",
        sections: [{ title: "Role", content: "Help {{ user }} kindly." }],
        message: "kinder",
      });
      expect(saved.data).toMatchObject({ id: "support-bot", created: true, published: false });
      const same = await call("save_prompt_version", {
        id: "support-bot",
        sections: [{ title: "Role", content: "Help {{ user }} kindly." }],
      });
      expect(same.data).toMatchObject({ created: false, version: saved.data.version });

      expect((await call("publish_prompt", { id: "support-bot" })).data).toEqual({
        id: "support-bot",
        version: saved.data.version,
        published: true,
        label: "production",
      });
      expect(await call("publish_prompt", { id: "support-bot", version: v1.slice(0, 6) })).toEqual({
        error:
          "Input validation error: Invalid arguments for tool publish_prompt: version: must be latest, or 7-64 lowercase hex characters of a version hash",
      });
      expect((await call("publish_prompt", { id: "support-bot", version: v1.slice(0, 8) })).data.version).toBe(v1);
      expect((await call("get_prompt", { id: "support-bot" })).data).toMatchObject({
        version: v1,
        label: "production",
      });
      expect((await call("get_prompt", { id: "support-bot", version: "latest" })).data.version).toBe(
        saved.data.version,
      );

      const versions = await call("list_versions", { id: "support-bot" });
      expect(versions.data.versions.map((v: { version: string }) => v.version).sort()).toEqual(
        [v1, saved.data.version].sort(),
      );
      expect(versions.data).toMatchObject({ production_version: v1, latest_version: saved.data.version });

      const list = await call("list_prompts", {});
      expect(list.data.prompts.map((p: { id: string }) => p.id)).toEqual(["support-bot"]);
      expect((await call("list_prompts", { limit: 1 })).data.next_cursor).toBeNull();
    });

    it("serves every prompt as an MCP prompt: variables are arguments, get fills them in with the guard", async () => {
      await t.request("POST", "/api/v2/prompts", {
        key,
        body: {
          name: "Greeter",
          description: "Greets",
          sections: [
            { title: "Role", content: "Greet {{ name }} from {{ city }}." },
            { title: "Off", content: "{{ hidden }}", enabled: false },
          ],
          publish: true,
        },
      });
      await t.request("POST", "/api/v2/prompts", {
        key,
        body: { name: "Plain", sections: [{ title: "A", content: "no vars" }] },
      });
      const client = await connect(era);
      const { prompts } = await client.listPrompts();
      expect(prompts.map((p) => [p.name, p.arguments?.map((a) => [a.name, a.required])])).toEqual([
        [
          "greeter",
          [
            ["name", true],
            ["city", true],
          ],
        ],
        ["plain", []],
      ]);
      expect(prompts[0]).toMatchObject({ title: "Greeter", description: "Greets" });

      const got = await client.getPrompt({ name: "greeter", arguments: { name: "Ada", city: "London {{ name }}" } });
      expect(got.messages).toHaveLength(1);
      const text = (got.messages[0]!.content as { text: string }).text;
      expect(text).toBe(`<Role>\nGreet Ada from London {{ name }}.\n</Role>\n\n${DEFAULT_GUARD_TEXT}`);
    });

    it("rejects a missing argument and an unknown prompt as invalid params", async () => {
      await t.request("POST", "/api/v2/prompts", { key, body: promptBody(1) });
      const client = await connect(era);
      await expect(client.getPrompt({ name: "prompt-1", arguments: { company: "Acme" } })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining("language"),
      });
      await expect(client.getPrompt({ name: "nope", arguments: {} })).rejects.toMatchObject({ code: -32602 });
    });

    it("returns tool errors with the REST API's message for the same bad input", async () => {
      const client = await connect(era);
      const cases: Record<string, unknown>[] = [
        { name: "A", sections: [{ title: " ", content: "x" }] },
        { name: "A" },
        { name: "A", markdown: "no heading" },
        { ...promptBody(), publsh: true },
        { name: "x".repeat(201), sections: [{ title: "T", content: "c" }] },
      ];
      for (const body of cases) {
        const rest = await t.request("POST", "/api/v2/prompts", { key, body });
        expect(rest.status).toBe(400);
        const mcp = toolData(await client.callTool({ name: "create_prompt", arguments: body }));
        expect(mcp.error).toContain(rest.body.error);
      }
      const missing = toolData(await client.callTool({ name: "get_prompt", arguments: { id: "missing" } }));
      expect(missing.error).toBe("prompt missing not found");
      const badVersion = toolData(await client.callTool({ name: "get_prompt", arguments: { id: "x", version: "zz" } }));
      expect(badVersion.error).toContain("version: must be production, latest");
    });

    it("enforces the plan limit as a tool error", async () => {
      const free = await t.newProject({ plan: "free" });
      const client = await connect(era, free.key);
      for (let n = 0; n < 5; n++) {
        expect(toolData(await client.callTool({ name: "create_prompt", arguments: promptBody(n) })).data).toEqual({
          id: `prompt-${n}`,
          name: `Prompt ${n}`,
          version: contentHash({ sections: promptBody(n).sections.map((s) => ({ ...s, enabled: true })), tools: [] }),
          published: false,
          created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        });
      }
      const refused = toolData(await client.callTool({ name: "create_prompt", arguments: promptBody(5) }));
      expect(refused.error).toMatch(/plan limit reached/);
    });
  });

  it("a publish through MCP invalidates the REST read cache at once", async () => {
    const v1 = (await t.request("POST", "/api/v2/prompts", { key, body: promptBody(1, { publish: true }) })).body.data
      .version;
    const v2 = (await t.request("PUT", "/api/v2/prompts/prompt-1", { key, body: { sections: promptBody(2).sections } }))
      .body.data.version;
    expect((await t.request("GET", "/api/v2/prompts/prompt-1", { key })).body.data.version).toBe(v1);
    expect((await t.request("GET", "/api/v1/prompts/prompt-1", { key })).body.data.version).toBe(v1);
    const client = await connect("2026-07-28");
    await client.callTool({ name: "publish_prompt", arguments: { id: "prompt-1", version: v2 } });
    expect((await t.request("GET", "/api/v2/prompts/prompt-1", { key })).body.data.version).toBe(v2);
    expect((await t.request("GET", "/api/v1/prompts/prompt-1", { key })).body.data.version).toBe(v2);
  });
});
