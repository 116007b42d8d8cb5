import { describe, expect, it } from "vitest";
import { AppError } from "../../src/errors.js";
import { markdownToSections } from "../../src/prompts/markdown.js";

describe("markdownToSections", () => {
  it("starts a section at every level-1 heading, content verbatim between them", () => {
    const md = "# Role\n\nYou are **helpful**.\n\n\n# Output Format\nJSON:\n  - indented\n\n";
    expect(markdownToSections(md)).toEqual([
      { title: "Role", content: "You are **helpful**.", enabled: true },
      { title: "Output Format", content: "JSON:\n  - indented", enabled: true },
    ]);
  });

  it("keeps deeper headings in the content", () => {
    expect(markdownToSections("# A\n## Sub\ntext\n### Deeper")).toEqual([
      { title: "A", content: "## Sub\ntext\n### Deeper", enabled: true },
    ]);
  });

  it("does not treat # lines inside fenced code blocks as headings", () => {
    const md = "# Script\n```bash\n# a comment, not a heading\necho hi\n```\n~~~\n# neither\n~~~\n# Next\nx";
    const sections = markdownToSections(md);
    expect(sections.map((s) => s.title)).toEqual(["Script", "Next"]);
    expect(sections[0]!.content).toBe("```bash\n# a comment, not a heading\necho hi\n```\n~~~\n# neither\n~~~");
  });

  it("does not treat quoted, indented or setext headings as section starts", () => {
    const md = "# Top\n> # quoted\n\n    # indented code\n\nSetext\n======\n#NoSpace";
    expect(markdownToSections(md).map((s) => s.title)).toEqual(["Top"]);
  });

  it("strips closing hashes and surrounding spaces from the title", () => {
    expect(markdownToSections("#   Rules ##\nx")[0]!.title).toBe("Rules");
  });

  it("allows blank lines before the first heading and empty sections", () => {
    expect(markdownToSections("\n\n# A\n# B\nb")).toEqual([
      { title: "A", content: "", enabled: true },
      { title: "B", content: "b", enabled: true },
    ]);
  });

  it("normalizes CRLF line endings", () => {
    expect(markdownToSections("# A\r\nline 1\r\nline 2\r\n")).toEqual([
      { title: "A", content: "line 1\nline 2", enabled: true },
    ]);
  });

  it("rejects text before the first heading, naming markdown", () => {
    expect(() => markdownToSections("preamble\n# A\nx")).toThrow(AppError);
    expect(() => markdownToSections("preamble\n# A\nx")).toThrow(/^markdown: text before/);
  });

  it("rejects markdown with no level-1 heading, naming markdown", () => {
    expect(() => markdownToSections("## Only a subheading\ntext")).toThrow(/^markdown: must contain/);
    expect(() => markdownToSections("")).toThrow(/^markdown:/);
  });
});
