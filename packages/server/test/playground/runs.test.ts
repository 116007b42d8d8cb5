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
});
