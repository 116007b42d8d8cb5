import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createPromptBody, describeZodError, LIMITS } from "../src/schemas.js";
import { isWellFormed, jsonValueProblem, NOT_WELL_FORMED, text } from "../src/text.js";

const bounds = { maxDepth: 32, maxLength: 100_000 };

describe("isWellFormed and text()", () => {
  it("refuses lone surrogates, high or low, anywhere; accepts pairs", () => {
    for (const bad of ["\ud800", "a\ud800b", "\udc00", "x\udfff", "\ud83d", "\ud83d\ud83d\ude00"]) {
      expect(isWellFormed(bad), JSON.stringify(bad)).toBe(false);
      expect(text().safeParse(bad).error?.issues[0]?.message).toBe(NOT_WELL_FORMED);
    }
    for (const good of ["", "plain", "é", "🤖", "\ud83d\ude00", "𝄞 {{ x }}", "\uffff"]) {
      expect(isWellFormed(good), JSON.stringify(good)).toBe(true);
      expect(text().safeParse(good).success).toBe(true);
    }
  });

  it("comes before the field's other rules, so the message says what is wrong", () => {
    expect(text().max(1, "too long").safeParse("\ud800ab").error?.issues[0]?.message).toBe(NOT_WELL_FORMED);
  });
});

describe("jsonValueProblem", () => {
  const nested = (depth: number) => JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);

  it("counts the value itself as level 1 and allows exactly maxDepth levels", () => {
    expect(jsonValueProblem(nested(32), bounds)).toBeUndefined();
    expect(jsonValueProblem(nested(33), bounds)).toEqual({ path: [], message: "nested deeper than 32 levels" });
    expect(jsonValueProblem({ a: { b: 1 } }, { ...bounds, maxDepth: 2 })).toBeUndefined();
    expect(jsonValueProblem({ a: { b: [] } }, { ...bounds, maxDepth: 2 })).toEqual({
      path: [],
      message: "nested deeper than 2 levels",
    });
  });

  it("walks any depth without recursion: half a million levels answer at once", () => {
    const deep = nested(500_000);
    expect(jsonValueProblem(deep, bounds)).toEqual({ path: [], message: "nested deeper than 32 levels" });
    const objects = JSON.parse(`${'{"a":'.repeat(200_000)}1${"}".repeat(200_000)}`);
    expect(jsonValueProblem(objects, bounds)?.message).toBe("nested deeper than 32 levels");
  });

  it("names the first string that is not well-formed, in document order, and the object of a bad key", () => {
    expect(jsonValueProblem({ a: ["ok", "\ud800"], b: "\udc00" }, bounds)).toEqual({
      path: ["a", 1],
      message: NOT_WELL_FORMED,
    });
    expect(jsonValueProblem({ a: { "x\ud800": 1 } }, bounds)).toEqual({
      path: ["a"],
      message: `has a key that ${NOT_WELL_FORMED}`,
    });
    expect(jsonValueProblem({ a: "🤖", b: [1, null, true, { c: "é" }] }, bounds)).toBeUndefined();
  });

  it("bounds the size as JSON", () => {
    expect(jsonValueProblem({ s: "x".repeat(100) }, { ...bounds, maxLength: 100 })).toEqual({
      path: [],
      message: "must be at most 100 characters as JSON",
    });
    expect(jsonValueProblem({ s: "x".repeat(100) }, { ...bounds, maxLength: 108 })).toBeUndefined();
  });
});

describe("the schemas", () => {
  const tool = (parameters: unknown) => ({ type: "function", function: { name: "t", parameters } });
  const body = (extra: Record<string, unknown>) => ({ name: "N", markdown: "# A\nb", ...extra });
  const message = (value: unknown) => {
    const result = createPromptBody.safeParse(value);
    return result.success ? undefined : describeZodError(result.error);
  };

  it("bound tool parameters in depth and size, naming the field", () => {
    const deep = JSON.parse(`{"type":"object","properties":{"a":${"[".repeat(5_000)}${"]".repeat(5_000)}}}`);
    expect(message(body({ tools: [tool(deep)] }))).toBe(
      `tools[0].function.parameters: nested deeper than ${LIMITS.toolParametersDepth} levels`,
    );
    const big = { type: "object", description: "x".repeat(LIMITS.toolParametersLength) };
    expect(message(body({ tools: [tool(big)] }))).toBe(
      `tools[0].function.parameters: must be at most ${LIMITS.toolParametersLength} characters as JSON`,
    );
  });

  it("name a bad key by the object that holds it", () => {
    expect(message(body({ tools: [tool({ type: "object", properties: { "\ud800": {} } })] }))).toBe(
      `tools[0].function.parameters.properties: has a key that ${NOT_WELL_FORMED}`,
    );
  });

  // Every string an input schema accepts goes through text(); a plain z.string() would let lone surrogates in.
  it.each(["schemas.ts", "dashboard.ts", "webhooks.ts", "outcomes.ts"])(
    "%s builds its strings on text(), never z.string()",
    (file) => {
      const source = readFileSync(new URL(`../src/${file}`, import.meta.url), "utf8");
      expect(source.match(/z\s*\.\s*string\s*\(/g) ?? []).toEqual([]);
    },
  );
});

describe("plain issue messages (installed for every schema)", () => {
  const first = (schema: z.ZodType, value: unknown) => schema.safeParse(value).error?.issues[0]?.message;

  it("says required for a missing field and what a wrong type must be", () => {
    const body = z.object({ name: z.string(), tags: z.array(z.string()), on: z.boolean() });
    expect(first(body, {})).toBe("required");
    expect(first(body, { name: 1 })).toBe("must be a string, not a number");
    expect(first(body, { name: "a", tags: {} })).toBe("must be an array, not an object");
    expect(first(body, { name: "a", tags: [], on: "yes" })).toBe("must be true or false, not a string");
    expect(first(z.record(z.string(), z.string()), null)).toBe("must be an object, not null");
  });

  it("says bounds, options and formats in words, and leaves a schema's own message first", () => {
    expect(first(z.string().min(2), "a")).toBe("must have at least 2 characters");
    expect(first(z.array(z.number()).max(1), [1, 2])).toBe("must have at most 1 item");
    expect(first(z.number().int(), 1.5)).toBe("must be a whole number");
    expect(first(z.number().positive(), 0)).toBe("must be more than 0");
    expect(first(z.enum(["a", "b"]), "c")).toBe('must be one of "a", "b"');
    expect(first(z.url(), "nope")).toBe("must be a URL");
    expect(first(z.string().min(2, "too short"), "a")).toBe("too short");
    expect(text().safeParse(undefined).error?.issues[0]?.message).toBe("required");
  });
});
