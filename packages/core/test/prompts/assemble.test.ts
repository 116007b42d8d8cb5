import { describe, expect, it } from "vitest";
import { assemble, withGuard } from "../../src/prompts/assemble.js";

describe("assemble", () => {
  it("wraps each enabled section in a tag named after its title, joined by one blank line", () => {
    const text = assemble([
      { title: "Role", content: "You are helpful.", enabled: true },
      { title: "Hidden", content: "not shown", enabled: false },
      { title: "Output Format", content: "JSON\nonly", enabled: true },
    ]);
    expect(text).toBe("<Role>\nYou are helpful.\n</Role>\n\n<Output_Format>\nJSON\nonly\n</Output_Format>");
  });

  it("is empty when every section is disabled", () => {
    expect(assemble([{ title: "A", content: "x", enabled: false }])).toBe("");
  });

  it("puts the guard after one more blank line, so the guarded text starts with the unguarded one", () => {
    const text = assemble([{ title: "A", content: "x", enabled: true }]);
    const guarded = withGuard(text, "GUARD");
    expect(guarded).toBe("<A>\nx\n</A>\n\nGUARD");
    expect(guarded.startsWith(text)).toBe(true);
  });
});
