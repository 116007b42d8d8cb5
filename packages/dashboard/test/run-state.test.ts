import { describe, expect, it } from "vitest";
import { formatMs, NO_OVERRIDES, settingsSummary, toOverrides } from "../src/playground/overrides";
import { applyEvent, endedEarly, type RunState, started } from "../src/playground/run-state";

const play = (events: [string, unknown][], from: RunState = started()) =>
  events.reduce((s, [event, data]) => applyEvent(s, { event, data: JSON.stringify(data), id: null }), from);

describe("a run's state from its stream (docs/playground.md, The stream)", () => {
  it("appends deltas as they arrive and ends with done's message, finish reason, usage and timing", () => {
    const midway = play([
      [
        "start",
        {
          run_id: "r",
          version: "a".repeat(64),
          draft: true,
          model: { name: "m" },
          settings_hash: "h",
          connection: "c",
        },
      ],
      ["delta", { content: "Hel" }],
      ["delta", { content: "lo" }],
    ]);
    expect(midway).toMatchObject({
      status: "running",
      text: "Hello",
      version: "a".repeat(64),
      draft: true,
      model: { name: "m" },
    });
    const done = play(
      [
        [
          "done",
          {
            message: { role: "assistant", content: "Hello!" },
            finish_reason: "stop",
            usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
            timing: { ttft_ms: 120, total_ms: 480 },
          },
        ],
      ],
      midway,
    );
    expect(done).toMatchObject({
      status: "done",
      text: "Hello!",
      finishReason: "stop",
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      ttftMs: 120,
      totalMs: 480,
    });
  });

  it("assembles tool calls piece by piece, by index", () => {
    const state = play([
      ["tool_call", { index: 0, id: "call_1", name: "weather", arguments: '{"ci' }],
      ["tool_call", { index: 1, id: "call_2", name: "time", arguments: "{}" }],
      ["tool_call", { index: 0, arguments: 'ty":"Oslo"}' }],
    ]);
    expect(state.toolCalls).toEqual([
      { id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
      { id: "call_2", type: "function", function: { name: "time", arguments: "{}" } },
    ]);
  });

  it("turns an error event into an error with its code, message and status", () => {
    expect(play([["error", { code: "model_not_found", message: "model: no such model", status: 404 }]])).toMatchObject({
      status: "error",
      error: { code: "model_not_found", message: "model: no such model", status: 404 },
    });
  });

  it("a stream that ends without done or error is an error; a finished one stays as it is", () => {
    expect(endedEarly(play([["delta", { content: "Hal" }]]))).toMatchObject({
      status: "error",
      text: "Hal",
      error: { code: "stream_ended" },
    });
    const done = play([
      [
        "done",
        {
          message: { role: "assistant", content: "x" },
          finish_reason: "stop",
          usage: null,
          timing: { ttft_ms: null, total_ms: 1 },
        },
      ],
    ]);
    expect(endedEarly(done)).toBe(done);
  });

  it("ignores data that is not JSON and events it does not know", () => {
    const before = play([["delta", { content: "a" }]]);
    expect(applyEvent(before, { event: "delta", data: "{not json", id: null })).toBe(before);
    expect(applyEvent(before, { event: "ping", data: "{}", id: null })).toBe(before);
  });
});

describe("the run's model overrides", () => {
  it("sends only what was filled in", () => {
    expect(toOverrides(NO_OVERRIDES)).toEqual({ ok: true, model: {} });
    expect(
      toOverrides({
        ...NO_OVERRIDES,
        name: " gpt-4o ",
        temperature: "0.2",
        max_output_tokens: "64",
        stop: "END\n\n###",
        format: "json_object",
      }),
    ).toEqual({
      ok: true,
      model: {
        name: "gpt-4o",
        temperature: 0.2,
        max_output_tokens: 64,
        stop: ["END", "###"],
        response_format: { type: "json_object" },
      },
    });
  });

  it("names each wrong field as the server would", () => {
    expect(
      toOverrides({
        ...NO_OVERRIDES,
        temperature: "hot",
        top_p: "2",
        max_output_tokens: "1.5",
        format: "json_schema",
        schema: "{",
      }),
    ).toEqual({
      ok: false,
      errors: [
        { field: "model.temperature", message: "must be a number" },
        { field: "model.top_p", message: "must be from 0 to 1" },
        { field: "model.max_output_tokens", message: "must be a whole number of at least 1" },
        { field: "model.response_format.json_schema.schema", message: "is not valid JSON" },
      ],
    });
    expect(toOverrides({ ...NO_OVERRIDES, format: "json_schema", schema: "[1]" })).toEqual({
      ok: false,
      errors: [{ field: "model.response_format.json_schema.schema", message: "must be a JSON object" }],
    });
  });

  it("words settings and durations", () => {
    expect(settingsSummary({ name: "gpt-4o-mini", temperature: 0.2, response_format: { type: "json_object" } })).toBe(
      "gpt-4o-mini · temperature 0.2 · JSON",
    );
    expect(settingsSummary(null)).toBe("no model settings");
    expect([formatMs(null), formatMs(840.4), formatMs(1240), formatMs(12_500)]).toEqual([
      "—",
      "840 ms",
      "1.24 s",
      "12.5 s",
    ]);
  });
});
