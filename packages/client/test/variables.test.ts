/**
 * The client reimplements the server's variable rule (it may not depend on @promptstore/core at run time).
 * These tests run both over one table of texts and fail when they disagree.
 */
import { extractVariables, fillVariables } from "@promptstore/core/prompts/variables";
import { describe, expect, test } from "vitest";
import { fill, MissingVariablesError, UnexpectedVariablesError, variablesOf } from "../src/index.js";

const TEXTS: string[] = [
  "",
  "no variables at all",
  "Hello {{ name }}",
  "Hello {{name}}",
  "{{   spaced   }} and {{\tname\n}} and {{\r\nwrapped\r\n}}",
  "{{ user.name }} {{ first-name }} {{ _private }} {{ a1.b-2_c }} {{ trailing. }} {{ trailing- }}",
  "{{ A }} {{ a }} {{ Z9 }}",
  "{{ 1st }} {{ -dash }} {{ .dot }} {{ $x }} {{ é }} {{ na me }} {{}} {{ }}",
  "{{ name }} unclosed {{ other",
  "only an opening {{ name",
  "only a closing name }}",
  "single close {{ name } and single braces { name }",
  "triple {{{ name }}} braces",
  "nested {{ {{ inner }} }}",
  "repeated {{ a }} {{ b }} {{ a }} {{a}} {{ b }}",
  "adjacent {{a}}{{b}}{{a}}",
  "{{ constructor }} {{ __proto__ }} {{ toString }} {{ hasOwnProperty }}",
  "multi\nline {{ x }}\r\n{{ y }}\rend",
  "{{ x }}}} and {{{{ y }}",
  "<Role>\nYou help customers of {{ company }}.\n</Role>\n\n<Output_Format>\nAnswer in {{ language }}.\n</Output_Format>",
];

/** What the server reports for a text: extractVariables over one enabled section holding it. */
const serverNames = (text: string) => extractVariables([{ title: "T", content: text, enabled: true }]);

/** Values with characters String.replace would interpret, and text that looks like a variable. */
const valueFor = (name: string, i: number) =>
  i % 3 === 0 ? `$&-${name}-$1` : i % 3 === 1 ? `{{ ${name} }}!` : name.toUpperCase();

describe("variables: the client follows the server's rule (packages/core/src/prompts/variables.ts)", () => {
  test.each(TEXTS.map((text) => [JSON.stringify(text), text]))("same names for %s", (_label, text) => {
    expect(variablesOf(text)).toEqual(serverNames(text));
  });

  test.each(TEXTS.map((text) => [JSON.stringify(text), text]))("same filled text for %s", (_label, text) => {
    const values = Object.fromEntries(serverNames(text).map((name, i) => [name, valueFor(name, i)]));
    expect(fill(text, values)).toBe(fillVariables(text, values));
    expect(fill(text, values, { strict: true })).toBe(fillVariables(text, values));
  });

  test.each(TEXTS.map((text) => [JSON.stringify(text), text]))("same missing names for %s", (_label, text) => {
    const names = serverNames(text);
    const given = Object.fromEntries(names.filter((_, i) => i % 2 === 1).map((name) => [name, "v"]));
    const expected = names.filter((name) => !Object.hasOwn(given, name));
    if (expected.length === 0) {
      expect(fill(text, given)).toBe(fillVariables(text, given));
      return;
    }
    // The server leaves each missing placeholder as written; the client names them all instead.
    expect(fillVariables(text, given)).toMatch(/\{\{/);
    expect(() => fill(text, given)).toThrow(MissingVariablesError);
    try {
      fill(text, given);
    } catch (error) {
      expect((error as MissingVariablesError).missing).toEqual(expected);
    }
  });
});

describe("fill", () => {
  test("takes a prompt object as get() returns it, or its text", () => {
    expect(fill({ prompt: "Hi {{ name }}" }, { name: "Ada" })).toBe("Hi Ada");
    expect(fill("Hi {{ name }}", { name: "Ada" })).toBe("Hi Ada");
  });

  test("missing variables: one error naming each, in order of first appearance", () => {
    let error: unknown;
    try {
      fill("{{ b }} {{ a }} {{ c }} {{ b }}", { c: "x" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MissingVariablesError);
    expect(error).toBeInstanceOf(Error);
    expect((error as MissingVariablesError).missing).toEqual(["b", "a"]);
    expect((error as Error).message).toBe("missing values for {{ b }}, {{ a }}");
    expect((error as Error).name).toBe("MissingVariablesError");
  });

  test("strict refuses values the text does not use, naming each; without strict they are ignored", () => {
    expect(fill("Hi {{ name }}", { name: "Ada", extra: "x" })).toBe("Hi Ada");
    let error: unknown;
    try {
      fill("Hi {{ name }}", { name: "Ada", nmae: "typo", other: "y" }, { strict: true });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnexpectedVariablesError);
    expect((error as UnexpectedVariablesError).unexpected).toEqual(["nmae", "other"]);
  });

  test("missing comes before unexpected; an inherited property is not a value", () => {
    expect(() => fill("{{ a }}", { b: "x" }, { strict: true })).toThrow(MissingVariablesError);
    expect(() => fill("{{ toString }}", {})).toThrow(MissingVariablesError);
  });

  test("numbers and booleans are written as String() writes them; values are not filled again", () => {
    expect(fill("{{ n }} {{ ok }}", { n: 3.5, ok: false })).toBe("3.5 false");
    expect(fill("{{ a }} {{ b }}", { a: "{{ b }}", b: "$&" })).toBe("{{ b }} $&");
  });
});
