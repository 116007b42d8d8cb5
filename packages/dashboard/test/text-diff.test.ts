import { markdownToSections } from "@promptstore/core/prompts/markdown";
import { bigPromptMarkdown, editedBigPrompt } from "@promptstore/core/testing/big-prompt";
import { describe, expect, it } from "vitest";
import { type TextPart, textDiff } from "../src/history/text-diff";

const side = (parts: TextPart[], which: "before" | "after") =>
  parts
    .filter((p) => (which === "before" ? !p.added : !p.removed))
    .map((p) => p.value)
    .join("");
const changed = (parts: TextPart[]) =>
  parts.filter((p) => p.added || p.removed).map((p) => [p.added ? "+" : "-", p.value]);

describe("textDiff (lines first, then words within changed lines)", () => {
  it("marks the changed words of a changed line, keeping each side's whitespace", () => {
    const parts = textDiff("one\nthe warm and dry day\nthree\n", "one\nthe cold and dry day\nthree\n")!;
    expect(parts).toEqual([
      { value: "one\nthe " },
      { value: "warm", removed: true },
      { value: "cold", added: true },
      { value: " and dry day\nthree\n" },
    ]);
  });

  it("shows added and removed lines whole when nothing pairs them", () => {
    expect(textDiff("a\nb\n", "a\nb\nc\n")).toEqual([{ value: "a\nb\n" }, { value: "c\n", added: true }]);
    expect(textDiff("a\nb\nc", "a\nc")).toEqual([{ value: "a\n" }, { value: "b\n", removed: true }, { value: "c" }]);
    expect(textDiff("same", "same")).toBeNull();
  });

  it("finds the one rewritten paragraph of the 250 KB prompt, each side exactly its text", () => {
    const before = markdownToSections(bigPromptMarkdown())[1]!.content;
    const edit = "Rewritten: keep answers short and cite the file.";
    const after = markdownToSections(editedBigPrompt(bigPromptMarkdown(), edit))[1]!.content;
    const parts = textDiff(before, after)!;
    expect(side(parts, "before")).toBe(before);
    expect(side(parts, "after")).toBe(after);
    const added = changed(parts).filter(([mark]) => mark === "+");
    const removed = changed(parts)
      .filter(([mark]) => mark === "-")
      .map(([, v]) => v)
      .join("");
    // Only words of the rewritten paragraph are marked: each added part is a word of the edit, and the
    // untouched 245 000 characters are never marked.
    expect(added.map(([, v]) => v).join(" ")).toBe("Rewritten: keep answers short and cite the file");
    expect(removed.length).toBeLessThan(3000);
    expect(removed.length).toBeGreaterThan(0);
  });
});
