import { bigPromptMarkdown } from "@promptstore/core/testing/big-prompt";
import { describe, expect, it } from "vitest";
import { flowingParts, textChunks } from "../src/ui/text-chunks";

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

describe("flowingParts (a diff's common part: first and last lines inline, blocks between)", () => {
  // What is drawn, read back: each edge of the blocks is one newline; a head is followed by one unless the
  // blocks start with the stretch's own first newline.
  const drawn = (text: string, afterBreak: boolean) => {
    const parts = flowingParts(text, afterBreak, 2)!;
    const opening = text.startsWith("\n") && afterBreak ? "" : `${parts.head}\n`;
    return `${opening}${parts.middle}\n${parts.tail}`;
  };

  it("keeps the first and last lines inline and the lines between in blocks", () => {
    expect(flowingParts("end of a line\n1\n2\n3\nstart of one", false, 2)).toEqual({
      head: "end of a line",
      middle: "1\n2\n3",
      tail: "start of one",
    });
    expect(flowingParts("a\n1\nb", false, 2)).toBeNull();
    expect(flowingParts("no newline", false, 2)).toBeNull();
  });

  it("starts the blocks with the empty line when what precedes ended with a newline", () => {
    expect(flowingParts("\n1\n2\n3\nx", true, 2)).toEqual({ head: "", middle: "\n1\n2\n3", tail: "x" });
    expect(flowingParts("\n1\n2\n3\nx", false, 2)).toEqual({ head: "", middle: "1\n2\n3", tail: "x" });
  });

  it("never ends the blocks with an empty line: it goes to the tail, which draws it", () => {
    expect(flowingParts("x\n1\n2\n3\n\n", false, 2)).toEqual({ head: "x", middle: "1\n2\n3", tail: "\n" });
    expect(flowingParts("x\n1\n2\n3\n\ny", false, 2)).toEqual({ head: "x", middle: "1\n2\n3", tail: "\ny" });
  });

  it("draws exactly the text, every newline included", () => {
    for (const text of ["x\n1\n2\n3\ny", "\n1\n2\n3\n\n", "\n\n1\n2\n\n3\n\nz", "x\n1\n\n2\n3\n"]) {
      for (const afterBreak of [false, true]) expect(drawn(text, afterBreak)).toBe(text);
    }
  });
});
