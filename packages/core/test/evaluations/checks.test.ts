import { describe, expect, it } from "vitest";
import { type Check, check, checkNames, checkSet } from "../../src/evaluations/checks.js";
import { localVerdict } from "../../src/evaluations/verdicts.js";
import type { AssistantMessage } from "../../src/playground.js";

const says = (content: string | null, tool_calls?: AssistantMessage["tool_calls"]): AssistantMessage =>
  tool_calls ? { role: "assistant", content, tool_calls } : { role: "assistant", content };
const run = (c: unknown, answer: AssistantMessage, expected?: string) =>
  localVerdict(check.parse(c) as Check, { answer, expected });

describe("checks: every deterministic type, pass and fail, with exact reasons", () => {
  it("equals, plain, trimmed and case-insensitive", () => {
    expect(run({ type: "equals", value: "Paris" }, says("Paris"))).toEqual({ pass: true, score: 1, reason: "equal" });
    expect(run({ type: "equals", value: "Paris" }, says(" paris\n"))).toEqual({
      pass: false,
      score: 0,
      reason: 'differs at character 1: expected "Paris", got " paris\\n"',
    });
    expect(run({ type: "equals", value: "Paris", trim: true, case_insensitive: true }, says(" paris\n"))?.pass).toBe(
      true,
    );
    expect(run({ type: "equals", value: "Paris", trim: true }, says(" paris\n"))?.reason).toBe(
      'differs at character 1: expected "Paris", got " paris\\n"',
    );
  });

  it("expected compares with the case's reference answer, and fails without one", () => {
    expect(run({ type: "expected" }, says("42"), "42")).toEqual({ pass: true, score: 1, reason: "equal" });
    expect(run({ type: "expected" }, says("41"), "42")?.reason).toBe('differs at character 2: expected "42", got "41"');
    expect(run({ type: "expected" }, says("42"))).toEqual({
      pass: false,
      score: 0,
      reason: "the case has no expected answer",
    });
  });

  it("contains and not_contains", () => {
    expect(run({ type: "contains", value: "refund" }, says("Your refund is on its way"))).toEqual({
      pass: true,
      score: 1,
      reason: 'contains "refund"',
    });
    expect(run({ type: "contains", value: "Refund" }, says("your refund"))?.pass).toBe(false);
    expect(run({ type: "contains", value: "Refund", case_insensitive: true }, says("your refund"))?.pass).toBe(true);
    expect(run({ type: "not_contains", value: "sorry" }, says("Sorry, no"))).toEqual({
      pass: true,
      score: 1,
      reason: 'does not contain "sorry"',
    });
    expect(run({ type: "not_contains", value: "sorry", case_insensitive: true }, says("Sorry, no"))).toEqual({
      pass: false,
      score: 0,
      reason: 'contains "sorry"',
    });
  });

  it("regex, with RE2's flags, and a pattern that backtracks without end in JavaScript answered by RE2", () => {
    expect(run({ type: "regex", pattern: "^order #\\d{5}$" }, says("order #12345"))?.pass).toBe(true);
    expect(run({ type: "regex", pattern: "^ORDER", flags: "i" }, says("order #1"))).toEqual({
      pass: true,
      score: 1,
      reason: "matches /^ORDER/i",
    });
    expect(run({ type: "regex", pattern: "^b$" }, says("a\nb"))?.pass).toBe(false);
    expect(run({ type: "regex", pattern: "^b$", flags: "m" }, says("a\nb"))?.pass).toBe(true);
    expect(run({ type: "regex", pattern: "^(a+)+$" }, says(`${"a".repeat(50_000)}!`))).toEqual({
      pass: false,
      score: 0,
      reason: "does not match /^(a+)+$/",
    });
  });

  it("json", () => {
    expect(run({ type: "json" }, says('{"a":1}'))).toEqual({ pass: true, score: 1, reason: "parses as JSON" });
    expect(run({ type: "json" }, says("{a:1}"))?.pass).toBe(false);
    expect(run({ type: "json" }, says(null))?.reason).toMatch(/^not JSON: /);
  });

  it("max_chars counts characters as a person does", () => {
    expect(run({ type: "max_chars", value: 3 }, says("héé"))).toEqual({
      pass: true,
      score: 1,
      reason: "3 characters, at most 3",
    });
    expect(run({ type: "max_chars", value: 2 }, says("😀😀😀"))).toEqual({
      pass: false,
      score: 0,
      reason: "3 characters, at most 2",
    });
  });

  it("tool_call: a named function, and arguments that include the given ones", () => {
    const call = (name: string, args: string) => ({
      id: "c1",
      type: "function" as const,
      function: { name, arguments: args },
    });
    const answer = says(null, [call("get_weather", '{"city":"Paris","unit":"C"}')]);
    expect(run({ type: "tool_call", function: "get_weather" }, answer)).toEqual({
      pass: true,
      score: 1,
      reason: "called get_weather",
    });
    expect(run({ type: "tool_call", function: "get_weather", arguments: { city: "Paris" } }, answer)?.pass).toBe(true);
    expect(run({ type: "tool_call", function: "get_weather", arguments: { city: "Rome" } }, answer)).toEqual({
      pass: false,
      score: 0,
      reason: 'called get_weather, not with "{\\"city\\":\\"Rome\\"}": "{\\"city\\":\\"Paris\\",\\"unit\\":\\"C\\"}"',
    });
    expect(run({ type: "tool_call", function: "book" }, answer)?.reason).toBe("did not call book (called get_weather)");
    expect(run({ type: "tool_call", function: "book" }, says("no"))?.reason).toBe("did not call book (no tool call)");
  });

  it("the server's kinds have no local verdict", () => {
    expect(run({ type: "json_schema" }, says("{}"))).toBeUndefined();
    expect(run({ type: "judge", prompt: "grader" }, says("x"))).toBeUndefined();
    expect(run({ type: "webhook", endpoint: `whk_${"0".repeat(24)}` }, says("x"))).toBeUndefined();
  });
});

describe("check sets: names and refusals naming the field", () => {
  const problems = (value: unknown) =>
    checkSet.safeParse(value).error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`) ?? [];

  it("names each check by its own name, else its type, the second of a type #2", () => {
    const set = checkSet.parse([
      { type: "contains", value: "a" },
      { type: "contains", value: "b" },
      { type: "json", name: "valid json" },
      { type: "contains", value: "c" },
    ]);
    expect(checkNames(set)).toEqual(["contains", "contains#2", "valid json", "contains#3"]);
  });

  it("refuses what cannot be checked, naming the field", () => {
    expect(problems([])).toEqual([": must hold at least one check"]);
    expect(problems([{ type: "maybe" }])).toEqual([
      "0.type: must have a type: equals, contains, not_contains, regex, json, json_schema, tool_call, max_chars, expected, judge, webhook",
    ]);
    expect(problems([{ type: "contains" }])).toEqual(["0.value: required"]);
    expect(problems([{ type: "contains", value: "" }])).toEqual(["0.value: must not be empty"]);
    expect(problems([{ type: "regex", pattern: "(unclosed" }])[0]).toMatch(/^0\.pattern: is not a pattern RE2 takes: /);
    expect(problems([{ type: "regex", pattern: "a", flags: "x" }])).toEqual([
      '0.flags: flag "x" is not one of i, m, s',
    ]);
    expect(problems([{ type: "regex", pattern: "(a)\\1" }])[0]).toMatch(/^0\.pattern: is not a pattern RE2 takes/);
    expect(problems([{ type: "webhook", endpoint: "https://checks.example.com" }])).toEqual([
      "0.endpoint: must be a webhook endpoint id (whk_ and 24 hex characters)",
    ]);
    expect(problems([{ type: "webhook", endpoint: `whk_${"0".repeat(24)}`, url: "https://x.example.com" }])).toEqual([
      '0: Unrecognized key: "url"',
    ]);
    expect(problems([{ type: "judge", prompt: "Bad Id" }])[0]).toMatch(/^0\.prompt: /);
    expect(problems([{ type: "json", extra: 1 }])[0]).toMatch(/^0: /);
    expect(
      problems([
        { type: "json", name: "x" },
        { type: "contains", value: "a", name: "x" },
      ]),
    ).toEqual(['1.name: "x" is also check 0\'s name']);
    expect(problems([{ type: "json" }, { type: "json", name: "json" }])).toEqual([
      '1.name: "json" is also check 0\'s name',
    ]);
  });
});
