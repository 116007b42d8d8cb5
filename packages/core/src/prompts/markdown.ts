import MarkdownIt from "markdown-it";
import { badRequest } from "../errors.js";
import type { Section } from "./content.js";

// CommonMark only: headings are found by a real parser, so `#` lines in fences, HTML blocks or quotes stay content.
const parser = new MarkdownIt("commonmark");

const isBlank = (line: string) => line.trim() === "";

function trimBlankLines(lines: string[]): string {
  let start = 0;
  let end = lines.length;
  while (start < end && isBlank(lines[start] as string)) start++;
  while (end > start && isBlank(lines[end - 1] as string)) end--;
  return lines.slice(start, end).join("\n");
}

/**
 * Splits Markdown into sections: every top-level `# Heading` (ATX, level 1) starts one, titled by the
 * heading text; the content is the source between headings, verbatim but for surrounding blank lines.
 */
export function markdownToSections(markdown: string): Section[] {
  const source = markdown.replace(/\r\n?/g, "\n");
  const lines = source.split("\n");
  const tokens = parser.parse(source, {});
  const headings: { title: string; start: number; end: number }[] = [];
  tokens.forEach((token, i) => {
    if (token.type === "heading_open" && token.tag === "h1" && token.markup === "#" && token.level === 0 && token.map) {
      headings.push({ title: tokens[i + 1]?.content ?? "", start: token.map[0], end: token.map[1] });
    }
  });

  const first = headings[0];
  if (!first) throw badRequest("markdown: must contain at least one level-1 heading (# Title) to start a section");
  if (!lines.slice(0, first.start).every(isBlank)) {
    throw badRequest("markdown: text before the first level-1 heading is not allowed; start with # Title");
  }
  return headings.map((h, i) => ({
    title: h.title,
    content: trimBlankLines(lines.slice(h.end, headings[i + 1]?.start ?? lines.length)),
    enabled: true,
  }));
}
