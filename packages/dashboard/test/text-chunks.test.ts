import { bigPromptMarkdown } from "@promptstore/core/testing/big-prompt";
import { describe, expect, it } from "vitest";
import { textChunks } from "../src/ui/text-chunks";

describe("textChunks", () => {
  it("leaves short text whole", () => {
    expect(textChunks("a\nb\n\nc", 60)).toEqual(["a\nb\n\nc"]);
  });

  it("cuts after a non-empty line, so a blank line opens a block and never ends one", () => {
    expect(textChunks("1\n2\n\n3\n4\n5", 2)).toEqual(["1\n2", "\n3", "4\n5"]);
    expect(textChunks("1\n\n\n\n2\n3", 2)).toEqual(["1\n\n\n\n2", "3"]);
  });

  it("gives back the text when joined with newlines, on the 250 KB prompt too", () => {
    const text = bigPromptMarkdown();
    const chunks = textChunks(text);
    expect(chunks.length).toBeGreaterThan(20);
    expect(chunks.join("\n")).toBe(text);
    expect(chunks.slice(0, -1).every((c) => !c.endsWith("\n"))).toBe(true);
  });
});
