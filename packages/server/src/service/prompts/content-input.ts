import { AppError } from "@promptstore/core/errors";
import type { Content, ModelSettings } from "@promptstore/core/prompts/content";
import {
  type ContentLimits,
  markdownLengthProblem,
  sectionLengthProblem,
} from "@promptstore/core/prompts/content-limits";
import { markdownToSections } from "@promptstore/core/prompts/markdown";
import { describeZodError, sectionsInput } from "@promptstore/core/schemas";

export interface ContentInput {
  sections?: { title: string; content: string; enabled?: boolean | undefined }[] | undefined;
  markdown?: string | undefined;
  tools?: Content["tools"] | undefined;
  /** Absent means the version has no model settings (and hashes as versions did before them). */
  model?: ModelSettings | undefined;
}

/**
 * The one way written content (either form) becomes the Content that is hashed and stored, within the
 * configured lengths. `field` prefixes the paths in messages (an import names `versions[2].`).
 */
export function toContent(input: ContentInput, limits: ContentLimits, field = ""): Content {
  const tools = input.tools ?? [];
  const model = input.model === undefined ? {} : { model: input.model };
  if (input.sections !== undefined) {
    const tooLong = sectionLengthProblem(input.sections, limits, `${field}sections`);
    if (tooLong) throw new AppError("bad_request", tooLong);
    return {
      sections: input.sections.map((s) => ({ title: s.title, content: s.content, enabled: s.enabled ?? true })),
      tools,
      ...model,
    };
  }
  const markdown = input.markdown ?? "";
  const tooLong = markdownLengthProblem(markdown, limits, `${field}markdown`);
  if (tooLong) throw new AppError("bad_request", tooLong);
  const sections = markdownToSections(markdown);
  // Sections made from Markdown obey the same limits as written ones; the message names `markdown`.
  const checked = sectionsInput.safeParse(sections);
  const problem = checked.success
    ? sectionLengthProblem(sections, limits)
    : describeZodError(checked.error, "sections");
  if (problem) throw new AppError("bad_request", `${field}markdown: ${problem}`);
  return { sections, tools, ...model };
}
