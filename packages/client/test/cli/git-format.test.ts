import type { Content } from "@promptstore/core/prompts/content";
import { contentHash } from "@promptstore/core/prompts/hash";
import { describe, expect, it } from "vitest";
import { describeDiff, diffPrompt } from "../../cli/git/diff.js";
import { parsePromptFile, renderPromptFile } from "../../cli/git/prompt-file.js";

/** The file format on its own: what must read back identically, and what a person gets told. */
const file = (sections: Content["sections"], tools: Content["tools"] = []) => ({
  id: "p",
  name: "P",
  description: "",
  content: { sections, tools },
});

const roundTrips = (sections: Content["sections"]) => {
  const original = file(sections);
  const text = renderPromptFile(original);
  const back = parsePromptFile(text, "p.md");
  expect(contentHash(back.content)).toBe(contentHash(original.content));
  expect(back).toEqual(original);
  return text;
};

describe("prompt files", () => {
  it("keeps Markdown where it says the content exactly", () => {
    const text = roundTrips([
      { title: "Fences", content: "~~~\n# inside a tilde fence\n~~~\n    # indented code\n> # quoted", enabled: true },
      { title: "Setext", content: "Not a section\n===\n\nTrailing tab\t", enabled: true },
      { title: "Empty", content: "", enabled: true },
      { title: "Off", content: "x", enabled: false },
    ]);
    expect(text).not.toContain("sections:");
    expect(text).toContain("disabled:\n  - Off\n");
  });

  it("falls back to front-matter sections where Markdown cannot say it, and still reads back identically", () => {
    for (const sections of [
      [
        { title: "Unclosed", content: "```\nno closing fence", enabled: true },
        { title: "Next", content: "n", enabled: true },
      ],
      [{ title: "Closing hashes #", content: "x", enabled: true }],
      [{ title: "Trailing blank", content: "x\n\n", enabled: true }],
      [{ title: "Heading inside", content: "a\n# b", enabled: true }],
      [
        { title: "HTML", content: "<pre>\n# in pre", enabled: true },
        { title: "After", content: "y", enabled: true },
      ],
    ]) {
      expect(roundTrips(sections)).toContain("sections:");
    }
  });

  it("reads CRLF files as LF, and names a repeated disabled title that needs its occurrence", () => {
    const crlf = "---\r\nid: p\r\nname: P\r\n---\r\n\r\n# A\r\n\r\nline one\r\nline two\r\n";
    expect(parsePromptFile(crlf, "p.md").content.sections).toEqual([
      { title: "A", content: "line one\nline two", enabled: true },
    ]);
    const ambiguous = "---\nid: p\nname: P\ndisabled: [A]\n---\n# A\nx\n# A\ny\n";
    expect(() => parsePromptFile(ambiguous, "p.md")).toThrow(
      'p.md: disabled: 2 sections are titled "A"; name one as { title, occurrence }',
    );
    const unknown = "---\nid: p\nname: P\ndisabled: [B]\n---\n# A\nx\n";
    expect(() => parsePromptFile(unknown, "p.md")).toThrow('p.md: disabled: no section is titled "B"');
    expect(() => parsePromptFile("# A\nx\n", "p.md")).toThrow("p.md: must start with YAML front matter (a line ---)");
  });
});

describe("diff output", () => {
  const from = file([
    { title: "Role", content: "one\ntwo", enabled: true },
    { title: "Gone", content: "bye", enabled: true },
  ]);
  const to = file([
    { title: "Role", content: "one\n2", enabled: false },
    { title: "New", content: "hi", enabled: true },
  ]);
  const d = diffPrompt("p", "p.md", from, to, "b".repeat(64), "a".repeat(64));

  it("matches sections by title and shows lines, enabled changes, additions and removals", () => {
    expect(describeDiff([d], false)).toBe(
      [
        "p.md (p): server latest aaaaaaaaaaaa → file bbbbbbbbbbbb",
        '  changed section 1 "Role" (disabled)',
        "    @@ -1,2 +1,2 @@",
        "     one",
        "    -two",
        "    +2",
        '  removed section 2 "Gone"',
        "    -bye",
        '  added section 2 "New"',
        "    +hi",
      ].join("\n"),
    );
  });

  it("shows a changed name, description and tools beside the sections", () => {
    const tool = (description: string) => ({
      type: "function" as const,
      function: { name: "lookup", description, parameters: { type: "object", properties: {} } },
    });
    const before = { ...file([{ title: "Role", content: "same", enabled: true }], [tool("Finds an order")]) };
    const after = {
      ...file([{ title: "Role", content: "same", enabled: true }], [tool("Finds an order by id")]),
      name: "P2",
      description: "now described",
    };
    const changed = diffPrompt("p", "p.md", before, after, "b".repeat(64), "a".repeat(64));
    expect(describeDiff([changed], false)).toBe(
      [
        "p.md (p): server latest aaaaaaaaaaaa → file bbbbbbbbbbbb",
        "  name: -P +P2",
        "  description: - +now described",
        "  tools changed",
        "    @@ -3,7 +3,7 @@",
        '         "type": "function",',
        '         "function": {',
        '           "name": "lookup",',
        '    -      "description": "Finds an order",',
        '    +      "description": "Finds an order by id",',
        '           "parameters": {',
        '             "type": "object",',
        '             "properties": {}',
      ].join("\n"),
    );
  });

  it("colours only when asked (stdout is a terminal)", () => {
    const coloured = describeDiff([d], true);
    expect(coloured).toContain("\u001b[31m-two\u001b[39m");
    expect(coloured).toContain("\u001b[32m+2\u001b[39m");
    expect(describeDiff([d], false)).not.toContain("\u001b[");
  });
});
