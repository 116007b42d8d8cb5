import { describe, expect, it } from "vitest";
import { modelSettingsInput } from "../../src/prompts/model-settings.js";
import { createPromptBody, describeZodError, importedVersion, saveVersionBody } from "../../src/schemas.js";

/** The first problem of a save whose `model` is `model`, as the 400 would name it. */
function problem(model: unknown): string | undefined {
  const parsed = saveVersionBody.safeParse({ markdown: "# A\nx", model });
  return parsed.success ? undefined : describeZodError(parsed.error);
}

const deep = (levels: number): Record<string, unknown> => {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
};

describe("model settings: what is accepted", () => {
  it("takes every setting, and keeps exactly what was sent (the name trimmed)", () => {
    const model = {
      name: " gpt-4o ",
      temperature: 2,
      top_p: 0,
      max_output_tokens: 1_000_000,
      stop: ["a", "b", "c", "d"],
      response_format: {
        type: "json_schema",
        json_schema: { name: "Answer_1-x", schema: { type: "object" }, strict: true },
      },
      extra: { seed: 1, reasoning: { effort: "low" } },
    };
    expect(modelSettingsInput.parse(model)).toEqual({ ...model, name: "gpt-4o" });
    expect(modelSettingsInput.parse({ name: "m" })).toEqual({ name: "m" });
    expect(modelSettingsInput.parse({ name: "m", response_format: { type: "text" } })).toEqual({
      name: "m",
      response_format: { type: "text" },
    });
  });

  it("is optional on create, save and import, and absent from the parsed body when not sent", () => {
    const created = createPromptBody.parse({ name: "x", markdown: "# A\nx" });
    expect("model" in created).toBe(false);
    expect(saveVersionBody.parse({ markdown: "# A\nx", model: { name: "m" } }).model).toEqual({ name: "m" });
    const imported = importedVersion.parse({
      version: "a".repeat(64),
      created_at: "2026-01-01T00:00:00.000Z",
      sections: [{ title: "A", content: "x" }],
      model: { name: "m", temperature: 0.5 },
    });
    expect(imported.model).toEqual({ name: "m", temperature: 0.5 });
  });

  it("bounds schema and extra like tool parameters: 32 levels and 100 000 characters", () => {
    expect(problem({ name: "m", extra: deep(32) })).toBeUndefined();
    expect(problem({ name: "m", extra: { big: "x".repeat(99_980) } })).toBeUndefined();
  });
});

describe("model settings: what is refused, naming the field", () => {
  const cases: [string, unknown, string][] = [
    ["not an object", "gpt-4o", "model: must be an object, not a string"],
    ["no name", { temperature: 1 }, "model.name: required: the model's name"],
    ["an empty name", { name: "  " }, "model.name: must not be empty"],
    ["a long name", { name: "m".repeat(201) }, "model.name: must be at most 200 characters"],
    ["a NUL in the name", { name: "a\u0000" }, "model.name: contains U+0000 (NUL), which cannot be stored"],
    ["temperature above 2", { name: "m", temperature: 2.01 }, "model.temperature: must be a number from 0 to 2"],
    ["temperature below 0", { name: "m", temperature: -0.1 }, "model.temperature: must be a number from 0 to 2"],
    ["temperature as text", { name: "m", temperature: "1" }, "model.temperature: must be a number from 0 to 2"],
    ["top_p above 1", { name: "m", top_p: 1.5 }, "model.top_p: must be a number from 0 to 1"],
    [
      "fractional max_output_tokens",
      { name: "m", max_output_tokens: 1.5 },
      "model.max_output_tokens: must be a whole number from 1 to 1000000",
    ],
    [
      "zero max_output_tokens",
      { name: "m", max_output_tokens: 0 },
      "model.max_output_tokens: must be a whole number from 1 to 1000000",
    ],
    [
      "too many max_output_tokens",
      { name: "m", max_output_tokens: 1_000_001 },
      "model.max_output_tokens: must be a whole number from 1 to 1000000",
    ],
    [
      "no stop sequences",
      { name: "m", stop: [] },
      "model.stop: must contain 1 to 4 stop sequences; leave stop out for none",
    ],
    [
      "five stop sequences",
      { name: "m", stop: ["a", "b", "c", "d", "e"] },
      "model.stop: must contain 1 to 4 stop sequences",
    ],
    ["an empty stop sequence", { name: "m", stop: ["a", ""] }, "model.stop[1]: must not be empty"],
    ["a long stop sequence", { name: "m", stop: ["x".repeat(201)] }, "model.stop[0]: must be at most 200 characters"],
    [
      "an unknown response format",
      { name: "m", response_format: { type: "xml" } },
      "model.response_format.type: must be text, json_object or json_schema",
    ],
    [
      "a json_schema without its schema",
      { name: "m", response_format: { type: "json_schema", json_schema: { name: "a" } } },
      "model.response_format.json_schema.schema: required",
    ],
    [
      "a schema name with a space",
      { name: "m", response_format: { type: "json_schema", json_schema: { name: "a b", schema: {} } } },
      "model.response_format.json_schema.name: must be 1-64 characters of A-Z, a-z, 0-9, _ or -",
    ],
    [
      "strict as text",
      { name: "m", response_format: { type: "json_schema", json_schema: { name: "a", schema: {}, strict: "yes" } } },
      "model.response_format.json_schema.strict: must be true or false",
    ],
    [
      "a key beside text's type",
      { name: "m", response_format: { type: "text", schema: {} } },
      "model.response_format.schema: is not a known field",
    ],
    ["extra as an array", { name: "m", extra: [1] }, "model.extra: must be an object, not an array"],
    ["extra 33 levels deep", { name: "m", extra: deep(33) }, "model.extra: nested deeper than 32 levels"],
    [
      "extra too long",
      { name: "m", extra: { big: "x".repeat(100_000) } },
      "model.extra: must be at most 100000 characters as JSON",
    ],
    [
      "a schema too deep",
      { name: "m", response_format: { type: "json_schema", json_schema: { name: "a", schema: deep(33) } } },
      "model.response_format.json_schema.schema: nested deeper than 32 levels",
    ],
    [
      "an unknown setting",
      { name: "m", seed: 1 },
      "model.seed: is not a known setting; put provider-specific settings in model.extra",
    ],
  ];
  for (const [what, model, message] of cases) {
    it(`refuses ${what}`, () => expect(problem(model)).toBe(message));
  }

  it("names the field inside an import's version", () => {
    const parsed = importedVersion.safeParse({
      version: "a".repeat(64),
      created_at: "2026-01-01T00:00:00.000Z",
      sections: [{ title: "A", content: "x" }],
      model: { name: "m", frequency_penalty: 1 },
    });
    expect(parsed.success).toBe(false);
    if (!parsed.success) {
      expect(describeZodError(parsed.error)).toBe(
        "model.frequency_penalty: is not a known setting; put provider-specific settings in model.extra",
      );
    }
  });
});
