/**
 * Findings of the outside fuzz run (issue 11) that are about what the service accepts: deeply nested tool
 * parameters (a stack overflow while hashing answered 500), and text that is not well-formed Unicode (stored
 * with U+FFFD in place of a lone surrogate, so the served text no longer had the served hash).
 */
import type { Client } from "@modelcontextprotocol/client";
import { DEFAULT_BODY_BYTES } from "@promptstore/core/prompts/content-limits";
import { LIMITS } from "@promptstore/core/schemas";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { promptBody, type TestApp, testApp } from "../support/app.js";
import { member } from "../support/dashboard.js";
import { DATABASES } from "../support/databases.js";
import { connectMcp, ERAS, toolData } from "../support/mcp.js";

const MAX_DEPTH = 32;

/** A parameters object `depth` levels of JSON deep (itself level 1; `properties` 2; its schemas from 3 on). */
function nestedParameters(depth: number): Record<string, unknown> {
  let inner: Record<string, unknown> = { type: "string" };
  for (let level = 3; level < depth; level++) inner = { type: "object", description: `level ${level}`, items: inner };
  return { type: "object", properties: { a: inner } };
}

/** Built as text: a value this deep is past what JSON.stringify can walk on the test's side too. */
function deepBodyText(extra: Record<string, unknown>, depth: number, open = "[", close = "]"): string {
  const fields = JSON.stringify(extra).slice(1, -1);
  const deep = `${open.repeat(depth)}${open === "[" ? "" : "1"}${close.repeat(depth)}`;
  return (
    `{${fields},"tools":[{"type":"function","function":{"name":"deep",` +
    `"parameters":{"type":"object","properties":{"a":${deep}}}}}]}`
  );
}

const tool = (parameters: Record<string, unknown>, name = "t") => ({
  type: "function",
  function: { name, description: "d", parameters },
});

const LONE = "a\ud800b";
const UNICODE_ERROR = "is not well-formed Unicode (lone surrogate)";

describe.each(DATABASES)("fuzz findings: deep JSON values ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await testApp(database, {});
    t = { ...t, ...(await upgrade(t)) };
  });
  afterEach(async () => {
    await t.close();
  });

  /** The default project is on the free plan; an unlimited one keeps the plan limit out of the way. */
  async function upgrade(app: TestApp) {
    const project = await app.newProject({ plan: "unlimited" });
    return { key: project.key, project };
  }

  it("accepts parameters exactly 32 levels deep and refuses 33, naming the field", async () => {
    const ok = await t.request("POST", "/api/v2/prompts", {
      key: t.key,
      body: promptBody(1, { id: "ok", tools: [tool(nestedParameters(MAX_DEPTH))] }),
    });
    expect(ok.status).toBe(201);
    const read = await t.request("GET", "/api/v2/prompts/ok", { key: t.key });
    expect(read.body.data.tools).toEqual([tool(nestedParameters(MAX_DEPTH))]);

    const deep = await t.request("POST", "/api/v2/prompts", {
      key: t.key,
      body: promptBody(2, { tools: [tool({ type: "object" }, "first"), tool(nestedParameters(MAX_DEPTH + 1))] }),
    });
    expect(deep.status).toBe(400);
    expect(deep.body).toEqual({ success: false, error: "tools[1].function.parameters: nested deeper than 32 levels" });
  });

  it("refuses ~2 500 levels with a 400 on create (also with a taken id) and on a save to a missing prompt", async () => {
    await t.request("POST", "/api/v2/prompts", { key: t.key, body: promptBody(1, { id: "taken" }) });
    const expected = { success: false, error: "tools[0].function.parameters: nested deeper than 32 levels" };
    for (const [open, close] of [
      ["[", "]"],
      ['{"a":', "}"],
    ] as const) {
      const create = await t.request("POST", "/api/v2/prompts", {
        key: t.key,
        payload: deepBodyText({ ...promptBody(2), id: "taken" }, 2_500, open, close),
        headers: { "content-type": "application/json" },
      });
      expect(create.status).toBe(400);
      expect(create.body).toEqual(expected);
      const save = await t.request("PUT", "/api/v2/prompts/missing", {
        key: t.key,
        payload: deepBodyText({ markdown: "# A\nb" }, 2_500, open, close),
        headers: { "content-type": "application/json" },
      });
      expect(save.status).toBe(400);
      expect(save.body).toEqual(expected);
      const saveExisting = await t.request("PUT", "/api/v2/prompts/taken", {
        key: t.key,
        payload: deepBodyText({ markdown: "# A\nb" }, 2_500, open, close),
        headers: { "content-type": "application/json" },
      });
      expect(saveExisting.body).toEqual(expected);
    }
    const versions = await t.request("GET", "/api/v2/prompts/taken/versions", { key: t.key });
    expect(versions.body.data.versions).toHaveLength(1);
  });

  it("refuses parameters longer than the JSON size limit", async () => {
    const big = { type: "object", description: "x".repeat(LIMITS.toolParametersLength) };
    const res = await t.request("POST", "/api/v2/prompts", { key: t.key, body: promptBody(1, { tools: [tool(big)] }) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      error: `tools[0].function.parameters: must be at most ${LIMITS.toolParametersLength} characters as JSON`,
    });
  });

  it("answers a body of [[[[ as long as the body limit… (unbalanced and balanced) with a 400 in the envelope", async () => {
    const unbalanced = "[".repeat(DEFAULT_BODY_BYTES);
    const res = await t.request("POST", "/api/v2/prompts", {
      key: t.key,
      payload: unbalanced,
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: "body: is not valid JSON" });
    const half = DEFAULT_BODY_BYTES / 2;
    const balanced = await t.request("POST", "/api/v2/prompts", {
      key: t.key,
      payload: `${"[".repeat(half)}${"]".repeat(half)}`,
      headers: { "content-type": "application/json" },
    });
    expect(balanced.status).toBe(400);
    expect(balanced.body).toEqual({ success: false, error: "body: must be an object, not an array" });
    // The same depth inside the one free-form field is refused by its bound, not by a stack overflow.
    const inside = await t.request("POST", "/api/v2/prompts", {
      key: t.key,
      payload: deepBodyText(promptBody(3), half - 200),
      headers: { "content-type": "application/json" },
    });
    expect(inside.status).toBe(400);
    expect(inside.body).toEqual({
      success: false,
      error: "tools[0].function.parameters: nested deeper than 32 levels",
    });
  });

  describe("over MCP", () => {
    let url: string;
    const clients: Client[] = [];
    beforeEach(async () => {
      url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    });
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((c) => c.close()));
    });

    it.each(ERAS)("create_prompt and save_prompt_version refuse deep parameters as a tool error (%s)", async (era) => {
      const client = await connectMcp(url, t.key, era);
      clients.push(client);
      await t.request("POST", "/api/v2/prompts", { key: t.key, body: promptBody(1, { id: "taken" }) });
      const parameters = JSON.parse(
        `{"type":"object","properties":{"a":${"[".repeat(2_500)}${"]".repeat(2_500)}}}`,
      ) as Record<string, unknown>;
      const create = toolData(
        await client.callTool({
          name: "create_prompt",
          arguments: { ...promptBody(2), id: "taken", tools: [tool(parameters)] },
        }),
      );
      expect(create.error).toBe(
        "Input validation error: Invalid arguments for tool create_prompt: tools[0].function.parameters: nested deeper than 32 levels",
      );
      const save = toolData(
        await client.callTool({
          name: "save_prompt_version",
          arguments: { id: "missing", markdown: "# A\nb", tools: [tool(parameters)] },
        }),
      );
      expect(save.error).toBe(
        "Input validation error: Invalid arguments for tool save_prompt_version: tools[0].function.parameters: nested deeper than 32 levels",
      );
    });
  });
});

describe.each(DATABASES)("fuzz findings: text that is not well-formed Unicode ($name)", (database) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await testApp(database);
  });
  afterEach(async () => {
    await t.close();
  });

  const createCases: [string, Record<string, unknown>][] = [
    ["id", promptBody(1, { id: LONE })],
    ["name", promptBody(1, { name: LONE })],
    ["description", promptBody(1, { description: LONE })],
    ["sections[0].title", promptBody(1, { sections: [{ title: LONE, content: "c" }] })],
    [
      "sections[1].content",
      promptBody(1, {
        sections: [
          { title: "T", content: "c" },
          { title: "U", content: LONE },
        ],
      }),
    ],
    ["markdown", { name: "N", markdown: `# A\n${LONE}` }],
    ["message", promptBody(1, { message: LONE })],
    ["tools[0].function.name", promptBody(1, { tools: [tool({ type: "object" }, LONE)] })],
    [
      "tools[0].function.description",
      promptBody(1, {
        tools: [{ type: "function", function: { name: "t", description: LONE, parameters: { type: "object" } } }],
      }),
    ],
    [
      "tools[0].function.parameters.properties.a.description",
      promptBody(1, { tools: [tool({ type: "object", properties: { a: { type: "string", description: LONE } } })] }),
    ],
    [
      "tools[0].function.parameters.properties.a.enum[1]",
      promptBody(1, { tools: [tool({ type: "object", properties: { a: { enum: ["x", LONE] } } })] }),
    ],
    [
      "tools[0].function.parameters.required[0]",
      promptBody(1, { tools: [tool({ type: "object", required: [LONE] })] }),
    ],
    ["tools[0].function.parameters.title", promptBody(1, { tools: [tool({ type: "object", title: LONE })] })],
  ];

  it.each(createCases)("POST /api/v2/prompts refuses a lone surrogate in %s", async (field, body) => {
    const res = await t.request("POST", "/api/v2/prompts", { body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: `${field}: ${UNICODE_ERROR}` });
    expect((await t.request("GET", "/api/v2/prompts")).body.data.prompts).toEqual([]);
  });

  it("refuses a lone surrogate in a key of the tool parameters, naming the object that holds it", async () => {
    const properties = await t.request("POST", "/api/v2/prompts", {
      body: promptBody(1, { tools: [tool({ type: "object", properties: { [LONE]: { type: "string" } } })] }),
    });
    expect(properties.status).toBe(400);
    expect(properties.body).toEqual({
      success: false,
      error: `tools[0].function.parameters.properties: has a key that ${UNICODE_ERROR}`,
    });
    const nested = await t.request("POST", "/api/v2/prompts", {
      body: promptBody(1, { tools: [tool({ type: "object", $defs: { x: { [LONE]: 1 } } })] }),
    });
    expect(nested.body).toEqual({
      success: false,
      error: `tools[0].function.parameters.$defs.x: has a key that ${UNICODE_ERROR}`,
    });
  });

  it("PUT refuses it in every field, publish in the version; nothing changes", async () => {
    await t.request("POST", "/api/v2/prompts", { body: promptBody(1, { id: "p" }) });
    const cases: [string, Record<string, unknown>][] = [
      ["sections[0].content", { sections: [{ title: "T", content: LONE }] }],
      ["markdown", { markdown: `# ${LONE}\nx` }],
      ["message", { markdown: "# A\nb", message: LONE }],
      ["name", { markdown: "# A\nb", name: LONE }],
      ["description", { markdown: "# A\nb", description: LONE }],
      ["base_version", { markdown: "# A\nb", base_version: LONE }],
    ];
    for (const [field, body] of cases) {
      const res = await t.request("PUT", "/api/v2/prompts/p", { body });
      expect(res.status, field).toBe(400);
      expect(res.body, field).toEqual({ success: false, error: `${field}: ${UNICODE_ERROR}` });
    }
    const publish = await t.request("POST", "/api/v2/prompts/p/publish", { body: { version: LONE } });
    expect(publish.body).toEqual({ success: false, error: `version: ${UNICODE_ERROR}` });
    const versions = await t.request("GET", "/api/v2/prompts/p/versions");
    expect(versions.body.data.versions).toHaveLength(1);
    expect(versions.body.data.production_version).toBeNull();
  });

  it("well-formed text outside the BMP (a surrogate pair) is stored and served with the hash it was saved under", async () => {
    const body = promptBody(1, { id: "emoji", name: "Bot 🤖", sections: [{ title: "Rôle 🤖", content: "𝄞 {{ x }}" }] });
    const created = await t.request("POST", "/api/v2/prompts", { body });
    expect(created.status).toBe(201);
    const read = await t.request("GET", "/api/v2/prompts/emoji?version=latest&guard=false");
    expect(read.body.data.name).toBe("Bot 🤖");
    expect(read.body.data.version).toBe(created.body.data.version);
    const again = await t.request("PUT", "/api/v2/prompts/emoji", {
      body: {
        sections: read.body.data.sections.map(({ title, content }: { title: string; content: string }) => ({
          title,
          content,
        })),
      },
    });
    expect(again.body.data).toMatchObject({ version: created.body.data.version, created: false });
  });

  it("the dashboard's own bodies refuse it too", async () => {
    const owner = await member(t, "owner");
    const project = await owner.call("POST", `/api/dashboard/orgs/${t.project.orgId}/projects`, {
      body: { name: LONE },
    });
    expect(project.status).toBe(400);
    expect(project.body).toEqual({ success: false, error: `name: ${UNICODE_ERROR}` });
    const memberRes = await owner.call("POST", `/api/dashboard/orgs/${t.project.orgId}/members`, {
      body: { email: `${LONE}@example.com`, role: "viewer" },
    });
    expect(memberRes.body).toEqual({ success: false, error: `email: ${UNICODE_ERROR}` });
    const password = await owner.call("POST", "/api/dashboard/password", {
      body: { current_password: "correct horse battery staple", new_password: `long enough ${LONE}` },
    });
    expect(password.body).toEqual({ success: false, error: `new_password: ${UNICODE_ERROR}` });
    const prompt = await owner.call("POST", `/api/dashboard/projects/${t.project.projectId}/prompts`, {
      body: promptBody(1, { name: LONE }),
    });
    expect(prompt.body).toEqual({ success: false, error: `name: ${UNICODE_ERROR}` });
    const signIn = await t.request("POST", "/api/dashboard/session", {
      key: null,
      body: { email: owner.email, password: LONE },
    });
    expect(signIn.body).toEqual({ success: false, error: `password: ${UNICODE_ERROR}` });
  });

  describe("over MCP", () => {
    let url: string;
    const clients: Client[] = [];
    beforeEach(async () => {
      url = await t.app.server.listen({ port: 0, host: "127.0.0.1" });
    });
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((c) => c.close()));
    });

    it.each(ERAS)("the tools refuse it with the REST message (%s)", async (era) => {
      const client = await connectMcp(url, t.key, era);
      clients.push(client);
      const cases: [string, string, Record<string, unknown>][] = [
        ["create_prompt", "name", promptBody(1, { name: LONE })],
        ["create_prompt", "sections[0].content", { name: "N", sections: [{ title: "T", content: LONE }] }],
        [
          "create_prompt",
          "tools[0].function.parameters.title",
          promptBody(1, { tools: [tool({ type: "object", title: LONE })] }),
        ],
        ["save_prompt_version", "markdown", { id: "p", markdown: `# A\n${LONE}` }],
        ["save_prompt_version", "id", { id: LONE, markdown: "# A\nb" }],
        ["get_prompt", "id", { id: LONE }],
        ["publish_prompt", "version", { id: "p", version: LONE }],
        ["list_prompts", "cursor", { cursor: LONE }],
        ["list_versions", "id", { id: LONE }],
      ];
      for (const [name, field, args] of cases) {
        const result = toolData(await client.callTool({ name, arguments: args }));
        expect(result.error, `${name} ${field}`).toBe(
          `Input validation error: Invalid arguments for tool ${name}: ${field}: ${UNICODE_ERROR}`,
        );
      }
      expect((await t.request("GET", "/api/v2/prompts")).body.data.prompts).toEqual([]);
    });
  });
});
