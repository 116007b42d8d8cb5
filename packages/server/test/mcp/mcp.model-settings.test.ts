import type { Client } from "@modelcontextprotocol/client";
import { contentHash } from "@promptstore/core/prompts/hash";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp, toolData } from "../support/mcp.js";

const sections = [{ title: "Role", content: "Hi" }];
const model = { name: "claude-sonnet-4-5", max_output_tokens: 1024, extra: { thinking: { budget_tokens: 512 } } };

describe.each(DATABASES)("MCP tools carry model settings ($name)", (database) => {
  let t: TestApp;
  let client: Client;
  beforeEach(async () => {
    t = await testApp(database);
    const url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    client = await connectMcp(url, t.key, "2026-07-28");
  });
  afterEach(async () => {
    await client.close();
    await t.close();
  });
  const call = async (name: string, args: Record<string, unknown>) =>
    toolData(await client.callTool({ name, arguments: args }));

  it("create_prompt and save_prompt_version take them; get_prompt returns them as REST does", async () => {
    const created = await call("create_prompt", { id: "bot", name: "Bot", sections, model });
    const hash = contentHash({ sections: [{ ...sections[0]!, enabled: true }], tools: [], model });
    expect(created.data.version).toBe(hash);
    const read = await call("get_prompt", { id: "bot", version: "latest" });
    expect(read.data.model).toEqual({
      extra: { thinking: { budget_tokens: 512 } },
      max_output_tokens: 1024,
      name: "claude-sonnet-4-5",
    });
    const rest = await t.request("GET", "/api/v2/prompts/bot?version=latest");
    expect(read.data).toEqual(rest.body.data);

    const saved = await call("save_prompt_version", { id: "bot", sections, model: { ...model, temperature: 0 } });
    expect(saved.data).toMatchObject({ created: true });
    const cleared = await call("save_prompt_version", { id: "bot", sections });
    expect(cleared.data).toMatchObject({ created: true });
    const plain = await call("get_prompt", { id: "bot", version: "latest" });
    expect("model" in plain.data).toBe(false);
  });

  it("refuses bad settings with the REST API's message naming the field", async () => {
    await call("create_prompt", { id: "bot", name: "Bot", sections });
    const bad = await call("save_prompt_version", { id: "bot", sections, model: { name: "m", logprobs: true } });
    expect(bad.error).toContain(
      "model.logprobs: is not a known setting; put provider-specific settings in model.extra",
    );
    const hot = await call("save_prompt_version", { id: "bot", sections, model: { name: "m", temperature: 9 } });
    expect(hot.error).toContain("model.temperature: must be a number from 0 to 2");
  });
});
