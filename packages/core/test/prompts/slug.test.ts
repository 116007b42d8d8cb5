import { describe, expect, it } from "vitest";
import { PROMPT_ID_PATTERN, slugCandidate, slugify } from "../../src/prompts/slug.js";

describe("slugify", () => {
  it.each([
    ["Support Bot", "support-bot"],
    ["  Café  Crème! ", "cafe-creme"],
    ["***", "prompt"],
    ["日本語", "prompt"],
    ["A".repeat(200), "a".repeat(56)],
  ])("%j → %j", (name, slug) => {
    const made = slugify(name);
    expect(made).toBe(slug);
    expect(made).toMatch(PROMPT_ID_PATTERN);
  });

  it("numbers collisions from 2", () => {
    expect([1, 2, 3].map((n) => slugCandidate("support-bot", n))).toEqual([
      "support-bot",
      "support-bot-2",
      "support-bot-3",
    ]);
  });
});
