import type { Client } from "@modelcontextprotocol/client";
import type { KeyScope } from "@promptstore/core/accounts/key-scopes";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp } from "../support/mcp.js";
import { changes, type EventStreamReader, openEventStream } from "../support/sse.js";

const SCOPES: KeyScope[] = ["read", "write", "publish"];
const ORDER: Record<KeyScope, number> = { read: 0, write: 1, publish: 2 };

interface ToolCase {
  tool: string;
  needs: KeyScope;
  /** The refusal's exact text, for a key of scope `held`. */
  refusal?: (held: KeyScope) => string;
  args: Record<string, unknown>;
}

const needs = (action: string, needed: string) => (held: KeyScope) =>
  `scope: ${action} needs a key with scope ${needed}; this key has scope ${held}`;

const TOOLS: ToolCase[] = [
  { tool: "list_prompts", needs: "read", args: {} },
  { tool: "get_prompt", needs: "read", args: { id: "seeded" } },
  { tool: "list_versions", needs: "read", args: { id: "seeded" } },
  {
    tool: "create_prompt",
    needs: "write",
    refusal: needs("creating a prompt", "write or higher"),
    args: { name: "New one", sections: [{ title: "Role", content: "Be brief." }] },
  },
  {
    tool: "save_prompt_version",
    needs: "write",
    refusal: needs("saving a version", "write or higher"),
    args: { id: "seeded", sections: [{ title: "Role", content: "Be briefer." }] },
  },
  {
    tool: "publish_prompt",
    needs: "publish",
    refusal: needs("publishing", "publish"),
    args: { id: "seeded" },
  },
  { tool: "delete_prompt", needs: "publish", refusal: needs("deleting a prompt", "publish"), args: { id: "seeded" } },
];

describe.each(DATABASES)("API key scopes on MCP and the events stream ($name)", (database) => {
  let t: TestApp;
  let url: string;
  const keys = {} as Record<KeyScope, string>;
  const clients: Client[] = [];
  const streams: EventStreamReader[] = [];

  beforeEach(async () => {
    t = await testApp(database);
    url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    const project = await t.newProject({ plan: "unlimited" });
    for (const scope of SCOPES) {
      keys[scope] = (await t.app.tenants.createApiKey(project.projectId, { scope })).key;
    }
    const seeded = await t.request("POST", "/api/v2/prompts", {
      key: project.key,
      body: promptBody(0, { id: "seeded", publish: true }),
    });
    expect(seeded.status).toBe(201);
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await t.close();
  });

  const connect = async (scope: KeyScope) => {
    const client = await connectMcp(url, keys[scope], "2025");
    clients.push(client);
    return client;
  };

  for (const held of SCOPES) {
    for (const c of TOOLS) {
      const allowed = ORDER[held] >= ORDER[c.needs];
      it(`a ${held} key: tool ${c.tool} is ${allowed ? "allowed" : "refused, naming the scope needed"}`, async () => {
        const client = await connect(held);
        const result = await client.callTool({ name: c.tool, arguments: c.args });
        const text = (result.content as { text: string }[])[0]?.text;
        if (allowed) {
          expect(result.isError ?? false, text).toBe(false);
        } else {
          expect(result.isError).toBe(true);
          expect(text).toBe(c.refusal?.(held));
          // Nothing changed: the one seeded prompt, with its one version, published.
          const list = await t.request("GET", "/api/v2/prompts", { key: keys.read });
          expect(list.body.data.prompts.map((p: any) => [p.id, p.latest_version === p.production_version])).toEqual([
            ["seeded", true],
          ]);
          const history = await t.request("GET", "/api/v2/prompts/seeded/versions", { key: keys.read });
          expect(history.body.data.versions).toHaveLength(1);
        }
      });
    }

    it(`a ${held} key lists and gets MCP prompts`, async () => {
      const client = await connect(held);
      const { prompts } = await client.listPrompts();
      expect(prompts.map((p) => p.name)).toEqual(["seeded"]);
      const got = await client.getPrompt({ name: "seeded", arguments: { company: "Acme", language: "English" } });
      // The production read with the guard and the variables filled in, exactly as REST fills it.
      const rest = await t.request("GET", "/api/v2/prompts/seeded", { key: keys.read });
      const filled = (rest.body.data.prompt as string)
        .replaceAll("{{ company }}", "Acme")
        .replaceAll("{{ language }}", "English");
      expect(got.messages).toEqual([{ role: "user", content: { type: "text", text: filled } }]);
    });

    it(`a ${held} key opens the events stream and is told of changes`, async () => {
      const stream = await openEventStream(url, keys[held]);
      streams.push(stream);
      expect(stream.status).toBe(200);
      await stream.next((e) => e.event === "ready");
      const saved = await t.request("PUT", "/api/v2/prompts/seeded", { key: keys.publish, body: promptBody(9) });
      expect(saved.status).toBe(200);
      await stream.next((e) => e.event === "prompt.version_saved");
      expect(changes(stream).map((e) => e.type)).toEqual(["prompt.version_saved"]);
    });
  }
});
