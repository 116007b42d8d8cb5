/**
 * How long a prompt's text may be: the one rule every surface applies (REST v2 and v1, MCP, the dashboard
 * API, import, and through them the CLI and git). The bounds are the server's configuration
 * (PROMPTSTORE_MAX_SECTION_CHARS, PROMPTSTORE_MAX_BODY_BYTES), so they are passed in, never imported as
 * constants; the input schemas check every other bound (counts, titles, tools) and leave length to this.
 */

export interface ContentLimits {
  /** Characters (UTF-16 code units, as JavaScript counts them) of one section's content. */
  sectionContentLength: number;
  /** Characters of a version sent as Markdown: the body limit, since the Markdown travels in the body. */
  markdownLength: number;
}

export const DEFAULT_SECTION_CONTENT_LENGTH = 1_000_000;
export const DEFAULT_BODY_BYTES = 4 * 1024 * 1024;

/** Limits that follow from the configured section and body sizes: a body of N bytes holds at most N characters. */
export function contentLimits(sectionContentLength: number, bodyBytes: number): ContentLimits {
  return { sectionContentLength, markdownLength: bodyBytes };
}

export const DEFAULT_CONTENT_LIMITS: ContentLimits = contentLimits(DEFAULT_SECTION_CONTENT_LENGTH, DEFAULT_BODY_BYTES);

/** The first section whose content is too long, as `sections[2].content: must be at most N characters`. */
export function sectionLengthProblem(
  sections: readonly { content: string }[],
  limits: ContentLimits,
  field = "sections",
): string | undefined {
  const max = limits.sectionContentLength;
  const i = sections.findIndex((s) => s.content.length > max);
  return i < 0 ? undefined : `${field}[${i}].content: must be at most ${max} characters`;
}

/** A Markdown version longer than the limit, as `markdown: must be at most N characters`. */
export function markdownLengthProblem(markdown: string, limits: ContentLimits, field = "markdown"): string | undefined {
  const max = limits.markdownLength;
  return markdown.length > max ? `${field}: must be at most ${max} characters` : undefined;
}
