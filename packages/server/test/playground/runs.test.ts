import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { DATABASES } from "../support/databases.js";
import { type StandIn, startStandIn } from "../support/openai-stand-in.js";
import { run, standInConnection, toolPrompt } from "../support/playground.js";

describe.each(DATABASES)("playground runs ($name)", (database) => {
  const t = useTestApp(database, { PROMPTSTORE_MODEL_ALLOW_PRIVATE: true, PROMPTSTORE_MODEL_TIMEOUT_SECONDS: 1 });
  let standIn: StandIn;
  beforeEach(async () => {
    standIn = await startStandIn();
  });
  afterEach(async () => {
    await standIn.close();
  });

  it("streams a version's answer token by token, with usage and timing, and sends the prompt as the model gets it", async () => {
    standIn.on("m1", {
      kind: "stream",
      pieces: ["Hel", "lo ", "Ada"],
      usage: { prompt_tokens: 21, completion_tokens: 3 },
    });
    const connection = await standInConnection(t, standIn);
    const prompt = await toolPrompt(t);
    const res = await run(t, prompt.id, {
      connection,
      variables: { customer: "Ada" },
      messages: [{ role: "user", content: "Hi" }],
      guard: false,
      model: { name: "m1", temperature: 0.3, max_output_tokens: 50 },
    });
    expect(res.status).toBe(200);
    expect(res.events.map((e) => e.event)).toEqual(["start", "delta", "delta", "delta", "done"]);
    const [start, , , , done] = res.events;
    expect(start?.data).toMatchObject({
      version: prompt.version,
      draft: false,
      model: { name: "m1", temperature: 0.3, max_output_tokens: 50 },
      connection,
    });
    expect(start?.data.settings_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(res.events.slice(1, 4).map((e) => e.data.content)).toEqual(["Hel", "lo ", "Ada"]);
    expect(done?.data.message).toEqual({ role: "assistant", content: "Hello Ada" });
    expect(done?.data.finish_reason).toBe("stop");
    expect(done?.data.usage).toEqual({ prompt_tokens: 21, completion_tokens: 3, total_tokens: 24 });
    expect(done?.data.timing.ttft_ms).toBeGreaterThanOrEqual(0);
    expect(done?.data.timing.total_ms).toBeGreaterThanOrEqual(done?.data.timing.ttft_ms);

    const sent = standIn.requests[0];
    expect(sent?.headers.authorization).toBe(`Bearer ${standIn.apiKey}`);
    expect(sent?.body).toEqual({
      model: "m1",
      messages: [
        { role: "system", content: "<Role>\nYou help Ada.\n</Role>" },
        { role: "user", content: "Hi" },
      ],
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "The weather in a city",
            parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
          },
        },
      ],
      temperature: 0.3,
      max_tokens: 50,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("streams tool calls piece by piece, assembles them, and takes the user's tool answers in the next run", async () => {
    standIn.on("tools", {
      kind: "stream",
      toolCalls: [{ id: "call_abc", name: "get_weather", argumentPieces: ['{"ci', 'ty":"Paris"}'] }],
      usage: { prompt_tokens: 30, completion_tokens: 9 },
    });
    const connection = await standInConnection(t, standIn);
    const prompt = await toolPrompt(t);
    const first = await run(t, prompt.id, {
      connection,
      model: { name: "tools" },
      messages: [{ role: "user", content: "Weather?" }],
    });
    expect(first.events.map((e) => e.event)).toEqual(["start", "tool_call", "tool_call", "tool_call", "done"]);
    expect(first.events.slice(1, 4).map((e) => e.data)).toEqual([
      { index: 0, id: "call_abc", name: "get_weather", arguments: "" },
      { index: 0, arguments: '{"ci' },
      { index: 0, arguments: 'ty":"Paris"}' },
    ]);
    const done = first.events[4]?.data;
    expect(done.finish_reason).toBe("tool_calls");
    expect(done.message).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_abc", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
      ],
    });

    standIn.on("tools", { kind: "stream", pieces: ["Sunny"] });
    const second = await run(t, prompt.id, {
      connection,
      model: { name: "tools" },
      messages: [
        { role: "user", content: "Weather?" },
        done.message,
        { role: "tool", tool_call_id: "call_abc", content: '{"sky":"clear"}' },
      ],
    });
    expect(second.events.at(-1)?.data.message).toEqual({ role: "assistant", content: "Sunny" });
    expect(standIn.requests[1]?.body.messages.slice(1)).toEqual([
      { role: "user", content: "Weather?" },
      done.message,
      { role: "tool", tool_call_id: "call_abc", content: '{"sky":"clear"}' },
    ]);
  });

  it("runs the editor's unsaved draft with its own settings, the guard on, under the hash a save would give it", async () => {
    standIn.on("draft-model", { kind: "stream", pieces: ["ok"] });
    const connection = await standInConnection(t, standIn);
    const prompt = await toolPrompt(t);
    const draft = {
      markdown: "# Role\nYou are terse with {{ customer }}.",
      model: { name: "draft-model", top_p: 0.5 },
    };
    const res = await run(t, prompt.id, { connection, draft, variables: { customer: "Bo" } });
    expect(res.events.map((e) => e.event)).toEqual(["start", "delta", "done"]);
    const saved = await t.request("PUT", `/api/v2/prompts/${prompt.id}`, {
      body: { markdown: draft.markdown, model: draft.model },
    });
    expect(res.events[0]?.data).toMatchObject({
      draft: true,
      version: saved.body.data.version,
      model: { name: "draft-model", top_p: 0.5 },
    });
    const system = standIn.requests[0]?.body.messages[0].content as string;
    expect(system.startsWith("<Role>\nYou are terse with Bo.\n</Role>\n\n")).toBe(true);
    expect(system.length).toBeGreaterThan("<Role>\nYou are terse with Bo.\n</Role>\n\n".length);
    expect(standIn.requests[0]?.body.tools).toBeUndefined();
    expect(standIn.requests[0]?.body.top_p).toBe(0.5);
  });

  const failures: [string, Parameters<StandIn["on"]>[1], string, number | null, string][] = [
    [
      "a 404 model",
      { kind: "error", status: 404 },
      "model_not_found",
      404,
      "provider: model M not found (404 model_not_found: The model `M` does not exist or you do not have access to it.); check the model name and the connection's base URL",
    ],
    [
      "a 429",
      { kind: "error", status: 429 },
      "provider_rate_limited",
      429,
      "provider: rate limited (429 rate_limit_exceeded: Rate limit reached for M on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.)",
    ],
    [
      "a 500",
      { kind: "error", status: 500 },
      "provider_error",
      500,
      "provider: answered 500 (The server had an error while processing your request.)",
    ],
    [
      "a timeout",
      { kind: "hang" },
      "provider_timeout",
      null,
      "provider: no answer within 1 s (PROMPTSTORE_MODEL_TIMEOUT_SECONDS)",
    ],
    [
      "a stream broken midway",
      { kind: "stream", pieces: ["a", "b", "c"], breakAfter: 2 },
      "provider_stream_broken",
      null,
      "provider: the connection was cut before the answer ended",
    ],
    [
      "a stream of garbage",
      { kind: "stream", pieces: ["a"], garbage: "{not json" },
      "provider_stream_broken",
      null,
      "provider: the stream sent something that is not JSON",
    ],
  ];
  for (const [what, behaviour, code, status, message] of failures) {
    it(`tells ${what} as an error event with a clear message, never a 500`, async () => {
      standIn.on("M", behaviour);
      const connection = await standInConnection(t, standIn);
      const prompt = await toolPrompt(t);
      const res = await run(t, prompt.id, { connection, model: { name: "M" } });
      expect(res.status).toBe(200);
      const last = res.events.at(-1);
      expect(last).toEqual({ event: "error", data: { code, message, status } });
      expect(res.events[0]?.event).toBe("start");
      if (what === "a stream broken midway")
        expect(res.events.map((e) => e.event)).toEqual(["start", "delta", "error"]);
    });
  }

  it("tells a refused API key without repeating the provider's words (which quote the key)", async () => {
    standIn.on("m", { kind: "stream", pieces: ["x"] });
    const connection = await standInConnection(t, standIn, "sk-wrong-key-9876543210");
    const prompt = await toolPrompt(t);
    const res = await run(t, prompt.id, { connection, model: { name: "m" } });
    expect(res.events.at(-1)).toEqual({
      event: "error",
      data: {
        code: "provider_unauthorized",
        message: "provider: the API key was refused (401 invalid_api_key); check the connection's key",
        status: 401,
      },
    });
    expect(JSON.stringify(res.events)).not.toContain("sk-wrong");
  });

  it("tells an unreachable provider as an error event", async () => {
    const closed = await startStandIn();
    await closed.close();
    const connection = await standInConnection(t, closed);
    const prompt = await toolPrompt(t);
    const res = await run(t, prompt.id, { connection, model: { name: "m" } });
    const last = res.events.at(-1);
    expect(last?.event).toBe("error");
    expect(last?.data.code).toBe("provider_unreachable");
    expect(last?.data.message).toBe(
      `provider: could not reach ${new URL(closed.url).host} (ECONNREFUSED): connect ECONNREFUSED ${new URL(closed.url).host}`,
    );
  });

  it("without a model name from the version or the run, runs the connection's first listed model", async () => {
    standIn.on("first-listed", { kind: "stream", pieces: ["Hi"] });
    const connection = (
      await t.app.connections.create(
        { projectId: t.project.projectId, operator: true },
        { name: "Local", base_url: standIn.baseUrl, api_key: standIn.apiKey, models: ["first-listed", "second"] },
      )
    ).id;
    const prompt = await toolPrompt(t);
    const res = await run(t, prompt.id, { connection, guard: false });
    expect(res.status).toBe(200);
    expect(res.events.map((e) => e.event)).toEqual(["start", "delta", "done"]);
    expect(res.events[0]?.data.model).toEqual({ name: "first-listed" });
    expect(standIn.requests.map((r) => r.body.model)).toEqual(["first-listed"]);
    // The run's own name still wins.
    standIn.on("second", { kind: "stream", pieces: ["Yo"] });
    const named = await run(t, prompt.id, { connection, guard: false, model: { name: "second" } });
    expect(named.events[0]?.data.model).toEqual({ name: "second" });
  });

  it("refuses before streaming: a read key, no model name, an unknown or foreign connection, version and draft both", async () => {
    const connection = await standInConnection(t, standIn);
    const prompt = await toolPrompt(t);
    const readKey = (await t.app.tenants.createApiKey(t.project.projectId, { scope: "read" })).key;
    const refused = await run(t, prompt.id, { connection, model: { name: "m" } }, readKey);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe(
      "scope: running a prompt needs a key with scope write or higher; this key has scope read",
    );

    // No model name from the version or the run, and a connection that lists none.
    const bare = (
      await t.app.connections.create(
        { projectId: t.project.projectId, operator: true },
        { name: "No models", base_url: standIn.baseUrl, api_key: standIn.apiKey },
      )
    ).id;
    const noModel = await run(t, prompt.id, { connection: bare });
    expect(noModel.status).toBe(400);
    expect(noModel.body.error).toBe(
      "model.name: required: the version has no model settings and the connection lists no models; name a model for this run",
    );
    expect(standIn.requests).toHaveLength(0);

    const unknown = await run(t, prompt.id, { connection: "con_000000000000000000000000", model: { name: "m" } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe("connection con_000000000000000000000000 not found");

    const other = await t.newProject();
    const foreign = await run(t, prompt.id, { connection, model: { name: "m" } }, other.key);
    expect(foreign.status).toBe(404);

    const both = await run(t, prompt.id, {
      connection,
      version: "production",
      draft: { markdown: "# A\nb" },
      model: { name: "m" },
    });
    expect(both.status).toBe(400);
    expect(both.body.error).toBe("draft: give version or draft, not both");

    const badMessage = await run(t, prompt.id, {
      connection,
      model: { name: "m" },
      messages: [{ role: "system", content: "x" }],
    });
    expect(badMessage.status).toBe(400);
    expect(badMessage.body.error).toBe('messages[0].role: must have role "user", "assistant" or "tool"');
    expect(standIn.requests).toHaveLength(0);
  });

  it("counts runs against the rate limit and on /metrics, by outcome", async () => {
    standIn.on("ok", { kind: "stream", pieces: ["x"] });
    standIn.on("bad", { kind: "error", status: 429 });
    const connection = await standInConnection(t, standIn);
    const prompt = await toolPrompt(t);
    const first = await run(t, prompt.id, { connection, model: { name: "ok" } });
    const second = await run(t, prompt.id, { connection, model: { name: "bad" } });
    expect(Number(second.headers["x-ratelimit-remaining"])).toBe(Number(first.headers["x-ratelimit-remaining"]) - 1);
    const metrics = await t.request("GET", "/metrics", { key: null });
    expect(metrics.body).toContain('promptstore_runs_total{outcome="ok"} 1');
    expect(metrics.body).toContain('promptstore_runs_total{outcome="error"} 1');
    expect(metrics.body).toContain("promptstore_run_time_to_first_token_seconds_count 1");
  });
});
