import { describe, expect, it } from "vitest";
import { tagName } from "../../src/prompts/tag-name.js";

describe("tagName", () => {
  it.each([
    ["Output Format", "Output_Format"],
    ["  Role  ", "Role"],
    ["many   inner\tspaces", "many_inner_spaces"],
    ["Q&A: rules!", "QA_rules"],
    ["v1.2-notes", "v1.2-notes"],
    ["3 steps", "_3_steps"],
    ["-dash first", "_-dash_first"],
    ["", "_"],
    ["!!!", "_"],
    ["Ünïcödé Títle", "Ünïcödé_Títle"],
    ["日本語 指示", "日本語_指示"],
    ["emoji 🚀 rocket", "emoji__rocket"],
    ["_private", "_private"],
    ["CamelCase", "CamelCase"],
  ])("%j → %j", (title, tag) => {
    expect(tagName(title)).toBe(tag);
  });
});
