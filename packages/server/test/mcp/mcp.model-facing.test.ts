import { Writable } from "node:stream";
import type { Client } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config.js";
import { type App, buildApp } from "../../src/http/app.js";
import { DATABASES, freshStore } from "../support/databases.js";
import { connectMcp, ERAS } from "../support/mcp.js";

/** Every property of a JSON Schema object, with its path, descending into objects and array items. */
function properties(schema: any, path = ""): [string, any][] {
  const found: [string, any][] = [];
  for (const [name, child] of Object.entries<any>(schema?.properties ?? {})) {
    found.push([`${path}${name}`, child]);
    found.push(...properties(child, `${path}${name}.`));
    if (child.items) found.push(...properties(child.items, `${path}${name}[].`));
  }
  return found;
}

/** What a model sees of the tools and prompts, and what the operator sees of a client's mistakes. */
describe.each(DATABASES)("MCP as a model and an operator see it ($name)", (database) => {
  let app: App;
  let close: () => Promise<void>;
  let url: string;
  let key: string;
  let logs: Record<string, any>[];
  const clients: Client[] = [];

  beforeEach(async () => {
    const fresh = await freshStore(database);
    logs = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        logs.push(JSON.parse(chunk.toString()));
        done();
      },
    });
    app = await buildApp({ store: fresh.store, config: defaultConfig(), logger: { level: "warn", stream } });
    url = await app.server.listen({ port: 0, host: "127.0.0.1" });
    const org = await app.tenants.createOrganization("o", "unlimited");
    const project = await app.tenants.createProject(org.id, "p");
    key = (await app.tenants.createApiKey(project.id)).key;
    close = async () => {
      await app.server.close();
      await fresh.close();
    };
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await close();
  });

  describe.each(ERAS)("protocol %s", (era) => {
    it("describes every input field; create_prompt says one content form and suffixed ids", async () => {
      const client = await connectMcp(url, key, era);
      clients.push(client);
      const { tools } = await client.listTools();
      const undescribed = tools.flatMap((tool) =>
        properties(tool.inputSchema)
          .filter(([, schema]) => typeof schema.description !== "string" || schema.description === "")
          .map(([path]) => `${tool.name}: ${path}`)
          // Fields inside a tool's own JSON Schema (parameters) are the caller's, not ours to describe.
          .filter((entry) => !entry.includes("parameters.")),
      );
      expect(undescribed).toEqual([]);
      const create = tools.find((t) => t.name === "create_prompt")!;
      expect(create.description).toMatch(/exactly one of `sections`.*or `markdown`/);
      expect(create.description).toMatch(/gets a suffixed id \(support-bot-2\)/);
    });

    it("marks publish_prompt and delete_prompt as destructive, the other writes as not, reads as read-only", async () => {
      const client = await connectMcp(url, key, era);
      clients.push(client);
      const { tools } = await client.listTools();
      const hints = Object.fromEntries(
        tools.map((t) => [t.name, [t.annotations?.readOnlyHint, t.annotations?.destructiveHint]]),
      );
      expect(hints).toEqual({
        list_prompts: [true, undefined],
        get_prompt: [true, undefined],
        list_versions: [true, undefined],
        create_prompt: [false, false],
        save_prompt_version: [false, false],
        publish_prompt: [false, true],
        request_release: [false, false],
        delete_prompt: [false, true],
        list_datasets: [true, undefined],
        run_evaluation: [false, false],
        get_evaluation: [true, undefined],
        list_includes: [true, undefined],
        list_included_by: [true, undefined],
        update_includes: [false, false],
      });
      const remove = tools.find((t) => t.name === "delete_prompt")!;
      expect(remove.annotations?.idempotentHint).toBe(false);
      expect(remove.description).toMatch(/all its versions, for good/);
      expect(remove.inputSchema.required).toEqual(["id"]);
    });

    it("claims listChanged for prompts only, and gives an empty description as an empty string", async () => {
      const client = await connectMcp(url, key, era);
      clients.push(client);
      expect(client.getServerCapabilities()).toMatchObject({
        tools: { listChanged: false },
        prompts: { listChanged: true },
      });
      const res = await fetch(`${url}/api/v2/prompts`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ name: "Bare", markdown: "# A\nx" }),
      });
      expect(res.status).toBe(201);
      const { prompts } = await client.listPrompts();
      expect(prompts).toEqual([{ name: "bare", title: "Bare", description: "", arguments: [] }]);
    });
  });

  it("logs a client's malformed JSON-RPC at warn, without a stack", async () => {
    const res = await fetch(`${url}/api/v2/mcp`, {
      method: "POST",
      headers: {
        "x-api-key": key,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ hello: "world" }),
    });
    expect(res.status).toBe(400);
    const mcpLines = logs.filter((line) => /MCP/.test(line.msg));
    expect(mcpLines).toEqual([
      expect.objectContaining({
        level: 40,
        msg: "MCP client sent a request it should not have",
        status: 400,
        reason: "Bad Request: the request body is not a valid JSON-RPC message",
      }),
    ]);
    expect(JSON.stringify(mcpLines)).not.toContain("stack");
  });
});
