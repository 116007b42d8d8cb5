import { describe, expect, it } from "vitest";
import type { Section } from "../../src/prompts/content.js";
import { extractVariables, fillVariables } from "../../src/prompts/variables.js";

const section = (content: string, enabled = true): Section => ({ title: "T", content, enabled });

describe("extractVariables", () => {
  it("finds names with or without spaces inside the braces", () => {
    expect(extractVariables([section("Hi {{name}}, {{ city }} and {{   tone\t}}")])).toEqual(["name", "city", "tone"]);
  });

  it("lists each name once, in order of first appearance across sections", () => {
    expect(extractVariables([section("{{b}} {{a}} {{b}}"), section("{{ a }} {{c}}")])).toEqual(["b", "a", "c"]);
  });

  it("ignores disabled sections", () => {
    expect(extractVariables([section("{{kept}}"), section("{{hidden}}", false)])).toEqual(["kept"]);
  });

  it("accepts dots, dashes and underscores after the first character", () => {
    expect(extractVariables([section("{{user.first_name}} {{ _x-1 }}")])).toEqual(["user.first_name", "_x-1"]);
  });

  it.each([["{{ 1abc }}"], ["{{name}"], ["{name}}"], ["{{ two words }}"], ["{{}}"], ["{{ na$me }}"], ["{ {name} }"]])(
    "ignores malformed %j",
    (text) => {
      expect(extractVariables([section(text)])).toEqual([]);
    },
  );

  it("finds the inner variable of nested braces", () => {
    expect(extractVariables([section("{{{name}}}")])).toEqual(["name"]);
  });
});

describe("fillVariables", () => {
  it("fills known names and leaves unknown placeholders as written", () => {
    expect(fillVariables("Hi {{ name }}, {{other}}", { name: "Ada" })).toBe("Hi Ada, {{other}}");
  });

  it("does not read inherited properties as values", () => {
    expect(fillVariables("{{constructor}}", {})).toBe("{{constructor}}");
  });
});
